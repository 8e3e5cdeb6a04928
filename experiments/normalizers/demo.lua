-- experiments/normalizers/demo.lua -- what `make demo` runs (scripts/demo.lua): a real, small
-- normalizer comparison on Fashion-MNIST -- softmax vs entmax15 vs hae vs top-k (25% of the
-- keys), 3 seeds, a short schedule -- then the report with paired tests and plots.
--
--   bin/attnlab scripts/demo.lua                 (sweep with 2 workers x 1 thread, then report)
--   bin/attnlab scripts/sweep.lua experiments/normalizers/demo.lua --workers 2
--   bin/attnlab scripts/analyze.lua results/normalizers-demo
--
-- Wall time (2 cores): about 1 minute for the sweep and the report (the machine and the
-- result are in scripts/demo.lua's header).
return {
  name = "normalizers-demo",
  description = "Fashion-MNIST, 4 normalizers, 3 seeds, short schedule",
  datasets = { "fashion_mnist" },
  normalizers = { "softmax", "entmax15", "hae", "topk:0.25" },
  baseline = "softmax",
  seeds = { 1, 2, 3 },
  schedule = { epochs = 3, batch_size = 128, lr = 2e-3, weight_decay = 0.05, warmup_epochs = 0.5, init = "timm",
               train_limit = 12000 },
  families = {
    { name = "vs_softmax", title = "sparse normalizers vs softmax", baseline = "softmax",
      normalizers = { "entmax15", "hae", "topk:0.25" }, datasets = { "fashion_mnist" } },
    { name = "hae_vs_entmax15", title = "hae vs entmax15 (learned vs fixed alpha = 1.5)", baseline = "entmax15",
      normalizers = { "hae" }, datasets = { "fashion_mnist" } },
  },
  quick = { seeds = { 1, 2 }, schedule = { epochs = 1, train_limit = 2000, test_limit = 2000 } },
}
