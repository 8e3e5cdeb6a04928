-- tests/lua/test_newcomer_errors.lua -- mistakes a newcomer's audit made, each refused when it is
-- made, with one line naming the op and the problem (or, for the printout, shown truthfully):
-- an optimizer given the model instead of its parameters (or nothing to train), a mixer given
-- the wrong width, error paths counting blocks from 0, model:block(i) out of range, a string
-- alpha, a 0-based Dataset:subset index, and a user's own normalizer in the model's printout.
local al = require "attnlab"
local T = require "harness"
local nn = al.nn

local cases, case = T.suite()

-- err(name, fn, pats...): fn() raises a message holding every pattern, and no Lua internals
local function err(name, fn, ...)
  cases[#cases + 1] = T.error_case(name, fn, { ... }, { "attempt to", "-nan", "\n" })
end
local function lacks(msg, ...)
  for _, bad in ipairs({ ... }) do
    if msg:find(bad, 1, true) then error(("message has '%s': %s"):format(bad, msg), 2) end
  end
end

local function vit(o)
  local c = { image_size = 28, patch_size = 7, channels = 1, num_classes = 10, seed = 1 }
  for k, v in pairs(o or {}) do c[k] = v end
  return nn.ViT(c)
end

-- ---- 1. optimizers with nothing to train ----------------------------------------------------------
err("AdamW(model) instead of AdamW(model:parameters())", function() return al.optim.AdamW(vit(), { lr = 1e-2 }) end,
  "AdamW: params must be a list of tensors", "got a module (ViT)", "pass model:parameters()")
err("SGD(module)", function() return al.optim.SGD(nn.Linear(2, 2), { lr = 0.1 }) end,
  "SGD: params", "got a module (Linear)", "pass model:parameters()")
err("AdamW({}): an empty parameter list", function() return al.optim.AdamW({}, { lr = 1e-3 }) end,
  "AdamW: got an empty parameter list")
err("SGD({}): an empty parameter list", function() return al.optim.SGD({}) end, "SGD: got an empty parameter list")
case("AdamW with one empty group among others is accepted, as in PyTorch (a stage filter may empty one)", function()
  local opt = al.optim.AdamW({ { params = nn.Linear(2, 2):parameters() }, { params = {}, weight_decay = 0 } })
  T.eq(#opt.param_groups, 2)
end)
err("AdamW with a group whose params is a module", function()
  return al.optim.AdamW({ { params = nn.Linear(2, 2) } })
end, "AdamW: group 1's params is a module (Linear), not a list of tensors", "pass its :parameters()")
err("SGD with a module as the params of a second group", function()
  return al.optim.SGD({ { params = nn.Linear(2, 2):parameters() }, { params = nn.Linear(2, 2), weight_decay = 0 } })
end, "SGD: group 2's params is a module (Linear)", "pass its :parameters()")
err("SGD with a module among the groups", function()
  return al.optim.SGD({ { params = nn.Linear(2, 2):parameters() }, nn.Linear(2, 2) })
end, "SGD: entry 2 of params is a module (Linear)", "pass its :parameters()")
err("AdamW with only empty groups", function() return al.optim.AdamW({ { params = {} }, { params = {} } }) end,
  "AdamW: every group's params list is empty")
err("AdamW(state_dict) (named tensors, no list)", function() return al.optim.AdamW(nn.Linear(2, 2):state_dict()) end,
  "AdamW: params must be a list", "a state dict?")
err("AdamW(tensor)", function() return al.optim.AdamW(al.zeros { 2 }) end, "AdamW: params", "got a tensor")
err("AdamW(nil)", function() return al.optim.AdamW(nil) end, "AdamW: params", "got nil")

case("an optimizer over model:parameters() or non-empty groups still trains", function()
  local m = nn.Linear(3, 2, { generator = al.Generator(1) })
  local before = m.weight:clone()
  local opt = al.optim.AdamW(m:parameters(), { lr = 1e-2 })
  local loss = al.sum(m(al.ones { 4, 3 }))
  opt:zero_grad(); loss:backward(); opt:step()
  T.truthy(al.max(al.abs(m.weight - before)):item() > 0, "the weights did not move")
  al.optim.SGD({ { params = { m.weight } }, { params = { m.bias }, weight_decay = 0 } }, { lr = 0.1 })
end)

-- ---- 2. mixers given the wrong width name themselves and x --------------------------------------
err("BiLSTM dim 64 on (2,5,32)", function() return nn.BiLSTM { dim = 64, heads = 4 }(al.randn { 2, 5, 32 }) end,
  "BiLSTM: expected x (B,N,64), got (2,5,32)")
err("BiMamba dim 64 on (2,5,32)", function() return nn.BiMamba { dim = 64, heads = 4 }(al.randn { 2, 5, 32 }) end,
  "BiMamba: expected x (B,N,64), got (2,5,32)")
err("BiLSTM on a 2-D x", function() return nn.BiLSTM { dim = 8, heads = 2 }(al.randn { 5, 8 }) end,
  "BiLSTM: expected x (B,N,8), got (5,8)")
err("BiMamba on a 4-D x", function() return nn.BiMamba { dim = 8, heads = 2 }(al.randn { 1, 2, 5, 8 }) end,
  "BiMamba: expected x (B,N,8), got (1,2,5,8)")
err("BiMamba on an int64 x", function() return nn.BiMamba { dim = 8 }(al.zeros({ 2, 5, 8 }, { dtype = "int64" })) end,
  "BiMamba: expected x float32 (B,N,8), got int64 (2,5,8)")
for _, name in ipairs({ "MultiHeadAttention", "BiLSTM", "BiMamba" }) do
  err(name .. " with a keep mask of another length", function()
    return nn[name] { dim = 8, heads = 2 }(al.randn { 2, 5, 8 }, { keep = al.ones { 2, 6 } })
  end, name .. ": keep must be (B,N) = (2,5), as x (2,5,8), got (2,6)")
  err(name .. " with a transposed key_mask (same element count)", function()
    return nn[name] { dim = 8, heads = 2 }(al.randn { 2, 5, 8 }, { key_mask = al.ones { 5, 2 } })
  end, name .. ": key_mask must be (B,N) = (2,5)", "got (5,2)")
end

case("a mixer with the wrong width names the mixer, never a weight or attnlab.linear", function()
  for _, name in ipairs({ "BiLSTM", "BiMamba" }) do
    local e = T.capture_error(function() return nn[name] { dim = 64, heads = 4 }(al.randn { 2, 5, 32 }) end)
    lacks(e, "weight_ih", "attnlab.linear", "attnlab.bilstm", "attnlab.bimamba")
  end
end)

case("mixers still run with right-shaped x and masks", function()
  local x, keep = al.randn { 2, 5, 8 }, al.tensor { { 1, 1, 0, 1, 1 }, { 1, 1, 1, 1, 0 } }
  for _, name in ipairs({ "MultiHeadAttention", "BiLSTM", "BiMamba" }) do
    T.eq(nn[name] { dim = 8, heads = 2 }(x, { keep = keep, key_mask = al.ones { 2, 5 } }):shape(), { 2, 5, 8 })
  end
end)

-- ---- 3. error paths count blocks as model:block(i) does ------------------------------------------
case("an error in block 2 says block 2 (blocks.1), not layer 1", function()
  local m = vit()
  -- a mixer of the user's own that states no dim (set_mixer refuses a BiLSTM of the wrong
  -- width at once), failing inside its forward
  local Narrow = nn.class("Narrow", nn.Module)
  function Narrow:init() self:add("proj", nn.Linear(32, 32)) end
  function Narrow:forward(x) return self.proj(x) end
  m:block(2):set_mixer(Narrow())
  local e = T.capture_error(function() return m(al.randn { 2, 1, 28, 28 }) end)
  T.truthy(e:find("in block 2 (blocks.1, EncoderBlock): in layer attn (Narrow): ", 1, true), e)
  T.truthy(e:find("in layer attn (Narrow): attnlab.linear: input float32 (2,17,64) " ..
    "does not match weight float32 (32,32)", 1, true), e)   -- no library file position in between
  -- a bug in the user's own mixer keeps its file and line: the rethrow loses the traceback
  local Buggy = nn.class("Buggy", nn.Module)
  function Buggy:forward(x) return x.missing.field end
  m:block(2):set_mixer(Buggy())
  e = T.capture_error(function() return m(al.randn { 2, 1, 28, 28 }) end)
  T.truthy(e:find("in layer attn %(Buggy%): [^:]*test_newcomer_errors%.lua:%d+: attempt to index a nil value"), e)
  lacks(e, "in layer 1", "\n")
  -- the same through the blocks' own call_child (0-based names, as s2s/halting.lua calls it)
  e = T.capture_error(function() return m.blocks:call_child(1, al.randn { 2, 17, 64 }) end)
  T.truthy(e:find("in block 2 (blocks.1, EncoderBlock): ", 1, true), e)
  -- the first block, for a mask of the wrong shape given to the model
  e = T.capture_error(function() return vit()(al.randn { 2, 1, 28, 28 }, { keep = al.ones { 2, 16 } }) end)
  T.truthy(e:find("in block 1 (blocks.0, EncoderBlock): in layer attn (MultiHeadAttention): MultiHeadAttention: " ..
    "keep must be (B,N) = (2,17)", 1, true), e)
end)

case("a Sequential names a failing layer by its 1-based position and its name", function()
  local s = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(5, 2))
  local e = T.capture_error(function() return s(al.randn { 2, 3 }) end)
  T.truthy(e:find('in layer 3 (named "2", Linear): ', 1, true) and e:find("attnlab.linear: input float32 (2,4)", 1, true), e)
  T.truthy(s:get(3) == s._children["2"])
end)

