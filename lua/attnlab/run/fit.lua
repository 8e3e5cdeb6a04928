-- attnlab.run.fit -- the one training loop: parameter groups, AdamW with a warmup-cosine
-- schedule, gradient clipping, a divergence guard (a loss or, after an epoch, a weight that is
-- NaN or inf stops the run), and a checkpoint after every epoch from which a stopped run
-- resumes with the same numbers (one that cannot be this run's is refused). The classifier
-- (run/train.lua) and every S2S step (s2s/init.lua: teacher fine-tuning, A-ViT, distillation)
-- train through it.
--
--   local history = fit.run(model, {
--     { name = "stage1", epochs = 2, lr = 5e-4, step = function(x, y, extra, tally) return loss, parts end,
--       eval = function(tally) return { accuracy = ... } end },
--   }, { train = dataset, batch_size = 128, seed = 1, weight_decay = 0.05, checkpoint = "run.ckpt", key = "..." })
--
-- A stage's step returns the loss tensor and a table of batch means (each averaged over the
-- epoch, weighted by the batch size, into the epoch's record); `tally` is a table that lives
-- for one epoch, for counts a stage keeps itself. eval(tally) returns fields added to the
-- epoch's record. Each stage gets its own optimizer and schedule.
local al = require "attnlab"
local util = require "attnlab.util"

local fit = {}

-- Parameters without weight decay: biases and norms (every tensor of rank <= 1), the position
-- embedding, the class token, hae's alphas, and Mamba's A_log and D (both directions), as the
-- Mamba reference does (they set the state dynamics and the skip, not a feature map).
-- decay_all: one group, weight decay on every parameter (torch.optim.AdamW(model.parameters())).
-- filter(name) -> bool keeps only the parameters it accepts (e.g. only the new mixers).
function fit.no_decay(name, p)
  return #p:shape() <= 1 or name:match("pos_embed") or name:match("cls_token") or name:match("pre_alpha")
    or name:match("A_log$") or name:match("A_b_log$") or name:match("%.D$") or name:match("%.D_b$")
end

function fit.param_groups(model, wd, decay_all, filter)
  if decay_all and not filter then return { { params = model:parameters(), weight_decay = wd } } end
  local decay, no_decay = {}, {}
  for _, np in ipairs(model:named_parameters()) do
    local name, p = np[1], np[2]
    if not filter or filter(name) then
      if not decay_all and fit.no_decay(name, p) then no_decay[#no_decay + 1] = p else decay[#decay + 1] = p end
    end
  end
  if decay_all then return { { params = decay, weight_decay = wd } } end
  return { { params = decay, weight_decay = wd }, { params = no_decay, weight_decay = 0 } }
end

local function flat_params(groups)
  local out = {}
  for _, g in ipairs(groups) do for _, p in ipairs(g.params) do out[#out + 1] = p end end
  return out
end

-- A stable text of a config (keys sorted; nested tables encoded), for resume checks.
-- opts.flat: a flat table's key without the outer braces (the form classifier checkpoints carry).
function fit.config_key(c, opts)
  local function enc(v)
    if type(v) ~= "table" then return tostring(v) end
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    local parts = {}
    for _, k in ipairs(keys) do parts[#parts + 1] = tostring(k) .. "=" .. enc(v[k]) end
    return "{" .. table.concat(parts, ";") .. "}"
  end
  local s = enc(c)
  if opts and opts.flat then s = s:sub(2, -2) end
  return s
end

-- ---- checkpoints --------------------------------------------------------------------------------
-- One safetensors file: model.<name> and optim.<name> tensors; metadata `state` (JSON: key,
-- stage, epoch, sched_t, history and the caller's extra fields), `heads` (the one ViT
-- hyperparameter the weights do not determine; nn/checkpoint.lua reads it) and, when the model
-- is a ViT whose every block is attention (not an S2S student), `attnlab_vit`: its config as
-- checkpoint.save_vit writes it, so that checkpoint.vit_from_file rebuilds the same model
-- (normalizer included) from the file. Resuming reads only `state` and the tensors.
-- `tensors_sha256`: the SHA-256 of every tensor's name, dtype, shape and data (fit.tensors_digest),
-- checked when the checkpoint is read: safetensors has no checksum, and a flipped bit in a
-- weight resumed into a run that finished and wrote a valid-looking record.
function fit.tensors_digest(sd)
  local parts = {}
  for _, k in ipairs(util.sorted_keys(sd)) do
    local t = sd[k]
    parts[#parts + 1] = ("%s %s (%s) %s"):format(k, t:dtype(), table.concat(t:shape(), ","), t:sha256())
  end
  return al.sha256(table.concat(parts, "\n"))
end

function fit.save_checkpoint(path, model, opt, state)
  local sd = {}
  for k, v in pairs(model:state_dict()) do sd["model." .. k] = v end
  if opt then for k, v in pairs(opt:state_dict()) do sd["optim." .. k] = v end end
  local heads = model.cfg and math.tointeger(model.cfg.heads)
  local meta = { state = al.json.encode(state), heads = heads and tostring(heads), tensors_sha256 = fit.tensors_digest(sd) }
  local ckpt = require "attnlab.nn.checkpoint"
  if not ckpt.plain_vit_problem(model) then meta.attnlab_vit = al.json.encode(ckpt.vit_config(model)) end
  al.save(path, sd, meta)
end

-- A training checkpoint's tensors and metadata split into {model =, optim =, state =}: the
-- model.<name> and optim.<name> tensors without their prefixes, and the decoded `state`.
-- Checkpoints written before the loops were one (the classifier's: config_key, epochs, no
-- stage) read as the same fields. A file that is no training checkpoint (no `state` metadata,
-- or not a JSON object) raises what it lacks. read_checkpoint and checkpoint.vit_from_file
-- (which loads a training checkpoint's model) both read checkpoints through this.
function fit.split_checkpoint(sd, meta)
  local m, o = {}, {}
  for k, v in pairs(sd) do
    local mk, ok = k:match("^model%.(.+)$"), k:match("^optim%.(.+)$")
    if mk then m[mk] = v elseif ok then o[ok] = v end
  end
  if type(meta) ~= "table" or type(meta.state) ~= "string" then
    error("it has no 'state' metadata: not a checkpoint written by a training run", 0)
  end
  -- (checkpoints written before the checksum have none: read as they are)
  if meta.tensors_sha256 ~= nil and meta.tensors_sha256 ~= fit.tensors_digest(sd) then
    error("its tensors do not match the checksum written with them (tensors_sha256): the file was changed or damaged", 0)
  end
  local okj, st = pcall(al.json.decode, meta.state)
  if not okj or type(st) ~= "table" then error("its 'state' metadata is not a JSON object", 0) end
  if st.key == nil and st.config_key ~= nil then
    st.key, st.history, st.stage = st.config_key, st.epochs, 1
    st.config_key, st.epochs = nil, nil
  end
  return { model = m, optim = o, state = st }
end

-- {model =, optim =, state =} of a checkpoint (fit.split_checkpoint), or nil when there is no
-- file; fit.check_resume judges the fields themselves.
function fit.read_checkpoint(path)
  -- a FIFO would block io.open forever: refused (the callers name the checkpoint)
  local kind = util.not_regular(path)
  if kind then error(("it is %s, not a regular file"):format(kind), 0) end
  local f = io.open(path, "rb")
  if not f then return nil end
  f:close()
  local sd, meta = al.load(path)
  return fit.split_checkpoint(sd, meta)
end

-- A finite number (not NaN, not +-inf): the divergence guards' test, here and in run/train.lua.
fit.finite = util.finite
local finite = fit.finite

-- The name of the first tensor (in name order) of a name -> tensor table that holds a NaN or
-- an infinity, or nil. One pass over the data: cheap next to an epoch.
-- (checkpoint.nonfinite_tensor, required here: it requires this module when it reads a checkpoint)
local function nonfinite_tensor(tensors)
  return require("attnlab.nn.checkpoint").nonfinite_tensor(tensors)
end

-- A model parameter holding a NaN or an infinity (its name), or nil: a run whose last
-- update ruined the weights stops there, before they are evaluated or checkpointed.
function fit.nonfinite_parameter(model)
  for _, np in ipairs(model:named_parameters()) do
    if np[2]:has_nonfinite() then return np[1] end
  end
end

-- Why a checkpoint read by fit.read_checkpoint cannot resume this run, or nil when it can: the
-- state's types and ranges (key a string; stage one of the run's stages; epoch an integer in
-- 0..that stage's epochs; sched_t the schedule step those epochs end at; history one finite
-- record per epoch done) and finite tensors. A file of another configuration is the caller's
-- "different configuration", not this. steps_per_epoch: of the run resuming.
function fit.check_resume(ck, stages, steps_per_epoch)
  local st = ck.state
  local function show(v) return v == al.json.null and "null" or al.cli.show(v) end   -- (JSON null: userdata)
  if type(st.key) ~= "string" then return "key = " .. show(st.key) .. ", want the configuration's key (a string)" end
  local stage = st.stage == nil and 1 or st.stage
  if math.type(stage) ~= "integer" or stage < 1 or stage > #stages then
    return ("stage = %s, want an integer in 1..%d (this run's stages)"):format(show(st.stage), #stages)
  end
  local epochs = stages[stage].epochs
  if math.type(st.epoch) ~= "integer" or st.epoch < 0 or st.epoch > epochs then
    return ("epoch = %s, want an integer in 0..%d"):format(st.epoch == nil and "(missing)" or show(st.epoch), epochs)
  end
  local want_t = st.epoch * steps_per_epoch
  if st.sched_t ~= want_t then
    return ("sched_t = %s, want %d (%d epoch%s of %d step%s)"):format(st.sched_t == nil and "(missing)" or show(st.sched_t),
      want_t, st.epoch, st.epoch == 1 and "" or "s", steps_per_epoch, steps_per_epoch == 1 and "" or "s")
  end
  local done = st.epoch
  for s = 1, stage - 1 do done = done + stages[s].epochs end
  local h = st.history
  if type(h) ~= "table" or #h ~= done then
    return ("history = %s, want a list of %d epoch record%s"):format(type(h) == "table" and ("a list of " .. #h) or show(h),
      done, done == 1 and "" or "s")
  end
  for i = 1, done do
    local e = h[i]
    if type(e) ~= "table" or math.type(e.epoch) ~= "integer" or e.epoch < 1 or not finite(e.loss) then
      return ("history[%d] is not an epoch record with an epoch number and a finite loss"):format(i)
    end
    -- its numbers go into the run's record as they are: every one finite, accuracies in [0, 1]
    for _, k in ipairs(util.sorted_keys(e)) do
      local v = e[k]
      if type(v) == "number" and not finite(v) then return ("history[%d].%s = %s, want a finite number"):format(i, k, show(v)) end
      if type(k) == "string" and k:find("accuracy", 1, true) and not (type(v) == "number" and v >= 0 and v <= 1) then
        return ("history[%d].%s = %s, want an accuracy in [0, 1]"):format(i, k, show(v))
      end
    end
  end
  if done > 0 and st.epoch > 0 and h[done].epoch ~= st.epoch then
    return ("history ends at epoch %s, but epoch = %d"):format(show(h[done].epoch), st.epoch)
  end
  local bad = nonfinite_tensor(ck.model)
  if bad then return ("model tensor %s holds NaN or inf"):format(bad) end
  bad = nonfinite_tensor(ck.optim)
  if bad then return ("optimizer tensor %s holds NaN or inf"):format(bad) end
end

-- ---- augmentation of training images ---------------------------------------------------------
-- spec.augment = { crop_pad = 4, hflip = true } (or nil: off, the default, so existing runs
-- are unchanged). Each training batch x (B, C, H, W) is replaced by al.random_crop_flip(x):
-- per image a crop of the zero-padded image (zero is the normalized tensor's zero, the
-- channel mean) and a coin-flip horizontal mirror. Only here, in the training loop: stage
-- evals and test/val sets never pass through it. The draws come from a generator of their
-- own seeded from (run seed, stage, epoch), so they do not touch the default generator
-- (dropout, init), a run resumed at an epoch boundary draws the same numbers, and the
-- thread count cannot change them (each image's output depends on its own draws only).
function fit.check_augment(a, who)
  if a == nil or a == false then return nil end
  who = who or "fit"
  if type(a) ~= "table" then error(("%s: augment must be a table {crop_pad =, hflip =} or nil, got %s"):format(who, tostring(a)), 3) end
  for k in pairs(a) do
    if k ~= "crop_pad" and k ~= "hflip" then
      error(("%s: augment has an unknown key '%s' (known: crop_pad, hflip)"):format(who, tostring(k)), 3)
    end
  end
  local pad = a.crop_pad or 0
  if math.type(pad) ~= "integer" or pad < 0 then
    error(("%s: augment.crop_pad must be an integer >= 0, got %s"):format(who, tostring(a.crop_pad)), 3)
  end
  if a.hflip ~= nil and type(a.hflip) ~= "boolean" then
    error(("%s: augment.hflip must be true or false, got %s"):format(who, tostring(a.hflip)), 3)
  end
  if pad == 0 and not a.hflip then return nil end
  return { crop_pad = pad, hflip = a.hflip or false }
end

-- The augmentation generator's seed for one epoch of one stage (distinct from the shuffle's).
function fit.augment_seed(seed, stage, epoch)
  return ((seed or 1) * 1000003 + stage * 7907 + epoch) * 2 + 1
end

local clean = util.error_text

-- ---- the loop ---------------------------------------------------------------------------------------
-- fit.run(model, stages, spec) -> history, stopped.
-- stages: list of { name, epochs, lr, warmup_epochs, filter (param name -> bool), shuffle_seed,
--   step, eval } (shuffle_seed defaults to seed * 7919 + the stage's index).
-- spec: train (dataset), batch_size (128), seed (1), lr (5e-4), weight_decay (0.05), decay_all,
--   betas, eps (AdamW's), warmup_epochs (0), min_lr (1e-6), clip_grad, checkpoint (path), key
--   (config key: a checkpoint made with another key is refused), name (error prefix, "fit"),
--   progress, stop_after (return after that many epochs in all: tests simulate a kill),
--   clip_order ("model": clip over model:parameters() in the model's order; default: the
--   optimizer groups' parameters in group order),
--   on_step(info) and on_epoch(rec) (progress output; default: one line per 20 steps and per
--   epoch), extra_state() -> fields saved in the checkpoint, check_state(state) -> nil or why
--   those fields cannot be resumed from (then the checkpoint is refused as corrupt), on_resume(state),
--   augment ({crop_pad =, hflip =}: training images only; see fit.check_augment).
-- Returns the per-epoch records ({stage, epoch, loss, parts..., eval fields..., lr, seconds},
-- seconds: the epoch's training and evaluation) and true when stop_after ended the run.
function fit.run(model, stages, spec)
  local who = spec.name or "fit"
  local history, start = {}, { stage = 1, epoch = 0 }
  local ck
  if spec.checkpoint then
    local ok, r = pcall(fit.read_checkpoint, spec.checkpoint)
    if not ok then
      error(("%s: checkpoint %s is unreadable (%s); delete it (or move it away) to start this run over")
        :format(who, spec.checkpoint, clean(r)), 2)
    end
    ck = r
  end
  local ds = spec.train
  local bs = spec.batch_size or 128
  local steps_per_epoch = (ds.n + bs - 1) // bs
  -- a checkpoint that loads but cannot be what this run wrote (a hand edit, another program's
  -- file, a diverged run's) is refused like an unreadable one: resuming would train on garbage
  local function corrupt(why)
    error(("%s: checkpoint %s is corrupt (%s); delete it (or move it away) to start this run over")
      :format(who, spec.checkpoint, clean(why)), 3)
  end
  if ck then
    if type(ck.state.key) == "string" and ck.state.key ~= spec.key then
      error(("%s: checkpoint %s was made with a different configuration; remove it or give another checkpoint path")
        :format(who, spec.checkpoint), 2)
    end
    local why = fit.check_resume(ck, stages, steps_per_epoch) or (spec.check_state and spec.check_state(ck.state))
    if why then corrupt(why) end
    local okl, lerr = pcall(model.load_state_dict, model, ck.model)
    if not okl then corrupt(lerr) end
    history = ck.state.history
    start = { stage = ck.state.stage or 1, epoch = ck.state.epoch }
    if spec.on_resume then spec.on_resume(ck.state) end
    if spec.progress and not spec.on_epoch then
      print(("resuming from %s: stage %d, epoch %d done"):format(spec.checkpoint, start.stage, start.epoch))
    end
  end
  local augment = fit.check_augment(spec.augment, who)
  for si, stage in ipairs(stages) do
    if si > start.stage or (si == start.stage and start.epoch < stage.epochs) then
      local groups = fit.param_groups(model, spec.weight_decay or 0.05, spec.decay_all, stage.filter)
      -- the gradient norm sums squares in this order; each caller keeps the order its records
      -- were made with (the classifier: the model's; S2S: the optimizer groups'), because
      -- another order changes the norm in its last bits and so every later step
      local params = (spec.clip_order == "model" and not stage.filter) and model:parameters() or flat_params(groups)
      local opt = al.optim.AdamW(groups, { lr = stage.lr or spec.lr or 5e-4, weight_decay = spec.weight_decay or 0.05,
                                           betas = spec.betas, eps = spec.eps })
      local total = math.max(1, steps_per_epoch * stage.epochs)
      local warmup = math.floor((stage.warmup_epochs or spec.warmup_epochs or 0) * steps_per_epoch)
      local sched = al.optim.CosineWarmup(opt, { warmup = warmup, total = total, min_lr = spec.min_lr or 1e-6 })
      local first = 1
      if si == start.stage and ck then
        local oko, oerr = pcall(opt.load_state_dict, opt, ck.optim)
        if not oko then corrupt(oerr) end
        sched.t = ck.state.sched_t
        opt:set_lr(sched:lr_at(sched.t))
        first = start.epoch + 1
      end
      local shuffle_seed = stage.shuffle_seed or (spec.seed or 1) * 7919 + si
      for epoch = first, stage.epochs do
        model:train()
        local t0 = al.clock()
        local sums, nseen, tally = {}, 0, {}
        local loader = al.data.Loader(ds, { batch_size = bs, shuffle = true, seed = shuffle_seed })
        local aug_gen = augment and al.Generator(fit.augment_seed(spec.seed, si, epoch))
        for x, y, b, extra in loader:iter(epoch) do
          local ts = al.clock()
          if augment then
            x = al.random_crop_flip(x, { pad = augment.crop_pad, hflip = augment.hflip, generator = aug_gen })
          end
          local loss, parts = stage.step(x, y, extra, tally)
          opt:zero_grad()
          loss:backward()
          if spec.clip_grad and spec.clip_grad > 0 then al.optim.clip_grad_norm(params, spec.clip_grad) end
          opt:step()
          sched:step()
          local dt = al.clock() - ts
          local lv = loss:item()
          if not finite(lv) then
            error(("%s: loss became %s %sat epoch %d step %d"):format(who, lv ~= lv and "NaN" or lv > 0 and "inf" or "-inf",
              stage.name and ("in stage " .. stage.name .. " ") or "", epoch, b), 2)
          end
          local nb = y:numel()
          nseen = nseen + nb
          sums.loss = (sums.loss or 0) + lv * nb
          for k, v in pairs(parts or {}) do sums[k] = (sums[k] or 0) + v * nb end
          if spec.on_step then
            spec.on_step({ stage = stage.name, epoch = epoch, step = b, steps = steps_per_epoch, loss = sums.loss / nseen,
                           batch = nb, dt = dt })
          elseif spec.progress and (b % 20 == 0 or b == steps_per_epoch) then
            io.stdout:write(("\r%s epoch %d step %d/%d loss %.4f"):format(stage.name or "train", epoch, b,
              steps_per_epoch, sums.loss / nseen))
            io.stdout:flush()
          end
        end
        -- the last update can ruin the weights without a non-finite loss (the loss was taken
        -- before it): checked once per epoch, before they are evaluated or checkpointed
        local bad = fit.nonfinite_parameter(model)
        if bad then
          error(("%s: parameter %s became NaN or inf %sin epoch %d (the run diverged)"):format(who, bad,
            stage.name and ("in stage " .. stage.name .. " ") or "", epoch), 2)
        end
        local rec = { stage = stage.name, epoch = epoch, lr = opt.lr }
        for k, v in pairs(sums) do rec[k] = v / nseen end
        if stage.eval then for k, v in pairs(stage.eval(tally)) do rec[k] = v end end
        rec.seconds = al.clock() - t0
        history[#history + 1] = rec
        if spec.on_epoch then
          spec.on_epoch(rec)
        elseif spec.progress then
          io.stdout:write("\n")
          local extra_s = {}
          for _, k in ipairs({ "accuracy", "accuracy_own", "accuracy_teacher_masks", "accuracy_dense", "mean_keep_rate" }) do
            if rec[k] then extra_s[#extra_s + 1] = ("%s %.4f"):format(k, rec[k]) end
          end
          print(("%s epoch %d: loss %.4f  %s  (%.1f s)"):format(stage.name or "train", epoch, rec.loss,
            table.concat(extra_s, "  "), rec.seconds))
        end
        if spec.checkpoint then
          local state = { key = spec.key, stage = si, epoch = epoch, sched_t = sched.t, history = history }
          for k, v in pairs(spec.extra_state and spec.extra_state() or {}) do state[k] = v end
          fit.save_checkpoint(spec.checkpoint, model, opt, state)
        end
        if spec.stop_after and #history >= spec.stop_after then return history, true end
      end
    end
  end
  return history
end

return fit
