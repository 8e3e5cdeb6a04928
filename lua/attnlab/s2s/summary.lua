-- attnlab.s2s.summary -- the Markdown summary of the S2S study (<out>/summary.md) from
-- whatever records exist (experiments/s2s/study.lua writes them; lua/attnlab/s2s/study.lua
-- makes their prerequisites). A row trained at several seeds shows mean +- sd over seeds
-- (sd with n - 1; one seed: the value alone), and its paired t-test against the table's
-- control, seed by seed (al.stats.ttest_rel, two-sided): the mean difference in points
-- and p. Records of single-seed studies (one number per row) read as one seed.
--
--   require("attnlab.s2s.summary").write(C)      -- C: the study context (s2s/study.lua)
local al = require "attnlab"
local s2s = require "attnlab.s2s"

local M = {}

-- A row's per-seed values of `key`: row[key .. "_seeds"], else its single value.
local function values(row, key)
  if not row then return nil end
  local v = row[key .. "_seeds"]
  if v then return v end
  if row[key] ~= nil then return { row[key] } end
  return nil
end
M.values = values

-- "mean ± sd" of xs times scale, with the given decimals; "-" for none.
local function pm(xs, scale, dec)
  if not xs or #xs == 0 then return "-" end
  scale, dec = scale or 1, dec or 2
  local f = "%." .. dec .. "f"
  local s = al.stats.summary(xs)
  if #xs < 2 then return (f):format(scale * s.mean) end
  return (f .. " ± " .. f):format(scale * s.mean, scale * s.sd)
end
M.pm = pm

-- The paired test of a against its control b (same seeds, same order), in points (x100):
-- "+0.52 (p 0.041)"; "same run" when they are one; "n/a" below two seeds; "identical" when
-- every pair is equal. When no t-test applies the report's rule decides (report/paired.lua,
-- the classifier reports'): every difference the same nonzero value (a seed listed twice, or
-- two seeds that moved by exactly as much) has no spread to test against, and ttest_rel's
-- t = inf, p = 0 is an artefact: "n/a (no variance)"; so is a NaN: "n/a (non-finite value)".
local P = require "attnlab.report.paired"
local function paired(a, b, same)
  if same then return "same run" end
  if not a or not b or #a ~= #b or #a < 2 then return "n/a" end
  local why = P.why(a, b)
  if why == "identical samples" then return "identical" end
  if why then return P.marker(why) end
  local r = al.stats.ttest_rel(a, b)
  return ("%+.2f (p %.3g)"):format(100 * r.mean_diff, r.p)
end
M.paired = paired

local function f3(v) return v and ("%.3f"):format(v) or "-" end

local function pct(v) return v and ("%.2f"):format(100 * v) or "-" end

-- The numbers of a list, each formatted by fmt, space-separated ("" for none).
local function joined(xs, fmt)
  local t = {}
  for i, v in ipairs(xs or {}) do t[i] = fmt:format(v) end
  return table.concat(t, " ")
end

-- How a Spearman rho over a handful of points (3 groups, 3 keep rates) reads against the
-- sign the study expects (expect = -1 or +1). Only a monotone relation (|rho| = 1) is a plain
-- agreement: over 3 points rho = +-0.5 means one pair out of order, which shows a lean and no
-- more, so the verdict says so instead of rounding it to "agrees". Below |rho| = LEAN
-- (possible with more than 3 points) there is no lean worth a word.
local LEAN = 0.5   -- also the profile's depth verdict's threshold
function M.trend_verdict(rho, expect)
  if not rho then return "n/a" end
  local s = rho * expect
  if s >= 0.999 then return "**agrees** (monotone)" end
  if s <= -0.999 then return "**disagrees** (monotone the other way)" end
  if s >= LEAN then return "**agrees in part** (leans that way, not monotone)" end
  if s <= -LEAN then return "**does not agree** (leans the other way, not monotone)" end
  return "**no clear trend** (|rho| < 0.5)"
end

