#!/bin/sh
# tests/gemm_levels.sh DIR LEVEL... -- run DIR/test_gemm_LEVEL for each -march level (see
# `make gemm-levels`), then check that the FMA levels (x86-64-v4: AVX-512, x86-64-v3:
# AVX2+FMA) print the same digest of a fixed set of products. The generic level (no FMA)
# rounds differently by design and is not compared. A level this CPU cannot run is skipped.
dir=$1; shift
fail=0; digests=""
for m in "$@"; do
  bin=$dir/test_gemm_$m
  if ! "$bin" --digest >/dev/null 2>&1; then echo "SKIP: $m (this CPU cannot run it)"; continue; fi
  out=$("$bin"); rc=$?
  p=$(echo "$out" | grep -c '^PASS: '); f=$(echo "$out" | grep -c '^FAIL: ')
  echo "$out" | grep '^FAIL: '
  d=$("$bin" --digest)
  printf '%-10s %-34s %3d passed %3d failed\n' "$m" "$d" "$p" "$f"
  [ $rc -ne 0 ] || [ "$f" -gt 0 ] && fail=1
  case $d in *generic*) ;; *) digests="$digests ${d##* }";; esac
done
n=$(echo $digests | tr ' ' '\n' | sort -u | grep -c .)
if [ "$n" -gt 1 ]; then echo "FAIL: the FMA levels' digests differ:$digests"; fail=1
elif [ "$n" -eq 1 ]; then echo "PASS: the FMA levels agree bitwise (digest$digests)"; fi
exit $fail
