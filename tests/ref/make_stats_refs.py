#!/usr/bin/python3
"""Write tests/ref/stats.json: reference vectors for lua/attnlab/report/stats.lua.

Run once from the repository root with Debian's python3 (scipy, statsmodels, mpmath, numpy):
    /usr/bin/python3 tests/ref/make_stats_refs.py
The Lua test (tests/lua/test_stats.lua) only reads the JSON; it never needs Python.

Takes ~35 s on one core; the output is deterministic (fixed seed), so rerunning it
reproduces the committed file byte for byte with the same library versions.

Sources of truth:
  * special functions (betainc, log Gamma, log Beta, t and normal CDF / quantiles): mpmath
    at 50 digits on the exact double inputs; the incomplete beta from its continued
    fraction evaluated backwards (checked against quadrature and the 2F1 series at start),
    quantiles by Illinois root finding in log space (checked against the closed forms for
    df = 1 and 2). SciPy 1.10's values are stored beside them ("scipy") for information
    only: its betainc is good to ~1e-11 for large a, b, stdtr returns 0 at |t| = 1e200, and
    stdtrit is off by 1e-9 .. 1e-5 relative in places (and clips at 1e100).
  * tests: scipy.stats.ttest_rel (t, p, df, confidence_interval), scipy.stats.wilcoxon with
    an explicit method, statsmodels multipletests ('holm', 'bonferroni', 'fdr_bh'). The
    p-values are also recomputed with mpmath at SciPy's t ("p_exact") and the confidence
    limits with mpmath quantiles ("ci_low_exact", "ci_high_exact").
  * numpy for sums, means, standard deviations and medians.
JSON has NaN / Infinity / -Infinity tokens where a value is not finite (Python's json).
"""
import json
import math
import os
import sys
import warnings

import mpmath as mp
import numpy as np
import scipy
import scipy.special as sc
import statsmodels
from scipy import stats
from statsmodels.stats.multitest import multipletests

mp.mp.dps = 50
rng = np.random.default_rng(20240611)
warnings.simplefilter("ignore")


def f(x):
    """Plain float (keeps inf/nan)."""
    return float(x)


# ---------------------------------------------------------------------------------------
# mpmath truths

def mp_ibeta_cf(a, b, x):
    """I_x(a, b) from its continued fraction (DLMF 8.17.22) at 50 digits, evaluated
    backwards with the number of terms doubled until two values agree to 1e-40. (mpmath's
    own betainc sums 2F1(a, 1-b; a+1; x), which needs ~1e5 terms or fails for large a
    near x = 1.) Checked against quadrature and the 2F1 series in check_truths()."""
    y = 1 - x

    def cf(n):
        v = mp.mpf(1)
        for j in range(n, 0, -1):
            m = j // 2
            if j % 2:
                d = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
            else:
                d = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
            v = 1 + d / v
        return v

    n, prev = 64, cf(64)
    while True:
        n *= 2
        cur = cf(n)
        if abs(cur - prev) <= abs(cur) * mp.mpf("1e-40"):
            break
        prev = cur
    front = mp.exp(a * mp.log(x) + b * mp.log(y) - mp.log(mp.beta(a, b))) / a
    return front / cur


def mp_ibeta_lower(a, b, x):
    """I_x(a, b), using the fraction on the side where it converges."""
    if x == 0:
        return mp.mpf(0)
    if x <= (a + 1) / (a + b + 2):
        return mp_ibeta_cf(a, b, x)
    return 1 - mp_ibeta_cf(b, a, 1 - x)


def mp_betainc(a, b, x):
    a, b, x = mp.mpf(a), mp.mpf(b), mp.mpf(x)
    if x == 0:
        return mp.mpf(0)
    if x == 1:
        return mp.mpf(1)
    return mp_ibeta_lower(a, b, x)


def mp_tcdf(t, df):
    t, df = mp.mpf(t), mp.mpf(df)
    if t == 0:
        return mp.mpf(1) / 2
    tail = mp_ibeta_lower(df / 2, mp.mpf(1) / 2, df / (df + t * t)) / 2
    return tail if t < 0 else 1 - tail