case("the timm state-dict names stay 0-based", function()
  local sd = vit():state_dict()
  T.truthy(sd["blocks.0.attn.qkv.weight"] and sd["blocks.1.mlp.fc2.bias"] and not sd["blocks.2.norm1.weight"])
end)

-- ---- 4. model:block(i) out of range ----------------------------------------------------------------
err("model:block(3) of a depth-2 ViT", function() return vit():block(3) end,
  "ViT:block: the block number must be an integer in 1..2, got 3 (the model has depth 2)")
err("model:block(0)", function() return vit():block(0) end, "in 1..2, got 0 (blocks are numbered from 1)")
err("model:block(-1)", function() return vit():block(-1) end, "in 1..2, got -1")
err("model:block(1.5)", function() return vit():block(1.5) end, "ViT:block: the block number must be an integer in 1..2, got 1.5")
err("model:block('2')", function() return vit():block("2") end, "in 1..2, got '2' (a string)")
err("model:block()", function() return vit():block() end, "in 1..2, got nil")
case("model:block(i) for i in 1..depth (and 2.0) is the block blocks.<i-1>", function()
  local m = vit()
  T.truthy(m:block(1) == m.blocks._children["0"] and m:block(2) == m.blocks._children["1"] and m:block(2.0) == m:block(2))
end)

