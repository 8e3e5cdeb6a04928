#!/bin/sh
# scripts/bench/ab.sh -- whole-process A/B timing: runs command A and command B alternately,
# N pairs (A first in odd pairs, B first in even ones, so a machine that drifts hits both
# alike), and prints each run's wall time, the median of each side and the pair-by-pair
# ratio A/B (median, min-max). The figures the RESULTS.md files give as "A/B, N pairs".
#
#   sh scripts/bench/ab.sh [-n PAIRS] [-w WARMUPS] 'COMMAND A' 'COMMAND B'
#   sh scripts/bench/ab.sh -n 7 \
#     'bin/attnlab scripts/train_steps.lua --steps 150 --patch 4 --threads 1' \
#     'B/bin/attnlab B/scripts/train_steps.lua --steps 150 --patch 4 --threads 1'
#
# Each command runs under sh -c with its output thrown away; a command that fails stops the
# comparison (exit 1), since the time of a failed run means nothing. Exit 2 on bad arguments.
set -u
pairs=7
warmups=1
usage() {
  echo "usage: sh scripts/bench/ab.sh [-n PAIRS] [-w WARMUPS] 'COMMAND A' 'COMMAND B'" >&2
  exit 2
}
while getopts "n:w:h" opt; do
  case $opt in
    n) pairs=$OPTARG ;;
    w) warmups=$OPTARG ;;
    h) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { echo "ab.sh: needs exactly two commands, got $#" >&2; usage; }
case $pairs in '' | *[!0-9]* | 0) echo "ab.sh: -n needs an integer >= 1, got '$pairs'" >&2; usage ;; esac
case $warmups in '' | *[!0-9]*) echo "ab.sh: -w needs an integer >= 0, got '$warmups'" >&2; usage ;; esac
cmd_a=$1
cmd_b=$2

# Wall seconds of one run of "$1", or exit 1 naming the command that failed.
wall() {
  t0=$(date +%s.%N)
  if ! sh -c "$1" >/dev/null 2>&1; then
    echo "ab.sh: the command failed (rerun it by hand to see why): $1" >&2
    exit 1
  fi
  t1=$(date +%s.%N)
  echo "$t0 $t1" | awk '{ printf "%.4f\n", $2 - $1 }'
}

i=0
while [ $i -lt "$warmups" ]; do wall "$cmd_a" >/dev/null; wall "$cmd_b" >/dev/null; i=$((i + 1)); done

times=$(mktemp)
trap 'rm -f "$times"' EXIT
i=1
while [ $i -le "$pairs" ]; do
  if [ $((i % 2)) -eq 1 ]; then ta=$(wall "$cmd_a") || exit 1; tb=$(wall "$cmd_b") || exit 1
  else tb=$(wall "$cmd_b") || exit 1; ta=$(wall "$cmd_a") || exit 1; fi
  echo "$ta $tb" >>"$times"
  echo "pair $i: A $ta s, B $tb s, A/B $(echo "$ta $tb" | awk '{ printf "%.3f", $1 / $2 }')"
  i=$((i + 1))
done

# medians (the middle value, or the mean of the two middle ones)
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ma=$(awk '{ print $1 }' "$times" | median)
mb=$(awk '{ print $2 }' "$times" | median)
mr=$(awk '{ print $1 / $2 }' "$times" | median)
lo=$(awk '{ print $1 / $2 }' "$times" | sort -g | head -1)
hi=$(awk '{ print $1 / $2 }' "$times" | sort -g | tail -1)
printf 'A: %s\nB: %s\nwall s, median of %d: A %.3f, B %.3f; A/B pair by pair: median %.3f (%.3f-%.3f)\n' \
  "$cmd_a" "$cmd_b" "$pairs" "$ma" "$mb" "$mr" "$lo" "$hi"
