/* core/norm/entmax_bisect_step.c -- alpha-entmax's decisions between the passes of a forward
 * batch (core/norm/entmax_bisect.c describes the method): the safeguarded Newton/Halley step on
 * the norm H(s) = 1 for alpha <= 2, eight rows a vector, and Illinois regula falsi for alpha > 2,
 * row by row.
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
 * lanes marked live; eight at a time): the next s (more = -1) or done (more = 0).
 * alpha <= 2: Newton on the convex H(s) = h^(alpha-1) = 1 from the right, never overshooting:
 *   H'(s) = h^(alpha-2) D, step = (H - 1) h / (H D) = (1 - h^(1-alpha)) h / D;
 *   done when the first-order update p_j -= step inv d_j^(inv-1) is exact to float precision
 *   (its error is ~ (inv step / d)^2 relative for the entry nearest the support boundary).
 * (alpha > 2: al_bisect_step_rf_.) */
void al_bisect_step_newton_(bis_lanes *L, int q, int max_iter) {
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

/* The decision after an evaluation at s for alpha > 2 (row i of the batch, its h): the next s
 * (return 1) or done (0). H is not convex there and its slope blows up where an entry joins the
 * support, which stalls Newton: the Illinois variant of regula falsi on H - 1 inside [lo, hi],
 * to 1e-12. */
int al_bisect_step_rf_(bis_row *r, bis_lanes *L, int64_t i, double h, int max_iter) {
  L->it[i] += 1.0;
  const double f = exp(r->am1 * log(h)) - 1.0;
  if (r->state == BIS_RF0) {   /* at s = 1 */
    r->fhi = f;
    r->flo = -1.0;
    L->lo[i] = exp(-r->am1 * log((double)r->k));   /* a sum of k entries <= k lo^inv = 1 */
    if (L->it[i] >= max_iter) return 0;
    L->s[i] = L->lo[i];
    r->state = BIS_RF1;
    return 1;
  }
  if (r->state == BIS_RF1) {   /* at s = lo */
    r->flo = f;
    r->side = 0;
  } else {
    if (f >= 0.0) {
      L->hi[i] = L->s[i]; r->fhi = f;
      if (r->side == 1) r->flo *= 0.5;
      r->side = 1;
    } else {
      L->lo[i] = L->s[i]; r->flo = f;
      if (r->side == -1) r->fhi *= 0.5;
      r->side = -1;
    }
    if (f == 0.0) return 0;
  }
  r->state = BIS_RF;
  const double lo = L->lo[i], hi = L->hi[i];
  if (!(L->it[i] < max_iter && r->flo < 0.0 && r->fhi > 0.0 && hi - lo > 1e-12 * hi)) return 0;
  double sn = hi - r->fhi * (hi - lo) / (r->fhi - r->flo);
  if (!(sn > lo && sn < hi)) sn = 0.5 * (lo + hi);
  L->s[i] = sn;
  return 1;
}

