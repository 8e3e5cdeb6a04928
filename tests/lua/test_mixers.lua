-- Sequential mixers as modules: shapes, masks, gradients through the fused kernels,
-- drop-in use in EncoderBlock, and learnability of a task that needs both directions.
local al = require "attnlab"
local T = require "harness"
local nn = al.nn

local function flat(t) return t:contiguous():reshape({ -1 }):totable() end

local function mixers(dim, heads)
  return { nn.BiLSTM { dim = dim, heads = heads }, nn.BiMamba { dim = dim, heads = heads, d_state = 4, expand = 2 } }
end

return {
  { name = "mixers map (B,N,D) to (B,N,D) and report parameters", fn = function()
    al.manual_seed(1)
    for _, m in ipairs(mixers(8, 2)) do
      T.eq(m(al.randn({ 2, 5, 8 })):shape(), { 2, 5, 8 }, 0, m.__name)
      assert(m:num_parameters() > 0)
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
  { name = "bad shapes and masks give clear errors", fn = function()
    local m = nn.BiLSTM { dim = 8, heads = 2 }
    T.raises(function() m(al.randn({ 2, 5, 6 })) end, "bilstm")
    T.raises(function() m(al.randn({ 2, 5, 8 }), { keep = al.ones({ 2, 4 }) }) end, "keep mask must be (2,5)")
    T.raises(function() nn.BiMamba { dim = 6, heads = 5 } end, "not divisible by heads")
  end },
}
