-- attnlab.parity -- training parity with PyTorch, step by step, from identical weights.
--
--   local r = al.parity.run{normalizer = "hae", steps = 100}     -- scripts/parity_torch.lua
--   r.max_rel_loss_diff, r.max_param_diff, r.losses[t] = {attnlab, pytorch, rel}
--
-- Builds the compact classifier (al.nn.ViT) and trains it `steps` AdamW steps exactly as
-- al.train does (cross-entropy, zero_grad, backward, optional clipping, step, schedule),
-- writing into a scratch folder its initial weights (safetensors), every batch it trained
-- on, in order (x.<t>, y.<t>), and the recipe (config.json). The PyTorch side
-- (torch/torch_parity.py parity DIR) loads those weights into the same model
-- written in PyTorch, trains on the same batches with torch.optim.AdamW and the same
-- schedule, and writes its losses and final weights, which are compared here.
--
-- Data: "synthetic" (default; images N(0,1), the label the argmax of the correlation with
-- fixed random templates, so the loss falls and gradients carry signal) or any image
-- dataset of al.train ("fashion_mnist", "cifar10", ...; the batches come from al.data's
-- seeded loader over the first train_limit examples).
-- Agreement expected: float32 drift, losses within ~1e-4 relative over the first 100 steps --
-- or, where training itself amplifies rounding (sparse normalizers: a support change is a
-- jump in the Jacobian), no further apart than attnlab from itself started from weights
-- perturbed at rounding level (opts.perturb, 1e-7 relative; r.self_max_rel_loss_diff).
local al = require "attnlab"
local util = require "attnlab.util"

local parity = {}

parity.DEFAULTS = {
  normalizer = "softmax", steps = 20, batch_size = 32, seed = 1, init = "torch",
  dataset = "synthetic", image_size = 16, patch = 4, channels = 3, num_classes = 5, train_limit = 4096,
  dim = 32, depth = 2, heads = 4, mlp_ratio = 4,
  lr = 1e-3, weight_decay = 0.05, decay_all = true, beta1 = 0.9, beta2 = 0.999, adam_eps = 1e-8,
  warmup = nil, total = nil, min_lr = 0, clip_grad = 0, label_smoothing = 0,
  python = "/usr/bin/python3", threads = 1, dir = nil, keep = false, print = nil, perturb = 1e-7,
}
local OPTIONAL = { warmup = true, total = true, dir = true, print = true }
-- key, kind, low, high (kinds: int, num: finite and lo <= v < hi, bool, str: non-empty), the message
local CHECKS = {
  { "steps", "int", 1, want = "a positive integer" }, { "batch_size", "int", 1, want = "a positive integer" },
  { "dim", "int", 1, want = "a positive integer" }, { "depth", "int", 1, want = "a positive integer" },
  { "heads", "int", 1, want = "a positive integer" }, { "image_size", "int", 1, want = "a positive integer" },
  { "patch", "int", 1, want = "a positive integer" }, { "channels", "int", 1, want = "a positive integer" },
  { "num_classes", "int", 2, want = "an integer >= 2" }, { "train_limit", "int", 1, want = "a positive integer" },
  { "seed", "int", 0, want = "an integer >= 0" }, { "threads", "int", 1, want = "a positive integer" },
  { "warmup", "int", 0, want = "an integer >= 0" }, { "total", "int", 1, want = "a positive integer" },
  { "mlp_ratio", "num", 0, above = 0, want = "a finite number > 0" },
  { "lr", "num", 0, above = 0, want = "a finite number > 0" },
  { "weight_decay", "num", 0, want = "a finite number >= 0" }, { "min_lr", "num", 0, want = "a finite number >= 0" },
  { "beta1", "num", 0, 1, want = "a number in [0, 1)" }, { "beta2", "num", 0, 1, want = "a number in [0, 1)" },
  { "adam_eps", "num", 0, above = 0, want = "a finite number > 0" },
  { "clip_grad", "num", 0, want = "a finite number >= 0 (0: no clipping)" },
  { "label_smoothing", "num", 0, 1, want = "a number in [0, 1)" },
  { "perturb", "num", 0, want = "a finite number >= 0 (0: no perturbed run)" },
  { "decay_all", "bool", want = "true or false" }, { "keep", "bool", want = "true or false" },
  { "normalizer", "str", want = "a normalizer name" }, { "init", "str", want = "torch or timm" },
  { "dataset", "str", want = "a dataset name" }, { "python", "str", want = "a path" },
  { "dir", "str", want = "a folder" },
}

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok, _, code = p:close()
  return out, ok and 0 or (code or 1)
