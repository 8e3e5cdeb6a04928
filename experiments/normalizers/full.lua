-- experiments/normalizers/full.lua -- the normalizer study's main benchmark at its full schedule
-- (issue 18): the compact classifier (2 pre-LN blocks, 4 heads, width 64, N = 17 for the
-- images) with PyTorch's module initialisation (init = "torch", the default since the parity
-- work; experiments/classifier/RESULTS.md "Parity with PyTorch"), seven normalizers, seeds
-- 1..10, 10 epochs on the full training sets. main.lua is the same grid with the old recipe;
-- main_2core.lua the short schedule the first results came from.
--
--   sh experiments/normalizers/full/run.sh      (headline cells first; resumable)
--   bin/attnlab scripts/analyze.lua experiments/normalizers/full/records/main \
--       --out experiments/normalizers/full/REPORT.md
--
-- Cost: an image run of 10 epochs takes ~2-3 min on one core of this 2-core machine, a text or
-- marker run (97 tokens) ~5 min: 350 runs ~ 20 core-hours, spread over sessions (the sweep
-- resumes; finished records are committed at the end of each session).
local seeds = {}
for s = 1, 10 do seeds[s] = s end

local study = { "cifar10", "fashion_mnist", "newsgroups20", "marker" }
local sparse = { "sparsemax", "entmax15", "hae", "topk:0.125", "topk:0.25", "topk:0.5" }

return {
  name = "normalizers-full",
  description = "full schedule: compact classifier, 7 attention normalizers, 4 tasks (+ masked 20 Newsgroups), 10 seeds, init torch",
  datasets = {
    "cifar10", "fashion_mnist", "newsgroups20", "marker",
    { name = "newsgroups20_masked", dataset = "newsgroups20", padding = "masked", study = false,
      description = "20 Newsgroups with masked padding (not part of the study's families)" },
  },
  normalizers = { "softmax", "sparsemax", "entmax15", "hae", "topk:0.125", "topk:0.25", "topk:0.5" },
  baseline = "softmax",
  seeds = seeds,
  schedule = { epochs = 10, batch_size = 128, lr = 1e-3, weight_decay = 0.05, warmup_epochs = 1, init = "torch" },
  overrides = {},
  families = {
    { name = "sparse_vs_softmax", title = "sparse normalizers vs softmax (the study's 24 comparisons)",
      baseline = "softmax", normalizers = sparse, datasets = study },
    { name = "hae_vs_entmax15", title = "hae vs entmax15 (learned vs fixed alpha = 1.5)",
      baseline = "entmax15", normalizers = { "hae" }, datasets = study },
    { name = "masked_vs_softmax", title = "masked 20 Newsgroups: sparse normalizers vs softmax",
      baseline = "softmax", normalizers = sparse, datasets = { "newsgroups20_masked" } },
  },
  quick = {
    seeds = { 1, 2 },
    schedule = { epochs = 1, train_limit = 1000, test_limit = 1000, warmup_epochs = 0.2 },
    overrides = {
      newsgroups20 = { train_limit = false, test_limit = false, seq_len = 32 },
      newsgroups20_masked = { train_limit = false, test_limit = false, seq_len = 32 },
    },
  },
  slurm = { time = "02:00:00", mem = "4G" },
}
