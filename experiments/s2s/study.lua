-- experiments/s2s/study.lua -- the Sparsity-to-Simplicity study, experiment by experiment,
-- over one preset (experiments/s2s/cifar_small.lua and its siblings hold the numbers).
-- Run through scripts/s2s_strategies.lua (EXPERIMENT --preset FILE [--quick]); every
-- prerequisite (teacher, profiles, A-ViT teachers, students) comes from the context C
-- (lua/attnlab/s2s/study.lua), which trains it once and reads its record afterwards.
--   1 groupwise   one group of layers replaced per run, same budget
--   2 keeprate    the teacher's keep rate swept, the k deepest layers replaced
--   3 layeraware  layer-aware (k deepest) and sparsest-k vs the A-ViT teacher; + uniform
--   4 resolution  throughput vs image size at DeiT-Tiny shape; latency: measured inference
local al = require "attnlab"
local s2s = require "attnlab.s2s"
local S = s2s.strategies

return function(C)
  local preset, out, die = C.preset, C.out, C.die
  local read_json, log, teacher_path, profile_of, avit_path, main_kr, student, depth_of_teacher, group_sparsity = C.read_json, C.log, C.teacher_path, C.profile_of, C.avit_path, C.main_kr, C.student, C.depth_of_teacher, C.group_sparsity
  local exists = C.exists

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
  E.summary = C.summary
  return E
end
