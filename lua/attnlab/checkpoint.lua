-- attnlab.checkpoint -- load a timm / DeiT ViT checkpoint (safetensors) into al.nn.ViT.
--
--   local ckpt = require "attnlab.checkpoint"
--   local model = ckpt.vit_from_file("deit_tiny_patch16_224.safetensors", {num_classes = 1000})
--   local model2 = ckpt.vit_from_file(path, {image_size = 384})     -- pos_embed resampled
--   ckpt.load_vit(model, path_or_state_dict [, {strict = true}])   -- into an existing ViT
--
-- Names are timm's (DESIGN.md section 3): cls_token (1,1,D), pos_embed (1,1+g*g,D),
-- patch_embed.proj.weight (D,C,P,P) / .bias, blocks.<i>.norm1, blocks.<i>.attn.qkv
-- (3D,D) with rows laid out (3, heads, head_dim), blocks.<i>.attn.proj, blocks.<i>.norm2,
-- blocks.<i>.mlp.fc1, blocks.<i>.mlp.fc2, norm, head; Linear weights (out, in). The model
-- side (nn_vit.lua) uses LayerNorm eps 1e-6 and the exact erf GELU, as timm, so the
-- logits agree with PyTorch's (tests/lua/test_checkpoint.lua, fixture made by
-- tests/ref/make_vit_fixture.py).
--
-- Loading is strict by default: every missing, unexpected and mis-shaped key is listed
-- in ONE error. Mis-shaped keys are always an error (as in PyTorch); with strict = false
-- missing and unexpected keys are returned in the report instead. The one shape change
-- that is repaired is pos_embed when the image size (patch grid) differs: the grid part
-- is resampled bilinearly (PyTorch's F.interpolate(mode="bilinear", align_corners=False,
-- antialias=False)), the class token's entry is kept. Note timm's own
-- resample_abs_pos_embed defaults to bicubic; bilinear is what this loader does.
-- Prefixes "module." (DDP) and "model." (DeiT's .pth wrapped dict, converted) are
-- stripped. DeiT's distilled models (dist_token, head_dist) are not supported: their
-- extra keys are reported as unexpected.
local al = require "attnlab"

local M = {}

local function shape_str(t) return "(" .. table.concat(t:shape(), ",") .. ")" end

-- ---- position embedding resampling ------------------------------------------------------
-- 1-D bilinear weights (G x g) of PyTorch's align_corners=False rule:
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

-- pe (1, prefix + g*g, D) -> (1, prefix + G*G, D): the grid part resampled bilinearly as an
-- image of D channels, the first `prefix` (default 1: the class token) entries kept.
-- Identity (a copy) when G == g.
function M.resample_pos_embed(pe, new_grid, opts)
  local prefix = (opts and opts.prefix) or 1
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
  local Wy = M.bilinear_weights(g, G)
  -- separable: K[(I,J), (a,b)] = Wy[I][a] * Wy[J][b]  (square grids: same weights both ways)
  local K = {}
  for I = 1, G do
    for J = 1, G do
      local row = {}
      for a = 1, g do
        local wa = Wy[I][a]
        for b = 1, g do row[(a - 1) * g + b] = wa * Wy[J][b] end
      end
      K[#K + 1] = row
    end
  end
  return al.no_grad(function()
    local grid = pe:narrow(2, prefix + 1, n):reshape({ n, D })
    local out = al.matmul(al.tensor(K), grid):reshape({ 1, G * G, D })
    if prefix == 0 then return out end
    return al.cat({ pe:narrow(2, 1, prefix), out }, 2):contiguous()
  end)
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

-- ViT options inferred from timm weights: dim, depth, patch_size, channels, num_classes,
-- mlp_ratio, qkv_bias, image_size (from the pos_embed grid). The head count is not in
-- the weights: opts.heads, else dim // 64 (timm's convention: DeiT-Tiny 192 -> 3 heads).
function M.infer_config(sd, opts)
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
  local heads = opts.heads or math.max(1, D // 64)
  if D % heads ~= 0 then error(("checkpoint: dim %d is not divisible by heads %d"):format(D, heads), 3) end
  return { dim = D, depth = depth, heads = heads, patch_size = P, channels = C, num_classes = head[1],
           mlp_ratio = fc1[1] / D, qkv_bias = sd["blocks.0.attn.qkv.bias"] ~= nil, image_size = g * P,
           checkpoint_grid = g }
end

-- ---- loading ------------------------------------------------------------------------------
-- Load timm weights into `model` (an al.nn.ViT). opts: strict (default true),
-- resample_pos_embed (default true). Returns model, report with
--   missing, unexpected, misshaped (sorted lists), resampled = {from = g, to = G} or nil.
function M.load_vit(model, path_or_sd, opts)
  opts = opts or {}
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
      local ok, r = pcall(M.resample_pos_embed, pe, ng)
      if ok then
        report.resampled = { from = math.floor(math.sqrt(ps[2] - 1) + 0.5), to = ng }
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

-- Build an al.nn.ViT from a checkpoint's shapes and load it. opts: heads (default
-- dim // 64), image_size (default: the checkpoint's; another size resamples pos_embed),
-- normalizer, strict, init (default "timm": what a key missing from a non-strict load keeps).
function M.vit_from_file(path_or_sd, opts)
  opts = opts or {}
  local sd = M.read(path_or_sd)
  local c = M.infer_config(sd, opts)
  local vopts = { image_size = opts.image_size or c.image_size, patch_size = c.patch_size, channels = c.channels,
                  num_classes = c.num_classes, dim = c.dim, depth = c.depth, heads = c.heads, mlp_ratio = c.mlp_ratio,
                  qkv_bias = c.qkv_bias, normalizer = opts.normalizer or "softmax", iters = opts.iters,
                  init = opts.init or "timm" }   -- timm's init for anything not in the checkpoint
  local model = al.nn.ViT(vopts)
  local _, report = M.load_vit(model, sd, { strict = opts.strict, resample_pos_embed = opts.resample_pos_embed })
  if type(path_or_sd) == "string" then report.path = path_or_sd end
  return model, report, c
end

return M