-- ---- 5. alpha of entmax_bisect -------------------------------------------------------------------
err("entmax_bisect(x, '1.5')", function() return al.entmax_bisect(al.randn { 2, 4 }, "1.5") end,
  "attnlab.entmax_bisect: alpha must be a number or a tensor, got the string '1.5'")
-- (a table of options in alpha's place is the options: al.entmax_bisect(x, {mask = m}))
err("entmax_bisect(x, {1.5})", function() return al.entmax_bisect(al.randn { 2, 4 }, { 1.5 }) end,
  "attnlab.entmax_bisect: alpha must be a number or a tensor, got a table")
err("attention{alpha = '1.5'}", function()
  return al.attention(al.randn { 1, 3, 12 }, { heads = 2, normalizer = "entmax_bisect", alpha = "1.5" })
end, "attnlab.attention: alpha must be a number or a tensor, got the string '1.5'")
case("entmax_bisect takes alpha as a number or a tensor, the same rows", function()
  local x = al.randn { 2, 4 }
  T.eq(al.entmax_bisect(x, 1.5):totable(), al.entmax_bisect(x, al.tensor { 1.5 }):totable())
end)

-- ---- 6. Dataset:subset indices ---------------------------------------------------------------------
local function synth(n)
  local x = al.randn { n, 2 }
  return setmetatable({ name = "synth", split = "train", n = n, num_classes = 2, make_batch = function(_, idx)
    return al.index_select(x, 1, idx), idx
  end }, al.data.Dataset)
end
err("subset {0, 1} (a 0-based index)", function() return synth(8):subset({ 0, 1 }) end,
  "Dataset:subset: entry 1 is 0, outside 1..8 (indices are 1-based")
err("subset {8, 9} (past the end)", function() return synth(8):subset({ 8, 9 }) end, "entry 2 is 9, outside 1..8")
err("subset {-1}", function() return synth(8):subset({ -1 }) end, "entry 1 is -1, outside 1..8")
err("subset {1.5}", function() return synth(8):subset({ 1.5 }) end, "entry 1 is 1.5, not an integer in 1..8")
err("subset {'2'}", function() return synth(8):subset({ "2" }) end, "entry 1 is '2', not an integer in 1..8")
err("subset of an int64 tensor holding 0", function() return synth(8):subset(al.tensor({ 3, 0 }, { dtype = "int64" })) end,
  "entry 2 is 0, outside 1..8")
err("subset of a float32 tensor", function() return synth(8):subset(al.tensor { 1, 2 }) end,
  "Dataset:subset: indices must be a 1-D int64 tensor", "got float32 (2)")
err("subset of a subset counts in the subset", function() return synth(8):subset({ 5, 6, 7 }):subset({ 4 }) end,
  "entry 1 is 4, outside 1..3")
case("subset of valid indices (a list, a tensor, a subset's subset) is unchanged", function()
  local ds = synth(8)
  local sub = ds:subset({ 8, 1, 3 })
  T.eq(sub.n, 3)
  local _, y = sub:batch(al.tensor({ 1, 2, 3 }, { dtype = "int64" }))
  T.eq(y:totable(), { 8, 1, 3 })
  local _, y2 = sub:subset(al.tensor({ 3 }, { dtype = "int64" })):batch(al.tensor({ 1 }, { dtype = "int64" }))
  T.eq(y2:totable(), { 3 })
  T.eq(ds:subset({}).n, 0)
end)

-- ---- 7. the printout of a model with a user's own normalizer -----------------------------------------
local TempSoftmax = nn.class("TempSoftmax", nn.Module)
function TempSoftmax:init(t) self.T = t end
function TempSoftmax:forward(scores, mask) return al.softmax(scores / self.T, mask and { mask = mask } or nil) end

case("a user's normalizer is named in the printout, and the header does not claim softmax", function()
  local m = vit()
  local header = tostring(m):match("^[^\n]*")
  T.truthy(header:find("normalizer=softmax,", 1, true), header)
  m:block(2).attn:add("normalizer", TempSoftmax(1.0))
  local text = tostring(m)
  header = text:match("^[^\n]*")
  T.truthy(header:find("normalizer=per block (1: softmax, 2: TempSoftmax)", 1, true), header)
  T.truthy(text:find("MultiHeadAttention(dim=64, heads=4, normalizer=TempSoftmax)", 1, true), text)
  T.truthy(text:find("MultiHeadAttention(dim=64, heads=4, normalizer=softmax)", 1, true), text)
  lacks(text, "normalizer=nil")
  m:block(1).attn:add("normalizer", TempSoftmax(1.0))
  header = tostring(m):match("^[^\n]*")
  T.truthy(header:find("normalizer=TempSoftmax,", 1, true), header)
end)

case("the header names a swapped-in mixer's blocks as having no normalizer", function()
  local m = vit({ normalizer = "sparsemax" })
  m:block(1):set_mixer(nn.BiMamba { dim = 64, heads = 4 })
  local header = tostring(m):match("^[^\n]*")
  T.truthy(header:find("normalizer=per block (1: none (BiMamba), 2: sparsemax)", 1, true), header)
end)

-- the mixers' constructor checks are one line (they were asserts: a file path first)
err("BiLSTM: dim not a multiple of heads", function() return nn.BiLSTM { dim = 10, heads = 3 } end,
  "BiLSTM: dim must be a positive multiple of heads, got dim = 10, heads = 3")
err("BiMamba without dim", function() return nn.BiMamba { heads = 3 } end, "BiMamba: dim is required")
err("BiMamba: inner width not divisible by heads", function() return nn.BiMamba { dim = 9, heads = 2, expand = 1 } end,
  "BiMamba: the inner width expand * dim = 9 is not divisible by heads = 2")

-- ---- m.forward(x), what a PyTorch hand writes: the dot passes x as the module ----------------------
for _, m in ipairs({ { "Linear", function() return nn.Linear(2, 2) end, { 1, 2 } },
                     { "LayerNorm", function() return nn.LayerNorm(4) end, { 1, 4 } },
                     { "MultiHeadAttention", function() return nn.MultiHeadAttention { dim = 8, heads = 2 } end, { 1, 3, 8 } },
                     { "BiLSTM", function() return nn.BiLSTM { dim = 8, heads = 2 } end, { 1, 3, 8 } },
                     { "ViT", function() return vit() end, { 1, 1, 28, 28 } } }) do
  err(m[1] .. ".forward(x) called with '.'", function() local mod = m[2](); return mod.forward(al.ones(m[3])) end,
    m[1] .. ".forward called with '.'", "write m:forward(x) or m(x)")
end
case("a user's module: m.forward(x) is named too; errors inside forward keep their levels", function()
  local Mine = nn.class("Mine", nn.Module)
  function Mine:forward(x)
    if x == nil then error("Mine: no x", 2) end   -- level 2: the caller of forward
    return x * 2
  end
  local m = Mine()
  T.eq(m:forward(al.ones { 2 }):totable(), { 2, 2 })
  T.eq(m(al.ones { 2 }):totable(), { 2, 2 })
  local ok, e = pcall(function() return m.forward(al.ones { 2 }) end)
  T.truthy(not ok and e:find("Mine.forward called with '.'", 1, true), tostring(e))
  local line = debug.getinfo(1, "l").currentline + 1
  ok, e = pcall(function() local y = m:forward() return y end)   -- (not a tail call: its line stays)
  T.truthy(not ok and e:find(("test_newcomer_errors.lua:%d: Mine: no x"):format(line), 1, true), tostring(e))
end)

return cases
