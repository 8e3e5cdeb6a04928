-- tests/lua/test_api_args.lua -- bad arguments to the Lua library API (nn, optim, data) raise a
-- Lua error naming the function and the problem when the call is made: never internal text
-- ("attempt to index a number value"), never a failure only at a later use, never a silent
-- acceptance that computes garbage. Each case lists text the message must contain (plain
-- substrings); the messages must not carry Lua's internal wording or printf's "-nan".
local al = require "attnlab"
local T = require "harness"

local cases = {}

-- err(name, fn, pattern...): fn() must raise, and the message must contain every pattern
-- (and neither Lua's "attempt to" nor "-nan").
local function err(name, fn, ...)
  cases[#cases + 1] = T.error_case(name, fn, { ... }, { "attempt to", "-nan" })
end

local function params() return al.nn.Linear(2, 2, { generator = al.Generator(1) }):parameters() end
-- a dataset as text.lua and the tests make them: n examples, batch and subset
local function fake_dataset(n)
  return { n = n, split = "fake", batch = function(_, idx) return al.zeros { idx:numel(), 2 }, idx end,
           subset = function(self, idx) return { n = idx:numel(), split = self.split } end }
end

-- ---- view: never a copy -------------------------------------------------------------------------
-- reshape copies a non-contiguous tensor; a view that was a copy lost the writes made through it
err("view of a transpose", function() return al.randn({ 2, 3 }):transpose(1, 2):view({ 6 }) end,
  "attnlab.view: float32 (3,2) is not contiguous", "use reshape (which copies) or contiguous():view")
err("view of an expand", function() return al.ones({ 1, 3 }):expand({ 2, 3 }):view({ 6 }) end,
  "attnlab.view: float32 (2,3) is not contiguous")
cases[#cases + 1] = { name = "view of a contiguous tensor shares its memory; reshape of a transpose copies", fn = function()
  local t = al.arange(1, 6):reshape({ 2, 3 })
  local v = t:view({ 3, 2 })
  v[1] = 0
  T.eq(t:totable(), { { 0, 0, 3 }, { 4, 5, 6 } }, 0, "a write through the view")
  T.eq(t:transpose(1, 2):reshape({ 6 }):totable(), { 0, 4, 0, 5, 3, 6 })
  T.eq(t:transpose(1, 2):contiguous():view({ 6 }):totable(), { 0, 4, 0, 5, 3, 6 })
end }

-- ---- optimizers: a parameter listed twice, a schedule's step -------------------------------------
err("AdamW({p, p}): a parameter listed twice", function()
  local ps = params()
  return al.optim.AdamW({ ps[1], ps[2], ps[1] })
end, "AdamW: group 1 entry 3 is the same tensor as group 1 entry 1", "updated twice per step")
err("SGD with a parameter in two groups", function()
  local ps = params()
  return al.optim.SGD({ { params = { ps[1] } }, { params = { ps[2], ps[1] }, lr = 0.1 } }, { lr = 0.01 })
end, "SGD: group 2 entry 2 is the same tensor as group 1 entry 1")
for _, t in ipairs({ { "x", "got a string" }, { 0 / 0, "got nan" }, { -5, "got -5" }, { math.huge, "got inf" } }) do
  err(("CosineWarmup:lr_at(%s)"):format(tostring(t[1])), function()
    local sched = al.optim.CosineWarmup(al.optim.AdamW(params()), { total = 10, warmup = 2 })
    return sched:lr_at(t[1])
  end, "CosineWarmup:lr_at: t must be a step count >= 0", t[2])
end
-- PyTorch's arguments to step and zero_grad would be ignored here without a word
err("AdamW:step(closure)", function()
  local opt = al.optim.AdamW(params())
  return opt:step(function() return 1 end)
end, "AdamW:step takes no argument, got function", "a closure is not run", "before opt:step()")
err("SGD:step(closure)", function() return al.optim.SGD(params()):step(print) end,
  "SGD:step takes no argument, got function")
err("AdamW:zero_grad(false)", function() return al.optim.AdamW(params()):zero_grad(false) end,
  "AdamW:zero_grad takes no argument, got boolean", "set_to_none=True")
err("Module:zero_grad(false)", function() return al.nn.Linear(2, 2):zero_grad(false) end,
  "Linear:zero_grad takes no argument, got boolean", "set_to_none=True")
err("CosineWarmup:step(epoch)", function()
  local sched = al.optim.CosineWarmup(al.optim.AdamW(params()), { total = 10, warmup = 2 })
  return sched:step(3)
end, "CosineWarmup:step takes no argument, got 3", "lr_at(t)")
cases[#cases + 1] = { name = "step, zero_grad and a schedule's step without arguments", fn = function()
  local m = al.nn.Linear(2, 2, { generator = al.Generator(1) })
  local opt = al.optim.SGD(m:parameters(), { lr = 0.5 })
  local sched = al.optim.CosineWarmup(opt, { total = 10, warmup = 2 })
  al.sum(m:forward(al.ones { 1, 2 })):backward()
  local w0 = m:parameters()[1]:clone()
  opt:step()
  T.truthy(al.max(al.abs(m:parameters()[1] - w0)):item() > 0, "the step moved the weight")
  T.eq(opt.steps, 1)
  opt:zero_grad()
  T.truthy(m:parameters()[1].grad == nil, "zero_grad set the grad to nil")
  al.sum(m:forward(al.ones { 1, 2 })):backward()
  m:zero_grad()
  T.truthy(m:parameters()[1].grad == nil, "Module:zero_grad set the grad to nil")
  T.close(sched:step(), sched:lr_at(1), 1e-15)
end }
cases[#cases + 1] = { name = "a parameter listed once per group is fine; lr_at of a step count is the schedule's", fn = function()
  local ps = params()
  local opt = al.optim.AdamW({ { params = { ps[1] } }, { params = { ps[2] }, weight_decay = 0 } }, { lr = 1e-3 })
  local sched = al.optim.CosineWarmup(opt, { total = 10, warmup = 2 })
  T.close(sched:lr_at(0), 5e-4, 1e-15)
  T.close(sched:lr_at(10), 0, 1e-15)
end }

-- ---- load_state_dict ------------------------------------------------------------------------
err("Module:load_state_dict of a number", function() return al.nn.Linear(2, 2):load_state_dict(5) end,
  "load_state_dict", "state dict must be a table", "got number")
err("Module:load_state_dict of a tensor", function() return al.nn.Linear(2, 2):load_state_dict(al.ones { 2 }) end,
  "load_state_dict", "got a tensor")
err("Module:load_state_dict with options that are not a table", function()
  local m = al.nn.Linear(2, 2)
  return m:load_state_dict(m:state_dict(), false)
end, "load_state_dict", "options must be a table", "got boolean")
err("AdamW:load_state_dict of a number", function() return al.optim.AdamW(params()):load_state_dict(5) end,
  "AdamW:load_state_dict", "state dict must be a table", "got number")
err("SGD:load_state_dict of a string", function() return al.optim.SGD(params()):load_state_dict("x") end,
  "SGD:load_state_dict", "got string")
err("AdamW:load_state_dict with a step that is a number", function()
  return al.optim.AdamW(params()):load_state_dict({ step = 5 })
end, "AdamW:load_state_dict", "step must be a one-element int64 tensor")
err("AdamW:load_state_dict with a state of the wrong shape", function()
  return al.optim.AdamW(params()):load_state_dict({ ["state.1.exp_avg"] = al.ones { 5 } })
end, "AdamW:load_state_dict", "state.1.exp_avg is (5), parameter 1 is (2,2)")
err("AdamW:load_state_dict with a state for a parameter it does not have", function()
  return al.optim.AdamW(params()):load_state_dict({ ["state.9.exp_avg"] = al.ones { 2 } })
end, "AdamW:load_state_dict", "state.9.exp_avg is for parameter 9, the optimizer has 2")
err("AdamW:load_state_dict with a state that is not a tensor", function()
  return al.optim.AdamW(params()):load_state_dict({ ["state.1.exp_avg"] = 3 })
end, "state.1.exp_avg must be a tensor")
err("AdamW:load_state_dict of an SGD's state", function()
  local ps = params()
  local sgd = al.optim.SGD(ps, { lr = 0.1, momentum = 0.9 })
  for _, p in ipairs(ps) do p.grad = al.ones(p:shape()) end
  sgd:step()
  return al.optim.AdamW(ps):load_state_dict(sgd:state_dict())
end, "AdamW:load_state_dict: unknown key 'state.", ".momentum_buffer'", "another optimizer")
err("AdamW:load_state_dict with a misspelt state name", function()
  return al.optim.AdamW(params()):load_state_dict({ ["state.1.exp_avg"] = al.ones { 2, 2 },
    ["state.1.exp_avg_sqr"] = al.ones { 2, 2 } })
end, "AdamW:load_state_dict: unknown key 'state.1.exp_avg_sqr'")
err("AdamW:load_state_dict with half a parameter's state", function()
  return al.optim.AdamW(params()):load_state_dict({ ["state.1.exp_avg"] = al.ones { 2, 2 } })
end, "AdamW:load_state_dict: state.1.exp_avg_sq is missing, though state.1.exp_avg is there")
err("AdamW:load_state_dict with a per-parameter step that is a float", function()
  return al.optim.AdamW(params()):load_state_dict({ ["state.1.exp_avg"] = al.ones { 2, 2 },
    ["state.1.exp_avg_sq"] = al.ones { 2, 2 }, ["state.1.step"] = al.ones { 1 } })
end, "state.1.step must be a one-element int64 tensor >= 0")
err("SGD:load_state_dict with an int64 momentum buffer", function()
  return al.optim.SGD(params()):load_state_dict({ ["state.1.momentum_buffer"] = al.ones({ 2, 2 }, { dtype = "int64" }) })
end, "state.1.momentum_buffer must be float32")
err("AdamW:load_state_dict with a negative step shows it", function()
  return al.optim.AdamW(params()):load_state_dict({ step = al.tensor(-3, { dtype = "int64" }) })
end, "AdamW:load_state_dict: step must be a one-element int64 tensor >= 0, got int64 -3")
-- tonumber reads ' 0.5', '0.5 ' and '0x10', and the name as typed labels a run's records
for _, name in ipairs({ "topk: 0.5", "topk:0.5 ", "entmax:0x10", "topk:.", "topk:1e" }) do
  err(("normalizer name %q"):format(name), function() return al.nn.Normalizer(name) end,
    ("normalizer '%s'"):format(name), "must be a plain decimal number")
end
cases[#cases + 1] = { name = "normalizer parameters written as decimals are accepted", fn = function()
  for name, v in pairs({ ["topk:.5"] = 0.5, ["topk:5e-1"] = 0.5, ["topk:0.25"] = 0.25, ["entmax:1.25"] = 1.25,
                         ["entmax:2"] = 2 }) do
    local spec = al.nn.Normalizer.parse(name)
    T.eq(spec.ratio or spec.alpha, v, 0, name)
  end
end }
err("clip_grad_norm(params, 1, 0)", function() return al.optim.clip_grad_norm(params(), 1, 0) end,
  "clip_grad_norm: norm_type must be a number > 0 or math.huge", "got 0")
err("clip_grad_norm(params, 1, 'inf')", function() return al.optim.clip_grad_norm(params(), 1, "inf") end,
  "norm_type must be a number > 0", "got 'inf'")
err("clip_grad_norm with a fourth argument", function() return al.optim.clip_grad_norm(params(), 1, 2, true) end,
  "clip_grad_norm: takes (params, max_norm [, norm_type]), got 1 more argument")
err("Module:load_state_dict with a misspelt option", function()
  local m = al.nn.Linear(2, 2)
  return m:load_state_dict(m:state_dict(), { strcit = false })
end, "load_state_dict: unknown option 'strcit' (known: strict)")
err("Module:load_state_dict with strict = 'no'", function()
  local m = al.nn.Linear(2, 2)
  return m:load_state_dict(m:state_dict(), { strict = "no" })
end, "load_state_dict: strict must be true or false, got 'no'")
err("MultiHeadAttention called with the mask where the options go", function()
  return al.nn.MultiHeadAttention { dim = 8, heads = 2 }(al.randn { 2, 5, 8 }, al.ones { 2, 5 })
end, "MultiHeadAttention: forward options must be a table {key_mask =, keep =}, got a float32 tensor (2,5)",
  "{key_mask = m}")
err("ViT called with the mask where the options go", function()
  local m = al.nn.ViT { image_size = 8, patch_size = 4, channels = 1, num_classes = 3, dim = 8, depth = 1, heads = 2 }
  return m(al.randn { 2, 1, 8, 8 }, al.ones { 2, 5 })
end, "ViT: forward options must be a table", "got a float32 tensor (2,5)")
err("BiLSTM called with a number where the options go", function()
  return al.nn.BiLSTM { dim = 8, heads = 2 }(al.randn { 2, 5, 8 }, 5)
end, "BiLSTM: forward options must be a table {key_mask =, keep =}, got 5")
err("Normalizer with a mask that is not a tensor", function()
  return al.nn.Normalizer { name = "softmax" }(al.randn { 1, 1, 3, 3 }, 5)
end, "Normalizer: forward(scores [, mask]) expects mask, a tensor", "got 5")
cases[#cases + 1] = { name = "optimizer state: a refused state dict leaves the optimizer as it was; a good one loads", fn = function()
  local m = al.nn.Linear(2, 2, { generator = al.Generator(3) })
  local opt = al.optim.AdamW(m:parameters())
  al.sum(m(al.ones { 3, 2 })):backward()
  opt:step()
  local sd = opt:state_dict()
  local fresh = al.optim.AdamW(m:parameters())
  T.raises(function() fresh:load_state_dict({ step = sd.step, ["state.2.exp_avg"] = al.ones { 7 } }) end,
    "state.2.exp_avg is (7), parameter 2 is (2)")
  T.eq(fresh.steps, 0, 0, "the step count was not set by the refused load")
  fresh:load_state_dict(sd)
  T.eq(fresh.steps, 1)
  T.eq(fresh.state[m.weight].exp_avg:totable(), opt.state[m.weight].exp_avg:totable())
end }

-- ---- data: the dataset is checked when train_val_split / Loader is called ---------------------
err("train_val_split of a number", function() return al.data.train_val_split(5, { val = 1 }) end,
  "train_val_split", "ds must be a dataset", "got number")
err("train_val_split of a table without n", function() return al.data.train_val_split({}, { val = 1 }) end,
  "train_val_split", "n is nil")
err("train_val_split with a fractional val", function() return al.data.train_val_split(fake_dataset(10), { val = 2.5 }) end,
  "train_val_split", "val must be an integer between 1 and n-1 = 9", "got 2.5")
err("train_val_split with a fraction > 1", function() return al.data.train_val_split(fake_dataset(10), { fraction = 2 }) end,
  "train_val_split", "fraction must be a number in (0, 1)", "got 2")
err("train_val_split with a NaN fraction", function() return al.data.train_val_split(fake_dataset(10), { fraction = 0 / 0 }) end,
  "fraction", "got nan")
-- a misspelt key was ignored (the split fell back to fraction 0.1); a fractional seed failed in al.Generator
err("train_val_split with a misspelt key", function() return al.data.train_val_split(fake_dataset(10), { vall = 2 }) end,
  "train_val_split", "unknown option 'vall'", "known: fraction, seed, val")
err("train_val_split with a fractional seed", function() return al.data.train_val_split(fake_dataset(10), { val = 2, seed = 1.5 }) end,
  "train_val_split", "seed must be an integer", "got 1.5")
err("Loader of a number", function() return al.data.Loader(5, { batch_size = 2 }) end,
  "Loader", "ds must be a dataset", "got number")
err("Loader of a tensor", function() return al.data.Loader(al.ones { 4 }) end, "Loader", "got a tensor")
err("Loader with options that are not a table", function() return al.data.Loader(fake_dataset(4), 2) end,
  "Loader", "options must be a table", "got number")
err("Loader with a limit of 0", function() return al.data.Loader(fake_dataset(4), { limit = 0 }) end,
  "Loader", "limit must be a positive integer", "got 0")
cases[#cases + 1] = { name = "data: a dataset-like table still works with train_val_split and Loader", fn = function()
  local tr, val = al.data.train_val_split(fake_dataset(10), { val = 3, seed = 1 })
  T.eq({ tr.n, val.n }, { 7, 3 })
  local tr2, val2 = al.data.train_val_split(fake_dataset(10))   -- opts may be left out: 10% for val
  T.eq({ tr2.n, val2.n }, { 9, 1 })
  local seen = 0
  for x, _, b in al.data.Loader(fake_dataset(5), { batch_size = 2 }):iter() do seen = seen + x:shape()[1]; T.truthy(b <= 3) end
  T.eq(seen, 5)
end }

-- ---- EncoderBlock:set_mixer ---------------------------------------------------------------------
local function block() return al.nn.EncoderBlock { dim = 8, heads = 2 } end
err("set_mixer of a number", function() return block():set_mixer(5) end,
  "EncoderBlock:set_mixer", "must be a module", "got number")
err("set_mixer of a plain table", function() return block():set_mixer({ forward = function(_, x) return x end }) end,
  "EncoderBlock:set_mixer", "got a plain table")
err("set_mixer of a module class", function() return block():set_mixer(al.nn.BiLSTM) end,
  "EncoderBlock:set_mixer", "a module class (call it to make a module)")
err("set_mixer of a module without forward", function() return block():set_mixer(al.nn.Module()) end,
  "EncoderBlock:set_mixer", "has no forward")
err("set_mixer of a BiLSTM of another width", function() return block():set_mixer(al.nn.BiLSTM { dim = 16, heads = 2 }) end,
  "EncoderBlock:set_mixer: the mixer BiLSTM has dim 16, but the block's width is 8")
err("set_mixer of an attention of another width", function()
  return block():set_mixer(al.nn.MultiHeadAttention { dim = 4, heads = 2 })
end, "EncoderBlock:set_mixer: the mixer MultiHeadAttention has dim 4, but the block's width is 8")
err("EncoderBlock with a BiMamba mixer of another width", function()
  return al.nn.EncoderBlock { dim = 8, heads = 2, mixer = al.nn.BiMamba { dim = 16, heads = 2 } }
end, "EncoderBlock: the mixer BiMamba has dim 16, but the block's width is 8")
cases[#cases + 1] = { name = "set_mixer: a refused mixer leaves the block usable; a module is accepted", fn = function()
  local b = block()
  T.raises(function() b:set_mixer(5) end, "the mixer must be a module")
  T.raises(function() b:set_mixer(al.nn.BiLSTM { dim = 16, heads = 2 }) end, "has dim 16")
  T.truthy(tostring(b):find("MultiHeadAttention", 1, true), "the block keeps its attention")
  T.eq(b(al.ones { 1, 3, 8 }):shape(), { 1, 3, 8 })
  b:set_mixer(al.nn.BiLSTM { dim = 8, heads = 2 })
  T.truthy(tostring(b):find("BiLSTM", 1, true))
  T.eq(b(al.ones { 1, 3, 8 }):shape(), { 1, 3, 8 })
end }

-- ---- BiMamba / BiLSTM options: refused when the module is built, not at forward in C -----------
err("BiMamba d_state = 0", function() return al.nn.BiMamba { dim = 8, d_state = 0 } end,
  "BiMamba", "d_state must be an integer in 1..256", "got 0")
err("BiMamba d_state above the C limit", function() return al.nn.BiMamba { dim = 8, d_state = 257 } end,
  "BiMamba", "d_state", "got 257")
err("BiMamba d_conv = 0", function() return al.nn.BiMamba { dim = 8, d_conv = 0 } end,
  "BiMamba", "d_conv must be an integer >= 1", "got 0")
err("BiMamba dt_rank = 0", function() return al.nn.BiMamba { dim = 8, dt_rank = 0 } end, "BiMamba", "dt_rank", "got 0")
err("BiMamba expand = 1.5", function() return al.nn.BiMamba { dim = 8, expand = 1.5 } end, "BiMamba", "expand", "got 1.5")
err("BiMamba heads = 0", function() return al.nn.BiMamba { dim = 8, heads = 0 } end, "BiMamba", "heads", "got 0")
err("BiMamba dim = 2.5", function() return al.nn.BiMamba { dim = 2.5 } end, "BiMamba", "dim must be an integer", "got 2.5")
err("BiMamba dt_min = 0", function() return al.nn.BiMamba { dim = 8, dt_min = 0 } end,
  "BiMamba", "0 < dt_min <= dt_max", "got 0 and 0.1")
err("BiMamba NaN dt_max", function() return al.nn.BiMamba { dim = 8, dt_max = 0 / 0 } end, "BiMamba", "and nan")
err("BiMamba with a misspelt option", function() return al.nn.BiMamba { dim = 8, dstate = 4 } end,
  "BiMamba: unknown option 'dstate'", "d_state")
err("BiMamba with no options", function() return al.nn.BiMamba() end, "BiMamba: dim is required")
err("BiLSTM heads = 1.5", function() return al.nn.BiLSTM { dim = 8, heads = 1.5 } end, "BiLSTM", "heads", "got 1.5")
err("BiLSTM with a Mamba option", function() return al.nn.BiLSTM { dim = 8, d_state = 4 } end,
  "BiLSTM: unknown option 'd_state'")
err("BiLSTM with options that are not a table", function() return al.nn.BiLSTM(8) end,
  "BiLSTM: options must be a table", "got number")
-- the forward's options are attention's: a misspelt key would run the mixer unmasked
local function mixer_x() return al.randn({ 2, 3, 8 }, { generator = al.Generator(2) }) end
err("BiMamba forward with a misspelt option", function()
  return al.nn.BiMamba { dim = 8 }:forward(mixer_x(), { kep = al.ones { 2, 3 } })
end, "BiMamba: forward: unknown option 'kep'", "keep")
err("BiLSTM forward with a misspelt option", function()
  return al.nn.BiLSTM { dim = 8 }:forward(mixer_x(), { keymask = al.ones { 2, 3 } })
end, "BiLSTM: forward: unknown option 'keymask'", "key_mask")
err("BiLSTM forward with a keep that is not a tensor", function()
  return al.nn.BiLSTM { dim = 8 }:forward(mixer_x(), { keep = { 1, 1, 0 } })
end, "BiLSTM: forward option keep must be a tensor (B,N)")
err("BiMamba forward of a number", function() return al.nn.BiMamba { dim = 8 }:forward(3) end,
  "BiMamba: forward", "a float32 tensor (B,N,8)", "got 3")

-- ---- optimizers and the schedule ------------------------------------------------------------------
err("AdamW betas out of [0, 1)", function() return al.optim.AdamW(params(), { betas = { 2, 3 } }) end,
  "AdamW: betas must be two numbers in [0, 1), got {2, 3}")
err("AdamW betas not a pair", function() return al.optim.AdamW(params(), { betas = 0.9 }) end, "AdamW: betas", "got 0.9")
err("AdamW lr = 0", function() return al.optim.AdamW(params(), { lr = 0 }) end, "AdamW: lr must be a number > 0 (finite)", "got 0")
err("AdamW lr NaN", function() return al.optim.AdamW(params(), { lr = 0 / 0 }) end, "AdamW: lr", "got nan")
err("AdamW lr inf", function() return al.optim.AdamW(params(), { lr = 1 / 0 }) end, "AdamW: lr", "got inf")
err("AdamW eps = 0", function() return al.optim.AdamW(params(), { eps = 0 }) end, "AdamW: eps must be a number > 0 (finite)")
err("AdamW weight_decay < 0", function() return al.optim.AdamW(params(), { weight_decay = -0.1 }) end,
  "AdamW: weight_decay must be a number >= 0 (finite)", "got -0.1")
err("AdamW options that are not a table", function() return al.optim.AdamW(params(), 0.1) end,
  "AdamW: options must be a table", "got number")
err("AdamW a group's bad option", function()
  return al.optim.AdamW({ { params = params() }, { params = params(), weight_decay = -1 } })
end, "AdamW group 2: weight_decay", "got -1")
err("SGD lr < 0", function() return al.optim.SGD(params(), { lr = -0.1 }) end, "SGD: lr must be a number > 0 (finite)")
err("SGD weight_decay < 0", function() return al.optim.SGD(params(), { weight_decay = -1 }) end, "SGD: weight_decay", "got -1")
err("SGD dampening > 1", function() return al.optim.SGD(params(), { dampening = 2 }) end, "SGD: dampening must be a number in [0, 1]")
err("SGD momentum NaN", function() return al.optim.SGD(params(), { momentum = 0 / 0 }) end, "SGD: momentum", "got nan")
err("SGD nesterov without momentum", function() return al.optim.SGD(params(), { nesterov = true }) end,
  "SGD: nesterov needs a momentum > 0 and dampening 0")
err("CosineWarmup of a number", function() return al.optim.CosineWarmup(5, { total = 10 }) end,
  "CosineWarmup: opt must be an optimizer", "got number")
err("CosineWarmup without options", function() return al.optim.CosineWarmup(al.optim.AdamW(params())) end,
  "CosineWarmup", "total = steps", "got nil")
err("CosineWarmup total NaN", function() return al.optim.CosineWarmup(al.optim.AdamW(params()), { total = 0 / 0 }) end,
  "CosineWarmup: total must be a whole number of steps >= 1", "got nan")
err("CosineWarmup total a string", function() return al.optim.CosineWarmup(al.optim.AdamW(params()), { total = "10" }) end,
  "CosineWarmup: total", "got '10'")   -- the string itself, quoted
err("CosineWarmup warmup < 0", function()
  return al.optim.CosineWarmup(al.optim.AdamW(params()), { total = 10, warmup = -1 })
end, "CosineWarmup: warmup must be a whole number of steps >= 0", "got -1")
err("CosineWarmup min_lr < 0", function()
  return al.optim.CosineWarmup(al.optim.AdamW(params()), { total = 10, min_lr = -1e-3 })
end, "CosineWarmup: min_lr must be a number >= 0 (finite)")
err("clip_grad_norm max_norm < 0", function() return al.optim.clip_grad_norm(params(), -1) end,
  "clip_grad_norm: max_norm must be a number > 0", "got -1")
err("clip_grad_norm max_norm NaN", function() return al.optim.clip_grad_norm(params(), 0 / 0) end,
  "clip_grad_norm: max_norm", "got nan")
err("clip_grad_norm of groups", function() return al.optim.clip_grad_norm({ { params = params() } }, 1) end,
  "clip_grad_norm: entry 1 of params is a group")
err("clip_grad_norm of a number", function() return al.optim.clip_grad_norm(5, 1) end,
  "clip_grad_norm: params must be a list of tensors", "got number")
cases[#cases + 1] = { name = "optim: good options are accepted and the classes are unchanged", fn = function()
  local P = params()
  local opt = al.optim.AdamW(P, { lr = 1e-3, betas = { 0.9, 0.95 }, eps = 1e-8, weight_decay = 0 })
  T.truthy(getmetatable(opt) == al.optim.AdamW and al.optim.AdamW == require("attnlab.run.optim").AdamW)
  al.optim.SGD(P, { lr = 0.1, momentum = 0.9, nesterov = true, weight_decay = 1e-4 })
  local sched = al.optim.CosineWarmup(opt, { total = 10.0, warmup = 2, min_lr = 0 })
  T.eq(sched:step(), opt.lr)
  for _, p in ipairs(P) do p.grad = al.full(p:shape(), 3) end
  local norm = al.optim.clip_grad_norm(P, 1)
  T.eq(norm, math.sqrt(6 * 9), 1e-5)                          -- 4 + 2 elements of 3
  T.eq(al.optim.clip_grad_norm(P), al.optim.clip_grad_norm(P)) -- nil: measure only
end }

-- each optimizer option at the ends of its range: the end that is allowed is taken, the other
-- end refused by name (a beta of 1 never updates a moment; a max_norm of 0 zeroes every gradient)
cases[#cases + 1] = { name = "optim: options at the ends of their ranges; a group inherits momentum and dampening", fn = function()
  local P = params()
  -- allowed: momentum and dampening 1, betas 0, a frozen group (lr_scale 0)
  al.optim.SGD(P, { lr = 0.1, momentum = 1, dampening = 1 })
  al.optim.AdamW(P, { lr = 1e-3, betas = { 0, 0 } })
  al.optim.AdamW({ { params = P, lr_scale = 0 } }, { lr = 1e-3 })
  -- a group asking for Nesterov takes momentum 0.9 from the options: allowed; dampening 0.5 too: refused
  al.optim.SGD({ { params = P, nesterov = true } }, { lr = 0.1, momentum = 0.9 })
  T.raises(function() al.optim.SGD({ { params = P, nesterov = true } }, { lr = 0.1, momentum = 0.9, dampening = 0.5 }) end,
    "SGD group 1: nesterov needs a momentum > 0 and dampening 0, got momentum 0.9, dampening 0.5")
  T.raises(function() al.optim.SGD(P, { lr = 0.1, momentum = 0.9, dampening = 0.1, nesterov = true }) end,
    "SGD: nesterov needs a momentum > 0 and dampening 0, got momentum 0.9, dampening 0.1")
  T.raises(function() al.optim.SGD(P, { lr = 0.1, momentum = 1.5 }) end, "SGD: momentum must be a number in [0, 1], got 1.5")
  T.raises(function() al.optim.AdamW(P, { betas = { 0.9, 1 } }) end, "AdamW: betas must be two numbers in [0, 1), got {0.9, 1}")
  T.raises(function() al.optim.AdamW(P, { betas = { 0.9, 0.999, 0.5 } }) end, "AdamW: betas must be two numbers in [0, 1)")
  T.raises(function() al.optim.AdamW(P, { eps = 0 }) end, "AdamW: eps must be a number > 0 (finite), got 0")
  T.raises(function() al.optim.AdamW(P):set_lr(-0.5) end, "AdamW:set_lr: lr must be a finite number >= 0, got -0.5")
  T.raises(function() al.optim.CosineWarmup(al.optim.AdamW(P), { total = 0 }) end,
    "CosineWarmup: total must be a whole number of steps >= 1, got 0")
  T.raises(function() al.optim.CosineWarmup(al.optim.AdamW(P, { lr = 1e-3 }), { total = 10, min_lr = 1.5e-3 }) end,
    "CosineWarmup: min_lr 0.0015 is above the base lr 0.001")
  local opt = al.optim.AdamW(P, { lr = 1e-3 })
  opt.param_groups[1].lr = math.huge
  T.raises(function() al.optim.CosineWarmup(opt, { total = 10 }) end, "CosineWarmup: group 1's lr must be a finite number >= 0, got inf")
  for _, p in ipairs(P) do p.grad = al.full(p:shape(), 3) end
  T.raises(function() al.optim.clip_grad_norm(P, 0) end, "clip_grad_norm: max_norm must be a number > 0 (or nil: no clipping), got 0")
  T.raises(function() al.optim.clip_grad_norm(P, 1, 0) end, "clip_grad_norm: norm_type must be a number > 0 or math.huge")
end }
cases[#cases + 1] = { name = "optim state dicts: a negative step is refused; AdamW's per-parameter step may be absent", fn = function()
  local P = params()
  T.raises(function() al.optim.AdamW(P):load_state_dict({ step = al.tensor({ -1 }, { dtype = "int64" }) }) end,
    "AdamW:load_state_dict: step must be a one-element int64 tensor >= 0, got int64 -1")
  -- a state dict written before AdamW kept a step per parameter: moments only, and the optimizer's step
  local opt = al.optim.AdamW(P)
  opt:load_state_dict({ step = al.tensor({ 3 }, { dtype = "int64" }), ["state.1.exp_avg"] = al.zeros({ 2, 2 }),
    ["state.1.exp_avg_sq"] = al.zeros({ 2, 2 }) })
  T.raises(function() al.optim.SGD(P):load_state_dict({ ["state.1.exp_avg"] = al.zeros({ 2, 2 }) }) end,
    "SGD:load_state_dict: unknown key 'state.1.exp_avg'")
end }

-- ---- option tables: a misspelt or unknown key is refused, not ignored (it would run another experiment) --
-- nn layers
err("Linear with a misspelt option (bais)", function() return al.nn.Linear(2, 3, { bais = false }) end,
  "Linear: unknown option 'bais'", "known: bias, generator")
err("Linear with options that are a string", function() return al.nn.Linear(2, 3, "x") end,
  "Linear: options must be a table", "got string")
err("Linear with bias = 0", function() return al.nn.Linear(2, 3, { bias = 0 }) end, "Linear: bias must be true or false", "got 0")
err("Linear with a size of 0", function() return al.nn.Linear(0, 3) end,
  "Linear(in, out): sizes must be positive integers", "in = 0")
err("LayerNorm with a misspelt option (esp)", function() return al.nn.LayerNorm(4, { esp = 1 }) end,
  "LayerNorm: unknown option 'esp'", "eps")
err("LayerNorm of size 0", function() return al.nn.LayerNorm(0) end, "LayerNorm: dim must be a positive integer", "got 0")
err("LayerNorm with eps = 0", function() return al.nn.LayerNorm(4, { eps = 0 }) end, "LayerNorm: eps must be a finite number > 0", "got 0")
err("Embedding with an unknown option", function() return al.nn.Embedding(5, 4, { gen = al.Generator(1) }) end,
  "Embedding: unknown option 'gen'", "generator")
err("Embedding with 0 rows", function() return al.nn.Embedding(0, 4) end, "Embedding: num_embeddings must be a positive integer", "got 0")
err("Embedding with dim 2.5", function() return al.nn.Embedding(5, 2.5) end, "Embedding: dim must be a positive integer", "got 2.5")
err("MLP with a misspelt option (hiden)", function() return al.nn.MLP { dim = 4, hiden = 0 } end, "MLP: unknown option 'hiden'")
err("MLP with hidden = 0", function() return al.nn.MLP { dim = 4, hidden = 0 } end, "MLP: hidden must be a positive integer", "got 0")
err("MLP with no options", function() return al.nn.MLP() end, "MLP: in_features (or dim) is required")
err("MLP with drop = 1", function() return al.nn.MLP { dim = 4, drop = 1 } end, "MLP: drop must be a number in [0, 1)", "got 1")
err("MLP with an unknown activation", function() return al.nn.MLP { dim = 4, act = "swish" } end,
  "MLP: unknown activation 'swish'", "gelu")

-- attention
err("MultiHeadAttention iters = -5", function()
  return al.nn.MultiHeadAttention { dim = 8, heads = 2, iters = -5, normalizer = "entmax:1.7" }
end, "MultiHeadAttention: iters must be an integer in 1..", "got -5")
err("MultiHeadAttention iters = 'x' (refused when built, not at forward)", function()
  return al.nn.MultiHeadAttention { dim = 8, heads = 2, iters = "x", normalizer = "entmax:1.7" }
end, "MultiHeadAttention: iters", "got 'x'")
err("Normalizer iters = 2.5", function() return al.nn.Normalizer { name = "entmax:1.7", iters = 2.5 } end,
  "Normalizer: iters must be an integer", "got 2.5")
err("Normalizer heads = 0", function() return al.nn.Normalizer { name = "hae", heads = 0 } end,
  "Normalizer: heads must be a positive integer", "got 0")
err("MultiHeadAttention heads = 0", function() return al.nn.MultiHeadAttention { dim = 8, heads = 0 } end,
  "MultiHeadAttention: dim must be a positive multiple of heads", "heads = 0")
err("MultiHeadAttention forward with a misspelt option (kep)", function()
  return al.nn.MultiHeadAttention { dim = 8, heads = 2 }(al.ones { 1, 3, 8 }, { kep = al.ones { 1, 3 } })
end, "MultiHeadAttention: forward: unknown option 'kep'", "keep, key_mask")
err("MultiHeadAttention forward with keep that is not a tensor", function()
  return al.nn.MultiHeadAttention { dim = 8, heads = 2 }(al.ones { 1, 3, 8 }, { keep = 1 })
end, "MultiHeadAttention: forward option keep must be a tensor", "got 1")
err("MultiHeadAttention forward of nil", function() return al.nn.MultiHeadAttention { dim = 8, heads = 2 }(nil) end,
  "MultiHeadAttention: forward(x", "expects x, a float32 tensor (B,N,8)", "got nil")
err("EncoderBlock dim = 0", function() return al.nn.EncoderBlock { dim = 0, heads = 2 } end,
  "EncoderBlock: dim must be a positive integer", "got 0")
err("EncoderBlock mlp_ratio = 'x'", function() return al.nn.EncoderBlock { dim = 8, heads = 2, mlp_ratio = "x" } end,
  "EncoderBlock: mlp_ratio must be a finite number > 0", "got 'x'")

-- ViT: every size checked before use, each error naming the option and the value
local function vit_opts(over)
  local o = { image_size = 8, patch_size = 4, num_classes = 3, dim = 8, heads = 2, depth = 1 }
  for k, v in pairs(over) do o[k] = v end
  return o
end
for _, c in ipairs({
  { "heads", 0, "ViT: heads must be a positive integer", "got 0" },
  { "patch_size", 0, "ViT: patch_size must be a positive integer", "got 0" },
  { "patch_size", -4, "ViT: patch_size must be a positive integer", "got -4" },
  { "depth", 0, "ViT: depth must be a positive integer", "got 0" },
  { "depth", -1, "ViT: depth must be a positive integer", "got -1" },
  { "depth", 1.5, "ViT: depth must be a positive integer", "got 1.5" },
  { "depth", "a", "ViT: depth must be a positive integer", "got 'a'" },
  { "image_size", "a", "ViT: image_size must be a positive integer", "got 'a'" },
  { "image_size", 8.5, "ViT: image_size must be a positive integer", "got 8.5" },
  { "mlp_ratio", "x", "ViT: mlp_ratio must be a finite number > 0", "got 'x'" },
  { "mlp_ratio", 0 / 0, "ViT: mlp_ratio must be a finite number > 0", "got nan" },
  { "mlp_ratio", 0.01, "ViT: mlp_ratio 0.01 gives an MLP width of", "= 0" },
  { "channels", 0, "ViT: channels must be a positive integer", "got 0" },
  { "dim", 0, "ViT: dim must be a positive integer", "got 0" },
  { "num_classes", 0, "ViT: num_classes must be a positive integer", "got 0" },
  { "iters", 0, "ViT: iters must be an integer in 1..", "got 0" },
  { "qkv_bias", "yes", "ViT: qkv_bias must be true or false", "got 'yes'" },
  { "seed", 1.5, "ViT: seed must be an integer", "got 1.5" },
}) do
  err(("ViT %s = %s"):format(c[1], tostring(c[2])), function() return al.nn.ViT(vit_opts({ [c[1]] = c[2] })) end, c[3], c[4])
end
err("ViT text model with vocab_size = 0", function() return al.nn.ViT { vocab_size = 0, seq_len = 4, num_classes = 2, dim = 8, heads = 2 } end,
  "ViT: vocab_size must be a positive integer", "got 0")
err("ViT text model with seq_len = 0", function() return al.nn.ViT { vocab_size = 5, seq_len = 0, num_classes = 2, dim = 8, heads = 2 } end,
  "ViT: seq_len must be a positive integer", "got 0")
err("ViT with both image and text options", function()
  return al.nn.ViT { vocab_size = 5, seq_len = 4, image_size = 8, num_classes = 2, dim = 8, heads = 2 }
end, "ViT: image_size is an image option", "text model")
err("ViT forward of nil", function() return al.nn.ViT(vit_opts({}))(nil) end,
  "ViT: forward(x", "images, a float32 tensor (B,3,8,8)", "got nil")
err("ViT (text) forward of a number", function()
  return al.nn.ViT { vocab_size = 5, seq_len = 4, num_classes = 2, dim = 8, heads = 2 }(3)
end, "ViT: forward(x", "token ids, an int64 tensor (B,4)", "got 3")
-- errors raised inside the library at a level that pointed into it ("nn/vit.lua:108:",
-- "init.lua:94:", "nn/init.lua:496:"), or without the option's name; and seed beside a
-- generator was ignored
-- fn makes the call as a statement (not a tail call), so the caller's line is fn's own line
local function here_or_nowhere(name, fn, want)
  cases[#cases + 1] = { name = "error position: " .. name, fn = function()
    local msg = T.raises(fn, want)
    local src = debug.getinfo(fn, "S").short_src
    T.truthy(not msg:find("lua/attnlab/", 1, true), "no position inside the library: " .. msg)
    T.truthy(msg:sub(1, #want) == want or msg:sub(1, #src + 1) == src .. ":",
      "the message starts at the caller's line or with no position: " .. msg)
  end }
end
here_or_nowhere("ViT init = 'foo'", function() local _ = al.nn.ViT(vit_opts({ init = "foo" })) end,
  "ViT: unknown init 'foo'; known: timm, torch")
here_or_nowhere("ViT generator = 5", function() local _ = al.nn.ViT(vit_opts({ generator = 5 })) end,
  "ViT: generator must be an al.Generator, got 5")
here_or_nowhere("ViT with generator and seed", function()
  local _ = al.nn.ViT(vit_opts({ generator = al.Generator(1), seed = 2 }))
end, "ViT: give seed or generator, not both (seed 2 would be ignored")
here_or_nowhere("full_like(int64, 1.5)", function() local _ = al.full_like(al.ones({ 2 }, { dtype = "int64" }), 1.5) end,
  "attnlab.full_like: an int64 tensor holds integers, got 1.5")
here_or_nowhere("zeros_like with a bad dtype", function() local _ = al.zeros_like(al.ones { 2 }, { dtype = "int8" }) end,
  "attnlab.zeros_like: unknown dtype 'int8'")
here_or_nowhere("randn_like with dtype int64", function() local _ = al.randn_like(al.ones { 2 }, { dtype = "int64" }) end,
  "attnlab.randn_like: makes float32 tensors")
cases[#cases + 1] = { name = "ViT with a generator alone draws from it", fn = function()
  local a = al.nn.ViT(vit_opts({ generator = al.Generator(5) }))
  local b = al.nn.ViT(vit_opts({ seed = 5 }))
  T.eq(a.head.weight:totable(), b.head.weight:totable())
end }
err("ViT forward with a misspelt option", function() return al.nn.ViT(vit_opts({}))(al.ones { 1, 3, 8, 8 }, { kep = 1 }) end,
  "ViT: forward: unknown option 'kep'")
cases[#cases + 1] = { name = "nn: good options still build and run (ViT, MLP, LayerNorm, forward masks)", fn = function()
  local m = al.nn.ViT(vit_opts({ depth = 2, mlp_ratio = 2, channels = 3, qkv_bias = false, iters = 10, seed = 2 }))
  T.eq(m.depth, 2)
  T.eq(m(al.ones { 2, 3, 8, 8 }, { keep = al.ones { 2, 5 }, key_mask = al.ones { 2, 5 } }):shape(), { 2, 3 })
  T.eq(al.nn.LayerNorm(4, { eps = 1e-6, affine = false }).eps, 1e-6)
  T.eq(al.nn.MLP { in_features = 4, hidden_features = 6, out_features = 2, act = "relu", drop = 0.1 }.fc2.out_features, 2)
  T.truthy(al.nn.Linear(2, 3, { bias = false }).bias == nil)
end }

-- checkpoint
err("checkpoint.vit_from_file with a misspelt option (nromalizer)", function()
  local sd = al.nn.ViT(vit_opts({})):state_dict()
  return require("attnlab.checkpoint").vit_from_file(sd, { heads = 2, nromalizer = "sparsemax" })
end, "checkpoint.vit_from_file: unknown option 'nromalizer'", "normalizer")
err("checkpoint.load_vit with a misspelt option", function()
  local m = al.nn.ViT(vit_opts({}))
  return require("attnlab.checkpoint").load_vit(m, m:state_dict(), { strcit = false })
end, "checkpoint.load_vit: unknown option 'strcit'", "strict")

-- data: checked before any file is looked for
err("fashion_mnist with a misspelt option (splt)", function() return al.data.fashion_mnist { splt = "test" } end,
  "attnlab.data.fashion_mnist: unknown option 'splt'", "known: normalize, split")
err("fashion_mnist with a split that is not train or test", function() return al.data.fashion_mnist("tst") end,
  "attnlab.data.fashion_mnist: split must be 'train' or 'test'", "got 'tst'")
err("fashion_mnist with options that are a number", function() return al.data.fashion_mnist(5) end,
  "attnlab.data.fashion_mnist: options must be a table", "got number")
err("fashion_mnist with normalize = 'no'", function() return al.data.fashion_mnist { normalize = "no" } end,
  "fashion_mnist: normalize must be true or false", "got 'no'")
err("kmnist with a misspelt option (protocl)", function() return al.data.kmnist { protocl = "resplit" } end,
  "attnlab.data.kmnist: unknown option 'protocl'", "protocol")
err("kmnist with split = 'val'", function() return al.data.kmnist { split = "val" } end,
  "kmnist: split must be 'train' or 'test'", "got 'val'")
err("cifar10 with a misspelt option (exact_tset)", function() return al.data.cifar10 { split = "test", exact_tset = true } end,
  "attnlab.data.cifar10: unknown option 'exact_tset'", "exact_test")
err("cifar10 with exact_test = 1", function() return al.data.cifar10 { split = "test", exact_test = 1 } end,
  "cifar10: exact_test must be true or false", "got 1")
cases[#cases + 1] = { name = "data: a string is the split (fashion_mnist('test') loads the test split)", fn = function()
  local ds = T.need_data(al.data.fashion_mnist, "test", "Fashion-MNIST")
  T.eq({ ds.split, ds.n }, { "test", 10000 })
end }
err("Loader with a misspelt option (batchsize)", function() return al.data.Loader(fake_dataset(4), { batchsize = 2 }) end,
  "Loader: unknown option 'batchsize'", "batch_size")
err("Loader with shuffle = 'no'", function() return al.data.Loader(fake_dataset(4), { shuffle = "no" }) end,
  "Loader: shuffle must be true or false", "got 'no'")
err("Loader with drop_last = 1", function() return al.data.Loader(fake_dataset(4), { drop_last = 1 }) end,
  "Loader: drop_last must be true or false", "got 1")
err("Loader with seed = 'x'", function() return al.data.Loader(fake_dataset(4), { seed = "x" }) end,
  "Loader: seed must be an integer", "got 'x'")
err("Loader with batch_size = 0", function() return al.data.Loader(fake_dataset(4), { batch_size = 0 }) end,
  "Loader: batch_size must be a positive integer", "got 0")
-- a batch of 2^63 - 1 overflowed the batch count to 0: an epoch of no step, reported as a result
err("Loader with batch_size = 2^63 - 1", function() return al.data.Loader(fake_dataset(4), { batch_size = math.maxinteger }) end,
  "Loader: batch_size must be below 2^31", "got 9223372036854775807")
cases[#cases + 1] = { name = "Loader:num_batches does not overflow at a huge batch_size (one batch, with or without drop_last)", fn = function()
  local l = al.data.Loader(fake_dataset(5), { batch_size = 2 })
  T.eq(l:num_batches(), 3)
  l.batch_size = math.maxinteger   -- (past the constructor's check: the count itself must hold)
  T.eq(l:num_batches(), 1)
  l.drop_last = true
  T.eq(l:num_batches(), 0)
  l.batch_size = 2
  T.eq(l:num_batches(), 2)
end }

-- optimizers and the schedule
err("AdamW with a misspelt option (weigth_decay)", function()
  return al.optim.AdamW(params(), { lr = 1e-3, weigth_decay = 0.1 })
end, "AdamW: unknown option 'weigth_decay'", "weight_decay")
err("SGD with a misspelt option (momentun)", function() return al.optim.SGD(params(), { momentun = 0.9 }) end,
  "SGD: unknown option 'momentun'", "momentum")
err("AdamW with a misspelt group option (lrr)", function() return al.optim.AdamW({ { params = params(), lrr = 1 } }) end,
  "AdamW group 1: unknown option 'lrr'", "lr_scale", "params")
err("CosineWarmup with a misspelt option (warmpu)", function()
  return al.optim.CosineWarmup(al.optim.AdamW(params()), { total = 10, warmpu = 2 })
end, "CosineWarmup: unknown option 'warmpu'", "warmup")
err("Optimizer:set_lr(nan)", function() return al.optim.AdamW(params()):set_lr(0 / 0) end,
  "AdamW:set_lr: lr must be a finite number >= 0", "got nan")
err("Optimizer:set_lr(-5)", function() return al.optim.SGD(params()):set_lr(-5) end,
  "SGD:set_lr: lr must be a finite number >= 0", "got -5")
err("Optimizer:set_lr(inf)", function() return al.optim.AdamW(params()):set_lr(1 / 0) end, "AdamW:set_lr", "got inf")
err("CosineWarmup with min_lr above the optimizer's lr", function()
  return al.optim.CosineWarmup(al.optim.AdamW(params(), { lr = 1e-3 }), { total = 10, min_lr = 1 })
end, "CosineWarmup: min_lr 1 is above the base lr 0.001")
err("CosineWarmup with min_lr above base_lr", function()
  return al.optim.CosineWarmup(al.optim.AdamW(params()), { total = 10, min_lr = 0.5, base_lr = 0.1 })
end, "CosineWarmup: min_lr 0.5 is above the base lr 0.1")
cases[#cases + 1] = { name = "optim: a refused lr leaves the optimizer's lr; edge schedules are accepted", fn = function()
  local opt = al.optim.AdamW(params(), { lr = 1e-3 })
  T.raises(function() opt:set_lr(0 / 0) end, "AdamW:set_lr: lr must be a finite number >= 0, got nan")
  T.eq(opt.lr, 1e-3)
  for _, g in ipairs(opt.param_groups) do T.eq(g.lr, 1e-3) end
  opt:set_lr(0)                                                       -- a cosine to min_lr = 0 ends there
  T.eq(opt.lr, 0)
  local s = al.optim.CosineWarmup(al.optim.AdamW(params(), { lr = 1e-3 }), { total = 10, warmup = 10, min_lr = 1e-3 })
  T.eq(s:lr_at(9), 1e-3)
  -- a warmup longer than the run (a preset's warmup under --epochs 1) rises for the whole run
  local w = al.optim.CosineWarmup(al.optim.AdamW(params(), { lr = 1e-3 }), { total = 10, warmup = 20, min_lr = 0 })
  T.truthy(w:lr_at(0) < w:lr_at(9) and w:lr_at(9) < 1e-3, ("lr %g at step 0, %g at step 9"):format(w:lr_at(0), w:lr_at(9)))
  al.optim.AdamW({ { params = params(), lr_scale = 0.5, weight_decay = 0 } }, { lr = 1e-3 })
end }

-- statistics (plain Lua: no C module)
err("stats.ttest_rel with a misspelt option (alternate)", function()
  return al.stats.ttest_rel({ 1, 2, 3, 4 }, { 1, 2, 4, 3.5 }, { alternate = "less" })
end, "attnlab.stats.ttest_rel: unknown option 'alternate'", "alternative")
err("stats.wilcoxon with a misspelt option (zero_metod)", function()
  return al.stats.wilcoxon({ 1, 2, 3, 4 }, { 1, 2.5, 4, 3.5 }, { zero_metod = "pratt" })
end, "attnlab.stats.wilcoxon: unknown option 'zero_metod'", "zero_method")

-- ---- tensor, autograd and nn API at the REPL (the audit of al.*, t:*, al.nn, gradcheck, format) ---
-- errp: as err, and the message carries no position inside the library ("lua/attnlab/nn/init.lua:372:
-- attnlab.linear: ...", which a layer's forward or al.std got from the C op it called)
local function errp(name, fn, ...)
  cases[#cases + 1] = T.error_case(name, fn, { ... }, { "attempt to", "-nan", "lua/attnlab/", "to '?'" })
end
local function I(t) return al.tensor(t, { dtype = "int64" }) end

-- sizes and dims beyond int: cast to int they became dim 0 (a silent unsqueeze/stack at the front),
-- and an expand past int64 elements made a view whose numel wrapped
err("unsqueeze(2^40)", function() return al.ones { 2, 3 }:unsqueeze(1 << 40) end,
  "attnlab.unsqueeze: dim 1099511627776 out of range")
err("unsqueeze(mininteger)", function() return al.ones { 2, 3 }:unsqueeze(math.mininteger) end, "attnlab.unsqueeze: dim -9223372036854775808")
err("stack along dim 2^40", function() return al.stack({ al.ones { 2 }, al.ones { 2 } }, 1 << 40) end,
  "attnlab.stack: dim 1099511627776 out of range")
err("permute with a dim of 2^40 names it", function() return al.ones { 2, 3 }:permute { 1, 1 << 40 } end,
  "attnlab.permute: dim 1099511627776 out of range")
err("expand to more elements than int64 counts", function() return al.ones { 1, 3 }:expand { 1 << 62, 3 } end,
  "attnlab.expand: (4611686018427387904,3) has more elements than an int64 counts")
err("arange of 2^62 elements", function() return al.arange(1, 2 ^ 62) end, "attnlab.arange:", "elements is too many")
err("an int64 tensor of NaN says nan", function() return al.tensor({ 0 / 0 }, { dtype = "int64" }) end,
  "attnlab.tensor: int64 tensor needs integers, got NaN at position 1")

-- options and flags that were ignored or read as truthy: another computation ran, silently
err("al.tensor with a dtype string for options", function() return al.tensor({ 1 }, "int64") end,
  "attnlab.tensor: options must be a table", "got a string")
err("var with a misspelt option (unbaised)", function() return al.var(al.ones { 3 }, { unbaised = false }) end,
  "attnlab.var: unknown option 'unbaised'", "unbiased")
err("backward with a misspelt option (retain)", function()
  local x = al.randn({ 3 }, { requires_grad = true })
  al.sum(x * 2):backward({ retain = true })
end, "attnlab.backward: unknown option 'retain'", "retain_graph")
err("requires_grad = 'no'", function() local x = al.zeros { 3 }; x.requires_grad = "no" end,
  "attnlab.requires_grad_: expects true or false, got string")
err("set_grad_enabled()", function() return al.set_grad_enabled() end, "attnlab.set_grad_enabled: expects true or false")
err("normal_ with a string where the Generator goes", function() return al.zeros { 2 }:normal_(0, 1, "x") end,
  "expected an al.Generator", "got a string")
err("randperm with a seed where the Generator goes", function() return al.randperm(4, 42) end,
  "expected an al.Generator", "got a number")
err("dropout with p = NaN in eval mode", function() return al.dropout(al.ones { 4 }, 0 / 0, false) end,
  "attnlab.dropout: p must be in [0, 1), got nan")
-- an argument after the shape that is neither the options (or Generator) nor absent was ignored
local AFTER_SHAPE = "after the shape only an options table {dtype =, requires_grad =} may follow"
err("zeros({2,3}, 5)", function() return al.zeros({ 2, 3 }, 5) end, "attnlab.zeros: unexpected argument #2 (5): " .. AFTER_SHAPE)
err("ones(2, 3, {}, 'x')", function() return al.ones(2, 3, {}, "x") end, "attnlab.ones: unexpected argument #4 (the string 'x')")
err("full({2}, 1, {}, 5)", function() return al.full({ 2 }, 1, {}, 5) end, "attnlab.full: unexpected argument #4 (5)")
err("full({2}, 1, 5)", function() return al.full({ 2 }, 1, 5) end, "attnlab.full: unexpected argument #3 (5)")
err("randn({2,3}, 5)", function() return al.randn({ 2, 3 }, 5) end,
  "attnlab.randn: unexpected argument #2 (5): after the shape only an options table {generator =, requires_grad =} or a Generator")
err("rand({2}, Generator, 5)", function() return al.rand({ 2 }, al.Generator(1), 5) end, "attnlab.rand: unexpected argument #3 (5)")
err("randint(1, 3, {2}, 5)", function() return al.randint(1, 3, { 2 }, 5) end,
  "attnlab.randint: unexpected argument #4 (5): after the shape only a Generator or an options table {generator =} may follow")
err("randint(1, 3, 2, Generator, true)", function() return al.randint(1, 3, 2, al.Generator(1), true) end,
  "attnlab.randint: unexpected argument #5 (true)")
-- flags read as truthy: "no" kept the dim or dropped in training mode
err("dropout(x, 0.5, 'no')", function() return al.dropout(al.ones { 4 }, 0.5, "no") end,
  "attnlab.dropout: training (argument #3) must be true or false, got the string 'no'")
err("sum(x, 1, 'yes')", function() return al.sum(al.ones { 2, 3 }, 1, "yes") end,
  "attnlab.sum: keepdim (argument #3) must be true or false, got the string 'yes'")
err("mean(x, 1, 1)", function() return al.mean(al.ones { 2, 3 }, 1, 1) end, "attnlab.mean: keepdim (argument #3) must be true or false, got 1")
err("max(x, 1, 0)", function() return al.max(al.ones { 2, 3 }, 1, 0) end, "attnlab.max: keepdim (argument #3) must be true or false, got 0")
err("min(x, 1, 'no')", function() return al.min(al.ones { 2, 3 }, 1, "no") end, "attnlab.min: keepdim (argument #3)")
err("argmax(x, 1, 'no')", function() return al.argmax(al.ones { 2, 3 }, 1, "no") end, "attnlab.argmax: keepdim (argument #3)")
err("var(x, 1, 'no')", function() return al.var(al.ones { 2, 3 }, 1, "no") end, "attnlab.var: keepdim (argument #3)")
cases[#cases + 1] = { name = "the options after a shape, a Generator, and boolean flags (nil: the default) are taken", fn = function()
  T.eq(al.zeros({ 2 }, { dtype = "int64" }):dtype(), "int64")
  T.eq(al.ones({ 2 }, nil):shape(), { 2 })
  T.eq(al.randn(2, 3, { generator = al.Generator(1) }):totable(), al.randn({ 2, 3 }, al.Generator(1)):totable())
  T.eq(al.randint(1, 3, 2, 3, al.Generator(1)):shape(), { 2, 3 })
  local x = al.ones { 2, 3 }
  T.eq(al.sum(x, 1, true):shape(), { 1, 3 })
  T.eq(al.sum(x, 1, nil):shape(), { 3 })
  T.eq(al.max(x, 2, false):shape(), { 2 })
  T.eq(al.dropout(x, 0.5, false):totable(), x:totable())
  T.eq(al.dropout(x, 0, nil):totable(), x:totable())
end }
err("cross_entropy ignore_index = 1.5", function()
  return al.cross_entropy(al.ones { 2, 3 }, I { 1, 2 }, { ignore_index = 1.5 })
end, "attnlab.cross_entropy: ignore_index must be an integer", "got 1.5")
err("cross_entropy ignore_index = mininteger", function()
  return al.cross_entropy(al.ones { 2, 3 }, I { 1, 2 }, { ignore_index = math.mininteger })
end, "attnlab.cross_entropy: ignore_index -9223372036854775808 is out of range")
err("cross_entropy label_smoothing = 'x' names the option", function()
  return al.cross_entropy(al.ones { 2, 3 }, I { 1, 2 }, { label_smoothing = "x" })
end, "attnlab.cross_entropy: option label_smoothing", "got a string")
err("attention scale = 'x' names the option", function() return al.attention(al.ones { 1, 2, 6 }, { heads = 1, scale = "x" }) end,
  "attnlab.attention: scale must be a number, got a string")
err("cat of float32 and int64 names the dtype", function() return al.cat({ al.ones { 2 }, I { 1 } }) end,
  "attnlab.cat: tensor 2 is int64 (1), tensor 1 is float32 (2) (all must have one dtype)")
err("stack of float32 and int64 names the dtype", function() return al.stack({ al.ones { 1 }, I { 1 } }) end,
  "attnlab.stack: tensor 2 is int64 (1), tensor 1 is float32 (1) (all must match in shape and dtype)")

-- indexing: no "bad argument #3 to 'newindex'" for a call the user did not write
err("t[1.5]", function() return al.ones { 2 }[1.5] end, "attnlab.index: t[i] needs an integer i, got 1.5")
err("t[1] = 'x'", function() local t = al.ones { 2, 3 }; t[1] = "x" end,
  "attnlab.index: t[1] = v needs a number, a tensor or a nested table, got a string")
err("t.grad = 5", function() local t = al.zeros({ 3 }, { requires_grad = true }); t.grad = 5 end,
  "attnlab: t.grad must be a float32 tensor", "got a number")

-- in-place writes into an expand: the elements share memory, so copy_ kept the last row and
-- add_ added once per alias
err("copy_ into an expand", function()
  return al.zeros { 1, 3 }:expand { 2, 3 }:copy_(al.ones { 2, 3 })
end, "attnlab.copy_: cannot write into float32 (2,3), a view whose elements share memory (an expand)")
err("add_ into an expand", function() return al.zeros { 1, 3 }:expand { 2, 3 }:add_(1) end, "attnlab.add_: cannot write into")
err("uniform_ into an expand", function() return al.zeros { 1, 3 }:expand { 2, 3 }:uniform_() end, "attnlab.uniform_: cannot write into")
err("t[1] = v into an expand", function() local t = al.zeros { 1, 3 }:expand { 2, 3 }; t[1] = 5 end,
  "attnlab.index: cannot write into")
cases[#cases + 1] = { name = "tensor: a refused write into an expand leaves the base; fill_, clones and views still write", fn = function()
  local base = al.zeros { 1, 3 }
  local e = base:expand { 2, 3 }
  T.raises(function() e:add_(1) end, "share memory")
  T.eq(base:totable(), { { 0, 0, 0 } })
  e:fill_(2)                                        -- one value for every alias: allowed
  T.eq(base:totable(), { { 2, 2, 2 } })
  local c = e:clone():add_(1)
  T.eq(c:totable(), { { 3, 3, 3 }, { 3, 3, 3 } })
  local v = al.zeros { 2, 3 }
  v:narrow(2, 2, 1):copy_(al.ones { 2, 1 })       -- a strided view without aliases
  T.eq(v:totable(), { { 0, 1, 0 }, { 0, 1, 0 } })
  v[2] = al.tensor { 7, 8, 9 }
  T.eq(v[2]:totable(), { 7, 8, 9 })
  T.eq(al.stack({ al.ones { 2 }, al.zeros { 2 } }, -1):shape(), { 2, 2 })
  T.eq(al.ones { 2, 3 }:unsqueeze(-1):shape(), { 2, 3, 1 })
  T.eq(al.randint(1, 5, 3, 2):shape(), { 3, 2 })      -- sizes as numbers: no Generator expected
  T.eq(al.randint(1, 5, { 3 }, al.Generator(1)):shape(), { 3 })
end }

-- autograd helpers
err("no_grad of a number", function() return al.no_grad(5) end, "attnlab.no_grad: expects a function to run, got number")
err("enable_grad of nil", function() return al.enable_grad() end, "attnlab.enable_grad: expects a function to run, got nil")
cases[#cases + 1] = { name = "no_grad: a refused call leaves recording on", fn = function()
  T.raises(function() al.no_grad("x") end, "expects a function")
  T.truthy(al.is_grad_enabled())
end }
errp("std of one element (raised as std's, not from init.lua)", function() return al.std(al.ones { 1 }) end,
  "attnlab.std: need at least 2 elements along dim 1")
errp("gradcheck of a number", function() return al.gradcheck(5, { al.randn({ 2 }, { requires_grad = true }) }) end,
  "attnlab.gradcheck: fn must be a function, got number")
errp("gradcheck with no input requiring grad", function() return al.gradcheck(al.exp, { al.randn { 2 } }) end,
  "attnlab.gradcheck: no input has requires_grad = true")
errp("gradcheck with a misspelt option (esp)", function()
  return al.gradcheck(al.exp, { al.randn({ 2 }, { requires_grad = true }) }, { esp = 1e-3 })
end, "attnlab.gradcheck: unknown option 'esp'")
errp("gradcheck with eps = 0 (every gradient passed)", function()
  return al.gradcheck(al.exp, { al.randn({ 2 }, { requires_grad = true }) }, { eps = 0 })
end, "attnlab.gradcheck: eps must be a finite number > 0, got 0")
errp("gradcheck with eps = NaN", function()
  return al.gradcheck(al.exp, { al.randn({ 2 }, { requires_grad = true }) }, { eps = 0 / 0 })
end, "attnlab.gradcheck: eps", "got nan")
errp("gradcheck of a fn returning nil", function()
  return al.gradcheck(function() end, { al.randn({ 2 }, { requires_grad = true }) })
end, "attnlab.gradcheck: fn must return a tensor or a list of tensors, got nil")
errp("gradcheck of an expanded input", function()
  return al.gradcheck(al.exp, { al.randn { 1, 3 }:expand { 2, 3 }:requires_grad_(true) })
end, "attnlab.gradcheck: input 1 is an expanded view (its elements share memory)")
errp("gradcheck of a result without a gradient (argmax)", function()
  return al.gradcheck(function(t) return al.argmax(t) end, { al.randn({ 3 }, { requires_grad = true }) })
end, "attnlab.gradcheck: fn's result does not require grad")
-- a reshape of a non-contiguous input was a copy: the perturbation never reached fn, every
-- numeric gradient was 0 and a right backward was reported wrong
cases[#cases + 1] = { name = "gradcheck of non-contiguous inputs perturbs the inputs themselves", fn = function()
  local g = al.Generator(3)
  local xT = al.randn({ 3, 4 }, { generator = g }):transpose(1, 2):requires_grad_(true)
  local ok, why = al.gradcheck(al.exp, { xT })
  T.truthy(ok, why)
  local w = al.randn({ 2, 5, 3 }, { generator = g }):permute({ 3, 1, 2 }):requires_grad_(true)
  ok, why = al.gradcheck(function(a) return al.softmax(a * 3) end, { w })
  T.truthy(ok, why)
  T.truthy(al.gradcheck(function(a) return a * a end, { al.randn({}, { requires_grad = true }) }), "a 0-dim input")
  ok = al.gradcheck(function(a) return a * 2 + 0 * al.exp(a) end, { xT })   -- still passes a right one
  T.truthy(ok)
end }
-- std of a constant row: sqrt's derivative at 0 is inf, and inf * 0 made the gradient NaN
cases[#cases + 1] = { name = "std's gradient is 0 where the variance is 0, as PyTorch's; NaN stays NaN", fn = function()
  local x = al.tensor({ { 1, 1, 1 }, { 1, 2, 4 } }, { requires_grad = true })
  al.sum(al.std(x, 2)):backward()
  local g = x.grad:totable()
  T.eq(g[1], { 0, 0, 0 })
  T.close(g[2], { -0.43644, -0.10911, 0.54554 }, 1e-4)   -- torch.std(x, 1).sum().backward()
  local c = al.tensor({ 2, 2 }, { requires_grad = true })
  al.std(c):backward()
  T.eq(c.grad:totable(), { 0, 0 })
  T.truthy(al.std(al.tensor { 0 / 0, 1 }):item() ~= al.std(al.tensor { 0 / 0, 1 }):item(), "NaN variance: NaN std")
  T.eq(al.std(x, 2):totable()[1], 0)
end }
cases[#cases + 1] = { name = "gradcheck: good calls still pass, and a wrong gradient still fails", fn = function()
  T.truthy(al.gradcheck(al.exp, { al.randn({ 3 }, { requires_grad = true }) }, { eps = 1e-3, seed = 2 }))
  local ok, why = al.gradcheck(function(x) return x * 2 + 0 * al.exp(x) end, { al.randn({ 2 }, { requires_grad = true }) })
  T.truthy(ok, why)
  T.eq(select(1, al.gradcheck(function(x) return al.tanh(x):detach() + x end, { al.randn({ 3 }, { requires_grad = true }) })), false)
end }
errp("zeros_like of a number", function() return al.zeros_like(5) end, "attnlab.zeros_like: expects a tensor, got number")
errp("zeros_like with options that are a number (ignored)", function() return al.zeros_like(al.ones { 2 }, 5) end,
  "attnlab.zeros_like: options must be a table", "got number")
errp("full_like without a value", function() return al.full_like(al.ones { 2 }) end,
  "attnlab.full_like: the fill value must be a number, got nil")
errp("t:std(0) says std", function() return al.ones { 3 }:std(0) end, "bad argument #2 to 'std' (dim 0 is invalid")
errp("al.format of a number", function() return al.format(5) end, "attnlab.format: bad argument #1 (expected a tensor, got number)")

-- nn: a layer called with the wrong input names it, without a position inside the library
errp("Linear forward of nil", function() return al.nn.Linear(2, 3)(nil) end,
  "Linear: forward(x) expects x, a float32 tensor (..., 2), got nil")
errp("Linear forward of the wrong width", function() return al.nn.Linear(2, 3)(al.ones { 4, 5 }) end,
  "attnlab.linear: input float32 (4,5) does not match weight float32 (3,2)")
errp("Linear forward of int64", function() return al.nn.Linear(2, 3)(al.zeros({ 4, 2 }, { dtype = "int64" })) end,
  "attnlab.linear: expected float32 tensors")
errp("Linear(2^40, 2^40)", function() return al.nn.Linear(1 << 40, 1 << 40) end, "Linear(1099511627776, 1099511627776): cannot make the weight")
errp("LayerNorm forward of the wrong width", function() return al.nn.LayerNorm(4)(al.ones { 2, 3 }) end,
  "LayerNorm: expected x (..., 4), got float32 (2,3)")
errp("LayerNorm without weights, forward of the wrong width (normalized any width)", function()
  return al.nn.LayerNorm(4, { affine = false })(al.ones { 2, 3 })
end, "LayerNorm: expected x (..., 4), got float32 (2,3)")
errp("Embedding forward of an id out of range", function() return al.nn.Embedding(5, 2)(I { 6 }) end,
  "attnlab.embedding: id 6 (element 1) out of range 1..5")
errp("Embedding forward of nil", function() return al.nn.Embedding(5, 2)(nil) end, "Embedding: forward(ids) expects ids", "got nil")
errp("Dropout(2)", function() return al.nn.Dropout(2) end, "Dropout: p must be a number in [0, 1), got 2")
errp("Dropout with a misspelt option (generater)", function() return al.nn.Dropout(0.5, { generater = al.Generator(1) }) end,
  "Dropout: unknown option 'generater'")
errp("Dropout forward of nil", function() return al.nn.Dropout(0.5)(nil) end, "Dropout: forward(x) expects x", "got nil")
errp("MLP forward of the wrong width", function() return al.nn.MLP { dim = 4 }(al.ones { 2, 3 }) end,
  "attnlab.linear: input float32 (2,3) does not match weight float32 (16,4)")
errp("EncoderBlock forward of the wrong width names the block", function()
  return al.nn.EncoderBlock { dim = 8, heads = 2 }(al.ones { 1, 3, 4 })
end, "EncoderBlock: expected x (B,N,8), got (1,3,4)")
errp("EncoderBlock forward of nil", function() return al.nn.EncoderBlock { dim = 8, heads = 2 }(nil) end,
  "EncoderBlock: forward(x", "got nil")
errp("MultiHeadAttention with an unknown normalizer", function()
  return al.nn.MultiHeadAttention { dim = 8, heads = 2, normalizer = "foo" }
end, "unknown normalizer 'foo'; valid:")
errp("Normalizer forward of a number", function() return al.nn.Normalizer { name = "softmax" }(5) end,
  "Normalizer: forward(scores [, mask]) expects scores", "got 5")
errp("ViT forward of images of the wrong size", function() return al.nn.ViT(vit_opts({}))(al.ones { 1, 3, 16, 16 }) end,
  "ViT: expected images (B,3,8,8), got (1,3,16,16)")
errp("ViT forward of int64 images", function() return al.nn.ViT(vit_opts({}))(al.zeros({ 1, 3, 8, 8 }, { dtype = "int64" })) end,
  "ViT: expected images float32 (B,3,8,8), got int64 (1,3,8,8)")
errp("ViT (text) forward of an id out of range", function()
  return al.nn.ViT { vocab_size = 5, seq_len = 4, num_classes = 2, dim = 8, heads = 2 }(I { { 1, 2, 3, 9 } })
end, "attnlab.embedding: id 9 (element 4) out of range 1..5")
errp("ViT (text) forward of ids of the wrong length", function()
  return al.nn.ViT { vocab_size = 5, seq_len = 4, num_classes = 2, dim = 8, heads = 2 }(I { { 1, 2, 3 } })
end, "ViT: expected token ids int64 (B,4), got int64 (1,3)")
errp("Sequential(5)", function() return al.nn.Sequential(5) end, "Sequential: layer 1 must be a module", "got number")
errp("Module:add of a number", function() return al.nn.Module():add("c", 5) end, "Module:add: the child c must be a module")
errp("Module:train('no')", function() return al.nn.Linear(2, 2):train("no") end, "Linear:train: expects true or false, got string")
errp("Module:apply(5)", function() return al.nn.Linear(2, 2):apply(5) end, "Linear:apply: expects a function, got number")
errp("a module without forward, called", function() return al.nn.Module()(al.ones { 2 }) end,
  "Module: the module has no forward method")
cases[#cases + 1] = { name = "nn: the checked layers still compute what they did", fn = function()
  local g = al.Generator(4)
  local lin = al.nn.Linear(3, 2, { generator = g })
  local x = al.randn({ 4, 3 }, { generator = g })
  T.close(lin(x):totable(), al.linear(x, lin.weight, lin.bias):totable(), 0, 0)
  local ln = al.nn.LayerNorm(3, { affine = false })
  T.close(ln(x):totable(), al.layer_norm(x, nil, nil, 1e-5):totable(), 0, 0)
  local emb = al.nn.Embedding(5, 2, { generator = g })
  T.close(emb(I { 5, 1 }):totable(), al.embedding(emb.weight, I { 5, 1 }):totable(), 0, 0)
  local d = al.nn.Dropout(0.5, { generator = al.Generator(1) })
  T.eq(d(x):shape(), { 4, 3 })
  T.truthy(d:eval()(x) == x)
  T.eq(al.nn.Sequential(al.nn.Linear(3, 4), al.nn.ReLU())(x):shape(), { 4, 4 })
  T.eq(al.nn.EncoderBlock { dim = 8, heads = 2 }(al.ones { 1, 3, 8 }):shape(), { 1, 3, 8 })
end }

-- sweep
err("sweep.run with a misspelt option (wokers)", function()
  return require("attnlab.sweep").run({ name = "x" }, { out = "/nonexistent/sweep-out", wokers = 2, dry_run = true })
end, "sweep.run: unknown option 'wokers'", "workers")

return cases
