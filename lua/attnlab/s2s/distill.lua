-- attnlab.s2s.distill -- attention replacement and distillation (S2S), A-ViT teacher
-- fine-tuning, evaluation with halting, throughput, and the model files they exchange.
--
--   local student = s2s.replace(teacher, {4, 5, 6}, "bimamba")   -- a copy; teacher untouched
--   local rec = s2s.distill{teacher = "teacher.safetensors", layers = {4, 5, 6}, mixer = "bimamba",
--                           dataset = "cifar10", stage1 = {epochs = 2}, stage2 = {epochs = 2},
--                           checkpoint = "results/s2s.ckpt", out = "results/s2s.json"}
--
-- replace() swaps the token mixer of the listed blocks (1-based) for a BiMamba or BiLSTM
-- and keeps everything else -- patch embedding, class token, position embedding, every
-- LayerNorm, the residual structure, every MLP, the other blocks' attention, the final
-- norm and the head -- as bit-identical copies of the teacher's tensors.
--
-- Stage 1 (distillation): the teacher runs with its own A-ViT halting (or dense, if it
-- has none) and records, per layer, its keep mask and its token mixer's output. The
-- student runs under the TEACHER's masks, and
--   loss = w_mse  * sum over replaced layers l of MSE(student mixer out_l, teacher attention out_l)
--                   (mean over running tokens and channels)
--        + w_halt * halting alignment: sum over layers of the MSE between the student's and
--                   the teacher's halting channel x_l[..., 1] over running tokens (A-ViT's
--                   score is a fixed function of that channel, so matching it makes the
--                   student halt like the teacher; the saturated sigmoid itself gives
--                   vanishing gradients); 0 when the teacher has no halting
--        + w_ce   * cross-entropy.
-- Stage 2 (fine-tuning): the student's own halting makes its masks; loss = w_ce * CE +
-- ponder_weight * ponder + distr_weight * KL prior (A-ViT's losses), optionally + w_mse *
-- the layer MSE to the teacher under the student's masks.
-- Both stages train through the one loop, run/fit.lua (checkpoints after every epoch; resume).
local al = require "attnlab"
local H = require "attnlab.s2s.halting"
local ckpt = require "attnlab.nn.checkpoint"

local D = {}

local copy = require("attnlab.util").copy
local error_text = require("attnlab.util").error_text

-- ---- mixers and replacement --------------------------------------------------------------------
D.MIXERS = { bimamba = "BiMamba", bilstm = "BiLSTM" }

-- A serialisable mixer spec: {name = "bimamba"|"bilstm", heads =, d_state =, expand =, ...}.
function D.mixer_spec(mixer, heads)
  local spec
  if type(mixer) == "string" then spec = { name = mixer }
  elseif type(mixer) == "table" and getmetatable(mixer) == nil then spec = copy(mixer)
  else
    error(("s2s.replace: mixer must be 'bimamba', 'bilstm' or a table {name = ..., ...}, got %s"):format(type(mixer)), 3)
  end
  spec.name = spec.name and spec.name:lower()
  if not D.MIXERS[spec.name] then
    error(("s2s.replace: unknown mixer '%s'; valid: bimamba, bilstm"):format(tostring(spec.name)), 3)
  end
  spec.heads = spec.heads or heads
  return spec
end

function D.make_mixer(spec, dim, seed)
  local o = copy(spec)
  o.name = nil
  o.seed = nil
  o.dim = dim
  o.generator = al.Generator(spec.seed or seed or 0)
  return al.nn[D.MIXERS[spec.name]](o)
end

-- The ViT options of a model as plain values (no generator): checkpoint.vit_config, the one
-- implementation (model files of both kinds carry it as attnlab_vit).
D.vit_config = ckpt.vit_config

local function apply_mixers(model, mixers, seed)
  model.s2s_mixers = {}
  local layers = {}
  for l in pairs(mixers or {}) do layers[#layers + 1] = tonumber(l) end
  table.sort(layers)
  for _, l in ipairs(layers) do
    local spec = mixers[l] or mixers[tostring(l)]
    model:block(l):set_mixer(D.make_mixer(spec, model.cfg.dim, (seed or 0) * 1000 + l))
    model.s2s_mixers[l] = spec
  end
  return model
end

-- The spec of every block whose token mixer is not attention, {[l] = spec}: what s2s.replace
-- recorded, else (a mixer set by hand with block:set_mixer) the mixer's own mixer_spec. A mixer
-- without one (a module of the user's own) is an error naming `who` and the block.
local function mixer_specs(model, who)
  local mx = {}
  for l = 1, model.depth do
    local a = model:block(l).attn
    if getmetatable(a) ~= al.nn.MultiHeadAttention then
      local s = (model.s2s_mixers or {})[l]
      if not (s and D.MIXERS[s.name] == a.__name) then s = type(a) == "table" and rawget(a, "mixer_spec") or nil end
      if type(s) ~= "table" then
        error(("%s: block %d's token mixer is %s, a module of your own, which cannot be rebuilt from a spec")
          :format(who, l, type(a) == "table" and tostring(a.__name) or type(a)), 0)
      end
      mx[l] = s
    end
  end
  return mx
end

-- A deep copy of a ViT (replaced mixers included, and mixers set by hand with block:set_mixer:
-- those were rebuilt as attention, and the copy failed in load_state_dict on their tensors);
-- opts.image_size builds it for another image size with the position embedding resampled
-- (checkpoint.resample_pos_embed).
function D.clone(model, opts)
  opts = opts or {}
  local mixers = mixer_specs(model, "s2s.clone")
  local c = D.vit_config(model)
  if opts.image_size then c.image_size = opts.image_size end
  local m = al.nn.ViT(c)
  apply_mixers(m, mixers)
  local sd = model:state_dict()
  if opts.image_size and opts.image_size ~= model.image_size then
    local s2 = {}
    for k, v in pairs(sd) do s2[k] = v end
    s2.pos_embed = ckpt.resample_pos_embed(sd.pos_embed, m.grid, { mode = opts.pos_resample })
    sd = s2
  end
  m:load_state_dict(sd)
  m:train(model.training)
  return m
end

-- s2s.replace(model, layers, mixer [, opts]) -> student. layers: list of 1-based block
-- numbers; mixer: "bimamba", "bilstm" or a spec table ({name=, heads=, d_state=, ...};
-- heads default to the teacher's). opts.inplace modifies `model` itself; opts.seed seeds
-- the new mixers' initialisation.
function D.replace(model, layers, mixer, opts)
  opts = opts or {}
  if type(model) ~= "table" or not model.depth or not model.block then
    error("s2s.replace: model must be an al.nn.ViT", 2)
  end
  if type(layers) ~= "table" then error("s2s.replace: layers must be a list of block numbers (1-based)", 2) end
  local seen = {}
  for i, l in ipairs(layers) do
    if math.type(l) ~= "integer" or l < 1 or l > model.depth then
      error(("s2s.replace: layer %s (entry %d) is out of range 1..%d"):format(al.cli.show(l), i, model.depth), 2)
    end
    if seen[l] then error(("s2s.replace: layer %d is listed twice"):format(l), 2) end
    seen[l] = true
  end
  local spec = D.mixer_spec(mixer, model.cfg.heads)
  local student = opts.inplace and model or D.clone(model)
  student.s2s_mixers = student.s2s_mixers or {}
  for _, l in ipairs(layers) do
    local s = copy(spec)
    s.seed = s.seed or ((opts.seed or 0) * 1000 + l)
    student:block(l):set_mixer(D.make_mixer(s, model.cfg.dim))
    student.s2s_mixers[l] = s
  end
  return student
end

-- Layers whose mixer was replaced (sorted).
function D.replaced_layers(model)
  local out = {}
  for l in pairs(model.s2s_mixers or {}) do out[#out + 1] = l end
  table.sort(out)
  return out
end

-- A teacher and a student must agree in width, depth, tokens and classes for
-- layer-aligned distillation; the error names both values.
function D.check_pair(teacher, student)
  local function desc(m) return ("dim %d, depth %d, %d tokens, %d classes"):format(m.cfg.dim, m.depth, m.num_tokens, m.cfg.num_classes) end
  if teacher.cfg.dim ~= student.cfg.dim then
    error(("s2s: teacher width %d and student width %d differ: layer-aligned distillation compares the mixer outputs channel by channel (teacher: %s; student: %s)")
      :format(teacher.cfg.dim, student.cfg.dim, desc(teacher), desc(student)), 2)
  end
  if teacher.depth ~= student.depth then
    error(("s2s: teacher depth %d and student depth %d differ: layer l of the student is distilled from layer l of the teacher (teacher: %s; student: %s)")
      :format(teacher.depth, student.depth, desc(teacher), desc(student)), 2)
  end
  if teacher.num_tokens ~= student.num_tokens then
    error(("s2s: teacher has %d tokens and student %d: the token masks cannot be shared (teacher: %s; student: %s)")
      :format(teacher.num_tokens, student.num_tokens, desc(teacher), desc(student)), 2)
  end
  if teacher.cfg.num_classes ~= student.cfg.num_classes then
    error(("s2s: teacher has %d classes and student %d"):format(teacher.cfg.num_classes, student.cfg.num_classes), 2)
  end
end

-- ---- model files ------------------------------------------------------------------------------------
-- save_model(path, model, meta): safetensors with timm names, and metadata
--   attnlab_vit = JSON of the ViT options and heads (checkpoint.vit_metadata, as
--   checkpoint.save_vit writes them), s2s_mixers = JSON {layer = spec}, plus meta.
function D.save_model(path, model, meta)
  -- a block that load_model would rebuild otherwise (a mixer or normalizer of the user's own) is
  -- refused before anything is written: such a file saved fine and then failed to load
  local why = ckpt.plain_vit_problem(model, { mixers = true })
  if why then error("s2s.save_model: " .. why, 0) end
  -- heads also as a plain entry: checkpoint.vit_from_file (and any reader) takes it from there
  local m = ckpt.vit_metadata(model)
  -- each replaced block's spec: what s2s.replace recorded, else (a mixer set by hand with
  -- block:set_mixer) the mixer's own
  local mx = {}
  for l, s in pairs(mixer_specs(model, "s2s.save_model")) do mx[tostring(l)] = s end
  m.s2s_mixers = al.json.encode(mx)
  for k, v in pairs(meta or {}) do m[k] = type(v) == "string" and v or al.json.encode(v) end
  al.save(path, model:state_dict(), m)
  return path
end

-- load_model(path [, opts]) -> model, meta. Files written by save_model rebuild exactly;
-- any other timm ViT safetensors goes through checkpoint.vit_from_file (opts.heads, needed
-- unless the file's metadata records "heads"; opts.image_size). opts.image_size resamples
-- the position embedding (opts.pos_resample: "bicubic", the default, or "bilinear").
-- opts.heads that contradicts the file's metadata is an error.
-- The metadata save_model writes, checked before a model is built from it: a damaged or
-- crafted file (depth "x", image_size -32, s2s_mixers '5', no dim) is one line naming the
-- file and the field, not an error from inside the ViT or a silently different shape (a
-- missing dim would take ViT's preset one). Returns the ViT config and the mixers table.
local function checked_meta(path, meta)
  local where = ("s2s: model %s"):format(path)
  local function bad(field, why) error(("%s: metadata %s %s"):format(where, field, why), 0) end
  local c = ckpt.config_from_metadata(meta, where)   -- the attnlab_vit config, checked (checkpoint.lua)
  local mixers = {}
  if meta.s2s_mixers ~= nil then
    mixers = ckpt.metadata_object(meta, "s2s_mixers", where)
    for l, spec in pairs(mixers) do
      local li = math.tointeger(tonumber(l))
      if not li or li < 1 or li > c.depth then
        bad("s2s_mixers", ("names layer %s; the model has layers 1..%d"):format(tostring(l), c.depth))
      end
      if type(spec) ~= "table" or not D.MIXERS[spec.name] then
        bad("s2s_mixers." .. tostring(l), "must be a mixer spec {\"name\": \"bimamba\"|\"bilstm\", ...}")
      end
    end
  end
  return c, mixers
end

-- A mixer spec's sizes must be what the file's tensors of that block show, checked before the
-- mixer is built (an expand or d_conv of 1e6 would allocate first and fail after): one line
-- naming the layer, the key and both values. dim is the model's (already checked).
local MIXER_SIZES = {
  bimamba = { { "expand", 2, "in_proj.weight", 2, function(s, dim) return s[1] / (2 * dim) end },
              { "d_state", 16, "A_log", 2, function(s) return s[2] end },
              { "d_conv", 4, "conv1d.weight", 2, function(s) return s[2] end },
              { "dt_rank", nil, "dt_proj.weight", 2, function(s) return s[2] end },
              { "heads", 1, "x_proj.weight", 3, function(s) return s[1] end } },
  bilstm = { { "heads", 1, "weight_ih_l0", 3, function(s) return s[1] end } },
}
local function check_mixer_weights(where, mixers, sd, dim)
  for l, spec in pairs(mixers) do
    for _, f in ipairs(MIXER_SIZES[spec.name] or {}) do
      local key, default, tname, rank, get = f[1], f[2], f[3], f[4], f[5]
      local want = spec[key]
      if want == nil then want = default or (key == "dt_rank" and math.ceil(dim / 16)) end
      local full = ("blocks.%d.attn.%s"):format(tonumber(l) - 1, tname)
      local t = sd[full]
      local shp = al.is_tensor(t) and t:shape() or nil
      if not shp or #shp ~= rank then
        error(("%s: metadata s2s_mixers.%s says a %s mixer, but the file has no %s (a damaged or hand-edited file)")
          :format(where, tostring(l), spec.name, full), 0)
      end
      local got = get(shp, dim)
      if got ~= want then
        error(("%s: metadata s2s_mixers.%s.%s = %s, but its weights have %s = %s (%s is %s; a damaged or hand-edited file)")
          :format(where, tostring(l), key, al.cli.show(want), key,
            al.cli.show(math.tointeger(got) or got), full, "(" .. table.concat(shp, ",") .. ")"), 0)
      end
    end
  end
end

-- The file's tensors against the model built for it: missing, unexpected and mis-shaped keys in
-- one short line (nn.compare_state_dict), before load_state_dict.
local function check_keys(where, model, sd)
  local r = al.nn.compare_state_dict(model:state_dict(), sd)
  if #r.missing + #r.unexpected + #r.misshaped > 0 then
    error(("%s: its tensors do not match the model its metadata describes: %s"):format(where,
      al.nn.state_dict_mismatch_text(r)), 0)
  end
end

-- A model file's tensors must all be finite (checkpoint.check_finite, the one check): raises
-- naming the file and the first NaN or inf tensor.
function D.check_finite(path, sd)
  ckpt.check_finite(sd, "s2s: model " .. tostring(path))
end

-- The halting config an A-ViT or student file records (save_model's `halting` metadata),
-- decoded and checked (H.config's rules), or nil when the file has none. A damaged entry is
-- one line naming the file, not a JSON decoder's message without it.
function D.file_halting(meta, path)
  local text = meta and meta.halting
  if text == nil then return nil end
  local where = ("s2s: model %s: metadata halting"):format(tostring(path or meta.source or "(file)"))
  local v, why = require("attnlab.util").decode_json(text)
  if why then error(("%s is not valid JSON: %s"):format(where, why), 0) end
  if type(v) ~= "table" or (next(v) ~= nil and #v > 0) then
    error(("%s must be a JSON object, got %s"):format(where, text), 0)
  end
  local ok, err = pcall(H.config, v)
  if not ok then error(("%s: %s"):format(where, error_text(err, "halting")), 0) end
  return v
end

function D.load_model(path, opts)
  opts = opts or {}
  if type(path) ~= "string" or path == "" then
    error(("s2s: a model file (a path) is needed, got %s"):format(require("attnlab.s2s.check").show(path)), 0)
  end
  local ok, sd, meta = pcall(al.load, path)
  if not ok then error(("s2s: cannot read model %s: %s"):format(path, tostring(sd)), 2) end
  D.check_finite(path, sd)
  D.file_halting(meta, path)                      -- read by eval/profile --halting true and distill
  if not meta.attnlab_vit then
    local o = copy(opts)
    o.metadata, o.source = meta, path
    local model = ckpt.vit_from_file(sd, o)
    return model, meta
  end
  local c, mixers = checked_meta(path, meta)
  -- a training checkpoint (run/fit.lua's, which carries attnlab_vit): its model's tensors
  sd = ckpt.split_training(sd, meta, path)
  if opts.heads ~= nil then ckpt.resolve_heads(c.dim, meta, opts, path) end   -- must agree with the file
  -- the config's sizes against the tensors, before a model of those sizes is built
  local where = ("s2s: model %s"):format(path)
  ckpt.check_config_weights(c, sd, where)
  check_mixer_weights(where, mixers, sd, c.dim)
  local native = c.image_size
  local okm, model = pcall(al.nn.ViT, c)
  if not okm then error(("%s: its metadata attnlab_vit does not build a ViT: %s"):format(where, error_text(model)), 0) end
  local okx, err = pcall(apply_mixers, model, mixers)
  if not okx then error(("%s: its metadata s2s_mixers does not build: %s"):format(where, error_text(err)), 0) end
  check_keys(where, model, sd)
  model:load_state_dict(sd)
  if opts.image_size and opts.image_size ~= native then
    model = D.clone(model, { image_size = opts.image_size, pos_resample = opts.pos_resample })
  end
  return model, meta
end

-- ---- evaluation ------------------------------------------------------------------------------------
-- Accuracy of a model over a dataset, optionally with halting. opts: halting (config),
-- masks_from (a teacher: run under ITS halting masks), mode ("masked"|"gather"),
-- batch_size (250), limit. Returns {accuracy, n, keep_rate = {per layer}, mean_keep_rate,
-- ponder, s_per_example}. The model runs in eval mode and is left in the mode it came in, on an
-- error too (as al.train.evaluate: it used to come back in train mode, whatever it was).
function D.evaluate(model, ds, opts)
  opts = opts or {}
  -- no example to evaluate: the accuracy was 0/0, returned as a result (-nan); a limit of 0 failed
  -- inside Loader with this file's position
  if type(ds) == "table" and ds.n == 0 then error("s2s.evaluate: the dataset has no examples", 2) end
  if opts.limit ~= nil and (math.type(opts.limit) ~= "integer" or opts.limit < 1) then
    error(("s2s.evaluate: limit must be a positive integer, got %s"):format(al.cli.show(opts.limit)), 2)
  end
  local was_training = model.training
  model:eval()
  local bs = opts.batch_size or 250
  local correct, n, t = 0, 0, 0
  local active, tot, pond = {}, 0, 0
  local ok, err = pcall(al.no_grad, function()
    for x, y, _, extra in al.data.Loader(ds, { batch_size = bs, limit = opts.limit }):iter(1) do
      local km = extra and extra.key_mask
      local t0 = al.clock()
      local logits, info
      if opts.masks_from then
        local _, ti = H.forward(opts.masks_from.model, x, { halting = opts.masks_from.halting, key_mask = km })
        t0 = al.clock()
        logits, info = H.forward(model, x, { masks = ti.keep, key_mask = km })
      elseif opts.halting then
        logits, info = H.forward(model, x, { halting = opts.halting, mode = opts.mode, key_mask = km })
      else
        logits, info = H.forward(model, x, { key_mask = km })
      end
      t = t + (al.clock() - t0)
      -- an accuracy counted from NaN logits would be argmax's choice among NaNs, not a result
      if logits:has_nonfinite() then
        error(("s2s.evaluate: the model's logits hold NaN or inf (examples %d..%d)"):format(n + 1, n + y:numel()), 0)
      end
      correct = correct + al.sum(al.eq(al.argmax(logits, 2), y)):item()
      n = n + y:numel()
      tot = tot + info.batch * info.tokens
      for l, a in ipairs(info.active) do active[l] = (active[l] or 0) + a end
      if info.ponder then pond = pond + info.ponder:item() * info.batch end
    end
  end)
  model:train(was_training)
  if not ok then error(err, 0) end
  local kr, s = {}, 0
  for l, a in ipairs(active) do kr[l] = a / tot; s = s + kr[l] end
  return { accuracy = correct / n, n = n, keep_rate = kr, mean_keep_rate = s / #kr, ponder = pond / n,
           s_per_example = t / n }
end

-- ---- losses --------------------------------------------------------------------------------------------
-- Mean over running tokens and channels of (a - b)^2; keep (B,N) or nil.
function D.masked_mse(a, b, keep)
  local d = a - b
  local s = a:shape()
  if not keep then return al.mean(d * d) end
  local k = keep:reshape({ s[1], s[2], 1 })
  local cnt = al.sum(keep):item() * (s[3] or 1)
  return al.sum(d * d * k) / math.max(cnt, 1)
end

-- Stage-1 loss for one batch. c: weights {mse=, halt=, ce=}, teacher_halting (config or
-- nil), layers (replaced). Returns loss, parts {mse=, halt=, ce=}.
function D.stage1_loss(teacher, student, x, y, c, extra)
  local km = extra and extra.key_mask
  local w = c.weights or {}
  local wm, wh, wc = w.mse or 1, w.halt or 0.1, w.ce or 1
  local thalt = c.teacher_halting
  local tl, ti = al.no_grad(function()
    return H.forward(teacher, x, { halting = thalt, record = true, key_mask = km })
  end)
  local sl, si = H.forward(student, x, { masks = thalt and ti.keep or nil, halting = thalt, record = true, key_mask = km })
  local parts = {}
  local mse
  for _, l in ipairs(c.layers) do
    local e = D.masked_mse(si.mixed[l], ti.mixed[l], thalt and ti.keep[l] or km)
    mse = mse and (mse + e) or e
  end
  local loss = al.cross_entropy(sl, y) * wc
  parts.ce = loss:item() / (wc ~= 0 and wc or 1)
  if mse then loss = loss + mse * wm; parts.mse = mse:item() end
  if thalt and wh ~= 0 then
    local al_
    for l = 1, student.depth do
      local e = D.masked_mse(si.channel[l]:reshape({ ti.batch, ti.tokens, 1 }), ti.channel[l]:reshape({ ti.batch, ti.tokens, 1 }), ti.keep[l])
      al_ = al_ and (al_ + e) or e
    end
    loss = loss + al_ * wh
    parts.halt = al_:item()
  end
  return loss, parts
end

-- Stage-2 (and A-ViT) loss: CE + ponder + distributional prior with the model's own
-- halting (c.halting; nil: CE only, a dense model); c.ponder_weight overrides the config's
-- (the keep-rate controller's lambda); c.weights.mse > 0 adds the layer MSE to the teacher under the model's masks.
function D.halting_loss(model, x, y, c, extra, teacher)
  local km = extra and extra.key_mask
  local w = c.weights or {}
  local hc = H.config(c.halting, model.depth)
  local wc = w.ce or 1
  local logits, info = H.forward(model, x, { halting = hc, record = (w.mse or 0) > 0, key_mask = km, mode = c.mode })
  local ce = al.cross_entropy(logits, y)
  -- c.ponder_weight: the keep-rate controller's current lambda (halting.lua), else the config's
  local loss, parts
  if hc then
    loss = ce * wc + info.ponder * (c.ponder_weight or hc.ponder_weight) + info.distr * hc.distr_weight
    parts = { ce = ce:item(), ponder = info.ponder:item(), distr = info.distr:item() }
  else                                             -- no halting (a dense student): CE only
    loss, parts = ce * wc, { ce = ce:item() }
  end
  if teacher and (w.mse or 0) > 0 and c.layers and #c.layers > 0 then
    local _, ti = al.no_grad(function() return H.forward(teacher, x, { masks = info.keep, record = true, key_mask = km }) end)
    local mse
    for _, l in ipairs(c.layers) do
      local e = D.masked_mse(info.mixed[l], ti.mixed[l], info.keep[l])
      mse = mse and (mse + e) or e
    end
    loss = loss + mse * w.mse
    parts.mse = mse:item()
  end
  local kr, s = {}, 0
  for l, a in ipairs(info.active) do kr[l] = a / (info.batch * info.tokens); s = s + kr[l] end
  parts.keep_rate = s / #kr
  return loss, parts
end

-- ---- datasets ------------------------------------------------------------------------------------------------
-- A synthetic image classification set (for tests and smoke runs): n images (C,S,S),
-- label = argmax of the correlation with `classes` fixed random templates. An al.data.Dataset
-- (it was a bare table with batch only: ds:subset, ds:all_labels and so s2s.resized(ds, S):subset
-- failed with "attempt to call a nil value"); batches are the same index_select as before.
local function synthetic_batch(self, idx)
  return al.index_select(self.inputs, 1, idx), al.index_select(self.labels, 1, idx)
end

function D.synthetic_dataset(opts)
  opts = opts or {}
  local n, S, C, K = opts.n or 256, opts.size or 16, opts.channels or 3, opts.classes or 5
  local tmpl = al.randn({ K, C * S * S }, { generator = al.Generator(opts.seed or 1) })
  local gen = al.Generator((opts.seed or 1) * 7 + (opts.split == "test" and 1 or 2))
  local x = al.randn({ n, C, S, S }, { generator = gen })
  local y = al.argmax(al.matmul(x:reshape({ n, C * S * S }), tmpl:transpose(1, 2)), 2)
  local classes = {}
  for i = 1, K do classes[i] = tostring(i) end
  return setmetatable({ name = "synthetic", split = opts.split or "train", n = n, num_classes = K, classes = classes,
                        channels = C, size = S, inputs = x, labels = y, make_batch = synthetic_batch },
                      al.data.Dataset)
end

-- A view of an image dataset resized to S x S (bilinear, align_corners=False, as
-- F.interpolate): e.g. CIFAR-10 at 224 for a DeiT-Tiny teacher, as DeiT fine-tunes.
function D.resized(ds, S)
  if not ds.size or ds.size == S then return ds end
  local W = al.tensor(ckpt.bilinear_weights(ds.size, S))         -- (S, S0)
  local Wt = W:transpose(1, 2):contiguous()
  local r = setmetatable({ size = S, resized_from = ds.size }, { __index = ds })
  function r.batch(_, idx)
    local x, y, e = ds:batch(idx)
    return al.matmul(al.matmul(W, x), Wt):contiguous(), y, e      -- (B,C,S,S)
  end
  function r.subset(_, ...) return D.resized(ds:subset(...), S) end
  return r
end

-- The channels of a dataset's images by name (nil: not known here, e.g. a text set), and a
-- name's canonical spelling (fmnist is fashion_mnist).
D.DATASET_CHANNELS = { cifar10 = 3, fashion_mnist = 1, kmnist = 1, synthetic = 3 }
local DATASET_ALIASES = { fmnist = "fashion_mnist" }
function D.dataset_name(name) return DATASET_ALIASES[name] or name end
local function channels_text(n) return n == 1 and "1 channel" or ("%d channels"):format(n) end

-- The dataset a model file records that it was trained on (al.train's train_config metadata,
-- or a plain `dataset` entry), canonically spelled, or nil when it records none (s2s files and
-- timm checkpoints do not).
function D.recorded_dataset(meta)
  if type(meta) ~= "table" then return nil end
  local name = meta.dataset
  if name == nil and type(meta.train_config) == "string" then
    local tc = require("attnlab.util").decode_json(meta.train_config)
    name = type(tc) == "table" and tc.dataset or nil
  end
  return type(name) == "string" and name ~= "" and D.dataset_name(name) or nil
end

-- A model must take the images of the dataset it is trained, distilled or evaluated on: a
-- 1-channel (Fashion-MNIST) teacher given CIFAR-10 otherwise fails deep inside the ViT with a
-- shape error, after the data were read and resized. Raises one line naming the model and the
-- dataset. opts: what ("teacher", the default; "model"), path (the model's file), dataset_from
-- (how the dataset was chosen, e.g. "--dataset cifar10"; default "dataset <name>"), explicit
-- (the user chose this dataset: a model recorded as trained on another dataset with images
-- of the same shape is then their choice; without it that is refused too, naming the option
-- that makes it a choice: opts.choose, e.g. "--dataset kmnist").
function D.check_dataset(model, meta, dataset, opts)
  opts = opts or {}
  local name = D.dataset_name(dataset)
  local want = D.DATASET_CHANNELS[name]
  local have = type(model) == "table" and model.channels or nil
  local rec = D.recorded_dataset(meta)
  local who = ("%s %s"):format(opts.what or "teacher", tostring(opts.path or "(model)"))
  local from = opts.dataset_from or ("dataset " .. tostring(dataset))
  if want and have and want ~= have then
    if rec then
      error(("s2s: %s was trained on %s (%s); %s has %s"):format(who, rec, channels_text(have), from, channels_text(want)), 0)
    end
    error(("s2s: %s takes images of %s; %s has %s"):format(who, channels_text(have), from, channels_text(want)), 0)
  end
  if rec and name and rec ~= name and not opts.explicit then
    error(("s2s: %s was trained on %s, not %s (%s): pass %s to use it on %s anyway"):format(who, rec, name, from,
      opts.choose or ("--dataset " .. name), name), 0)
  end
end

-- Train/test datasets by name ("cifar10", "fashion_mnist", ..., or "synthetic"),
-- limited to train_limit/test_limit examples.
function D.datasets(c)
  if c.dataset == "synthetic" then
    local tr = D.synthetic_dataset({ n = c.train_limit or 512, size = c.image_size or 16, seed = c.seed or 1 })
    local te = D.synthetic_dataset({ n = c.test_limit or 256, size = c.image_size or 16, seed = c.seed or 1, split = "test" })
    return tr, te
  end
  local tr, te = al.train.datasets(al.train.config({ dataset = c.dataset, train_limit = c.train_limit,
                                                     test_limit = c.test_limit, seed = c.seed or 1 }))
  if c.image_size and tr.size and c.image_size ~= tr.size then
    tr, te = D.resized(tr, c.image_size), D.resized(te, c.image_size)
  end
  return tr, te
end

-- ---- throughput ----------------------------------------------------------------------------------------------------
-- Keep masks that follow a per-layer keep-rate schedule: at layer l a fraction rates[l]
-- of the patch tokens run (the class token always); dropped tokens stay dropped. Which
-- tokens drop is seeded-random per sample. Returns L masks (B,N).
function D.schedule_masks(B, N, rates, seed)
  local gen = al.Generator(seed or 0)
  local order = {}
  for b = 1, B do
    local perm = al.randperm(N - 1, gen):totable()
    order[b] = perm           -- patch tokens in drop-last order
  end
  local masks = {}
  local prev = N - 1
  for l, r in ipairs(rates) do
    local keepn = math.min(prev, math.max(0, math.floor(r * (N - 1) + 0.5)))
    prev = keepn
    local m = {}
    for b = 1, B do
      local row = { 1 }
      for j = 2, N do row[j] = 0 end
      for k = 1, keepn do row[order[b][k] + 1] = 1 end
      m[b] = row
    end
    masks[l] = al.tensor(m)
  end
  return masks
end

-- Median seconds per batch of model forward passes (no grad). opts: batch (8), iters (5),
-- warmup (1), mode ("dense"|"masked"|"gather"), masks (for masked/gather), halting.
function D.time_forward(model, opts)
  opts = opts or {}
  local B = opts.batch or 8
  local x = al.randn({ B, model.channels, model.image_size, model.image_size }, { generator = al.Generator(opts.seed or 5) })
  model:eval()
  local function once()
    if opts.mode == "masked" or opts.mode == "gather" then
      return H.forward(model, x, { masks = opts.masks, halting = opts.halting, mode = opts.mode })
    end
    return model(x)
  end
  local ts = {}
  al.no_grad(function()
    for _ = 1, opts.warmup or 1 do once() end
    for i = 1, opts.iters or 5 do
      local t0 = al.clock()
      once()
      ts[i] = al.clock() - t0
    end
  end)
  table.sort(ts)
  return ts[(#ts + 1) // 2], ts
end

-- Estimated forward FLOPs of a ViT block stack given per-layer running-token counts:
-- per layer, attention blocks 24*n*D^2 (qkv, proj, MLP at ratio 4) + 4*n^2*D (scores and
-- weighted sum); replaced blocks 16*n*D^2 (MLP) + the mixer's per-token cost (BiMamba:
-- in/out projections 2*D*2E + 2*E*D with E = 2D, conv, x_proj, dt_proj, scan ~ 2*(2*E*K +
-- 2*E*(R+2S) + 2*R*E + 6*E*S); BiLSTM: 2 directions x 8*hd*hd*4 per head + out_proj).
function D.estimate_flops(model, ntok)
  local Dm = model.cfg.dim
  local total = 0
  for l = 1, model.depth do
    local n = ntok[l]
    local mix = model:block(l).attn
    local ratio = model.cfg.mlp_ratio or 4
    local mlp = 4 * n * Dm * Dm * ratio
    if getmetatable(mix) == al.nn.MultiHeadAttention then
      total = total + mlp + 8 * n * Dm * Dm + 4 * n * n * Dm
    elseif getmetatable(mix) == al.nn.BiMamba then
      local E, S, R, K = mix.E, mix.N, mix.R, mix.K
      total = total + mlp + n * (2 * Dm * 2 * E + 2 * E * Dm + 2 * (2 * E * K + 2 * E * (R + 2 * S) + 2 * R * E + 6 * E * S))
    else
      local hd, Hh = mix.hd, mix.heads
      total = total + mlp + n * (2 * Hh * 2 * 4 * hd * hd * 2 + 2 * 2 * Dm * Dm)
    end
  end
  return total
end

return D
