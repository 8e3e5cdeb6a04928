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
for t in "$build"/tests/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  log=$(mktemp)
  if valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
       --suppressions=tests/valgrind.supp "$t" >"$log" 2>&1; then
    echo "PASS: valgrind $name"; pass=$((pass + 1))
  else
    echo "FAIL: valgrind $name"; tail -n 30 "$log" | sed 's/^/    /'; fail=$((fail + 1))
  fi
  rm -f "$log"
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
