-- attnlab.report.markdown -- the report's Markdown: per dataset the accuracy table with paired
-- tests against the baseline, the Holm families, timings and the list of plots. Called through
-- report.markdown (report/init.lua), which also exports fmt_p, stars and md_table from here.
local al = require "attnlab"
local util = require "attnlab.util"
local PAIRED = require "attnlab.report.paired"

local M = {}

local sorted_keys, median = util.sorted_keys, util.median
local function mean(xs)
  if #xs == 0 then return nil end
  return al.stats.mean(xs)
end

-- ---- formatting --------------------------------------------------------------------------------------
local function fnum(v, fmt)
  if v == nil then return "" end
  if v ~= v then return "nan" end
  if v == math.huge then return "+inf" elseif v == -math.huge then return "-inf" end
  return (fmt or "%.3f"):format(v)
end

function M.fmt_p(p)
  if p == nil then return "" end
  if p ~= p then return "nan" end
  if p == 0 then return "0" end
  if p < 1e-4 then return ("%.1e"):format(p) end
  return ("%.4f"):format(p)
end
local fmt_p = M.fmt_p

function M.stars(p)
  if p == nil or p ~= p then return "" end
  if p < 0.001 then return "***" elseif p < 0.01 then return "**" elseif p < 0.05 then return "*" end
  return "ns"
end

local function pct(v) return v and ("%.2f"):format(100 * v) or "" end

