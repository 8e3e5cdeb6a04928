-- Training parity with PyTorch (lua/attnlab/parity.lua, lua/attnlab/torch/torch_parity.py):
-- a tiny compact classifier trained a few AdamW steps in attnlab and, from the same initial
-- weights on the same batches, in PyTorch. Losses must agree to float32 drift at every
-- step, and the parameters after the last step to well below one step's size (lr), for
-- every normalizer with a PyTorch reference. Skips loudly where PyTorch is not importable.
local al = require "attnlab"
local T = require "harness"

local available, why = al.parity.torch_available()

-- a wrong recipe (lr schedule, weight decay groups, bias correction, a normalizer's
-- backward) moves parameters by ~lr = 1e-3 per step and losses by >= 1e-4 relative; float32
-- drift over 6 steps is ~1e-7 in both (NaN fails both comparisons)
local LOSS_RTOL, PARAM_ATOL = 1e-5, 1e-5

local function check(opts)
  if not available then T.skip(why .. "; parity with PyTorch NOT checked") end
  local o = { steps = 6, batch_size = 16, dim = 16, heads = 2, depth = 2, image_size = 8, patch = 4, seed = T.seed, perturb = 0 }
  for k, v in pairs(opts) do o[k] = v end
  local r = al.parity.run(o)
  print(("# %s: max rel loss diff %.2e (step %d), max |param diff| %.2e (%s), key bias %.2e; losses %.6f -> %.6f")
    :format(o.normalizer, r.max_rel_loss_diff, r.max_rel_loss_step, r.max_param_diff, tostring(r.max_param_name),
      r.max_key_bias_diff, r.losses[1][1], r.losses[#r.losses][1]))
  assert(#r.losses == o.steps and r.torch_steps == o.steps,
    ("one loss per step on each side: %d and %d for %d steps"):format(#r.losses, r.torch_steps, o.steps))
  assert(r.max_rel_loss_diff < LOSS_RTOL, ("losses differ by %.3e relative at step %d (tol %g)")
    :format(r.max_rel_loss_diff, r.max_rel_loss_step, LOSS_RTOL))
  assert(r.max_param_diff < PARAM_ATOL, ("parameter %s differs by %.3e after %d steps (tol %g)")
    :format(tostring(r.max_param_name), r.max_param_diff, o.steps, PARAM_ATOL))
end

local cases = {}
for _, n in ipairs({ "softmax", "sparsemax", "entmax15", "hae", "topk:0.25", "entmax:1.3" }) do
  cases[#cases + 1] = { name = "parity with PyTorch, " .. n .. ": 6 steps from identical weights", fn = function()
    check({ normalizer = n })
  end }
end
cases[#cases + 1] = { name = "parity with PyTorch: timm init, timm's no-decay groups, clipping, label smoothing", fn = function()
  check({ normalizer = "softmax", init = "timm", decay_all = false, clip_grad = 0.05, label_smoothing = 0.1, warmup = 3 })
end }
-- the schedule's defaults (no PyTorch needed): warmup max(1, steps // 10), total = steps
cases[#cases + 1] = { name = "parity.config: warmup defaults to max(1, steps // 10), total to steps; explicit values kept", fn = function()
  local function wt(o) local c = al.parity.config(o) return { c.warmup, c.total } end
  T.eq({ wt({ steps = 6 }), wt({ steps = 25 }), wt({ steps = 25, warmup = 0, total = 40 }) }, { { 1, 6 }, { 2, 25 }, { 0, 40 } })
  T.raises(function() al.parity.config({ num_classes = 1 }) end, "parity: num_classes must be an integer >= 2, got 1")
  T.raises(function() al.parity.config({ min_lr = 0.1, lr = 0.01 }) end, "parity: min_lr 0.1 is above lr 0.01")
  T.raises(function() al.parity.config({ beta1 = 1 }) end, "parity: beta1 must be a number in [0, 1), got 1")
end }
cases[#cases + 1] = { name = "parity harness detects a wrong recipe (PyTorch told another lr)", fn = function()
  if not available then T.skip(why .. "; parity with PyTorch NOT checked") end
  -- run attnlab at lr 1e-3, then rerun only the PyTorch side at lr 2e-3 from the same files
  local dir = T.tmpname()
  local r = al.parity.run({ steps = 4, batch_size = 16, dim = 16, heads = 2, image_size = 8, patch = 4, dir = dir, perturb = 0 })
  assert(r.max_rel_loss_diff < LOSS_RTOL)
  -- qkv.bias (3D,) is laid out (3, heads, head_dim): the key part, rows D+1..2D (D = 16), is
  -- reported apart (its gradient is 0 up to rounding); q and v count in max_param_diff.
  -- Recomputed here from the two final weights (PyTorch's, as its side wrote them)
  local final, sd = al.load(dir .. "/torch_final.safetensors"), r.model:state_dict()
  local kd, qvd = 0, 0
  for _, l in ipairs({ 0, 1 }) do
    local key = ("blocks.%d.attn.qkv.bias"):format(l)
    local d = al.abs(sd[key] - final[key]):totable()
    for i = 1, 48 do
      if i > 16 and i <= 32 then kd = math.max(kd, d[i]) else qvd = math.max(qvd, d[i]) end
    end
  end
  T.eq(r.max_key_bias_diff, kd, 0, "max_key_bias_diff is the key part's")
  assert(r.max_param_diff >= qvd, ("max_param_diff %.3g misses the q/v bias diff %.3g"):format(r.max_param_diff, qvd))
  local cfg = al.json.decode(T.read_file(dir .. "/config.json"))
  cfg.optim.lr = 2e-3
  T.write_file(dir .. "/config.json", al.json.encode(cfg))
  local _, rc = T.sh("OMP_NUM_THREADS=1 /usr/bin/python3 " .. al.parity.script() .. " parity " .. dir)
  assert(rc == 0, "the PyTorch side failed")
  local tr = al.json.decode(T.read_file(dir .. "/torch.json"))
  local worst = 0
  for t = 1, 4 do worst = math.max(worst, math.abs(tr.losses[t] - r.losses[t][1]) / tr.losses[t]) end
  T.rm_rf(dir)
  assert(worst > 100 * LOSS_RTOL, ("a doubled lr moved the losses by only %.3e relative"):format(worst))
end }
return cases
