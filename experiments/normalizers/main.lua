-- experiments/normalizers/main.lua -- the normalizer study's main benchmark: the compact
-- classifier (2 pre-LN blocks, 4 heads, width 64; al.train.DEFAULTS) on four tasks, with
-- seven attention normalizers, 10 seeds each, compared to softmax over matched seeds.
--
--   bin/attnlab scripts/sweep.lua experiments/normalizers/main.lua --workers 2
--   bin/attnlab scripts/analyze.lua results/normalizers-main --out experiments/normalizers/RESULTS.md
--   ... --quick            3 seeds, 1 epoch on 1,000 examples: the whole grid in minutes
--   ... --slurm --submit   the same runs as a Slurm job array
--
-- Datasets (shared/data/README.md gives the protocols of this copy): CIFAR-10 (full test set;
-- the report adds the bit-exact first 1,000), Fashion-MNIST (Debian's dataset-fashion-mnist),
-- 20 Newsgroups bydate (unmasked: padding tokens are ordinary positions), the marker task;
-- and, outside the study's families, 20 Newsgroups with masked padding (keys at padding
-- positions get exactly zero weight, and top-k counts only real keys).
-- Cost at the full schedule: 5 datasets x 7 normalizers x 10 seeds = 350 runs; an image run
-- of 10 epochs on 50-60k images takes ~5 min on one core here, so the grid is ~15 h with
-- 2 workers -- a job for --slurm, or for --only to split it.
local seeds = {}
for s = 1, 10 do seeds[s] = s end

local study = { "cifar10", "fashion_mnist", "newsgroups20", "marker" }
local sparse = { "sparsemax", "entmax15", "hae", "topk:0.125", "topk:0.25", "topk:0.5" }

return {
  name = "normalizers-main",
  description = "compact classifier, 7 attention normalizers, 4 tasks (+ masked 20 Newsgroups), 10 seeds",
  datasets = {
    "cifar10", "fashion_mnist", "newsgroups20", "marker",
    { name = "newsgroups20_masked", dataset = "newsgroups20", padding = "masked", study = false,
      description = "20 Newsgroups with masked padding (not part of the study's families)" },
  },
  normalizers = { "softmax", "sparsemax", "entmax15", "hae", "topk:0.125", "topk:0.25", "topk:0.5" },
  baseline = "softmax",
  seeds = seeds,
  -- init = "timm": the study ran (and its records were made) before al.train's default became "torch"
  schedule = { epochs = 10, batch_size = 128, lr = 1e-3, weight_decay = 0.05, warmup_epochs = 1, init = "timm" },
  overrides = {},
  -- Holm families: every sparse normalizer vs softmax on the four study tasks (24 tests);
  -- hae vs entmax15 per task (4); the masked variant on its own (6).
  families = {
    { name = "sparse_vs_softmax", title = "sparse normalizers vs softmax (the study's 24 comparisons)",
      baseline = "softmax", normalizers = sparse, datasets = study },
    { name = "hae_vs_entmax15", title = "hae vs entmax15 (learned vs fixed alpha = 1.5)",
      baseline = "entmax15", normalizers = { "hae" }, datasets = study },
    { name = "masked_vs_softmax", title = "masked 20 Newsgroups: sparse normalizers vs softmax",
      baseline = "softmax", normalizers = sparse, datasets = { "newsgroups20_masked" } },
  },
  -- --quick: 3 seeds, 1 epoch on 1,000 training and 1,000 test examples: a smoke test of the
  -- whole pipeline, not evidence. 105 runs, measured 15 min 56 s here with 2 workers while
  -- other jobs shared the machine (load 3-6; the 42 text runs take 25-45 s each, the image
  -- and marker runs 3-10 s); a quiet machine needs about half. 20 Newsgroups is
  -- stored class by class and train_limit takes the first examples (2 of 20 classes), so
  -- its quick runs use every document instead, at 32 tokens per document to stay cheap.
  quick = {
    seeds = { 1, 2, 3 },
    schedule = { epochs = 1, train_limit = 1000, test_limit = 1000, warmup_epochs = 0.2 },
    overrides = {
      newsgroups20 = { train_limit = false, test_limit = false, seq_len = 32 },
      newsgroups20_masked = { train_limit = false, test_limit = false, seq_len = 32 },
    },
  },
  slurm = { time = "02:00:00", mem = "4G" },
}
