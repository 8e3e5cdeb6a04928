-- attnlab.nn.checkpoint (also attnlab.checkpoint) -- save an attnlab ViT and load it back, and
-- load a timm / DeiT ViT checkpoint (safetensors) into al.nn.ViT.
--
--   local ckpt = require "attnlab.checkpoint"   -- or "attnlab.nn.checkpoint"
--   ckpt.save_vit("model.safetensors", model [, {note = "..."}])   -- atomically; the model's config in the metadata
--   local same = ckpt.vit_from_file("model.safetensors")         -- the same model: normalizer, iters, init
--   local other = ckpt.vit_from_file("model.safetensors", {normalizer = "sparsemax"})  -- an experiment
--   local m = ckpt.vit_from_file("run.ckpt")                     -- a training checkpoint's model (run/fit.lua)
--   local model = ckpt.vit_from_file("deit_tiny_patch16_224.safetensors", {heads = 3})
--   local model2 = ckpt.vit_from_file(path, {heads = 3, image_size = 384}) -- pos_embed resampled
--   ckpt.load_vit(model, path_or_state_dict [, {strict = true}])   -- into an existing ViT
--
-- Names are timm's (its VisionTransformer's state_dict): cls_token (1,1,D), pos_embed (1,1+g*g,D),
-- patch_embed.proj.weight (D,C,P,P) / .bias, blocks.<i>.norm1, blocks.<i>.attn.qkv
-- (3D,D) with rows laid out (3, heads, head_dim), blocks.<i>.attn.proj, blocks.<i>.norm2,
-- blocks.<i>.mlp.fc1, blocks.<i>.mlp.fc2, norm, head; Linear weights (out, in). The model
-- side (nn/vit.lua) uses LayerNorm eps 1e-6 and the exact erf GELU, as timm, so the
-- logits agree with PyTorch's (tests/lua/test_checkpoint.lua, fixture made by
-- tests/ref/make_vit_fixture.py).
--
-- attnlab's own files (save_vit, s2s.save_model, training checkpoints) carry the model's
-- al.nn.ViT options as JSON in the safetensors metadata entry `attnlab_vit`, and `heads`;
-- vit_from_file rebuilds such a file's model from them (tests/lua/test_model_save.lua: bitwise
-- the same logits for every normalizer). A timm file has no such entry: its architecture comes
-- from its tensors' shapes and its normalizer is softmax unless the caller names another.
-- Loading is strict by default: every missing, unexpected and mis-shaped key is listed
-- in ONE error, with a hint when they are a normalizer's parameters (pre_alpha: normalizer =
-- "hae"). Mis-shaped keys are always an error (as in PyTorch); with strict = false
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
local util = require "attnlab.util"

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
local clean = util.error_text

