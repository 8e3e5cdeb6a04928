-- tests/lua/test_checkpoint.lua -- loading timm/DeiT safetensors into al.nn.ViT
-- (lua/attnlab/checkpoint.lua): the PyTorch fixture's logits, pos_embed resampling,
-- strict loading errors. Fixture: tests/ref/make_vit_fixture.py (run once; no Python here).
local al = require "attnlab"
local T = require "harness"
local ck = require "attnlab.checkpoint"

local FIX = "tests/ref/vit_fixture.safetensors"
local function ref()
  local f = assert(io.open("tests/ref/vit_fixture.json", "r"))
  local r = al.json.decode(f:read("a"))
  f:close()
  return r
end

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
    local model, rep = ck.vit_from_file(FIX, { heads = 2, image_size = 24 })
    T.eq({ rep.resampled.from, rep.resampled.to }, { 4, 6 })
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

  { name = "resample_pos_embed: known values 2x2 -> 4x4 (align_corners=False), class token kept", fn = function()
    -- grid [[1, 2], [3, 4]], one channel; rows/cols of the 1-D rule: [a, .75a+.25b, .25a+.75b, b]
    local pe = al.tensor({ { { 9 }, { 1 }, { 2 }, { 3 }, { 4 } } })
    local out = ck.resample_pos_embed(pe, 4):reshape({ -1 }):totable()
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
    local out = ck.resample_pos_embed(tensor_of(r.grid_resample.src), 5)
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
  end },

  { name = "not a ViT checkpoint: a clear error", fn = function()
    T.raises(function() ck.vit_from_file({ ["fc.weight"] = al.zeros({ 2, 2 }) }) end, "no 'patch_embed.proj.weight'")
    T.raises(function() ck.vit_from_file("/nonexistent/x.safetensors") end, "cannot read /nonexistent/x.safetensors")
  end },
}