def mp_quantile(cdf, q, guess):
    """x with cdf(x) = q, at ~1e-30 relative: Illinois (modified regula falsi) on
    G(u) = log(tail(e^u)) - log(tail mass), u = log|x|, which is nearly linear in both the
    power-law and the Gaussian tails. The bracket is grown geometrically from the guess."""
    q = mp.mpf(q)
    if q < 0.5:
        sgn, target = -1, q
        tail = lambda x: cdf(-x)  # noqa: E731
    else:
        sgn, target = 1, 1 - q
        tail = lambda x: 1 - cdf(x)  # noqa: E731
    lt = mp.log(target)

    def G(u):                     # decreasing in u
        return mp.log(tail(mp.exp(u))) - lt

    g = abs(float(guess)) if np.isfinite(guess) and guess != 0 else 1.0
    u0 = mp.log(mp.mpf(g))
    lo, hi = u0 - mp.mpf("1e-4"), u0 + mp.mpf("1e-4")
    while G(lo) < 0:
        lo -= 2 * (hi - lo)
    while G(hi) > 0:
        hi += 2 * (hi - lo)
    glo, ghi, side = G(lo), G(hi), 0
    for _ in range(500):
        if glo == 0:
            return sgn * mp.exp(lo)
        if ghi == 0:
            return sgn * mp.exp(hi)
        r = (lo * ghi - hi * glo) / (ghi - glo)
        gr = G(r)
        if (gr > 0) == (ghi > 0):
            hi, ghi = r, gr
            if side == 1:
                glo /= 2
            side = 1
        else:
            lo, glo = r, gr
            if side == -1:
                ghi /= 2
            side = -1
        if hi - lo <= mp.mpf("1e-32") * max(1, abs(r)):
            break
    else:
        raise RuntimeError(f"quantile did not converge for q={q}")
    return sgn * mp.exp((lo + hi) / 2)


def mp_tppf(q, df):
    if q == 0:
        return -math.inf
    if q == 1:
        return math.inf
    if q == 0.5:
        return 0.0
    big = mp.mpf(sys.float_info.max)
    if q < 0.5 and mp_tcdf(-big, df) > q:     # beyond the double range
        return -math.inf
    if q > 0.5 and mp_tcdf(big, df) < q:
        return math.inf
    guess = sc.stdtrit(df, q)
    return mp_quantile(lambda t: mp_tcdf(t, df), q, guess)


def mp_ncdf(x):
    return mp.ncdf(mp.mpf(x))


def mp_nppf(q):
    if q == 0:
        return -math.inf
    if q == 1:
        return math.inf
    if q == 0.5:
        return 0.0
    return mp_quantile(mp_ncdf, q, sc.ndtri(q))


def check_truths():
    """The continued-fraction truths against direct quadrature of the densities."""
    worst = 0.0
    for df in [1, 3, 30, 1000]:
        dfm = mp.mpf(df)
        c = mp.exp(-mp.log(dfm) / 2 - mp.log(mp.beta(dfm / 2, mp.mpf(1) / 2)))
        for t in [-0.3, -2, -10]:
            q = mp.quad(lambda u: c * (1 + u * u / dfm) ** (-(dfm + 1) / 2),
                        [-mp.inf, t - 100, t - 20, t - 5, t - 1, t], maxdegree=10)
            worst = max(worst, float(abs(q / mp_tcdf(t, df) - 1)))
    for a, b, x in [(2.5, 0.5, 0.3), (100, 5000, 0.019), (0.1, 10, 0.05)]:
        a, b, x = mp.mpf(a), mp.mpf(b), mp.mpf(x)
        h = x ** a * mp.hyp2f1(a, 1 - b, a + 1, x, maxterms=10**6, maxprec=50000) / a
        worst = max(worst, float(abs(h / mp.beta(a, b) / mp_betainc(a, b, x) - 1)))
    print(f"truths: continued fraction vs quadrature / 2F1 series worst rel {worst:.3g}")
    assert worst < 1e-20


# ---------------------------------------------------------------------------------------
# special functions