-- A training checkpoint (run/fit.lua writes one after every epoch: model.<name> and
-- optim.<name> tensors, a `state` metadata entry) as the model's tensors alone, split by
-- fit.split_checkpoint (the loop's own reader). Returns model_sd, {training = true, state =}; any
-- other file's tensors come back as they are (and nil). `where` names the file in errors.
function M.split_training(sd, meta, where)
  if type(meta) ~= "table" or meta.state == nil then return sd, nil end
  local fit = require "attnlab.run.fit"
  local ok, ck = pcall(fit.split_checkpoint, sd, meta)
  if not ok then
    error(("checkpoint: %s has 'state' metadata, as a training checkpoint has, but cannot be read as one: %s")
      :format(where or "the state dict", clean(ck)), 0)
  end
  return ck.model, { training = true, state = ck.state }
end

-- The name of the first tensor (in name order) of a name -> tensor table that holds a NaN or an
-- infinity, or nil. One pass over the data: cheap next to building or training the model.
function M.nonfinite_tensor(sd)
  local names = {}
  for k, v in pairs(sd) do if al.is_tensor(v) then names[#names + 1] = k end end
  table.sort(names)
  for _, k in ipairs(names) do if sd[k]:has_nonfinite() then return k end end
end

-- A model's tensors must all be finite: a NaN or inf weight (a diverged run's save, a damaged
-- file) gives NaN logits, and an "accuracy" counted from them, or a degenerate profile, would be
-- a result of nothing. Raises "<where>: tensor <name> holds NaN or inf ..." for the first such
-- tensor. The one check of every model reader (M.read, s2s.load_model); Module:load_state_dict,
-- a tensor API as PyTorch's, does not make it.
function M.check_finite(sd, where)
  local bad = M.nonfinite_tensor(sd)
  if bad then
    error(("%s: tensor %s holds NaN or inf (a diverged or damaged model); it cannot be used"):format(where, bad), 0)
  end
end

-- A state dict from a path (safetensors) or a table; known wrapper prefixes stripped, and of a
-- training checkpoint (M.split_training) only the model's tensors, all finite (M.check_finite).
-- Returns sd, metadata, info (info.training: it was a training checkpoint; info.state: its
-- decoded state). `table_meta`: the metadata of a table's file (a table alone has none);
-- `table_where`: its name in errors (default "the state dict").
function M.read(path_or_sd, table_meta, table_where)
  local sd, meta, where
  if type(path_or_sd) == "string" then
    local ok, a, b = pcall(al.load, path_or_sd)
    if not ok then error(("checkpoint: cannot read %s: %s"):format(path_or_sd, tostring(a)), 3) end
    sd, meta, where = a, b, path_or_sd
  elseif type(path_or_sd) == "table" then
    sd, meta, where = path_or_sd, table_meta or {}, table_where or "the state dict"
  else
    error("checkpoint: expected a safetensors path or a state dict table, got " .. type(path_or_sd), 3)
  end
  local info
  sd, info = M.split_training(sd, meta, where)
  local out = {}
  for k, v in pairs(sd) do
    local k2 = k:gsub("^module%.", ""):gsub("^model%.", "")
    out[k2] = v
  end
  M.check_finite(out, "checkpoint: " .. where)
  return out, meta, info
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

-- ---- the attnlab_vit config -------------------------------------------------------------
-- attnlab's own model files (save_vit, s2s.save_model, run/fit.lua's training checkpoints)
-- carry the model's al.nn.ViT options as JSON in the safetensors metadata entry
-- `attnlab_vit`, next to a plain `heads` entry. Everything the weights do not fix -- the
-- normalizer, its bisection iters, the init scheme -- comes from there, so a saved model
-- comes back as the same model.

local function is_vit(model) return al.nn.is_instance(model, al.nn.ViT) end

-- The ViT options of a model as plain values (no generator, no seed): what al.nn.ViT needs to
-- build the same architecture again (dim, depth, heads, mlp_ratio, normalizer, iters,
-- qkv_bias, init, embed_std, num_classes, and image_size/patch_size/channels or
-- vocab_size/seq_len). s2s.save_model writes it too.
function M.vit_config(model)
  local c = {}
  for k, v in pairs(model.cfg) do
    if type(v) == "number" or type(v) == "string" or type(v) == "boolean" then c[k] = v end
  end
  c.seed = nil
  return c
end

-- Why block l's attention `a` would not be rebuilt by the config cfg, or nil.
local function attention_problem(cfg, l, a)
  local nm = a.normalizer
  if getmetatable(nm) ~= al.nn.Normalizer then
    return ("block %d's attention normalizer is a module of its own (%s), which a config cannot rebuild")
      :format(l, type(nm) == "table" and nm.__name or tostring(nm))
  end
  if nm.name ~= cfg.normalizer or nm.iters ~= (cfg.iters or 50) then
    return ("block %d's attention uses normalizer %s (iters %d), but the model was built with %s (iters %d): " ..
      "its config would rebuild another model"):format(l, nm.name, nm.iters, tostring(cfg.normalizer), cfg.iters or 50)
  end
end

-- Why the config of `model` (M.vit_config) would not rebuild it, or nil when it would: the model
-- must be an al.nn.ViT whose every block's token mixer is its multi-head attention with the
-- stock normalizer its config names (not an S2S student with a replaced mixer, nor a normalizer
-- module set by hand). With opts.mixers, a block whose mixer is a built-in one (BiMamba or
-- BiLSTM, which carry their mixer_spec) passes: s2s.save_model writes the specs beside the config.
-- A mixer of the user's own never does: no file can rebuild it.
function M.plain_vit_problem(model, opts)
  if not is_vit(model) or type(model.cfg) ~= "table" then
    local what = type(model) == "table" and (model.__name or "table") or type(model)
    return ("expected an al.nn.ViT, got %s"):format(what)
  end
  local cfg = model.cfg
  for l = 1, model.depth do
    local a = model:block(l).attn
    local name = type(a) == "table" and a.__name or tostring(a)
    if getmetatable(a) == al.nn.MultiHeadAttention then
      local why = attention_problem(cfg, l, a)
      if why then return why end
    elseif not (type(a) == "table" and type(rawget(a, "mixer_spec")) == "table") then
      return ("block %d's token mixer is %s, a module of your own, which no model file can rebuild: save the weights " ..
        "with al.save(path, model:state_dict()) and rebuild the model in code"):format(l, name)
    elseif not (opts and opts.mixers) then
      return ("block %d's token mixer is %s, not attention: an S2S model, which s2s.save_model writes (with its mixers)")
        :format(l, name)
    end
  end
