#!/usr/bin/env bash
# tests/run.sh -- run every C test binary and every Lua test file, count the
# PASS/FAIL/SKIP lines they print, and end with one "N passed, N failed" line.
# A program that exits non-zero (a crash, a sanitizer report) without printing
# a FAIL line counts as one failure, so a crash can never pass silently.
# Usage: tests/run.sh [BUILD_DIR]   (BUILD_DIR holds the C test binaries)
# ATTNLAB_TEST_ONLY="c/test_core lua/test_nn ..." runs only those (tests/levels.sh does).
# ATTNLAB_TEST_JOBS=N runs up to N programs at once (default: the core count). Each runs one
# thread (ATTNLAB_NUM_THREADS=1 below) with its own temporary folders, so they do not interfere;
# results are printed in the fixed order below as soon as each and those before it are done.
set -u
cd "$(dirname "$0")/.."
build=${1:-build/tests}
host=${ATTNLAB_HOST:-bin/attnlab}
export ATTNLAB_NUM_THREADS=${ATTNLAB_NUM_THREADS:-1}
# the tests check the default GEMM path (the crossover and its determinism); the one test of
# the override sets it itself
unset ATTNLAB_SGEMM
pass=0; fail=0; skip=0
jobs=${ATTNLAB_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
case $jobs in ''|*[!0-9]*|0) echo "tests/run.sh: ATTNLAB_TEST_JOBS must be a positive integer, got '$jobs'"; exit 2 ;; esac
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
labels=()        # the programs started, in order; their output in $work/<index>.{log,rc,t}
printed=0        # how many of them are reported
running=0

start_one() {  # label, command...
  local label=$1; shift
  if [ -n "${ATTNLAB_TEST_ONLY:-}" ]; then
    case " $ATTNLAB_TEST_ONLY " in *" $label "*) ;; *) return 0 ;; esac
  fi
  while [ "$running" -ge "$jobs" ]; do wait -n 2>/dev/null; running=$((running - 1)); report_done; done
  local i=${#labels[@]}
  labels+=("$label")
  ( t0=$(date +%s.%N)
    "$@" >"$work/$i.log" 2>&1; rc=$?
    awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{print b-a}' >"$work/$i.t"
    echo $rc >"$work/$i.rc" ) &
  running=$((running + 1))
}

report_done() {  # every program whose result and all earlier ones are in, in order
  while [ "$printed" -lt "${#labels[@]}" ] && [ -f "$work/$printed.rc" ]; do
    local i=$printed label=${labels[$printed]} log="$work/$printed.log"
    local rc; rc=$(cat "$work/$i.rc")
    local p=$(grep -c '^PASS: ' "$log") f=$(grep -c '^FAIL: ' "$log") s=$(grep -c '^SKIP: ' "$log")
    grep -E '^(FAIL|SKIP): ' "$log" | sed "s|^|  [$label] |"
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
      f=1; echo "  [$label] FAIL: exited with status $rc; last lines:"; tail -n 15 "$log" | sed 's/^/      /'
    elif [ "$rc" -ne 0 ] || [ "$f" -gt 0 ]; then
      grep -E 'ERROR|Sanitizer|runtime error' "$log" | head -5 | sed 's/^/      /'
    fi
    printf '%-40s %4d passed %3d failed %3d skipped  %6.2fs\n' "$label" "$p" "$f" "$s" "$(cat "$work/$i.t")"
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
    printed=$((printed + 1))
  done
}

# The longest programs start first, so that with 2 jobs the run does not end waiting on one of
# them started last (test_sweep alone takes ~40 s of a ~70 s run). Only the start order changes:
# every program still runs, and results are printed in the order they were started.
slow_first="lua/test_sweep lua/test_parity_torch lua/test_cli lua/test_data_text"
is_slow() { case " $slow_first " in *" $1 "*) return 0 ;; esac; return 1; }
in_pass() { if is_slow "$2"; then [ "$1" = slow ]; else [ "$1" = rest ]; fi; }  # pass, label

# One C test per tests/c/test_*.c source: a binary left in the build folder by a source that
# no longer exists is not run (it would count checks the tree no longer has), and a source
# whose binary is missing is a failure, not a silent omission.
not_built() { echo "FAIL: $1 was not built (run make)"; return 1; }
start_pass() {  # slow | rest
  local src name t label
  for src in tests/c/test_*.c; do
    [ -f "$src" ] || continue
    name=$(basename "$src" .c); label="c/$name"
    in_pass "$1" "$label" || continue
    if [ -x "$build/$name" ]; then start_one "$label" "$build/$name"; else start_one "$label" not_built "$build/$name"; fi
  done
  for t in tests/lua/test_*.lua; do
    [ -f "$t" ] || continue
    label="lua/$(basename "$t" .lua)"
    in_pass "$1" "$label" || continue
    start_one "$label" "$host" tests/lua/runner.lua "$t"
  done
}
start_pass slow
start_pass rest
wait
report_done
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
