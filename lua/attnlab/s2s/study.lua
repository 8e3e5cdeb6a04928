-- attnlab.s2s.study -- the library half of the S2S study (experiments/s2s/study.lua is the
-- study itself): its prerequisites -- the dense teacher, sparsity profiles, A-ViT teachers at
-- each keep rate, students -- each made once and cached under the output folder (a rerun
-- reads the record instead of training again), and the Markdown summary of whatever records
-- exist. scripts/s2s_strategies.lua builds the context and runs the study's experiments.
--
--   local C = require("attnlab.s2s.study").context(preset, out, opts, die)
--   C.teacher_path(); C.avit_path(0.6); C.student(teacher, 0.6, {5, 6}); C.summary()
local al = require "attnlab"
local s2s = require "attnlab.s2s"

local study = {}

-- preset: the resolved preset (command-line keys merged); out: the results folder; opts: the
-- parsed command line (preset, quick: named in the summary); die(msg): report a user error.
function study.context(preset, out, opts, die)
  local C = { preset = preset, out = out, opts = opts, die = die }
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
    -- a spec table's sizes name the run too (a parameter-matched BiMamba is another student)
    if type(c.mixer) == "table" then
      if c.mixer.expand then mixer = mixer .. "_e" .. c.mixer.expand end
      if c.mixer.d_state then mixer = mixer .. "_n" .. c.mixer.d_state end
    end
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

  -- ---- summary -------------------------------------------------------------------------------------------
  local function pct(v) return v and ("%.2f"):format(100 * v) or "-" end

  function C.summary()
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

  C.exists = exists
  C.read_json = read_json
  C.log = log
  C.teacher_path = teacher_path
  C.profile_of = profile_of
  C.avit_path = avit_path
  C.main_kr = main_kr
  C.student = student
  C.depth_of_teacher = depth_of_teacher
  C.group_sparsity = group_sparsity
  return C
end

return study
