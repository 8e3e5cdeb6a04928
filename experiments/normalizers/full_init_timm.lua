-- experiments/normalizers/full_init_timm.lua -- the init-robustness family of the full-schedule
-- study (issue 18, item 3): CIFAR-10 and Fashion-MNIST at full.lua's schedule, but with timm's
-- initialisation (trunc_normal(0.02) Linear weights, zero biases: what the study's first
-- results used) instead of PyTorch's module defaults. Softmax vs the three normalizers the
-- study's headline claims rest on, 10 seeds. The question: does each Δ vs softmax keep its sign
-- across inits? Compare with the same cells of full.lua (records/main).
--
--   sh experiments/normalizers/full/run.sh       (this table comes after the main grid)
--   bin/attnlab scripts/analyze.lua experiments/normalizers/full/records/init_timm
return {
  name = "normalizers-full-init-timm",
  description = "init robustness: CIFAR-10 and Fashion-MNIST, init timm, softmax vs topk:0.25, topk:0.125, entmax15, 10 seeds",
  datasets = { "cifar10", "fashion_mnist" },
  normalizers = { "softmax", "entmax15", "topk:0.125", "topk:0.25" },
  baseline = "softmax",
  seeds = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 },
  schedule = { epochs = 10, batch_size = 128, lr = 1e-3, weight_decay = 0.05, warmup_epochs = 1, init = "timm" },
  families = {
    { name = "init_timm_vs_softmax", title = "init timm: sparse normalizers vs softmax (init-robustness family)",
      baseline = "softmax", normalizers = { "entmax15", "topk:0.125", "topk:0.25" }, datasets = { "cifar10", "fashion_mnist" } },
  },
  quick = { seeds = { 1, 2 }, schedule = { epochs = 1, train_limit = 1000, test_limit = 1000, warmup_epochs = 0.2 } },
  slurm = { time = "01:00:00", mem = "4G" },
}
