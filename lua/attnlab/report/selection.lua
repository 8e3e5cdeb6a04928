-- attnlab.report.selection -- choose one configuration on a validation split, then test only
-- that one on the test set.
--
-- A study that picks its best top-k ratio by test accuracy and then tests that ratio on the
-- same test set reports a p-value that is only descriptive. The remedy is the usual one: each
-- run holds out part of its training set (train.lua's `val = N`), the candidate with the best
-- mean validation accuracy is chosen without looking at any test number, and that single
-- candidate gets one confirmatory paired test against the baseline, unadjusted because it is a
-- single comparison fixed before the test set is looked at.
--
--   local data = al.report.load("experiments/normalizers/full/records/val_topk")
--   local S = al.report.selection.select(data, { baseline = "softmax",
--                                                candidates = { "topk:0.125", "topk:0.25", "topk:0.5" } })
--   print(al.report.selection.markdown(S))
--
-- Rules, all fixed here so that a script cannot bend them after seeing the numbers:
-- * The validation score of a run is its last epoch's `val_accuracy` (the model the test
--   accuracy is measured on). A record without one was not trained with a validation split:
--   that is an error, not a silent zero.
-- * Candidates are compared over the seeds that every candidate has, so that no candidate is
--   favoured by a different draw of seeds. Ties go to the candidate listed first.
-- * The confirmatory test pairs the chosen candidate with the baseline over every seed both
--   have (attnlab.stats.ttest_rel, two-sided, 95% CI), in percentage points. Fewer than 2
--   pairs, a non-finite accuracy, or differences that are all equal (zero variance: t = +-inf,
--   p = 0 in SciPy's convention) give no test (report/paired.lua): Δ is shown with
--   "n/a (<reason>)" in place of the CI, t and p, and a line under the table says why.
-- * Each candidate's test Δ is also given, marked descriptive: it shows what choosing on the
--   test set would have picked, and it must not be read as a further test.
local al = require "attnlab"
local util = require "attnlab.util"
local index = require "attnlab.report.cells"   -- cells[label][normalizer][seed] = run
local PAIRED = require "attnlab.report.paired"

local M = {}

local function fail(fmt, ...) error("report.selection: " .. fmt:format(...), 0) end

-- The last epoch's validation accuracy of a record, or nil. Only a finite one counts: the
-- mean of {inf, -inf} is NaN, and a NaN mean listed first would win the choice (no later
-- m > NaN is true), so a non-finite score is the same error as a missing one.
local function last_val(rec)
  local eps = type(rec) == "table" and rec.epochs
  local e = type(eps) == "table" and eps[#eps]
  local v = type(e) == "table" and e.val_accuracy
  return PAIRED.finite(v) and v or nil
end
M.last_val = last_val


local function seeds_of(cell)
  local s = {}
  for seed in pairs(cell or {}) do s[#s + 1] = seed end
  table.sort(s)
  return s
end

-- Paired test of a's test accuracy minus b's, in pp, over the seeds both have -> the
-- ttest_rel result and the seeds, or nil, the seeds and { why, mean_diff, n } when there is
-- no test (report/paired.lua: fewer than 2 pairs, a non-finite accuracy, no variance).
local function paired(a, b)
  local x, y, seeds = {}, {}, {}
  for _, seed in ipairs(seeds_of(a)) do
    if b and b[seed] then
      x[#x + 1], y[#y + 1], seeds[#seeds + 1] = 100 * a[seed].acc, 100 * b[seed].acc, seed
    end
  end
  local t, why, m = PAIRED.ttest(x, y)
  if t then return t, seeds end
  return nil, seeds, { why = why, mean_diff = m, n = #x }
end

-- select(data, opts) -> { baseline, candidates, datasets = { [i] = row } } where a row is
-- { label, chosen, common_seeds = {...}, val = { [cand] = mean val acc over common seeds },
--   seeds = { [cand] = #seeds }, test = ttest_rel result (or nil), test_seeds = {...},
--   test_na = { why, mean_diff, n } when the chosen candidate has no test,
--   descriptive = { [cand] = ttest_rel result or nil }, descriptive_na = { [cand] = { why,
--   mean_diff, n } }, why = reason when nothing was chosen or tested }.
-- opts: baseline (required), candidates (required, ordered), labels (default: every label
-- with a baseline or candidate record). No record of any candidate, or none of the baseline,
-- raises one line naming the folder (data.dir).
function M.select(data, opts)
  opts = opts or {}
  if type(data) ~= "table" or type(data.runs) ~= "table" then fail("data must be what al.report.load returns") end
  local base, cands = opts.baseline, opts.candidates
  if type(base) ~= "string" then fail("opts.baseline must be a normalizer name, got %s", tostring(base)) end
  if type(cands) ~= "table" or #cands == 0 then fail("opts.candidates must be a non-empty list of normalizer names") end
  local by = index(data)
  -- nothing to choose from is one line, not a table of "no seed has a record" rows
  local has_cand, has_base = false, false
  for _, cells in pairs(by) do
    if cells[base] then has_base = true end
    for _, c in ipairs(cands) do if cells[c] then has_cand = true end end
  end
  local where = data.dir and (" in " .. tostring(data.dir)) or ""
  if not has_cand then fail("no records of %s%s", table.concat(cands, ", "), where) end
  if not has_base then fail("no records of the baseline %s%s", base, where) end
  local labels = opts.labels
  if not labels then   -- every label with a baseline or candidate record
    labels = {}
    for _, label in ipairs(util.sorted_keys(by)) do
      local any = by[label][base] ~= nil
      for _, c in ipairs(cands) do any = any or by[label][c] ~= nil end
      if any then labels[#labels + 1] = label end
    end
  end
  local S = { baseline = base, candidates = cands, datasets = {} }
  for _, label in ipairs(labels) do
    local cells = by[label] or {}
    local row = { label = label, val = {}, seeds = {}, descriptive = {}, descriptive_na = {} }
    -- every candidate record must carry a validation score
    for _, c in ipairs(cands) do
      row.seeds[c] = #seeds_of(cells[c])
      for _, seed in ipairs(seeds_of(cells[c])) do
        if not last_val(cells[c][seed].record) then
          fail("%s: record %s has no val_accuracy in its last epoch (was it trained with val > 0?)",
               label, cells[c][seed].name)
        end
      end
    end
    -- seeds every candidate has
    local common = {}
    for _, seed in ipairs(seeds_of(cells[cands[1]])) do
      local all = true
      for _, c in ipairs(cands) do if not (cells[c] and cells[c][seed]) then all = false; break end end
      if all then common[#common + 1] = seed end
    end
    row.common_seeds = common
    if #common == 0 then
      row.why = "no seed has a record for every candidate"
    else
      local best, best_v
      for _, c in ipairs(cands) do
        local vs = {}
        for _, seed in ipairs(common) do vs[#vs + 1] = last_val(cells[c][seed].record) end
        local m = al.stats.mean(vs)
        row.val[c] = m
        if best_v == nil or m > best_v then best, best_v = c, m end   -- strict: ties keep the first
      end
      row.chosen = best
      row.test, row.test_seeds, row.test_na = paired(cells[best], cells[base])
      if not row.test then
        row.why = ("no test of %s vs %s: %s"):format(best, base, PAIRED.marker(row.test_na.why))
      end
    end
    for _, c in ipairs(cands) do
      local t, _, na = paired(cells[c], cells[base])
      row.descriptive[c], row.descriptive_na[c] = t, na
    end
    S.datasets[#S.datasets + 1] = row
  end
  return S
end

local function ci(t) return ("%+.2f [%+.2f, %+.2f]"):format(t.mean_diff, t.ci_low, t.ci_high) end

-- Δ of a comparison without a test: the descriptive mean, if any, with the n/a marker as its CI.
local function na_ci(na)
  local m = PAIRED.marker(na.why)
  return na.mean_diff and ("%+.2f [%s]"):format(na.mean_diff, m) or m
end

-- The confirmatory row: tested, untested (n/a), or nothing chosen.
local function confirm_row(row, v)
  local MD = require "attnlab.report.markdown"
  if row.test then
    local t = row.test
    return ("| %s | %s | %s | %s | %d | %.3f | %s |"):format(row.label, row.chosen, v, ci(t), t.n, t.t, MD.fmt_p(t.p))
  elseif row.test_na then
    local m = PAIRED.marker(row.test_na.why)
    return ("| %s | %s | %s | %s | %d | %s | %s |"):format(row.label, row.chosen, v, na_ci(row.test_na), row.test_na.n, m, m)
  end
  return ("| %s | %s | %s | %s | %d | | |"):format(row.label, row.chosen or "-", v, row.why,
    row.test_seeds and #row.test_seeds or 0)
end

-- The selection as Markdown: the confirmatory table, then the descriptive one, each with a
-- line under it naming the rows without a test and why.
function M.markdown(S)
  local out = {
    ("Chosen by mean validation accuracy (last epoch) over the seeds every candidate has; then one "
      .. "paired two-sided t-test of the chosen candidate's test accuracy against %s, unadjusted.")
      :format(S.baseline), "",
    "| dataset | chosen | mean val acc % per candidate (common seeds) | test Δ vs " .. S.baseline
      .. " (pp) [95% CI] | pairs | t | p |",
    "|---|---|---|---|---:|---:|---:|",
  }
  local na_confirm, na_descr = {}, {}
  for _, row in ipairs(S.datasets) do
    local vals = {}
    for _, c in ipairs(S.candidates) do
      vals[#vals + 1] = row.val[c] and ("%s %.2f"):format(c, 100 * row.val[c]) or ("%s -"):format(c)
    end
    local v = table.concat(vals, ", ") .. (" (%d)"):format(#row.common_seeds)
    out[#out + 1] = confirm_row(row, v)
    if row.test_na then na_confirm[#na_confirm + 1] = { label = row.label .. " " .. row.chosen, why = row.test_na.why } end
  end
  local line = PAIRED.note(na_confirm)
  if line then out[#out + 1] = "" out[#out + 1] = line end
  out[#out + 1] = ""
  out[#out + 1] = "Descriptive only (not a test: this is what choosing on the test set would see), test Δ vs "
    .. S.baseline .. " (pp) [95% CI], pairs:"
  out[#out + 1] = ""
  out[#out + 1] = "| dataset | " .. table.concat(S.candidates, " | ") .. " |"
  out[#out + 1] = "|---|" .. ("---|"):rep(#S.candidates)
  for _, row in ipairs(S.datasets) do
    local cells = {}
    for _, c in ipairs(S.candidates) do
      local t, na = row.descriptive[c], row.descriptive_na[c]
      if t then cells[#cells + 1] = ci(t) .. ", " .. t.n
      else
        cells[#cells + 1] = na_ci(na) .. ", " .. na.n
        na_descr[#na_descr + 1] = { label = row.label .. " " .. c, why = na.why }
      end
    end
    out[#out + 1] = "| " .. row.label .. " | " .. table.concat(cells, " | ") .. " |"
  end
  line = PAIRED.note(na_descr)
  if line then out[#out + 1] = "" out[#out + 1] = line end
  return table.concat(out, "\n") .. "\n"
end

return M