def make_betainc():
    out = []
    worst = 0.0
    ab = [0.1, 0.5, 1.0, 2.5, 10.0, 100.0, 5000.0]
    xs = [1e-10, 1e-3, 0.05, 0.3, 0.5, 0.7, 0.95, 0.999, 1 - 1e-9, 0.0, 1.0]
    for a in ab:
        for b in ab:
            for x in xs:
                v = mp_betainc(a, b, x)
                s = sc.betainc(a, b, x)
                if v > 1e-300:
                    worst = max(worst, abs(s - float(v)) / float(v))
                out.append({"a": a, "b": b, "x": x, "want": f(v), "scipy": f(s)})
    # symmetric-branch switch points and large parameters
    for (a, b) in [(0.5, 5e5), (5e5, 0.5), (3e3, 4e3), (1e4, 1e4)]:
        m = a / (a + b)
        for x in [m * 0.9, m, m * (1 + 1e-3), 1 - (1 - m) * 0.9]:
            if 0 < x < 1:
                v = mp_betainc(a, b, x)
                out.append({"a": a, "b": b, "x": x, "want": f(v), "scipy": f(sc.betainc(a, b, x))})
    print(f"betainc: {len(out)} cases, scipy vs mpmath worst rel {worst:.3g}")
    return out


DFS = [1, 2, 3, 9, 30, 1000, 0.5, 2.5, 1e6, 1e10]


def make_tcdf():
    ts = [0.0, 1e-8, 0.1, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0, 300.0, 1e3, 1e5, 1e200]
    out, worst = [], 0.0
    for df in DFS:
        for t0 in ts:
            for t in ([t0, -t0] if t0 != 0 else [0.0]):
                v = mp_tcdf(t, df)
                s = sc.stdtr(df, t)
                if v > 1e-300:
                    worst = max(worst, abs(s - float(v)) / float(v))
                out.append({"t": t, "df": df, "want": f(v), "scipy": f(s),
                            "sf": f(mp_tcdf(-t, df))})
    print(f"t_cdf: {len(out)} cases, scipy vs mpmath worst rel {worst:.3g}")
    return out


def make_tppf():
    qs = [1e-300, 1e-100, 1e-12, 1e-6, 0.001, 0.025, 0.05, 0.1, 0.25, 0.3, 0.4,
          0.5 - 1e-12, 0.5, 0.6, 0.75, 0.9, 0.975, 0.999, 1 - 1e-12]
    out, worst = [], 0.0
    for df in DFS:
        for q in qs:
            v = mp_tppf(q, df)
            s = sc.stdtrit(df, q)
            if v != 0:
                worst = max(worst, abs(s - float(v)) / abs(float(v)))
            out.append({"q": q, "df": df, "want": f(v), "scipy": f(s)})
            # closed forms: df = 1 is Cauchy, df = 2 has t = (2q-1) / sqrt(2 q (1-q))
            qm = mp.mpf(q)
            if df == 1 and 0 < q < 1 and q != 0.5:
                # tan(pi (q - 1/2)) = -cot(pi q), written so that q = 1e-300 survives
                assert abs(v * -mp.tan(mp.pi * qm) - 1) < 1e-25, (q, v)
            if df == 2 and 0 < q < 1 and q != 0.5:
                assert abs(v / ((2 * qm - 1) / mp.sqrt(2 * qm * (1 - qm))) - 1) < 1e-25, (q, v)
    print(f"t_ppf: {len(out)} cases, scipy vs mpmath worst rel {worst:.3g}")
    return out


def make_normal():
    xs = [0.0, 1e-10, 0.3, 1.0, 1.7, 1.75, 1.96, 2.5, 3.0, 5.0, 8.0, 12.0, 20.0, 30.0, 37.5, 38.4]
    cdf = []
    for x0 in xs:
        for x in ([x0, -x0] if x0 != 0 else [0.0]):
            cdf.append({"x": x, "want": f(mp_ncdf(x)), "scipy": f(sc.ndtr(x))})
    qs = [1e-300, 1e-100, 1e-20, 1e-8, 1e-3, 0.025, 0.1, 0.2, 0.25, 0.3, 0.45, 0.5 - 1e-15,
          0.5, 0.5 + 1e-12, 0.7, 0.975, 1 - 1e-10]
    ppf = [{"q": q, "want": f(mp_nppf(q)), "scipy": f(sc.ndtri(q))} for q in qs]
    print(f"normal: {len(cdf)} cdf, {len(ppf)} ppf cases")
    return cdf, ppf


# ---------------------------------------------------------------------------------------
# t-test

