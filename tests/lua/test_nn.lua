-- nn modules, optimizers, schedules, checkpoints, and the compact ViT.
local al = require "attnlab"
local T = require "harness"
local nn = al.nn

local function tmpname() return os.tmpname() end

local function flat(t) return t:contiguous():reshape({ -1 }):totable() end

-- A tensor's sample statistics in Lua doubles: mean, standard deviation (biased), largest
-- |x|, min and max.
local function stats(t)
  local v = flat(t)
  local s, s2, mn, mx = 0, 0, math.huge, -math.huge
  for _, x in ipairs(v) do s, s2, mn, mx = s + x, s2 + x * x, math.min(mn, x), math.max(mx, x) end
  local mean = s / #v
  return mean, math.sqrt(s2 / #v - mean * mean), math.max(-mn, mx), mn, mx
end

return {
  { name = "Module registers parameters and children in order; state_dict names", fn = function()
    local m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2, { bias = false }))
    local names = {}
    for _, np in ipairs(m:named_parameters()) do names[#names + 1] = np[1] end
    T.eq(names, { "0.weight", "0.bias", "2.weight" })
    T.eq(m:num_parameters(), 3 * 4 + 4 + 4 * 2)
    assert(m:get(1) == m._children["0"])
    assert(tostring(m):find("Linear(3 -> 4)", 1, true), tostring(m))
  end },
  { name = "state_dict round trip through safetensors (al.save / al.load)", fn = function()
    al.manual_seed(3)
    local a = nn.MLP { in_features = 5, hidden_features = 7, out_features = 3 }
    local b = nn.MLP { in_features = 5, hidden_features = 7, out_features = 3 }
    local path = tmpname()
    al.save(path, a:state_dict(), { note = "test" })
    local sd, meta = al.load(path)
    os.remove(path)
    T.eq(meta.note, "test")
    b:load_state_dict(sd)
    local x = al.randn({ 2, 5 })
    T.eq(flat(b(x)), flat(a(x)))
  end },
  { name = "load_state_dict lists missing, unexpected and mis-shaped keys", fn = function()
    local m = nn.Linear(3, 2)
    local err = T.raises(function() m:load_state_dict({ weight = al.zeros({ 2, 4 }), extra = al.zeros({ 1 }) }) end, "load_state_dict")
    assert(err:find("missing keys: bias", 1, true), err)
    assert(err:find("unexpected keys: extra", 1, true), err)
    assert(err:find("weight: checkpoint (2,4), model (2,3)", 1, true), err)
    -- a transposed weight (3,2) has the model's element count but not its shape: refused
    T.raises(function() m:load_state_dict({ weight = al.zeros({ 3, 2 }), bias = al.zeros({ 2 }) }) end,
      "mis-shaped: weight: checkpoint (3,2), model (2,3)")
    local missing, unexpected = m:load_state_dict({ weight = al.ones({ 2, 3 }) }, { strict = false })
    T.eq(missing, { "bias" }); T.eq(unexpected, {})
    T.eq(flat(m.weight), { 1, 1, 1, 1, 1, 1 })
  end },
  { name = "containers name the failing layer", fn = function()
    local m = nn.Sequential(nn.Linear(3, 4), nn.Linear(5, 2))
    -- the 1-based position (m:get(2)) and the 0-based state-dict name ("1.weight")
    local err = T.raises(function() m(al.randn({ 2, 3 })) end, 'in layer 2 (named "1", Linear): ')
    assert(err:find("attnlab.linear: input float32 (2,4) does not match weight float32 (2,5)", 1, true), err)
  end },
  { name = "AdamW matches the closed-form update over 3 steps", fn = function()
    local p = al.tensor({ 0.5, -1.0, 2.0 })
    local opt = al.optim.AdamW({ p }, { lr = 0.1, betas = { 0.9, 0.99 }, eps = 1e-8, weight_decay = 0.05 })
    local grads = { { 0.1, -0.2, 0.3 }, { -0.5, 0.4, 0.0 }, { 1.0, 1.0, -1.0 } }
    local ref, m, v = { 0.5, -1.0, 2.0 }, { 0, 0, 0 }, { 0, 0, 0 }
    for t = 1, 3 do
      p.grad = al.tensor(grads[t])
      opt:step()
      for i = 1, 3 do
        local g = grads[t][i]
        ref[i] = ref[i] * (1 - 0.1 * 0.05)
        m[i] = 0.9 * m[i] + 0.1 * g
        v[i] = 0.99 * v[i] + 0.01 * g * g
        local mh, vh = m[i] / (1 - 0.9 ^ t), v[i] / (1 - 0.99 ^ t)
        ref[i] = ref[i] - 0.1 * mh / (math.sqrt(vh) + 1e-8)
      end
    end
    T.close(p:totable(), ref, 1e-6, 1e-5)
  end },
  { name = "SGD with momentum matches the closed form: nesterov, and dampening without it", fn = function()
    -- torch.optim.SGD: gi = g + wd p; the first step's buffer is gi itself (no dampening), later
    -- ones buf = momentum buf + (1 - dampening) gi; the step is lr (gi + momentum buf) with
    -- nesterov, else lr buf
    local cases = {
      { opts = { nesterov = true }, damp = 0, step = function(gi, b) return gi + 0.9 * b end },
      { opts = { dampening = 0.5 }, damp = 0.5, step = function(_, b) return b end },
    }
    for _, c in ipairs(cases) do
      local opts = { lr = 0.1, momentum = 0.9, weight_decay = 0.01 }
      for k, v in pairs(c.opts) do opts[k] = v end
      local p = al.tensor({ 1.0, -2.0 })
      local opt = al.optim.SGD({ p }, opts)
      local ref, buf = { 1.0, -2.0 }, { 0, 0 }
      for t = 1, 3 do
        local g = { 0.3 * t, -0.1 }
        p.grad = al.tensor(g)
        opt:step()
        for i = 1, 2 do
          local gi = g[i] + 0.01 * ref[i]
          buf[i] = t == 1 and gi or 0.9 * buf[i] + (1 - c.damp) * gi
          ref[i] = ref[i] - 0.1 * c.step(gi, buf[i])
        end
      end
      T.close(p:totable(), ref, 1e-6, 1e-5)
    end
  end },
  { name = "AdamW adds eps to the bias-corrected sqrt(v), as torch.optim.AdamW (gradients near eps)", fn = function()
    -- gradients of the size of eps: there denom = sqrt(v / (1 - beta2^t)) + eps and, say,
    -- (sqrt(v) + eps) / sqrt(1 - beta2^t) differ by a factor of ~5 in the step
    local p = al.tensor({ 1.0, -1.0, 0.5 })
    local opt = al.optim.AdamW({ p }, { lr = 0.1, betas = { 0.9, 0.99 }, eps = 1e-8, weight_decay = 0 })
    local grads = { { 1e-8, -3e-8, 2e-9 }, { 2e-8, -1e-8, 0 } }
    local ref, m, v = { 1.0, -1.0, 0.5 }, { 0, 0, 0 }, { 0, 0, 0 }
    for t = 1, 2 do
      p.grad = al.tensor(grads[t])
      opt:step()
      for i = 1, 3 do
        local g = grads[t][i]
        m[i] = 0.9 * m[i] + 0.1 * g
        v[i] = 0.99 * v[i] + 0.01 * g * g
        ref[i] = ref[i] - 0.1 * (m[i] / (1 - 0.9 ^ t)) / (math.sqrt(v[i] / (1 - 0.99 ^ t)) + 1e-8)
      end
    end
    T.close(p:totable(), ref, 1e-6, 1e-5)
  end },
  { name = "cosine schedule with warmup", fn = function()
    local opt = al.optim.SGD({ al.zeros({ 1 }) }, { lr = 1.0 })
    local s = al.optim.CosineWarmup(opt, { warmup = 4, total = 14, min_lr = 0.1 })
    T.close(opt.lr, 0.25, 1e-12)
    local lrs = {}
    for i = 1, 14 do lrs[i] = s:step() end
    T.close(lrs[3], 1.0, 1e-12)                      -- end of warmup: t = 4 -> base
    T.close(lrs[8], 0.1 + 0.45 * (1 + math.cos(math.pi * 0.4)), 1e-12)
    T.close(lrs[14], 0.1, 1e-12)
  end },
  { name = "clip_grad_norm scales to max_norm and returns the old norm", fn = function()
    local a, b = al.zeros({ 2 }), al.zeros({ 1 })
    a.grad, b.grad = al.tensor({ 3, 0 }), al.tensor({ 4 })
    local n = al.optim.clip_grad_norm({ a, b }, 1.0)
    T.close(n, 5, 1e-6)
    T.close(math.sqrt(a.grad:sumsq() + b.grad:sumsq()), 1.0, 1e-5)
  end },
  { name = "clip_grad_norm scales by max_norm / (norm + 1e-6), as PyTorch (visible at a small norm)", fn = function()
    -- norm 2e-6, max_norm 1e-6: PyTorch's clip_coef = 1e-6 / (2e-6 + 1e-6) = 1/3, so the
    -- gradient becomes 2e-6 / 3 (a scale of max_norm / norm would give 1e-6)
    local a = al.zeros({ 1 })
    a.grad = al.tensor({ 2e-6 })
    T.close(al.optim.clip_grad_norm({ a }, 1e-6), 2e-6, 0, 1e-6)
    T.close(a.grad:item(), 2e-6 / 3, 0, 1e-6)   -- (relative: float32 holds 2e-6 to ~6e-8)
  end },
  { name = "clip_grad_norm with norm_type 1, 3 and inf is that p-norm of all gradients together", fn = function()
    local function grads() local a, b = al.zeros({ 2 }), al.zeros({ 1 }); a.grad, b.grad = al.tensor({ 3, 0 }), al.tensor({ -4 }); return a, b end
    local a, b = grads()
    T.close(al.optim.clip_grad_norm({ a, b }, 100, 1), 7, 1e-6)
    T.eq(a.grad:totable(), { 3, 0 }, 0, "below max_norm: not scaled")
    a, b = grads()
    T.close(al.optim.clip_grad_norm({ a, b }, 100, 3), (27 + 64) ^ (1 / 3), 1e-6)
    a, b = grads()
    T.close(al.optim.clip_grad_norm({ a, b }, 1, math.huge), 4, 0)
    T.close({ a.grad:totable()[1], b.grad:totable()[1] }, { 0.75, -1 }, 1e-6)   -- largest |g| now 1
    a, b = grads()
    T.close(al.optim.clip_grad_norm({ a, b }, 1, 2), al.optim.clip_grad_norm({ grads() }, 1), 0)   -- 2: the default
  end },
  { name = "clip_grad_norm with p 1, 3, 10 of large gradients: the p-norm in float64, clipped (sum |g|^p overflowed float32)", fn = function()
    local g = al.Generator(3)
    local va, vb = (al.randn({ 40 }, { generator = g }) * 1e4):totable(), (al.randn({ 7 }, { generator = g }) * 3e4):totable()
    local function grads()
      local a, b = al.zeros({ 40 }), al.zeros({ 7 })
      a.grad, b.grad = al.tensor(va), al.tensor(vb)
      return a, b
    end
    for _, p in ipairs({ 1, 3, 10 }) do
      local s = 0   -- float64: (3e4)^10 is about 6e44, far below double's range
      for _, v in ipairs(va) do s = s + math.abs(v) ^ p end
      for _, v in ipairs(vb) do s = s + math.abs(v) ^ p end
      local want = s ^ (1 / p)
      local a, b = grads()
      local n = al.optim.clip_grad_norm({ a, b }, 1, p)
      T.close(n, want, 0, 1e-5, "p = " .. p)
      s = 0   -- clipped: the p-norm is now max_norm
      for _, t in ipairs({ a.grad, b.grad }) do for _, v in ipairs(t:totable()) do s = s + math.abs(v) ^ p end end
      T.close(s ^ (1 / p), 1, 0, 1e-5, "p = " .. p .. " after clipping")
    end
    local a, b = al.zeros({ 2 }), al.zeros({ 1 })   -- all zero: the norm is 0, nothing scaled
    a.grad, b.grad = al.zeros({ 2 }), al.zeros({ 1 })
    T.eq(al.optim.clip_grad_norm({ a, b }, 1, 3), 0)
    a.grad = al.tensor({ 1, 1 / 0 })   -- not finite: returned unscaled
    T.eq(al.optim.clip_grad_norm({ a, b }, 1, 3), math.huge)
    T.eq(a.grad:totable(), { 1, 1 / 0 })
  end },
  { name = "a schedule scales each group's own lr; lr_scale applies from the start", fn = function()
    local a, b, c = al.zeros({ 2 }), al.zeros({ 2 }), al.zeros({ 2 })
    local opt = al.optim.AdamW({ { params = { a }, lr = 0.1 }, { params = { b } }, { params = { c }, lr_scale = 0.5 } },
      { lr = 0.01 })
    T.close({ opt.param_groups[1].lr, opt.param_groups[2].lr, opt.param_groups[3].lr }, { 0.1, 0.01, 0.005 }, 1e-15)
    local s = al.optim.CosineWarmup(opt, { warmup = 2, total = 10 })
    -- as torch.optim.lr_scheduler.LambdaLR with the same factor: [0.05, 0.005, 0.0025], then x2
    T.close({ opt.param_groups[1].lr, opt.param_groups[2].lr, opt.param_groups[3].lr }, { 0.05, 0.005, 0.0025 }, 1e-15)
    s:step()
    T.close({ opt.param_groups[1].lr, opt.param_groups[2].lr, opt.param_groups[3].lr }, { 0.1, 0.01, 0.005 }, 1e-15)
    T.eq(opt.param_groups[2].lr, opt.lr, 0, "a group with neither lr nor lr_scale takes the schedule's lr exactly")
  end },
  { name = "set_lr without a schedule keeps each group's lr relative to the optimizer's", fn = function()
    -- groups lr 0.1 (10x the optimizer's 0.01), none, and lr_scale 0.5: set_lr(0.02) gives
    -- 0.2, 0.02 and 0.01 (each group's own lr scaled by 0.02 / 0.01, as LambdaLR would)
    local a, b, c = al.zeros({ 2 }), al.zeros({ 2 }), al.zeros({ 2 })
    local opt = al.optim.AdamW({ { params = { a }, lr = 0.1 }, { params = { b } }, { params = { c }, lr_scale = 0.5 } },
      { lr = 0.01 })
    opt:set_lr(0.02)
    T.close({ opt.param_groups[1].lr, opt.param_groups[2].lr, opt.param_groups[3].lr }, { 0.2, 0.02, 0.01 }, 1e-15)
    local s = al.optim.SGD({ { params = { a }, lr = 0.3 }, { params = { b } } }, { lr = 0.1 })
    s:set_lr(0.05)
    T.close({ s.param_groups[1].lr, s.param_groups[2].lr }, { 0.15, 0.05 }, 1e-15)
  end },
  { name = "AdamW counts steps per parameter, as torch.optim.AdamW", fn = function()
    -- b has no gradient at step 1: its first update is a first step's (bias corrections at t = 1),
    -- |lr| = 0.1 from 1; one count per optimizer gave 0.925586 (torch: a 0.8, b 0.9)
    local a, b = al.tensor({ 1.0 }), al.tensor({ 1.0 })
    local opt = al.optim.AdamW({ a, b }, { lr = 0.1, weight_decay = 0 })
    a.grad = al.tensor({ 1.0 }); opt:step()
    a.grad = al.tensor({ 1.0 }); b.grad = al.tensor({ 1.0 }); opt:step()
    T.close({ a:item(), b:item() }, { 0.8, 0.9 }, 1e-6)
    T.eq(opt.state[a].step, 2); T.eq(opt.state[b].step, 1); T.eq(opt.steps, 2)
  end },
  { name = "optimizer state round trip: a parameter without state stays without; resumed = uninterrupted", fn = function()
    local function run(make, resume, old_format)
      local a, b = al.tensor({ 1.0, 2.0 }), al.tensor({ -1.0 })
      local opt = make({ a, b })
      a.grad = al.tensor({ 1.0, -0.5 }); opt:step()               -- b: no gradient yet
      if resume then
        local sd = opt:state_dict()
        T.eq(sd["state.2.momentum_buffer"] == nil and sd["state.2.exp_avg"] == nil, true, 0, "b saved no state")
        if old_format then sd["state.1.step"] = nil end           -- written before steps were per parameter
        opt = make({ a, b }); opt:load_state_dict(sd)
        T.eq(opt.state[b] == nil, true, 0, "b has no state after the load")
      end
      for _ = 1, 2 do a.grad = al.tensor({ 0.5, 0.25 }); b.grad = al.tensor({ 2.0 }); opt:step() end
      return { a:totable()[1], a:totable()[2], b:item() }
    end
    local sgd = function(ps) return al.optim.SGD(ps, { lr = 0.1, momentum = 0.9, dampening = 0.5 }) end
    local adamw = function(ps) return al.optim.AdamW(ps, { lr = 0.1 }) end
    T.eq(run(sgd, true), run(sgd, false), 0, "SGD with dampening")
    T.eq(run(adamw, true), run(adamw, false), 0, "AdamW")
    T.eq(run(adamw, true, true), run(adamw, false), 0, "AdamW, a state dict without per-parameter steps")
  end },
  { name = "optimizer rejects bad options", fn = function()
    T.raises(function() al.optim.AdamW({ al.zeros({ 1 }) }, { lr = -1 }) end, "lr must be a number")
    T.raises(function() al.optim.SGD({ 1, 2 }) end, "not a tensor")
  end },
  { name = "trunc_normal_ stays in bounds with the right spread", fn = function()
    local t = al.zeros({ 20000 })
    nn.init.trunc_normal_(t, 1.0, 0, -1, 1, al.Generator(5))
    local mx, mn = al.max(t):item(), al.min(t):item()
    assert(mx <= 1 and mn >= -1, "out of bounds")
    -- std of N(0,1) truncated to [-1,1] is 0.5376
    T.close(math.sqrt(al.var(t):item()), 0.5376, 0.01)
  end },
  -- Rejection sampling never ended when [a, b] held (almost) none of N(mean, std): b < a, std 0
  -- with the mean outside, or bounds far in a tail. It hung; now it is refused in one line.
  { name = "trunc_normal_ refuses bounds it could never fill instead of hanging", fn = function()
    local t = al.zeros({ 4 })
    T.raises(function() nn.init.trunc_normal_(t, 1, 0, 1, -1) end, "trunc_normal_: [a, b] = [1, -1] holds none of N(0, 1^2)")
    T.raises(function() nn.init.trunc_normal_(t, 0, 3, -1, 1) end, "holds none of N(3, 0^2)")
    T.raises(function() nn.init.trunc_normal_(t, 1, 0, 5, 6) end, "holds 3e-07 of N(0, 1^2)")
    T.raises(function() nn.init.trunc_normal_(t, 0 / 0) end, "trunc_normal_: std must be a number, got nan")
    T.raises(function() nn.init.trunc_normal_(t, -1) end, "needs a finite mean and a finite std >= 0")
    T.eq(nn.init.trunc_normal_(t, 0, 0.5, -1, 1):totable(), { 0.5, 0.5, 0.5, 0.5 })
    nn.init.trunc_normal_(t, 1, 0, 3, math.huge, al.Generator(1))   -- a far but reachable tail
    T.truthy(al.min(t):item() >= 3, "in bounds")
  end },
  -- A buffer that is not a tensor was registered, and the module's own state dict then failed to
  -- load ("mis-shaped: count: not a tensor") and to save; an int64 param was refused from the
  -- library's line ("nn/init.lua:72: attnlab.requires_grad_: ...").
  { name = "buffer takes tensors only; param names a tensor of the wrong dtype", fn = function()
    local M = nn.class("BufM", nn.Module)
    function M:init(v) self:buffer("count", v) end
    T.raises(function() M(5) end, "buffer: expected a tensor for count, got number")
    local m = M(al.tensor({ 5 }, { dtype = "int64" }))
    m:load_state_dict(m:state_dict())
    T.eq(m.count:totable(), { 5 })
    local ok, err = pcall(function() nn.Linear(2, 3):param("steps", al.tensor({ 1 }, { dtype = "int64" })) end)
    T.eq(ok, false)
    T.truthy(err:find("param: steps must be a float32 tensor", 1, true) and not err:find("nn/init.lua", 1, true), err)
  end },
  -- nn.GELU{approximate = "tanh"} ran the exact GELU without a word (PyTorch's option gives the
  -- tanh approximation), and every activation ignored whatever it was given.
  { name = "activation modules refuse options they do not have", fn = function()
    T.raises(function() nn.GELU({ approximate = "tanh" }) end, "GELU() takes no options, got a table (al.gelu is the exact erf GELU")
    T.raises(function() nn.ReLU({ inplace = true }) end, "ReLU() takes no options")
    T.raises(function() nn.Tanh(1) end, "Tanh() takes no options, got 1")
    T.eq(nn.GELU()(al.tensor { 1 }):totable(), al.gelu(al.tensor { 1 }):totable())
    T.eq(nn.Identity(54, "unused")(al.tensor { 2 }):totable(), { 2 })   -- argument-insensitive, as PyTorch's
  end },
  { name = "ViT: study preset is N = 17 tokens, timm names, logits shape", fn = function()
    local m = nn.ViT { image_size = 32, patch_size = 8, channels = 3, num_classes = 10, seed = 1 }
    T.eq(m.num_tokens, 17)
    local sd = m:state_dict()
    for _, k in ipairs({ "cls_token", "pos_embed", "patch_embed.proj.weight", "blocks.0.norm1.weight",
      "blocks.1.attn.qkv.weight", "blocks.1.attn.proj.bias", "blocks.0.mlp.fc1.weight", "blocks.0.mlp.fc2.bias",
      "norm.weight", "head.weight" }) do assert(sd[k], "missing " .. k) end
    T.eq(sd["patch_embed.proj.weight"]:shape(), { 64, 3, 8, 8 })
    T.eq(sd["pos_embed"]:shape(), { 1, 17, 64 })
    T.eq(m(al.randn({ 2, 3, 32, 32 })):shape(), { 2, 10 })
    local f = nn.ViT { image_size = 28, patch_size = 7, channels = 1, num_classes = 10 }
    T.eq(f.num_tokens, 17)
  end },
  { name = "ViT: matched seeds give identical weights for every normalizer", fn = function()
    local ref = nn.ViT { image_size = 28, patch_size = 7, channels = 1, num_classes = 10, seed = 9 }:state_dict()
    for _, name in ipairs({ "sparsemax", "hae", "topk:0.25" }) do
      local sd = nn.ViT { image_size = 28, patch_size = 7, channels = 1, num_classes = 10, seed = 9, normalizer = name }:state_dict()
      for k, v in pairs(ref) do T.eq(flat(sd[k]), flat(v), 0, name .. " " .. k) end
    end
  end },
  { name = "ViT init 'torch' (the default): PyTorch's module defaults, layer by layer", fn = function()
    local m = nn.ViT { image_size = 16, patch_size = 4, channels = 3, num_classes = 10, dim = 64, seed = 5 }
    T.eq(m.cfg.init, "torch")
    -- Linear and the patch Conv2d: U(-b, b), b = 1/sqrt(fan_in), weights and biases (sd b/sqrt(3))
    for _, c in ipairs({ { m.blocks._children["0"].mlp.fc1, 64 }, { m.blocks._children["1"].mlp.fc2, 256 },
                         { m.blocks._children["0"].attn.qkv, 64 }, { m.head, 64 }, { m.patch_embed.proj, 48 } }) do
      local b = 1 / math.sqrt(c[2])
      local _, sd, mx = stats(c[1].weight)
      assert(mx <= b and mx > 0.95 * b, ("weight max %.4f, bound %.4f"):format(mx, b))
      assert(math.abs(sd - b / math.sqrt(3)) < 0.1 * b, ("weight sd %.4f, want %.4f"):format(sd, b / math.sqrt(3)))
      local _, _, bmx = stats(c[1].bias)
      assert(bmx <= b and bmx > 0.5 * b, ("bias max %.4f, bound %.4f (uniform, not zero)"):format(bmx, b))
    end
    -- position embedding and class token N(0, 0.02^2); LayerNorm (1, 0)
    local _, sd = stats(m.pos_embed)
    assert(math.abs(sd - 0.02) < 0.002, ("pos_embed sd %.4f"):format(sd))
    T.eq(flat(m.norm.weight)[7], 1); T.eq(flat(m.blocks._children["1"].norm2.bias)[3], 0)
    -- "timm": trunc_normal(0.02) weights, zero biases
    local t = nn.ViT { image_size = 16, patch_size = 4, channels = 3, num_classes = 10, dim = 64, seed = 5, init = "timm" }
    local _, tsd, tmx = stats(t.blocks._children["0"].mlp.fc1.weight)
    assert(math.abs(tsd - 0.02) < 0.002 and tmx <= 2, ("timm fc1 sd %.4f"):format(tsd))
    local _, _, tb = stats(t.blocks._children["0"].mlp.fc1.bias)
    T.eq(tb, 0)
    -- the seed alone decides the weights, whatever else drew from the global generator
    al.manual_seed(77)
    local m2 = nn.ViT { image_size = 16, patch_size = 4, channels = 3, num_classes = 10, dim = 64, seed = 5 }
    T.eq(flat(m2.blocks._children["1"].attn.proj.weight), flat(m.blocks._children["1"].attn.proj.weight))
    assert(tostring(m):find("init=torch", 1, true), tostring(m))
  end },
  { name = "ViT text model: embed_std sets the token embedding's spread under either init", fn = function()
    for _, init in ipairs({ "torch", "timm" }) do
      for _, std in ipairs({ 0.02, 1 }) do
        local m = nn.ViT { vocab_size = 500, seq_len = 8, num_classes = 3, dim = 32, seed = 2, init = init, embed_std = std }
        local v = flat(m.tok_embed.weight)
        local s2 = 0
        for _, x in ipairs(v) do s2 = s2 + x * x end
        local sd = math.sqrt(s2 / #v)
        -- timm's draw is truncated at +-2 (absolute): at std 1 that trims the tails (sd ~0.88)
        local want = (init == "timm" and std == 1) and 0.88 or std
        assert(math.abs(sd - want) < 0.05 * want, ("%s embed_std %g: sd %.4f, want %.4f"):format(init, std, sd, want))
      end
    end
  end },
  { name = "unknown init or bad embed_std: one line naming the problem", fn = function()
    T.raises(function() nn.ViT { image_size = 16, patch_size = 4, num_classes = 2, init = "xavier" } end,
      "ViT: unknown init 'xavier'; known: timm, torch")
    T.raises(function() al.train.config({ init = "kaiming" }) end, "train: unknown init 'kaiming'; known: timm, torch")
    T.raises(function() al.train.config({ embed_std = 0 }) end, "train: embed_std must be a number > 0")
    T.raises(function() al.train.config({ decay_all = 1 }) end, "train: decay_all must be true or false, got 1")
    local msg = T.raises(function() al.train.config({ init = "x" }) end, "unknown init")
    assert(not msg:find("\n"), "one line: " .. msg)
  end },
  { name = "train recipe: init, embed_std, decay_all reach the model and the optimizer groups", fn = function()
    local c = al.train.config({ dataset = "fashion_mnist" })
    T.eq({ c.init, c.embed_std, c.decay_all, c.beta1, c.beta2, c.adam_eps }, { "torch", 0.02, false, 0.9, 0.999, 1e-8 })
    local m = al.train.model(al.train.config({ init = "timm", seed = 4 }), { num_classes = 10, size = 28, channels = 1 })
    T.eq(m.cfg.init, "timm")
    T.eq(flat(m.head.bias)[1], 0)
    local n = #m:parameters()
    local g = al.train.param_groups(m, 0.05, false)
    T.eq({ #g, g[1].weight_decay, g[2].weight_decay, #g[1].params + #g[2].params }, { 2, 0.05, 0, n })
    local all = al.train.param_groups(m, 0.05, true)
    T.eq({ #all, all[1].weight_decay, #all[1].params }, { 1, 0.05, n })
  end },
  { name = "ViT: patch embedding equals the strided convolution it stands for", fn = function()
    al.manual_seed(2)
    local m = nn.ViT { image_size = 8, patch_size = 4, channels = 2, num_classes = 3, dim = 8, heads = 2, seed = 2 }
    local x = al.randn({ 1, 2, 8, 8 })
    local tok = m:embed_patches(x)                     -- (1, 4, 8)
    local w, b = m.patch_embed.proj.weight, m.patch_embed.proj.bias
    -- patch (row 2, col 1) is token 3 (row-major grid); channel d = sum_{c,i,j} w[d,c,i,j] x[c,4+i,j] + b[d]
    local xt, wt, bt = x:totable()[1], w:totable(), b:totable()
    for d = 1, 8 do
      local s = bt[d]
      for c = 1, 2 do for i = 1, 4 do for j = 1, 4 do s = s + wt[d][c][i][j] * xt[c][4 + i][j] end end end
      T.close(tok:totable()[1][3][d], s, 1e-5, 1e-5)
    end
  end },
  { name = "unknown normalizer lists the valid names", fn = function()
    T.raises(function() nn.MultiHeadAttention { dim = 8, heads = 2, normalizer = "sparsmax" } end,
      "unknown normalizer 'sparsmax'; valid: softmax, sparsemax, entmax15, hae, entmax:<alpha>, topk:<ratio>")
    -- the name is fine, its parameter is not: the message says so (not "unknown normalizer")
    local e = T.raises(function() nn.MultiHeadAttention { dim = 8, heads = 2, normalizer = "topk:1.5" } end,
      "normalizer 'topk:1.5': the ratio of topk:<ratio> must be in (0, 1] (the share of keys kept), got '1.5'")
    assert(not e:find("unknown normalizer", 1, true), e)
    e = T.raises(function() nn.MultiHeadAttention { dim = 8, heads = 2, normalizer = "topk:0" } end, "ratio of topk:<ratio>")
    assert(not e:find("unknown normalizer", 1, true), e)
    T.raises(function() nn.MultiHeadAttention { dim = 8, heads = 2, normalizer = "entmax:0.9" } end,
      "the alpha of entmax:<alpha> must be a number from 1.0001 (nearer 1, float32 cannot compute it accurately: use softmax) to 3.4e38 (what a float32 holds), got '0.9'")
    -- refused when the model is built, as the C kernels would at its first forward
    T.raises(function() nn.MultiHeadAttention { dim = 8, heads = 2, normalizer = "entmax:1.00001" } end,
      "got '1.00001'")
    nn.MultiHeadAttention { dim = 8, heads = 2, normalizer = "entmax:1.0001" }
  end },
  { name = "hae alphas start at 1.5 and are trained by the optimizer", fn = function()
    al.manual_seed(4)
    local a = nn.MultiHeadAttention { dim = 8, heads = 2, normalizer = "hae" }
    T.close(a:alphas():totable(), { 1.5, 1.5 }, 1e-7)
    local opt = al.optim.AdamW(a:parameters(), { lr = 0.1 })
    local x = al.randn({ 2, 5, 8 })
    local loss = al.sum(a(x) ^ 2)
    loss:backward()
    assert(a.normalizer.pre_alpha.grad, "pre_alpha got no gradient")
    opt:step()
    local al1 = a:alphas():totable()
    assert(al1[1] ~= 1.5 and al1[1] > 1.05 and al1[1] < 1.95, "alpha did not move: " .. al1[1])
  end },
  { name = "attention with a key mask ignores masked keys exactly", fn = function()
    al.manual_seed(5)
    for _, name in ipairs({ "softmax", "sparsemax", "entmax15", "hae", "topk:0.5" }) do
      local a = nn.MultiHeadAttention { dim = 8, heads = 2, normalizer = name, keep_attention = true }
      local x = al.randn({ 1, 4, 8 })
      local mask = al.tensor({ { 1, 1, 1, 0 } })
      local y = a(x, { key_mask = mask })
      local p = a.last_attention:totable()[1]
      for h = 1, 2 do for q = 1, 4 do T.eq(p[h][q][4], 0, 0, name .. " weight on a masked key") end end
      -- changing the masked token's value leaves the real tokens' outputs unchanged
      local x2 = x:clone(); x2[1][4] = al.randn({ 8 })
      local y2 = a(x2, { key_mask = mask })
      T.close(flat(y:narrow(2, 1, 3)), flat(y2:narrow(2, 1, 3)), 1e-6, 0, name)
    end
  end },
  { name = "support statistics: softmax is dense, topk 0.25 of 17 keys keeps 5", fn = function()
    al.manual_seed(6)
    local m = nn.ViT { image_size = 28, patch_size = 7, channels = 1, num_classes = 10, normalizer = "topk:0.25", seed = 6 }
    m:track_support(true)
    al.no_grad(function() m(al.randn({ 3, 1, 28, 28 })) end)
    local st = m:support_stats()
    T.close(st[1].mean_all, 5 / 17, 1e-6)
    local s = nn.ViT { image_size = 28, patch_size = 7, channels = 1, num_classes = 10, seed = 6 }
    s:track_support(true)
    al.no_grad(function() s(al.randn({ 3, 1, 28, 28 })) end)
    T.close(s:support_stats()[2].mean_all, 1.0, 1e-6)
  end },
  { name = "fused attention core equals the unfused op chain (every normalizer, masks, keep, alpha grads)", fn = function()
    -- al.attention vs matmul / scale / normalizer / matmul with the same weights: the forward
    -- is the same arithmetic (scale 0.25 is a power of two), gradients agree to rounding
    local function maxdiff(a, b) return al.max(al.abs(a - b)):item() end
    -- every name the table gives (a normalizer added there is covered without an edit here)
    local VALUES = { alpha = "1.3", ratio = "0.25" }
    for _, spelled in ipairs(nn.Normalizer.NAMES) do
      local name = spelled:gsub("<(%w+)>", function(p) return assert(VALUES[p], "no test value for <" .. p .. ">") end)
      al.manual_seed(11)
      local a = nn.MultiHeadAttention { dim = 32, heads = 2, normalizer = name, keep_attention = true }
      if name == "hae" then a.normalizer.pre_alpha:copy_(al.tensor({ 0.7, -0.4 })) end
      local x = al.randn({ 3, 6, 32 })
      local g = al.randn({ 3, 6, 32 })
      local opts = { key_mask = al.tensor({ { 1, 1, 0, 1, 1, 1 }, { 1, 1, 1, 1, 1, 1 }, { 0, 0, 0, 0, 0, 0 } }),
                     keep = al.tensor({ { 1, 1, 1, 1, 0, 1 }, { 1, 1, 1, 1, 1, 1 }, { 1, 1, 1, 1, 1, 1 } }) }
      local r = {}
      for i, unfused in ipairs({ false, true }) do
        a.unfused = unfused
        a.track_support = true; a:reset_support()
        local xx = x:clone():requires_grad_()
        for _, p in ipairs(a:parameters()) do p.grad = nil end
        local y = a(xx, opts)
        al.sum(y * g):backward()
        r[i] = { y = y:detach(), p = a.last_attention, gx = xx.grad, gw = a.qkv.weight.grad,
                 ga = name == "hae" and a.normalizer.pre_alpha.grad or nil, sup = a:support_stats() }
      end
      T.eq(maxdiff(r[1].y, r[2].y), 0, 0, name .. " output")
      T.eq(maxdiff(r[1].p, r[2].p), 0, 0, name .. " weights")
      T.close(flat(r[1].gx), flat(r[2].gx), 1e-5, 1e-4, name .. " grad x")
      T.close(flat(r[1].gw), flat(r[2].gw), 1e-5, 1e-4, name .. " grad qkv.weight")
      if r[1].ga then T.close(flat(r[1].ga), flat(r[2].ga), 1e-6, 1e-4, name .. " grad pre_alpha") end
      T.close(r[1].sup.all, r[2].sup.all, 0, 0, name .. " support")
      T.close(r[1].sup.real, r[2].sup.real, 0, 0, name .. " support (real keys)")
      -- masked keys and the all-masked batch row get weight exactly 0
      local p = r[1].p:totable()
      for h = 1, 2 do for q = 1, 6 do
        T.eq(p[1][h][q][3], 0, 0, name .. " masked key"); T.eq(p[1][h][q][5], 0, 0, name .. " halted key")
        for k = 1, 6 do T.eq(p[3][h][q][k], 0, 0, name .. " all-masked row") end
      end end
    end
  end },
  { name = "a ViT training step is bitwise identical at 1 and 2 threads (fused attention, layer norm, gelu)", fn = function()
    local function run(threads, name)
      al.set_num_threads(threads)
      local m = nn.ViT { image_size = 16, patch_size = 4, channels = 3, num_classes = 10, normalizer = name, seed = 3 }
      local x = al.randn({ 64, 3, 16, 16 }, { generator = al.Generator(9) })
      local y = al.randint(1, 10, { 64 }, { generator = al.Generator(10) })
      local opt = al.optim.AdamW(m:parameters(), { lr = 1e-3 })
      for _ = 1, 2 do
        local l = al.cross_entropy(m(x), y)
        opt:zero_grad(); l:backward(); opt:step()
      end
      al.set_num_threads(1)
      return flat(m(x):detach())
    end
    T.need_cores(2)
    for _, name in ipairs({ "softmax", "hae", "topk:0.25" }) do
      T.eq(run(2, name), run(1, name), 0, name)
    end
  end },
  { name = "al.attention: empty batch or sequence, alpha of any shape with H elements, errors name shapes", fn = function()
    local o, p = al.attention(al.randn({ 0, 5, 12 }), { heads = 2 })
    T.eq(o:shape(), { 0, 5, 4 }); T.eq(p:shape(), { 0, 2, 5, 5 })
    o, p = al.attention(al.randn({ 2, 0, 12 }), { heads = 2 })
    T.eq(o:shape(), { 2, 0, 4 }); T.eq(p:shape(), { 2, 2, 0, 0 })
    local a = al.tensor({ { { 1.3 } }, { { 1.6 } } }):requires_grad_()
    local x = al.randn({ 2, 4, 12 }):requires_grad_()
    al.sum(al.attention(x, { heads = 2, normalizer = "entmax_bisect", alpha = a }) ^ 2):backward()
    T.eq(a.grad:shape(), { 2, 1, 1 })
    local q = al.randn({ 2, 4, 12 })
    for _, nm in ipairs({ "softmax", "sparsemax", "topk_softmax" }) do   -- weights kept or in scratch: same numbers
      local ratio = nm == "topk_softmax" and 0.5 or nil   -- (refused where it does not apply)
      local full = al.attention(q, { heads = 2, normalizer = nm, ratio = ratio })
      local lean = al.no_grad(function() return al.attention(q, { heads = 2, normalizer = nm, ratio = ratio, weights = false }) end)
      T.eq(flat(lean), flat(full), 0, nm .. " without weights")
    end
    T.raises(function() al.attention(q, { heads = 5 }) end, "qkv float32 (2,4,12): last dim must be 3*D with D a multiple of heads 5")
    T.raises(function() al.attention(q, { heads = 2, normalizer = "entmax_bisect", alpha = 0.9 }) end, "alpha must be > 1 and finite, got 0.9 (head 1)")
    T.raises(function() al.attention(q, { heads = 2, normalizer = "topk_softmax", ratio = 0 }) end, "ratio must be in (0, 1]")
    T.raises(function() al.attention(q, { heads = 2, normalizer = "foo" }) end, "unknown normalizer 'foo'")
    T.raises(function() al.attention(q, { heads = 2, mask = al.ones({ 2, 5 }) }) end, "key mask must be (B,N) = (2,4), got float32 (2,5)")
    T.raises(function() al.attention(q, { heads = 2, normalizer = "entmax_bisect", alpha = al.tensor({ 1.5, 1.5, 1.5 }) }) end,
      "one value per head (2), got float32 (3)")
    -- an int64 alpha is taken as float32 by both paths (al.entmax_bisect took it, al.attention
    -- refused it "must be float32"), as the entmax package converts an integer alpha
    local ai, af = al.tensor({ 2, 3 }, { dtype = "int64" }), al.tensor { 2, 3 }
    local oi, pi = al.attention(q, { heads = 2, normalizer = "entmax_bisect", alpha = ai })
    local of, pf = al.attention(q, { heads = 2, normalizer = "entmax_bisect", alpha = af })
    T.eq(flat(oi), flat(of), 0, "attention, int64 alpha: out")
    T.eq(flat(pi), flat(pf), 0, "attention, int64 alpha: weights")
    local s = al.randn({ 2, 3, 5 })
    T.eq(flat(al.entmax_bisect(s, ai:reshape { 2, 1, 1 })), flat(al.entmax_bisect(s, af:reshape { 2, 1, 1 })), 0,
      "entmax_bisect, int64 alpha")
    local qg = q:detach():requires_grad_()
    al.sum(al.attention(qg, { heads = 2, normalizer = "entmax_bisect", alpha = ai }) ^ 2):backward()
    T.truthy(qg.grad ~= nil, "qkv's gradient with an int64 alpha")
    T.raises(function() al.attention(q, { heads = 2, normalizer = "entmax_bisect", alpha = al.tensor({ 1, 2 }, { dtype = "int64" }) }) end,
      "alpha must be > 1 and finite, got 1 (head 1)")
    T.raises(function() al.entmax_bisect(s, al.tensor({ 1 }, { dtype = "int64" })) end, "alpha must be > 1 and finite, got 1")
  end },
  { name = "a fixed-seed ViT training run is bitwise the same at 1 and 2 threads, at each FMA CPU level the machine has (avx512, avx2), under OpenBLAS's own kernel and OPENBLAS_CORETYPE=Haswell", fn = function()
    -- Each configuration in its own process (the CPU level and the OpenBLAS kernel are chosen when
    -- the library loads): 12 AdamW steps of the study's compact classifier on random images,
    -- every loss printed to 17 digits. The FMA levels share one matrix kernel and the model's
    -- products never reach OpenBLAS, so all of them must agree to the last bit.
    local host = T.HOST
    local script = T.tmpscript([[
local al = require "attnlab"
io.write("threads ", al.get_num_threads(), " level ", al.config().cpu_level, "\n")
al.manual_seed(7)
local m = al.nn.ViT { image_size = 32, patch_size = 8, channels = 3, num_classes = 10, normalizer = "topk:0.25", seed = 7 }
local opt = al.optim.AdamW(m:parameters(), { lr = 1e-3, weight_decay = 0.05 })
local labels = {}
for i = 1, 64 do labels[i] = (i * 7) % 10 + 1 end
local x, y = al.randn({ 64, 3, 32, 32 }), al.tensor(labels, { dtype = "int64" })
local out = {}
for step = 1, 12 do
  local loss = al.cross_entropy(m(x), y)
  opt:zero_grad(); loss:backward(); opt:step()
  out[#out + 1] = ("%.17g"):format(loss:item())
end
io.write(table.concat(out, " "), "\n")
]])
    local levels = { "avx512", "avx2" }
    if al.config().cpu_best ~= "avx512" then levels = { "avx2" } end   -- (a CPU without AVX-512 cannot run that level)
    if al.config().cpu_best == "generic" then os.remove(script); T.skip("this CPU has no AVX2 (SKIPPED LOUDLY)") end
    if al.config().cores < 2 then os.remove(script); T.need_cores(2) end
    local want, first
    for _, lv in ipairs(levels) do
      for _, blas in ipairs({ "OPENBLAS_CORETYPE=Haswell", "-u OPENBLAS_CORETYPE" }) do
        for _, th in ipairs({ 1, 2 }) do
          local what = ("ATTNLAB_CPU=%s %s threads=%d"):format(lv, blas, th)
          local cmd = ("env %s ATTNLAB_CPU=%s ATTNLAB_NUM_THREADS=%d %s %s"):format(blas, lv, th, host, script)
          local out, code = T.sh(cmd)
          if code ~= 0 then os.remove(script); error(what .. ": exited " .. tostring(code) .. ": " .. out) end
          local ran = ("threads %d level %s\n"):format(th, lv)   -- what the child really ran with
          if not out:find(ran, 1, true) then os.remove(script); error(what .. ": the child did not run with " .. ran .. out) end
          out = out:match("[%d%.e%-+ ]+\n$") or out
          if not want then want, first = out, what
          elseif out ~= want then os.remove(script); error(("%s gave\n%s, %s gave\n%s"):format(first, want, what, out)) end
        end
      end
    end
    os.remove(script)
  end },
  { name = "every normalizer trains to the same bits at the avx512 and avx2 levels (hae's Halley steps and entmax15's backward use AVX-512's approximate reciprocals, which the AVX2 level computes bit for bit)", fn = function()
    -- One child per level: each normalizer of the study (and alpha-entmax below and above 2)
    -- trains a few AdamW steps from the same seed at 17 and 65 tokens, 65 from a fresh model's
    -- flat rows (every score a candidate of the support); every loss and the alphas printed to
    -- 17 digits.
    if al.config().cpu_best ~= "avx512" then T.skip("this CPU has no AVX-512: one level to compare (SKIPPED LOUDLY)") end
    local script = T.tmpscript([[
local al = require "attnlab"
local out = { al.config().cpu_level }
for _, nm in ipairs({ "softmax", "sparsemax", "entmax15", "hae", "topk:0.125", "entmax:1.3", "entmax:2.5" }) do
  for _, patch in ipairs({ 8, 4 }) do
    al.manual_seed(11)
    local m = al.nn.ViT { image_size = 32, patch_size = patch, channels = 3, num_classes = 10, normalizer = nm, seed = 11 }
    local opt = al.optim.AdamW(m:parameters(), { lr = 2e-3, weight_decay = 0.05 })
    local labels = {}
    for i = 1, 24 do labels[i] = (i * 3) % 10 + 1 end
    local x, y = al.randn({ 24, 3, 32, 32 }), al.tensor(labels, { dtype = "int64" })
    for _ = 1, 5 do
      local loss = al.cross_entropy(m(x), y)
      opt:zero_grad(); loss:backward(); opt:step()
      out[#out + 1] = ("%s/%d %.17g"):format(nm, patch, loss:item())
    end
    for _, layer in ipairs(m:alphas()) do   -- (per layer: a list of per-head alphas, or nil)
      for _, v in ipairs(type(layer) == "table" and layer or {}) do out[#out + 1] = ("%s/%d alpha %.17g"):format(nm, patch, v) end
    end
  end
end
io.write(table.concat(out, "\n"), "\n")
]])
    local got = {}
    for _, lv in ipairs({ "avx512", "avx2" }) do
      local out, code = T.sh(("env ATTNLAB_CPU=%s ATTNLAB_NUM_THREADS=1 %s %s"):format(lv, T.HOST, script))
      if code ~= 0 then os.remove(script); error(lv .. ": exited " .. tostring(code) .. ": " .. out) end
      if not out:find("^" .. lv .. "\n") then os.remove(script); error(lv .. ": the child ran at another level: " .. out) end
      got[lv] = out:gsub("^%w+\n", "")
    end
    os.remove(script)
    local a, b = {}, {}
    for line in got.avx512:gmatch("[^\n]+") do a[#a + 1] = line end
    for line in got.avx2:gmatch("[^\n]+") do b[#b + 1] = line end
    T.truthy(#a >= 70, "the child printed every loss: " .. #a .. " lines")
    T.eq(#b, #a, "as many lines at both levels")
    for i = 1, #a do
      if a[i] ~= b[i] then error(("avx512 and avx2 differ first at %s (avx512) / %s (avx2)"):format(a[i], b[i])) end
    end
  end },
  { name = "ATTNLAB_SGEMM overrides the GEMM crossover for the process, al.config() and training records say so, a bad value is one line and ignored", fn = function()
    local host = T.HOST
    -- the path al_sgemm takes for the model's qkv product (2176 x 192 x 64) and the config's rule
    local probe = T.tmpscript([[
local al = require "attnlab"
local _, path = al.bench_sgemm(2176, 192, 64, false, true, 1)
io.write(path, "|", al.config().gemm_rule, "|", require("attnlab.run.train").machine().gemm_rule, "\n")
]])
    local function run(env)
      local out, code = T.sh(("env %s %s %s 2>&1"):format(env, host, probe))
      T.eq(code, 0, env .. ": " .. out)
      return out
    end
    local default = run("-u ATTNLAB_SGEMM")
    T.truthy(default:match("^attnlab|N <= 512"), "default: the own kernel by the crossover: " .. default)
    local blas = run("ATTNLAB_SGEMM=openblas")
    T.truthy(blas:match("^openblas|no shape: OpenBLAS for every product %(ATTNLAB_SGEMM=openblas%)|no shape"), "openblas: " .. blas)
    local own = run("ATTNLAB_SGEMM=attnlab")
    T.truthy(own:match("^attnlab|every shape %(ATTNLAB_SGEMM=attnlab%)|every shape"), "attnlab: " .. own)
    local bad = run("ATTNLAB_SGEMM=fastest")
    T.eq(bad, "attnlab: ATTNLAB_SGEMM=fastest is not a path (auto, attnlab or openblas); using auto\n"
      .. "attnlab|N <= 512, or N <= 768 and K <= 768 (else OpenBLAS); ATTNLAB_SGEMM=fastest is not a path: ignored|"
      .. "N <= 512, or N <= 768 and K <= 768 (else OpenBLAS); ATTNLAB_SGEMM=fastest is not a path: ignored\n")
    -- the whole model on OpenBLAS trains to the same losses, to float32 rounding (not bitwise:
    -- that is the own kernel's fixed chains)
    T.write_file(probe, [[
local al = require "attnlab"
local m = al.nn.ViT { image_size = 32, patch_size = 8, channels = 3, num_classes = 10, normalizer = "entmax15", seed = 3 }
local opt = al.optim.AdamW(m:parameters(), { lr = 1e-3, weight_decay = 0.05 })
al.manual_seed(3)
local labels = {}
for i = 1, 64 do labels[i] = (i * 3) % 10 + 1 end
local x, y = al.randn({ 64, 3, 32, 32 }), al.tensor(labels, { dtype = "int64" })
for step = 1, 4 do
  local loss = al.cross_entropy(m(x), y)
  opt:zero_grad(); loss:backward(); opt:step()
  io.write(("%.9g "):format(loss:item()))
end
]])
    local function losses(env)
      local t = {}
      for v in run(env):gmatch("%S+") do t[#t + 1] = tonumber(v) end
      T.eq(#t, 4, env .. " printed 4 losses")
      return t
    end
    local a, b = losses("-u ATTNLAB_SGEMM"), losses("ATTNLAB_SGEMM=openblas")
    for i = 1, 4 do
      T.truthy(math.abs(a[i] - b[i]) <= 1e-5 * math.abs(a[i]), ("step %d: own %.9g, OpenBLAS %.9g"):format(i, a[i], b[i]))
    end
    os.remove(probe)
  end },
  -- ---- building on attnlab as in PyTorch (a researcher's audit) --------------------------------
  { name = "assignments register as in PyTorch: self.fc = Linear(...) is a child, a leaf that requires grad a parameter", fn = function()
    local M = nn.class("AssignM", nn.Module)
    function M:init()
      self.fc = nn.Linear(4, 2)                                  -- was a plain field: never trained
      self.temp = al.ones({ 1 }, { requires_grad = true })
      self.k, self.plain = 3, al.ones({ 2 })                     -- a number and a constant tensor stay fields
    end
    function M:forward(x) return self.fc(x) * self.temp end
    local m = M()
    local names = {}
    for _, np in ipairs(m:named_parameters()) do names[#names + 1] = np[1] end
    T.eq(names, { "temp", "fc.weight", "fc.bias" })
    T.eq(m:num_parameters(), 11)
    local loss = al.sum(m(al.ones({ 3, 4 })))
    loss:backward()
    for _, p in ipairs(m:parameters()) do T.truthy(p.grad, "every parameter gets a gradient") end
    local sd = m:state_dict()
    T.truthy(sd["fc.weight"] and sd.temp and not sd.plain, "state_dict has the registered tensors only")
  end },
  { name = "weight tying: param(name, other.weight) and other.weight assigned share one parameter, updated once", fn = function()
    for _, how in ipairs({ "param", "assign" }) do
      local T2 = nn.class("Tied" .. how, nn.Module)
      function T2:init()
        self.emb = nn.Linear(3, 3, { bias = false })
        self.head = nn.Linear(3, 3, { bias = false })
        if how == "param" then self.head:param("weight", self.emb.weight) else self.head.weight = self.emb.weight end
      end
      function T2:forward(x) return self.head(self.emb(x)) end
      local m = T2()
      T.eq(#m:parameters(), 1, how .. ": one parameter")
      T.truthy(m.head.weight == m.emb.weight, how .. ": the same tensor")
      local sd = m:state_dict()
      T.truthy(sd["emb.weight"] == sd["head.weight"], how .. ": both names in state_dict, one tensor (as PyTorch)")
      -- one AdamW step of lr 0.1 moves every entry by ~lr (sign of the summed gradient), not 2 lr
      local w0 = m.emb.weight:clone()
      local opt = al.optim.AdamW(m:parameters(), { lr = 0.1, weight_decay = 0 })
      al.sum(m(al.randn({ 4, 3 }, { generator = al.Generator(1) }))):backward()
      opt:step()
      local moved = al.max(al.abs(m.emb.weight - w0)):item()
      T.close(moved, 0.1, 1e-4, 0, how .. ": updated once")
    end
  end },
  { name = "a registered name assigned a value of another kind is one line; an op's result is not a parameter", fn = function()
    local lin = nn.Linear(2, 2)
    lin.weight = al.zeros({ 2, 2 })
    T.raises(function() lin:parameters() end, 'Linear.weight is a parameter and was assigned a tensor that does not require grad')
    local lin2 = nn.Linear(2, 2)
    lin2.weight = lin2.weight * 2
    T.raises(function() lin2:state_dict() end, "is the result of an op (not a leaf)")
    local seq = nn.Sequential(nn.Linear(2, 2))
    seq["0"] = 5
    T.raises(function() seq(al.ones({ 1, 2 })) end, 'Sequential.0 is a child module, but was assigned 5')
    -- a child replaced by assignment runs in the forward (call_child used the old one)
    local seq2 = nn.Sequential(nn.Linear(2, 2))
    local id = nn.Identity and nn.Identity() or nil
    if id then
      seq2["0"] = id
      T.eq(flat(seq2(al.ones({ 1, 2 }))), { 1, 1 })
      T.eq(#seq2:parameters(), 0)
    end
  end },
  { name = "Sequential: seq[i] and #seq, 1-based as seq:get(i)", fn = function()
    local a, b = nn.Linear(2, 3), nn.ReLU()
    local seq = nn.Sequential(a, b)
    T.truthy(seq[1] == a and seq[2] == b and seq[3] == nil and seq[0] == nil, "seq[i]")
    T.eq(#seq, 2)
    seq:append(nn.Linear(3, 1))
    T.eq(#seq, 3)
    T.truthy(seq[3] == seq:get(3), "append")
  end },
  { name = "Module:requires_grad_ freezes and unfreezes; frozen parameters are not stepped", fn = function()
    al.manual_seed(2)
    local m = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 1))
    m:get(1):requires_grad_(false)
    local opt = al.optim.AdamW(m:parameters(), { lr = 0.1 })
    local w1, w2 = m[1].weight:clone(), m[2].weight:clone()
    al.sum(m(al.ones({ 2, 3 }))):backward()
    T.truthy(m[1].weight.grad == nil and m[2].weight.grad ~= nil, "no gradient for the frozen layer")
    opt:step()
    T.eq(flat(m[1].weight), flat(w1))
    T.truthy(al.max(al.abs(m[2].weight - w2)):item() > 0, "the other layer moved")
    m:requires_grad_()
    T.truthy(m[1].weight.requires_grad, "unfrozen")
    -- freezing drops a gradient already there, so the next step cannot move the frozen layer
    al.sum(m(al.ones({ 2, 3 }))):backward()
    m:get(1):requires_grad_(false)
    T.truthy(m[1].weight.grad == nil and m[1].bias.grad == nil, "a frozen parameter keeps no gradient")
    T.raises(function() m:requires_grad_("no") end, "Sequential:requires_grad_: expects true or false")
  end },
  { name = "optimizers: a non-contiguous parameter or two over one memory refused up front; param() copies a view", fn = function()
    local t = al.tensor({ { 1, 2, 3 }, { 4, 5, 6 } })
    local M = nn.class("NonContig", nn.Module)
    function M:init() self:param("w", t:transpose(1, 2)) end
    local m = M()
    T.truthy(m.w:is_contiguous(), "param() made it contiguous")
    T.eq(flat(m.w), { 1, 4, 2, 5, 3, 6 })
    al.optim.AdamW(m:parameters()):step()
    local v = al.zeros({ 3, 2 }):transpose(1, 2)
    v:requires_grad_(true)
    T.raises(function() al.optim.AdamW({ v }) end, "AdamW: group 1 entry 1 is a non-contiguous tensor (2,3")
    T.raises(function() al.optim.SGD({ v }) end, "SGD: group 1 entry 1 is a non-contiguous tensor")
    local w = al.zeros({ 2, 2 }, { requires_grad = true })
    local alias = w:detach(); alias:requires_grad_(true)
    T.raises(function() al.optim.AdamW({ w, alias }) end, "group 1 entry 2 shares its memory with group 1 entry 1")
    -- the C step's own message ends with what it wants
    T.raises(function() al.adamw_step(v, al.zeros({ 2, 3 }), al.zeros({ 2, 3 }), al.zeros({ 2, 3 }), 0.1, 0.9, 0.999, 1e-8, 0, 1) end,
      "want a contiguous float32 tensor")
  end },
  { name = "CosineWarmup keeps a group lr set by hand as that group's base (PyTorch's LambdaLR initial_lr)", fn = function()
    local a, b = al.zeros({ 2 }, { requires_grad = true }), al.zeros({ 2 }, { requires_grad = true })
    local opt = al.optim.AdamW({ { params = { a } }, { params = { b } } }, { lr = 1e-3 })
    opt.param_groups[2].lr = 5e-4
    local sched = al.optim.CosineWarmup(opt, { warmup = 0, total = 10 })
    T.close(opt.param_groups[1].lr, 1e-3, 1e-15)
    T.close(opt.param_groups[2].lr, 5e-4, 1e-15)
    for _ = 1, 5 do sched:step() end
    T.close(opt.param_groups[2].lr / opt.param_groups[1].lr, 0.5, 1e-12)
    opt.param_groups[1].lr = "x"
    T.raises(function() al.optim.CosineWarmup(opt, { total = 10 }) end, "CosineWarmup: group 1's lr must be a finite number >= 0, got a string")
  end },
  { name = "model:alphas() with a normalizer of the user's own: nil for that layer, no crash", fn = function()
    local m = nn.ViT { image_size = 8, patch_size = 4, channels = 1, num_classes = 3, dim = 16, depth = 2, heads = 2,
                       normalizer = "hae", seed = 1 }
    local Own = nn.class("OwnNorm", nn.Module)
    function Own:forward(s) return al.softmax(s) end
    m:block(1).attn:add("normalizer", Own())
    local a = m:alphas()
    T.truthy(a[1] == nil and type(a[2]) == "table" and #a[2] == 2, "layer 1 none, layer 2 hae's two heads")
    T.truthy(m:block(1).attn:alphas() == nil, "MHA:alphas")
  end },
  { name = "train.evaluate leaves the model in the mode it came in", fn = function()
    local ds = al.data.from_tensors(al.randn({ 10, 1, 8, 8 }, { generator = al.Generator(1) }),
                                    al.tensor({ 1, 2, 1, 2, 1, 2, 1, 2, 1, 2 }, { dtype = "int64" }))
    local m = nn.ViT { image_size = 8, patch_size = 4, channels = 1, num_classes = 2, dim = 16, depth = 1, heads = 2, seed = 1 }
    m:eval()
    al.train.evaluate(m, ds, { eval_batch = 4 })
    T.eq(m.training, false)
    m:train()
    al.train.evaluate(m, ds, { eval_batch = 4 })
    T.eq(m.training, true)
  end },
  { name = "train.evaluate: accuracy, mean loss over examples (uneven batches), exact-records accuracy", fn = function()
    -- a model whose logits are its input: rows of x are the logits of 5 examples (3 classes),
    -- evaluated in batches of 2, 2, 1. Labels make examples 1, 2 and 4 right (argmax = y).
    local X = { { 2.0, 0.5, -1.0 }, { 0.1, 0.3, 3.0 }, { 1.0, 2.0, 0.0 }, { -0.5, 1.5, 0.2 }, { 0.0, 0.0, 4.0 } }
    local Y = { 1, 3, 3, 2, 1 }
    local ds = al.data.from_tensors(al.tensor(X), al.tensor(Y, { dtype = "int64" }))
    ds.exact_records = 3                              -- the first 3 records are the exact test set
    local model = setmetatable({ training = false }, { __call = function(_, x) return x end })
    function model:eval() self.training = false end
    function model:train(on) self.training = on ~= false end
    local r = al.train.evaluate(model, ds, { eval_batch = 2 })
    -- the loss by hand in doubles: mean over the 5 examples of logsumexp(x_i) - x_i[y_i]
    local loss = 0
    for i, row in ipairs(X) do
      local se = 0
      for _, v in ipairs(row) do se = se + math.exp(v) end
      loss = loss + math.log(se) - row[Y[i]]
    end
    T.eq({ r.n, r.accuracy }, { 5, 3 / 5 })
    T.close(r.loss, loss / 5, 1e-6)
    T.eq({ r.n_exact, r.accuracy_exact }, { 3, 2 / 3 }, nil, "exact records 1-3 (two right) ")
  end },
  { name = "s2s.evaluate leaves the model in the mode it came in, on an error too", fn = function()
    local s2s = require "attnlab.s2s"
    local ds = s2s.synthetic_dataset({ n = 6, size = 16 })
    local m = nn.ViT { image_size = 16, patch_size = 4, channels = 3, num_classes = 10, dim = 16, depth = 1, heads = 2, seed = 1 }
    m:eval()
    local e = s2s.evaluate(m, ds)
    T.eq(m.training, false, "eval in, eval out")
    T.eq(m:block(1).training, false, "and its blocks")
    m:train()
    T.eq(s2s.evaluate(m, ds).accuracy, e.accuracy, 0, "the same accuracy either way")
    T.eq(m.training, true, "train in, train out")
    m:state_dict()["head.bias"]:fill_(0 / 0)
    m:eval()
    T.raises(function() s2s.evaluate(m, ds) end, "s2s.evaluate: the model's logits hold NaN or inf")
    T.eq(m.training, false, "eval in, eval out after the error")
    m:train()
    T.raises(function() s2s.evaluate(m, ds) end, "s2s.evaluate: the model's logits hold NaN or inf")
    T.eq(m.training, true, "train in, train out after the error")
  end },
  { name = "s2s.save_model rebuilds a mixer set by hand with set_mixer; a mixer of the user's own is refused before writing", fn = function()
    local s2s = require "attnlab.s2s"
    local m = nn.ViT { image_size = 8, patch_size = 4, channels = 1, num_classes = 3, dim = 16, depth = 2, heads = 2, seed = 1 }
    m:block(2):set_mixer(nn.BiLSTM { dim = 16, heads = 2 })
    m:block(1):set_mixer(nn.BiMamba { dim = 16, heads = 2, d_state = 4, expand = 1 })
    local path = T.tmpname(".safetensors")
    s2s.save_model(path, m)
    local back = s2s.load_model(path)
    local x = al.randn({ 2, 1, 8, 8 }, { generator = al.Generator(3) })
    m:eval(); back:eval()
    T.eq(flat(back(x)), flat(m(x)))
    local Own = nn.class("OwnMixer", nn.Module)
    function Own:init() self.lin = nn.Linear(16, 16) end
    function Own:forward(y) return self.lin(y) end
    m:block(1):set_mixer(Own())
    os.remove(path)
    T.raises(function() s2s.save_model(path, m) end, "block 1's token mixer is OwnMixer, a module of your own, which no model file can rebuild")
    T.truthy(io.open(path) == nil, "nothing written")
    T.raises(function() al.checkpoint.save_vit(path, m) end, "a module of your own")
  end },

  -- The initialisers against their closed forms (sizes large enough that the sample statistics
  -- sit well inside the tolerances): trunc_normal_'s default bounds are timm's absolute [-2, 2]
  -- (std of N(0,1) truncated there: sqrt(1 - 4 phi(2) / (Phi(2) - Phi(-2))) = 0.87962); xavier's
  -- bound sqrt(6 / (fan_in + fan_out)) and std sqrt(2 / (fan_in + fan_out)), the receptive field
  -- counted in both fans; Linear's bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)), both signs;
  -- Embedding's N(0, 1).
  { name = "init: trunc_normal_ defaults, xavier bounds and std, Linear bias and Embedding draws by closed form", fn = function()
    local t = al.zeros({ 20000 })
    nn.init.trunc_normal_(t, 1, nil, nil, nil, al.Generator(3))       -- mean 0, [a, b] = [-2, 2]
    local _, sd, _, mn, mx = stats(t)
    T.close(sd, 0.87962, 0.015, 0, "trunc_normal_ std with the default bounds")
    T.truthy(mn >= -2 and mx <= 2 and mn < -1.9 and mx > 1.9, ("draws in [%g, %g], want to fill [-2, 2]"):format(mn, mx))
    -- (64, 32): fan_in 32, fan_out 64, bound sqrt(6/96) = 0.25, std sqrt(2/96) = 0.1443
    local w = al.zeros({ 64, 32 })
    nn.init.xavier_uniform_(w, nil, al.Generator(4))
    _, sd, _, mn, mx = stats(w)
    T.truthy(mn >= -0.25 and mx <= 0.25 and mn < -0.24 and mx > 0.24, ("xavier_uniform_ in [%g, %g], want [-0.25, 0.25]"):format(mn, mx))
    nn.init.xavier_uniform_(w, 2, al.Generator(4))                     -- gain 2: bound 0.5
    _, _, _, mn, mx = stats(w)
    T.truthy(mx <= 0.5 and mx > 0.48, ("xavier_uniform_ gain 2: max %g, want bound 0.5"):format(mx))
    nn.init.xavier_normal_(w, nil, al.Generator(5))
    _, sd = stats(w)
    T.close(sd, math.sqrt(2 / 96), 0.008, 0, "xavier_normal_ std")
    -- a conv weight (8, 4, 3, 3): fan_in 4*9 = 36, fan_out 8*9 = 72, bound sqrt(6/108)
    local cw = al.zeros({ 8, 4, 3, 3 })
    T.eq({ nn.init.fans(cw) }, { 36, 72 })
    nn.init.xavier_uniform_(cw, nil, al.Generator(6))
    _, _, _, mn, mx = stats(cw)
    T.truthy(mx <= math.sqrt(6 / 108) and mx > 0.9 * math.sqrt(6 / 108), ("conv xavier max %g"):format(mx))
    -- Linear(16, 4000): bias U(-0.25, 0.25)
    local lin = nn.Linear(16, 4000, { generator = al.Generator(7) })
    local bmean, _, _, bmn, bmx = stats(lin.bias)
    T.truthy(bmn >= -0.25 and bmx <= 0.25 and bmn < -0.24 and bmx > 0.24, ("bias in [%g, %g], want U(-0.25, 0.25)"):format(bmn, bmx))
    T.close(bmean, 0, 0.015, 0, "bias mean")
    local emean, esd = stats(nn.Embedding(500, 40, { generator = al.Generator(8) }).weight)
    T.close({ emean, esd }, { 0, 1 }, 0.03, 0, "Embedding N(0, 1)")
  end },
  -- PyTorch's default p = 0.5 (kept entries scaled by 1/(1-p) = 2); timm's Mlp drops after fc2
  -- too, so in training about half of the MLP's outputs are exactly 0 (fc2's bias makes an
  -- undropped output nonzero), and none in eval.
  { name = "Dropout's default p is 0.5; MLP drops after fc2 as well as after the activation", fn = function()
    al.manual_seed(12)
    local d = nn.Dropout(nil, { generator = al.Generator(2) })
    T.eq(d.p, 0.5)
    local y = flat(d(al.ones({ 4000 })))
    local zeros = 0
    for _, v in ipairs(y) do
      if v == 0 then zeros = zeros + 1 else T.eq(v, 2, 0, "kept entry scaled by 1/(1-p)") end
    end
    T.close(zeros / #y, 0.5, 0.04, 0, "share dropped")
    local mlp = nn.MLP { in_features = 4, hidden_features = 8, out_features = 4000, drop = 0.5 }
    local function zero_share(out)
      local n = 0
      for _, v in ipairs(flat(out)) do if v == 0 then n = n + 1 end end
      return n / out:numel()
    end
    local x = al.randn({ 1, 4 })
    T.close(zero_share(mlp(x)), 0.5, 0.05, 0, "training: outputs dropped")
    mlp:eval()
    T.eq(zero_share(mlp(x)), 0, 0, "eval: nothing dropped")
  end },
  -- strict is the default: with no options and with options that do not say strict
  { name = "load_state_dict is strict by default; buffers are in the state dict and load", fn = function()
    local m = nn.Linear(3, 2)
    T.raises(function() m:load_state_dict({ weight = al.zeros({ 2, 3 }) }) end, "missing keys: bias")
    T.raises(function() m:load_state_dict({ weight = al.zeros({ 2, 3 }) }, {}) end, "missing keys: bias")
    local M = nn.class("CountM", nn.Module)
    function M:init() self:param("w", al.zeros({ 2 })); self:buffer("count", al.tensor({ 5 }, { dtype = "int64" })) end
    local a = M()
    local sd = a:state_dict()
    T.truthy(al.is_tensor(sd.count), "the buffer is in the state dict")
    a:load_state_dict({ w = al.ones({ 2 }), count = al.tensor({ 7 }, { dtype = "int64" }) })
    T.eq(a.count:totable(), { 7 })
  end },
  { name = "format_count groups digits by three (the tree's parameter counts)", fn = function()
    T.eq({ nn.format_count(999), nn.format_count(1000), nn.format_count(123456), nn.format_count(1234567) },
      { "999", "1,000", "123,456", "1,234,567" })
    -- Linear(99, 1234): 99 * 1234 + 1234 = 123400 parameters
    T.truthy(tostring(nn.Linear(99, 1234)):find("[123,400 params]", 1, true), tostring(nn.Linear(99, 1234)))
  end },
  -- hae: alpha_h = 1.05 + 0.9 sigmoid(a_h), so alpha -> 1.05 and 1.95 at the ends and
  -- sigmoid(log 3) = 3/4 gives 1.725; entmax15 is alpha 1.5, entmax:<a> is a, softmax has none
  { name = "per-head alpha: hae's (1.05, 1.95) parametrisation at its ends and inside; fixed alphas", fn = function()
    local a = nn.MultiHeadAttention { dim = 8, heads = 4, normalizer = "hae" }
    a.normalizer.pre_alpha:copy_(al.tensor({ -100, 100, 0, math.log(3) }))
    T.close(a:alphas():totable(), { 1.05, 1.95, 1.5, 1.725 }, 1e-6)
    T.eq(nn.MultiHeadAttention { dim = 8, heads = 2, normalizer = "entmax15" }:alphas(), 1.5)
    T.eq(nn.MultiHeadAttention { dim = 8, heads = 2, normalizer = "entmax:1.3" }:alphas(), 1.3)
    T.eq(nn.MultiHeadAttention { dim = 8, heads = 2 }:alphas(), nil)
  end },
  -- top-k keeps k = max(1, ceil(ratio * N)) keys per row and softmaxes over them: ratio 1 is
  -- softmax itself, 0.5 of N = 5 keeps 3, 0.1 keeps 1 (weight exactly 1)
  { name = "topk:<ratio>: ratio 1 is softmax, k = ceil(ratio * N) keys per row", fn = function()
    al.manual_seed(13)
    local s = al.randn({ 2, 2, 5, 5 })                                   -- (B,H,N,N) scores
    local rows = s:totable()
    local p1 = nn.Normalizer("topk:1")(s):totable()
    local p5 = nn.Normalizer("topk:0.5")(s):totable()
    local p01 = nn.Normalizer("topk:0.1")(s):totable()
    for b = 1, 2 do for h = 1, 2 do for q = 1, 5 do
      local r, z = rows[b][h][q], 0
      for k = 1, 5 do z = z + math.exp(r[k]) end
      for k = 1, 5 do T.close(p1[b][h][q][k], math.exp(r[k]) / z, 1e-6, 1e-5, "topk:1 = softmax") end
      local n5, n01, top = 0, 0, 1
      for k = 1, 5 do
        if p5[b][h][q][k] > 0 then n5 = n5 + 1 end
        if p01[b][h][q][k] > 0 then n01 = n01 + 1 end
        if r[k] > r[top] then top = k end
      end
      T.eq({ n5, n01, p01[b][h][q][top] }, { 3, 1, 1 }, "keys kept by topk:0.5 and topk:0.1, the top key's weight")
    end end end
  end },
  { name = "MultiHeadAttention: qkv has a bias unless qkv_bias = false; EncoderBlock's MLP is 4x wide by default", fn = function()
    T.eq(nn.MultiHeadAttention { dim = 8, heads = 2 }.qkv.bias:shape(), { 24 })
    T.eq(nn.MultiHeadAttention { dim = 8, heads = 2, qkv_bias = false }.qkv.bias, nil)
    T.eq(nn.EncoderBlock { dim = 8, heads = 2 }.mlp.fc1.weight:shape(), { 32, 8 })
  end },
  -- B = 1, N = 4, key 4 masked. Softmax weights are all nonzero on real keys and exactly 0 on the
  -- masked one; the padded query's row still attends to the 3 real keys. So per head: all =
  -- 4*3 nonzero / 16 pairs = 0.75; real = 3*3 / 9 real (query, key) pairs = 1.
  { name = "support statistics over a key mask by hand: all pairs vs real (query, key) pairs", fn = function()
    al.manual_seed(14)
    local a = nn.MultiHeadAttention { dim = 8, heads = 2 }
    a.track_support = true
    al.no_grad(function() a(al.randn({ 1, 4, 8 }), { key_mask = al.tensor({ { 1, 1, 1, 0 } }) }) end)
    local st = a:support_stats()
    T.eq({ st.all, st.real, st.mean_all, st.mean_real }, { { 0.75, 0.75 }, { 1, 1 }, 0.75, 1 }, 1e-7)
  end },
  -- x = x + keep * f(...): a halted token (keep 0) leaves the block exactly as it came in; kept
  -- tokens change
  { name = "EncoderBlock with keep: a halted token passes through unchanged, both residual branches", fn = function()
    al.manual_seed(15)
    local blk = nn.EncoderBlock { dim = 8, heads = 2 }
    local x = al.randn({ 2, 3, 8 })
    local y = blk(x, { keep = al.tensor({ { 1, 0, 1 }, { 1, 1, 1 } }) })
    T.eq(flat(y:narrow(1, 1, 1):narrow(2, 2, 1)), flat(x:narrow(1, 1, 1):narrow(2, 2, 1)), 0, "halted token")
    T.truthy(al.max(al.abs(y - x)):item() > 1e-3, "the kept tokens change")
  end },
  -- LayerNorm of a row alternating +-5e-4 (mean 0, biased variance 2.5e-7) with weight 1, bias 0
  -- is +-5e-4 / sqrt(2.5e-7 + eps): 0.44721 at timm's eps 1e-6 (every LayerNorm of the ViT),
  -- 0.15617 at PyTorch's default 1e-5 (nn.LayerNorm's own default)
  { name = "LayerNorm eps by closed form: 1e-6 in every ViT norm, 1e-5 by default", fn = function()
    local D = 16
    local v = {}
    for i = 1, D do v[i] = (i % 2 == 1) and 5e-4 or -5e-4 end
    local x = al.tensor(v):reshape({ 1, 1, D })
    local m = nn.ViT { image_size = 8, patch_size = 4, channels = 1, num_classes = 2, dim = D, heads = 2, depth = 2 }
    local norms = { m.norm, m:block(1).norm1, m:block(1).norm2, m:block(2).norm1, m:block(2).norm2 }
    for i, ln in ipairs(norms) do
      T.close(flat(ln(x))[1], 5e-4 / math.sqrt(2.5e-7 + 1e-6), 1e-4, 0, "ViT LayerNorm " .. i)
    end
    T.close(flat(nn.LayerNorm(D)(x))[2], -5e-4 / math.sqrt(2.5e-7 + 1e-5), 1e-4, 0, "nn.LayerNorm default")
  end },
  -- the class token's N(0, 0.02^2) (torch) / trunc_normal(0.02) (timm), as pos_embed's: 256
  -- values, the sample std within 0.006 of 0.02 (over 6 standard errors)
  { name = "ViT class token drawn with std 0.02 under either init", fn = function()
    for _, init in ipairs({ "torch", "timm" }) do
      local m = nn.ViT { image_size = 8, patch_size = 4, channels = 1, num_classes = 2, dim = 256, heads = 4, depth = 1,
                         seed = 3, init = init }
      local s2 = 0
      local v = flat(m.cls_token)
      for _, x in ipairs(v) do s2 = s2 + x * x end
      T.close(math.sqrt(s2 / #v), 0.02, 0.006, 0, init .. " cls_token std")
    end
  end },

  -- "all random draws come from one generator in a fixed order" (nn/vit.lua), which is what makes
  -- a seed name the same initial weights in every record: the patch Conv2d (weight, then bias,
  -- U(-1/sqrt(C*P*P), ..)), pos_embed, the class token (N(0, 0.02^2) under "torch"), then the
  -- Linear layers in module order (the first: blocks.0.attn.qkv). Replayed here from the same
  -- seed with the generator's own draws.
  { name = "ViT's initial weights are the seed's draws in the documented order", fn = function()
    local m = nn.ViT { image_size = 8, patch_size = 4, channels = 2, num_classes = 3, dim = 8, heads = 2, depth = 1, seed = 21 }
    local g = al.Generator(21)
    local b = 1 / math.sqrt(2 * 4 * 4)
    local want = {
      { "patch_embed.proj.weight", al.zeros({ 8, 2, 4, 4 }):uniform_(-b, b, g) },
      { "patch_embed.proj.bias", al.zeros({ 8 }):uniform_(-b, b, g) },
      { "pos_embed", al.zeros({ 1, 5, 8 }):normal_(0, 0.02, g) },
      { "cls_token", al.zeros({ 1, 1, 8 }):normal_(0, 0.02, g) },
      { "blocks.0.attn.qkv.weight", al.zeros({ 24, 8 }):uniform_(-1 / math.sqrt(8), 1 / math.sqrt(8), g) },
      { "blocks.0.attn.qkv.bias", al.zeros({ 24 }):uniform_(-1 / math.sqrt(8), 1 / math.sqrt(8), g) },
    }
    local sd = m:state_dict()
    for _, w in ipairs(want) do T.eq(flat(sd[w[1]]), flat(w[2]), 0, w[1]) end
  end },
}
