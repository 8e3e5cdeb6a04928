-- experiments/s2s/study.lua -- the Sparsity-to-Simplicity study, experiment by experiment,
-- over one preset (experiments/s2s/cifar65.lua and its siblings hold the numbers).
-- Run through scripts/s2s_strategies.lua (EXPERIMENT --preset FILE [--quick]); every
-- prerequisite (teacher, profiles, A-ViT teachers, students) comes from the context C
-- (lua/attnlab/s2s/study.lua), which trains it once and reads its record afterwards.
-- Experiments 1-3 train their students at each of the preset's seeds (C.seeds()); the
-- summary (lua/attnlab/s2s/summary.lua) gives mean +- sd over seeds and a paired t-test of
-- each row against its control, seed by seed.
--   1 groupwise   one group of layers replaced per run, same budget, under each teacher of
--                 groupwise.teachers ("avit": the main A-ViT, its halting masks; "dense": the
--                 dense teacher, attention's natural sparsity, no halting); control: nothing
--                 replaced, the same extra training (groupwise.control; on when seeds are set)
--   2 keeprate    the teacher's keep rate swept, the k deepest layers replaced; control
--                 (keeprate.own_keep_control = true | a keep rate): the same student with its
--                 OWN keep rate held at one value (true: the main keep rate) by the keep-rate
--                 controller, whatever its teacher's -- so a gap that still follows the
--                 teacher's keep rate comes from the teacher's sparsity, not from the student
--                 keeping more or fewer tokens
--   3 layeraware  layer-aware (k deepest) and sparsest-k vs the A-ViT teacher; + other mixers
--                 (e.g. a parameter-matched BiMamba), uniform, and the nothing-replaced control
--   4 resolution  throughput vs image size at DeiT-Tiny shape (random weights, 224^2 / 384^2)
--                 and, at the trained models' 65 tokens, their measured latency (latency:
--                 every trained model of experiment 3 timed in one process, round-robin)
local al = require "attnlab"
local s2s = require "attnlab.s2s"
local S = s2s.strategies

-- Run as a script, this file would only define the experiments and exit 0 having done nothing.
if arg and arg[0] and debug.getinfo(1, "S").source == "@" .. arg[0] then
  io.stderr:write(arg[0] .. " holds the S2S study's experiments and runs nothing by itself; run them with: " ..
    "bin/attnlab scripts/s2s_strategies.lua EXPERIMENT --preset experiments/s2s/cifar65.lua (--help lists them)\n")
  os.exit(1)
end