end


-- The metadata entries of a model file for `model`: attnlab_vit (M.vit_config as JSON) and heads.
function M.vit_metadata(model)
  return { attnlab_vit = al.json.encode(M.vit_config(model)), heads = tostring(model.cfg.heads) }
end

-- The JSON object in metadata entry `field`, decoded; a damaged entry is one line
-- "<where>: metadata <field> ..." (s2s/distill.lua reads its own entries with it too).
function M.metadata_object(meta, field, where)
  local v, why = util.decode_json(meta[field])
  if why then error(("%s: metadata %s is not valid JSON: %s"):format(where, field, why), 0) end
  if type(v) ~= "table" then error(("%s: metadata %s must be a JSON object, got %s"):format(where, field, tostring(meta[field])), 0) end
  return v
end

-- The attnlab_vit config of a file's metadata, checked before a model is built from it, or nil
-- when the metadata has none. A damaged or crafted entry (depth "x", image_size -32, no dim, a
-- heads entry that contradicts it) is one line "<where>: metadata attnlab_vit.<field> ...", not
-- an error from inside the ViT or a silently different shape (a missing dim would take ViT's
-- preset one). s2s.load_model reads its files' configs through this.
function M.config_from_metadata(meta, where)
  if type(meta) ~= "table" or meta.attnlab_vit == nil then return nil end
  local function bad(field, why) error(("%s: metadata %s %s"):format(where, field, why), 0) end
  local c = M.metadata_object(meta, "attnlab_vit", where)
  local function posint(k, required)
    local v = c[k]
    if v == nil and not required then return end
    if math.type(v) ~= "integer" or v < 1 then
      bad("attnlab_vit." .. k, v == nil and "is missing" or ("must be a positive integer, got %s"):format(al.json.encode(v)))
    end
  end
  for _, k in ipairs({ "dim", "depth", "heads", "num_classes" }) do posint(k, true) end
  if c.vocab_size ~= nil then
    posint("vocab_size", true); posint("seq_len", true)
  else
    for _, k in ipairs({ "image_size", "patch_size" }) do posint(k, true) end
    posint("channels", false)
    if c.image_size % c.patch_size ~= 0 then
      bad("attnlab_vit.image_size", ("%d is not a multiple of patch_size %d"):format(c.image_size, c.patch_size))
    end
  end
  if c.dim % c.heads ~= 0 then bad("attnlab_vit.heads", ("%d does not divide dim %d"):format(c.heads, c.dim)) end
  if meta.heads ~= nil and math.tointeger(tonumber(meta.heads)) ~= c.heads then
    bad("heads", ("= %s contradicts attnlab_vit.heads = %d"):format(tostring(meta.heads), c.heads))
  end
  return c
end

-- A list of key names for an error line, capped (util.key_list).
M.key_list = util.key_list

