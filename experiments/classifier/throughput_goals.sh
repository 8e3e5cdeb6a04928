#!/bin/sh
# experiments/classifier/throughput_goals.sh -- the four bench_train runs behind THROUGHPUT.md's
# goal table (issue 23), back to back: N = 17 and N = 65, each with the OpenBLAS core type the
# environment pins ("pinned") and with the pin removed ("fastest": attnlab then picks the CPU's
# own kernels after its check, and hands PyTorch the same). Each run's full output goes to
# OUT_DIR/<n>-<kernels>.txt; the goal lines of all four are printed at the end.
#
#   sh experiments/classifier/throughput_goals.sh [OUT_DIR [BENCH_TRAIN_OPTIONS...]]
#     OUT_DIR defaults to /tmp/attnlab-throughput; options after it go to every run and win over
#     the defaults (a quick check: ... /tmp/x --rounds 1 --names softmax,hae --no-torch).
#
# Run it on a quiet machine (nothing else running: ~10 minutes on 2 cores) and copy the tables
# into THROUGHPUT.md with the machine (lscpu's model name) and the tree (git rev-parse HEAD).
# Without a pin in the environment the two settings are the same and the "pinned" runs are
# skipped.
set -eu
cd "$(dirname "$0")/../.."
out=${1:-/tmp/attnlab-throughput}
[ $# -gt 0 ] && shift
mkdir -p "$out" || { echo "throughput_goals.sh: cannot create $out" >&2; exit 2; }
host=bin/attnlab
[ -x "$host" ] || { echo "throughput_goals.sh: $host is not built (run make)" >&2; exit 2; }

failed() { echo "throughput_goals.sh: the $1 run failed; its output: $out/$1.txt" >&2; tail -3 "$out/$1.txt" >&2; exit 1; }
run() {  # label, kernels (pinned|fastest), bench_train arguments...
  label=$1; kernels=$2; shift 2
  echo "== $(date -u +%H:%M:%S) $label, $kernels kernels: bin/attnlab scripts/bench_train.lua $*"
  if [ "$kernels" = pinned ]; then
    "$host" scripts/bench_train.lua "$@" >"$out/$label-$kernels.txt" 2>&1 || failed "$label-$kernels"
  else
    env -u OPENBLAS_CORETYPE "$host" scripts/bench_train.lua "$@" >"$out/$label-$kernels.txt" 2>&1 || failed "$label-$kernels"
  fi
}

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(unset)}"
echo "tree: $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
settings="fastest"
[ -n "${OPENBLAS_CORETYPE:-}" ] && settings="pinned fastest"
for k in $settings; do
  run n17 "$k" --patch 8 --threads 1,2 "$@"
  run n65 "$k" --patch 4 --threads 1,2 --rounds 5 "$@"
done
echo "== goals (full tables in $out)"
for f in "$out"/n17-*.txt "$out"/n65-*.txt; do
  [ -f "$f" ] || continue
  echo "$(basename "$f" .txt):"
  sed -n '/^goals (issue 23)/,$p' "$f" | tail -n +2
done
