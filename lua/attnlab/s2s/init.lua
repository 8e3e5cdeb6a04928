-- attnlab.s2s -- Sparsity to Simplicity: layer-wise sparsity profiles of a ViT teacher,
-- A-ViT token halting, and replacing attention by sequential mixers through layer-aligned
-- distillation. The pieces live in s2s/halting.lua (halting math, masked and gathered
-- execution), s2s/profile.lua (sparsity statistics, heatmaps), s2s/distill.lua
-- (replace, stage 1/2 losses, the checkpointed training loop, evaluation, timing) and
-- s2s/strategies.lua (which layers to replace); this file joins them and runs the
-- pipelines that scripts/{profile,distill,s2s_strategies}.lua call.
--
--   local s2s = require "attnlab.s2s"              -- also al.s2s
--   local teacher = s2s.load_model("results/s2s/teacher.safetensors")
--   local prof = s2s.profile(teacher, test_set, {limit = 500})
--   local student = s2s.replace(teacher, s2s.strategies.layer_aware(teacher.depth, 3), "bimamba")
--   local logits, info = s2s.forward(student, x, {halting = {keep_rate = 0.7}, mode = "gather"})
local al = require "attnlab"
local H = require "attnlab.s2s.halting"
local P = require "attnlab.s2s.profile"
local D = require "attnlab.s2s.distill"
local S = require "attnlab.s2s.strategies"
local K = require "attnlab.s2s.check"
local ckpt = require "attnlab.nn.checkpoint"
local fit = require "attnlab.run.fit"
local util = require "attnlab.util"

local s2s = {}

s2s.halting = H
s2s.profiling = P
s2s.distilling = D
s2s.strategies = S
s2s.check = K
s2s.checkpoint = ckpt

s2s.forward = H.forward
s2s.halting_config = H.config
s2s.profile = P.profile
s2s.format_profile = P.format
s2s.write_heatmaps = P.write_heatmaps
s2s.replace = D.replace
s2s.clone = D.clone
s2s.check_pair = D.check_pair
s2s.save_model = D.save_model
s2s.load_model = D.load_model
s2s.evaluate = D.evaluate
s2s.synthetic_dataset = D.synthetic_dataset
s2s.select_layers = S.select

local copy, merged = util.copy, util.merge

local function write_json(path, rec)
  if not path then return end
  local dir = path:match("^(.*)/[^/]+$")
  if dir then util.mkdir_p(dir) end
  local ok, err = al.write_atomic(path, al.json.encode(rec, true) .. "\n")
  if not ok then error("s2s: cannot write " .. path .. ": " .. tostring(err), 2) end
end
s2s.write_json = write_json

local function now() return os.date("!%Y-%m-%dT%H:%M:%SZ") end

-- ---- provenance ------------------------------------------------------------------------------------------
-- Where a record came from, as al.train's records say it: the git revision and the machine,
-- the data files it read (path, size, SHA-256: al.data.fingerprints, cached), and each model
-- file it started from (`<what>_file` = { path, size, sha256 }). A record then names the exact
-- teacher it was made from, and a study can tell that the file was replaced since
-- (s2s/study.lua). A model given as a table (no file) gets no entry.
function s2s.file_fingerprint(path)
  if type(path) ~= "string" then return nil end
  return al.data.fingerprints({ path })[1]
end

-- rec: the record (its `dataset` table gets `files`; a record whose dataset is a name gets
-- `data_files`); datasets: the datasets read ({ train, test }); models: { key = path, ... }.
function s2s.provenance(rec, datasets, models)
  rec.git_revision, rec.machine = al.train.git_revision(), al.train.machine()
  local files = al.train.data_files(table.unpack(datasets))
  if type(rec.dataset) == "table" then rec.dataset.files = files else rec.data_files = files end
  for key, path in pairs(models or {}) do rec[key] = s2s.file_fingerprint(path) end
  return rec
end
local provenance = s2s.provenance

-- The model file a step saved, named in its record with its SHA-256 (`saved_file`), so that a
-- study can tell that the file was replaced since by another model (s2s/study.lua).
local function note_saved(rec, path)
  rec.saved, rec.saved_file = path, s2s.file_fingerprint(path)
end

local function resolve_model(m, opts)
  if type(m) == "string" then
    local model, meta = D.load_model(m, opts)
    return model, meta
  end
  return m, {}
end

