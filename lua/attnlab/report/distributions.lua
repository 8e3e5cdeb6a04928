-- attnlab.report.distributions -- the special functions and distributions under the
-- study's statistics: log-gamma, the regularized incomplete beta, the normal and Student t
-- distributions (pdf, cdf, sf, ppf). Part of attnlab.stats (report/stats.lua installs these
-- into its table, so they are al.stats.t_cdf, ... and their errors say attnlab.stats.<fn>);
-- accuracy and references are in report/stats.lua's header.
return function(M)

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
    -- Beyond df = 1e15 the fraction below loses digits (x rounds towards 1: 1e-8 relative at
    -- df = 1e20, t = 37), and from df ~ 1e154 its terms overflow to NaN and it never converges
    -- (t_cdf hung). There the t is the normal plus the first term of its expansion in 1/df
    -- (Fisher 1925): P(T > t) = Q(t) + phi(t) (t^3 + t) / (4 df) + O(df^-2); the next term is
    -- ~5 t^8 / (96 df^2) relative, < 1e-17 wherever the tail is a double (t < 39).
    if df >= 1e15 then
      local q, c = normal_parts(t)
      local corr = t < 40 and npdf(t) * t * (t * t + 1) / (4 * df) or 0.0
      return 2.0 * (q + corr), 2.0 * (c - corr)
    end
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

  -- the helpers the tests in report/stats.lua share
  return { fail = fail, isnan = isnan, describe = describe, lbeta = lbeta, lgamma = lgamma, log1p = log1p, pwsum = pwsum, rlog1 = rlog1 }
end