-- The sizes a file's tensors show, for checking its attnlab_vit config against them BEFORE a
-- model is built from it (config_from_metadata checks the entry's own form only): a damaged or
-- crafted entry (depth = 1e9, dim = 16384) would otherwise build a model of that size first --
-- unbounded memory and time -- and then fail with a list of every key. `c` is the config
-- (config_from_metadata's), `sd` the file's model tensors (prefixes stripped), `where` the
-- error's prefix ("checkpoint: <file>"). Each size that drives an allocation -- depth, dim,
-- num_classes, the MLP width, patch_size, channels, image_size (image models), vocab_size and
-- seq_len (text models) -- must be what the tensors show; qkv_bias too. One line naming the key
-- and both values, or the tensor that should show it.
function M.check_config_weights(c, sd, where)
  local function say(k, want, got)
    error(("%s: its metadata attnlab_vit says %s = %s, but its weights have %s = %s (a damaged or hand-edited file)")
      :format(where, k, al.cli.show(want), k, al.cli.show(got)), 0)
  end
  local function none(k, want, tensors)
    error(("%s: its metadata attnlab_vit says %s = %s, but the file has no %s to show it (a damaged or hand-edited file)")
      :format(where, k, al.cli.show(want), tensors), 0)
  end
  local function shape(k, rank)
    local t = sd[k]
    if not al.is_tensor(t) then return nil end
    local s = t:shape()
    if rank and #s ~= rank then return nil end
    return s
  end
  -- depth: the distinct blocks.<i> prefixes
  local seen, depth = {}, 0
  for k in pairs(sd) do
    local i = type(k) == "string" and k:match("^blocks%.(%d+)%.")
    if i and not seen[i] then seen[i] = true; depth = depth + 1 end
  end
  if depth ~= c.depth then say("depth", c.depth, depth) end
  -- dim: the final norm's width (else the class token's)
  local D
  local nw, ct = shape("norm.weight", 1), shape("cls_token", 3)
  if nw then D = nw[1] elseif ct then D = ct[3] else none("dim", c.dim, "norm.weight or cls_token") end
  if D ~= c.dim then say("dim", c.dim, D) end
  -- num_classes: the head's rows
  local hw = shape("head.weight", 2)
  if not hw then none("num_classes", c.num_classes, "head.weight") end
  if hw[1] ~= c.num_classes then say("num_classes", c.num_classes, hw[1]) end
  -- the MLP width and qkv_bias: of the first block that has them (an S2S block keeps its MLP)
  local ratio = c.mlp_ratio == nil and al.nn.ViT.PRESET.mlp_ratio or c.mlp_ratio
  if type(ratio) == "number" then
    local fc1
    for i = 0, depth - 1 do
      fc1 = shape(("blocks.%d.mlp.fc1.weight"):format(i), 2)
      if fc1 then break end
    end
    local want = math.floor(c.dim * ratio)
    if not fc1 then none("MLP width (dim * mlp_ratio)", want, "blocks.<i>.mlp.fc1.weight") end
    if fc1[1] ~= want then say("MLP width (dim * mlp_ratio)", want, fc1[1]) end
  end
  local qb = c.qkv_bias == nil and al.nn.ViT.PRESET.qkv_bias or c.qkv_bias
  for i = 0, depth - 1 do
    if sd[("blocks.%d.attn.qkv.weight"):format(i)] then
      local has = sd[("blocks.%d.attn.qkv.bias"):format(i)] ~= nil
      if has ~= (qb == true) then say("qkv_bias", qb, has) end
      break
    end
  end
  -- the token count: pos_embed (1, 1 + tokens, D)
  local pe = shape("pos_embed", 3)
  if c.vocab_size ~= nil then
    local te = shape("tok_embed.weight", 2)
    if not te then none("vocab_size", c.vocab_size, "tok_embed.weight") end
    if te[1] ~= c.vocab_size then say("vocab_size", c.vocab_size, te[1]) end
    if not pe then none("seq_len", c.seq_len, "pos_embed") end
    if pe[2] - 1 ~= c.seq_len then say("seq_len", c.seq_len, pe[2] - 1) end
  else
    local pw = shape("patch_embed.proj.weight", 4)
    if not pw then none("patch_size", c.patch_size, "patch_embed.proj.weight") end
    if pw[3] ~= c.patch_size then say("patch_size", c.patch_size, pw[3]) end
    local ch = c.channels or 3
    if pw[2] ~= ch then say("channels", ch, pw[2]) end
    if not pe then none("image_size", c.image_size, "pos_embed") end
    local n = pe[2] - 1
    local g = math.floor(math.sqrt(math.max(n, 0)) + 0.5)
    if g * g ~= n then
      error(("%s: its pos_embed %s does not hold a square grid of patches after the class token (a damaged file)")
        :format(where, shape_str(sd.pos_embed)), 0)
    end
    if g * pw[3] ~= c.image_size then say("image_size", c.image_size, g * pw[3]) end
  end
end

-- ---- saving ---------------------------------------------------------------------------------
-- save_vit(path, model [, meta]) -> path: the model's tensors with timm's names (its
-- state_dict), and safetensors metadata attnlab_vit (M.vit_config as JSON), heads, and the
-- caller's `meta` entries (strings as they are, other values as JSON). Written atomically (a
-- temporary file renamed over `path`: a killed save leaves the old file or none). vit_from_file
-- rebuilds the same model from it: same normalizer, bitwise the same logits. S2S models (a
-- replaced token mixer) are refused: s2s.save_model writes them.
local RESERVED_META = { attnlab_vit = true, heads = true, state = true, s2s_mixers = true }
function M.save_vit(path, model, meta)
  local who = "checkpoint.save_vit"
  if type(path) ~= "string" or path == "" then
    error(("%s: path must be a file path (a non-empty string), got %s"):format(who, al.cli.show(path)), 0)
  end
  local why = M.plain_vit_problem(model)
  if why then error(("%s: %s"):format(who, why), 0) end
  if meta ~= nil and type(meta) ~= "table" then
    error(("%s: meta must be a table {key = value, ...}, got %s"):format(who, type(meta)), 0)
  end
  local m = M.vit_metadata(model)
  for k, v in pairs(meta or {}) do
    if type(k) ~= "string" then error(("%s: meta keys must be strings, got %s"):format(who, al.cli.show(k)), 0) end
    if RESERVED_META[k] then
      error(("%s: meta key '%s' is attnlab's own (written from the model); use another name"):format(who, k), 0)
    end
    if type(v) == "string" then m[k] = v
    else
      local ok, text = pcall(al.json.encode, v)
      if not ok then error(("%s: meta.%s cannot be written as JSON: %s"):format(who, k, clean(text)), 0) end
      m[k] = text
    end
  end
  -- a diverged model's weights would load as NaN logits: refused here, as every reader refuses them
  local sd = model:state_dict()
  local bad = M.nonfinite_tensor(sd)
  if bad then
    error(("%s: tensor %s holds NaN or inf (a diverged model); nothing was saved to %s"):format(who, bad, path), 0)
  end
  local ok, err = pcall(al.save, path, sd, m)
  if not ok then error(("%s: cannot write %s: %s"):format(who, path, clean(err, "attnlab.save")), 0) end
  return path
