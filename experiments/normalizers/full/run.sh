#!/bin/sh
# experiments/normalizers/full/run.sh -- the normalizer study at its full schedule, in the order
# that completes the study's headline comparisons first (issue 18):
#   1. CIFAR-10 top-k 0.25 vs softmax      2. Fashion-MNIST top-k 0.125 vs softmax
#   3. KMNIST top-k 0.25 vs softmax        4. 20 Newsgroups unmasked, all six vs softmax
#   5. everything else of the main benchmark and of KMNIST.
# Each step is a resumable sweep (2 workers x 1 thread): rerun this script after an interruption
# and it goes on where it stopped (finished records are kept, a half-done run resumes from its
# last epoch's checkpoint). Records: experiments/normalizers/full/records/{main,kmnist}/.
#   nohup sh experiments/normalizers/full/run.sh > full-sweep.log 2>&1 &
set -eu
cd "$(dirname "$0")/../../.."
host=bin/attnlab
out=experiments/normalizers/full/records
sweep() {  # experiment, out subfolder, --only patterns
  echo "== $(date -u +%H:%M:%S) $1 --only $3"
  "$host" scripts/sweep.lua "$1" --workers 2 --threads 1 --out "$out/$2" --only "$3"
}
sweep experiments/normalizers/full.lua main '^cifar10__softmax__,^cifar10__topk%-0%.25__'
sweep experiments/normalizers/full.lua main '^fashion_mnist__softmax__,^fashion_mnist__topk%-0%.125__'
sweep experiments/normalizers/full_kmnist.lua kmnist '^kmnist__softmax__,^kmnist__topk%-0%.25__'
sweep experiments/normalizers/full.lua main '^newsgroups20__'
sweep experiments/normalizers/full.lua main '.'
sweep experiments/normalizers/full_kmnist.lua kmnist '.'
echo "== $(date -u +%H:%M:%S) done"