def ci_exact(n, t_res, alt, conf):
    """Confidence limits from scipy's mean and se, with mpmath quantiles."""
    df = n - 1
    se, m = t_res._standard_error, t_res._estimate
    if alt == "less":
        lo, hi = -math.inf, mp_tppf(conf, df)
    elif alt == "greater":
        lo, hi = mp_tppf(1 - conf, df), math.inf
    else:
        tp = (1 - conf) / 2
        lo, hi = mp_tppf(tp, df), mp_tppf(1 - tp, df)

    def lim(q):
        if q in (math.inf, -math.inf):
            return q
        return f(mp.mpf(q) * mp.mpf(float(se)) + mp.mpf(float(m)))
    return lim(lo), lim(hi)


def ttest_case(name, a, b, alt="two-sided", conf=0.95, nan_policy=None):
    a = [float(v) for v in a]
    b = [float(v) for v in b]
    kw = {"alternative": alt}
    if nan_policy:
        kw["nan_policy"] = nan_policy
    r = stats.ttest_rel(a, b, **kw)
    ci = r.confidence_interval(conf)
    n = int(r.df) + 1
    lo, hi = ci_exact(n, r, alt, conf)
    # p from mpmath at scipy's t, as a check of scipy itself
    t = float(r.statistic)
    if np.isfinite(t):
        if alt == "less":
            pe = mp_tcdf(t, n - 1)
        elif alt == "greater":
            pe = 1 - mp_tcdf(t, n - 1)
        else:
            pe = 2 * mp_tcdf(-abs(t), n - 1)
        pe = f(pe)
    else:
        pe = f(r.pvalue)
    return {"name": name, "a": a, "b": b, "alternative": alt, "confidence": conf,
            "nan_policy": nan_policy or "raise",
            "t": f(r.statistic), "p": f(r.pvalue), "p_exact": pe, "df": f(r.df), "n": n,
            "mean_diff": f(r._estimate), "se": f(r._standard_error),
            "ci_low": f(ci.low), "ci_high": f(ci.high), "ci_low_exact": lo, "ci_high_exact": hi}


def make_ttest():
    out = []
    for n in [2, 3, 5, 10, 30]:
        for eff in [0.0, 0.3, 1.0, 3.0]:
            a = rng.normal(0.8, 0.05, n)
            b = a - eff * 0.05 + rng.normal(0, 0.05, n)
            alts = ["two-sided", "less", "greater"] if eff in (0.3, 1.0) else ["two-sided"]
            for alt in alts:
                out.append(ttest_case(f"n{n}_eff{eff}_{alt}", a, b, alt))
    # confidence levels
    a, b = rng.normal(0, 1, 10), rng.normal(0.5, 1, 10)
    for conf in [0.9, 0.99, 0.999]:
        out.append(ttest_case(f"n10_conf{conf}", a, b, "two-sided", conf))
    # tiny p-values: 1e-10 and below
    for n, eff, sd in [(10, 1.0, 0.1), (30, 1.0, 0.1), (30, 1.0, 0.02), (5, 1.0, 1e-4),
                       (2, 1.0, 1e-9), (30, 1.0, 0.002)]:
        base = rng.normal(0.9, 0.02, n)
        out.append(ttest_case(f"tiny_n{n}_sd{sd}", base + eff + rng.normal(0, sd, n), base))
    # large common offset: summation order matters for the variance
    base = 1e6 + rng.normal(0, 1, 30)
    out.append(ttest_case("offset_1e6", base + 1e-3 * rng.normal(1, 1, 30), base - 1e-3))
    # integers (accuracies counted in examples)
    out.append(ttest_case("integers", [91, 88, 95, 90, 93, 89, 92], [90, 86, 93, 91, 90, 87, 89]))
    # exact zero variance: constant nonzero difference -> +-inf, identical samples -> nan
    out.append(ttest_case("const_pos", [1.5, 2.5, 3.5, 4.5], [0.5, 1.5, 2.5, 3.5]))
    out.append(ttest_case("const_neg", [1.0, 2.0, 3.0], [3.0, 4.0, 5.0]))
    out.append(ttest_case("const_pos_less", [1.5, 2.5, 3.5, 4.5], [0.5, 1.5, 2.5, 3.5], "less"))
    out.append(ttest_case("identical", [0.1, 0.2, 0.3], [0.1, 0.2, 0.3]))
    # NaN dropped in pairs (SciPy nan_policy='omit')
    a = list(rng.normal(0.5, 0.1, 8))
    b = list(rng.normal(0.45, 0.1, 8))
    a[2] = math.nan
    b[5] = math.nan
    out.append(ttest_case("omit_nan", a, b, "two-sided", 0.95, "omit"))
    # SciPy's rounding artefact: d = {0.1, 0.1, 0.1} exactly, but numpy's mean is
    # 0.10000000000000002, leaving a variance of ~1e-34 and a finite t; stats.lua returns
    # the exact limit (inf, p = 0). Stored so the test documents the difference.
    c = ttest_case("const_rounding", [0.1, 0.1, 0.1], [0.0, 0.0, 0.0])
    out.append(c)
    print(f"ttest: {len(out)} cases; scipy on d = 0.1, 0.1, 0.1: t={c['t']} p={c['p']}")
    return out


