#!/bin/sh
# experiments/classifier/single_runs.sh -- issue 4's evidence: one real run per dataset,
# softmax and one sparse normalizer, seed 1, at a schedule this 2-core machine affords.
# Records go to experiments/classifier/results/ (one JSON per run), logs next to them;
# summarize.lua reads the committed copies in experiments/classifier/records/.
# The recipe is the one the committed records were made with: timm's init (train.lua's default
# then, PyTorch's now) and, for the marker task, a vocabulary of 20,000 (the default then).
# Usage: sh experiments/classifier/single_runs.sh    (from the checkout; ~55 min on 2 cores)
set -eu
cd "$(dirname "$0")/../.."
out=experiments/classifier/results
mkdir -p "$out"
run() {  # tag dataset normalizer epochs [extra args]
  tag=$1; ds=$2; norm=$3; ep=$4; shift 4
  [ -f "$out/$tag.json" ] && { echo "done already: $tag"; return; }
  echo "== $tag"
  bin/attnlab scripts/train.lua --dataset "$ds" --normalizer "$norm" --seed 1 --epochs "$ep" \
    --threads 1 --init timm --out "$out/$tag.json" --checkpoint "$out/$tag.ckpt" "$@" > "$out/$tag.log" 2>&1
  rm -f "$out/$tag.ckpt"
  tail -n 1 "$out/$tag.log"
}
run fashion_mnist__softmax fashion_mnist softmax 5
run fashion_mnist__entmax15 fashion_mnist entmax15 5
run cifar10__softmax cifar10 softmax 10
run cifar10__topk_0.25 cifar10 topk:0.25 10
run kmnist__softmax kmnist softmax 20
run kmnist__hae kmnist hae 20
run newsgroups20__softmax newsgroups20 softmax 10
run newsgroups20__entmax15 newsgroups20 entmax15 10
run newsgroups20_masked__entmax15 newsgroups20 entmax15 10 --padding masked
run marker__softmax marker softmax 10 --vocab_size 20000
run marker__sparsemax marker sparsemax 10 --vocab_size 20000
