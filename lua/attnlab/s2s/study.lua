-- attnlab.s2s.study -- the library half of the S2S study (experiments/s2s/study.lua is the
-- study itself): its prerequisites -- the dense teacher, sparsity profiles, A-ViT teachers at
-- each keep rate, students at each seed -- each made once by a cached step (a rerun reads
-- the record instead of training again, when it was made with the settings the rerun would
-- use: else it is refused, or set aside and redone with opts.redo_changed; every training
-- run checkpoints per epoch, so a killed study resumes). The Markdown summary of whatever records exist is
-- s2s/summary.lua. scripts/s2s_strategies.lua builds the context and runs the experiments.
--
--   local C = require("attnlab.s2s.study").context(preset, out, opts, die)
--   C.teacher_path(); C.avit_path(0.65); C.student(C.avit_path(0.65), 0.65, {5, 6}, nil, 2)
--   C.student(C.teacher_path(), "dense", {5, 6}); C.summary()
--
-- Seeds: preset.seeds (default: the one seed of preset.distill, 1 if none) are the students'
-- seeds; a student's seed sets its mixers' initialisation, its data order and its seeded
-- training subset (and test subset when test_limit is set; teacher and student of a run
-- are always measured on the same images). The teacher and the A-ViTs are trained once.
-- Student records: <out>/students/<name>.json, name = L<layers>_<teacher>_<mixer>
-- (control_<teacher> when nothing is replaced), teacher = k<keep rate> for the A-ViT at that
-- target or "dense" for the dense teacher, "_own<k>" when the student's own keep rate is
-- held at k (experiment 2's control), and "_s<seed>" unless the seed is the preset's default
-- seed: a single-seed preset's records keep the names they always had.
local al = require "attnlab"
local s2s = require "attnlab.s2s"
local util = require "attnlab.util"
local lockfile = require "attnlab.lockfile"

local study = {}

-- preset: the resolved preset (command-line keys merged); out: the results folder; opts: the
-- parsed command line (preset, quick: named in the summary); die(msg): report a user error.
function study.context(preset, out, opts, die)
  -- every section's keys, before any step runs (s2s/check.lua; the scripts check the same
  -- table first, naming the command-line options); a lone number for a list key becomes a
  -- list of one (--seeds 3, --resolution.sizes 224)
  local K = s2s.check
  K.lists("preset", preset)
  K.assert("s2s.study", "preset", preset)
  local C = { preset = preset, out = out, opts = opts, die = die }
  local function exists(p) local f = io.open(p, "rb") if f then f:close() return true end return false end
  -- a record; a damaged one (a hand edit, a full disk) names its file and what to do
  local function read_json(p)
    local f = io.open(p, "rb")
    if not f then return nil end
    local s = f:read("a")
    f:close()
    local v, why = util.decode_json(s)
    if why or type(v) ~= "table" then
      error(("s2s: record %s is not a JSON object (%s); delete it to make that step again"):format(p,
        why or ("got " .. type(v))), 0)
    end
    return v
  end

  local function log(fmt, ...) print(("[s2s] " .. fmt):format(...)) io.stdout:flush() end

  -- ---- a record's settings against this command's -------------------------------------------------
  -- A record names its step (students: layers, teacher, mixer, keep rates, seed), not every
  -- setting it was made with: before a record is reused, the config it stores (`config`: the
  -- library's, defaults filled in) is compared with the one this command would train with, so
  -- that a changed setting (--distill.lr, --train_limit, a preset's quick table) is never
  -- answered with the old results. Not compared: the keys that do not change results (paths
  -- under the results folder, progress, threads, stop_after). A key the record lacks although
  -- the library has a default for it is not compared either: every config the library records
  -- holds all its defaults, so such a record predates the key (the committed records do).
  local NOT_RESULTS = { out = true, save = true, checkpoint = true, progress = true, stop_after = true, threads = true,
                        teacher = true, student = true, profile = true }
  local LIMITS = { train_limit = true, test_limit = true, eval_limit = true }   -- false and unset: all
  local TOP = { train_limit = true, test_limit = true, dataset = true }         -- the preset's, not a section's
  local FINETUNE_DEFAULTS = s2s.FINETUNE_DEFAULTS   -- s2s.train_teacher's fine-tuning recipe
  local null = al.json and al.json.null
  local function norm(k, v)
    if v == null or (LIMITS[k] and v == false) then return nil end
    return v
  end
  local function same(a, b)
    if type(a) == "number" and type(b) == "number" then     -- (a JSON round trip)
      return a == b or math.abs(a - b) <= 1e-12 * math.max(1, math.abs(a), math.abs(b))
    end
    if type(a) == "table" and type(b) == "table" then
      for k, v in pairs(a) do if not same(norm(k, v), norm(k, b[k])) then return false end end
      for k, v in pairs(b) do if a[k] == nil and norm(k, v) ~= nil then return false end end
      return true
    end
    return a == b
  end
  -- the first key (in key order) whose values differ: path, the record's value, this command's
  local function first_diff(want, got, defaults, skip, prefix)
    local keys, seen = {}, {}
    for _, t in ipairs({ want, got }) do
      for k in pairs(t) do if not seen[k] then seen[k] = true; keys[#keys + 1] = k end end
    end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    for _, k in ipairs(keys) do
      if not (skip and skip[k]) then
        local w, g = norm(k, want[k]), norm(k, got[k])
        local d
        if type(defaults) == "table" then d = defaults[k] end
        if g == nil and d ~= nil then                          -- the record predates the key
        elseif util.is_object(w) and util.is_object(g) and next(w) and next(g) then
          local p, a, b = first_diff(w, g, d, nil, prefix .. tostring(k) .. ".")
          if p then return p, a, b end
        elseif not same(w, g) then
          return prefix .. tostring(k), g, w
        end
      end
    end
  end
  local function shown(v)
    if v == nil then return "unset" end
    if type(v) == "table" then return al.json.encode(v) end
    if type(v) == "string" then return v end
    return util.show(v)
  end
  -- why the record rec of a step cannot stand for this command's (nil: it can). want: config
  -- (this command's, defaults filled in), defaults, section (the preset's section, for the
  -- key's name), skip (top-level keys not compared), layers (the replaced layers), made_from
  -- (the record of the model the step starts from: a record made before it was (re)made is
  -- a record of its predecessor).
  -- source = { key = "teacher_file", path = FILE }: the model file the step starts from, by
  -- the SHA-256 its record stores under that key. base: the step's path without extension.
  local function stale(rec, want, base)
    -- the step's own model file <base>.safetensors, replaced since by another model (by hand):
    -- the record's numbers are not that model's, and the steps made from it would use the
    -- other one. Its record names it by SHA-256 (`saved_file`; records made before do not).
    local own = rec.saved_file
    local model = base and (base .. ".safetensors")
    if type(own) == "table" and type(own.sha256) == "string" and model and exists(model) then
      local cur = s2s.file_fingerprint(model)
      if cur.sha256 ~= own.sha256 then
        return ("saved the model %s with SHA-256 %s..., the file is now %s...: it was replaced since"):format(
          model, own.sha256:sub(1, 12), cur.sha256:sub(1, 12))
      end
    end
    if not want then return nil end
    if type(want.config) == "table" and type(rec.config) == "table" then
      local skip = setmetatable({}, { __index = function(_, k) return NOT_RESULTS[k] or (want.skip or {})[k] end })
      local p, got, w = first_diff(want.config, rec.config, want.defaults, skip, "")
      if p then
        local key = (TOP[p] and want.section ~= "teacher") and p or (want.section .. "." .. p)
        return ("was made with %s = %s, this command gives %s"):format(key, shown(got), shown(w))
      end
    end
    if want.layers and type(rec.layers) == "table" and not same(rec.layers, want.layers) then
      return ("replaced layers %s, this command replaces %s"):format(shown(rec.layers), shown(want.layers))
    end
    -- the model file the step started from (its record's `<what>_file`: s2s.provenance) was
    -- replaced since, by hand or by a run elsewhere: the record stands for the old file. A
    -- record made before records named their files is not compared (the committed ones).
    local src = want.source
    local fp = src and rec[src.key]
    local same_file = false   -- made from exactly the file there now (by its SHA-256)
    if type(fp) == "table" and type(fp.sha256) == "string" and exists(src.path) then
      local cur = s2s.file_fingerprint(src.path)
      if cur.sha256 ~= fp.sha256 then
        return ("was made from %s with SHA-256 %s..., the file is now %s...: it was replaced since"):format(
          src.path, fp.sha256:sub(1, 12), cur.sha256:sub(1, 12))
      end
      same_file = true
    end
    -- by the clock (records that name no file): made before its model was last (re)made. A
    -- model remade bit for bit (the same seed and settings) is the same file: no refusal then.
    if want.made_from and not same_file then
      local pre = read_json(want.made_from)
      if pre and type(pre.finished) == "string" and type(rec.started) == "string" and rec.started < pre.finished then
        return ("was made before %s (started %s, that one finished %s): from an earlier model"):format(
          want.made_from, rec.started, pre.finished)
      end
    end
  end
  local redo = opts and (opts.redo_changed == true)
  local function refuse(base, why)
    return ("s2s: record %s.json %s; use a new --out folder, or --redo-changed to set it aside and redo the step")
      :format(base, why)
  end
  -- Moves base's record, model and checkpoint (and the records `also` names: the profiles of
  -- that model) into <out>/set_aside/<time>/, keeping their paths under out.
  local function set_aside(name, also)
    local dir = out .. "/set_aside/" .. os.date("!%Y%m%dT%H%M%SZ")
    local moved = 0
    for _, n in ipairs({ name, table.unpack(also or {}) }) do
      for _, ext in ipairs({ ".json", ".safetensors", ".ckpt" }) do
        local from, to = out .. "/" .. n .. ext, dir .. "/" .. n .. ext
        if exists(from) then
          if not util.mkdir_p(to:match("^(.*)/[^/]+$")) then error(("s2s: cannot create the folder %s"):format(dir), 0) end
          local ok, err = os.rename(from, to)
          if not ok then error(("s2s: cannot move %s to %s: %s"):format(from, to, tostring(err)), 0) end
          moved = moved + 1
        end
      end
    end
    log("%s: made with other settings: %d file(s) set aside in %s", name, moved, dir)
  end

  -- ---- the cached step ----------------------------------------------------------------------------------
  -- The step `name` (a path under out, no extension) is done when <out>/<name>.json exists
  -- and was made with this command's settings (want: see stale above): its record is
  -- returned. A record of other settings is refused in one line, or with --redo-changed
  -- (opts.redo_changed) set aside with its model and checkpoint and the step made again.
  -- Otherwise fn(base) runs it (base = <out>/<name>: the step writes
  -- base .. ".json" last, after its model base .. ".safetensors" and checkpoint base ..
  -- ".ckpt") and its record is returned.
  -- Two drivers may share one results folder (say `groupwise` and `keeprate` at once, one
  -- thread each, to use both cores): a step runs under the lock file base .. ".lock"
  -- (attnlab.lockfile), so the other driver waits for it and then reads its record instead of
  -- training the same model beside it. A lock left by a killed driver is taken over, and the
  -- step resumes from its checkpoint.
  local poll_s = math.max(0.05, tonumber(os.getenv("ATTNLAB_LOCK_POLL_S")) or 15)
  local function cached_step(name, fn, want)
    local base = out .. "/" .. name
    local rec = read_json(base .. ".json")
    if rec then
      local why = stale(rec, want, base)
      if not why then return rec end
      if not redo then error(refuse(base, why), 0) end
    end
    util.mkdir_p(base:match("^(.*)/[^/]+$") or ".")
    local function usable()
      local r = read_json(base .. ".json")
      return r ~= nil and stale(r, want, base) == nil
    end
    local lock
    repeat   -- until this driver holds the lock with no usable record yet, or the record is there
      lock = lockfile.wait(base .. ".lock", {
        poll_s = poll_s,
        done = usable,
        log = function(msg) log("%s: %s", name, msg) end,
      })
      rec = read_json(base .. ".json")
      if rec and not stale(rec, want, base) then
        if lock then lock:release() end
        return rec
      end
    until lock
    if rec then   -- a record of other settings (made by another driver while this one waited)
      local why = stale(rec, want, base)
      if not redo then lock:release() error(refuse(base, why), 0) end
      local ok, err = pcall(set_aside, name, want and want.dependents)
      if not ok then lock:release() error(err, 0) end
    end
    log("%s -> %s.json", name, base)
    local ok, r = pcall(fn, base)
    -- a checkpoint left by a run of other settings (no record yet): set aside too, on request
    if not ok and redo and type(r) == "string" and r:find("made with a different configuration", 1, true) then
      local moved = pcall(set_aside, name)
      if moved then ok, r = pcall(fn, base) end
    end
    lock:release()
    if not ok then error(r, 0) end
    return r or read_json(base .. ".json")
  end

  -- ---- prerequisites ------------------------------------------------------------------------------------
  -- The config a step would train with, defaults filled in as the library fills them (what
  -- its record stores as `config`), for cached_step's comparison.
  local function teacher_want(c)
    if s2s.init_is_scheme(c.init) then     -- al.train's config (s2s.train_teacher drops save, image_size)
      local tc = util.copy(c)
      tc.save, tc.image_size = nil, nil
      local ok, rc = pcall(al.train.config, tc)
      if not ok then return nil end          -- a bad preset: the step says so itself
      return { section = "teacher", config = rc, defaults = al.train.DEFAULTS, dependents = { "profile/profile" } }
    end
    return { section = "teacher", config = util.merge(FINETUNE_DEFAULTS, c), defaults = FINETUNE_DEFAULTS,
             dependents = { "profile/profile" }, source = { key = "init_file", path = c.init } }
  end

  local function teacher_path()
    local base = out .. "/teacher"
    local c = s2s.deep_merge(preset.teacher or {}, {})
    c.save, c.out, c.checkpoint, c.progress = base .. ".safetensors", base .. ".json", base .. ".ckpt", true
    cached_step("teacher", function()
      local rec = s2s.train_teacher(c)
      s2s.write_json(c.out, rec)
      return rec
    end, teacher_want(c))
    return out .. "/teacher.safetensors"
  end

  local function profile_of(model_path, name, halting)
    return cached_step(name .. "/profile", function(base)
      local dir = out .. "/" .. name
      local model, meta = s2s.load_model(model_path)
      if halting == true then            -- the A-ViT's own halting config, stored with the model
        halting = s2s.distilling.file_halting(meta, model_path) or die(model_path .. " has no halting config")
      end
      local pp = preset.profile or {}
      local c = { dataset = preset.dataset, image_size = model.image_size, test_limit = pp.limit }
      local _, te = s2s.distilling.datasets(c)
      local prof = s2s.profile(model, te, { limit = pp.limit, batch_size = pp.batch_size, topk = pp.topk, halting = halting })
      prof.model = model_path
      s2s.provenance(prof, { te }, { model_file = model_path })
      print(s2s.format_profile(prof))
      if not require("attnlab.util").mkdir_p(dir) then error(("s2s: cannot create the folder %s"):format(dir), 0) end
      s2s.write_heatmaps(prof, dir, {})
      prof.maps = nil
      -- the text first, the record last (a killed step leaves no record, and is made again)
      local ok, err = al.write_atomic(dir .. "/profile.txt", s2s.format_profile(prof) .. "\n")
      if not ok then error(("s2s: cannot write %s/profile.txt: %s"):format(dir, tostring(err)), 0) end
      s2s.write_json(base .. ".json", prof)
      return prof
    end, { source = { key = "model_file", path = model_path } })
  end

  local function avit_path(kr)
    local name = "avit_k" .. kr
    local base = out .. "/" .. name
    local c = s2s.deep_merge(preset.avit or {}, {})
    c.keep_rates, c.main_keep_rate = nil, nil
    c.halting = s2s.deep_merge(c.halting or {}, { keep_rate = kr })
    c.teacher, c.dataset = out .. "/teacher.safetensors", preset.dataset
    c.train_limit, c.test_limit = preset.train_limit, preset.test_limit
    c.save, c.out, c.checkpoint, c.progress = base .. ".safetensors", base .. ".json", base .. ".ckpt", true
    local rec = cached_step(name, function()
      teacher_path()
      return (s2s.avit(c))
    end, { section = "avit", config = util.merge(s2s.AVIT_DEFAULTS, c), defaults = s2s.AVIT_DEFAULTS,
           made_from = out .. "/teacher.json", dependents = { "profile_avit_k" .. kr .. "/profile" },
           source = { key = "teacher_file", path = c.teacher } })
    return out .. "/" .. name .. ".safetensors", rec
  end

  local function main_kr() return s2s.main_keep_rate(preset) end

  -- The students' seeds (see the header) and the default one, whose names carry no suffix.
  local function default_seed() return (preset.distill or {}).seed or s2s.DISTILL_DEFAULTS.seed end
  local function seeds() return preset.seeds or { default_seed() } end

  -- One student per (replaced layers, teacher, mixer, own keep rate, seed): runs that several
  -- experiments share (e.g. layer-aware k=3 at the main keep rate) are trained once.
  -- teacher: a model file; kr: its A-ViT keep rate, or "dense" (the dense teacher: no halting
  -- masks in stage 1, a dense student in stage 2); extra: distill keys over preset.distill.
  local function student_name(kr, layers, c, seed)
    local mixer = type(c.mixer) == "table" and c.mixer.name or c.mixer or "bimamba"
    -- a spec table's sizes name the run too (a parameter-matched BiMamba is another student)
    if type(c.mixer) == "table" then
      if c.mixer.expand then mixer = mixer .. "_e" .. c.mixer.expand end
      if c.mixer.d_state then mixer = mixer .. "_n" .. c.mixer.d_state end
    end
    local tag = kr == "dense" and "dense" or ("k%s"):format(kr)
    -- no layers: the control run (the teacher itself given the students' training budget)
    local name = #layers == 0 and ("control_" .. tag) or ("L%s_%s_%s"):format(table.concat(layers, "-"), tag, mixer)
    local own = c.stage2 and c.stage2.keep_rate
    if own then name = name .. "_own" .. own end
    if seed ~= default_seed() then name = name .. "_s" .. seed end
    return name
  end

  local function student(teacher, kr, layers, extra, seed)
    seed = seed or default_seed()
    local c = s2s.deep_merge(preset.distill or {}, extra or {})
    local name = student_name(kr, layers, c, seed)
    local base = out .. "/students/" .. name
    c.teacher, c.dataset = teacher, preset.dataset
    c.train_limit, c.test_limit = preset.train_limit, preset.test_limit
    c.layers = layers
    if seed ~= default_seed() then c.seed = seed end
    if kr == "dense" then
      c.teacher_halting = false
      c.stage2 = s2s.deep_merge(c.stage2 or {}, { halting = false })
    end
    c.save, c.out, c.checkpoint, c.progress = base .. ".safetensors", base .. ".json", base .. ".ckpt", true
    -- s2s.distill's defaults, filled in as it fills them (the stages key by key)
    local DD = s2s.DISTILL_DEFAULTS
    local want = util.merge(DD, c)
    want.stage1, want.stage2 = util.merge(DD.stage1, c.stage1), util.merge(DD.stage2, c.stage2)
    local from = type(teacher) == "string" and teacher:match("^(.*)%.safetensors$")
    return cached_step("students/" .. name, function()
      local rec = s2s.distill(c)
      log("%s: accuracy %.4f (teacher %.4f), keep rate %.3f", name, rec.test_accuracy, rec.teacher_accuracy, rec.mean_keep_rate)
      return rec
    end, { section = "distill", config = want, defaults = DD, skip = { layers = true, strategy = true }, layers = layers,
           made_from = from and (from .. ".json") or nil,
           source = type(teacher) == "string" and { key = "teacher_file", path = teacher } or nil }), name
  end

  local function depth_of_teacher() return s2s.load_model(teacher_path()).depth end

  -- mean attention sparsity of a set of layers in a profile: 1 - k90/N (and 1 - entropy/logN)
  -- and the mean token sparsity (1 - keep rate: the fraction of tokens halted before the
  -- layer). Under halting masks k90/N and entropy/log N are normalised by the RUNNING
  -- tokens, so a deep layer where 3 of 17 tokens still run can look "dense" by k90/N while
  -- it computes on few tokens; the token sparsity is the study's sense of a sparse layer.
  local function group_sparsity(prof, layers)
    local s, e, t, n = 0, 0, 0, 0
    for _, l in ipairs(layers) do
      local r = prof.layers[l]
      if r and r.mean then
        s = s + (1 - r.mean.k90_frac); e = e + (1 - r.mean.entropy_norm)
        t = t + (1 - ((prof.keep_rate or {})[l] or 1)); n = n + 1
      end
    end
    if n == 0 then return nil end
    return s / n, e / n, t / n
  end

  function C.summary() return require("attnlab.s2s.summary").write(C) end

  C.exists = exists
  C.read_json = read_json
  C.log = log
  C.teacher_path = teacher_path
  C.profile_of = profile_of
  C.avit_path = avit_path
  C.main_kr = main_kr
  C.student = student
  C.student_name = student_name
  C.seeds = seeds
  C.default_seed = default_seed
  C.cached_step = cached_step
  C.depth_of_teacher = depth_of_teacher
  C.group_sparsity = group_sparsity
  return C
end

return study
