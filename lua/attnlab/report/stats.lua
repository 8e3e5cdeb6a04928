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
--   cohen_d_paired(a, b)       mean(d) / sd(d), sd with n - 1
--   mean(x), sd(x) (n - 1), summary(x) -> {n=, mean=, sd=, min=, max=, median=}
--       (summary of one value has sd = NaN; sd() itself needs 2 values)
--   t_cdf(t, df), t_sf(t, df), t_ppf(q, df), t_pdf(t, df)       Student t, any real df > 0
--   normal_cdf(x), normal_sf(x), normal_ppf(q), normal_pdf(x)
--   betainc(a, b, x)           regularized incomplete beta I_x(a, b)
--
-- Accuracy (tests/lua/test_stats.lua, against mpmath at 50 digits): the t tail is
-- 0.5 * I_x(df/2, 1/2), x = df/(df+t^2), from the continued fraction of I_x (DLMF 8.17.22,
-- modified Lentz, rearranged so that it does not cancel for df up to 1e14), so both tails
-- keep <= 2e-13 relative error (~1e-15 for moderate t) down to the underflow threshold
-- (p ~ 1e-300), for any real df. The normal tail is the incomplete gamma Q(1/2, x^2/2)
-- (series / Legendre continued fraction, DLMF 8.7.3 and 8.9.2), <= 2e-15. Quantiles invert
-- the CDFs by Newton on log F(e^u) inside a bracket guaranteed by bounds (normal <= t <=
-- power-law tail), falling back to bisection: <= 1e-13 relative (SciPy's stdtrit: 1e-5).
-- Distribution functions return NaN for a NaN argument and raise for a bad parameter.
local M = {}

local abs, exp, log, sqrt, floor = math.abs, math.exp, math.log, math.sqrt, math.floor
local huge = math.huge
local NAN = -(0.0 / 0.0)          -- negated so that it prints as "nan", not "-nan", on x86
local HALF_LOG_2PI = 0.91893853320467274178
local INV_SQRT_2PI = 0.39894228040143267794
local DBL_MAX = 1.7976931348623157e308

-- ---------------------------------------------------------------------------------------
-- Errors: "attnlab.stats.<fn>: <what is wrong>", raised without a position prefix.

local function fail(fn, fmt, ...)
  error(("attnlab.stats.%s: " .. fmt):format(fn, ...), 0)
end

local function isnan(v) return v ~= v end

local function describe(v)
  if type(v) == "string" then return ("a string (%q)"):format(v) end
  return "a " .. type(v)
end

-- ---------------------------------------------------------------------------------------
-- Elementary helpers Lua's math library lacks.

-- log(1 + x) to a few ulps for all x > -1: the rounding of u = 1 + x is undone by the
-- factor x / (u - 1) (Goldberg 1991, "What every computer scientist...", Theorem 4).
local function log1p(x)
  if x == huge then return huge end
  local u = 1.0 + x
  if u == 1.0 then return x end
  return log(u) * x / (u - 1.0)
end

-- Sum of x[i0 .. i0+n-1] in numpy's pairwise order (8 accumulators up to 128 items, then
-- halves cut at a multiple of 8), so means and variances match numpy/SciPy bit for bit.
local function pwsum(x, i0, n)
  if n < 8 then
    local s = 0.0
    for i = i0, i0 + n - 1 do s = s + x[i] end
    return s
  elseif n <= 128 then
    local r0, r1, r2, r3 = x[i0], x[i0 + 1], x[i0 + 2], x[i0 + 3]
    local r4, r5, r6, r7 = x[i0 + 4], x[i0 + 5], x[i0 + 6], x[i0 + 7]
    local nm = n - n % 8
    for i = i0 + 8, i0 + nm - 1, 8 do
      r0, r1, r2, r3 = r0 + x[i], r1 + x[i + 1], r2 + x[i + 2], r3 + x[i + 3]
      r4, r5, r6, r7 = r4 + x[i + 4], r5 + x[i + 5], r6 + x[i + 6], r7 + x[i + 7]
    end
    local s = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for i = i0 + nm, i0 + n - 1 do s = s + x[i] end
    return s
  end
  local n2 = n // 2
  n2 = n2 - n2 % 8
  return pwsum(x, i0, n2) + pwsum(x, i0 + n2, n - n2)
