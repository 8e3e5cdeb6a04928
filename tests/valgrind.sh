#!/usr/bin/env bash
# tests/valgrind.sh BUILD_DIR -- run the C test binaries under valgrind memcheck
# (built for a portable -march: valgrind does not know AVX-512). Any memory error or
# leak makes the run fail. Output follows the runner's PASS/FAIL protocol.
set -u
cd "$(dirname "$0")/.."
build=${1:-build/valgrind}
export ATTNLAB_NUM_THREADS=1 ATTNLAB_NO_CORETYPE=1 ATTNLAB_CPU=avx2
# AVX2 kernels at most: valgrind cannot run AVX-512
grep -qw avx2 /proc/cpuinfo && export OPENBLAS_CORETYPE=Haswell
pass=0; fail=0
# up to ATTNLAB_TEST_JOBS programs at once (default: the core count; valgrind runs one thread
# each), reported in order once all are done
jobs=${ATTNLAB_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
case $jobs in ''|*[!0-9]*|0) echo "tests/valgrind.sh: ATTNLAB_TEST_JOBS must be a positive integer, got '$jobs'"; exit 2 ;; esac
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
names=(); running=0
for t in "$build"/tests/test_*; do
  [ -x "$t" ] || continue
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
  i=${#names[@]}; names+=("$(basename "$t")")
  ( valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
      --suppressions=tests/valgrind.supp "$t" >"$work/$i.log" 2>&1
    echo $? >"$work/$i.rc" ) &
  running=$((running + 1))
done
wait
for i in "${!names[@]}"; do
  if [ "$(cat "$work/$i.rc")" = 0 ]; then
    echo "PASS: valgrind ${names[$i]}"; pass=$((pass + 1))
  else
    echo "FAIL: valgrind ${names[$i]}"; tail -n 30 "$work/$i.log" | sed 's/^/    /'; fail=$((fail + 1))
  fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