return function(C)
  local preset, out, die = C.preset, C.out, C.die
  local read_json, log, teacher_path, profile_of, avit_path, main_kr, student, depth_of_teacher, group_sparsity = C.read_json, C.log, C.teacher_path, C.profile_of, C.avit_path, C.main_kr, C.student, C.depth_of_teacher, C.group_sparsity
  local exists, seeds = C.exists, C.seeds

  local function mean(xs) return #xs > 0 and al.stats.mean(xs) or nil end

  -- A student trained at every seed: per-seed lists (accuracy, teacher accuracy, keep rates,
  -- ms / image, record names) and their means under the single-seed keys.
  local function over_seeds(teacher, kr, layers, extra)
    local r = { seeds = {}, accuracy_seeds = {}, teacher_accuracy_seeds = {}, keep_rate_seeds = {},
                teacher_keep_rate_seeds = {}, ms_seeds = {}, records = {} }
    for _, sd in ipairs(seeds()) do
      local rec, name = student(teacher, kr, layers, extra, sd)
      r.seeds[#r.seeds + 1] = sd
      r.accuracy_seeds[#r.seeds] = rec.test_accuracy
      r.teacher_accuracy_seeds[#r.seeds] = rec.teacher_accuracy
      r.keep_rate_seeds[#r.seeds] = rec.mean_keep_rate
      r.teacher_keep_rate_seeds[#r.seeds] = rec.teacher_mean_keep_rate or 1
      r.ms_seeds[#r.seeds] = rec.s_per_example * 1e3
      r.records[#r.seeds] = "students/" .. name .. ".json"
      r.params = rec.student_params
    end
    r.accuracy, r.teacher_accuracy = mean(r.accuracy_seeds), mean(r.teacher_accuracy_seeds)
    r.keep_rate, r.teacher_keep_rate, r.ms = mean(r.keep_rate_seeds), mean(r.teacher_keep_rate_seeds), mean(r.ms_seeds)
    return r
  end

  -- ---- experiments --------------------------------------------------------------------------------------
  local E = {}

  function E.groupwise()
    local gw = preset.groupwise or {}
    local L = depth_of_teacher()
    local dprof = profile_of(teacher_path(), "profile", nil)     -- the dense teacher's, all tokens
    local control = gw.control
    if control == nil then control = preset.seeds ~= nil end
    local tables = {}
    for _, which in ipairs(gw.teachers or { "avit" }) do
      local tp, kr, prof
      if which == "dense" then
        tp, kr, prof = teacher_path(), "dense", dprof
      elseif which == "avit" then
        tp, kr = avit_path(main_kr()), main_kr()
        prof = profile_of(tp, "profile_avit_k" .. kr, true)
      else
        die(("groupwise.teachers: '%s' is not a teacher (dense, avit)"):format(tostring(which)))
      end
      local rows = {}
      for _, g in ipairs(gw.groups or S.GROUPS) do
        local layers = S.groupwise(L, g)
        local r = over_seeds(tp, kr, layers)
        local sp, se, st = group_sparsity(prof, layers)
        local dsp, dse = group_sparsity(dprof, layers)
        r.group, r.layers, r.sparsity, r.entropy_sparsity, r.token_sparsity = g, layers, sp, se, st
        r.dense_sparsity, r.dense_entropy_sparsity = dsp, dse
        r.drop_seeds = {}
        for i, a in ipairs(r.accuracy_seeds) do r.drop_seeds[i] = r.teacher_accuracy_seeds[i] - a end
        r.drop = mean(r.drop_seeds)
        rows[#rows + 1] = r
      end
      tables[#tables + 1] = { teacher = which, keep_rate = kr, path = tp, rows = rows,
                              control = control and over_seeds(tp, kr, {}) or nil }
    end
    s2s.write_json(out .. "/exp1_groupwise.json", { tables = tables, seeds = seeds() })
    return tables
  end

  function E.keeprate()
    local kp = preset.keeprate or {}
    local strat = kp.strategy or "layer_aware:3"
    local own = kp.own_keep_control
    if own == true then own = main_kr() end
    local rows = {}
    for _, kr in ipairs((preset.avit or {}).keep_rates or { 0.5, 0.65, 0.8 }) do
      local tp, arec = avit_path(kr)
      local prof = strat:match("^sparsest") and profile_of(tp, "profile_avit_k" .. kr, true) or nil
      local layers = S.select(strat, depth_of_teacher(), prof)
      -- teacher numbers from the student's run: the same test examples as the student's
      local r = over_seeds(tp, kr, layers)
      r.target_keep_rate, r.layers = kr, layers
      r.student_accuracy, r.student_accuracy_seeds = r.accuracy, r.accuracy_seeds
      r.student_keep_rate, r.student_keep_rate_seeds = r.keep_rate, r.keep_rate_seeds
      r.gap_seeds = {}
      for i, a in ipairs(r.accuracy_seeds) do r.gap_seeds[i] = r.teacher_accuracy_seeds[i] - a end
      r.gap = mean(r.gap_seeds)
      r.avit_record, r.avit_accuracy, r.avit_keep_rate = out .. "/avit_k" .. kr .. ".json", arec.test_accuracy, arec.mean_keep_rate
      if own then
        -- at the control's own keep rate the control IS the student (same run)
        local c = kr == own and r or over_seeds(tp, kr, layers, { stage2 = { keep_rate = own } })
        local gaps = {}
        for i, a in ipairs(c.accuracy_seeds) do gaps[i] = c.teacher_accuracy_seeds[i] - a end
        r.control = { own_keep_rate = own, same_run = kr == own, accuracy_seeds = c.accuracy_seeds, keep_rate_seeds = c.keep_rate_seeds,
                      gap_seeds = gaps, accuracy = c.accuracy, keep_rate = c.keep_rate, gap = mean(gaps), records = c.records }
      end
      rows[#rows + 1] = r
    end
    s2s.write_json(out .. "/exp2_keeprate.json", { rows = rows, strategy = strat, seeds = seeds(), own_keep_control = own })
    return rows
  end

  function E.layeraware()
    local tp, arec = avit_path(main_kr())
    local kr = main_kr()
    local L = depth_of_teacher()
    local rows = { { name = "A-ViT teacher (keep " .. kr .. ")", accuracy = arec.test_accuracy, params = arec.params,
                     ms = arec.s_per_example * 1e3, keep_rate = arec.mean_keep_rate, teacher = true } }
    local la = preset.layeraware or {}
    local ks = la.k or { 3 }
    if type(ks) == "number" then ks = { ks } end
    local function add(name, layers, extra)
      local r = over_seeds(tp, kr, layers, extra)
      r.name = name
      rows[#rows + 1] = r
      return r
    end
    local prof
    if la.sparsest ~= false then prof = profile_of(tp, "profile_avit_k" .. kr, true) end
    for _, k in ipairs(ks) do
      local layers = S.layer_aware(L, k)
      add(("layer-aware k=%d (layers %s)"):format(k, table.concat(layers, ",")), layers)
      if prof then
        local sl = S.sparsest(prof, k)
        add(("sparsest-%d (layers %s)"):format(k, table.concat(sl, ",")), sl)
      end
    end
    -- the k deepest layers with other mixers (la.mixers, e.g. {"bilstm"} or a spec table
    -- such as a parameter-matched BiMamba), same budget
    for _, mx in ipairs(la.mixers or {}) do
      local label = type(mx) == "table" and ("%s expand %s, state %s"):format(mx.name, mx.expand or "-", mx.d_state or "-") or mx
      for _, k in ipairs(ks) do
        local layers = S.layer_aware(L, k)
        add(("layer-aware k=%d, %s (layers %s)"):format(k, label, table.concat(layers, ",")), layers, { mixer = mx })
      end
    end
    -- control: nothing replaced, the A-ViT teacher trained with the students' stage 1 + 2
    -- budget; separates the effect of replacing from the effect of the extra epochs
    if la.control then add("control: nothing replaced, same extra training", {}).control = true end
    if la.uniform ~= false then add(("uniform (all %d layers)"):format(L), S.uniform(L)) end
    s2s.write_json(out .. "/exp3_layeraware.json", { rows = rows, teacher = tp, seeds = seeds() })
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
    local rec = s2s.resolution_bench(c)
    -- the trained models at their own token count: the latency run's record (made here when
    -- missing and the main A-ViT exists); the summary puts both in experiment 4's section
    if not exists(out .. "/exp3_latency.json") and exists(out .. "/avit_k" .. main_kr() .. ".safetensors") then E.latency() end
    return rec
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
    -- the default seed's students of the main A-ViT (not the own-keep-rate controls)
    local pat = "^(L[%d%-]+_k" .. tostring(kr):gsub("%.", "%%.") .. "_[%w_]+)%.safetensors$"
    local names = {}
    local ls = io.popen("ls '" .. out .. "/students' 2>/dev/null")
    for f in ls:lines() do
      local nm = f:match(pat)
      if nm and not nm:match("_s%d+$") and not nm:match("_own") then names[#names + 1] = nm end
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
  E.summary = C.summary
  return E
end
