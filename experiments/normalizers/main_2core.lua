-- experiments/normalizers/main_2core.lua -- the main benchmark at the scale that fits one
-- 2-core machine in about an hour and a half: the same 5 datasets x 7 normalizers x 10 seeds
-- (350 runs) and the same model and optimizer as main.lua, on shorter schedules and subsets.
-- It is the table main.lua with its schedule edited -- the kind of edit a user makes.
--
--   bin/attnlab scripts/sweep.lua experiments/normalizers/main_2core.lua --workers 2
--   bin/attnlab scripts/analyze.lua results/normalizers-main-2core --out experiments/normalizers/main_2core/REPORT.md
--
-- What is cut, and why (costs measured at 1 thread on this machine):
--   CIFAR-10, Fashion-MNIST: 20,000 random training images (seeded; the same subset for every
--     normalizer of a seed), 2 epochs, the full 10,000-image test sets.  ~16 s per run.
--   20 Newsgroups (both paddings): 3,000 random training documents, 2 epochs, 2,000 random test
--     documents, 96 tokens + class token as in the study.  The model runs ~400 documents/s at
--     N = 97, so the full schedule (11,314 documents x 10 epochs) would be ~5 min per run.  ~20 s.
--   marker: 4,000 training sequences, 2 epochs, 2,000 test sequences.  ~22 s.
-- In all ~110 core-minutes. Run seeds 1-5 first (--only "seed[1-5]$") so that a cut-short sweep
-- still has every dataset.
-- The runs are therefore in the under-trained regime; differences between normalizers there
-- need not be the differences after 10 full epochs (see the report's discussion).
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local exp = dofile(here .. "/main.lua")

exp.name = "normalizers-main-2core"
exp.description = "main benchmark, 10 seeds, shortened schedules for a 2-core machine"
exp.schedule = { epochs = 2, batch_size = 128, lr = 1e-3, weight_decay = 0.05, warmup_epochs = 0.5, init = "timm" }
exp.overrides = {
  cifar10 = { train_limit = 20000 },
  fashion_mnist = { train_limit = 20000 },
  newsgroups20 = { train_limit = 3000, test_limit = 2000 },
  newsgroups20_masked = { train_limit = 3000, test_limit = 2000 },
  marker = { train_limit = 4000, test_limit = 2000 },
}
exp.quick = nil
exp.slurm = { time = "00:30:00", mem = "4G" }
return exp
