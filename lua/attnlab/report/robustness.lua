-- attnlab.report.robustness -- does a normalizer's Δ against the baseline keep its sign when
-- one thing about the recipe changes (the initialisation, say)?
--
-- Two record folders, the reference condition A and the changed condition B, each with the
-- baseline and the normalizers under test, trained on the same seeds. Per dataset and
-- normalizer this gives
--   * Δ_A: test accuracy minus the baseline's, paired over A's seeds (all of them), in pp;
--   * Δ_A on the seeds B also has, so that the two Δs come from the same seeds;
--   * Δ_B, paired over B's seeds;
--   * the change Δ_B - Δ_A, as a paired t-test over the common seeds: seed s of both
--     conditions shares its data order, and whatever the pairing buys, the per-seed
--     differences (Δ_B,s - Δ_A,s) are independent across seeds, so the test is valid;
--   * a verdict on the sign:
--       "keeps its sign"            both point estimates on the same side of 0 (and
--                                   "(significant under both)" when both 95% CIs exclude 0),
--       "reverses"                  opposite sides and both 95% CIs exclude 0,
--       "changes sign (not significant under X)"   opposite sides, X's CI includes 0.
--     A Δ of exactly 0 has no sign: "zero under X".
--   A Δ (or change) whose per-seed values are all equal, or non-finite, has no test
--   (report/paired.lua): ttest_rel's [m, m] CI and p = 0 would "exclude 0" from no spread at
--   all. Its mean is shown with "n/a (<reason>)" for CI and p, and the verdict uses only its
--   sign: "keeps its sign (no test under X: no variance)", never "significant" or "reverses".
--
--   local A = al.report.load("experiments/normalizers/full/records/main")
--   local B = al.report.load("experiments/normalizers/full/records/init_timm")
--   local R = al.report.robustness.compare(A, B, { baseline = "softmax", a_name = "torch", b_name = "timm" })
--   print(al.report.robustness.markdown(R))
local al = require "attnlab"
local util = require "attnlab.util"
local index = require "attnlab.report.cells"   -- cells[label][normalizer][seed] = run
local PAIRED = require "attnlab.report.paired"

local M = {}

local function fail(fmt, ...) error("report.robustness: " .. fmt:format(...), 0) end


