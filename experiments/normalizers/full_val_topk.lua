-- experiments/normalizers/full_val_topk.lua -- validation-selected top-k (issue 18, item 4). The
-- study picked its top-k ratios on the test set, so its p-values are descriptive. Here 5,000
-- training images are held out (`val`, a seeded split), every ratio is trained at full.lua's
-- schedule on the rest, the ratio is chosen per dataset by mean validation accuracy over seeds,
-- and only that one ratio's test Δ vs softmax (same split, same seeds) gets a confirmatory
-- paired test, unadjusted: a single comparison fixed before looking at the test set.
--
--   sh experiments/normalizers/full/run.sh       (this table comes after the main grid)
--   bin/attnlab experiments/normalizers/full/val_topk.lua experiments/normalizers/full/records/val_topk
return {
  name = "normalizers-full-val-topk",
  description = "validation-selected top-k: CIFAR-10 and Fashion-MNIST, 5,000 held-out training images, 10 seeds",
  datasets = { "cifar10", "fashion_mnist" },
  normalizers = { "softmax", "topk:0.125", "topk:0.25", "topk:0.5" },
  baseline = "softmax",
  seeds = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 },
  schedule = { epochs = 10, batch_size = 128, lr = 1e-3, weight_decay = 0.05, warmup_epochs = 1, init = "torch", val = 5000 },
  quick = { seeds = { 1, 2 }, schedule = { epochs = 1, train_limit = 6000, test_limit = 1000, val = 1000, warmup_epochs = 0.2 } },
  slurm = { time = "01:00:00", mem = "4G" },
}
