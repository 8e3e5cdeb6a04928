-- attnlab.nn.checkpoint (also attnlab.checkpoint) -- load a timm / DeiT ViT checkpoint (safetensors) into al.nn.ViT.
--
--   local ckpt = require "attnlab.checkpoint"   -- or "attnlab.nn.checkpoint"
--   local model = ckpt.vit_from_file("deit_tiny_patch16_224.safetensors", {heads = 3})
--   local model2 = ckpt.vit_from_file(path, {heads = 3, image_size = 384}) -- pos_embed resampled
--   ckpt.load_vit(model, path_or_state_dict [, {strict = true}])   -- into an existing ViT
--
-- Names are timm's (DESIGN.md section 3): cls_token (1,1,D), pos_embed (1,1+g*g,D),
-- patch_embed.proj.weight (D,C,P,P) / .bias, blocks.<i>.norm1, blocks.<i>.attn.qkv
-- (3D,D) with rows laid out (3, heads, head_dim), blocks.<i>.attn.proj, blocks.<i>.norm2,
-- blocks.<i>.mlp.fc1, blocks.<i>.mlp.fc2, norm, head; Linear weights (out, in). The model
-- side (nn/vit.lua) uses LayerNorm eps 1e-6 and the exact erf GELU, as timm, so the
-- logits agree with PyTorch's (tests/lua/test_checkpoint.lua, fixture made by
-- tests/ref/make_vit_fixture.py).
--
-- Loading is strict by default: every missing, unexpected and mis-shaped key is listed
-- in ONE error. Mis-shaped keys are always an error (as in PyTorch); with strict = false
-- missing and unexpected keys are returned in the report instead.
-- The head count is not in the weights: it comes from opts.heads or the file's safetensors
-- metadata ("heads", which attnlab's saves write, or an "attnlab_vit" config); with
-- neither, loading fails with a one-line error naming the file (no dim // 64 guess).
-- The one shape change that is repaired is pos_embed when the image size (patch grid)
-- differs: the grid part is resampled as timm/DeiT do (F.interpolate, align_corners=False,
-- antialias=False), bicubic by default (pos_resample = "bilinear" for bilinear), the class
-- token's entry kept (tests/ref/make_pos_resample_fixture.py holds PyTorch's values).
-- Prefixes "module." (DDP) and "model." (DeiT's .pth wrapped dict, converted) are
-- stripped. DeiT's distilled models (dist_token, head_dist) are not supported: their
-- extra keys are reported as unexpected.
local al = require "attnlab"

local M = {}

local function shape_str(t) return "(" .. table.concat(t:shape(), ",") .. ")" end

-- ---- position embedding resampling ------------------------------------------------------
-- timm's rule (resample_abs_pos_embed; DeiT's fine-tuning at 384): the grid part of
-- pos_embed, viewed as a (D, g, g) image, is resized to (D, G, G) by PyTorch's
-- F.interpolate(mode, align_corners=False, antialias=False); prefix (class) tokens are kept.
-- Both modes are separable, so each is a (G x g) matrix of 1-D weights applied along rows
-- then columns. The weights are PyTorch's; the sums run in double and are rounded to
-- float32 once, so the result is the exact answer for the float32 input to within half an
-- ulp (PyTorch's own float32 kernel is off from it by up to ~1.5e-6 at |x| ~ 3).
-- Note timm >= 0.9 passes antialias=True by default, which for bicubic is PIL's kernel
-- (a = -0.5, renormalised at the borders) and differs from this by up to ~0.3 at |x| ~ 3
-- (tests/ref/make_pos_resample_fixture.py prints it); DeiT and timm < 0.9 use this rule.
M.POS_RESAMPLE_MODES = { bicubic = true, bilinear = true }
M.POS_RESAMPLE_DEFAULT = "bicubic"

-- 1-D bilinear weights (G x g), align_corners=False:
--   src = (i + 0.5) * g / G - 0.5, clamped below at 0; i0 = floor(src), i1 = min(i0+1, g-1),
--   out[i] = (1 - w) in[i0] + w in[i1], w = src - i0.
function M.bilinear_weights(g, G)
  local W = {}
  local scale = g / G
  for i = 0, G - 1 do
    local row = {}
    for j = 1, g do row[j] = 0 end
    local src = (i + 0.5) * scale - 0.5
    if src < 0 then src = 0 end
    local i0 = math.floor(src)
    if i0 > g - 1 then i0 = g - 1 end
    local i1 = math.min(i0 + 1, g - 1)
    local w = src - i0
    row[i0 + 1] = row[i0 + 1] + (1 - w)
    row[i1 + 1] = row[i1 + 1] + w
    W[i + 1] = row
  end
  return W
end

-- Keys' cubic convolution kernel with A = -0.75 (PyTorch's upsample_bicubic2d; Keys 1981
-- with OpenCV's A): |x| <= 1: (A+2)|x|^3 - (A+3)|x|^2 + 1; 1 < |x| < 2: A|x|^3 - 5A|x|^2
-- + 8A|x| - 4A.
local CUBIC_A = -0.75
local function cubic1(x) return ((CUBIC_A + 2) * x - (CUBIC_A + 3)) * x * x + 1 end
local function cubic2(x) return ((CUBIC_A * x - 5 * CUBIC_A) * x + 8 * CUBIC_A) * x - 4 * CUBIC_A end

-- 1-D bicubic weights (G x g), align_corners=False: src = (i + 0.5) * g / G - 0.5, NOT
-- clamped (unlike bilinear); i0 = floor(src), t = src - i0; taps i0-1 .. i0+2 with weights
-- cubic2(t+1), cubic1(t), cubic1(1-t), cubic2(2-t), each index clamped to [0, g-1] (the
-- border pixel repeats, so clamped taps add up on it).
function M.bicubic_weights(g, G)
  local W = {}
  local scale = g / G
  for i = 0, G - 1 do
    local row = {}
    for j = 1, g do row[j] = 0 end
    local src = (i + 0.5) * scale - 0.5
    local i0 = math.floor(src)
    local t = src - i0
    local w = { cubic2(t + 1), cubic1(t), cubic1(1 - t), cubic2(2 - t) }
    for k = 1, 4 do
      local j = math.min(math.max(i0 - 2 + k, 0), g - 1)
      row[j + 1] = row[j + 1] + w[k]
    end
    W[i + 1] = row
  end
  return W
end

local function check_mode(mode, who)
  mode = mode or M.POS_RESAMPLE_DEFAULT
  if not M.POS_RESAMPLE_MODES[mode] then
    error(("%s: pos_resample must be \"bicubic\" or \"bilinear\", got %s"):format(who,
      type(mode) == "string" and ("\"" .. mode .. "\"") or tostring(mode)), 3)
  end
  return mode
end

-- pe (1, prefix + g*g, D) -> (1, prefix + G*G, D): the grid part resized as an image of D
-- channels, the first `prefix` (default 1: the class token) entries kept. opts.prefix,
-- opts.mode ("bicubic", the default, or "bilinear"). Identity (a copy) when G == g.
function M.resample_pos_embed(pe, new_grid, opts)
  local prefix = (opts and opts.prefix) or 1
  local mode = check_mode(opts and opts.mode, "resample_pos_embed")
  local s = pe:shape()
  if #s ~= 3 or s[1] ~= 1 then
    error(("resample_pos_embed: expected pos_embed (1, %d + g*g, D), got %s"):format(prefix, shape_str(pe)), 2)
  end
  local n, D = s[2] - prefix, s[3]
  local g = math.floor(math.sqrt(n) + 0.5)
  if g * g ~= n or n <= 0 then
    error(("resample_pos_embed: pos_embed %s has %d grid entries after %d prefix token(s): not a square grid")
      :format(shape_str(pe), n, prefix), 2)
  end
  local G = new_grid
  if math.type(G) ~= "integer" or G < 1 then error("resample_pos_embed: new_grid must be a positive integer", 2) end
  if G == g then return pe:clone() end
  local W = mode == "bicubic" and M.bicubic_weights(g, G) or M.bilinear_weights(g, G)
  local x = al.no_grad(function() return pe:contiguous():reshape({ -1 }):totable() end)
  -- x[(prefix + a*g + b) * D + d + 1] is grid row a, column b, channel d (0-based a, b, d)
  local base = prefix * D
  -- along columns: tmp[a][J][d] = sum_b W[J][b] x[a][b][d]
  local tmp = {}
  for a = 0, g - 1 do
    for J = 1, G do
      local wj, o = W[J], (a * G + (J - 1)) * D
      for d = 1, D do tmp[o + d] = 0.0 end
      for b = 1, g do
        local w = wj[b]
        if w ~= 0 then
          local src = base + (a * g + b - 1) * D
          for d = 1, D do tmp[o + d] = tmp[o + d] + w * x[src + d] end
        end
      end
    end
  end
  -- along rows: out[I][J][d] = sum_a W[I][a] tmp[a][J][d]
  local out = {}
  for k = 1, base do out[k] = x[k] end
  for I = 1, G do
    local wi = W[I]
    for J = 1, G do
      local o = base + ((I - 1) * G + (J - 1)) * D
      for d = 1, D do out[o + d] = 0.0 end
      for a = 1, g do
        local w = wi[a]
        if w ~= 0 then
          local src = ((a - 1) * G + (J - 1)) * D
          for d = 1, D do out[o + d] = out[o + d] + w * tmp[src + d] end
        end
      end
    end
  end
  return al.tensor(out):reshape({ 1, prefix + G * G, D })
end

-- ---- reading ----------------------------------------------------------------------------
-- A state dict from a path (safetensors) or a table; known wrapper prefixes stripped.
function M.read(path_or_sd)
  local sd, meta
  if type(path_or_sd) == "string" then
    local ok, a, b = pcall(al.load, path_or_sd)
    if not ok then error(("checkpoint: cannot read %s: %s"):format(path_or_sd, tostring(a)), 3) end
    sd, meta = a, b
  elseif type(path_or_sd) == "table" then
    sd, meta = path_or_sd, {}
  else
    error("checkpoint: expected a safetensors path or a state dict table, got " .. type(path_or_sd), 3)
  end
  local out = {}
  for k, v in pairs(sd) do
    local k2 = k:gsub("^module%.", ""):gsub("^model%.", "")
    out[k2] = v
  end
  return out, meta
end

-- The head count of a checkpoint, which its weights do not determine (qkv is (3D, D) for
-- any head count dividing D). From the caller (opts.heads) or the safetensors metadata:
-- a "heads" entry (attnlab's saves write it) or the "heads" of an "attnlab_vit" config.
-- Neither is an error: attnlab never guesses (timm's dim // 64 convention is wrong for
-- most small models). When both are given they must agree. Returns heads, source.
local function divisors(D)
  local t = {}
  for h = 1, D do if D % h == 0 then t[#t + 1] = tostring(h) end end
  if #t > 12 then t = { t[1], t[2], t[3], t[4], t[5], "...", t[#t] } end
  return table.concat(t, ", ")
end

function M.heads_from_metadata(meta)
  meta = meta or {}
  local v, key = meta.heads, "heads"
  if v == nil and meta.attnlab_vit then
    local ok, c = pcall(al.json.decode, meta.attnlab_vit)
    if ok and type(c) == "table" then v, key = c.heads, "attnlab_vit.heads" end
  end
  if v == nil then return nil end
  local h = math.tointeger(tonumber(v))
  if not h or h < 1 then return nil, ("metadata %s = %s is not a positive integer"):format(key, tostring(v)) end
  return h, key
end

function M.resolve_heads(D, meta, opts, where)
  opts = opts or {}
  where = where or "state dict"
  local mh, key = M.heads_from_metadata(meta)
  if mh == nil and key then error(("checkpoint: %s: %s"):format(where, key), 0) end
  local h, source = mh, mh and ("metadata " .. key)
  if opts.heads ~= nil then
    local ch = math.tointeger(opts.heads)
    if not ch or ch < 1 then error(("checkpoint: heads must be a positive integer, got %s"):format(al.cli.show(opts.heads)), 0) end
    if mh and mh ~= ch then
      error(("checkpoint: %s records heads = %d in its metadata (%s), but heads = %d was passed"):format(where, mh, key, ch), 0)
    end
    h, source = ch, source or "caller"
  end
  if not h then
    error(("checkpoint: %s does not record its head count (no \"heads\" in its safetensors metadata) and none was passed: give heads = H, a divisor of dim %d (%s), as {heads = H} in Lua or --heads H to the scripts; attnlab does not guess it")
      :format(where, D, divisors(D)), 0)
  end
  if D % h ~= 0 then error(("checkpoint: %s: dim %d is not divisible by heads %d (from %s)"):format(where, D, h, source), 0) end
  return h, source
end

-- ViT options inferred from timm weights: dim, depth, patch_size, channels, num_classes,
-- mlp_ratio, qkv_bias, image_size (from the pos_embed grid), and heads with heads_source
-- (resolve_heads: opts.heads or the metadata `meta`, else an error naming `where`).
function M.infer_config(sd, opts, meta, where)
  opts = opts or {}
  local function need(k)
    local t = sd[k]
    if not t then error(("checkpoint: cannot infer the ViT config: no '%s' in the checkpoint (is it a timm ViT?)"):format(k), 3) end
    return t
  end
  local pw = need("patch_embed.proj.weight")
  local ps = pw:shape()
  if #ps ~= 4 or ps[3] ~= ps[4] then
    error(("checkpoint: patch_embed.proj.weight is %s, want (D, C, P, P)"):format(shape_str(pw)), 3)
  end
  local D, C, P = ps[1], ps[2], ps[3]
  local depth = 0
  while sd[("blocks.%d.norm1.weight"):format(depth)] do depth = depth + 1 end
  if depth == 0 then error("checkpoint: no blocks.<i>.norm1.weight keys: not a timm ViT", 3) end
  local pe = need("pos_embed"):shape()
  local n = pe[2] - 1
  local g = math.floor(math.sqrt(n) + 0.5)
  if g * g ~= n then
    error(("checkpoint: pos_embed is (%s): %d entries after the class token is not a square grid")
      :format(table.concat(pe, ","), n), 3)
  end
  local head = need("head.weight"):shape()
  local fc1 = need("blocks.0.mlp.fc1.weight"):shape()
  local heads, source = M.resolve_heads(D, meta, opts, where)
  return { dim = D, depth = depth, heads = heads, heads_source = source, patch_size = P, channels = C,
           num_classes = head[1], mlp_ratio = fc1[1] / D, qkv_bias = sd["blocks.0.attn.qkv.bias"] ~= nil,
           image_size = g * P, checkpoint_grid = g }
end

-- ---- loading ------------------------------------------------------------------------------
-- Load timm weights into `model` (an al.nn.ViT). opts: strict (default true),
-- resample_pos_embed (default true), pos_resample ("bicubic", the default, or "bilinear").
-- Returns model, report with
--   missing, unexpected, misshaped (sorted lists), resampled = {from = g, to = G, mode =} or nil.
M.LOAD_VIT_OPTIONS = { "strict", "resample_pos_embed", "pos_resample" }
function M.load_vit(model, path_or_sd, opts)
  opts = al.nn.check_opts("checkpoint.load_vit", opts, al.nn.keyset(M.LOAD_VIT_OPTIONS))
  local mode = check_mode(opts.pos_resample, "checkpoint")
  local strict = opts.strict ~= false
  local sd = M.read(path_or_sd)
  local where = type(path_or_sd) == "string" and path_or_sd or "state dict"
  local own = model:state_dict()
  local report = { missing = {}, unexpected = {}, misshaped = {} }
  -- pos_embed: resample the grid when the image size differs
  local pe = sd.pos_embed
  if pe and own.pos_embed and al.is_tensor(pe) and shape_str(pe) ~= shape_str(own.pos_embed) then
    local ps, ms = pe:shape(), own.pos_embed:shape()
    local ng = math.floor(math.sqrt(ms[2] - 1) + 0.5)
    if opts.resample_pos_embed ~= false and #ps == 3 and ps[1] == 1 and ps[3] == ms[3] and ms[2] - 1 == ng * ng then
      local ok, r = pcall(M.resample_pos_embed, pe, ng, { mode = mode })
      if ok then
        report.resampled = { from = math.floor(math.sqrt(ps[2] - 1) + 0.5), to = ng, mode = mode }
        local copy = {}
        for k, v in pairs(sd) do copy[k] = v end
        copy.pos_embed = r
        sd = copy
      end
    end
  end
  local keys = {}
  for k in pairs(own) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v, t = sd[k], own[k]
    if v == nil then report.missing[#report.missing + 1] = k
    elseif not al.is_tensor(v) then report.misshaped[#report.misshaped + 1] = k .. ": not a tensor"
    elseif shape_str(v) ~= shape_str(t) then
      report.misshaped[#report.misshaped + 1] = ("%s: checkpoint %s, model %s"):format(k, shape_str(v), shape_str(t))
    end
  end
  for k in pairs(sd) do if own[k] == nil then report.unexpected[#report.unexpected + 1] = k end end
  table.sort(report.unexpected)
  if #report.misshaped > 0 or (strict and (#report.missing > 0 or #report.unexpected > 0)) then
    local parts = {}
    local function add(what, list, sep)
      if #list > 0 then parts[#parts + 1] = ("%s (%d): %s"):format(what, #list, table.concat(list, sep)) end
    end
    add("missing keys", report.missing, ", ")
    add("unexpected keys", report.unexpected, ", ")
    add("mis-shaped", report.misshaped, "; ")
    local hint = ""
    if sd.dist_token then hint = " (a distilled DeiT: dist_token/head_dist are not supported)" end
    error(("checkpoint: %s does not match the model %s%s: %s%s"):format(where, model.__name or "ViT",
      model.extra_repr and ("(" .. model:extra_repr() .. ")") or "", table.concat(parts, "; "), hint), 2)
  end
  al.no_grad(function()
    for _, k in ipairs(keys) do
      local v = sd[k]
      if v ~= nil then own[k]:copy_(v:dtype() == own[k]:dtype() and v or v:float()) end
    end
  end)
  return model, report
end

-- Build an al.nn.ViT from a checkpoint's shapes and load it. opts: heads (required unless
-- the file's metadata records it; resolve_heads), metadata and source (for a state dict
-- table: its file's metadata and name), image_size (default: the checkpoint's; another size
-- resamples pos_embed), pos_resample ("bicubic" default, "bilinear"), normalizer, strict,
-- init (default "timm": what a key missing from a non-strict load keeps).
-- Every option vit_from_file reads: a misspelt one (nromalizer = "sparsemax") would otherwise be
-- ignored and the model built with the default, a silently different experiment.
M.VIT_FROM_FILE_OPTIONS = { "heads", "metadata", "source", "image_size", "pos_resample", "resample_pos_embed",
                            "normalizer", "iters", "strict", "init" }
function M.vit_from_file(path_or_sd, opts)
  opts = al.nn.check_opts("checkpoint.vit_from_file", opts, al.nn.keyset(M.VIT_FROM_FILE_OPTIONS))
  check_mode(opts.pos_resample, "checkpoint")
  local sd, meta = M.read(path_or_sd)
  if type(path_or_sd) ~= "string" and opts.metadata then meta = opts.metadata end
  local where = type(path_or_sd) == "string" and path_or_sd or opts.source or "the state dict"
  local c = M.infer_config(sd, opts, meta, where)
  local vopts = { image_size = opts.image_size or c.image_size, patch_size = c.patch_size, channels = c.channels,
                  num_classes = c.num_classes, dim = c.dim, depth = c.depth, heads = c.heads, mlp_ratio = c.mlp_ratio,
                  qkv_bias = c.qkv_bias, normalizer = opts.normalizer or "softmax", iters = opts.iters,
                  init = opts.init or "timm" }   -- timm's init for anything not in the checkpoint
  local model = al.nn.ViT(vopts)
  local _, report = M.load_vit(model, sd, { strict = opts.strict, resample_pos_embed = opts.resample_pos_embed,
                                            pos_resample = opts.pos_resample })
  if type(path_or_sd) == "string" then report.path = path_or_sd end
  return model, report, c
end

return M