-- Per-seed Δ (pp) of cell minus base over the seeds both have, restricted to `only` if given.
local function deltas(cell, base, only)
  local d, seeds = {}, {}
  if not (cell and base) then return d, seeds end
  local ss = {}
  for seed in pairs(cell) do ss[#ss + 1] = seed end
  table.sort(ss)
  for _, seed in ipairs(ss) do
    if base[seed] and (not only or only[seed]) then
      d[#d + 1], seeds[#seeds + 1] = 100 * (cell[seed].acc - base[seed].acc), seed
    end
  end
  return d, seeds
end

-- Paired test of x - y (ttest_rel) -> the result, or nil and { why, mean_diff, n } when
-- there is no test (report/paired.lua).
local function test(x, y)
  local t, why, m = PAIRED.ttest(x, y)
  if t then return t end
  return nil, { why = why, mean_diff = m, n = #x }
end

-- A one-sample summary of per-seed Δs as ttest_rel of (Δ, 0): mean, CI, p; or nil and the
-- untested summary { why, mean_diff, n }.
local function summarize(d)
  local z = {}
  for i = 1, #d do z[i] = 0.0 end
  return test(d, z)
end

-- An estimate for the verdict: a ttest_rel result, or an untested summary { why, mean_diff, n }
-- (from 2 pairs on, its sign is known), else nil. A zero-width CI handed in directly counts as
-- untested too: [m, m] comes from no spread, not from evidence.
local function estimate(t, na)
  local e = t or na
  if not (e and e.mean_diff and (e.n or 2) >= 2) then return nil end
  if not e.why and not (e.ci_low and e.ci_high and e.ci_low < e.ci_high) then
    return { mean_diff = e.mean_diff, why = e.ci_low == e.ci_high and "no variance" or "no CI" }
  end
  return e
end

-- Why a side has no estimate at all: a non-finite Δ, else too few pairs.
local function no_estimate(na)
  return (na and na.why == "non-finite value") and "a non-finite Δ" or "fewer than 2 paired seeds"
end

local function sign(t) return t.mean_diff > 0 and 1 or (t.mean_diff < 0 and -1 or 0) end
local function significant(t) return not t.why and (t.ci_low > 0 or t.ci_high < 0) end

-- "no test under X: why" for the untested side(s), or nil.
local function untested_note(ta, tb, a_name, b_name)
  local names, whys = {}, {}
  for _, e in ipairs({ { ta, a_name }, { tb, b_name } }) do
    if e[1].why then names[#names + 1] = e[2]; whys[#whys + 1] = e[1].why end
  end
  if #names == 0 then return nil end
  if #names == 2 and whys[1] ~= whys[2] then
    return ("no test under %s: %s, under %s: %s"):format(names[1], whys[1], names[2], whys[2])
  end
  return ("no test under %s: %s"):format(table.concat(names, " or "), whys[1])
end

-- verdict(ta, tb, a_name, b_name [, na_a, na_b]): ta/tb ttest_rel results (or nil), na_a/na_b
-- the untested summaries { why, mean_diff, n } when there is no test.
function M.verdict(ta, tb, a_name, b_name, na_a, na_b)
  local ea, eb = estimate(ta, na_a), estimate(tb, na_b)
  if not (ea and eb) then
    local wa, wb = not ea and no_estimate(na_a), not eb and no_estimate(na_b)
    if wa and wb and wa == wb then return ("%s under %s and %s"):format(wa, a_name, b_name) end
    if wa and wb then return ("%s under %s, %s under %s"):format(wa, a_name, wb, b_name) end
    return ("%s under %s"):format(wa or wb, wa and a_name or b_name)
  end
  ta, tb = ea, eb
  local sa, sb = sign(ta), sign(tb)
  if sa == 0 or sb == 0 then return "zero under " .. (sa == 0 and a_name or b_name) end
  local untested = untested_note(ta, tb, a_name, b_name)
  if sa == sb then
    if significant(ta) and significant(tb) then return "keeps its sign (significant under both)" end
    return "keeps its sign" .. (untested and (" (" .. untested .. ")") or "")
  end
  if significant(ta) and significant(tb) then return "reverses" end
  local parts, not_sig = {}, {}
  if not ta.why and not significant(ta) then not_sig[#not_sig + 1] = a_name end
  if not tb.why and not significant(tb) then not_sig[#not_sig + 1] = b_name end
  if #not_sig > 0 then parts[1] = "not significant under " .. table.concat(not_sig, " or ") end
  parts[#parts + 1] = untested
  return ("changes sign (%s)"):format(table.concat(parts, "; "))
end

-- compare(A, B, opts) -> { baseline, a_name, b_name, rows = { { label, normalizer, a_all,
-- a_common, b, change, common_seeds, verdict } }, baseline_acc = { { label, a, b } } } where
-- a_all/a_common/b/change are ttest_rel results (Δ in pp) or nil; when nil, a_all_na /
-- a_common_na / b_na / change_na = { why, mean_diff, n } say why (report/paired.lua, from
-- 1 pair on; no pairs at all leaves both nil for change), and baseline_acc gives the
-- baseline's own accuracy under each condition ({ mean, sd, n } in %): a change of recipe
-- that moves every model says more about the recipe than about the normalizers.
-- opts: baseline (required), normalizers (default: every non-baseline normalizer of B),
-- a_name / b_name (names of the conditions; default "A" / "B"), labels (optional: a map from
-- B's dataset labels to A's, when the two conditions are two labels of one folder, e.g.
-- { newsgroups20_masked = "newsgroups20" } with A = B; only the mapped labels are compared, and
-- rows carry A's label, the dataset's plain name).
function M.compare(A, B, opts)
  opts = opts or {}
  for name, d in pairs({ A = A, B = B }) do
    if type(d) ~= "table" or type(d.runs) ~= "table" then fail("%s must be what al.report.load returns", name) end
  end
  local base = opts.baseline
  if type(base) ~= "string" then fail("opts.baseline must be a normalizer name, got %s", tostring(base)) end
  local a_name, b_name = opts.a_name or "A", opts.b_name or "B"
  local ia, ib = index(A), index(B)
  local labels = opts.labels
  if labels ~= nil then
    if type(labels) ~= "table" or next(labels) == nil then fail("opts.labels must be a non-empty map of B's labels to A's") end
    for lb, la in pairs(labels) do
      if type(lb) ~= "string" or type(la) ~= "string" then fail("opts.labels must map label strings to label strings") end
      if not ib[lb] then fail("condition %s has no records labelled %s", b_name, lb) end
      if not ia[la] then fail("condition %s has no records labelled %s", a_name, la) end
    end
  end
  local R = { baseline = base, a_name = a_name, b_name = b_name, rows = {}, baseline_acc = {} }
  -- the baseline's own accuracy (%) under each condition: { a = { mean, sd, n }, b = ... }
  local function acc_of(cell)
    local xs = {}
    -- only finite accuracies: the mean of {inf, -inf} is NaN, and a NaN would be printed
    for _, r in pairs(cell or {}) do if PAIRED.finite(r.acc) then xs[#xs + 1] = 100 * r.acc end end
    if #xs == 0 then return nil end
    return { mean = al.stats.mean(xs), sd = #xs > 1 and al.stats.sd(xs) or nil, n = #xs }
  end
  for _, label in ipairs(util.sorted_keys(labels or ib)) do
    local label_a = labels and labels[label] or label
    if not ib[label][base] then fail("%s: condition %s has no %s record", label, b_name, base) end
    R.baseline_acc[#R.baseline_acc + 1] = { label = label_a, a = acc_of((ia[label_a] or {})[base]), b = acc_of(ib[label][base]) }
    local norms = opts.normalizers
    if not norms then
      norms = {}
      for _, n in ipairs(util.sorted_keys(ib[label])) do if n ~= base then norms[#norms + 1] = n end end
    end
    for _, n in ipairs(norms) do
      local ca, cb = ia[label_a] or {}, ib[label]
      local db, seeds_b = deltas(cb[n], cb[base])
      local in_b = {}
      for _, s in ipairs(seeds_b) do in_b[s] = true end
      local da_all = deltas(ca[n], ca[base])
      local da, seeds_common = deltas(ca[n], ca[base], in_b)
      local row = { label = label_a, normalizer = n, n_a_all = #da_all, n_b = #db, common_seeds = seeds_common }
      row.a_all, row.a_all_na = summarize(da_all)
      row.a_common, row.a_common_na = summarize(da)
      row.b, row.b_na = summarize(db)
      -- Δ_B - Δ_A over the common seeds, seed by seed
      local in_common = {}
      for _, s in ipairs(seeds_common) do in_common[s] = true end
      local db_common = deltas(cb[n], cb[base], in_common)   -- same seeds, same order as da
      if #da >= 1 then row.change, row.change_na = test(db_common, da) end
      row.verdict = M.verdict(row.a_common, row.b, a_name, b_name, row.a_common_na, row.b_na)
      R.rows[#R.rows + 1] = row
    end
  end
  return R
end

local function nseeds(n) return n == 1 and "1 seed" or ("%d seeds"):format(n or 0) end

-- Δ [95% CI], n; without a test the descriptive Δ with "n/a (<reason>)" in place of the CI.
local function ci(t, na, n)
  if t then return ("%+.2f [%+.2f, %+.2f], %d"):format(t.mean_diff, t.ci_low, t.ci_high, t.n) end
  if na and na.mean_diff then return ("%+.2f [%s], %d"):format(na.mean_diff, PAIRED.marker(na.why), na.n) end
  if na and na.why ~= "no pairs" then return ("%s, %d"):format(PAIRED.marker(na.why), na.n) end
  return nseeds(n)
end

local function change_cell(r, fmt_p)
  if r.change then return ("%+.2f, p = %s"):format(r.change.mean_diff, fmt_p(r.change.p)) end
  local na = r.change_na
  if not na then return "-" end
  return (na.mean_diff and ("%+.2f, p "):format(na.mean_diff) or "p ") .. PAIRED.marker(na.why)
end

-- The n/a entries of the rows (for the line under the table): "dataset normalizer (which
-- columns)" per row and reason.
local function na_items(R)
  local items = {}
  local cols = { { "a_all_na", R.a_name }, { "a_common_na", R.a_name .. " on " .. R.b_name .. "'s seeds" },
                 { "b_na", R.b_name }, { "change_na", "change" } }
  for _, r in ipairs(R.rows) do
    local order, by = {}, {}
    for _, col in ipairs(cols) do
      local na = r[col[1]]
      if na and na.why ~= "no pairs" then
        if not by[na.why] then by[na.why] = {}; order[#order + 1] = na.why end
        table.insert(by[na.why], col[2])
      end
    end
    for _, why in ipairs(order) do
      items[#items + 1] = { label = ("%s %s (%s)"):format(r.label, r.normalizer, table.concat(by[why], ", ")), why = why }
    end
  end
  return items
end

function M.markdown(R)
  local MD = require "attnlab.report.markdown"
  local a, b = R.a_name, R.b_name
  local function acc(x)
    if not x then return "-" end
    return ("%.2f%s, %s"):format(x.mean, x.sd and (" ± %.2f"):format(x.sd) or "", nseeds(x.n))
  end
  local out = {
    ("%s's own test accuracy %% (mean ± sd over seeds):"):format(R.baseline), "",
    ("| dataset | under %s | under %s |"):format(a, b), "|---|---|---|",
  }
  for _, x in ipairs(R.baseline_acc) do out[#out + 1] = ("| %s | %s | %s |"):format(x.label, acc(x.a), acc(x.b)) end
  out[#out + 1] = ""
  out[#out + 1] = ("| dataset | normalizer | Δ vs %s under %s, all seeds (pp) [95%% CI], n | under %s, the seeds %s has | "
    .. "under %s | change %s - %s: mean, p | sign |"):format(R.baseline, a, a, b, b, b, a)
  out[#out + 1] = "|---|---|---|---|---|---|---|"
  for _, r in ipairs(R.rows) do
    out[#out + 1] = ("| %s | %s | %s | %s | %s | %s | %s |"):format(r.label, r.normalizer, ci(r.a_all, r.a_all_na, r.n_a_all),
      ci(r.a_common, r.a_common_na, #r.common_seeds), ci(r.b, r.b_na, r.n_b), change_cell(r, MD.fmt_p), r.verdict)
  end
  local line = PAIRED.note(na_items(R), "; the sign verdict claims no significance from them")
  if line then out[#out + 1] = "" out[#out + 1] = line end
  return table.concat(out, "\n") .. "\n"
end

return M
