-- Sequential mixers as modules: shapes, masks, gradients through the fused kernels,
-- drop-in use in EncoderBlock, and learnability of a task that needs both directions.
local al = require "attnlab"
local T = require "harness"
local nn = al.nn

local function flat(t) return t:contiguous():reshape({ -1 }):totable() end

local function mixers(dim, heads)
  return { nn.BiLSTM { dim = dim, heads = heads }, nn.BiMamba { dim = dim, heads = heads, d_state = 4, expand = 2 } }
end

-- tests/ref/{bilstm,bimamba}.json: float64 PyTorch references (tests/ref/make_mixer_refs.py),
-- the same cases tests/c/test_bilstm.c and test_bimamba.c check against the C kernels; here
-- through the modules' parameter layout and the binding (the modules' forward before
-- out_proj). L = sum(y * gy).
local function load_ref(file)
  local f = assert(io.open("tests/ref/" .. file, "r"), "cannot read tests/ref/" .. file .. " (run from the repo root)")
  local r = al.json.decode(f:read("a"))
  f:close()
  return r.cases
end

-- a leaf tensor of `shape` holding the flat list v, requiring grad
local function leaf(v, shape)
  return al.tensor(v):reshape(shape):contiguous():detach():requires_grad_(true)
end

-- y and every gradient against the reference, with the C test's tolerances
local function check_ref(name, y, yref, grads)
  T.close(flat(y), yref, 1e-6, 1e-5, name .. " y")
  for _, g in ipairs(grads) do
    assert(g[1].grad, name .. ": no gradient for " .. g[3])
    T.close(flat(g[1].grad), g[2], 2e-6, 2e-5, name .. " d" .. g[3])
  end
end