# ---------------------------------------------------------------------------------------
# multiple comparisons

def make_multitest():
    vecs = []
    vecs.append(("single", [0.03]))
    vecs.append(("single_high", [0.7]))
    vecs.append(("six", list(rng.uniform(0, 0.2, 6))))
    vecs.append(("six_ties", [0.01, 0.02, 0.02, 0.02, 0.5, 0.01]))
    p24 = list(np.concatenate([rng.uniform(0, 1e-3, 6), rng.uniform(0, 0.1, 10),
                               rng.uniform(0.9, 1.0, 6), [0.999999, 1.0]]))
    rng.shuffle(p24)
    vecs.append(("twentyfour", p24))
    vecs.append(("twentyfour_ties", [0.001] * 5 + [0.01] * 7 + [0.04] * 6 + [0.9] * 4 + [1.0, 1.0]))
    vecs.append(("tiny", [1e-300, 1e-12, 5e-11, 0.2, 0.0]))
    vecs.append(("boundary", [0.05 / 6, 0.05 / 5, 0.05 / 4, 0.2, 0.3, 0.4]))
    out = []
    for name, p in vecs:
        for alpha in [0.05, 0.1]:
            rec = {"name": name, "p": [float(v) for v in p], "alpha": alpha}
            for meth, key in [("holm", "holm"), ("bonferroni", "bonferroni"), ("fdr_bh", "bh")]:
                rej, adj, _, _ = multipletests(p, alpha=alpha, method=meth)
                rec[key] = [float(v) for v in adj]
                rec[key + "_reject"] = [bool(v) for v in rej]
            out.append(rec)
    print(f"multitest: {len(out)} cases")
    return out


# ---------------------------------------------------------------------------------------
# Wilcoxon

EXACT_MAX_N = 25


def expected_mode(d):
    d = np.asarray(d)
    nz = d[d != 0]
    ties = len(np.unique(np.abs(nz))) != len(nz)
    if len(d) <= EXACT_MAX_N and (d == 0).sum() == 0 and not ties:
        return "exact"
    return "approx"


def wilcoxon_case(name, a, b, alt="two-sided", zero_method="wilcox", correction=False,
                  method="auto"):
    a = [float(v) for v in a]
    b = [float(v) for v in b]
    d = np.subtract(a, b)
    mode = expected_mode(d) if method == "auto" else method
    if mode == "exact" and ((d == 0).any() or len(np.unique(np.abs(d))) != len(d)):
        mode = "approx"
    r = stats.wilcoxon(a, b, zero_method=zero_method, correction=correction,
                       alternative=alt, method=mode)
    return {"name": name, "a": a, "b": b, "alternative": alt, "zero_method": zero_method,
            "correction": correction, "method": method, "want_method": mode,
            "statistic": f(r.statistic), "p": f(r.pvalue)}


