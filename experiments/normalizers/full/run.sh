#!/bin/sh
# experiments/normalizers/full/run.sh -- the normalizer study at its full schedule (issue 18), in
# the order that completes the study's headline comparisons first and keeps the grid within
# budget (the 97-token text and marker runs cost ~2x an image run):
#   1. CIFAR-10 top-k 0.25 vs softmax      2. Fashion-MNIST top-k 0.125 vs softmax
#   3. KMNIST top-k 0.25 vs softmax        (10 seeds each)
#   4. 20 Newsgroups unmasked, all seven, seeds 1-5
#   5. the rest of CIFAR-10 and Fashion-MNIST, 10 seeds; 6. the rest of KMNIST, 10 seeds
#   7. the init-robustness family (full_init_timm.lua) and validation-selected top-k
#      (full_val_topk.lua), 5 seeds each: 80 image runs (~2.5 core-hours on a quiet machine),
#      two whole families within one session
#   8. the marker task and masked 20 Newsgroups, seeds 1-5 (70 runs of 97 tokens, ~2-3 min each)
#   9. 20 Newsgroups unmasked, seeds 6-10: the last of the study's headline comparisons at 10 seeds
#  10. the marker task and masked 20 Newsgroups, seeds 6-10 (beyond the issue's 5-seed floor)
#  11. the init-robustness and validation-selected top-k families, seeds 6-10 (80 image runs,
#      ~2.5 core-hours), so that every family of the study has ten matched seeds
# Each step is a resumable sweep (2 workers x 1 thread): rerun this script after an interruption
# and it goes on where it stopped (finished records are kept, a half-done run resumes from its
# last epoch's checkpoint). Records: experiments/normalizers/full/records/<table>/.
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
sweep experiments/normalizers/full.lua main '^newsgroups20__.*__seed[1-5]$'
sweep experiments/normalizers/full.lua main '^cifar10__,^fashion_mnist__'
sweep experiments/normalizers/full_kmnist.lua kmnist '.'
sweep experiments/normalizers/full_init_timm.lua init_timm '__seed[1-5]$'
sweep experiments/normalizers/full_val_topk.lua val_topk '__seed[1-5]$'
sweep experiments/normalizers/full.lua main '^marker__.*__seed[1-5]$,^newsgroups20_masked__.*__seed[1-5]$'
sweep experiments/normalizers/full.lua main '^newsgroups20__.*__seed[6-9]$,^newsgroups20__.*__seed10$'
sweep experiments/normalizers/full.lua main '.'
sweep experiments/normalizers/full_init_timm.lua init_timm '.'
sweep experiments/normalizers/full_val_topk.lua val_topk '.'
echo "== $(date -u +%H:%M:%S) done"