end

-- Stirling series remainder lgamma(x) - [(x-1/2) log x - x + log(2 pi)/2], x >= 10
-- (Bernoulli terms B_2k / (2k (2k-1) x^(2k-1)) up to k = 7; the next term is < 4e-17).
local function stirling_corr(x)
  local r = 1.0 / x
  local r2 = r * r
  return r * (1 / 12 - r2 * (1 / 360 - r2 * (1 / 1260 - r2 * (1 / 1680
         - r2 * (1 / 1188 - r2 * (691 / 360360 - r2 / 156))))))
end

-- (zeta(k) - 1) / k for k = 2 .. 30 (computed with mpmath at 40 digits).
local LG_COEF = {
  3.2246703342411322e-1, 6.7352301053198095e-2, 2.0580808427784548e-2, 7.3855510286739853e-3,
  2.8905103307415233e-3, 1.192753911703261e-3, 5.0966952474304242e-4, 2.2315475845357938e-4,
  9.9457512781808534e-5, 4.4926236738133142e-5, 2.0507212775670692e-5, 9.4394882752683959e-6,
  4.3748667899074878e-6, 2.0392157538013662e-6, 9.5514121304074198e-7, 4.492469198764566e-7,
  2.1207184805554666e-7, 1.00432248239681e-7, 4.7698101693639806e-8, 2.2711094608943165e-8,
  1.0838659214896954e-8, 5.1834750419700467e-9, 2.4836745438024783e-9, 1.1921401405860912e-9,
  5.731367241678862e-10, 2.7595228851242331e-10, 1.3304764374244489e-10, 6.4229645638381e-11,
  3.1044247747322273e-11,
}
local ONE_MINUS_EULER = 0.42278433509846713939