local LSTM_NAMES = { "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                     "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse" }
local LSTM_REF = { "w_ih", "w_hh", "b_ih", "b_hh" }
local MAMBA_REF = { "conv_w", "conv_b", "x_proj", "dt_w", "dt_b", "A_log", "D" }

return {
  { name = "mixers map (B,N,D) to (B,N,D) and report parameters", fn = function()
    al.manual_seed(1)
    for _, m in ipairs(mixers(8, 2)) do
      T.eq(m(al.randn({ 2, 5, 8 })):shape(), { 2, 5, 8 }, 0, m.__name)
      assert(m:num_parameters() > 0)
    end
  end },
  { name = "BiLSTM equals the float64 PyTorch reference (tests/ref/bilstm.json): y and every gradient", fn = function()
    for _, c in ipairs(load_ref("bilstm.json")) do
      local m = nn.BiLSTM { dim = c.C, heads = c.H }
      local x = leaf(c.x, { c.B, c.T, c.C })
      local p, grads = {}, { { x, c.dx, "x" } }
      for i, n in ipairs(LSTM_NAMES) do   -- the module's own names and shapes, torch.nn.LSTM's layout
        local key, dir = LSTM_REF[(i - 1) % 4 + 1], (i - 1) // 4 + 1
        p[i] = leaf(c[key][dir], m[n]:shape())
        grads[#grads + 1] = { p[i], c["g_" .. key][dir], n }
      end
      local y = al.bilstm(x, p, nil, c.H)
      T.eq(y:shape(), { c.B, c.T, 2 * c.C }, 0, c.name)
      al.sum(y * al.tensor(c.gy):reshape(y:shape())):backward()
      check_ref("bilstm " .. c.name, y, c.y, grads)
    end
  end },
  { name = "BiMamba equals the float64 PyTorch reference (tests/ref/bimamba.json): out and every gradient", fn = function()
    for _, c in ipairs(load_ref("bimamba.json")) do
      local m = nn.BiMamba { dim = c.E // 2, heads = c.H, d_state = c.N, dt_rank = c.R, d_conv = c.K, expand = 2 }
      local xin, z = leaf(c.xin, { c.B, c.T, c.E }), leaf(c.z, { c.B, c.T, c.E })
      local p, grads = {}, { { xin, c.dxin, "xin" }, { z, c.dz, "z" } }
      for i, t in ipairs(m:params_list()) do   -- the module's parameter order and shapes
        local key, dir = MAMBA_REF[(i - 1) % 7 + 1], (i - 1) // 7 + 1
        p[i] = leaf(c[key][dir], t:shape())
        grads[#grads + 1] = { p[i], c["g_" .. key][dir], key .. (dir == 2 and "_b" or "") }
      end
      local y = al.bimamba(al.cat({ xin, z }, 3), p, nil, c.H, c.N, c.R, c.K)
      T.eq(y:shape(), { c.B, c.T, c.E }, 0, c.name)
      al.sum(y * al.tensor(c.gout):reshape(y:shape())):backward()
      check_ref("bimamba " .. c.name, y, c.out, grads)
    end
  end },
  { name = "gradient check of every parameter and the input, with and without a keep mask", fn = function()
    al.manual_seed(2)
    for _, m in ipairs(mixers(4, 2)) do
      for _, keep in ipairs({ false, true }) do
        local x = al.randn({ 2, 4, 4 }, { requires_grad = true })
        local opts = keep and { keep = al.tensor({ { 1, 1, 0, 1 }, { 1, 1, 1, 0 } }) } or nil
        local inputs = { x }
        for _, p in ipairs(m:parameters()) do inputs[#inputs + 1] = p end
        local ok, why = al.gradcheck(function() return m(x, opts) end, inputs, { eps = 1e-2, atol = 2e-3, rtol = 2e-2 })
        assert(ok, m.__name .. (keep and " (masked): " or ": ") .. tostring(why))
      end
    end
  end },
  { name = "a dropped token does not affect the others (output = mixer on the shorter sequence)", fn = function()
    al.manual_seed(3)
    for _, m in ipairs(mixers(8, 2)) do
      local x = al.randn({ 1, 5, 8 })
      local keep = al.tensor({ { 1, 0, 1, 1, 1 } })
      local y = m(x, { keep = keep })
      local short = al.cat({ x:narrow(2, 1, 1), x:narrow(2, 3, 3) }, 2)
      local ys = m(short)
      T.close(flat(y:narrow(2, 1, 1)), flat(ys:narrow(2, 1, 1)), 1e-5, 1e-4, m.__name)
      T.close(flat(y:narrow(2, 3, 3)), flat(ys:narrow(2, 2, 3)), 1e-5, 1e-4, m.__name)
    end
  end },
  { name = "mixers plug into EncoderBlock in place of attention", fn = function()
    al.manual_seed(4)
    local blk = nn.EncoderBlock { dim = 8, heads = 2 }
    local ln = blk.norm1.weight
    blk:set_mixer(nn.BiMamba { dim = 8, heads = 2, d_state = 4 })
    assert(blk.norm1.weight == ln, "LayerNorm replaced")
    local x = al.randn({ 2, 6, 8 }, { requires_grad = true })
    local y = blk(x)
    al.sum(y):backward()
    T.eq(y:shape(), { 2, 6, 8 })
    assert(x.grad and blk.attn.in_proj.weight.grad, "no gradient through the mixer")
    -- and the gradients are right: central differences of the whole block, input and every
    -- parameter (the mixer's, the LayerNorms', the MLP's)
    local inputs = { x }
    for _, q in ipairs(blk:parameters()) do inputs[#inputs + 1] = q end
    local ok, why = al.gradcheck(function() return blk(x) end, inputs, { eps = 1e-2, atol = 2e-3, rtol = 2e-2 })
    assert(ok, "EncoderBlock with BiMamba: " .. tostring(why))
  end },
  { name = "each mixer learns a task that needs both directions (mirror the sequence)", fn = function()
    if os.getenv("ATTNLAB_SANITIZED") == "1" then T.skip("600 training steps are too slow under sanitizers; the release run covers it") end
    -- output at position t the token at position N+1-t: needs the future for t < N/2, the
    -- past for t > N/2. Vocab 6, N 6, embed -> mixer (residual) -> linear head.
    for _, which in ipairs({ "BiLSTM", "BiMamba" }) do
      al.manual_seed(5)
      local V, N, D = 6, 6, 32
      local emb = nn.Embedding(V, D)
      local mix = which == "BiLSTM" and nn.BiLSTM { dim = D, heads = 2 } or nn.BiMamba { dim = D, heads = 2, d_state = 8 }
      local head = nn.Linear(D, V)
      local params = {}
      for _, m in ipairs({ emb, mix, head }) do for _, p in ipairs(m:parameters()) do params[#params + 1] = p end end
      local opt = al.optim.AdamW(params, { lr = 2e-2, weight_decay = 0 })
      local rev = {}
      for t = 1, N do rev[t] = N + 1 - t end
      local rev_idx = al.tensor(rev, { dtype = "int64" })
      local acc = 0
      for step = 1, 600 do
        local x = al.randint(1, V, { 32, N })
        local y = al.index_select(x, 2, rev_idx)
        local h = emb(x)
        local logits = head(h + mix(h))
        local loss = al.cross_entropy(logits:reshape({ 32 * N, V }), y:reshape({ 32 * N }))
        opt:zero_grad(); loss:backward(); opt:step()
        if step > 580 then
          acc = acc + al.mean(al.eq(al.argmax(logits, 3), y)):item() / 20
        end
      end
      print(("# %s mirror-task accuracy over the last 20 steps: %.3f"):format(which, acc))
      assert(acc > 0.95, which .. " did not learn the mirror task: " .. acc)
    end
  end },
  { name = "a mixer's input or parameter changed in place before backward is refused", fn = function()
    -- The fused cores keep their input and parameters (the tensors themselves when contiguous)
    -- for the backward; a change in place between forward and backward made it use the new
    -- values, silently (parameter gradients off by up to 0.99 here). Every other op refuses.
    al.manual_seed(T.seed)
    local lstm = nn.BiLSTM { dim = 8, heads = 2 }
    local w = al.randn({ 2, 5, 8 }):requires_grad_(true)
    local out = lstm(w):sum()
    al.no_grad(function() w:add_(1) end)
    T.raises(function() out:backward() end, "backward of bilstm: a tensor it saved, float32 (2,5,8), was changed in place")
    T.eq(lstm.out_proj.weight.grad, nil, "no gradient accumulated before the refusal")

    local mamba = nn.BiMamba { dim = 8, heads = 2, d_state = 4 }
    local x = al.randn({ 2, 5, 8 })
    local y = mamba(x):sum()
    local A = mamba:params_list()[6]    -- A_log of the forward direction: read only by the core
    al.no_grad(function() A:add_(0.5) end)
    T.raises(function() y:backward() end, "backward of bimamba: a tensor it saved")
    -- unchanged, both go through
    local y2 = mamba(x):sum()
    y2:backward()
    assert(A.grad ~= nil, "A_log gets its gradient when nothing changed")
  end },
  { name = "bad shapes and masks give clear errors", fn = function()
    local m = nn.BiLSTM { dim = 8, heads = 2 }
    T.raises(function() m(al.randn({ 2, 5, 6 })) end, "BiLSTM: expected x (B,N,8), got (2,5,6)")
    T.raises(function() m(al.randn({ 2, 5, 8 }), { keep = al.ones({ 2, 4 }) }) end, "BiLSTM: keep must be (B,N) = (2,5)")
    T.raises(function() nn.BiMamba { dim = 6, heads = 5 } end, "not divisible by heads")
  end },

  -- key_mask is a mask as keep is, and the two combine (a token is present when both say so): the
  -- real tokens' outputs equal the mixer's on the sequence without the absent ones
  { name = "key_mask drops tokens as keep does, and combines with keep", fn = function()
    al.manual_seed(4)
    for _, m in ipairs(mixers(8, 2)) do
      local x = al.randn({ 1, 5, 8 })
      local short = al.cat({ x:narrow(2, 1, 1), x:narrow(2, 3, 2) }, 2)      -- tokens 1, 3, 4
      local ys = m(short)
      local y = m(x, { key_mask = al.tensor({ { 1, 1, 1, 1, 0 } }), keep = al.tensor({ { 1, 0, 1, 1, 1 } }) })
      T.close(flat(y:narrow(2, 1, 1)), flat(ys:narrow(2, 1, 1)), 1e-5, 1e-4, m.__name .. " token 1")
      T.close(flat(y:narrow(2, 3, 2)), flat(ys:narrow(2, 2, 2)), 1e-5, 1e-4, m.__name .. " tokens 3, 4")
      local y1 = m(x, { key_mask = al.tensor({ { 1, 0, 1, 1, 0 } }) })
      T.close(flat(y1:narrow(2, 3, 2)), flat(ys:narrow(2, 2, 2)), 1e-5, 1e-4, m.__name .. " key_mask alone")
    end
  end },
  -- Initialisation by closed form. BiLSTM: torch.nn.LSTM's U(-1/sqrt(hidden), 1/sqrt(hidden)),
  -- hidden = dim/heads per head. BiMamba (dim 20, heads 2, d_state 4: E = expand*dim = 40 with
  -- expand 2, dt_rank ceil(20/16) = 2, d_conv 4): conv U(-1/sqrt(4), ..), x_proj U(-1/sqrt(E/heads), ..),
  -- dt_proj weight U(-rank^-0.5, ..), softplus(dt bias) = dt log-uniform in [1e-3, 0.1] (about half
  -- below 0.01), A = -exp(A_log) = -(1..N) per channel (S4D-real), D = 1.
  { name = "mixer initialisation: LSTM and Mamba defaults by closed form", fn = function()
    local function range(t)
      local mn, mx = math.huge, -math.huge
      for _, v in ipairs(flat(t)) do mn, mx = math.min(mn, v), math.max(mx, v) end
      return mn, mx
    end
    local function uniform(t, b, what)
      local mn, mx = range(t)
      T.truthy(mn >= -b and mx <= b and mn < -0.8 * b and mx > 0.8 * b, ("%s in [%g, %g], want U(-%g, %g)"):format(what, mn, mx, b, b))
    end
    local lstm = nn.BiLSTM { dim = 16, heads = 4, generator = al.Generator(1) }
    for _, n in ipairs(LSTM_NAMES) do uniform(lstm[n], 0.5, "BiLSTM " .. n) end
    local m = nn.BiMamba { dim = 20, heads = 2, d_state = 4, generator = al.Generator(2) }
    T.eq(m.in_proj.weight:shape(), { 80, 20 }, 0, "in_proj (2E, dim)")
    for _, d in ipairs({ { "conv1d", "x_proj", "dt_proj", "A_log", "D" }, { "conv1d_b", "x_proj_b", "dt_proj_b", "A_b_log", "D_b" } }) do
      uniform(m[d[1]].weight, 0.5, d[1] .. ".weight")
      uniform(m[d[1]].bias, 0.5, d[1] .. ".bias")
      T.eq(m[d[2]].weight:shape(), { 2, 2 + 2 * 4, 20 }, 0, d[2] .. " (heads, R+2N, E/heads)")
      uniform(m[d[2]].weight, 1 / math.sqrt(20), d[2] .. ".weight")
      T.eq(m[d[3]].weight:shape(), { 40, 2 }, 0, d[3] .. " (E, dt_rank)")
      uniform(m[d[3]].weight, 2 ^ -0.5, d[3] .. ".weight")
      local below = 0
      for _, b in ipairs(flat(m[d[3]].bias)) do
        local dt = math.log(1 + math.exp(b))                             -- softplus
        T.truthy(dt >= 1e-3 * (1 - 1e-5) and dt <= 0.1 * (1 + 1e-5), ("%s: softplus(bias) = %g outside [1e-3, 0.1]"):format(d[3], dt))
        if dt < 0.005 then below = below + 1 end
      end
      T.truthy(below > 0, d[3] .. ": no dt below 0.005 (log-uniform from 1e-3 puts ~35% there)")
      local A = al.exp(m[d[4]]):totable()
      for e = 1, 40 do T.close(A[e], { 1, 2, 3, 4 }, 1e-6, 1e-6, d[4] .. " row " .. e) end
      T.eq(flat(m[d[5]]), flat(al.ones({ 40 })), 0, d[5])
    end
  end },
}
