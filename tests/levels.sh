#!/usr/bin/env bash
# tests/levels.sh BUILD_DIR -- the kernel, determinism and model tests once per CPU level this
# machine can run (ATTNLAB_CPU=avx512|avx2|generic, with the C tests compiled for that level
# too: BUILD_DIR/tests-<level>), then at the best level under two OpenBLAS kernel choices:
# OpenBLAS's own (OPENBLAS_CORETYPE unset) and OPENBLAS_CORETYPE=Haswell, whatever the
# environment pins for the rest of the run. Results at every level are checked against the
# same references; determinism across thread counts must hold under every BLAS kernel.
# Ends with one "N passed, N failed" line over all of it.
set -u
cd "$(dirname "$0")/.."
build=${1:-build/release}
host=${ATTNLAB_HOST:-bin/attnlab}
kernel_tests="c/test_core c/test_tensor c/test_gemm c/test_norm_math c/test_norm_reference c/test_norm_gradients c/test_norm_identities c/test_norm_start c/test_mixers c/test_bilstm c/test_bimamba c/test_simd lua/test_autograd lua/test_ops_grad lua/test_nn lua/test_mixers"
blas_tests="c/test_core c/test_tensor c/test_gemm lua/test_autograd lua/test_ops_grad lua/test_nn lua/test_s2s"
best=$(ATTNLAB_CPU= "$host" -e 'io.write(al.config().cpu_best)' 2>/dev/null)
[ -n "$best" ] || { echo "FAIL: $host cannot report al.config().cpu_best"; echo "0 passed, 1 failed"; exit 1; }
pass=0; fail=0; skip=0
# every C test named above must exist in each folder it runs from (a missing binary would
# otherwise just not run)
for dir in "$build/tests" "$build"/tests-*; do
  for t in $kernel_tests $blas_tests; do
    case $t in c/*) ;; *) continue ;; esac
    case $dir in */tests) case " $blas_tests " in *" $t "*) ;; *) continue ;; esac ;; esac
    [ -x "$dir/${t#c/}" ] || { echo "FAIL: $dir/${t#c/} is not built (make tests)"; fail=$((fail + 1)); }
  done
done
# One build for every x86-64: outside the avx2/avx512 kernel variants, no object may use
# VEX/EVEX registers (a SIGILL on an older node of the same cluster otherwise).
wide=$( { objdump -d --no-show-raw-insn "$build/libattnlab.a"; for o in "$build"/lua/bind/*.o "$build"/lua/host/*.o; do
           objdump -d --no-show-raw-insn "$o"; done; } |
         awk '/file format/ { obj = $1 } /%[yz]mm[0-9]|%k[0-7]/ && obj !~ /-avx(2|512)\.o:$/ { bad[obj] = 1 }
              END { for (o in bad) printf " %s", o }')
if [ -z "$wide" ]; then echo "PASS: baseline objects use no AVX/AVX-512 registers"; pass=$((pass + 1))
else echo "FAIL: baseline objects use AVX/AVX-512 registers:$wide"; fail=$((fail + 1)); fi
tally() {  # the runner's last line: "N passed, N failed, N skipped"
  local line; line=$(tail -n 1 "$1")
  set -- $line
  pass=$((pass + $1)); fail=$((fail + $3)); skip=$((skip + ${5:-0}))
}
out=$(mktemp); trap 'rm -f "$out"' EXIT
for level in avx512 avx2 generic; do
  case "$best:$level" in
    generic:avx2|generic:avx512|avx2:avx512)
      echo "SKIP: level $level: this CPU supports only $best (SKIPPED LOUDLY)"; skip=$((skip + 1)); continue ;;
  esac
  echo "== kernels at ATTNLAB_CPU=$level (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset})"
  ATTNLAB_CPU=$level ATTNLAB_TEST_ONLY="$kernel_tests" tests/run.sh "$build/tests-$level" | tee "$out"
  tally "$out"
done
for core in Haswell ""; do
  echo "== BLAS kernels: OPENBLAS_CORETYPE=${core:-unset, the kernel OpenBLAS picks itself}, CPU level $best"
  if [ -n "$core" ]; then
    OPENBLAS_CORETYPE=$core ATTNLAB_TEST_ONLY="$blas_tests" tests/run.sh "$build/tests" | tee "$out"
  else
    env -u OPENBLAS_CORETYPE ATTNLAB_TEST_ONLY="$blas_tests" tests/run.sh "$build/tests" | tee "$out"
  fi
  tally "$out"
done
echo "levels and BLAS kernels: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