-- log Gamma(1 + z) for |z| <= 1/2 to ~1e-17 absolute, from
-- log Gamma(1+z) = -log1p(z) + (1 - gamma) z + sum_{k>=2} (zeta(k) - 1) (-z)^k / k
-- (Abramowitz & Stegun 6.1.33); the terms fall like (z/2)^k, so 29 of them suffice.
local function lgamma1p(z)
  local w = -z
  local s = LG_COEF[#LG_COEF]
  for k = #LG_COEF - 1, 1, -1 do s = s * w + LG_COEF[k] end
  return -log1p(z) + ONE_MINUS_EULER * z + s * w * w
end

-- log Gamma(x), x > 0: the series above after an exact shift into [0.5, 1.5) below 10
-- (~1e-16 absolute near the small half-integers the t distribution uses), Stirling above
-- (~3e-15 absolute; large arguments only reach lbeta through its combined form).
local function lgamma(x)
  if x >= 10 then
    return (x - 0.5) * log(x) - x + HALF_LOG_2PI + stirling_corr(x)
  elseif x < 0.5 then
    return lgamma1p(x) - log(x)
  end
  local n = floor(x - 0.5)              -- x - n in [0.5, 1.5); every x - i is exact
  local prod = 1.0
  for i = 1, n do prod = prod * (x - i) end
  return lgamma1p(x - n - 1) + log(prod)
end

-- log B(a, b). When both arguments are large, lgamma(a) + lgamma(b) - lgamma(a+b) would
-- cancel ~log(a) * a of magnitude; the Stirling terms are combined analytically instead
-- (the leading parts collapse to (p - 1/2) log(p/(p+q)) + q log1p(-p/(p+q)) - log(q)/2).
local function lbeta(a, b)
  local p, q = a, b
  if p > q then p, q = q, p end
  if p >= 10 then
    local c = stirling_corr(p) + stirling_corr(q) - stirling_corr(p + q)
    return HALF_LOG_2PI - 0.5 * log(q) + c + (p - 0.5) * log(p / (p + q))
           + q * log1p(-p / (p + q))
  elseif q >= 10 then
    local c = stirling_corr(q) - stirling_corr(p + q)
    return lgamma(p) + c + p - p * log(p + q) + (q - 0.5) * log1p(-p / (p + q))
  end
  return lgamma(p) + lgamma(q) - lgamma(p + q)
end

-- ---------------------------------------------------------------------------------------
-- Regularized incomplete beta.

local CF_TOL, TINY = 1e-15, 1e-300

-- e - log(1 + e) for e > -1, without cancellation for small e (series sum (-e)^k / k).
local function rlog1(e)
  if abs(e) >= 0.1 then return e - log1p(e) end
  local s, pk = 0.0, e * e
  for k = 2, 60 do
    local tk = pk / k
    if k % 2 == 1 then tk = -tk end
    s = s + tk
    if abs(tk) <= 1e-17 * s then break end
    pk = pk * e
  end
  return s
end

-- x^a y^b / B(a, b). For a, b >= 10 the direct exp(a log x + b log y - log B) would lose
-- ~(a + b) eps in its exponent (e.g. 3e-12 at a = b = 1e4). With p = a/(a+b), q = 1 - p
-- and Stirling for B it equals sqrt(a q / (2 pi)) exp(-corr - a rlog1(e1) - b rlog1(e2)),
-- e1 = (x - p)/p, e2 = (y - q)/q (the linear terms cancel: a e1 + b e2 = 0), with every
-- term in the exponent positive. Far below the mean (x < p/2) 1 + e1 = x/p is better
-- taken from log x itself, and likewise for y.
local function beta_front(a, b, x, y, lx, ly)
  if a < 10 or b < 10 then return exp(a * lx + b * ly - lbeta(a, b)) end
  local ab = a + b
  local p, q = a / ab, b / ab
  local d = x <= 0.5 and x - p or q - y
  local function r(e, lu, lv)          -- rlog1(e) where 1 + e = u / v, log u = lu
    if e < -0.5 then return e - (lu - lv) end
    return rlog1(e)
  end
  local c = stirling_corr(a) + stirling_corr(b) - stirling_corr(ab)
  local e = a * r(d / p, lx, log(p)) + b * r(-d / q, ly, log(q))
  return exp(0.5 * log(a * q) - HALF_LOG_2PI - c - e)
end

-- I_x(a, b) = x^a y^b / (a B(a,b)) / (1 + d1/(1 + d2/(1 + ...))), y = 1 - x, with
-- d_{2m+1} = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1)), d_{2m} = m(b-m) x / ((a+2m-1)(a+2m))
-- (DLMF 8.17.22), evaluated by modified Lentz; converges fast for x < (a+1)/(a+b+2).
-- Two precautions make it hold ~1e-15 where x is near 1 and a is large (the t tail at
-- df = 1e6 .. 1e12, where the fraction is ~1/a and a naive evaluation loses ~a*eps):
--  * d_odd is then close to -1, so when y < x (y is the accurately known one) 1 + d_odd
--    is formed from y, [a(2m+1-b) + m(3m+2-b) + (a+m)(a+b+m) y] / ((a+2m)(a+2m+1)),
--    which has no cancellation for b < 1 (the t distribution), and Lentz's C and D are
--    carried together with C - 1 and D - 1 so that 1 + d C^-1 and 1 + d D never cancel;
--  * the even steps barely move the value there, so convergence needs two consecutive
--    steps within tolerance (one is not enough: it stopped 1e-7 short at df = 1e10).
-- lx, ly = log x, log y come from the caller, who may know them better than log(x).
local function beta_cf(a, b, x, y, lx, ly)
  local front = beta_front(a, b, x, y, lx, ly) / a
  if front == 0 then return 0.0 end
  local f, C, Cm1, D, Dm1 = 1.0, 1.0, 0.0, 0.0, -1.0
  local maxit = 1000 + floor(50 * sqrt(a + b))
  local prev_ok = false
  for j = 1, maxit do
    local m = j // 2
    local dj, opd                      -- d_j and 1 + d_j
    if j % 2 == 1 then
      local den = (a + 2 * m) * (a + 2 * m + 1)
      dj = -(a + m) * (a + b + m) * x / den
      if y < x then
        opd = (a * (2 * m + 1 - b) + m * (3 * m + 2 - b) + (a + m) * (a + b + m) * y) / den
      else
        opd = 1.0 + dj
      end
    else
      dj = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
      opd = 1.0 + dj
    end
    -- D <- 1 / (1 + d D) = 1 / ((1 + d) + d (D - 1)); D - 1 <- -d D_old / (1 + d D_old)
    local E = opd + dj * Dm1
    if abs(E) < TINY then
      D = 1.0 / TINY
      Dm1 = D - 1.0
    else
      local Dn = 1.0 / E
      Dm1 = -dj * D / E
      D = Dn
    end
    -- C <- 1 + d / C = (1 + d) - d (C - 1) / C; C - 1 <- d / C_old
    local Cn = opd - dj * Cm1 / C
    if abs(Cn) < TINY then
      C = TINY
      Cm1 = C - 1.0
    else
      Cm1 = dj / C
      C = Cn
    end
    local delta = C * D
    f = f * delta
    local ok = abs(delta - 1.0) < CF_TOL
    if ok and prev_ok then return front / f end
    prev_ok = ok
  end
  fail("betainc", "continued fraction did not converge in %d steps (a=%.17g, b=%.17g, x=%.17g)",
       maxit, a, b, x)