local function seeds_note(rec)
  local s = rec.seeds
  if not s then return "one seed" end
  local t = {}
  for i, v in ipairs(s) do t[i] = tostring(v) end
  return (#s == 1 and "seed " or "seeds ") .. table.concat(t, ", ")
end

-- The dense teacher's accuracy curve: one row per epoch of its record (`epochs` of a teacher
-- trained from scratch by al.train; `history` of one fine-tuned from a checkpoint, whose
-- evaluation is `accuracy` and which measures no training accuracy).
local function teacher_curve(lines, t)
  local rows = t.epochs or t.history
  if not rows or #rows == 0 then return end
  lines[#lines + 1] = ""
  lines[#lines + 1] = "## Dense teacher: accuracy curve"
  lines[#lines + 1] = ""
  lines[#lines + 1] = "| epoch | lr | train loss | train acc % | test acc % |"
  lines[#lines + 1] = "|---|---|---|---|---|"
  for _, e in ipairs(rows) do
    lines[#lines + 1] = ("| %d | %s | %s | %s | %s |"):format(e.epoch, e.lr and ("%.3g"):format(e.lr) or "-",
      e.loss and ("%.4f"):format(e.loss) or "-", pct(e.train_accuracy), pct(e.test_accuracy or e.accuracy))
  end
end

local function profile_section(lines, prof)
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
    verdict = tr.k90_frac <= -LEAN and "**agrees** (sparser with depth)" or tr.k90_frac >= LEAN and "**disagrees** (denser with depth)"
      or "**no clear trend** (|rho| < 0.5)"
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = ("Spearman correlation of depth with k90/N: %s, with entropy/log N: %s. The study's observation (shallow layers mix densely, deep layers are sparse) predicts strongly negative values; here: %s."):format(
    tr.k90_frac and ("%.2f"):format(tr.k90_frac) or "n/a", tr.entropy_norm and ("%.2f"):format(tr.entropy_norm) or "n/a", verdict)
end

-- Experiment 1: one table per teacher (records before seeds: one table, the A-ViT's).
local function groupwise_section(lines, e1)
  lines[#lines + 1] = ""
  lines[#lines + 1] = ("## 1. Group-wise replacement (%s)"):format(seeds_note(e1))
  for _, t in ipairs(e1.tables or { { teacher = "avit", rows = e1.rows } }) do
    local dense = t.teacher == "dense"
    lines[#lines + 1] = ""
    lines[#lines + 1] = dense and "### Under the dense teacher (natural sparsity, no halting masks)"
      or ("### Under the A-ViT teacher%s"):format(t.keep_rate and (" (keep " .. t.keep_rate .. ")") or "")
    lines[#lines + 1] = ""
    lines[#lines + 1] = "| group | layers | token sparsity (1 - keep), A-ViT | 1 - k90/N, A-ViT (running tokens) | 1 - k90/N, dense teacher | 1 - entropy/log N, dense teacher | student acc % | teacher acc % | drop (pp) | vs control (pp, paired) |"
    lines[#lines + 1] = "|---|---|---|---|---|---|---|---|---|---|"
    local ctl = t.control and values(t.control, "accuracy")
    local cols = { token_sparsity = {}, sparsity = {}, dense_sparsity = {}, dense_entropy_sparsity = {} }
    local ys = {}
    for _, r in ipairs(t.rows) do
      lines[#lines + 1] = ("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |"):format(r.group, table.concat(r.layers, ","),
        dense and "-" or f3(r.token_sparsity), dense and "-" or f3(r.sparsity), f3(r.dense_sparsity), f3(r.dense_entropy_sparsity),
        pm(values(r, "accuracy"), 100), pm(values(r, "teacher_accuracy"), 100), pm(values(r, "drop"), 100),
        ctl and paired(values(r, "accuracy"), ctl) or "-")
      for k, c in pairs(cols) do c[#c + 1] = r[k] end
      ys[#ys + 1] = r.drop
    end
    if t.control then
      lines[#lines + 1] = ("| control: nothing replaced | - | - | - | - | - | %s | %s | %s | - |"):format(pm(values(t.control, "accuracy"), 100),
        pm(values(t.control, "teacher_accuracy"), 100), pm((function()
          local d, a, tt = {}, values(t.control, "accuracy"), values(t.control, "teacher_accuracy")
          for i = 1, #a do d[i] = tt[i] - a[i] end return d end)(), 100))
    end
    lines[#lines + 1] = ""
    for _, k in ipairs(dense and { "dense_sparsity", "dense_entropy_sparsity" } or { "token_sparsity", "sparsity", "dense_sparsity", "dense_entropy_sparsity" }) do
      local rho = #cols[k] == #ys and #ys > 1 and s2s.profiling.spearman(cols[k], ys) or nil
      lines[#lines + 1] = ("Spearman(%s, mean drop) = %s; the study expects sparser groups to be replaced with a smaller drop (negative): %s.")
        :format(k, rho and ("%.2f"):format(rho) or "n/a", M.trend_verdict(rho, -1))
    end
  end
end

local function keeprate_section(lines, e2)
  lines[#lines + 1] = ""
  lines[#lines + 1] = ("## 2. Teacher keep-rate sweep (%s, %s)"):format(e2.strategy, seeds_note(e2))
  lines[#lines + 1] = ""
  local own = e2.own_keep_control
  if own then
    lines[#lines + 1] = ("Control: the same student with its own keep rate held at %s by the keep-rate controller, whatever its teacher's; the last column is the paired test of the gap against the control's gap."):format(own)
    lines[#lines + 1] = ""
    lines[#lines + 1] = "| target keep | teacher keep (measured) | teacher acc % | student keep | student acc % | gap (pp) | control keep | control acc % | control gap (pp) | gap vs control gap (pp, paired) |"
    lines[#lines + 1] = "|---|---|---|---|---|---|---|---|---|---|"
  else
    lines[#lines + 1] = "| target keep | teacher keep (measured) | teacher acc % | student keep | student acc % | gap (pp) |"
    lines[#lines + 1] = "|---|---|---|---|---|---|"
  end
  local xs, ys, cys = {}, {}, {}
  for _, r in ipairs(e2.rows) do
    local row = ("| %.2f | %s | %s | %s | %s | %s |"):format(r.target_keep_rate, pm(values(r, "teacher_keep_rate"), 1, 3),
      pm(values(r, "teacher_accuracy"), 100), pm(values(r, "student_keep_rate"), 1, 3), pm(values(r, "student_accuracy"), 100),
      pm(values(r, "gap"), 100))
    if own then
      local c = r.control or {}
      row = row .. (" %s | %s | %s | %s |"):format(pm(values(c, "keep_rate"), 1, 3), pm(values(c, "accuracy"), 100),
        pm(values(c, "gap"), 100), paired(values(r, "gap"), values(c, "gap"), c.same_run))
      cys[#cys + 1] = c.gap
    end
    lines[#lines + 1] = row
    xs[#xs + 1], ys[#ys + 1] = r.teacher_keep_rate, r.gap
  end
  if #xs > 1 then
    local rho = s2s.profiling.spearman(xs, ys)          -- nil when either side is constant
    lines[#lines + 1] = ""
    lines[#lines + 1] = ("Spearman(teacher keep, mean gap) = %s; the study expects a sparser teacher (lower keep) to give a smaller gap (positive): %s.")
      :format(rho and ("%.2f"):format(rho) or "n/a", M.trend_verdict(rho, 1))
    if own and #cys == #xs then
      local rc = s2s.profiling.spearman(xs, cys)
      lines[#lines + 1] = ("With the student's own keep rate held at %s: Spearman(teacher keep, mean control gap) = %s.")
        :format(own, rc and ("%.2f"):format(rc) or "n/a")
    end
  end
end

local function layeraware_section(lines, e3)
  lines[#lines + 1] = ""
  lines[#lines + 1] = ("## 3. Layer-aware replacement vs the A-ViT teacher (%s)"):format(seeds_note(e3))
  lines[#lines + 1] = ""
  -- records before seeds mark neither the control nor the teacher row: their names do
  local ctl
  for _, r in ipairs(e3.rows) do
    if r.control or (r.name or ""):match("^control") then ctl = r end
    if (r.name or ""):match("^A%-ViT teacher") then r.teacher = true end
  end
  lines[#lines + 1] = "| model | acc % | params | ms / image (gathered, CPU) | keep rate | vs control (pp, paired) |"
  lines[#lines + 1] = "|---|---|---|---|---|---|"
  for _, r in ipairs(e3.rows) do
    local vs = "-"
    if ctl and r ~= ctl and not r.teacher then vs = paired(values(r, "accuracy"), values(ctl, "accuracy")) end
    lines[#lines + 1] = ("| %s | %s | %d | %s | %s | %s |"):format(r.name, pm(values(r, "accuracy"), 100), r.params or 0,
      pm(values(r, "ms"), 1, 3), pm(values(r, "keep_rate"), 1, 3), vs)
  end
end

local function latency_section(lines, e3l)
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

-- Experiment 4: the trained models at their own token count (from the latency run), then
-- the DeiT-Tiny-shape benchmark at 224^2 / 384^2.
local function resolution_section(lines, e4, e3l)
  lines[#lines + 1] = ""
  lines[#lines + 1] = "## 4. Efficiency vs resolution"
  if e3l and e3l.rows[1] then
    local dense = e3l.rows[1].ms
    local avit
    for _, r in ipairs(e3l.rows) do if r.mode == "gather" and not avit then avit = r.ms end end
    lines[#lines + 1] = ""
    lines[#lines + 1] = ("### The trained models at their own token count (from 3b: %d test images, %d thread(s))"):format(e3l.images, e3l.threads)
    lines[#lines + 1] = ""
    lines[#lines + 1] = "| model | mode | ms / image | speedup vs dense | vs A-ViT (gathered) | acc % |"
    lines[#lines + 1] = "|---|---|---|---|---|---|"
    for _, r in ipairs(e3l.rows) do
      lines[#lines + 1] = ("| %s | %s | %.3f | %.2fx | %s | %s |"):format(r.name, r.mode, r.ms, dense / r.ms,
        avit and ("%.2fx"):format(avit / r.ms) or "-", pct(r.accuracy))
    end
  end
  if not e4 then return end
  lines[#lines + 1] = ""
  lines[#lines + 1] = ("### DeiT-Tiny shape, random weights (patch 16, batch %d, %d thread(s), replaced layers %s)")
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

-- Write <out>/summary.md from the records in C.out; returns its path.
-- The records the summary reads (M.write), as paths under `out`: the teacher's, each A-ViT of
-- the preset's keep rates, the profile and the experiments'.
function M.record_paths(out, preset)
  local t = { out .. "/teacher.json" }
  for _, kr in ipairs((preset.avit or {}).keep_rates or {}) do t[#t + 1] = out .. "/avit_k" .. kr .. ".json" end
  for _, f in ipairs({ "profile/profile.json", "profile_teacher/profile.json", "exp1_groupwise.json", "exp2_keeprate.json",
                       "exp3_layeraware.json", "exp3_latency.json", "exp4_resolution.json" }) do
    t[#t + 1] = out .. "/" .. f
  end
  return t
end

-- Those of M.record_paths that exist (a summary of none would be a title alone).
function M.records_present(out, preset)
  local found = {}
  for _, p in ipairs(M.record_paths(out, preset)) do
    local f = io.open(p, "rb")
    if f then f:close(); found[#found + 1] = p end
  end
  return found
end

function M.write(C)
  local out, preset, opts, read_json = C.out, C.preset, C.opts, C.read_json
  local lines = { "# S2S results: " .. (preset.name or out), "",
                  ("Preset `%s`%s; records in `%s`."):format(opts.preset, opts.quick and " with --quick (a smoke run, NOT the study)" or "", out), "" }
  local t = read_json(out .. "/teacher.json")
  if t then
    lines[#lines + 1] = ("Dense teacher: test accuracy %s%% (%s)."):format(pct(t.test_accuracy), out .. "/teacher.json")
    teacher_curve(lines, t)
  end
  local avits = {}
  for _, kr in ipairs((preset.avit or {}).keep_rates or {}) do
    local a = read_json(out .. "/avit_k" .. kr .. ".json")
    if a then
      local by_epoch = {}
      for _, h in ipairs(a.history or {}) do by_epoch[#by_epoch + 1] = h.mean_keep_rate end
      avits[#avits + 1] = ("| %.2f | %.3f | %+.3f | %s | %s | %s | %s |"):format(kr, a.mean_keep_rate, a.mean_keep_rate - kr,
        pct(a.test_accuracy), joined(a.keep_rate, "%.2f"), joined(by_epoch, "%.3f"),
        a.halting and a.halting.gate_center and ("%.2f"):format(a.halting.gate_center) or "-")
    end
  end
  if #avits > 0 then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "## A-ViT teachers"
    lines[#lines + 1] = ""
    lines[#lines + 1] = "Measured keep rate and accuracy: the whole test set (or the preset's test_limit); \"by epoch\": after"
    lines[#lines + 1] = "each epoch, on its evaluation subset (avit.eval_limit); \"gate centre\": where the keep-rate"
    lines[#lines + 1] = "controller left it, the saved model's (without a controller: the configured centre)."
    lines[#lines + 1] = ""
    lines[#lines + 1] = "| target keep | measured keep | off target | test acc % | keep rate per layer | by epoch | gate centre |"
    lines[#lines + 1] = "|---|---|---|---|---|---|---|"
    for _, l in ipairs(avits) do lines[#lines + 1] = l end
  end
  local prof = read_json(out .. "/profile/profile.json") or read_json(out .. "/profile_teacher/profile.json")
  if prof then profile_section(lines, prof) end
  local e1 = read_json(out .. "/exp1_groupwise.json")
  if e1 then groupwise_section(lines, e1) end
  local e2 = read_json(out .. "/exp2_keeprate.json")
  if e2 then keeprate_section(lines, e2) end
  local e3 = read_json(out .. "/exp3_layeraware.json")
  if e3 then layeraware_section(lines, e3) end
  local e3l = read_json(out .. "/exp3_latency.json")
  if e3l then latency_section(lines, e3l) end
  local e4 = read_json(out .. "/exp4_resolution.json")
  if e4 or e3l then resolution_section(lines, e4, e3l) end
  local path = out .. "/summary.md"
  -- a summary that was not written must not be reported as written
  local ok, err = al.write_atomic(path, table.concat(lines, "\n") .. "\n")
  if not ok then error(("cannot write %s: %s"):format(path, tostring(err)), 0) end
  C.log("wrote %s", path)
  return path
end

return M
