-- tests/lua/test_checkpoint.lua -- loading timm/DeiT safetensors into al.nn.ViT
-- (lua/attnlab/nn/checkpoint.lua): the PyTorch fixture's logits, pos_embed resampling
-- (bicubic and bilinear, against PyTorch), heads from the metadata or the caller (never
-- guessed), strict loading errors. Fixtures: tests/ref/make_vit_fixture.py and
-- tests/ref/make_pos_resample_fixture.py (run once; no Python here).
local al = require "attnlab"
local T = require "harness"
local ck = require "attnlab.nn.checkpoint"
local s2s = require "attnlab.s2s"

local FIX = "tests/ref/vit_fixture.safetensors"
-- the JSON file decoded (raises when it cannot be read)
local function read_json(path) return al.json.decode(assert(T.read_file(path), "cannot read " .. path)) end
local function ref() return read_json("tests/ref/vit_fixture.json") end

local function tensor_of(t) return al.tensor(t.data):reshape(t.shape) end

local function max_diff(got, want)
  local g = got:contiguous():reshape({ -1 }):totable()
  local m = 0
  for i, v in ipairs(want) do m = math.max(m, math.abs(g[i] - v)) end
  return m, g
end

local function report(name, got, want)
  local m, g = max_diff(got, want)
  print(("  %s: first got %.7f %.7f %.7f, want %.7f %.7f %.7f; max |diff| %.3g"):format(name, g[1], g[2], g[3],
    want[1], want[2], want[3], m))
  return m
end

local function fixture_sd()
  local sd = al.load(FIX)
  return sd
end

local function pos_ref() return read_json("tests/ref/pos_resample.json") end

local function tmp_path() return T.tmpname(".safetensors") end

-- A ViT with 3 heads of 16 (dim 48), its qkv weights scaled up so that the attention is
-- far from uniform and the head split matters to the logits.
local function vit48()
  local m = al.nn.ViT({ image_size = 16, patch_size = 4, channels = 3, num_classes = 5, dim = 48, depth = 2,
                        heads = 3, seed = 3, init = "timm" })
  al.no_grad(function()
    for _, k in ipairs({ "blocks.0.attn.qkv.weight", "blocks.1.attn.qkv.weight" }) do
      local w = m:state_dict()[k]
      w:copy_(w * 40)
    end
  end)
  m:eval()
  return m
end

local function logits_of(m, x)
  m:eval()
  return al.no_grad(function() return m(x) end)
end

local function maxabs(a, b) return al.max(al.abs(a - b)):item() end