end

local q = util.shquote

-- true, or false and one line saying why PyTorch cannot be used.
function parity.torch_available(python)
  python = python or parity.DEFAULTS.python
  local out, rc = sh(q(python) .. " -c 'import torch; print(torch.__version__)'")
  if rc ~= 0 then
    local last = out:gsub("%s+$", ""):match("([^\n]*)$")
    return false, ("PyTorch is not importable by %s (%s)"):format(python, last ~= "" and last or "exit " .. rc)
  end
  return true, out:gsub("%s+$", "")
end

function parity.script() return al.torch_program("torch_parity.py") end

local function config(user)
  local c = {}
  for k, v in pairs(parity.DEFAULTS) do c[k] = v end
  for k, v in pairs(user or {}) do
    if parity.DEFAULTS[k] == nil and not OPTIONAL[k] then error(("parity: unknown option '%s'"):format(tostring(k)), 3) end
    c[k] = v
  end
  -- Every value's kind and range, before any work: from the command line a value arrives as
  -- whatever it parses to ("abc", 0, a JSON table), and a 0 where a boolean is meant would be
  -- true in Lua. (The optimizer and model check some of these again, but only after data
  -- loading and a first training run.)
  for _, k in ipairs(CHECKS) do
    local key, kind, lo, hi = k[1], k[2], k[3], k[4]
    local v = c[key]
    local good
    if v == nil then good = OPTIONAL[key]
    elseif kind == "int" then good = math.type(v) == "integer" and v >= lo and (not hi or v <= hi)
    elseif kind == "num" then good = type(v) == "number" and v >= lo and v < (hi or math.huge) and (k.above == nil or v > k.above)
    elseif kind == "bool" then good = type(v) == "boolean"
    else good = type(v) == "string" and v ~= "" end
    if not good then error(("parity: %s must be %s, got %s"):format(key, k.want, util.show(v)), 0) end
  end
  if c.min_lr > c.lr then error(("parity: min_lr %s is above lr %s"):format(util.show(c.min_lr), util.show(c.lr)), 0) end
  -- errors here are the user's (scripts/parity_torch.lua passes its options through): one line
  -- without a Lua position ("parity.lua:66:" tells a user nothing)
  local okn, why = pcall(al.nn.Normalizer.parse, c.normalizer)
  if not okn then error("parity: " .. util.error_text(why), 0) end
  al.nn.ViT.check_init(c.init, "parity")
  c.warmup = c.warmup or math.max(1, c.steps // 10)
  c.total = c.total or c.steps
  return c
end

-- A synthetic task: images N(0,1) (B,C,S,S), label = 1 + argmax of the correlation with
-- num_classes fixed templates. Returns a function t -> x, y for step t.
local function synthetic_batches(c)
  local gen = al.Generator(c.seed * 7919 + 17)
  local npx = c.channels * c.image_size * c.image_size
  local templates = al.randn({ npx, c.num_classes }, { generator = gen })
  return function()
    local x = al.randn({ c.batch_size, c.channels, c.image_size, c.image_size }, { generator = gen })
    local y = al.argmax(al.matmul(x:reshape({ c.batch_size, npx }), templates), 2)
    return x, y
  end, { size = c.image_size, channels = c.channels, num_classes = c.num_classes }
end

local function dataset_batches(c)
  local tc = al.train.config({ dataset = c.dataset, train_limit = c.train_limit, test_limit = 10, seed = c.seed })
  local tr = al.train.datasets(tc)
  if tr.vocab_size then error("parity: text datasets are not covered; use an image dataset or 'synthetic'", 3) end
  local loader = al.data.Loader(tr, { batch_size = c.batch_size, shuffle = true, seed = c.seed, drop_last = true })
  local epoch, it = 0, nil
  return function()
    while true do
      if it then
        local x, y = it()
        if x then return x, y end
      end
      epoch = epoch + 1
      it = loader:iter(epoch)
    end
  end, { size = tr.size, channels = tr.channels, num_classes = tr.num_classes, patch = tc.patch }
end

local function json_file(path, v)
  local ok, err = al.write_atomic(path, al.json.encode(v, true) .. "\n")
  if not ok then error("parity: cannot write " .. path .. ": " .. tostring(err), 3) end
end

local read_file = util.read_file

-- Run both sides; returns the result table (see the top of the file). Raises when PyTorch
-- fails (with its last lines of output).
-- The checked configuration of a run (parity.run's first step): for a script that wants its
-- usage errors before the PyTorch check and before any work.
function parity.config(user) return config(user) end

function parity.run(user)
  local c = config(user)
  local say = c.print or function() end
  if c.threads then al.set_num_threads(c.threads) end
  local next_batch, info
  if c.dataset == "synthetic" then next_batch, info = synthetic_batches(c)
  else next_batch, info = dataset_batches(c) end
  local patch = info.patch or c.patch
  local mcfg = { image_size = info.size, patch_size = patch, channels = info.channels, num_classes = info.num_classes,
                 dim = c.dim, depth = c.depth, heads = c.heads, mlp_ratio = c.mlp_ratio, normalizer = c.normalizer,
                 qkv_bias = true, seed = c.seed, init = c.init }
  local model = al.nn.ViT(mcfg)
  local dir = c.dir
  if not dir then
    dir = sh("mktemp -d /tmp/attnlab_parity.XXXXXX"):gsub("%s+$", "")
  else   -- a folder that cannot be made is said before any training, not as a failed save
    if not util.mkdir_p(dir) then error(("parity: cannot create the folder %s"):format(dir), 0) end
    local can, cwhy = util.writable_path(dir .. "/init.safetensors")
    if not can then error(("parity: cannot write in %s: %s"):format(dir, cwhy), 0) end
  end
  al.save(dir .. "/init.safetensors", model:state_dict(), { heads = tostring(c.heads) })   -- heads: checkpoint.lua

  -- attnlab's steps, as al.train.run makes them
  local batches, lrs = {}, {}
  local function train_steps(m, get_batch)
    local opt = al.optim.AdamW(al.train.param_groups(m, c.weight_decay, c.decay_all),
                               { lr = c.lr, weight_decay = c.weight_decay, betas = { c.beta1, c.beta2 }, eps = c.adam_eps })
    local sched = al.optim.CosineWarmup(opt, { warmup = c.warmup, total = c.total, min_lr = c.min_lr })
    local ls = {}
    m:train()
    for t = 1, c.steps do
      local x, y = get_batch(t)
      lrs[t] = opt.lr
      local loss = al.cross_entropy(m(x), y, { label_smoothing = c.label_smoothing })
      opt:zero_grad()
      loss:backward()
      if c.clip_grad > 0 then al.optim.clip_grad_norm(m:parameters(), c.clip_grad) end
      opt:step()
      sched:step()
      ls[t] = loss:item()
    end
    return ls
  end
  local losses = train_steps(model, function(t)
    local x, y = next_batch()
    batches["x." .. t], batches["y." .. t] = x:contiguous(), y:contiguous()
    return x, y
  end)
  al.save(dir .. "/batches.safetensors", batches)
  -- The yardstick for float32 drift: attnlab against itself, from its initial weights
  -- perturbed by `perturb` relative (rounding level), on the same batches. Where training
  -- amplifies rounding (sparse normalizers change their support discontinuously) this
  -- drifts as far as the comparison with PyTorch may legitimately drift.
  local self_losses
  if c.perturb and c.perturb > 0 then
    local m2 = al.nn.ViT(mcfg)
    local init = al.load(dir .. "/init.safetensors")
    local g = al.Generator(c.seed * 31 + 7)
    local keys = {}
    for k in pairs(init) do keys[#keys + 1] = k end
    table.sort(keys)                      -- a fixed order of draws: the same perturbation every run
    al.no_grad(function()
      for _, k in ipairs(keys) do init[k] = init[k] * (1 + c.perturb * al.randn(init[k]:shape(), { generator = g })) end
    end)
    m2:load_state_dict(init)
    local keep_lrs = lrs
    lrs = {}
    self_losses = train_steps(m2, function(t) return batches["x." .. t], batches["y." .. t] end)
    lrs = keep_lrs
  end
  json_file(dir .. "/config.json", {
    steps = c.steps, threads = c.threads or 1,
    model = { image_size = mcfg.image_size, patch_size = mcfg.patch_size, channels = mcfg.channels,
              num_classes = mcfg.num_classes, dim = c.dim, depth = c.depth, heads = c.heads, mlp_ratio = c.mlp_ratio,
              normalizer = c.normalizer, qkv_bias = true },
    optim = { lr = c.lr, weight_decay = c.weight_decay, decay_all = c.decay_all, beta1 = c.beta1, beta2 = c.beta2,
              adam_eps = c.adam_eps, warmup = c.warmup, total = c.total, min_lr = c.min_lr, clip_grad = c.clip_grad,
              label_smoothing = c.label_smoothing } })

  -- PyTorch's steps
  local t = c.threads or 1
  local cmd = ("OMP_NUM_THREADS=%d OPENBLAS_NUM_THREADS=%d %s %s parity %s"):format(t, t, q(c.python),
    q(parity.script()), q(dir))
  local out, rc = sh(cmd)
  local tj = read_file(dir .. "/torch.json")
  if rc ~= 0 or not tj then
    local tail = {}
    for line in out:gmatch("[^\n]+") do tail[#tail + 1] = line end
    error(("parity: the PyTorch side failed (exit %s): %s"):format(tostring(rc),
      table.concat(tail, " | ", math.max(1, #tail - 2))), 2)
  end
  local tr = al.json.decode(tj)
  if type(tr.losses) ~= "table" or #tr.losses ~= c.steps then
    error(("parity: the PyTorch side wrote %s losses for %d steps (%s/torch.json)"):format(
      type(tr.losses) == "table" and tostring(#tr.losses) or "no", c.steps, dir), 2)
  end
  local final = al.load(dir .. "/torch_final.safetensors")

  -- comparison
  local r = { config = c, dir = dir, losses = {}, torch_steps = #tr.losses, torch_version = tr.torch_version, max_rel_loss_diff = 0,
              max_rel_loss_step = 0, self_max_rel_loss_diff = self_losses and 0 or nil }
  for i = 1, c.steps do
    local a, b = losses[i], tr.losses[i]
    local rel = math.abs(a - b) / math.max(math.abs(b), 1e-30)
    local srel = self_losses and math.abs(self_losses[i] - a) / math.max(math.abs(a), 1e-30)
    r.losses[i] = { a, b, rel, lrs[i], srel }
    if rel > r.max_rel_loss_diff or rel ~= rel then r.max_rel_loss_diff, r.max_rel_loss_step = rel, i end
    if srel and (srel > r.self_max_rel_loss_diff or srel ~= srel) then r.self_max_rel_loss_diff = srel end
  end
  -- parameters after the last step: the largest absolute difference, and the largest
  -- difference relative to the tensor's own scale (max |value|). The key part of each
  -- qkv bias is reported apart: every normalizer here is invariant to adding a constant to
  -- a row of scores, so that bias's true gradient is 0 and both sides' gradients are
  -- rounding noise, which Adam's m / sqrt(v) turns into steps of size ~lr with random
  -- signs -- a difference of order lr x steps that says nothing about the implementations.
  r.max_param_diff, r.max_param_rel_diff, r.max_key_bias_diff = 0, 0, 0
  r.params = {}
  local names = {}
  for k in pairs(model:state_dict()) do names[#names + 1] = k end
  table.sort(names)
  local sd = model:state_dict()
  local D = c.dim
  for _, k in ipairs(names) do
    local mine, theirs = sd[k], final[k]
    if not theirs then error("parity: the PyTorch side returned no " .. k, 2) end
    local parts = { { k, mine, theirs } }
    if k:match("attn%.qkv%.bias$") then
      parts = { { k .. "[q]", mine:narrow(1, 1, D), theirs:narrow(1, 1, D) },
                { k .. "[k]", mine:narrow(1, D + 1, D), theirs:narrow(1, D + 1, D), key = true },
                { k .. "[v]", mine:narrow(1, 2 * D + 1, D), theirs:narrow(1, 2 * D + 1, D) } }
    end
    for _, pp in ipairs(parts) do
      local name = pp[1]
      local d = al.max(al.abs(pp[2] - pp[3])):item()
      local scale = al.max(al.abs(pp[3])):item()
      r.params[#r.params + 1] = { name, d, scale }
      if pp.key then
        if d > r.max_key_bias_diff or d ~= d then r.max_key_bias_diff = d end
      else
        if d > r.max_param_diff or d ~= d then r.max_param_diff, r.max_param_name = d, name end
        if scale > 0 and d / scale > r.max_param_rel_diff then r.max_param_rel_diff, r.max_param_rel_name = d / scale, name end
      end
    end
  end
  say(("parity: %s, init %s, %s (%dx%d, patch %d, %d classes), dim %d, depth %d, heads %d; %d steps of batch %d; " ..
       "AdamW lr %g wd %g (%s), warmup %d, cosine to %g at %d, clip %g; PyTorch %s")
    :format(c.normalizer, c.init, c.dataset, mcfg.image_size, mcfg.image_size, mcfg.patch_size, mcfg.num_classes,
      c.dim, c.depth, c.heads, c.steps, c.batch_size, c.lr, c.weight_decay,
      c.decay_all and "all parameters" or "timm's no-decay groups", c.warmup, c.min_lr, c.total, c.clip_grad,
      tostring(tr.torch_version)))
  say(("%6s  %12s  %16s  %16s  %10s  %s"):format("step", "lr", "attnlab loss", "pytorch loss", "rel diff",
    self_losses and ("attnlab vs attnlab from weights x (1 + %g N(0,1))"):format(c.perturb) or ""))
  for i, l in ipairs(r.losses) do
    say(("%6d  %12.6g  %16.9f  %16.9f  %10.3e  %s"):format(i, l[4], l[1], l[2], l[3],
      l[5] and ("%10.3e"):format(l[5]) or ""))
  end
  say(("max rel loss diff %.3e (step %d of %d); max |param diff| %.3e (%s); max param diff / max |param| %.3e (%s); " ..
       "key bias (gradient 0 up to rounding) %.3e%s")
    :format(r.max_rel_loss_diff, r.max_rel_loss_step, c.steps, r.max_param_diff, tostring(r.max_param_name),
      r.max_param_rel_diff, tostring(r.max_param_rel_name), r.max_key_bias_diff,
      self_losses and ("; attnlab vs perturbed attnlab: max rel loss diff %.3e"):format(r.self_max_rel_loss_diff) or ""))
  if not c.keep and not c.dir then os.execute("rm -rf " .. q(dir)) end
  r.model = model
  return r
end

return parity