end

-- (I_x(a,b), 1 - I_x(a,b)): the one the continued fraction produced is accurate to ~1e-15
-- relative, the other is 1 minus it (used only where it is not small).
local function betainc_pair(a, b, x, y, lx, ly)
  if x <= (a + 1) / (a + b + 2) then
    local v = beta_cf(a, b, x, y, lx, ly)
    return v, 1.0 - v
  end
  local v = beta_cf(b, a, y, x, ly, lx)
  return 1.0 - v, v
end

local function check_num(fn, name, v)
  if type(v) ~= "number" then fail(fn, "%s is %s, want a number", name, describe(v)) end
  return v + 0.0
end

-- I_x(a, b) for a, b > 0 and 0 <= x <= 1 (scipy.special.betainc).
function M.betainc(a, b, x)
  local fn = "betainc"
  a, b, x = check_num(fn, "a", a), check_num(fn, "b", b), check_num(fn, "x", x)
  if not (a > 0 and a < huge) then fail(fn, "a = %s, want a finite a > 0", tostring(a)) end
  if not (b > 0 and b < huge) then fail(fn, "b = %s, want a finite b > 0", tostring(b)) end
  if isnan(x) then return NAN end
  if not (x >= 0 and x <= 1) then fail(fn, "x = %.17g, want 0 <= x <= 1", x) end
  if x == 0 then return 0.0 elseif x == 1 then return 1.0 end
  local y = 1.0 - x
  return (betainc_pair(a, b, x, y, log(x), log1p(-x)))
end

-- ---------------------------------------------------------------------------------------
-- Normal distribution.

-- exp(-x^2/2) with x^2 exact: x = xh + xl with xh on a 2^-16 grid (xh^2 has <= 52 bits),
-- so the exponent carries no rounding of size x^2 * eps (which would cost ~1e-13 at x=38).
local function gauss(x)
  x = abs(x)
  if x < 1 or x >= 1024 then return exp(-0.5 * x * x) end
  local xh = floor(x * 65536.0) / 65536.0
  local xl = x - xh
  return exp(-0.5 * xh * xh) * exp(-0.5 * xl * (x + xh))
end

local function npdf(x) return INV_SQRT_2PI * gauss(x) end

-- For x >= 0: (P(X > x), P(0 < X < x)). Below x^2/2 = 1.5 the series
-- Phi(x) - 1/2 = phi(x) sum_n x^(2n+1) / (2n+1)!! (DLMF 8.7.3 with a = 1/2); above it the
-- upper tail 0.5 Q(1/2, x^2/2) = 0.5 x phi(x) / CF, CF = Legendre's fraction
-- z + 1 - a - 1(1-a)/(z + 3 - a - 2(2-a)/(...)) for Gamma(a, z) (DLMF 8.9.2).
local function normal_parts(x)
  local z = 0.5 * x * x
  if z < 1.5 then
    local x2, term, s = x * x, 1.0, 1.0
    for n = 1, 200 do
      term = term * x2 / (2 * n + 1)
      s = s + term
      if term < 1e-17 * s then break end
    end
    local c = x * npdf(x) * s
    return 0.5 - c, c
  end
  local a = 0.5
  local f = z + 1 - a
  local C, D = f, 0.0
  for j = 1, 5000 do
    local aj, bj = -j * (j - a), z + 2 * j + 1 - a
    D = bj + aj * D
    if abs(D) < TINY then D = TINY end
    D = 1.0 / D
    C = bj + aj / C
    if abs(C) < TINY then C = TINY end
    local delta = C * D
    f = f * delta
    if abs(delta - 1.0) < CF_TOL then break end
  end
  local tail = 0.5 * x * npdf(x) / f
  return tail, 0.5 - tail
