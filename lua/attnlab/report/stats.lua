-- attnlab.report.stats (also attnlab.stats) -- the statistics of the normalizer study: paired t-test, Wilcoxon signed-rank,
-- Holm / Bonferroni / Benjamini-Hochberg corrections, and the special functions under them.
--
-- Pure Lua 5.4 (no C, no binding needed): every function takes plain Lua arrays of numbers
-- (a 1-D tensor with :totable() is also accepted) and returns numbers or tables.
-- Numbers are doubles throughout; sums follow numpy's pairwise summation order, so the
-- t statistic agrees with SciPy's to the last bit on the same inputs.
--
--   ttest_rel(a, b [, opts])   paired t-test of d = a - b (as scipy.stats.ttest_rel) ->
--       {t=, df=, p=, mean_diff=, se=, ci_low=, ci_high=, n=, dropped=, alternative=,
--        confidence=}  (se = sd(d)/sqrt(n); dropped = pairs removed by nan_policy "omit")
--       opts.alternative = "two-sided" (default) | "less" | "greater"  (H1: mean(d) </> 0)
--       opts.confidence  = 0.95 (CI for mean(d); one-sided CIs for "less"/"greater")
--       opts.nan_policy  = "raise" (default, alias "error") | "omit" (drop pairs with a NaN)
--                          | "propagate" (NaN statistic, p and CI, like SciPy's default)
--       Zero variance of d (every d_i exactly equal): t = +-inf and p = 0 for a nonzero
--       difference (p = 1 for the one-sided alternative pointing the other way), t = NaN and
--       p = NaN for identical samples; the CI is then [mean, mean] (a one-sided CI keeps its
--       infinite end, where SciPy's -inf * 0 gives NaN). SciPy computes the same limit, except
--       that its rounded mean can leave a variance of ~1e-34 for e.g. d = {0.1, 0.1, 0.1}
--       and report t ~ 1e16 instead of inf.
--       Errors: fewer than 2 pairs, unequal lengths, non-numbers, +-inf, NaN (by default).
--   holm(p [, alpha])          Holm step-down adjusted p-values in input order (as statsmodels
--                              multipletests(method='holm')), and reject flags at alpha (0.05)
--   bonferroni(p [, alpha]), bh(p [, alpha])   same shape of result (bh = 'fdr_bh')
--   wilcoxon(a, b [, opts])    signed-rank test of d = a - b (b = nil: a holds the differences)
--       -> {statistic=, p=, method="exact"|"approx", n=, n_zero=, z= (approx only), note=}
--       opts.method = "auto" (default: exact when n <= 25 with no zeros and no ties among |d|,
--       else the normal approximation with tie correction) | "exact" | "approx". SciPy 1.10's
--       "auto" goes exact up to n = 50 and keeps "exact" with ties (truncating R+); here
--       ties or zeros always fall back to the approximation, and note= says so.
--       opts.zero_method = "wilcox" (default) | "pratt" | "zsplit"; opts.alternative;
--       opts.correction = false (continuity correction of the approximation)
--       One pair: the exact null of n = 1 gives p = 1 (SciPy too), with no note; that is no
--       test, and the report (report/paired.lua) runs none below 2 pairs.
--   cohen_d_paired(a, b)       mean(d) / sd(d), sd with n - 1
--   mean(x), sd(x) (n - 1), summary(x) -> {n=, mean=, sd=, min=, max=, median=}
--       (summary of one value has sd = NaN; sd() itself needs 2 values). +-inf values are
--       accepted and follow IEEE, as numpy: mean({inf, -inf}) is NaN. The report averages
--       finite values only.
--   t_cdf(t, df), t_sf(t, df), t_ppf(q, df), t_pdf(t, df)       Student t, any real df > 0
--   normal_cdf(x), normal_sf(x), normal_ppf(q), normal_pdf(x)
--   betainc(a, b, x)           regularized incomplete beta I_x(a, b)
--
-- Accuracy (tests/lua/test_stats.lua, against mpmath at 50 digits): the t tail is
-- 0.5 * I_x(df/2, 1/2), x = df/(df+t^2), from the continued fraction of I_x (DLMF 8.17.22,
-- modified Lentz, rearranged so that it does not cancel for df up to 1e14; from df = 1e15 the
-- normal tail plus its 1/df term, Fisher 1925, as the fraction's terms overflow), so both tails
-- keep <= 2e-13 relative error (~1e-15 for moderate t) down to the underflow threshold
-- (p ~ 1e-300), for any real df. The normal tail is the incomplete gamma Q(1/2, x^2/2)
-- (series / Legendre continued fraction, DLMF 8.7.3 and 8.9.2), <= 2e-15. Quantiles invert
-- the CDFs by Newton on log F(e^u) inside a bracket guaranteed by bounds (normal <= t <=
-- power-law tail), falling back to bisection: <= 1e-13 relative (SciPy's stdtrit: 1e-5).
-- Distribution functions return NaN for a NaN argument and raise for a bad parameter.
local M = {}

local abs, sqrt, floor, huge = math.abs, math.sqrt, math.floor, math.huge
local NAN = -(0.0 / 0.0)          -- negated so that it prints as "nan", not "-nan", on x86

-- The distributions and special functions (report/distributions.lua) go into M first.
local D = require("attnlab.report.distributions")(M)
local util = require("attnlab.util")   -- plain Lua too: this file loads without the C module
local fail, isnan, describe = D.fail, D.isnan, D.describe
local lbeta, lgamma, log1p, pwsum, rlog1 = D.lbeta, D.lgamma, D.log1p, D.pwsum, D.rlog1

-- ---------------------------------------------------------------------------------------
-- Input checking for the tests.

-- Accept a Lua array or anything with :totable() (a 1-D attnlab tensor).
local function as_array(fn, name, x)
  if type(x) == "userdata" then
    local ok, t = pcall(function() return x:totable() end)
    if ok and type(t) == "table" then return t end
  end
  if type(x) ~= "table" then fail(fn, "%s is %s, want an array of numbers", name, describe(x)) end
  return x
end

-- Check that x[1..#x] are numbers; returns the count of NaN values and the first NaN index.
local function check_numbers(fn, name, x, allow_inf)
  local nnan, first = 0, nil
  for i = 1, #x do
    local v = x[i]
    if type(v) ~= "number" then fail(fn, "%s[%d] is %s, want a number", name, i, describe(v)) end
    if v ~= v then
      nnan = nnan + 1
      first = first or i
    elseif not allow_inf and (v == huge or v == -huge) then
      fail(fn, "%s[%d] is %s, want a finite number", name, i, tostring(v))
    end
  end
  return nnan, first
end

local NAN_POLICIES = { raise = "raise", error = "raise", omit = "omit", propagate = "propagate" }

-- Paired differences d = a - b (as doubles) after the NaN policy; returns d, dropped, nanflag.
local function paired_diffs(fn, a, b, nan_policy)
  a, b = as_array(fn, "a", a), as_array(fn, "b", b)
  if #a ~= #b then
    fail(fn, "a has %d values and b has %d; paired samples need equal lengths", #a, #b)
  end
  local na, ia = check_numbers(fn, "a", a)
  local nb, ib = check_numbers(fn, "b", b)
  if (na > 0 or nb > 0) and nan_policy == "raise" then
    local name, i = "a", ia
    if not ia or (ib and ib < ia) then name, i = "b", ib end
    -- (only ttest_rel takes nan_policy: wilcoxon and cohen_d_paired refuse it as an unknown option)
    fail(fn, "%s[%d] is NaN (%d NaN in a, %d in b); %s", name, i, na, nb, fn == "ttest_rel"
         and "pass nan_policy=\"omit\" to drop those pairs" or "drop the pairs with a NaN first")
  end
  local d, dropped, hasnan = {}, 0, false
  for i = 1, #a do
    local ai, bi = a[i] + 0.0, b[i] + 0.0
    if ai ~= ai or bi ~= bi then
      if nan_policy == "omit" then dropped = dropped + 1 else d[#d + 1] = NAN; hasnan = true end
    else
      d[#d + 1] = ai - bi
    end
  end
  return d, dropped, hasnan
end

-- The options each test reads: any other key (alternate = "less", zero_metod = "pratt") is
-- refused, not ignored -- ignored, the test would run with the default, a different test.
local KNOWN_OPTS = {
  ttest_rel = { "alternative", "confidence", "nan_policy" },
  wilcoxon = { "alternative", "method", "zero_method", "correction" },
}

local function check_opts(fn, opts)
  if opts == nil then return {} end
  if type(opts) ~= "table" then fail(fn, "options are %s, want a table", describe(opts)) end
  local bad = KNOWN_OPTS[fn] and util.unknown_keys(opts, KNOWN_OPTS[fn])
  if bad then fail(fn, "%s", bad) end
  return opts
end

local function check_alternative(fn, alt)
  alt = alt or "two-sided"
  if alt ~= "two-sided" and alt ~= "less" and alt ~= "greater" then
    fail(fn, "alternative = %s, want \"two-sided\", \"less\" or \"greater\"", tostring(alt))
  end
  return alt
end

local function check_nan_policy(fn, pol)
  local p = NAN_POLICIES[pol or "raise"]
  if not p then
    fail(fn, "nan_policy = %s, want \"raise\" (or \"error\"), \"omit\" or \"propagate\"",
         tostring(pol))
  end
  return p
end

-- ---------------------------------------------------------------------------------------
-- Paired t-test.

-- mean and unbiased variance of d computed as scipy.stats.ttest_rel does (numpy pairwise
-- sums, var = mean((d - mean)^2) * (n / (n - 1))); an exactly constant d gets var = 0.
local function mean_var(d)
  local n = #d
  local m = pwsum(d, 1, n) / n
  local const = true
  for i = 2, n do if d[i] ~= d[1] then const = false; break end end
  if const then return d[1], 0.0 end
  local s = {}
  for i = 1, n do local z = d[i] - m; s[i] = z * z end
  return m, (pwsum(s, 1, n) / n) * (n / (n - 1))
end

function M.ttest_rel(a, b, opts)
  local fn = "ttest_rel"
  opts = check_opts(fn, opts)
  local alt = check_alternative(fn, opts.alternative)
  local pol = check_nan_policy(fn, opts.nan_policy)
  local conf = opts.confidence
  if conf == nil then conf = 0.95 end
  if type(conf) ~= "number" or not (conf >= 0 and conf <= 1) then
    fail(fn, "confidence = %s, want a number in [0, 1]", tostring(conf))
  end
  local d, dropped, hasnan = paired_diffs(fn, a, b, pol)
  local n = #d
  if n < 2 then
    if dropped > 0 then
      fail(fn, "need at least 2 pairs, got %d after dropping %d pairs with NaN", n, dropped)
    end
    fail(fn, "need at least 2 pairs, got %d", n)
  end
  local df = n - 1
  local res = { n = n, df = df, alternative = alt, confidence = conf, dropped = dropped }
  if hasnan then                       -- nan_policy = "propagate"
    res.t, res.p, res.mean_diff, res.se, res.ci_low, res.ci_high = NAN, NAN, NAN, NAN, NAN, NAN
    return res
  end
  local m, v = mean_var(d)
  local se = sqrt(v / n)
  local t = m / se                    -- +-inf for constant nonzero d, NaN (0/0) for d == 0
  if t ~= t then t = NAN end          -- (0/0 is the negative NaN on x86: it printed as "-nan")
  local p
  if isnan(t) then
    p = NAN
  elseif alt == "less" then
    p = M.t_cdf(t, df)
  elseif alt == "greater" then
    p = M.t_cdf(-t, df)
  else
    p = 2.0 * M.t_cdf(-abs(t), df)
  end
  local lo, hi
  if alt == "less" then
    lo, hi = -huge, M.t_ppf(conf, df)
  elseif alt == "greater" then
    lo, hi = M.t_ppf(1.0 - conf, df), huge
  else
    local tp = (1.0 - conf) / 2
    lo, hi = M.t_ppf(tp, df), M.t_ppf(1.0 - tp, df)
  end
  -- An infinite end stays infinite even when se = 0 (SciPy's inf * 0 gives NaN there).
  local function limit(q) if q == huge or q == -huge then return q end return q * se + m end
  res.t, res.p, res.mean_diff, res.se = t, p, m, se
  res.ci_low, res.ci_high = limit(lo), limit(hi)
  return res
end

-- ---------------------------------------------------------------------------------------
-- Multiple-comparison corrections (statsmodels.stats.multitest.multipletests).

local function check_pvals(fn, p)
  p = as_array(fn, "p", p)
  for i = 1, #p do
    local v = p[i]
    if type(v) ~= "number" then fail(fn, "p[%d] is %s, want a number", i, describe(v)) end
    if v ~= v then fail(fn, "p[%d] is NaN", i) end
    if v < 0 or v > 1 then fail(fn, "p[%d] = %.17g, want 0 <= p <= 1", i, v) end
  end
  return p
end

local function check_alpha(fn, alpha)
  if alpha == nil then return 0.05 end
  if type(alpha) ~= "number" or not (alpha > 0 and alpha < 1) then
    fail(fn, "alpha = %s, want a number in (0, 1)", tostring(alpha))
  end
  return alpha
end

-- Indices of p in ascending order; ties keep input order (the adjusted values of tied
-- p-values come out equal whatever their order, so this matches statsmodels' argsort).
local function ascending(p)
  local idx = {}
  for i = 1, #p do idx[i] = i end
  table.sort(idx, function(i, j) return p[i] < p[j] or (p[i] == p[j] and i < j) end)
  return idx
end

-- The frame of the three corrections: check p and alpha, then `fill` writes the adjusted
-- p-values (capped at 1) and the reject flags in input order; returns adj, rej.
local function correction(fn, fill)
  return function(p, alpha)
    p = check_pvals(fn, p)
    alpha = check_alpha(fn, alpha)
    local adj, rej = {}, {}
    fill(p, alpha, #p, adj, rej)
    return adj, rej
  end
end

local function cap1(v) return v > 1 and 1.0 or v end

-- Holm (1979) step-down: with p sorted ascending, adj_(k) = max_{j<=k} (m-j+1) p_(j), capped
-- at 1; H_(k) is rejected while every p_(j), j <= k, is <= alpha / (m-j+1).
M.holm = correction("holm", function(p, alpha, m, adj, rej)
  local order = ascending(p)
  local running, stopped = 0.0, false
  for k = 1, m do
    local i = order[k]
    local pk = p[i] + 0.0
    if not stopped and pk > alpha / (m - k + 1) then stopped = true end
    local raw = pk * (m - k + 1)
    if raw > running then running = raw end
    adj[i] = cap1(running)
    rej[i] = not stopped
  end
end)

M.bonferroni = correction("bonferroni", function(p, alpha, m, adj, rej)
  for i = 1, m do
    adj[i] = cap1(p[i] * m + 0.0)
    rej[i] = p[i] <= alpha / m
  end
end)

-- Benjamini-Hochberg (1995) step-up: adj_(k) = min_{j>=k} p_(j) / (j/m), capped at 1;
-- reject H_(1..K) for the largest K with p_(K) <= (K/m) alpha.
M.bh = correction("bh", function(p, alpha, m, adj, rej)
  local order = ascending(p)
  local kmax = 0
  for k = 1, m do
    if p[order[k]] <= (k / m) * alpha then kmax = k end
  end
  local running = huge
  for k = m, 1, -1 do
    local i = order[k]
    local raw = p[i] / (k / m)
    if raw < running then running = raw end
    adj[i] = cap1(running)
    rej[i] = k <= kmax
  end
end)

-- ---------------------------------------------------------------------------------------
-- Wilcoxon signed-rank test (scipy.stats.wilcoxon).

M.WILCOXON_EXACT_MAX_N = 25

-- Null distribution of R+ for n untied nonzero differences: pmf[k+1] = P(R+ = k),
-- k = 0 .. n(n+1)/2, built by adding rank j with probability 1/2. Every value is a count
-- over 2^n, so up to n = 53 the table and its partial sums are exact in doubles.
local wilcoxon_pmf_cache = {}
local function wilcoxon_pmf(n)
  local c = wilcoxon_pmf_cache[n]
  if c then return c end
  c = { 1.0 }
  for j = 1, n do
    local top = j * (j + 1) // 2
    local prev = #c - 1                 -- old maximum sum
    for k = prev + 1, top do c[k + 1] = 0.0 end
    for k = top, 0, -1 do
      local v = 0.5 * c[k + 1]
      if k - j >= 0 then v = v + 0.5 * c[k - j + 1] end
      c[k + 1] = v
    end
  end
  wilcoxon_pmf_cache[n] = c
  return c
end

-- Average ranks of v (1-based), and the sizes of the tie groups.
local function rank_avg(v)
  local n = #v
  local idx = {}
  for i = 1, n do idx[i] = i end
  table.sort(idx, function(i, j) return v[i] < v[j] or (v[i] == v[j] and i < j) end)
  local r, ties = {}, {}
  local k = 1
  while k <= n do
    local e = k
    while e < n and v[idx[e + 1]] == v[idx[k]] do e = e + 1 end
    local avg = 0.5 * (k + e)
    for q = k, e do r[idx[q]] = avg end
    if e > k then ties[#ties + 1] = e - k + 1 end
    k = e + 1
  end
  return r, ties
end

function M.wilcoxon(a, b, opts)
  local fn = "wilcoxon"
  opts = check_opts(fn, opts)
  local alt = check_alternative(fn, opts.alternative)
  local method = opts.method or "auto"
  if method ~= "auto" and method ~= "exact" and method ~= "approx" then
    fail(fn, "method = %s, want \"auto\", \"exact\" or \"approx\"", tostring(method))
  end
  local zm = opts.zero_method or "wilcox"
  if zm ~= "wilcox" and zm ~= "pratt" and zm ~= "zsplit" then
    fail(fn, "zero_method = %s, want \"wilcox\", \"pratt\" or \"zsplit\"", tostring(zm))
  end
  local d
  if b == nil then
    d = as_array(fn, "d", a)
    local nn, i = check_numbers(fn, "d", d)
    if nn > 0 then fail(fn, "d[%d] is NaN", i) end
    local c = {}
    for k = 1, #d do c[k] = d[k] + 0.0 end
    d = c
  else
    d = paired_diffs(fn, a, b, "raise")
  end
  local n = #d
  if n == 0 then fail(fn, "need at least 1 pair, got 0") end

  local nzero = 0
  for i = 1, n do if d[i] == 0 then nzero = nzero + 1 end end
  local absd = {}
  for i = 1, n do absd[i] = abs(d[i]) end
  local _, nz_ties = rank_avg((function()   -- ties among the nonzero |d|
    local t = {}
    for i = 1, n do if d[i] ~= 0 then t[#t + 1] = absd[i] end end
    return t
  end)())
  local note
  local mode = method
  if mode == "auto" then
    mode = (n <= M.WILCOXON_EXACT_MAX_N and nzero == 0 and #nz_ties == 0) and "exact" or "approx"
  elseif mode == "exact" and (nzero > 0 or #nz_ties > 0) then
    mode = "approx"
    note = "the exact distribution assumes no zeros and no ties; used the normal approximation"
  end
  if mode == "approx" and zm ~= "zsplit" and nzero == n then
    fail(fn, "all %d differences are zero; zero_method \"%s\" needs a nonzero one", n, zm)
  end
  if mode == "approx" and zm == "wilcox" and nzero > 0 then
    local keep = {}
    for i = 1, n do if d[i] ~= 0 then keep[#keep + 1] = d[i] end end
    d = keep
    absd = {}
    for i = 1, #d do absd[i] = abs(d[i]) end
  end
  local count = #d
  local r, ties = rank_avg(absd)
  local rp, rm, rz = {}, {}, {}
  for i = 1, count do
    rp[i] = d[i] > 0 and r[i] or 0.0
    rm[i] = d[i] < 0 and r[i] or 0.0
    rz[i] = d[i] == 0 and r[i] or 0.0
  end
  local r_plus, r_minus = pwsum(rp, 1, count), pwsum(rm, 1, count)
  if zm == "zsplit" then
    local r_zero = pwsum(rz, 1, count)
    r_plus, r_minus = r_plus + r_zero / 2, r_minus + r_zero / 2
  end
  local T = alt == "two-sided" and math.min(r_plus, r_minus) or r_plus
  local res = { statistic = T, method = mode, n = count, n_zero = nzero, note = note }

  if mode == "approx" then
    local mn = count * (count + 1.0) * 0.25
    local se = count * (count + 1.0) * (2.0 * count + 1.0)
    if zm == "pratt" then
      -- zeros take part in the ranking but not in R+ / R- (Cureton 1967)
      mn = mn - nzero * (nzero + 1.0) * 0.25
      se = se - nzero * (nzero + 1.0) * (2.0 * nzero + 1.0)
      local nzr = {}
      for i = 1, count do if d[i] ~= 0 then nzr[#nzr + 1] = r[i] end end
      _, ties = rank_avg(nzr)
    end
    local tc = 0.0
    for _, t in ipairs(ties) do tc = tc + t * (t * t - 1) end
    se = se - 0.5 * tc
    se = sqrt(se / 24)
    local cc = 0.0
    if opts.correction then
      if alt == "two-sided" then
        cc = T > mn and 0.5 or (T < mn and -0.5 or 0.0)
      elseif alt == "less" then cc = -0.5 else cc = 0.5 end
    end
    local z = (T - mn - cc) / se
    local p
    if alt == "two-sided" then p = 2.0 * M.normal_sf(abs(z))
    elseif alt == "greater" then p = M.normal_sf(z)
    else p = M.normal_cdf(z) end
    res.z, res.p = z, p
    if count < 10 then
      local small = "fewer than 10 differences: the normal approximation is rough"
      res.note = res.note and (res.note .. "; " .. small) or small
    end
    return res
  end

  local pmf = wilcoxon_pmf(count)
  local N = #pmf - 1
  local k = floor(r_plus)                -- an integer: no ties in exact mode
  local function psum(i, j) local s = 0.0; for q = i, j do s = s + pmf[q + 1] end; return s end
  local p
  if alt == "two-sided" then
    if k == N // 2 then
      p = 1.0
    else
      p = 2.0 * math.min(psum(0, k), psum(k, N))
    end
  elseif alt == "greater" then
    p = psum(k, N)
  else
    p = psum(0, k)
  end
  res.p = math.min(math.max(p, 0.0), 1.0)
  return res
end

-- ---------------------------------------------------------------------------------------
-- Descriptive statistics.

local function numbers(fn, x, need)
  x = as_array(fn, "x", x)
  local nn, i = check_numbers(fn, "x", x, true)
  if nn > 0 then fail(fn, "x[%d] is NaN", i) end
  if #x < need then fail(fn, "need at least %d values, got %d", need, #x) end
  local c = {}
  for k = 1, #x do c[k] = x[k] + 0.0 end
  return c
end

function M.mean(x)
  x = numbers("mean", x, 1)
  return pwsum(x, 1, #x) / #x
end

local function sd_of(x)
  local n = #x
  local m = pwsum(x, 1, n) / n
  local s = {}
  for i = 1, n do local z = x[i] - m; s[i] = z * z end
  return sqrt(pwsum(s, 1, n) / (n - 1)), m
end

function M.sd(x)
  return (sd_of(numbers("sd", x, 2)))
end

-- {n, mean, sd, min, max, median}; sd is NaN when n = 1.
function M.summary(x)
  x = numbers("summary", x, 1)
  local n = #x
  local s = {}
  for i = 1, n do s[i] = x[i] end
  table.sort(s)
  local med = n % 2 == 1 and s[(n + 1) // 2] or 0.5 * (s[n // 2] + s[n // 2 + 1])
  local sd, m = NAN, pwsum(x, 1, n) / n
  if n >= 2 then sd = sd_of(x) end
  return { n = n, mean = m, sd = sd, min = s[1], max = s[n], median = med }
end

-- Cohen's d for paired samples (d_z): mean(a - b) / sd(a - b). +-inf / NaN as ttest_rel
-- when every difference is equal.
function M.cohen_d_paired(a, b)
  local fn = "cohen_d_paired"
  local d = paired_diffs(fn, a, b, "raise")
  if #d < 2 then fail(fn, "need at least 2 pairs, got %d", #d) end
  local m, v = mean_var(d)
  local e = m / sqrt(v)
  if e ~= e then return NAN end       -- (identical samples: 0/0, printed "-nan" on x86)
  return e
end

-- Internals exposed for the tests only (not part of the API).
M._internal = { lgamma = lgamma, lbeta = lbeta, log1p = log1p, rlog1 = rlog1, pwsum = pwsum,
                wilcoxon_pmf = wilcoxon_pmf }

return M
