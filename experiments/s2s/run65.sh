#!/bin/sh
# experiments/s2s/run65.sh -- the S2S study at 65 tokens (issue 20, preset cifar65.lua) on a
# 2-core machine, in the order that keeps both cores busy:
#   1. teachers    the dense teacher, its profile and the three A-ViTs (one driver, 2 threads)
#   2. two drivers at once, one thread each: groupwise (experiment 1, 24 students) and
#      keeprate then layeraware (experiments 2 and 3, 15 + 15 students, some shared with 1):
#      about the same work each, so neither core idles while the other finishes
#   3. resolution  experiment 4 and the trained models' latency, alone: it times them
#   4. summary     results/s2s/cifar65/summary.md
# (One 2-thread job beside a 1-thread one is slow: the 2-thread job's threads wait for each
# other at every parallel region while one of them shares a core. Hence 1 + 1 threads.)
# Every step is cached by its record and runs under a lock file, and every training run
# checkpoints per epoch: rerun this script after an interruption and it goes on where it
# stopped, training nothing twice.
#   nohup sh experiments/s2s/run65.sh > s2s65.log 2>&1 &
# Arguments go to every step (e.g. --quick for the smoke run, --out DIR); S2S_PRESET names
# another preset.
set -eu
cd "$(dirname "$0")/../.."
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
P=${S2S_PRESET:-experiments/s2s/cifar65.lua}
EXTRA="$*"
# shellcheck disable=SC2086  # EXTRA is split into its arguments on purpose
s2s() { bin/attnlab scripts/s2s_strategies.lua "$1" --preset "$P" --threads "$2" $EXTRA; }
stamp() { echo "== $(date -u +%H:%M:%S) $*"; }
stamp teachers;              s2s teachers 2
stamp "groupwise | keeprate + layeraware"
s2s groupwise 1 & a=$!
{ s2s keeprate 1 && s2s layeraware 1; } & b=$!
rc=0; wait $a || rc=$?; wait $b || rc=$?
[ $rc -eq 0 ] || { stamp "a driver failed ($rc)"; exit $rc; }
stamp resolution;            s2s resolution 1
stamp summary;               s2s summary 1
stamp done
