-- scripts/s2s_strategies.lua -- the S2S study's experiments from one preset: which layers
-- to replace (uniform, group-wise, layer-aware, sparsest-k), under which teacher.
--
--   bin/attnlab scripts/s2s_strategies.lua EXPERIMENT --preset experiments/s2s/cifar_small.lua [--quick]
--
-- EXPERIMENT:
--   groupwise   1. group-wise replacement (shallow / middle / deep groups of equal size,
--                  same training budget): accuracy drop vs mean sparsity of the group
--   keeprate    2. teacher keep-rate sweep: student-teacher accuracy gap vs teacher sparsity
--   layeraware  3. layer-aware (k deepest), sparsest-k and uniform (every layer) students vs
--                  the A-ViT teacher at matched keep rates: accuracy, parameters, latency
--   uniform        only the uniform student
--   latency     3b. the experiment-3 models' latency re-measured in one run, round-robin
--   resolution  4. throughput of dense / A-ViT / S2S at 224^2 and 384^2 (patch 16)
--   all         the teacher, its profile, every A-ViT, then 1-4, then the summary
--   summary     rebuild <out>/summary.md from the records present
-- Every step is skipped when its record exists; training runs checkpoint per epoch and
-- resume, so an interrupted study continues where it stopped. Records: <out>/*.json,
-- <out>/students/*.json; tables: <out>/summary.md.
local al = require "attnlab"
local s2s = require "attnlab.s2s"
local S = s2s.strategies

local cli = al.cli
local EXPERIMENTS = { groupwise = true, keeprate = true, layeraware = true, uniform = true, latency = true,
                      resolution = true, all = true, summary = true }
local SPEC = {
  name = "s2s_strategies.lua",
  usage = "bin/attnlab scripts/s2s_strategies.lua groupwise|keeprate|layeraware|uniform|latency|resolution|all|summary " ..
          "--preset FILE [--quick] [--key value ...]",
  about = "The S2S study's experiments from one preset: which layers to replace (uniform, group-wise,\n" ..
          "layer-aware, sparsest-k), under which teacher. Finished steps are skipped; training resumes.",
  positional = { { "EXPERIMENT", "groupwise | keeprate | layeraware | uniform | latency | resolution | all | summary" } },
  options = {
    { "preset", "FILE", "an S2S preset (experiments/s2s/*.lua); required" },
    { "quick", nil, "merge the preset's quick table" },
    { "threads", "N", "threads" },
  },
  more_options = { "  --KEY VALUE, --SECTION.KEY VALUE   override a key the preset has (e.g. --out DIR, --distill.lr 1e-3)" },
  examples = { "bin/attnlab scripts/s2s_strategies.lua layeraware --preset experiments/s2s/cifar_small.lua --quick" },
}
cli.help_requested(SPEC, arg)
local function die(msg) cli.die(SPEC, msg) end

local exp = arg[1]
if not exp then cli.usage_error(SPEC, "no EXPERIMENT given") end
if not EXPERIMENTS[exp] then cli.usage_error(SPEC, ("unknown experiment '%s'"):format(exp)) end
local opts, words = cli.parse_pairs(arg, 2)
cli.check_words(SPEC, words)
if not opts.preset then cli.usage_error(SPEC, "--preset FILE is required") end
local okp, preset = pcall(s2s.load_preset, opts.preset, opts.quick)
if not okp then die(preset) end
local known = { preset = true, quick = true, threads = true, out = true }
for k in pairs(preset) do known[k] = true end
cli.check_known(SPEC, opts, known)
for k, v in pairs(opts) do if k ~= "preset" and k ~= "quick" then preset[k] = type(v) == "table" and s2s.deep_merge(preset[k], v) or v end end
local out = preset.out or "results/s2s"
if opts.threads then al.set_num_threads(opts.threads) end
os.execute("mkdir -p '" .. out .. "/students'")

local function exists(p) local f = io.open(p, "rb") if f then f:close() return true end return false end
local function read_json(p)
  local f = io.open(p, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return al.json.decode(s)
end

local function log(fmt, ...) print(("[s2s] " .. fmt):format(...)) io.stdout:flush() end

-- ---- prerequisites ------------------------------------------------------------------------------------
local function teacher_path()
  local p = out .. "/teacher.safetensors"
  if not exists(p) then
    log("training the dense teacher -> %s", p)
    local c = s2s.deep_merge(preset.teacher or {}, {})
    c.save, c.out, c.checkpoint, c.progress = p, out .. "/teacher.json", out .. "/teacher.ckpt", true
    local rec = s2s.train_teacher(c)
    s2s.write_json(c.out, rec)
  end
  return p
end

local function profile_of(model_path, name, halting)
  local dir = out .. "/" .. name
  local pj = dir .. "/profile.json"
  if exists(pj) then return read_json(pj) end
  log("profiling %s -> %s", model_path, dir)
  local model, meta = s2s.load_model(model_path)
  if halting == true then            -- the A-ViT's own halting config, stored with the model
    halting = meta.halting and al.json.decode(meta.halting) or die(model_path .. " has no halting config")
  end
  local pp = preset.profile or {}
  local c = { dataset = preset.dataset, image_size = model.image_size, test_limit = pp.limit }
  local _, te = s2s.distilling.datasets(c)
  local prof = s2s.profile(model, te, { limit = pp.limit, batch_size = pp.batch_size, topk = pp.topk, halting = halting })
  prof.model = model_path
  print(s2s.format_profile(prof))
  os.execute("mkdir -p '" .. dir .. "'")
  s2s.write_heatmaps(prof, dir, {})
  prof.maps = nil
  s2s.write_json(pj, prof)
  local f = io.open(dir .. "/profile.txt", "w")
  if f then f:write(s2s.format_profile(prof), "\n") f:close() end
  return prof
end

local function avit_path(kr)
  local name = "avit_k" .. kr
  local p = out .. "/" .. name .. ".safetensors"
  if not exists(out .. "/" .. name .. ".json") then
    log("A-ViT at target keep rate %.2f -> %s", kr, p)
    local c = s2s.deep_merge(preset.avit or {}, {})
    c.keep_rates, c.main_keep_rate = nil, nil
    c.halting = s2s.deep_merge(c.halting or {}, { keep_rate = kr })
    c.teacher, c.dataset = teacher_path(), preset.dataset
    c.train_limit, c.test_limit = preset.train_limit, preset.test_limit
    c.save, c.out, c.checkpoint, c.progress = p, out .. "/" .. name .. ".json", out .. "/" .. name .. ".ckpt", true
    s2s.avit(c)
  end
  return p, read_json(out .. "/" .. name .. ".json")
end

local function main_kr() return s2s.main_keep_rate(preset) end

-- One student per (replaced layers, teacher keep rate, mixer): runs that several
-- experiments share (e.g. layer-aware k=3 at the main keep rate) are trained once.
local function student(teacher, kr, layers, extra)
  local c = s2s.deep_merge(preset.distill or {}, extra or {})
  local mixer = type(c.mixer) == "table" and c.mixer.name or c.mixer or "bimamba"
  -- no layers: the control run (the teacher itself given the students' training budget)
  local name = #layers == 0 and ("control_k%s"):format(kr) or ("L%s_k%s_%s"):format(table.concat(layers, "-"), kr, mixer)
  local rp = out .. "/students/" .. name .. ".json"
  if exists(rp) then return read_json(rp) end
  log("student %s", name)
  c.teacher, c.dataset = teacher, preset.dataset
  c.train_limit, c.test_limit = preset.train_limit, preset.test_limit
  c.layers = layers
  c.save = out .. "/students/" .. name .. ".safetensors"
  c.out, c.checkpoint, c.progress = rp, out .. "/students/" .. name .. ".ckpt", true
  local rec = s2s.distill(c)
  log("%s: accuracy %.4f (teacher %.4f), keep rate %.3f", name, rec.test_accuracy, rec.teacher_accuracy, rec.mean_keep_rate)
  return rec
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

-- ---- experiments --------------------------------------------------------------------------------------
local E = {}

function E.groupwise()
  local tp = avit_path(main_kr())
  local prof = profile_of(tp, "profile_avit_k" .. main_kr(), true)
  local L = depth_of_teacher()
  local dprof = profile_of(teacher_path(), "profile", nil)     -- the dense teacher's, all tokens
  local rows = {}
  for _, g in ipairs((preset.groupwise or {}).groups or S.GROUPS) do
    local layers = S.groupwise(L, g)
    local rec = student(tp, main_kr(), layers)
    local sp, se, st = group_sparsity(prof, layers)
    local dsp, dse = group_sparsity(dprof, layers)
    rows[#rows + 1] = { group = g, layers = layers, sparsity = sp, entropy_sparsity = se, token_sparsity = st,
                        dense_sparsity = dsp, dense_entropy_sparsity = dse, accuracy = rec.test_accuracy,
                        teacher_accuracy = rec.teacher_accuracy, drop = rec.teacher_accuracy - rec.test_accuracy }
  end
  s2s.write_json(out .. "/exp1_groupwise.json", { rows = rows, teacher = tp })
  return rows
end

function E.keeprate()
  local rows = {}
  local strat = (preset.keeprate or {}).strategy or "layer_aware:3"
  for _, kr in ipairs((preset.avit or {}).keep_rates or { 0.5, 0.65, 0.8 }) do
    local tp, arec = avit_path(kr)
    local prof = strat:match("^sparsest") and profile_of(tp, "profile_avit_k" .. kr, true) or nil
    local rec = student(tp, kr, S.select(strat, depth_of_teacher(), prof))
    -- teacher numbers from the student's run: the same test examples as the student's
    rows[#rows + 1] = { target_keep_rate = kr, teacher_keep_rate = rec.teacher_mean_keep_rate,
                        teacher_accuracy = rec.teacher_accuracy, student_accuracy = rec.test_accuracy,
                        student_keep_rate = rec.mean_keep_rate, gap = rec.teacher_accuracy - rec.test_accuracy,
                        avit_record = out .. "/avit_k" .. kr .. ".json", avit_accuracy = arec.test_accuracy }
  end
  s2s.write_json(out .. "/exp2_keeprate.json", { rows = rows, strategy = strat })
  return rows
end

function E.layeraware()
  local tp, arec = avit_path(main_kr())
  local L = depth_of_teacher()
  local rows = { { name = "A-ViT teacher (keep " .. main_kr() .. ")", accuracy = arec.test_accuracy, params = arec.params,
                   ms = arec.s_per_example * 1e3, keep_rate = arec.mean_keep_rate } }
  local la = preset.layeraware or {}
  local ks = la.k or { 3 }
  if type(ks) == "number" then ks = { ks } end
  local prof
  if la.sparsest ~= false then prof = profile_of(tp, "profile_avit_k" .. main_kr(), true) end
  for _, k in ipairs(ks) do
    local layers = S.layer_aware(L, k)
    local rec = student(tp, main_kr(), layers)
    rows[#rows + 1] = { name = ("layer-aware k=%d (layers %s)"):format(k, table.concat(layers, ",")), accuracy = rec.test_accuracy,
                        params = rec.student_params, ms = rec.s_per_example * 1e3, keep_rate = rec.mean_keep_rate }
    if prof then
      local sl = S.sparsest(prof, k)
      local rec2 = student(tp, main_kr(), sl)
      rows[#rows + 1] = { name = ("sparsest-%d (layers %s)"):format(k, table.concat(sl, ",")), accuracy = rec2.test_accuracy,
                          params = rec2.student_params, ms = rec2.s_per_example * 1e3, keep_rate = rec2.mean_keep_rate }
    end
  end
  -- the k deepest layers with other mixers (la.mixers, e.g. {"bilstm"}), same budget
  for _, mx in ipairs(la.mixers or {}) do
    for _, k in ipairs(ks) do
      local layers = S.layer_aware(L, k)
      local rec = student(tp, main_kr(), layers, { mixer = mx })
      rows[#rows + 1] = { name = ("layer-aware k=%d, %s (layers %s)"):format(k, mx, table.concat(layers, ",")), accuracy = rec.test_accuracy,
                          params = rec.student_params, ms = rec.s_per_example * 1e3, keep_rate = rec.mean_keep_rate }
    end
  end
  -- control: nothing replaced, the A-ViT teacher trained with the students' stage 1 + 2
  -- budget; separates the effect of replacing from the effect of the extra epochs
  if la.control then
    local rec = student(tp, main_kr(), {})
    rows[#rows + 1] = { name = "control: nothing replaced, same extra training", accuracy = rec.test_accuracy,
                        params = rec.student_params, ms = rec.s_per_example * 1e3, keep_rate = rec.mean_keep_rate }
  end
  if la.uniform ~= false then
    local rec = student(tp, main_kr(), S.uniform(L))
    rows[#rows + 1] = { name = ("uniform (all %d layers)"):format(L), accuracy = rec.test_accuracy,
                        params = rec.student_params, ms = rec.s_per_example * 1e3, keep_rate = rec.mean_keep_rate }
  end
  s2s.write_json(out .. "/exp3_layeraware.json", { rows = rows, teacher = tp })
  return rows
end

function E.uniform()
  local tp = avit_path(main_kr())
  local rec = student(tp, main_kr(), S.uniform(depth_of_teacher()))
  return rec
end

function E.resolution()
  local c = s2s.deep_merge(preset.resolution or {}, {})
  -- keep schedule: the main A-ViT's measured per-layer keep rates, stretched to the depth
  local arec = read_json(out .. "/avit_k" .. main_kr() .. ".json")
  local L = c.depth or 12
  if arec and arec.keep_rate and not c.keep_rates then
    local src = arec.keep_rate
    local rates = {}
    for l = 1, L do
      local pos = (l - 0.5) / L * #src + 0.5            -- position in the source schedule
      local i0 = math.max(1, math.min(#src, math.floor(pos)))
      local i1 = math.min(#src, i0 + 1)
      local w = math.max(0, math.min(1, pos - i0))
      rates[l] = src[i0] * (1 - w) + src[i1] * w
    end
    c.keep_rates = rates
    c.schedule_from = out .. "/avit_k" .. main_kr() .. ".json"
  end
  c.out, c.progress = out .. "/exp4_resolution.json", true
  return s2s.resolution_bench(c)
end

-- Experiment 3's latency, measured again with every model in ONE process: each training
-- record's s_per_example was timed at the end of its own run, under whatever load the
-- shared machine had then, so those numbers are not comparable with each other. Here the
-- dense teacher, the main A-ViT (gathered and masked) and every student distilled from it
-- run on the same test images, round-robin (each repeat times every model once, so load
-- changes hit all of them alike); the median per model is reported, in ms per image.
-- preset.latency = { images = 500, repeats = 5 }.
local function loadavg()
  local f = io.open("/proc/loadavg", "r")
  if not f then return nil end
  local s = f:read("l")
  f:close()
  return s
end

function E.latency()
  local kr = main_kr()
  local lc = preset.latency or {}
  local n, reps = lc.images or 500, lc.repeats or 5
  local models = {}
  local function add(name, path, halting, mode)
    local m, meta = s2s.load_model(path)
    if halting == true then
      halting = meta.halting and al.json.decode(meta.halting) or die(path .. " has no halting config")
    end
    models[#models + 1] = { name = name, path = path, model = m, halting = halting, mode = mode, times = {} }
  end
  add("dense teacher", teacher_path(), nil, nil)
  local ap = out .. "/avit_k" .. kr .. ".safetensors"
  if not exists(ap) then die("latency: " .. ap .. " is missing (run the A-ViT step first)") end
  add(("A-ViT teacher (keep %s), gathered"):format(kr), ap, true, "gather")
  add(("A-ViT teacher (keep %s), masked"):format(kr), ap, true, "masked")
  local pat = "^(L[%d%-]+_k" .. tostring(kr):gsub("%.", "%%.") .. "_%w+)%.safetensors$"
  local names = {}
  local ls = io.popen("ls '" .. out .. "/students' 2>/dev/null")
  for f in ls:lines() do
    local nm = f:match(pat)
    if nm then names[#names + 1] = nm end
  end
  ls:close()
  table.sort(names, function(a, b) return #a < #b or (#a == #b and a < b) end)
  for _, nm in ipairs(names) do add("student " .. nm, out .. "/students/" .. nm .. ".safetensors", true, "gather") end
  local c = { dataset = preset.dataset, image_size = models[1].model.image_size, test_limit = preset.test_limit }
  local _, te = s2s.distilling.datasets(c)
  log("latency: %d models, %d test images, %d repeats, round-robin", #models, math.min(n, te.n), reps)
  local load0 = loadavg()
  for _, m in ipairs(models) do                                          -- warm-up (and accuracy)
    local e = s2s.evaluate(m.model, te, { halting = m.halting, mode = m.mode, limit = n })
    m.accuracy, m.keep_rate = e.accuracy, e.mean_keep_rate
  end
  for r = 1, reps do
    for _, m in ipairs(models) do
      m.times[r] = s2s.evaluate(m.model, te, { halting = m.halting, mode = m.mode, limit = n }).s_per_example
    end
  end
  local rows = {}
  for _, m in ipairs(models) do
    local t = {}
    for i, v in ipairs(m.times) do t[i] = v end
    table.sort(t)
    rows[#rows + 1] = { name = m.name, model = m.path, params = m.model:num_parameters(), ms = 1e3 * t[(#t + 1) // 2],
                        ms_repeats = (function() local o = {} for i, v in ipairs(m.times) do o[i] = 1e3 * v end return o end)(),
                        accuracy = m.accuracy, keep_rate = m.keep_rate, mode = m.mode or "dense" }
    log("%-48s %8.3f ms/img  (acc %.4f on %d images, keep %.3f)", m.name, rows[#rows].ms, m.accuracy, math.min(n, te.n), m.keep_rate)
  end
  local rec = { rows = rows, images = math.min(n, te.n), repeats = reps, threads = al.get_num_threads(),
                loadavg_before = load0, loadavg_after = loadavg() }
  s2s.write_json(out .. "/exp3_latency.json", rec)
  return rec
end

-- ---- summary -------------------------------------------------------------------------------------------
local function pct(v) return v and ("%.2f"):format(100 * v) or "-" end

function E.summary()
  local lines = { "# S2S results: " .. (preset.name or out), "",
                  ("Preset `%s`%s; records in `%s`."):format(opts.preset, opts.quick and " with --quick (a smoke run, NOT the study)" or "", out), "" }
  local t = read_json(out .. "/teacher.json")
  if t then lines[#lines + 1] = ("Dense teacher: test accuracy %s%% (%s)."):format(pct(t.test_accuracy), out .. "/teacher.json") end
  local prof = read_json(out .. "/profile/profile.json") or read_json(out .. "/profile_teacher/profile.json")
  if prof then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "## Sparsity profile of the dense teacher"
    lines[#lines + 1] = ""
    lines[#lines + 1] = "| layer | entropy / log N | k90 / N | nonzero | top-1 mass |"
    lines[#lines + 1] = "|---|---|---|---|---|"
    for l, r in ipairs(prof.layers) do
      if r.mean then
        lines[#lines + 1] = ("| %d | %.3f | %.3f | %.3f | %.3f |"):format(l, r.mean.entropy_norm, r.mean.k90_frac, r.mean.nonzero, r.mean.top1_mass or 0)
      end
    end
    local tr = prof.trend or {}
    local verdict = "n/a"
    if tr.k90_frac then
      verdict = tr.k90_frac <= -0.5 and "**agrees** (sparser with depth)" or tr.k90_frac >= 0.5 and "**disagrees** (denser with depth)"
        or "**no clear trend** (|rho| < 0.5)"
    end
    lines[#lines + 1] = ""
    lines[#lines + 1] = ("Spearman correlation of depth with k90/N: %s, with entropy/log N: %s. The study's observation (shallow layers mix densely, deep layers are sparse) predicts strongly negative values; here: %s."):format(
      tr.k90_frac and ("%.2f"):format(tr.k90_frac) or "n/a", tr.entropy_norm and ("%.2f"):format(tr.entropy_norm) or "n/a", verdict)
  end
  local e1 = read_json(out .. "/exp1_groupwise.json")
  if e1 then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "## 1. Group-wise replacement"
    lines[#lines + 1] = ""
    lines[#lines + 1] = "| group | layers | token sparsity (1 - keep), A-ViT | 1 - k90/N, A-ViT (running tokens) | 1 - k90/N, dense teacher | 1 - entropy/log N, dense teacher | student acc % | teacher acc % | drop (pp) |"
    lines[#lines + 1] = "|---|---|---|---|---|---|---|---|---|"
    local cols = { token_sparsity = {}, sparsity = {}, dense_sparsity = {}, dense_entropy_sparsity = {} }
    local ys = {}
    local function f3(v) return v and ("%.3f"):format(v) or "-" end
    for _, r in ipairs(e1.rows) do
      lines[#lines + 1] = ("| %s | %s | %s | %s | %s | %s | %s | %s | %s |"):format(r.group, table.concat(r.layers, ","), f3(r.token_sparsity),
        f3(r.sparsity), f3(r.dense_sparsity), f3(r.dense_entropy_sparsity), pct(r.accuracy), pct(r.teacher_accuracy), pct(r.drop))
      for k, t in pairs(cols) do t[#t + 1] = r[k] end
      ys[#ys + 1] = r.drop
    end
    lines[#lines + 1] = ""
    for _, k in ipairs({ "token_sparsity", "sparsity", "dense_sparsity", "dense_entropy_sparsity" }) do
      local rho = #cols[k] == #ys and s2s.profiling.spearman(cols[k], ys) or nil
      lines[#lines + 1] = ("Spearman(%s, drop) = %s; the study expects sparser groups to be replaced with a smaller drop (negative): %s.")
        :format(k, rho and ("%.2f"):format(rho) or "n/a", rho and (rho < 0 and "**agrees**" or "**does not agree**") or "n/a")
    end
  end
  local e2 = read_json(out .. "/exp2_keeprate.json")
  if e2 then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "## 2. Teacher keep-rate sweep (" .. e2.strategy .. ")"
    lines[#lines + 1] = ""
    lines[#lines + 1] = "| target keep | teacher keep (measured) | teacher acc % | student acc % | gap (pp) |"
    lines[#lines + 1] = "|---|---|---|---|---|"
    for _, r in ipairs(e2.rows) do
      lines[#lines + 1] = ("| %.2f | %.3f | %s | %s | %s |"):format(r.target_keep_rate, r.teacher_keep_rate, pct(r.teacher_accuracy),
        pct(r.student_accuracy), pct(r.gap))
    end
  end
  local e3 = read_json(out .. "/exp3_layeraware.json")
  if e3 then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "## 3. Layer-aware replacement vs the A-ViT teacher"
    lines[#lines + 1] = ""
    lines[#lines + 1] = "| model | acc % | params | ms / image (gathered, CPU) | keep rate |"
    lines[#lines + 1] = "|---|---|---|---|---|"
    for _, r in ipairs(e3.rows) do
      lines[#lines + 1] = ("| %s | %s | %d | %.3f | %.3f |"):format(r.name, pct(r.accuracy), r.params or 0, r.ms or 0, r.keep_rate or 0)
    end
  end
  local e3l = read_json(out .. "/exp3_latency.json")
  if e3l then
    lines[#lines + 1] = ""
    lines[#lines + 1] = ("### 3b. Latency, all models in one run (median of %d round-robin repeats, %d test images, %d thread(s); load average before: %s)")
      :format(e3l.repeats, e3l.images, e3l.threads, e3l.loadavg_before or "?")
    lines[#lines + 1] = ""
    lines[#lines + 1] = "| model | mode | params | ms / image | keep rate | acc % (these images) |"
    lines[#lines + 1] = "|---|---|---|---|---|---|"
    for _, r in ipairs(e3l.rows) do
      lines[#lines + 1] = ("| %s | %s | %d | %.3f | %.3f | %s |"):format(r.name, r.mode, r.params, r.ms, r.keep_rate or 1, pct(r.accuracy))
    end
  end
  local e4 = read_json(out .. "/exp4_resolution.json")
  if e4 then
    lines[#lines + 1] = ""
    lines[#lines + 1] = ("## 4. Efficiency vs resolution (DeiT-Tiny shape, patch 16, batch %d, %d thread(s), replaced layers %s)")
      :format(e4.batch or 0, e4.threads or 0, table.concat(e4.layers, ","))
    lines[#lines + 1] = ""
    lines[#lines + 1] = "| input | tokens | dense img/s | A-ViT masked | A-ViT gathered | S2S gathered | S2S speedup measured | estimated (FLOPs) |"
    lines[#lines + 1] = "|---|---|---|---|---|---|---|---|"
    for _, r in ipairs(e4.rows) do
      lines[#lines + 1] = ("| %d^2 | %d | %.1f | %.1f | %.1f | %.1f | %.2fx | %.2fx |"):format(r.image_size, r.tokens, r.img_per_s.dense,
        r.img_per_s.avit_masked, r.img_per_s.avit, r.img_per_s.s2s, r.speedup_measured.s2s, r.speedup_estimated.s2s)
    end
    lines[#lines + 1] = ""
    local last = e4.rows[#e4.rows]
    lines[#lines + 1] = ("Keep schedule per layer: %s%s."):format((function()
      local t = {} for i, v in ipairs(e4.keep_rates) do t[i] = ("%.2f"):format(v) end return table.concat(t, " ") end)(),
      e4.schedule_from and (" (from " .. e4.schedule_from .. ")") or " (synthetic linear schedule)")
    if last then
      -- state what was measured; the reasons are discussed in experiments/s2s/RESULTS.md
      local sm, se = last.speedup_measured, last.speedup_estimated
      lines[#lines + 1] = ("The study reports up to 1.71x at 384^2 for DeiT on a GPU. Here, at %d^2: the S2S student runs at %.2fx the dense model's throughput (FLOP estimate %.2fx), the A-ViT (gathered) at %.2fx (estimate %.2fx), the masked A-ViT at %.2fx (no saving expected), and the student at %.2fx the A-ViT's speed (estimate %.2fx).")
        :format(last.image_size, sm.s2s, se.s2s, sm.avit, se.avit, sm.avit_masked, sm.s2s_vs_avit, se.s2s_vs_avit)
    end
    lines[#lines + 1] = "Timings are medians of round-robin repetitions on a shared 2-core machine; treat differences under ~15% as noise."
  end
  local path = out .. "/summary.md"
  al.write_atomic(path, table.concat(lines, "\n") .. "\n")
  log("wrote %s", path)
end

cli.protect(SPEC, function()
  if exp == "all" then
    teacher_path()
    profile_of(teacher_path(), "profile", nil)
    for _, kr in ipairs((preset.avit or {}).keep_rates or { main_kr() }) do avit_path(kr) end
    avit_path(main_kr())
    E.groupwise(); E.keeprate(); E.layeraware(); E.latency(); E.resolution(); E.summary()
  elseif E[exp] then
    if exp ~= "summary" and exp ~= "resolution" and exp ~= "latency" then profile_of(teacher_path(), "profile", nil) end
    E[exp]()
    if exp ~= "summary" then E.summary() end
  else
    die("unknown experiment '" .. exp .. "'")
  end
end)
