-- experiments/s2s/cifar_2core.lua -- the WHOLE Sparsity-to-Simplicity study (teacher,
-- sparsity profile, A-ViT at 3 target keep rates, experiments 1-4) sized to run in well under
-- an hour on one core of a shared 2-core machine. It is cifar_small.lua with the schedule cut:
--
--   bin/attnlab scripts/s2s_strategies.lua all --preset experiments/s2s/cifar_2core.lua --threads 1
--
-- What is cut, and why (costs measured at 1 thread on this machine, 2000-image timing runs):
--   * patch 8 instead of 4: a 4x4 grid + class token = 17 tokens (the normalizer study's
--     CIFAR setting). A teacher epoch costs ~2.5 ms of CPU per training image at patch 8 vs
--     ~8 ms at patch 4. Depth 6, width 96, 3 heads, MLP 384 as in cifar_small.lua, so the
--     groups are 2 layers each (shallow 1-2 / middle 3-4 / deep 5-6) and layer-aware k = 3.
--   * teacher: a seeded random 20,000-image subset of the training set, 6 epochs (~5 CPU-min);
--     tested on the full 10,000-image test set.
--   * A-ViT and S2S students: a seeded random 5,000-image training subset (train_limit),
--     3 A-ViT epochs, 2 + 2 distillation epochs, tested on a seeded random 5,000-image subset
--     of the test set (test_limit; teacher and student of a run see the same images).
--   * experiment 4 is the same DeiT-Tiny-shape benchmark as in cifar_small.lua (batch 4, 7
--     round-robin repeats; ~1.5 min).
--   * experiment 3 also trains the k = 2 / 3 students with BiLSTM and a no-replacement
--     control (the A-ViT trained for the students' 2 + 2 epochs), since an under-trained
--     teacher gains from extra epochs alone.
-- Measured (2026-12-01, load average ~6 from other jobs): 44 min wall in two parallel
-- streams, ~30 CPU-minutes of training; results in experiments/s2s/RESULTS.md.
-- The runs are therefore short: absolute accuracies are far below a trained DeiT's, and
-- differences of about 1 point between students are within the test-set noise
-- (binomial SE at 5,000 images and ~50% accuracy: 0.7 points).
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local p = dofile(here .. "/cifar_small.lua")

p.name = "s2s-cifar-2core"
p.out = "results/s2s/cifar_2core"
p.train_limit = 5000
p.test_limit = 5000
p.teacher = { init = "timm", dataset = "cifar10", dim = 96, depth = 6, heads = 3, patch = 8, mlp_ratio = 4, epochs = 6,
              batch_size = 128, lr = 1e-3, weight_decay = 0.05, warmup_epochs = 1, label_smoothing = 0.1, seed = 1,
              train_limit = 20000 }
p.profile = { split = "test", limit = 2000, batch_size = 100, topk = { 1, 5 } }
p.avit.epochs = 3
p.avit.eval_limit = 1000
p.distill.eval_limit = 1000
-- experiment 3 extras: the k = 3 student with BiLSTM too, and the no-replacement control
-- (the A-ViT teacher trained for the students' 2 + 2 epochs with nothing replaced)
p.layeraware.mixers = { "bilstm" }
p.layeraware.k = { 2, 3 }
p.layeraware.control = true
p.distill.stage1.epochs = 2
p.distill.stage2.epochs = 2
p.resolution.batch = 4
p.resolution.iters = 7
p.quick.out = "results/s2s/cifar_2core_quick"
p.quick.teacher = { epochs = 1, train_limit = 1000, test_limit = 300 }
p.quick.train_limit, p.quick.test_limit = 500, 300
p.quick.layeraware = { k = { 3 }, mixers = {}, control = false }
p.quick.resolution = { batch = 1, iters = 1, sizes = { 224 } }
return p