end

function M.normal_pdf(x)
  x = check_num("normal_pdf", "x", x)
  return npdf(x)
end

function M.normal_cdf(x)
  x = check_num("normal_cdf", "x", x)
  if isnan(x) then return NAN end
  if x == huge then return 1.0 elseif x == -huge then return 0.0 end
  if x < 0 then return (normal_parts(-x)) end
  local _, c = normal_parts(x)
  return 0.5 + c
end

function M.normal_sf(x)
  x = check_num("normal_sf", "x", x)
  return M.normal_cdf(-x)
end

-- Solve F(x) = target for x > 0, F monotone (dir = +1 rising, -1 falling), ev(x) returning
-- F(x) and the density |F'(x)|. Newton on g(u) = log F(e^u) - log target: both the power
-- tails of small df and the Gaussian tails are nearly linear or gently convex in these
-- coordinates, so Newton converges in a few steps from anywhere in the bracket [lo, hi]
-- (which the caller guarantees contains the root); a step leaving the bracket, or a NaN
-- from an underflowed F, is replaced by bisection in u.
local function invert(ev, dir, target, lo, hi, x0)
  local lt = log(target)
  local ulo, uhi = log(lo), log(hi)
  local u = log(x0)
  if not (u > ulo and u < uhi) then u = 0.5 * (ulo + uhi) end
  for _ = 1, 400 do
    local x = exp(u)
    local F, dens = ev(x)
    local g = log(F) - lt
    if g == 0 then return x end
    if dir * g < 0 then ulo = u else uhi = u end
    local un = u - g / (dir * x * dens / F)
    local newton = un > ulo and un < uhi
    if not newton then un = 0.5 * (ulo + uhi) end
    local step = abs(un - u)
    u = un
    -- Newton is quadratic: after a step of 1e-10 the error is ~1e-20 (plus F's rounding).
    if (newton and step < 1e-10) or uhi - ulo < 1e-15 then break end
  end
  return exp(u)
end

-- Quantile checks shared by normal_ppf and t_ppf: returns the side and the tail mass
-- p = min(q, 1-q) (1 - q is exact for q >= 1/2, so no precision is lost).
local function check_q(fn, q)
  q = check_num(fn, "q", q)
  if isnan(q) then return nil end
  if not (q >= 0 and q <= 1) then fail(fn, "q = %.17g, want 0 <= q <= 1", q) end
  if q < 0.5 then return -1.0, q end
  return 1.0, 1.0 - q
end

local function normal_tail_ev(x) return (normal_parts(x)), npdf(x) end
local function normal_central_ev(x) local _, c = normal_parts(x); return c, npdf(x) end

local function nppf(sign, p)
  if p == 0 then return sign * huge end
  if p == 0.5 then return 0.0 end
  local x
  if p >= 0.25 then
    -- 0 < x < 0.6745: Phi(x) - 1/2 = 1/2 - p (exact) keeps x's relative accuracy near 0;
    -- Phi(x) - 1/2 <= x phi(0), so (1/2-p)/phi(0) is above the root and 0.5 x that below.
    local c = 0.5 - p
    local x0 = c / INV_SQRT_2PI
    x = invert(normal_central_ev, 1, c, 0.5 * x0, 0.7, x0)
  else
    -- 0.674 < x < 38.5 for any p >= 4.9e-324: P(X > 0.5) = 0.31 > p > P(X > 40) = 0.
    local w = -2.0 * log(p)
    local x0 = sqrt(math.max(w - log(w) - log(2 * math.pi), 0.5))
    x = invert(normal_tail_ev, -1, p, 0.5, 40.0, x0)
  end
  return sign * x
end

function M.normal_ppf(q)
  local sign, p = check_q("normal_ppf", q)
  if not sign then return NAN end
  return nppf(sign, p)
end

-- ---------------------------------------------------------------------------------------
-- Student t distribution, any real df > 0 (df = inf gives the normal).

-- For t > 0: (P(|T| > t), P(|T| < t)) = (I_x(df/2, 1/2), I_y(1/2, df/2)) with
-- x = df/(df+t^2) = 1/(1+s), y = s/(1+s), s = t^2/df; log x = -log1p(s) and
-- log y = -log1p(1/s) are formed without the cancellation of log(1 - y).
local function t_parts(t, df)
  local r = t / sqrt(df)
  local x, y, lx, ly
  if r > 1e150 then                     -- s would overflow; x < 1e-300
    lx = -2.0 * (log(t) - 0.5 * log(df))
    x = exp(lx)
    y, ly = 1.0, -x
  else
    local s = r * r
    x, y = 1.0 / (1.0 + s), s / (1.0 + s)
    lx, ly = -log1p(s), -log1p(1.0 / s)
  end
  -- The fraction for I_x(df/2, 1/2) has no cancellation at any t (b = 1/2 < 1, see
  -- beta_cf); the one for I_y(1/2, df/2) cancels in 1 + d_1 = 1 - (df+1) y / 3 as t^2
  -- nears 3, costing ~df * eps at large df. So I_y is used only where it is needed for
  -- convergence (x beyond the mean) and safe (t^2 < 1).
  local a = 0.5 * df
  if t >= 1 or x <= (a + 1) / (a + 2.5) then
    local v = beta_cf(a, 0.5, x, y, lx, ly)
    return v, 1.0 - v
  end
  local v = beta_cf(0.5, a, y, x, ly, lx)
  return 1.0 - v, v
end

-- log of the t density: -log(df)/2 - log B(df/2, 1/2) - (df+1)/2 log1p(t^2/df).
local function t_logpdf(t, df, lb)
  local r = abs(t) / sqrt(df)
  local l1p = r > 1e150 and 2.0 * (log(abs(t)) - 0.5 * log(df)) or log1p(r * r)
  return -0.5 * log(df) - lb - 0.5 * (df + 1) * l1p
end

local function check_df(fn, df)
  df = check_num(fn, "df", df)
  if not (df > 0) then fail(fn, "df = %s, want df > 0", tostring(df)) end
  return df
end

function M.t_cdf(t, df)
  local fn = "t_cdf"
  t, df = check_num(fn, "t", t), check_df(fn, df)
  if isnan(t) then return NAN end
  if df == huge then return M.normal_cdf(t) end
  if t == huge then return 1.0 elseif t == -huge then return 0.0 end
  if t == 0 then return 0.5 end
  local I, Ic = t_parts(abs(t), df)
  if t < 0 then return 0.5 * I end
  return 0.5 + 0.5 * Ic
end

function M.t_sf(t, df)
  t = check_num("t_sf", "t", t)
  return M.t_cdf(-t, check_df("t_sf", df))
end

function M.t_pdf(t, df)
  local fn = "t_pdf"
  t, df = check_num(fn, "t", t), check_df(fn, df)
  if isnan(t) then return NAN end
  if df == huge then return npdf(t) end
  return exp(t_logpdf(t, df, lbeta(0.5 * df, 0.5)))
end

function M.t_ppf(q, df)
  local fn = "t_ppf"
  local sign, p = check_q(fn, q)
  df = check_df(fn, df)
  if not sign then return NAN end
  if df == huge then return nppf(sign, p) end
  if p == 0 then return sign * huge end
  if p == 0.5 then return 0.0 end
  local lb = lbeta(0.5 * df, 0.5)
  local function dens(t) return exp(t_logpdf(t, df, lb)) end
  local x
  if p >= 0.25 then
    -- Solve P(0 < T < t) = 1/2 - p (exact): t near 0 keeps its relative accuracy. Since the
    -- density falls away from 0, (1/2-p)/f(0) is below the root; double it until above.
    local c = 0.5 - p
    local x0 = c / dens(0.0)
    local hi = 2.0 * x0
    while select(2, t_parts(hi, df)) * 0.5 < c and hi < 1e300 do hi = hi * 2.0 end
    x = invert(function(t) local _, ic = t_parts(t, df); return 0.5 * ic, dens(t) end,
               1, c, 0.5 * x0, hi, x0)
  else
    -- Solve P(T > t) = p. The t tail is heavier than the normal one, so the normal quantile
    -- z is below the root. The density is below K (t^2/df)^(-(df+1)/2), K = 1/(sqrt(df)
    -- B(df/2, 1/2)), so the tail is below K df^((df-1)/2) t^-df, whose inverse at p is above
    -- the root. Both bounds are checked and widened in case of rounding.
    local tail = function(t) return 0.5 * (t_parts(t, df)) end
    if tail(DBL_MAX) > p then return sign * huge end      -- beyond the doubles (df < 1)
    local lo = nppf(1, p)
    local logK = -0.5 * log(df) - lb
    local hi = math.min(exp((logK + 0.5 * (df - 1) * log(df) - log(p)) / df), DBL_MAX)
    while tail(lo) < p and lo > 1e-300 do lo = 0.5 * lo end
    while tail(hi) > p and hi < DBL_MAX do hi = math.min(hi * 2.0, DBL_MAX) end
    -- Start from the Cornish-Fisher correction z (1 + (z^2+1)/(4 df)) when it lies inside,
    -- else from the geometric mean of the bounds (the power-law regime of small df).
    local x0 = lo * (1 + (lo * lo + 1) / (4 * df))
    if not (x0 < hi) then x0 = sqrt(lo * hi) end
    x = invert(function(t) return tail(t), dens(t) end, -1, p, lo, hi, x0)
  end
  return sign * x
end

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
    fail(fn, "%s[%d] is NaN (%d NaN in a, %d in b); pass nan_policy=\"omit\" to drop those pairs",
         name, i, na, nb)
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

local function check_opts(fn, opts)
  if opts == nil then return {} end
  if type(opts) ~= "table" then fail(fn, "options are %s, want a table", describe(opts)) end
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

-- Holm (1979) step-down: with p sorted ascending, adj_(k) = max_{j<=k} (m-j+1) p_(j), capped
-- at 1; H_(k) is rejected while every p_(j), j <= k, is <= alpha / (m-j+1).
function M.holm(p, alpha)
  local fn = "holm"
  p = check_pvals(fn, p)
  alpha = check_alpha(fn, alpha)
  local m = #p
  local order = ascending(p)
  local adj, rej = {}, {}
  local running, stopped = 0.0, false
  for k = 1, m do
    local i = order[k]
    local pk = p[i] + 0.0
    if not stopped and pk > alpha / (m - k + 1) then stopped = true end
    local raw = pk * (m - k + 1)
    if raw > running then running = raw end
    adj[i] = running > 1 and 1.0 or running
    rej[i] = not stopped
  end
  return adj, rej
end

function M.bonferroni(p, alpha)
  local fn = "bonferroni"
  p = check_pvals(fn, p)
  alpha = check_alpha(fn, alpha)
  local m = #p
  local adj, rej = {}, {}
  for i = 1, m do
    local v = p[i] * m
    adj[i] = v > 1 and 1.0 or v + 0.0
    rej[i] = p[i] <= alpha / m
  end
  return adj, rej
end

-- Benjamini-Hochberg (1995) step-up: adj_(k) = min_{j>=k} p_(j) / (j/m), capped at 1;
-- reject H_(1..K) for the largest K with p_(K) <= (K/m) alpha.
function M.bh(p, alpha)
  local fn = "bh"
  p = check_pvals(fn, p)
  alpha = check_alpha(fn, alpha)
  local m = #p
  local order = ascending(p)
  local adj, rej = {}, {}
  local kmax = 0
  for k = 1, m do
    if p[order[k]] <= (k / m) * alpha then kmax = k end
  end
  local running = huge
  for k = m, 1, -1 do
    local i = order[k]
    local raw = p[i] / (k / m)
    if raw < running then running = raw end
    adj[i] = running > 1 and 1.0 or running
    rej[i] = k <= kmax
  end
  return adj, rej
end

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
  return m / sqrt(v)
end

-- Internals exposed for the tests only (not part of the API).
M._internal = { lgamma = lgamma, lbeta = lbeta, log1p = log1p, rlog1 = rlog1, pwsum = pwsum,
                wilcoxon_pmf = wilcoxon_pmf }

return M