-- ---- teacher ---------------------------------------------------------------------------------------------
-- The dense teacher, saved with timm names (save_model). Two ways:
--  * trained from scratch with al.train (AdamW + cosine, per-epoch checkpoints): c holds
--    al.train config keys (dataset, dim, depth, heads, patch, epochs, ...);
--    c.init is then the initialisation scheme, "timm" (DeiT's own; the S2S presets set
--    it) or "torch" (al.train's default);
--  * c.init = a timm/DeiT ViT safetensors (any string but "timm" and "torch"; checkpoint.lua;
--    heads (required unless the file's metadata records it), image_size and
--    pos_resample ("bicubic", the default, or "bilinear") options): loaded strictly
--    except that a head for another class count is re-initialised (timm's init), then
--    fine-tuned for c.epochs on c.dataset (images resized to the model's size).
-- c.save: the model path. Returns the record and the model.
-- true when a teacher config's init is a scheme (or absent), not a checkpoint path
function s2s.init_is_scheme(init) return init == nil or init == "timm" or init == "torch" end

-- The recipe of a teacher fine-tuned from a checkpoint (init = file), where c gives no value
-- (the study compares a cached record's config with it: s2s/study.lua).
s2s.FINETUNE_DEFAULTS = { epochs = 3, lr = 1e-4, batch_size = 64, weight_decay = 0.05, warmup_epochs = 0, min_lr = 1e-6,
                          clip_grad = 1.0, seed = 1 }

function s2s.train_teacher(c)
  K.assert("s2s.train_teacher", "teacher_config", c)       -- every key, before any data is read
  if s2s.init_is_scheme(c.init) then
    local tc = copy(c)
    local save = tc.save
    tc.save, tc.image_size = nil, nil
    local rec, model = al.train.run(tc)
    if save then
      D.save_model(save, model, { kind = "teacher", test_accuracy = tostring(rec.test_accuracy) })
      note_saved(rec, save)
    end
    return rec, model
  end
  c = merged(s2s.FINETUNE_DEFAULTS, c)
  local sd, meta = ckpt.read(c.init)              -- (refuses a NaN or inf tensor, naming it)
  local inf = ckpt.infer_config(sd, { heads = c.heads }, meta, c.init)
  -- its images must be the dataset's (fine-tuning onto another dataset is what --init is for)
  D.check_dataset({ channels = inf.channels }, meta, c.dataset or al.train.DEFAULTS.dataset,
    { what = "checkpoint", path = c.init, explicit = true })
  local tr, te = D.datasets(merged(c, { image_size = c.image_size or inf.image_size }))
  local classes = c.num_classes or tr.num_classes
  local dropped = {}
  if classes ~= inf.num_classes then
    for _, k in ipairs({ "head.weight", "head.bias" }) do if sd[k] then sd[k] = nil; dropped[#dropped + 1] = k end end
  end
  local model = al.nn.ViT({ image_size = c.image_size or inf.image_size, patch_size = inf.patch_size, channels = inf.channels,
                            num_classes = classes, dim = inf.dim, depth = inf.depth, heads = inf.heads,
                            mlp_ratio = inf.mlp_ratio, qkv_bias = inf.qkv_bias, seed = c.seed, init = "timm" })
  local _, rep = ckpt.load_vit(model, sd, { strict = #dropped == 0, pos_resample = c.pos_resample })
  if #dropped > 0 then
    for _, k in ipairs(rep.missing) do
      if k ~= "head.weight" and k ~= "head.bias" then error("s2s: checkpoint " .. c.init .. " lacks " .. k, 2) end
    end
    if #rep.unexpected > 0 then error("s2s: checkpoint " .. c.init .. " has unexpected keys: " .. table.concat(rep.unexpected, ", "), 2) end
  end
  local rec = { kind = "teacher", init = c.init, load_report = rep, reinitialised = dropped, config = copy(c),
                dataset = { name = tr.name, train = tr.n, test = te.n, image_size = model.image_size }, started = now() }
  provenance(rec, { tr, te }, { init_file = c.init })
  local stage = { name = "finetune", epochs = c.epochs, lr = c.lr,
                  step = function(x, y, extra)
                    local logits = H.forward(model, x, { key_mask = extra and extra.key_mask })
                    local loss = al.cross_entropy(logits, y, { label_smoothing = c.label_smoothing or 0 })
                    return loss, {}
                  end,
                  eval = function() return { accuracy = D.evaluate(model, te, { limit = c.eval_limit }).accuracy } end }
  local key = copy(c)
  key.out, key.save, key.checkpoint, key.progress = nil, nil, nil, nil
  rec.history = fit.run(model, { stage }, { name = "s2s", train = tr, batch_size = c.batch_size, seed = c.seed, weight_decay = c.weight_decay,
    warmup_epochs = c.warmup_epochs, min_lr = c.min_lr, clip_grad = c.clip_grad, checkpoint = c.checkpoint,
    key = fit.config_key({ "teacher", key }), progress = c.progress })
  local ev = D.evaluate(model, te, {})
  rec.test_accuracy, rec.s_per_example, rec.params = ev.accuracy, ev.s_per_example, model:num_parameters()
  rec.finished = now()
  if c.save then D.save_model(c.save, model, { kind = "teacher", test_accuracy = tostring(ev.accuracy) }); note_saved(rec, c.save) end
  write_json(c.out, rec)
  return rec, model
end

-- The teacher must take the images of c.dataset, and (unless opts.dataset_chosen is false)
-- a teacher recorded as trained on another dataset is the caller's choice: D.check_dataset,
-- before any data is read. opts (s2s.avit's and s2s.distill's second argument, optional):
-- dataset_from (how the dataset was chosen, for the message: scripts/distill.lua says
-- "--dataset cifar10" or "the preset's dataset cifar10"), dataset_chosen (false: the dataset
-- was not the user's choice, e.g. a preset's, so another recorded dataset is refused too).
-- opts.ready (a function), when given, is called after this last check of the inputs and
-- before any data is read: scripts/distill.lua makes its output folders there, so that a run
-- refused for its inputs (a strategy the teacher's depth cannot take) creates nothing.
local function check_teacher_dataset(model, meta, c, opts)
  opts = opts or {}
  D.check_dataset(model, meta, c.dataset or al.train.DEFAULTS.dataset,
    { path = type(c.teacher) == "string" and c.teacher or nil, dataset_from = opts.dataset_from,
      explicit = opts.dataset_chosen ~= false })
  if opts.ready then opts.ready() end
end

-- ---- A-ViT teacher ---------------------------------------------------------------------------------------------
-- A training step under a keep-rate controller (halting.lua; ctl may be nil):
-- loss_fn(x, y, extra, halting, ponder_weight) gets the controller's current config (hc with
-- its gate centre) and lambda (hc and nil without a controller); the controller then moves
-- on the batch's measured keep rate. parts record the lambda and centre the step used.
local function controlled_step(ctl, hc, loss_fn)
  if not ctl then return function(x, y, extra) return loss_fn(x, y, extra, hc, nil) end end
  return function(x, y, extra)
    local loss, parts = loss_fn(x, y, extra, ctl:config(hc), ctl.lambda)
    if ctl.eta then parts.ponder_lambda = ctl.lambda end
    if ctl.center_eta then parts.gate_center = ctl.center end
    ctl:update(parts.keep_rate)
    return loss, parts
  end
end
s2s.controlled_step = controlled_step

s2s.AVIT_DEFAULTS = { epochs = 3, lr = 2e-4, batch_size = 128, weight_decay = 0.05, warmup_epochs = 0, min_lr = 1e-6,
                      clip_grad = 1.0, seed = 1, eval_mode = "gather" }

-- Fine-tune a dense teacher into an A-ViT (its own halting, A-ViT's losses) at a target
-- keep rate. c: teacher (path or model), dataset, halting (config; keep_rate sets the
-- target depth), epochs, lr, ..., eval_limit (test examples for the per-epoch check; the
-- final evaluation uses the whole test split), checkpoint, save, out. Returns the record
-- and the model. opts (optional): how c.dataset was chosen (check_teacher_dataset above).
function s2s.avit(c, opts)
  K.assert("s2s.avit", "avit_config", c)                   -- every key, before the teacher is read
  c = merged(s2s.AVIT_DEFAULTS, c)
  local model, tmeta = resolve_model(assert(c.teacher, "s2s.avit: teacher (a model file) is required"), { heads = c.heads })
  local hc = H.config(c.halting or {}, model.depth)
  check_teacher_dataset(model, tmeta, c, opts)
  local tr, te = D.datasets(merged(c, { image_size = model.image_size }))
  local rec = { kind = "avit", config = copy(c), halting = hc, started = now(), params = model:num_parameters(),
                dataset = { name = tr.name, train = tr.n, test = te.n } }
  provenance(rec, { tr, te }, { teacher_file = c.teacher })
  rec.config.teacher = type(c.teacher) == "string" and c.teacher or "(model)"
  local before = D.evaluate(model, te, { limit = c.test_limit })
  rec.dense_accuracy = before.accuracy
  -- with keep_eta / center_eta set, the ponder weight / gate centre are the controller's,
  -- updated after every step from the batch's measured keep rate (halting.lua's header)
  local ctl = H.controller(hc)
  local step = controlled_step(ctl, hc, function(x, y, extra, h, lambda)
    return D.halting_loss(model, x, y, { halting = h, ponder_weight = lambda }, extra)
  end)
  local stage = { name = "avit", epochs = c.epochs, lr = c.lr, step = step,
                  eval = function()
                    local e = D.evaluate(model, te, { halting = ctl and ctl:config(hc) or hc, mode = c.eval_mode, limit = c.eval_limit })
                    return { accuracy = e.accuracy, mean_keep_rate = e.mean_keep_rate, keep_rate = e.keep_rate }
                  end }
  rec.history = fit.run(model, { stage }, { name = "s2s", train = tr, batch_size = c.batch_size, seed = c.seed, weight_decay = c.weight_decay,
                                           warmup_epochs = c.warmup_epochs, min_lr = c.min_lr, clip_grad = c.clip_grad,
                                           checkpoint = c.checkpoint, key = fit.config_key({ "avit", (function()
                                             local k = copy(rec.config)
                                             k.out, k.save, k.checkpoint, k.progress = nil, nil, nil, nil
                                             k.stop_after = nil
                                             -- a checkpoint of another teacher file at the same path is not resumed
                                             k.teacher_sha256 = rec.teacher_file and rec.teacher_file.sha256
                                             return k end)(), hc }),
                                           progress = c.progress, stop_after = c.stop_after,
                                           extra_state = ctl and function() return { controller = ctl:state() } end,
                                           on_resume = ctl and function(st) ctl:load(st.controller) end })
  if ctl then
    rec.ponder_lambda = ctl.lambda
    if ctl.center_eta then rec.gate_center = ctl.center end
    hc = ctl:config(hc)                    -- the model's halting: the centre it ended with
    rec.halting = hc
  end
  local ev = D.evaluate(model, te, { halting = hc, mode = c.eval_mode })
  rec.test_accuracy, rec.keep_rate, rec.mean_keep_rate = ev.accuracy, ev.keep_rate, ev.mean_keep_rate
  rec.s_per_example = ev.s_per_example
  local masked = D.evaluate(model, te, { halting = hc, mode = "masked", limit = math.min(te.n, 500) })
  rec.s_per_example_masked = masked.s_per_example
  rec.dense_s_per_example = D.evaluate(model, te, { limit = math.min(te.n, 500) }).s_per_example
  rec.finished = now()
  if c.save then D.save_model(c.save, model, { kind = "avit", halting = hc, test_accuracy = tostring(ev.accuracy) }); note_saved(rec, c.save) end
  write_json(c.out, rec)
  return rec, model
end

-- A sparsity profile ranks the layers of the model it measured: one of another model (another
-- depth, token count or head count) would choose layers of that model, not of the teacher's.
-- What the profile records of its model (its layers, tokens, each attention layer's heads)
-- must be the teacher's; else one line naming both. prof: the profile (decoded); given: the
-- path (or table) the caller passed; teacher: the model; tpath: the teacher as given.
local function check_profile_model(prof, given, teacher, tpath)
  local where = type(given) == "string" and ("profile " .. given) or "the profile"
  if type(prof.model) == "string" then where = ("%s (of %s)"):format(where, prof.model) end
  local tname = type(tpath) == "string" and ("teacher " .. tpath) or "the teacher"
  local function refuse(what)
    error(("s2s.distill: %s is of another model: %s; profile the teacher itself (scripts/profile.lua --model ...)")
      :format(where, what), 0)
  end
  if type(prof.layers) == "table" and #prof.layers ~= teacher.depth then
    refuse(("it has %d layers, %s has %d"):format(#prof.layers, tname, teacher.depth))
  end
  if math.type(prof.tokens) == "integer" and teacher.num_tokens and prof.tokens ~= teacher.num_tokens then
    refuse(("it has %d tokens, %s has %d"):format(prof.tokens, tname, teacher.num_tokens))
  end
  for l, r in ipairs(type(prof.layers) == "table" and prof.layers or {}) do
    if type(r) == "table" and math.type(r.heads) == "integer" and r.heads ~= teacher.cfg.heads then
      refuse(("its layer %d has %d heads, %s has %d"):format(l, r.heads, tname, teacher.cfg.heads))
    end
  end
end

-- ---- distillation --------------------------------------------------------------------------------------------
s2s.DISTILL_DEFAULTS = {
  mixer = "bimamba", batch_size = 128, seed = 1, weight_decay = 0.05, warmup_epochs = 0, min_lr = 1e-6, clip_grad = 1.0,
  lr = 5e-4, eval_mode = "gather",
  stage1 = { epochs = 2, weights = { mse = 1.0, halt = 0.1, ce = 1.0 }, train = "all" },
  stage2 = { epochs = 2, weights = { ce = 1.0, mse = 0.0 } },
}

-- The S2S pipeline: replace the chosen layers of a teacher and distill (stage 1), then
-- fine-tune with the student's own halting (stage 2). c:
--   teacher        model file (save_model's, or any timm ViT safetensors) or a model
--   teacher_halting  halting config of the teacher (default: the file's, from s2s.avit;
--                  false: a dense teacher, all tokens kept)
--   layers | strategy ("uniform", "groupwise:deep", "layer_aware:3", "sparsest:3") [+ profile (JSON path or table)]
--   mixer          "bimamba" | "bilstm" | spec table
--   student        optional: a ready student model (checked against the teacher)
--   dataset, train_limit, test_limit, batch_size, seed, lr, weight_decay, clip_grad, ...
--   eval_limit     test examples for the per-epoch checks (the final evaluation uses all)
--   stage1 = {epochs, lr, weights = {mse, halt, ce}, train = "all" | "mixers"}
--   stage2 = {epochs, lr, weights = {ce, mse}, halting = config (default: the teacher's; false:
--                  a dense student), keep_rate (retargets that config: the student's own keep
--                  rate, held there when the config has a keep-rate controller)}
--   checkpoint (resumable), save (student model file), out (JSON record), progress
-- Returns the record and the student. opts (optional): how c.dataset was chosen
-- (check_teacher_dataset above).
function s2s.distill(c, opts)
  K.assert("s2s.distill", "distill_config", c)             -- every key, before anything is read or trained
  c = merged(s2s.DISTILL_DEFAULTS, c)
  c.stage1 = merged(s2s.DISTILL_DEFAULTS.stage1, c.stage1)
  c.stage2 = merged(s2s.DISTILL_DEFAULTS.stage2, c.stage2)
  local teacher, tmeta = resolve_model(assert(c.teacher, "s2s.distill: teacher is required"), { heads = c.heads })
  local thalt = c.teacher_halting
  if thalt == nil then thalt = D.file_halting(tmeta) end
  if thalt == false then thalt = nil end
  thalt = thalt and H.config(thalt, teacher.depth)
  local layers = c.layers
  local prof = c.profile
  if type(prof) == "string" then   -- a path: read here, so that every problem names the file
    local f, ferr = io.open(prof, "rb")
    if not f then error(("s2s.distill: cannot read the profile %s"):format(tostring(ferr)), 0) end
    local text = f:read("a")
    f:close()
    local p, why = util.decode_json(text or "")
    if why then error(("s2s.distill: profile %s is not valid JSON: %s"):format(prof, why), 0) end
    if type(p) ~= "table" or type(p.layers) ~= "table" then
      error(("s2s.distill: %s is not a sparsity profile (no 'layers' list; scripts/profile.lua writes one)"):format(prof), 0)
    end
    prof = p
  end
  if prof ~= nil then check_profile_model(prof, c.profile, teacher, c.teacher) end
  if not layers then layers = S.select(c.strategy or "layer_aware:3", teacher.depth, prof) end
  local student = c.student or D.replace(teacher, layers, c.mixer, { seed = c.seed })
  D.check_pair(teacher, student)
  layers = D.replaced_layers(student)
  -- the student's own halting in stage 2: stage2.halting, else the teacher's; false: none
  -- (a dense student, as under a dense teacher). stage2.keep_rate retargets it (the rest,
  -- controller included, stays): a student whose own keep rate is held at a fixed value.
  local shalt
  if c.stage2.halting ~= false then
    local base = c.stage2.halting or thalt or { keep_rate = 1 }
    if c.stage2.keep_rate then
      base = merged(base, { keep_rate = c.stage2.keep_rate })
      base.target_depth = nil
    end
    shalt = H.config(base, student.depth)
  end
  check_teacher_dataset(teacher, tmeta, c, opts)
  local tr, te = D.datasets(merged(c, { image_size = teacher.image_size }))
  local rec = { kind = "s2s", config = copy(c), layers = layers, teacher_halting = thalt, student_halting = shalt,
                started = now(), dataset = { name = tr.name, train = tr.n, test = te.n },
                teacher_params = teacher:num_parameters(), student_params = student:num_parameters() }
  provenance(rec, { tr, te }, { teacher_file = c.teacher, profile_file = c.profile })
  rec.config.teacher = type(c.teacher) == "string" and c.teacher or "(model)"
  rec.config.student = nil
  rec.config.profile = type(c.profile) == "string" and c.profile or (c.profile and "(table)") or nil
  teacher:eval()
  local s1 = { layers = layers, weights = c.stage1.weights, teacher_halting = thalt }
  local filter
  if c.stage1.train == "mixers" then
    local pref = {}
    for _, l in ipairs(layers) do pref[#pref + 1] = ("blocks.%d.attn."):format(l - 1) end
    filter = function(name)
      for _, p in ipairs(pref) do if name:sub(1, #p) == p then return true end end
      return false
    end
  end
  local function eval1()
    local own = D.evaluate(student, te, { halting = shalt, mode = c.eval_mode, limit = c.eval_limit })
    local r = { accuracy_own = own.accuracy, mean_keep_rate = own.mean_keep_rate }
    if thalt then
      r.accuracy_teacher_masks = D.evaluate(student, te, { masks_from = { model = teacher, halting = thalt }, limit = c.eval_limit }).accuracy
    else
      r.accuracy_dense = D.evaluate(student, te, { limit = c.eval_limit }).accuracy
    end
    return r
  end
  -- stage 2 under the student's keep-rate controller when its halting config has one
  local ctl = H.controller(shalt)
  local function own_halting() return ctl and ctl:config(shalt) or shalt end
  local step2 = controlled_step(ctl, shalt, function(x, y, extra, h, lambda)
    return D.halting_loss(student, x, y, { halting = h, ponder_weight = lambda, weights = c.stage2.weights, layers = layers,
                                           mode = c.stage2.mode }, extra, teacher)
  end)
  local stages = {
    { name = "stage1", epochs = c.stage1.epochs, lr = c.stage1.lr or c.lr, filter = filter, eval = eval1,
      step = function(x, y, extra) return D.stage1_loss(teacher, student, x, y, s1, extra) end },
    { name = "stage2", epochs = c.stage2.epochs, lr = c.stage2.lr or c.lr,
      eval = function()
        local e = D.evaluate(student, te, { halting = own_halting(), mode = c.eval_mode, limit = c.eval_limit })
        return { accuracy = e.accuracy, mean_keep_rate = e.mean_keep_rate, keep_rate = e.keep_rate }
      end,
      step = step2 },
  }
  local key_cfg = copy(rec.config)
  key_cfg.out, key_cfg.save, key_cfg.checkpoint, key_cfg.progress, key_cfg.stop_after = nil, nil, nil, nil, nil
  -- the teacher distils through both stages: a checkpoint made under another teacher file at
  -- the same path is not resumed (fit refuses it; the study sets it aside under --redo-changed)
  key_cfg.teacher_sha256 = rec.teacher_file and rec.teacher_file.sha256
  local hist, stopped = fit.run(student, stages, { name = "s2s", train = tr, batch_size = c.batch_size, seed = c.seed,
    weight_decay = c.weight_decay, warmup_epochs = c.warmup_epochs, min_lr = c.min_lr, clip_grad = c.clip_grad,
    checkpoint = c.checkpoint, key = fit.config_key({ "s2s", key_cfg, layers }), progress = c.progress,
    stop_after = c.stop_after, extra_state = ctl and function() return { controller = ctl:state() } end,
    on_resume = ctl and function(st) ctl:load(st.controller) end })
  rec.history = hist
  if stopped then return rec, student end
  if ctl then
    shalt = own_halting()                          -- the student's halting: the centre it ended with
    rec.student_halting, rec.ponder_lambda = shalt, ctl.lambda
    if ctl.center_eta then rec.gate_center = ctl.center end
  end
  -- final numbers: teacher and student with their halting, accuracy and speed
  local tev = D.evaluate(teacher, te, thalt and { halting = thalt, mode = c.eval_mode } or {})
  local sev = D.evaluate(student, te, { halting = shalt, mode = c.eval_mode })
  rec.teacher_accuracy, rec.teacher_keep_rate, rec.teacher_mean_keep_rate = tev.accuracy, tev.keep_rate, tev.mean_keep_rate
  rec.test_accuracy, rec.keep_rate, rec.mean_keep_rate = sev.accuracy, sev.keep_rate, sev.mean_keep_rate
  rec.accuracy_gap = rec.teacher_accuracy - rec.test_accuracy
  rec.teacher_s_per_example, rec.s_per_example = tev.s_per_example, sev.s_per_example
  rec.finished = now()
  if c.save then
    D.save_model(c.save, student, { kind = "s2s", halting = shalt, test_accuracy = tostring(sev.accuracy) })
    note_saved(rec, c.save)
  end
  write_json(c.out, rec)
  return rec, student
end

-- ---- efficiency vs resolution -----------------------------------------------------------------------------------
-- Throughput of dense / A-ViT (gathered) / S2S student (gathered) forward passes at
-- several image sizes. c: model (a ViT or file; default: DeiT-Tiny shape with random
-- weights), sizes ({224, 384}), patch (16), keep_rate (per-layer schedule list, or the
-- mean of a linear schedule), layers (replaced in the student; default the 3 deepest),
-- mixer, batch (4), iters (3), threads (default: the current count; on a shared machine 1
-- thread gives far steadier numbers). Halting decisions follow the keep schedule (random
-- tokens per sample, seeded): with random weights A-ViT's own scores would not halt anything.
function s2s.resolution_bench(c)
  c = K.lists("resolution_config", copy(K.assert("resolution_bench", "resolution_config", c or {})))
  if c.threads then
    local prev = al.get_num_threads()
    al.set_num_threads(c.threads)
    local c2 = copy(c)
    c2.threads = nil
    local ok, r = pcall(s2s.resolution_bench, c2)
    al.set_num_threads(prev)
    if not ok then error(r, 0) end
    return r
  end
  local base = c.model and resolve_model(c.model) or al.nn.ViT({ image_size = 224, patch_size = c.patch or 16, channels = 3,
    num_classes = c.num_classes or 1000, dim = c.dim or 192, depth = c.depth or 12, heads = c.heads or 3, seed = 0,
    init = "timm" })
  local L = base.depth
  if c.model then   -- the file's shape, known now: every size must cut into its patches
    local patch = base.patch_size or base.cfg.patch_size
    for i, S_ in ipairs(c.sizes or { 224, 384 }) do
      if S_ % patch ~= 0 then
        error(("resolution_bench: sizes[%d] = %d is not a multiple of the patch size %d of %s"):format(i, S_, patch,
          tostring(c.model)), 0)
      end
    end
  end
  local rates = c.keep_rates
  if rates then   -- one rate in (0, 1] per layer, or the masks below index nothing
    if type(rates) ~= "table" or #rates ~= L then
      error(("resolution_bench: keep_rates needs one keep rate per layer (%d), got %s"):format(L,
        type(rates) == "table" and #rates or tostring(rates)), 0)
    end
    for l = 1, L do
      local r = rates[l]
      if type(r) ~= "number" or not (r > 0 and r <= 1) then
        error(("resolution_bench: keep_rates[%d] must be in (0, 1], got %s"):format(l, al.cli.show(r)), 0)
      end
    end
  else
    -- a linearly decaying schedule with the requested mean keep rate (1 at layer 1)
    local mean = c.keep_rate or 0.7
    rates = {}
    local slope = 2 * (1 - mean) / math.max(1, L - 1)
    for l = 1, L do rates[l] = math.max(0.05, 1 - slope * (l - 1)) end
  end
  local layers = c.layers or S.layer_aware(L, math.min(3, L))
  local out = { keep_rates = rates, layers = layers, mixer = c.mixer or "bimamba", rows = {}, threads = al.get_num_threads(),
                batch = c.batch or 4, schedule_from = c.schedule_from, dim = base.cfg.dim, depth = L, heads = base.cfg.heads,
                git_revision = al.train.git_revision(), machine = al.train.machine(),   -- speed: which machine and tree
                model_file = s2s.file_fingerprint(c.model) }
  for _, S_ in ipairs(c.sizes or { 224, 384 }) do
    local m = D.clone(base, { image_size = S_ })
    local st = D.replace(m, layers, c.mixer or "bimamba", { seed = 1 })
    local B = c.batch or 4
    local N = m.num_tokens
    local masks = D.schedule_masks(B, N, rates, 3)
    local ntok_dense, ntok_halt = {}, {}
    for l = 1, L do ntok_dense[l] = N; ntok_halt[l] = 1 + math.floor(rates[l] * (N - 1) + 0.5) end
    -- round-robin timing: every iteration times each variant once, so load changes on a
    -- shared machine hit all of them alike; the median per variant is reported
    local x = al.randn({ B, m.channels, S_, S_ }, { generator = al.Generator(5) })
    local variants = {
      dense = function() return m(x) end,
      masked = function() return H.forward(m, x, { masks = masks }) end,
      avit = function() return H.forward(m, x, { masks = masks, mode = "gather" }) end,
      s2s_dense = function() return st(x) end,
      s2s = function() return H.forward(st, x, { masks = masks, mode = "gather" }) end,
    }
    local order = { "dense", "masked", "avit", "s2s_dense", "s2s" }
    local times = {}
    m:eval(); st:eval()
    al.no_grad(function()
      for _, k in ipairs(order) do variants[k](); times[k] = {} end          -- warm-up
      for i = 1, c.iters or 3 do
        for _, k in ipairs(order) do
          local t0 = al.clock()
          variants[k]()
          times[k][i] = al.clock() - t0
        end
      end
    end)
    local function med(t) table.sort(t) return t[(#t + 1) // 2] end
    local t_dense, t_masked, t_avit = med(times.dense), med(times.masked), med(times.avit)
    local t_s2s_dense, t_s2s = med(times.s2s_dense), med(times.s2s)
    local f_dense, f_avit = D.estimate_flops(m, ntok_dense), D.estimate_flops(m, ntok_halt)
    local f_s2s = D.estimate_flops(st, ntok_halt)
    out.rows[#out.rows + 1] = {
      image_size = S_, tokens = N, batch = B,
      img_per_s = { dense = B / t_dense, avit_masked = B / t_masked, avit = B / t_avit, s2s_dense = B / t_s2s_dense, s2s = B / t_s2s },
      speedup_measured = { avit = t_dense / t_avit, avit_masked = t_dense / t_masked, s2s = t_dense / t_s2s, s2s_vs_avit = t_avit / t_s2s },
      gflops = { dense = f_dense / 1e9, avit = f_avit / 1e9, s2s = f_s2s / 1e9 },
      speedup_estimated = { avit = f_dense / f_avit, s2s = f_dense / f_s2s, s2s_vs_avit = f_avit / f_s2s },
      seconds = times,
    }
    if c.progress then
      local r = out.rows[#out.rows]
      print(("%dx%d (%d tokens): dense %.1f img/s, A-ViT masked %.1f, A-ViT gathered %.1f, S2S %.1f; speedup measured %.2fx (S2S) est. %.2fx")
        :format(S_, S_, N, r.img_per_s.dense, r.img_per_s.avit_masked, r.img_per_s.avit, r.img_per_s.s2s,
          r.speedup_measured.s2s, r.speedup_estimated.s2s))
    end
  end
  write_json(c.out, out)
  return out
end

-- ---- command lines and presets -------------------------------------------------------------------------------
-- The S2S scripts' free "--key value" form (dotted keys nest, JSON values): cli.parse_pairs.
s2s.parse_args = al.cli.parse_pairs

-- The A-ViT keep rate the study's main comparisons use: the preset's avit.main_keep_rate, else
-- the halting default (s2s/halting.lua), so distill.lua and s2s_strategies.lua agree.
function s2s.main_keep_rate(preset)
  return (preset and preset.avit and preset.avit.main_keep_rate) or H.DEFAULT_KEEP_RATE
end

-- Deep merge of b over a (tables merged key by key, lists replaced): util.deep_merge, the
-- rule sweeps apply to an experiment's quick table too.
s2s.deep_merge = util.deep_merge

-- Load an experiment preset (a Lua file returning a table); with quick = true its
-- `quick` table is merged over it (a minutes-long smoke run of the same pipeline).
function s2s.load_preset(path, quick)
  if type(path) ~= "string" then error("s2s: --preset needs a file name", 0) end
  -- "experiments/s2s/x.lua" typed outside the checkout: the checkout's (or the installed
  -- tree's) file, as sweeps resolve experiments/... (sweep/experiment.lua)
  local root = al.root()
  local found
  for _, c in ipairs({ path, path:match("^experiments/") and (root .. "/" .. path) or nil }) do
    local f = io.open(c, "rb")
    if f then f:close(); found = c; break end
  end
  if not found then
    error(("s2s: preset %s: no such file (the presets are in %s/experiments/s2s/)"):format(path, root), 0)
  end
  path = found
  local chunk, err = loadfile(path)
  if not chunk then error("s2s: cannot load preset " .. tostring(path) .. ": " .. tostring(err), 0) end
  local ok, p = pcall(chunk)
  if not ok then error(("s2s: preset %s raised an error: %s"):format(path, tostring(p)), 0) end
  if type(p) ~= "table" then error("s2s: preset " .. path .. " must return a table, got " .. type(p), 0) end
  -- --quick on a preset without a quick table ran the full preset, silently (sweep.resolve refuses it too)
  if quick and p.quick == nil then error(("s2s: preset %s has no quick preset (no quick table)"):format(path), 0) end
  if quick and p.quick then p = s2s.deep_merge(p, p.quick) end
  p.quick = nil
  return p
end

return s2s