return {
  { name = "fixture logits equal PyTorch's within 1e-5", fn = function()
    al.set_num_threads(1)
    local r = ref()
    local model, rep, cfg = ck.vit_from_file(FIX, { heads = r.config.heads })
    T.eq({ cfg.dim, cfg.depth, cfg.patch_size, cfg.channels, cfg.num_classes, cfg.image_size, cfg.mlp_ratio },
      { 32, 2, 4, 3, 5, 16, 4 }, 0, "inferred config")
    T.eq(#rep.missing + #rep.unexpected + #rep.misshaped, 0, 0, "clean load")
    model:eval()
    local logits = al.no_grad(function() return model(tensor_of(r.inputs)) end)
    T.eq(logits:shape(), r.logits.shape)
    local m = report("logits", logits, r.logits.data)
    assert(m < 1e-5, ("max |diff| %.3g >= 1e-5"):format(m))
  end },

  { name = "fixture at 24x24: pos_embed resampled 4x4 -> 6x6 (bilinear) gives PyTorch's logits", fn = function()
    local r = ref()
    local model, rep = ck.vit_from_file(FIX, { heads = 2, image_size = 24, pos_resample = "bilinear" })
    T.eq({ rep.resampled.from, rep.resampled.to, rep.resampled.mode }, { 4, 6, "bilinear" })
    local pm = report("pos_embed", model.pos_embed, r.resample.pos_embed.data)
    assert(pm < 1e-6, "pos_embed differs from F.interpolate's: " .. pm)
    model:eval()
    local logits = al.no_grad(function() return model(tensor_of(r.resample.inputs)) end)
    local m = report("logits 24x24", logits, r.resample.logits.data)
    assert(m < 1e-5, ("max |diff| %.3g >= 1e-5"):format(m))
  end },

  { name = "resample_pos_embed: identity when the grid matches (bit for bit, a copy)", fn = function()
    local pe = al.randn({ 1, 1 + 16, 8 })
    local out = ck.resample_pos_embed(pe, 4)
    T.eq(al.max(al.abs(out - pe)):item(), 0)
    out:fill_(0)
    assert(al.max(al.abs(pe)):item() > 0, "the result must not alias the input")
  end },

  { name = "resample_pos_embed: known bilinear values 2x2 -> 4x4 (align_corners=False), class token kept", fn = function()
    -- grid [[1, 2], [3, 4]], one channel; rows/cols of the 1-D rule: [a, .75a+.25b, .25a+.75b, b]
    local pe = al.tensor({ { { 9 }, { 1 }, { 2 }, { 3 }, { 4 } } })
    local out = ck.resample_pos_embed(pe, 4, { mode = "bilinear" }):reshape({ -1 }):totable()
    local w = { 1, 0.75, 0.25, 0 }   -- weight of the first source index
    local want = { 9 }
    for i = 1, 4 do
      for j = 1, 4 do
        local top = w[j] * 1 + (1 - w[j]) * 2
        local bot = w[j] * 3 + (1 - w[j]) * 4
        want[#want + 1] = w[i] * top + (1 - w[i]) * bot
      end
    end
    T.close(out, want, 1e-6, 0, "2x2->4x4")
    T.eq({ out[2], out[3], out[6], out[17] }, { 1, 1.25, 1.5, 4 }, 1e-6)
  end },

  { name = "resample_pos_embed: 3x3 -> 5x5 equals torch's F.interpolate (bilinear)", fn = function()
    local r = ref()
    local out = ck.resample_pos_embed(tensor_of(r.grid_resample.src), 5, { mode = "bilinear" })
    T.eq(out:shape(), r.grid_resample.dst.shape)
    local m = report("grid 3->5", out, r.grid_resample.dst.data)
    assert(m < 1e-6, "max diff " .. m)
  end },

  { name = "resample_pos_embed: errors name the shape", fn = function()
    T.raises(function() ck.resample_pos_embed(al.zeros({ 1, 1 + 15, 4 }), 4) end, "(1,16,4)")
    T.raises(function() ck.resample_pos_embed(al.zeros({ 2, 17, 4 }), 4) end, "got (2,17,4)")
  end },

  { name = "strict loading lists missing, unexpected and mis-shaped keys in one error", fn = function()
    local sd = fixture_sd()
    sd["blocks.1.mlp.fc2.bias"] = nil
    sd["dist_token"] = al.zeros({ 1, 1, 32 })
    sd["head.weight"] = al.zeros({ 7, 32 })
    local model = al.nn.ViT({ image_size = 16, patch_size = 4, channels = 3, num_classes = 5, dim = 32, depth = 2, heads = 2 })
    local err = T.raises(function() ck.load_vit(model, sd) end, "missing keys (1): blocks.1.mlp.fc2.bias")
    T.truthy(err:find("unexpected keys (1): dist_token", 1, true), err)
    T.truthy(err:find("head.weight: checkpoint (7,32), model (5,32)", 1, true), err)
    T.truthy(err:find("distilled DeiT", 1, true), err)
    print("  error: " .. err:sub(1, 200))
  end },

  { name = "non-strict loading returns the report; mis-shaped is still an error", fn = function()
    local sd = fixture_sd()
    sd["blocks.1.mlp.fc2.bias"] = nil
    sd["extra.thing"] = al.zeros({ 2 })
    local model = al.nn.ViT({ image_size = 16, patch_size = 4, channels = 3, num_classes = 5, dim = 32, depth = 2, heads = 2 })
    local before = model.blocks["1"].mlp.fc2.bias:clone()
    local _, rep = ck.load_vit(model, sd, { strict = false })
    T.eq(rep.missing, { "blocks.1.mlp.fc2.bias" })
    T.eq(rep.unexpected, { "extra.thing" })
    T.eq(al.max(al.abs(model.blocks["1"].mlp.fc2.bias - before)):item(), 0, 0, "missing key left as it was")
    T.eq(al.max(al.abs(model.head.weight - sd["head.weight"])):item(), 0, 0, "loaded keys copied exactly")
    sd["head.bias"] = al.zeros({ 3 })
    T.raises(function() ck.load_vit(model, sd, { strict = false }) end, "head.bias: checkpoint (3), model (5)")
  end },

  { name = "wrapper prefixes (module., model.) are stripped", fn = function()
    local sd = fixture_sd()
    local wrapped = {}
    for k, v in pairs(sd) do wrapped["module." .. k] = v end
    local model = ck.vit_from_file(wrapped, { heads = 2 })
    T.eq(al.max(al.abs(model.pos_embed - sd.pos_embed)):item(), 0)
    wrapped = {}
    for k, v in pairs(sd) do wrapped["model." .. k] = v end
    model = ck.vit_from_file(wrapped, { heads = 2 })
    T.eq(al.max(al.abs(model.pos_embed - sd.pos_embed)):item(), 0, 0, "model.")
  end },

  { name = "not a ViT checkpoint: a clear error", fn = function()
    T.raises(function() ck.vit_from_file({ ["fc.weight"] = al.zeros({ 2, 2 }) }) end, "no 'patch_embed.proj.weight'")
    T.raises(function() ck.vit_from_file("/nonexistent/x.safetensors") end, "cannot read /nonexistent/x.safetensors")
  end },
  -- ---- position embedding resizing against PyTorch (tests/ref/make_pos_resample_fixture.py) ----
  { name = "resample_pos_embed: bicubic (the default) and bilinear equal PyTorch's F.interpolate within 1e-6", fn = function()
    local r = pos_ref()
    for _, c in ipairs(r.cases) do
      local src = tensor_of(c.src)
      for _, mode in ipairs({ "bicubic", "bilinear" }) do
        local out = mode == "bicubic" and ck.resample_pos_embed(src, c.G, { prefix = c.prefix })
                                       or ck.resample_pos_embed(src, c.G, { prefix = c.prefix, mode = mode })
        T.eq(out:shape(), c[mode].shape, 0, mode .. " shape")
        local m64 = report(("%s %d->%d (prefix %d) vs float64"):format(mode, c.g, c.G, c.prefix), out, c[mode .. "64"].data)
        local m32 = max_diff(out, c[mode].data)
        print(("    vs PyTorch's float32 result: max |diff| %.3g"):format(m32))
        assert(m64 < 1e-6, ("%s %d->%d: max |diff| vs float64 %.3g >= 1e-6"):format(mode, c.g, c.G, m64))
        assert(m32 < 2e-6, ("%s %d->%d: max |diff| vs PyTorch float32 %.3g >= 2e-6"):format(mode, c.g, c.G, m32))
        -- prefix tokens are copied bit for bit
        local o, sv = out:reshape({ -1 }):totable(), c.src.data
        for k = 1, c.prefix * c.D do T.eq(o[k], sv[k], 0, "prefix token entry " .. k) end
      end
    end
  end },

  { name = "bicubic_weights: each row sums to 1; bicubic differs from bilinear", fn = function()
    for _, gG in ipairs({ { 4, 6 }, { 14, 24 }, { 6, 4 }, { 1, 3 } }) do
      local W = ck.bicubic_weights(gG[1], gG[2])
      T.eq(#W, gG[2])
      for i, row in ipairs(W) do
        local sum = 0
        for _, w in ipairs(row) do sum = sum + w end
        T.eq(sum, 1, 1e-12, ("row %d of %d->%d"):format(i, gG[1], gG[2]))
      end
    end
    local pe = al.randn({ 1, 1 + 16, 4 })
    assert(maxabs(ck.resample_pos_embed(pe, 6), ck.resample_pos_embed(pe, 6, { mode = "bilinear" })) > 1e-3,
      "bicubic must not be bilinear")
  end },

  { name = "loader resamples bicubically by default; pos_resample selects; a bad mode is an error", fn = function()
    local sd = fixture_sd()
    local model, rep = ck.vit_from_file(FIX, { heads = 2, image_size = 24 })
    T.eq(rep.resampled.mode, "bicubic")
    T.eq(maxabs(model.pos_embed, ck.resample_pos_embed(sd.pos_embed, 6)), 0, 0, "default = bicubic")
    local m2 = ck.vit_from_file(FIX, { heads = 2, image_size = 24, pos_resample = "bilinear" })
    T.eq(maxabs(m2.pos_embed, ck.resample_pos_embed(sd.pos_embed, 6, { mode = "bilinear" })), 0, 0, "bilinear")
    local err = T.raises(function() ck.vit_from_file(FIX, { heads = 2, image_size = 24, pos_resample = "bicubc" }) end,
      'pos_resample must be "bicubic" or "bilinear", got "bicubc"')
    T.truthy(not err:find("\n"), "one line")
    T.raises(function() ck.resample_pos_embed(sd.pos_embed, 6, { mode = "nearest" }) end, 'got "nearest"')
  end },

  -- ---- heads: from the metadata or the caller, never guessed ------------------------------
  { name = "no heads in the metadata and none passed: a one-line error naming the file (no dim // 64 guess)", fn = function()
    local err = T.raises(function() ck.vit_from_file(FIX) end, FIX .. " does not record its head count")
    T.truthy(err:find("{heads = H}", 1, true) and err:find("divisor of dim 32", 1, true), err)
    T.truthy(not err:find("\n"), "one line: " .. err)
    print("  error: " .. err)
    local path = tmp_path()
    al.save(path, vit48():state_dict())                        -- no metadata at all
    local e2 = T.raises(function() ck.vit_from_file(path) end, path .. " does not record its head count")
    T.raises(function() s2s.load_model(path) end, path .. " does not record its head count")
    T.raises(function() s2s.load_model(path, { heads = 5 }) end, "dim 48 is not divisible by heads 5")
    -- checked before a model is built, naming where the head count came from
    T.raises(function() ck.vit_from_file(path, { heads = 5 }) end, path .. ": dim 48 is not divisible by heads 5 (from caller)")
    T.raises(function() ck.vit_from_file(fixture_sd()) end, "the state dict does not record its head count")
    os.remove(path)
    T.truthy(not e2:find("\n"), "one line")
  end },

  { name = "3 heads of 16: saved by attnlab, reloaded without heads, gives the same logits", fn = function()
    al.set_num_threads(1)
    local m = vit48()
    local x = al.randn({ 3, 3, 16, 16 })
    local want = logits_of(m, x)
    -- the old dim // 64 guess (1 head) gives other logits: the test can tell
    local guessed = ck.vit_from_file(m:state_dict(), { heads = 1 })
    local wrong = maxabs(logits_of(guessed, x), want)
    print(("  logits with 1 head instead of 3: max |diff| %.3g"):format(wrong))
    assert(wrong > 1e-2, "a wrong head count must change the logits")
    -- s2s.save_model writes heads (plain and in attnlab_vit); both loaders read it
    local p1 = tmp_path()
    s2s.save_model(p1, m)
    local _, meta = al.load(p1)
    T.eq(meta.heads, "3")
    local a, _, cfg = ck.vit_from_file(p1)
    T.eq({ cfg.heads, cfg.heads_source }, { 3, "metadata heads" })
    T.eq(maxabs(logits_of(a, x), want), 0, 0, "checkpoint.vit_from_file")
    local b = s2s.load_model(p1)
    T.eq(maxabs(logits_of(b, x), want), 0, 0, "s2s.load_model")
    T.raises(function() ck.vit_from_file(p1, { heads = 4 }) end, "records heads = 3 in its metadata")
    T.raises(function() s2s.load_model(p1, { heads = 4 }) end, "records heads = 3 in its metadata")
    os.remove(p1)
    -- a plain timm-named file with only a "heads" entry (as train.lua's checkpoints and
    -- parity's init write it) goes through checkpoint.vit_from_file in both loaders
    local p2 = tmp_path()
    al.save(p2, m:state_dict(), { heads = "3" })
    T.eq(maxabs(logits_of(ck.vit_from_file(p2), x), want), 0, 0, "timm file + heads metadata")
    T.eq(maxabs(logits_of(s2s.load_model(p2), x), want), 0, 0, "s2s.load_model, timm file + heads metadata")
    T.eq(maxabs(logits_of(ck.vit_from_file(p2, { heads = 3 }), x), want), 0, 0, "agreeing caller")
    os.remove(p2)
    -- an attnlab_vit config alone (no plain entry) is read too; a bad entry is an error
    local p3 = tmp_path()
    al.save(p3, m:state_dict(), { attnlab_vit = al.json.encode(ck.vit_config(m)) })
    local a3, _, c3 = ck.vit_from_file(p3)
    T.eq({ c3.heads, c3.heads_source }, { 3, "metadata attnlab_vit.heads" })
    T.eq(maxabs(logits_of(a3, x), want), 0, 0, "attnlab_vit alone")
    al.save(p3, m:state_dict(), { heads = "three" })
    T.raises(function() ck.vit_from_file(p3) end, "metadata heads = three is not a positive integer")
    -- attnlab_vit is the model's whole config: a partial one is a damaged entry, one line
    al.save(p3, m:state_dict(), { attnlab_vit = al.json.encode({ heads = 3 }) })
    local e3 = T.raises(function() ck.vit_from_file(p3) end, p3 .. ": metadata attnlab_vit.dim is missing")
    T.truthy(not e3:find("\n"), "one line")
    -- a plain heads entry that contradicts the config
    al.save(p3, m:state_dict(), { attnlab_vit = al.json.encode(ck.vit_config(m)), heads = "4" })
    T.raises(function() ck.vit_from_file(p3) end, "metadata heads = 4 contradicts attnlab_vit.heads = 3")
    os.remove(p3)
  end },

  -- every unknown part of an attention layer was taken for an S2S mixer: timm's q_norm was
  -- told to use s2s.load_model
  { name = "unexpected attention parts: an S2S mixer's block is told s2s.load_model; timm's q_norm is named a variant", fn = function()
    local function small() return al.nn.ViT { image_size = 8, patch_size = 4, channels = 1, num_classes = 3, dim = 8,
                                              depth = 2, heads = 2 } end
    local m = small()
    m:block(2):set_mixer(al.nn.BiLSTM { dim = 8, heads = 2 })
    local e = T.raises(function() ck.vit_from_file(m:state_dict(), { metadata = { heads = "2" }, image_size = 8, patch_size = 4,
      channels = 1 }) end, "block 2 of the file have a token mixer other than attention (an S2S model): s2s.load_model")
    T.truthy(not e:find("variant", 1, true), e)
    local sd = small():state_dict()
    sd["blocks.0.attn.q_norm.weight"], sd["blocks.0.attn.k_norm.weight"] = al.ones { 4 }, al.ones { 4 }
    e = T.raises(function() ck.vit_from_file(sd, { metadata = { heads = "2" }, image_size = 8, patch_size = 4, channels = 1 }) end,
      "the file's attention has parts attnlab's does not (k_norm, q_norm)")
    T.truthy(not e:find("S2S", 1, true), e)
  end },

  { name = "a state dict table: heads from opts.metadata (its file's metadata)", fn = function()
    local m = vit48()
    local x = al.randn({ 2, 3, 16, 16 })
    local got = ck.vit_from_file(m:state_dict(), { metadata = { heads = "3" } })
    T.eq(maxabs(logits_of(got, x), logits_of(m, x)), 0)
  end },

  -- a NaN or inf weight loaded without a word (s2s.load_model refused it): NaN logits, an
  -- "accuracy" of nothing; save_vit wrote such a model
  { name = "non-finite weights: vit_from_file, load_vit and a table refuse them (file and tensor named); save_vit writes none", fn = function()
    local function small() return al.nn.ViT { image_size = 8, patch_size = 4, channels = 1, num_classes = 3, dim = 8,
                                              depth = 1, heads = 2 } end
    local m = small()
    local p = tmp_path()
    ck.save_vit(p, m)
    local sd, meta = al.load(p)
    local b = sd["blocks.0.attn.proj.bias"]:clone()
    b[2] = 1 / 0
    sd["blocks.0.attn.proj.bias"] = b
    local bad = tmp_path()
    al.save(bad, sd, meta)
    local want = "checkpoint: " .. bad .. ": tensor blocks.0.attn.proj.bias holds NaN or inf"
    local e = T.raises(function() ck.vit_from_file(bad) end, want)
    T.truthy(not e:find("\n"), "one line")
    T.raises(function() ck.load_vit(small(), bad) end, want)
    T.raises(function() ck.vit_from_file(sd, { metadata = meta, source = "x.safetensors" }) end,
      "checkpoint: x.safetensors: tensor blocks.0.attn.proj.bias holds NaN or inf")
    -- the tensor API is PyTorch's: load_state_dict copies what it is given
    small():load_state_dict(sd)
    -- save_vit: a diverged model is refused, the file there kept as it was
    al.no_grad(function() m:state_dict()["head.weight"]:fill_(0 / 0) end)
    T.raises(function() ck.save_vit(p, m) end,
      "checkpoint.save_vit: tensor head.weight holds NaN or inf (a diverged model); nothing was saved to " .. p)
    T.eq(ck.vit_from_file(p) ~= nil, true, 0, "the old file is intact")
    os.remove(p)
    os.remove(bad)
  end },

  -- a timm file's MLP width is read from its fc1 (hidden, D): mlp_ratio = hidden / D, here 2
  -- (the fixture's 4 is also the preset's, so it could not tell)
  { name = "infer_config reads mlp_ratio from fc1's rows (a ratio-2 ViT, no metadata)", fn = function()
    local m = al.nn.ViT { image_size = 8, patch_size = 4, channels = 1, num_classes = 3, dim = 16, heads = 2, mlp_ratio = 2 }
    local back, _, c = ck.vit_from_file(m:state_dict(), { heads = 2 })
    T.eq({ c.mlp_ratio, back:block(1).mlp.fc1.weight:shape() }, { 2, { 32, 16 } })
  end },
}
