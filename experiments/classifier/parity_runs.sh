#!/bin/sh
# experiments/classifier/parity_runs.sh -- issue 17's evidence: attnlab vs the same model in
# PyTorch at the same recipe, from different initial weights. 5 seeds x {CIFAR-10 patch 8,
# Fashion-MNIST patch 7} (N = 17), softmax, 3 epochs, AdamW lr 1e-3 wd 0.05 on every
# parameter (torch.optim.AdamW(model.parameters()) -- attnlab's --decay_all true), batch 128,
# 5% linear warmup (0.15 of 3 epochs) then cosine to 0, no clipping, no label smoothing.
#   attnlab: --init torch and --init timm;  PyTorch: its own module defaults.
# One run at a time at 1 thread; records under experiments/classifier/parity/ (a finished
# record is skipped, so the script resumes). Table: bin/attnlab experiments/classifier/parity_table.lua
# Usage: sh experiments/classifier/parity_runs.sh [attnlab|torch|all]   (from the checkout)
set -eu
cd "$(dirname "$0")/../.."
what=${1:-all}
out=experiments/classifier/parity
mkdir -p "$out/logs"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 ATTNLAB_NUM_THREADS=1
RECIPE="--epochs 3 --batch_size 128 --lr 0.001 --weight_decay 0.05 --decay_all true --warmup_epochs 0.15 --min_lr 0 --clip_grad 0"
patch() { [ "$1" = cifar10 ] && echo 8 || echo 7; }
attnlab_run() {  # dataset init seed
  tag="$1__attnlab-$2__seed$3"
  [ -f "$out/$tag.json" ] && { echo "done already: $tag"; return 0; }
  echo "== $tag ($(date -u +%H:%M:%S))"
  bin/attnlab scripts/train.lua --dataset "$1" --normalizer softmax --seed "$3" --init "$2" --patch "$(patch "$1")" \
    $RECIPE --threads 1 --progress false --out "$out/$tag.json" > "$out/logs/$tag.log" 2>&1 || { tail -n 3 "$out/logs/$tag.log"; return 0; }
  tail -n 1 "$out/logs/$tag.log"
}
torch_run() {  # dataset seed
  tag="$1__torch__seed$2"
  [ -f "$out/$tag.json" ] && { echo "done already: $tag"; return 0; }
  echo "== $tag ($(date -u +%H:%M:%S))"
  /usr/bin/python3 lua/attnlab/torch/torch_parity.py train --dataset "$1" --normalizer softmax --seed "$2" \
    --patch "$(patch "$1")" $RECIPE --threads 1 --out "$out/$tag.json" > "$out/logs/$tag.log" 2>&1 || { tail -n 3 "$out/logs/$tag.log"; return 0; }
  tail -n 1 "$out/logs/$tag.log"
}
for seed in 1 2 3 4 5; do
  for ds in cifar10 fashion_mnist; do
    if [ "$what" = attnlab ] || [ "$what" = all ]; then
      attnlab_run "$ds" torch "$seed"
      attnlab_run "$ds" timm "$seed"
    fi
    if [ "$what" = torch ] || [ "$what" = all ]; then torch_run "$ds" "$seed"; fi
  done
done