def make_wilcoxon():
    out = []
    for n in [1, 2, 5, 10, 20, 25]:
        a = rng.normal(0.5, 0.1, n)
        b = a - rng.normal(0.03, 0.05, n)
        for alt in ["two-sided", "less", "greater"]:
            out.append(wilcoxon_case(f"exact_n{n}_{alt}", a, b, alt))
    a = np.arange(1, 11) * 0.125
    out.append(wilcoxon_case("exact_all_positive", a, np.zeros(10)))
    out.append(wilcoxon_case("exact_center", [1, -2, -3, 4, 5, -6, -7, 8], [0] * 8))
    for n in [26, 30, 60, 200]:
        a = rng.normal(0.5, 0.1, n)
        b = a - rng.normal(0.02, 0.05, n)
        for alt in ["two-sided", "less", "greater"]:
            out.append(wilcoxon_case(f"approx_n{n}_{alt}", a, b, alt))
        out.append(wilcoxon_case(f"approx_n{n}_cc", a, b, "two-sided", correction=True))
        out.append(wilcoxon_case(f"approx_n{n}_cc_less", a, b, "less", correction=True))
    # forced methods
    a = rng.normal(0.5, 0.1, 40)
    b = a - rng.normal(0.02, 0.05, 40)
    out.append(wilcoxon_case("forced_exact_n40", a, b, method="exact"))
    out.append(wilcoxon_case("forced_approx_n12", a[:12], b[:12], method="approx"))
    # ties and zeros (accuracies on a 1/100 grid), all zero methods
    a = np.round(rng.uniform(0.6, 0.9, 30), 2)
    b = np.round(a - rng.integers(-2, 5, 30) / 100, 2)
    for zm in ["wilcox", "pratt", "zsplit"]:
        out.append(wilcoxon_case(f"ties_zeros_{zm}", a, b, zero_method=zm))
        out.append(wilcoxon_case(f"ties_zeros_{zm}_greater", a, b, "greater", zero_method=zm))
    out.append(wilcoxon_case("small_ties", [1, 2, 3, 4, 5, 6, 7], [0, 1, 2, 2, 4, 4, 9]))
    out.append(wilcoxon_case("small_zeros", [1, 2, 3, 4, 5, 6, 7, 8], [1, 1, 3, 2, 5, 3, 4, 2]))
    # far tail of the approximation
    a = np.arange(1, 1001) / 1000.0
    out.append(wilcoxon_case("approx_n1000_all_positive", a + 0.5, a))
    print(f"wilcoxon: {len(out)} cases")
    return out


# ---------------------------------------------------------------------------------------
# descriptive

def make_descriptive():
    sums = []
    for n in [1, 2, 7, 8, 9, 15, 16, 17, 127, 128, 129, 200, 255, 256, 257, 1000, 1031]:
        x = rng.normal(0, 1, n) * 10.0 ** rng.uniform(-3, 3, n)
        sums.append({"x": [float(v) for v in x], "sum": f(np.sum(x)), "mean": f(np.mean(x)),
                     "sd": f(np.std(x, ddof=1)) if n > 1 else math.nan,
                     "median": f(np.median(x)), "min": f(np.min(x)), "max": f(np.max(x))})
    cohen = []
    for n in [2, 5, 30]:
        a, b = rng.normal(0.8, 0.05, n), rng.normal(0.78, 0.05, n)
        d = a - b
        cohen.append({"a": [float(v) for v in a], "b": [float(v) for v in b],
                      "d": f(np.mean(d) / np.std(d, ddof=1))})
    return sums, cohen


def make_lgamma():
    xs = [1e-300, 1e-8, 0.1, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.5, 7.3, 9.99, 10.0,
          10.5, 33.3, 1e3, 1e6, 1e15]
    return [{"x": x, "want": f(mp.loggamma(mp.mpf(x)))} for x in xs]


def make_lbeta():
    out = []
    for a in [0.5, 1.0, 3.3, 9.99, 10.0, 57.0, 1e4, 1e8]:
        for b in [0.5, 2.0, 12.0, 1e6]:
            out.append({"a": a, "b": b, "want": f(mp.log(mp.beta(mp.mpf(a), mp.mpf(b))))})
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    check_truths()
    sums, cohen = make_descriptive()
    ncdf, nppf = make_normal()
    ref = {
        "generator": "tests/ref/make_stats_refs.py",
        "versions": {"python": sys.version.split()[0], "numpy": np.__version__,
                     "scipy": scipy.__version__, "statsmodels": statsmodels.__version__,
                     "mpmath": mp.__version__},
        "wilcoxon_exact_max_n": EXACT_MAX_N,
        "betainc": make_betainc(),
        "lbeta": make_lbeta(),
        "lgamma": make_lgamma(),
        "t_cdf": make_tcdf(),
        "t_ppf": make_tppf(),
        "normal_cdf": ncdf,
        "normal_ppf": nppf,
        "ttest_rel": make_ttest(),
        "multitest": make_multitest(),
        "wilcoxon": make_wilcoxon(),
        "descriptive": sums,
        "cohen_d": cohen,
    }
    path = os.path.join(here, "stats.json")
    with open(path, "w") as fh:
        json.dump(ref, fh, indent=None, separators=(",", ":"))
        fh.write("\n")
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
