/* core/norm/entmax_bisect_step.c -- alpha-entmax's decisions between the passes of a forward
 * batch (core/norm/entmax_bisect.c describes the method): the safeguarded Newton/Halley step on
 * the norm H(s) = 1 for alpha <= 2, eight rows a vector; and the whole solve of a row with
 * alpha > 2, in double, row by row (al_bisect_solve_big_).
 *
 * Pure C11 + GNU vector extensions, no Lua. Each lane computes exactly what the one-row scalar
 * expression would (see entmax_common.h's double helpers). */
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/normalizers.h"
#include "attnlab/threads.h"
#include "entmax_bisect.h"

/* 1 - h^(-a) for h > 0, a > 0, lane by lane, without libm calls and with short dependency
 * chains (the next pass waits for this): a double series when h is near 1 (the converging
 * passes, where precision matters), else log via atanh and exp via an Estrin polynomial,
 * relative error ~2e-6 -- plenty for an early Newton step. Both ways are computed and one is
 * selected (which way a row goes changes from pass to pass). */
AL_VI al_vd one_minus_pow_neg(al_vd h, al_vd a) {
  const al_vd u = h - 1.0;
  const al_vd lh = u * (1.0 + u * (-0.5 + u * (1.0 / 3 + u * (-0.25 + u * 0.2))));   /* log h */
  const al_vd t1 = -a * lh;   /* -expm1(t1): error < |t1|^6/720 */
  const al_vd near = -t1 * (1.0 + t1 * (0.5 + t1 * (1.0 / 6 + t1 * (1.0 / 24 + t1 * (1.0 / 120)))));
  /* h = 2^e m, m in [sqrt(1/2), sqrt(2)): log m = 2 atanh(t), t = (m-1)/(m+1), |t| < 0.172 */
  const bis_vl okh = (h > 1e-300) & (h < 1e300);   /* outside: not expected (see below) */
  const bis_vu b = (bis_vu)bis_dsel(okh, h, (al_vd){0} + 1.0);
  bis_vl e = (bis_vl)((b >> 52) & 0x7FF) - 1023;
  al_vd m = (al_vd)((b & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);
  const bis_vl hi = m > 1.4142135623730951;
  m = bis_dsel(hi, 0.5 * m, m);
  e -= hi;   /* (hi is -1 where true) */
  const al_vd t = (m - 1.0) / (m + 1.0), t2 = t * t;
  const al_vd lm = 2.0 * t * ((1.0 + t2 * (1.0 / 3)) + t2 * t2 * (0.2 + t2 * (1.0 / 7)));
  /* (double)e, exactly, without a 64-bit integer conversion instruction: 2^52 + e + 2048 */
  const al_vd ed = (al_vd)((bis_vu)(e + 2048) + 0x4330000000000000ull) - (0x1p52 + 2048.0);
  al_vd v = -a * (lm + ed * 0.6931471805599453);   /* log(h^-a) */
  v = bis_dsel(v < -700.0, (al_vd){0} - 700.0, bis_dsel(v > 700.0, (al_vd){0} + 700.0, v));
  /* exp(v) = 2^k exp(r), |r| <= ln2/2, Estrin degree 6; k rounded to nearest (even) by the
   * 1.5 2^52 shift, which also leaves k in kt's low bits for 2^k through the exponent field */
  const al_vd kt = v * 1.4426950408889634 + 0x1.8p52;
  const al_vd k = kt - 0x1.8p52;
  const al_vd r = v - k * 0.6931471805599453, r2 = r * r;
  const al_vd p = (1.0 + r) + r2 * ((0.5 + r * (1.0 / 6)) + r2 * ((1.0 / 24 + r * (1.0 / 120)) + r2 * (1.0 / 720)));
  const al_vd sc = (al_vd)((((bis_vu)kt - 0x4338000000000000ull) + 1023) << 52);
  const al_vd far = 1.0 - p * sc;
  const al_vd res = bis_dsel((bis_dabs(u) < 1e-3) & (bis_dabs(t1) < 1e-3), near, far);
  return bis_dsel(okh, res, bis_dsel(h > 1.0, (al_vd){0} + 1.0, (al_vd){0} - INFINITY));
}

/* The decisions after an evaluation (h, D, D2, dmin) at s, for the Newton rows of a batch (the
 * lanes marked live; eight a vector): the next s (more = -1) or done (more = 0).
 * alpha <= 2: Newton on the convex H(s) = h^(alpha-1) = 1 from the right, never overshooting:
 *   H'(s) = h^(alpha-2) D, step = (H - 1) h / (H D) = (1 - h^(1-alpha)) h / D;
 *   done when the first-order update p_j -= step inv d_j^(inv-1) is exact to float precision
 *   (its error is ~ (inv step / d)^2 relative for the entry nearest the support boundary).
 * (alpha > 2: al_bisect_step_rf_.) */
AL_VI void step_newton8(bis_lanes *L, int q, int max_iter) {
  const bis_vl live = bis_lld(L->live + q);
  const al_vd h = bis_dld(L->h + q), D = bis_dld(L->D + q), D2 = bis_dld(L->D2 + q);
  const al_vd dmin = bis_dld(L->dm + q), am1 = bis_dld(L->am1 + q), inv = bis_dld(L->inv + q);
  const al_vd s = bis_dld(L->s + q), lo = bis_dld(L->lo + q), hi = bis_dld(L->hi + q);
  const al_vd it = bis_dld(L->it + q) + 1.0;
  const double tol = 4.0 * 0x1p-24;
  const al_vd newton = one_minus_pow_neg(h, am1) * h / D;
  /* Halley: the Newton step over 1 - step H''/(2 H'), H''/H' = (alpha-2) inv D/h + (inv-1)
   * D2/D (h' = inv D, h'' = inv (inv-1) D2); cubic convergence saves about one evaluation in
   * six. Only from the right, and only while the factor is tame: a Halley step may overshoot
   * to the left of the root, where the support at s misses entries; from there a Newton step
   * (which overshoots back to the right, H being convex) is taken, and the iteration stops only
   * on the right (newton >= 0) -- or once the step is at rounding level. */
  const al_vd f = 1.0 - 0.5 * newton * ((am1 - 1.0) * inv * D / h + (inv - 1.0) * D2 / D);
  const bis_vl right = newton >= 0.0;
  const bis_vl halley = right & (f > 0.5) & (f < 2.0);
  const al_vd step = bis_dsel(halley, newton / f, newton);
  /* Done when the update to s - step is exact to float precision. Its Taylor expansion is
   * applied to second order, p_j -= corr d_j^(inv-1) - corr2 d_j^(inv-2), so its error is
   * ~ (inv step / d)^3 relative for the entry nearest the support boundary; a Halley step is
   * itself good to third order, a Newton step only to second (hence the stricter bound). */
  const al_vd lim = bis_dsel(halley, (al_vd){0} + 0x1p-8, (al_vd){0} + 0x1p-12);
  const al_vd as = bis_dabs(step);
  const bis_vl stop = (right & ~(as * inv > lim * dmin)) | ~(as > tol * s) | (it >= (double)max_iter);
  const al_vd corr = bis_dsel(as <= DBL_MAX, step * inv, (al_vd){0});   /* if stop */
  const al_vd corr2 = 0.5 * (inv - 1.0) / inv * corr * corr;
  const al_vd hi2 = bis_dsel(~stop & right, s, hi);   /* H(s) >= 1 <=> newton >= 0 */
  const al_vd lo2 = bis_dsel(~stop & (newton < 0.0), s, lo);
  const al_vd sn = s - step;
  const al_vd s2 = bis_dsel(stop, s, bis_dsel((sn > lo2) & (sn < hi2), sn, 0.5 * (lo2 + hi2)));
  bis_dst(L->s + q, bis_dsel(live, s2, s));
  bis_dst(L->lo + q, bis_dsel(live, lo2, lo));
  bis_dst(L->hi + q, bis_dsel(live, hi2, hi));
  bis_dst(L->it + q, bis_dsel(live, it, it - 1.0));
  bis_dst(L->corr + q, bis_dsel(live, corr, bis_dld(L->corr + q)));
  bis_dst(L->corr2 + q, bis_dsel(live, corr2, bis_dld(L->corr2 + q)));
  const bis_vl more = live & ~stop;
  memcpy(L->more + q, &more, sizeof more);
}

/* Lanes 0 .. nr-1 (nr <= 16), eight a vector, the two vectors in one body: each one's decision
 * is a long chain of dependent double operations, and with both inlined the CPU runs the
 * second alongside the first. */
void al_bisect_step_newton_(bis_lanes *L, int nr, int max_iter) {
  step_newton8(L, 0, max_iter);
  if (nr > 8) step_newton8(L, 8, max_iter);
}

/* ---- alpha > 2: al_bisect_solve_big_ ----
 * Why not Newton on H(s) there: H is not convex for alpha > 2 and its slope is infinite where an
 * entry joins the support. And why not s at all: p_j = d_j^inv with inv = 1/(alpha-1) < 1, so an
 * entry near the support's edge holds a large p on a tiny d = y_j + s, a difference of two
 * numbers near s: at alpha = 20, p = 0.11 is d = 6e-19 of an s near 0.11, below double
 * precision; at alpha = 10, every p < 0.018 of an s near 1 is. Nothing that iterates on s (or
 * tau) reaches such a p: the regula falsi this replaced stopped at 1e-12 in s or at max_iter,
 * and gave 0.70 for an exact 0.69 at alpha = 10, [0.82, 0.18] for [0.89, 0.11] at alpha = 20.
 * Instead, in exact breakpoints and the smallest p itself:
 *   1. The support is the entries with x >= v for one of the row's values v. With the
 *      candidates sorted (descending, in scratch), the sum of p at the breakpoint where v's
 *      entries are about to join, s = -(alpha-1)(v - max), is G(v) = sum_{x_i > v} c_i^inv
 *      with c_i = (alpha-1)(x_i - v) > 0 -- from the float x directly (x_i - v is exact in
 *      double, or within its rounding), no cancellation. G grows as v falls; the support's last
 *      value v is the smallest with G(v) < 1: a galloping search from the max, then halving,
 *      about 2 log2 of the support's size evaluations (each stops once its sum reaches 1).
 *   2. With q entries at v and u their p (the smallest p of the support), every other p_i =
 *      (u^(alpha-1) + c_i)^inv, a sum of two positive terms: g(u) = q u + sum_i (u^(alpha-1) +
 *      c_i)^inv - 1 = 0 on [0, 1/q] is smooth (g' >= q, with no infinite slope: the kink in s is
 *      gone) and increasing: Newton's method, bisection-guarded, from u = (1 - G(v))/q, to
 *      double precision in u -- typically 3-6 evaluations.
 * Every p is then exact to double rounding before its float rounding, however large alpha is:
 * the smallest p is u, not a difference. Alpha large against the spread leaves the tied max
 * entries alone (1/t each: the argmax limit). Every row gets there whatever max_iter (the
 * evaluations are bounded: 2 ceil(log2 k) + at most 100 guarded Newton steps; in practice at
 * most 34 over random rows of 2..4096 entries, alpha 2..3e38, usually 4-14). c: the k
 * candidates' x (any order, the row's max among them), am1 = alpha - 1 > 1, scratch: room for
 * 2k floats; o: p for each candidate, zero padded to whole blocks. Returns the evaluations used. */
/* xs (k floats) sorted descending: by insertion for a few, else by an LSD radix sort on the
 * order-preserving keys of internal.h (four 8-bit passes; tmp: k floats). qsort took longer
 * than the rest of the solve on rows of a thousand candidates. */
static void sort_desc(float *xs, float *tmp, int64_t k) {
  if (k <= 32) {   /* (a few candidates, the usual case: insertion) */
    for (int64_t i = 1; i < k; i++) {
      const float t = xs[i];
      int64_t j = i;
      for (; j > 0 && xs[j - 1] < t; j--) xs[j] = xs[j - 1];
      xs[j] = t;
    }
    return;
  }
  float *src = xs, *dst = tmp;
  for (int sh = 0; sh < 32; sh += 8) {
    int64_t cnt[257] = {0};
    for (int64_t i = 0; i < k; i++) cnt[((~al_fkey_(src[i])) >> sh & 0xFF) + 1]++;
    for (int d = 0; d < 256; d++) cnt[d + 1] += cnt[d];
    for (int64_t i = 0; i < k; i++) dst[cnt[(~al_fkey_(src[i])) >> sh & 0xFF]++] = src[i];
    float *t = src; src = dst; dst = t;
  }
}
/* G(v) = sum over xs[i] > v (xs sorted descending) of ((xs[i] - v) am1)^inv, or any value >= 1
 * once the sum reaches 1 (only G < 1 is asked; the terms are positive) */
static double big_breakpoint(const float *xs, int64_t k, float v, double am1, double inv) {
  double h = 0;
  for (int64_t i = 0; i < k && xs[i] > v && h < 1.0; i++)
    h += exp(inv * log(((double)xs[i] - (double)v) * am1));
  return h;
}

int al_bisect_solve_big_(float *o, const float *c, int64_t k, double am1, float *scratch) {
  const double inv = 1.0 / am1;
  float *xs = scratch;
  memcpy(xs, c, (size_t)k * sizeof *xs);
  sort_desc(xs, scratch + k, k);   /* (four passes: the result is back in xs) */
  /* 1. the support's last value: the largest index with G < 1 (G(xs[0]) = 0), by a galloping
   * search from the max (the support is often a few entries) and then halving */
  int64_t lo = 0, hi = 1;
  int ev = 0;
  while (hi < k) {
    ev++;
    if (!(big_breakpoint(xs, k, xs[hi], am1, inv) < 1.0)) break;
    lo = hi;
    hi = 2 * hi < k ? 2 * hi : k;
  }
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    ev++;
    if (big_breakpoint(xs, k, xs[mid], am1, inv) < 1.0) lo = mid;
    else hi = mid;
  }
  const float v = xs[lo];
  int64_t first = lo, q = 0;   /* v's entries: xs[first .. first+q) */
  while (first > 0 && xs[first - 1] == v) first--;
  while (first + q < k && xs[first + q] == v) q++;
  /* 2. u, the p of v's entries: g(u) = q u + sum_{i < first} (u^am1 + c_i)^inv - 1 */
  const double g0 = first ? big_breakpoint(xs, k, v, am1, inv) : 0.0;   /* (< 1: whole) */
  double a = 0.0, b = 1.0 / (double)q, u = (1.0 - g0) / (double)q;
  ev += first > 0;
  if (!(u > a && u <= b)) u = 0.5 * (a + b);
  for (int it = 0; it < 100 && first > 0; it++) {
    const double ua = exp(am1 * log(u)), ud = ua / u;   /* u^am1, u^(am1-1) (0 if they underflow) */
    double g = (double)q * u - 1.0, dg = (double)q;
    for (int64_t i = 0; i < first; i++) {
      const double w = ua + ((double)xs[i] - (double)v) * am1, pw = exp(inv * log(w));
      g += pw;
      dg += pw / w * ud;   /* d/du w^inv = w^(inv-1) u^(am1-1) */
    }
    ev++;
    /* done at the rounding of the sum itself (its terms add up to ~1): u is then as good as the
     * constraint sum p = 1 can make it, ~1e-16 absolute */
    if (fabs(g) <= (double)(first + q + 4) * 0x1p-52) break;
    if (g < 0.0) a = u; else b = u;
    double un = u - g / dg;
    if (!(un > a && un < b)) un = 0.5 * (a + b);
    const int done = fabs(un - u) <= 0x1p-50 * u || !(b - a > 0x1p-52 * b);
    u = un;
    if (done) break;
  }
  if (first == 0) u = 1.0 / (double)q;   /* only the tied max: 1/t each */
  const double ua = exp(am1 * log(u));
  for (int64_t j = 0; j < (k + AL_V - 1) / AL_V * AL_V; j++) o[j] = 0.0f;
  for (int64_t j = 0; j < k; j++) {
    if (c[j] == v) o[j] = (float)u;
    else if (c[j] > v) o[j] = (float)exp(inv * log(ua + ((double)c[j] - (double)v) * am1));
  }
  return ev > 1 ? ev : 1;
}