local function md_table(header, rows, align)
  local out = { "| " .. table.concat(header, " | ") .. " |" }
  local sep = {}
  for i = 1, #header do sep[i] = (align and align[i] == "l") and ":---" or "---:" end
  out[#out + 1] = "| " .. table.concat(sep, " | ") .. " |"
  for _, r in ipairs(rows) do
    local cells = {}
    for i = 1, #header do cells[i] = tostring(r[i] == nil and "" or r[i]):gsub("|", "\\|") end
    out[#out + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  return table.concat(out, "\n")
end
M.md_table = md_table

local function seeds_str(list)
  local s = {}
  for i, v in ipairs(list) do s[i] = tostring(v) end
  return table.concat(s, ",")
end

-- Δ and its CI; a comparison without a test (c.na) shows its descriptive Δ, if any, and no CI.
local function delta_cell(c)
  if c.mean_diff == nil then return c.na and PAIRED.marker(c.na) or "" end
  local s = ("%+.2f"):format(100 * c.mean_diff)
  if c.na then
    s = s .. " [" .. PAIRED.marker(c.na) .. "]"
  elseif c.ci_low and c.ci_low == c.ci_low then
    s = s .. (" [%+.2f, %+.2f]"):format(100 * c.ci_low, 100 * c.ci_high)
  end
  return s
end

local function pairs_cell(c)
  local s = tostring(c.n_pairs)
  local extra = {}
  if #c.only_x > 0 then extra[#extra + 1] = "unpaired " .. c.normalizer .. ": " .. seeds_str(c.only_x) end
  if #c.only_base > 0 then extra[#extra + 1] = "unpaired " .. c.baseline .. ": " .. seeds_str(c.only_base) end
  if #extra > 0 then s = s .. " (" .. table.concat(extra, "; ") .. ")" end
  return s
end

-- t, p, Holm p, sig, Wilcoxon p, d. Without a test every one is n/a, and sig has no stars.
local function test_cells(c)
  if c.na then
    local m = PAIRED.marker(c.na)
    return { m, m, c.family and "n/a (counts as p = 1)" or "n/a", "n/a", m, m }
  end
  local w = fmt_p(c.wilcoxon_p)
  if c.wilcoxon_note then
    w = c.wilcoxon_note:find("differences are zero", 1, true) and "n/a (all d = 0)" or ("n/a (" .. c.wilcoxon_note .. ")")
  end
  return { fnum(c.t), fmt_p(c.p), c.holm and fmt_p(c.holm) or "(none)",
           c.holm and M.stars(c.holm) or (M.stars(c.p) .. " (raw)"), w, fnum(c.cohen_d, "%.2f") }
end

-- ", K without a test (reasons) ..." for the Families list: those count as p = 1 (init.lua's
-- holm_family), which keeps m at the size the family declares.
local function untested_clause(f)
  local k = #f.untested
  if k == 0 then return "" end
  local n, order = {}, {}
  for _, c in ipairs(f.untested) do
    local why = c.na:match("^no records of ") and "no records" or c.na
    if not n[why] then n[why] = 0; order[#order + 1] = why end
    n[why] = n[why] + 1
  end
  local parts = {}
  for _, why in ipairs(order) do parts[#parts + 1] = ("%s ×%d"):format(why, n[why]) end
  return ("; %d without a test (%s) %s as p = 1, never rejected"):format(k, table.concat(parts, ", "),
    k == 1 and "counts" or "count")
end

-- The line under a table with n/a rows: which rows and why (report/paired.lua).
local function na_line(comps, label)
  local items = {}
  for _, c in ipairs(comps) do
    if c.na then items[#items + 1] = { label = label(c), why = c.na } end
  end
  return PAIRED.note(items, "; in a Holm family such a comparison counts as p = 1, never rejected (see Families)")
end

local function schedule_line(A, d)
  local g
  for _, n in ipairs(A.normalizers) do if A.groups[d][n] then g = A.groups[d][n] break end end
  if not g then return "" end
  local rec = g.runs[1].record
  local c = rec.config
  local parts = { ("dataset `%s`"):format(tostring(c.dataset)) }
  if c.padding and c.padding ~= "positions" then parts[#parts + 1] = "padding " .. c.padding end
  parts[#parts + 1] = ("%s epoch%s, batch %s, lr %s, init %s%s"):format(tostring(c.epochs), c.epochs == 1 and "" or "s",
    tostring(c.batch_size), tostring(c.lr), c.init and tostring(c.init) or "timm (recorded before the init key)",
    c.decay_all and ", weight decay on all parameters" or "")
  if rec.dataset and rec.dataset.train then
    parts[#parts + 1] = ("%d training / %d test examples"):format(rec.dataset.train, rec.dataset.test or 0)
  end
  parts[#parts + 1] = ("model dim %s, depth %s, heads %s, %s tokens, %s parameters"):format(tostring(c.dim),
    tostring(c.depth), tostring(c.heads), tostring(rec.tokens or "?"), tostring(rec.params or "?"))
  return table.concat(parts, "; ")
end

local function rel(path, base_dir)
  if base_dir and path:sub(1, #base_dir + 1) == base_dir .. "/" then return path:sub(#base_dir + 2) end
  return path
end

-- The Markdown report. opts.plots: the result of report.plots; opts.report_dir: folder the
-- Markdown file lives in (plot links are made relative to it).
function M.markdown(A, opts)
  opts = opts or {}
  local out = {}
  local function w(s) out[#out + 1] = s or "" end
  local exp = A.experiment
  local base = A.baseline
  w(("# %s: attention normalizers compared"):format(exp and exp.name or "Sweep"))
  w()
  local revs, hosts = {}, {}
  for _, d in ipairs(A.datasets) do
    for _, n in ipairs(A.normalizers) do
      local g = A.groups[d][n]
      if g then for _, r in ipairs(g.runs) do
        revs[tostring(r.record.git_revision)] = true
        local m = r.record.machine or {}
        hosts[("%s (%s, %s thread%s)"):format(tostring(m.cpu or m.host), tostring(m.blas), tostring(m.threads),
          m.threads == 1 and "" or "s")] = true
      end end
    end
  end
  w(("Results folder `%s`: %d finished record%s, %d error record%s%s%s. Git revision%s: %s. Machine: %s.")
    :format(A.dir or "?", A.n_records, A.n_records == 1 and "" or "s", #A.errors, #A.errors == 1 and "" or "s",
      (#A.unreadable > 0 and (", %d invalid record%s (not counted)"):format(#A.unreadable, #A.unreadable == 1 and "" or "s") or "") ..
      (#A.missing > 0 and (", %d expected run%s without a record"):format(#A.missing, #A.missing == 1 and "" or "s") or ""),
      (exp and exp.quick) and " (--quick preset)" or "", #sorted_keys(revs) == 1 and "" or "s",
      table.concat(sorted_keys(revs), ", "), table.concat(sorted_keys(hosts), "; ")))
  w()
  w(("How to read: accuracy is test accuracy in %%, mean ± sd over seeds. Δ is the mean paired difference " ..
     "to %s in percentage points with its 95%% CI, over the seeds both have (\"pairs\"). t and p: paired two-sided " ..
     "t-test; Holm p: adjusted within the comparison's family (see Families); sig: *** < 0.001, ** < 0.01, " ..
     "* < 0.05 on the Holm p, ns otherwise; n/a: no test (fewer than 2 pairs, no variance of the differences, or a " ..
     "non-finite value; the line under the table says which). Wilcoxon p: signed-rank test (exact when n ≤ 25 without ties). " ..
     "d: Cohen's d of the paired differences. Density: share of keys with nonzero attention weight, mean over " ..
     "layers, heads and queries (1 = dense)."):format(base))
  w()

  local plots = opts.plots or {}
  for _, d in ipairs(A.datasets) do
    w(("## %s"):format(d))
    w()
    w(schedule_line(A, d) .. ".")
    w()
    local rows, shown = {}, {}   -- shown: the comparisons in the table, for the n/a line
    local has_exact = false
    for _, n in ipairs(A.normalizers) do
      local g = A.groups[d][n]
      if g and g.acc_exact then has_exact = true end
    end
    for _, n in ipairs(A.normalizers) do
      local g = A.groups[d][n]
      if g then
        local acc = g.n >= 2 and ("%.2f ± %.2f"):format(100 * g.acc.mean, 100 * g.acc.sd) or pct(g.acc.mean)
        local row = { n, tostring(g.n), acc }
        if has_exact then row[#row + 1] = g.acc_exact and pct(g.acc_exact.mean) or "" end
        if n == base then
          for _ = 1, 8 do row[#row + 1] = "" end
          row[#row - 7] = "(baseline)"
        else
          local c = A.vs_baseline[d][n]
          shown[#shown + 1] = c
          row[#row + 1] = delta_cell(c)
          row[#row + 1] = pairs_cell(c)
          for _, v in ipairs(test_cells(c)) do row[#row + 1] = v end
        end
        row[#row + 1] = fnum(g.density, "%.3f")
        rows[#rows + 1] = row
      end
    end
    local header = { "normalizer", "seeds", "accuracy %" }
    if has_exact then header[#header + 1] = "exact-1k %" end
    for _, h in ipairs({ "Δ vs " .. base .. " (pp) [95% CI]", "pairs", "t", "p", "Holm p", "sig", "Wilcoxon p",
                         "d", "density" }) do header[#header + 1] = h end
    local align = { "l" }
    w(md_table(header, rows, align))
    w()
    local na = na_line(shown, function(c) return c.normalizer end)
    if na then w(na) w() end
    if has_exact then
      w("exact-1k: accuracy on the first 1,000 test records, the bit-exact part of this copy's CIFAR-10 test set.")
      w()
    end
    local pl = plots.by_dataset and plots.by_dataset[d]
    if pl then
      w(("![%s: accuracy vs support density](%s)"):format(d, rel(pl.png or pl.svg, opts.report_dir)))
      w()
    end
    local cv = A.curves and A.curves[d]
    if cv and cv.epochs > 1 and cv[base] then
      w(("Learning curve: test accuracy after each epoch, %s as mean ± sd over seeds, the others as their " ..
         "paired Δ to it in pp [95%% CI] (seeds that have both at that epoch)."):format(base))
      w()
      local hdr, crow = { "epoch", base .. " %" }, {}
      local others = {}
      for _, n in ipairs(A.normalizers) do if n ~= base and cv.delta[n] then others[#others + 1] = n; hdr[#hdr + 1] = "Δ " .. n end end
      for ep = 1, cv.epochs do
        local b = cv[base]
        local row = { tostring(ep), b.n[ep] > 0 and (b.n[ep] >= 2 and ("%.2f ± %.2f"):format(b.mean[ep], b.sd[ep])
          or ("%.2f"):format(b.mean[ep])) or "" }
        for _, n in ipairs(others) do
          local dl = cv.delta[n]
          local cell = ""
          if dl.na and dl.na[ep] then cell = ("%+.2f [%s]"):format(dl.mean[ep], PAIRED.marker(dl.na[ep]))
          elseif dl.n[ep] >= 2 then cell = ("%+.2f [%+.2f, %+.2f]"):format(dl.mean[ep], dl.lo[ep], dl.hi[ep]) end
          row[#row + 1] = cell
        end
        crow[#crow + 1] = row
      end
      w(md_table(hdr, crow, { "r" }))
      w()
      local cp = plots.curves and plots.curves[d]
      if cp then
        w(("![%s: learning curves](%s)"):format(d, rel(cp.png or cp.svg, opts.report_dir)))
        w()
      end
    end
  end

  -- families whose baseline is not the main one (hae vs entmax15 ...)
  for _, f in ipairs(A.families) do
    if f.baseline ~= base and #f.comparisons > 0 then
      w(("## %s"):format(f.title))
      w()
      w(("Family `%s`: %d comparison%s, Holm within it."):format(f.name, f.m, f.m == 1 and "" or "s"))
      w()
      local rows = {}
      for _, c in ipairs(f.comparisons) do
        local row = { c.dataset, c.normalizer .. " vs " .. c.baseline, delta_cell(c), pairs_cell(c) }
        for _, v in ipairs(test_cells(c)) do row[#row + 1] = v end
        rows[#rows + 1] = row
      end
      w(md_table({ "dataset", "comparison", "Δ (pp) [95% CI]", "pairs", "t", "p", "Holm p", "sig", "Wilcoxon p", "d" },
        rows, { "l", "l" }))
      w()
      local na = na_line(f.comparisons, function(c) return c.dataset .. " " .. c.normalizer end)
      if na then w(na) w() end
    end
  end

  if #A.alphas > 0 then
    w("## Learned alphas")
    w()
    w("alpha per head = 1.05 + 0.9·sigmoid(a), 1.5 at initialisation; mean and range over heads and seeds, and the mean of each head over seeds.")
    w()
    local rows = {}
    for _, a in ipairs(A.alphas) do
      local ph = {}
      for h, v in ipairs(a.per_head) do ph[h] = v == v and ("%.3f"):format(v) or "n/a" end   -- NaN: no finite value
      rows[#rows + 1] = { a.dataset, a.normalizer, tostring(a.layer), tostring(a.seeds), ("%.3f"):format(a.mean),
                          ("%.3f – %.3f"):format(a.min, a.max), table.concat(ph, " ") }
    end
    w(md_table({ "dataset", "normalizer", "layer", "seeds", "mean α", "range", "per head" }, rows, { "l", "l" }))
    w()
  end

  w(("## Runtime relative to %s"):format(base))
  w()
  w(("Median over seeds of the training step time and of the inference time per example, divided by %s's " ..
     "median on the same dataset (below 1 = faster). Runs that shared the machine make these noisy.")
    :format(base))
  w()
  do
    local header, rows = { "normalizer" }, {}
    for _, d in ipairs(A.datasets) do header[#header + 1] = d .. ": train" header[#header + 1] = d .. ": infer" end
    local brow = { base .. " (absolute)" }
    for _, d in ipairs(A.datasets) do
      local rt = A.runtime[d][base]
      brow[#brow + 1] = rt and rt.train_s and ("%.1f ms/step"):format(1e3 * rt.train_s) or ""
      brow[#brow + 1] = rt and rt.infer_s and ("%.3f ms/ex"):format(1e3 * rt.infer_s) or ""
    end
    rows[1] = brow
    for _, n in ipairs(A.normalizers) do
      if n ~= base then
        local row = { n }
        for _, d in ipairs(A.datasets) do
          local rt = A.runtime[d][n]
          row[#row + 1] = rt and rt.train_rel and ("%.2f×"):format(rt.train_rel) or ""
          row[#row + 1] = rt and rt.infer_rel and ("%.2f×"):format(rt.infer_rel) or ""
        end
        rows[#rows + 1] = row
      end
    end
    w(md_table(header, rows, { "l" }))
    w()
    if plots.runtime then
      w(("![runtime relative to %s](%s)"):format(base, rel(plots.runtime.png or plots.runtime.svg, opts.report_dir)))
      w()
    end
  end

  w("## Families")
  w()
  for _, f in ipairs(A.families) do
    w(("- `%s` (%s): %d comparison%s vs %s, Holm over all %d%s.")
      :format(f.name, f.title, f.m, f.m == 1 and "" or "s", f.baseline, f.m, untested_clause(f)))
  end
  w()

  if #A.errors > 0 or #A.unreadable > 0 or #A.missing > 0 or #A.duplicates > 0 then
    w("## Runs without a result")
    w()
    if #A.errors > 0 then
      local rows = {}
      for _, e in ipairs(A.errors) do
        rows[#rows + 1] = { e.name, tostring(e.attempts or 1), tostring(e.exit_status or ""), (e.error:gsub("\n", " ")) }
      end
      w(("%d error record%s (a rerun of the sweep retries them; the stderr tail is in each record):"):format(#A.errors,
        #A.errors == 1 and "" or "s"))
      w()
      w(md_table({ "run", "attempts", "exit", "error" }, rows, { "l", "l", "l", "l" }))
      w()
    end
    if #A.missing > 0 then
      w(("%d expected run%s without any record: %s"):format(#A.missing, #A.missing == 1 and "" or "s",
        table.concat(A.missing, ", ")))
      w()
    end
    -- files that are no valid record (report/record.lua): named with why, counted nowhere
    for _, u in ipairs(A.unreadable) do w(("- invalid record %s.json: %s; not counted"):format(u.name, u.why)) end
    for _, d in ipairs(A.duplicates) do w(("- %s duplicates %s (same dataset, normalizer, seed); ignored"):format(d.name, d.other)) end
    if #A.unreadable + #A.duplicates > 0 then w() end
  end

  if plots.files and #plots.files > 0 then
    w("## Plots")
    w()
    for _, f in ipairs(plots.files) do w("- " .. rel(f, opts.report_dir)) end
    if plots.tool then w() w("Drawn with " .. plots.tool .. ".") end
    w()
  end
  return table.concat(out, "\n")
end

return M
