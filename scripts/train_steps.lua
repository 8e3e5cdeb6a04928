-- scripts/train_steps.lua -- a fixed workload for profilers: S training steps (forward,
-- backward, AdamW) of the compact classifier on one fixed random batch, nothing else.
--
--   bin/attnlab scripts/train_steps.lua [--steps 10] [--patch 8] [--normalizer softmax] [--threads 1]
--
-- Why: wall-clock differences of a few percent between two trees are below the noise of a
-- shared machine (bench_train.lua's runs spread by ~5%), and some machines have no hardware
-- counters for `perf stat`. callgrind counts instructions, which repeat exactly whatever else
-- the machine is doing. The instructions of ONE step are the difference of two runs, so
-- start-up, data and model construction cancel:
--
--   for s in 2 7; do valgrind --tool=callgrind --callgrind-out-file=cg.$s bin/attnlab \
--       scripts/train_steps.lua --steps $s; done       # per step: (Ir(7) - Ir(2)) / 5
--
-- (valgrind hides AVX-512, so the kernels run at the avx2 level there.) The last line prints
-- the loss of the last step to all its digits: two trees that do the same arithmetic print the
-- same loss, so a count is compared only between runs that computed the same thing.
-- Shapes: x (128, 3, 32, 32), labels (128); patch 8 -> N = 17 tokens, patch 4 -> N = 65.
local al = require "attnlab"

local SPEC = {
  name = "train_steps.lua",
  usage = "bin/attnlab scripts/train_steps.lua [--steps S] [--patch P] [--normalizer NAME] [--threads N]",
  about = "S training steps of the compact classifier on one fixed random batch: a fixed workload for\n" ..
          "profilers (callgrind, perf). Prints the last step's loss to all its digits.",
  options = {
    { "steps", "S", "training steps (default 10)", type = "posint", default = 10 },
    { "patch", "P", "patch size: 8 -> N = 17 tokens (default), 4 -> N = 65", type = "posint", default = 8 },
    { "normalizer", "NAME", "attention normalizer (default softmax)", default = "softmax" },
    { "threads", "N", "threads (default 1)", type = "posint", default = 1 },
  },
  examples = { "valgrind --tool=callgrind bin/attnlab scripts/train_steps.lua --steps 2" },
}

al.cli.run(SPEC, arg, function(o)
  if 32 % o.patch ~= 0 then al.cli.usage_error(SPEC, ("--patch %d does not divide the 32x32 image"):format(o.patch)) end
  local ok, e = pcall(al.nn.Normalizer.parse, o.normalizer)
  if not ok then al.cli.usage_error(SPEC, "--normalizer: " .. al.cli.clean(e)) end
  al.set_num_threads(o.threads)
  al.manual_seed(0)
  local x, y = al.randn({ 128, 3, 32, 32 }), al.randint(1, 10, { 128 })
  local m = al.nn.ViT { image_size = 32, patch_size = o.patch, channels = 3, num_classes = 10,
                        normalizer = o.normalizer, seed = 0 }
  local opt = al.optim.AdamW(m:parameters(), { lr = 1e-3 })
  local loss
  for _ = 1, o.steps do
    local l = al.cross_entropy(m(x), y)
    opt:zero_grad(); l:backward(); opt:step()
    loss = l:item()
  end
  -- the threads used: set_num_threads clamps --threads to the cores (100000 printed as asked)
  print(("%d steps, patch %d (N = %d), %s, %d thread(s), cpu level %s: last loss %.9g")
    :format(o.steps, o.patch, (32 // o.patch) ^ 2 + 1, o.normalizer, al.get_num_threads(), al.config().cpu_level, loss))
end)
