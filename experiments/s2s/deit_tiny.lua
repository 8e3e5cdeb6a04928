-- experiments/s2s/deit_tiny.lua -- the S2S study at DeiT-Tiny scale (depth 12, width 192,
-- 3 heads, patch 16, 224x224: 197 tokens), for users with more compute than two cores.
--
-- The teacher starts from a timm/DeiT-Tiny ImageNet checkpoint in safetensors (loaded
-- strictly by lua/attnlab/nn/checkpoint.lua; only the 1000-class head is re-initialised for
-- the 10 classes) and is fine-tuned on CIFAR-10 upsampled to 224x224 (bilinear), as DeiT
-- fine-tunes on CIFAR-10. Make the checkpoint once with PyTorch, e.g. from DeiT's file:
--   python3 -c "import torch, safetensors.torch as st; \
--     sd = torch.load('deit_tiny_patch16_224-a1311bcf.pth', map_location='cpu')['model']; \
--     st.save_file({k: v.contiguous() for k, v in sd.items()}, 'deit_tiny_patch16_224.safetensors')"
-- (or timm.create_model('deit_tiny_patch16_224', pretrained=True).state_dict()), and put
-- it where `teacher.init` points (or pass --teacher.init PATH).
--
--   bin/attnlab scripts/s2s_strategies.lua all --preset experiments/s2s/deit_tiny.lua
--   (steps as in cifar_small.lua: distill.lua teacher/avit/run, profile.lua, s2s_strategies.lua ...)
--
-- A-ViT's own hyper-parameters for DeiT-Tiny: gate_scale 10, gate_center 30, ponder 5e-4,
-- prior 1e-3, target depth = keep_rate * 12 (A-ViT's 0-based centre 8 = layer 9 = 0.75).
-- On a GPU machine this is an overnight study; on 2 CPU cores it is weeks -- use the
-- cifar_small preset there, or --quick for a smoke run.
return {
  name = "s2s-deit-tiny",
  out = "results/s2s/deit_tiny",
  dataset = "cifar10",
  teacher = { init = "deit_tiny_patch16_224.safetensors", heads = 3, image_size = 224, dataset = "cifar10",
              epochs = 3, lr = 1e-4, batch_size = 64, weight_decay = 0.05, warmup_epochs = 0, label_smoothing = 0.1, seed = 1 },
  profile = { split = "test", limit = 1000, batch_size = 25, topk = { 1, 5, 10 } },
  avit = { keep_rates = { 0.5, 0.65, 0.8 }, main_keep_rate = 0.65, epochs = 5, lr = 5e-5, batch_size = 64, eval_limit = 1000,
           halting = { gate_scale = 10, gate_center = 30, ponder_weight = 5e-4, distr_weight = 1e-3 } },
  distill = { mixer = "bimamba", lr = 2e-4, batch_size = 64, eval_limit = 1000,
              stage1 = { epochs = 5, weights = { mse = 1.0, halt = 0.1, ce = 1.0 } },
              stage2 = { epochs = 5, weights = { ce = 1.0, mse = 0.0 } } },
  groupwise = { groups = { "shallow", "middle", "deep" } },          -- 4 layers each
  keeprate = { strategy = "layer_aware:3" },
  layeraware = { k = { 3, 6 }, sparsest = true },
  resolution = { sizes = { 224, 384 }, patch = 16, dim = 192, depth = 12, heads = 3, batch = 8, iters = 5, mixer = "bimamba" },
  quick = {
    out = "results/s2s/deit_tiny_quick",
    train_limit = 500, test_limit = 200,
    teacher = { epochs = 1, train_limit = 500, test_limit = 200 },
    profile = { limit = 100 },
    avit = { epochs = 1, keep_rates = { 0.65 } },
    distill = { stage1 = { epochs = 1 }, stage2 = { epochs = 1 } },
    layeraware = { k = { 3 } },
    resolution = { batch = 2, iters = 2 },
  },
}