end

-- ---- loading ------------------------------------------------------------------------------
-- Why a strict load failed, in words, from the keys it reported: normalizer parameters the model
-- lacks (and which normalizer takes them), ones the file lacks, a replaced token mixer.
-- file_normalizer: the normalizer the file records (its attnlab_vit), when known.
local function load_hints(report, model, file_normalizer)
  local hints = {}
  local cfg = model.cfg or {}
  local have = cfg.normalizer
  local extra, extra_list, lacking, lacking_list, mixer_blocks = {}, {}, {}, {}, {}
  local other_parts = {}   -- attention parts neither attnlab's nor an S2S mixer's (timm's q_norm)
  for _, k in ipairs(report.unexpected) do
    local p = k:match("^blocks%.%d+%.attn%.normalizer%.(.+)$")
    if p then
      if not extra[p] then extra[p] = true; extra_list[#extra_list + 1] = p end
    else
      local b, child = k:match("^blocks%.(%d+)%.attn%.([^.]+)")
      -- both S2S mixers (BiMamba, BiLSTM) project their output with out_proj
      if b and child == "out_proj" and not mixer_blocks[b] then
        mixer_blocks[b] = true; mixer_blocks[#mixer_blocks + 1] = tonumber(b) + 1
      end
    end
  end
  for _, k in ipairs(report.missing) do
    local p = k:match("^blocks%.%d+%.attn%.normalizer%.(.+)$")
    if p and not lacking[p] then lacking[p] = true; lacking_list[#lacking_list + 1] = p end
  end
  if #extra_list > 0 then
    local names = {}
    for _, p in ipairs(extra_list) do names[#names + 1] = "blocks.<i>.attn.normalizer." .. p end
    local fits = {}
    if file_normalizer then fits[1] = file_normalizer
    else
      for _, name in ipairs(al.nn.Normalizer.NAMES) do
        if not name:find("<", 1, true) then
          local ok, nm = pcall(al.nn.Normalizer, { name = name, heads = cfg.heads or 1 })
          if ok then
            local own, all = nm:state_dict(), true
            for _, p in ipairs(extra_list) do if own[p] == nil then all = false end end
            if all then fits[#fits + 1] = name end
          end
        end
      end
    end
    if #fits > 0 then
      local opts = {}
      for i, n in ipairs(fits) do opts[i] = ("normalizer = \"%s\""):format(n) end
      hints[#hints + 1] = ("the file's %s %s of normalizer \"%s\", which \"%s\" does not have: load it with %s%s")
        :format(table.concat(names, ", "), #names == 1 and "is a learned parameter" or "are learned parameters", fits[1],
          tostring(have), table.concat(opts, " or "),
          file_normalizer and (", which the file records, or strict = false to drop them") or "")
    else
      hints[#hints + 1] = ("the file has normalizer parameters (%s) that no built-in normalizer takes"):format(table.concat(names, ", "))
    end
  elseif #lacking_list > 0 then
    local names = {}
    for _, p in ipairs(lacking_list) do names[#names + 1] = "blocks.<i>.attn.normalizer." .. p end
    hints[#hints + 1] = ("the file has no %s, so it was not saved from a \"%s\" model: load it with the normalizer it was " ..
      "trained with%s, or strict = false to keep \"%s\"'s initial values"):format(table.concat(names, ", "), tostring(have),
      file_normalizer and (" (normalizer = \"%s\", which the file records)"):format(file_normalizer) or
      " (normalizer = ...)", tostring(have))
  end
  if #mixer_blocks > 0 then
    hints[#hints + 1] = ("block%s %s of the file have a token mixer other than attention (an S2S model): s2s.load_model reads S2S model files")
      :format(#mixer_blocks == 1 and "" or "s", table.concat(mixer_blocks, ", "))
  end
  -- any other part of a block that is not a mixer (timm's qk_norm: q_norm, k_norm) is a variant
  -- of attention, not a mixer
  for _, k in ipairs(report.unexpected) do
    local b, child = k:match("^blocks%.(%d+)%.attn%.([^.]+)")
    if b and not mixer_blocks[b] and child ~= "qkv" and child ~= "proj" and child ~= "normalizer"
      and not other_parts[child] then
      other_parts[child] = true; other_parts[#other_parts + 1] = child
    end
  end
  if #other_parts > 0 then
    hints[#hints + 1] = ("the file's attention has parts attnlab's does not (%s): a variant of the layer (timm's " ..
      "qk_norm has q_norm and k_norm) that attnlab does not implement"):format(table.concat(other_parts, ", "))
  end
  return hints
end

-- The load itself (load_vit and vit_from_file): sd is a state dict table (M.read's), `where`
-- names its file in the error.
local function load_into(model, sd, opts, where, file_normalizer)
  local mode = check_mode(opts.pos_resample, "checkpoint")
  local strict = opts.strict ~= false
  local own = model:state_dict()
  local resampled   -- {from =, to =, mode =} when pos_embed's grid was resampled
  -- pos_embed: resample the grid when the image size differs
  local pe = sd.pos_embed
  if pe and own.pos_embed and al.is_tensor(pe) and shape_str(pe) ~= shape_str(own.pos_embed) then
    local ps, ms = pe:shape(), own.pos_embed:shape()
    local ng = math.floor(math.sqrt(ms[2] - 1) + 0.5)
    if opts.resample_pos_embed ~= false and #ps == 3 and ps[1] == 1 and ps[3] == ms[3] and ms[2] - 1 == ng * ng then
      local ok, r = pcall(M.resample_pos_embed, pe, ng, { mode = mode })
      if ok then
        resampled = { from = math.floor(math.sqrt(ps[2] - 1) + 0.5), to = ng, mode = mode }
        local copy = {}
        for k, v in pairs(sd) do copy[k] = v end
        copy.pos_embed = r
        sd = copy
      end
    end
  end
  local report = al.nn.compare_state_dict(own, sd)
  report.resampled = resampled
  local keys = {}
  for k in pairs(own) do keys[#keys + 1] = k end
  table.sort(keys)
  if #report.misshaped > 0 or (strict and (#report.missing > 0 or #report.unexpected > 0)) then
    local hints = load_hints(report, model, file_normalizer)
    if sd.dist_token then hints[#hints + 1] = "a distilled DeiT: dist_token/head_dist are not supported" end
    error(("checkpoint: %s does not match the model %s%s: %s%s"):format(where, model.__name or "ViT",
      model.extra_repr and ("(" .. model:extra_repr() .. ")") or "", al.nn.state_dict_mismatch_text(report),
      #hints > 0 and (" (" .. table.concat(hints, "; ") .. ")") or ""), 0)
  end
  al.no_grad(function()
    for _, k in ipairs(keys) do
      local v = sd[k]
      if v ~= nil then own[k]:copy_(v:dtype() == own[k]:dtype() and v or v:float()) end
    end
  end)
  return model, report
end

-- Load timm weights into `model` (an al.nn.ViT): a safetensors path or a state dict; of a
-- training checkpoint (run/fit.lua's) its model's tensors. opts: strict (default true),
-- resample_pos_embed (default true), pos_resample ("bicubic", the default, or "bilinear").
-- Returns model, report with
--   missing, unexpected, misshaped (sorted lists), resampled = {from = g, to = G, mode =} or nil.
M.LOAD_VIT_OPTIONS = { "strict", "resample_pos_embed", "pos_resample" }
function M.load_vit(model, path_or_sd, opts)
  opts = al.nn.check_opts("checkpoint.load_vit", opts, al.nn.keyset(M.LOAD_VIT_OPTIONS))
  check_mode(opts.pos_resample, "checkpoint")
  local sd, meta, info = M.read(path_or_sd)
  local where = type(path_or_sd) == "string" and path_or_sd or "state dict"
  -- the normalizer the file records, for the error's hint only (the model is the caller's)
  local okc, fc = pcall(M.config_from_metadata, meta, "checkpoint: " .. where)
  local _, report = load_into(model, sd, opts, where, okc and fc and (fc.normalizer or al.nn.ViT.PRESET.normalizer) or nil)
  if info and info.training then report.training_checkpoint = true end
  return model, report
end

-- The keys of a ViT that its weights fix: a caller's value for one of them must agree with the
-- file (vit_from_file), it cannot change the model.
M.STRUCTURAL_OPTIONS = { "dim", "depth", "num_classes", "mlp_ratio", "qkv_bias", "patch_size", "channels", "vocab_size",
                         "seq_len" }

-- The normalizer (and iters) a run's configuration key records, for training checkpoints written
-- before they carried attnlab_vit: the classifier's key is flat "k=v;k=v;..." (run/train.lua).
local function normalizer_from_run_key(state)
  local key = type(state) == "table" and state.key
  if type(key) ~= "string" or key:sub(1, 1) == "{" then return nil end
  local k = ";" .. key .. ";"
  local name = k:match(";normalizer=([^;{}]+);")
  if not name or not pcall(al.nn.Normalizer.parse, name) then return nil end
  return name, math.tointeger(tonumber(k:match(";iters=(%d+);")))
end

-- Build an al.nn.ViT from a file and load it: a safetensors path (or a state dict table with
-- opts.metadata, its file's metadata, and opts.source, its name).
--  * A file with an attnlab_vit config (save_vit, s2s.save_model, a training checkpoint) is
--    rebuilt from it: architecture, normalizer, iters, init -- the same model.
--  * Any other (timm, DeiT) is built from its tensors' shapes, with normalizer "softmax"
--    unless given; heads from opts.heads or the file's "heads" metadata (resolve_heads).
--  * A training checkpoint (run/fit.lua's: model.*, optim.*, `state`) loads its model's
--    tensors; one written before checkpoints carried attnlab_vit takes its normalizer from its
--    run's configuration key.
-- opts: normalizer, iters, init (override the file's: loading a pretrained model with another
-- normalizer is an experiment; with strict = false its parameters the new one lacks are
-- dropped, those it adds keep their initial values), image_size (another size resamples
-- pos_embed), pos_resample ("bicubic" default, "bilinear"), resample_pos_embed, strict, heads,
-- and the structural keys (M.STRUCTURAL_OPTIONS: dim, depth, ...), which the file fixes: a
-- value that contradicts it is an error, as heads is.
-- Returns model, report (load_vit's, plus path and training_checkpoint), config (the file's:
-- dim, depth, heads, heads_source, ..., image_size (the file's), normalizer and
-- normalizer_source, config_source).
-- Every option vit_from_file reads: a misspelt one (nromalizer = "sparsemax") would otherwise be
-- ignored and the model built with the default, a silently different experiment.
M.VIT_FROM_FILE_OPTIONS = { "heads", "metadata", "source", "image_size", "pos_resample", "resample_pos_embed",
                            "normalizer", "iters", "strict", "init" }
for _, k in ipairs(M.STRUCTURAL_OPTIONS) do M.VIT_FROM_FILE_OPTIONS[#M.VIT_FROM_FILE_OPTIONS + 1] = k end
function M.vit_from_file(path_or_sd, opts)
  local who = "checkpoint.vit_from_file"
  opts = al.nn.check_opts(who, opts, al.nn.keyset(M.VIT_FROM_FILE_OPTIONS))
  check_mode(opts.pos_resample, "checkpoint")
  -- the caller's own values, each checked here: a bad one is the caller's, not the file's
  if opts.normalizer ~= nil then
    local ok, err = pcall(al.nn.Normalizer.parse, opts.normalizer)
    if not ok then error(("%s: %s"):format(who, clean(err)), 0) end
  end
  al.nn.Normalizer.check_iters(who, opts.iters)
  if opts.init ~= nil then
    local ok, err = pcall(al.nn.ViT.check_init, opts.init, who)
    if not ok then error(clean(err), 0) end
  end
  if opts.image_size ~= nil and (math.type(opts.image_size) ~= "integer" or opts.image_size < 1) then
    error(("%s: image_size must be a positive integer, got %s"):format(who, al.cli.show(opts.image_size)), 0)
  end
  local sd, meta, info = M.read(path_or_sd, type(path_or_sd) ~= "string" and opts.metadata or nil, opts.source)
  local where = type(path_or_sd) == "string" and path_or_sd or opts.source or "the state dict"
  local fc = M.config_from_metadata(meta, "checkpoint: " .. where)
  local c, vopts
  local file_normalizer      -- the normalizer the file records, when it records one
  if fc then
    -- the file's own config: the preset fills what it leaves out, as al.nn.ViT does
    local eff = {}
    for k, v in pairs(al.nn.ViT.PRESET) do eff[k] = v end
    for k, v in pairs(fc) do eff[k] = v end
    if eff.vocab_size == nil and eff.channels == nil then eff.channels = 3 end
    local heads, hsrc = M.resolve_heads(eff.dim, meta, opts, where)
    -- its tensors must be what the config says, before a model of the config's size is built
    M.check_config_weights(eff, sd, "checkpoint: " .. where)
    if eff.vocab_size ~= nil and opts.image_size ~= nil then
      error(("%s: %s is a text model (vocab_size %d, seq_len %d): image_size does not apply"):format(who, where,
        eff.vocab_size, eff.seq_len), 0)
    end
    c = eff
    c.heads, c.heads_source, c.config_source = heads, hsrc, "metadata attnlab_vit"
    if eff.vocab_size == nil then c.checkpoint_grid = eff.image_size // eff.patch_size end
    vopts = {}
    for k, v in pairs(fc) do vopts[k] = v end
    vopts.heads = heads
    if opts.image_size ~= nil then vopts.image_size = opts.image_size end
    if opts.init ~= nil then vopts.init = opts.init end
  else
    c = M.infer_config(sd, opts, meta, where)
    c.config_source = "weights"
    vopts = { image_size = opts.image_size or c.image_size, patch_size = c.patch_size, channels = c.channels,
              num_classes = c.num_classes, dim = c.dim, depth = c.depth, heads = c.heads, mlp_ratio = c.mlp_ratio,
              qkv_bias = c.qkv_bias, normalizer = "softmax", init = opts.init or "timm" }   -- timm's init for anything not in the checkpoint
    c.normalizer, c.normalizer_source = "softmax", "default (the file records none)"
    if info and info.training and opts.normalizer == nil then
      -- a training checkpoint from before they carried attnlab_vit: its run's key says
      local name, iters = normalizer_from_run_key(info.state)
      if not name then
        error(("checkpoint: %s is a training checkpoint that does not record its model's normalizer (written before " ..
          "checkpoints carried an attnlab_vit config): pass normalizer = NAME, the one it was trained with"):format(where), 0)
      end
      vopts.normalizer, vopts.iters = name, iters
      c.normalizer, c.normalizer_source = name, "the run's configuration key (state metadata)"
      file_normalizer = name
    end
  end
  -- the structural keys a caller gives must be the file's
  for _, k in ipairs(M.STRUCTURAL_OPTIONS) do
    local v = opts[k]
    if v ~= nil and not (c[k] == v) then
      local src = fc and "its metadata attnlab_vit" or "its weights"
      error(("%s: %s records %s = %s (%s), but %s = %s was passed: the saved weights fix it (leave it out)")
        :format(who, where, k, c[k] == nil and ("nothing (%s model)"):format(c.vocab_size and "a text" or "an image")
          or al.cli.show(c[k]), src, k, al.cli.show(v)), 0)
    end
  end
  -- the normalizer: the caller's, else the one the file records (its attnlab_vit, or an old
  -- training checkpoint's run key), else softmax (a timm file)
  if fc then
    file_normalizer = fc.normalizer or al.nn.ViT.PRESET.normalizer
    c.normalizer, c.normalizer_source = file_normalizer, "metadata attnlab_vit"
  end
  if opts.normalizer ~= nil then
    vopts.normalizer = opts.normalizer
    c.normalizer, c.normalizer_source = opts.normalizer, "caller"
  end
  if opts.iters ~= nil then vopts.iters = opts.iters end
  local okm, model = pcall(al.nn.ViT, vopts)
  if not okm then
    error(("checkpoint: %s: %s does not build a ViT: %s"):format(where, fc and "its metadata attnlab_vit" or "its config",
      clean(model)), 0)
  end
  local _, report = load_into(model, sd, { strict = opts.strict, resample_pos_embed = opts.resample_pos_embed,
                                           pos_resample = opts.pos_resample }, where, file_normalizer)
  if type(path_or_sd) == "string" then report.path = path_or_sd end
  if info and info.training then report.training_checkpoint = true end
  return model, report, c
end

return M
