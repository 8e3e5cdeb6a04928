-- attnlab.report.paired -- when a paired comparison gets a t-test in a report at all.
--
-- stats.ttest_rel keeps SciPy's conventions for degenerate input: differences that are all
-- equal give t = +-inf, p = 0 and a CI of [m, m] (nonzero m), or t = p = NaN (m = 0). Those
-- are limits, not evidence: with two seeds that both moved by exactly one point nothing
-- about the seed-to-seed spread is known. The report layer (report/init.lua, selection.lua,
-- robustness.lua) therefore asks here first and records no t, p, CI, d or Wilcoxon p for
--   "no pairs" / "1 pair"     a t-test needs at least 2 matched seeds,
--   "non-finite value"        an accuracy (or Δ) is NaN or +-inf,
--   "no variance"             every difference is the same nonzero value (to rounding,
--                             P.SPREAD_TOL),
--   "identical samples"       every difference is 0,
-- and prints "n/a (<reason>)" with a line under the table saying why (P.note).
--
--   local t, why, mean_diff = P.ttest(a, b)   -- ttest_rel(a, b), or nil and the reason
local stats = require "attnlab.report.stats"   -- pure Lua: this module needs no C binding

local P = {}

local huge = math.huge

local function finite(v) return type(v) == "number" and v == v and v ~= huge and v ~= -huge end
P.finite = finite

-- Differences closer than this (relative to the larger of 1 and the largest |value|) are one
-- value. Accuracies are counts over a test set, so two distinct differences are at least
-- 1/N apart (1e-6 for a million test examples), while a - b of such fractions carries ~1e-16
-- of rounding: {0.31, 0.93, 0.57, 0.47} - {0.30, 0.92, 0.56, 0.46} differ only there, and
-- ttest_rel reports t = 3.8e14, p = 4e-44 for them.
P.SPREAD_TOL = 1e-9

-- why(a, b) -> nil when the pairs (a[i], b[i]) can be t-tested; else the reason (see the top)
-- and the mean difference when one is defined (the one difference, or the common one).
function P.why(a, b)
  local n = #a
  if n == 0 then return "no pairs" end
  local d, scale, lo, hi = {}, 1.0, huge, -huge
  for i = 1, n do
    local x, y = a[i], b[i]
    if not (finite(x) and finite(y)) then return "non-finite value" end
    scale = math.max(scale, math.abs(x), math.abs(y))
    d[i] = x - y
    lo, hi = math.min(lo, d[i]), math.max(hi, d[i])
  end
  if n == 1 then return "1 pair", d[1] end
  if hi - lo > P.SPREAD_TOL * scale then return nil end
  if lo == 0 and hi == 0 then return "identical samples", 0.0 end
  return "no variance", stats.mean(d)
end

-- ttest(a, b [, opts]) -> the ttest_rel result, or nil, the reason and the mean difference.
function P.ttest(a, b, opts)
  local why, m = P.why(a, b)
  if why then return nil, why, m end
  return stats.ttest_rel(a, b, opts)
end

function P.marker(why) return "n/a (" .. why .. ")" end

local EXPLAIN = {
  ["no pairs"] = "no seed has a record of both",
  ["1 pair"] = "one matched seed, and a t-test needs at least 2",
  ["non-finite value"] = "an accuracy is NaN or infinite",
  ["no variance"] = "every matched seed gave the same Δ (to rounding), so there is no spread to test against "
    .. "and t = ±inf, p = 0 would be an artefact, not evidence",
  ["identical samples"] = "the same accuracy on every matched seed, Δ = 0 with no spread",
}

-- explain(why) -> what "n/a (why)" means, for the line under a table.
function P.explain(why)
  return EXPLAIN[why] or (why:match("^no records of ") and "nothing to compare") or why
end

-- note(items) -> one line saying why the rows of a table show n/a, or nil when none does.
-- items: { { label = what the row is called, why = reason }, ... } in table order.
function P.note(items, tail)
  if #items == 0 then return nil end
  local order, by = {}, {}
  for _, it in ipairs(items) do
    if not by[it.why] then by[it.why] = {}; order[#order + 1] = it.why end
    table.insert(by[it.why], it.label)
  end
  local parts = {}
  for _, why in ipairs(order) do
    parts[#parts + 1] = ("%s — %s: %s"):format(table.concat(by[why], ", "), why, P.explain(why))
  end
  return "No test (n/a): " .. table.concat(parts, "; ") .. ". Never marked significant" .. (tail or "") .. "."
end

return P
