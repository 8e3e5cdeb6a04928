/* core/norm/entmax_bisect.c -- alpha-entmax over rows, alpha per row (learnable: "hae" learns
 * it per head), by safeguarded Halley/Newton steps on a norm; the registry's entmax_bisect row.
 *
 * Pure C11 + GNU vector extensions + OpenMP, no Lua. alpha-entmax (Peters, Niculae & Martins
 * 2019, eq. 9):  p_j = [(alpha-1) z_j - tau]_+^(1/(alpha-1)),  tau such that sum_j p_j = 1.
 * We shift each row so that max z = 0, write y_j = (alpha-1)(z_j - max) <= 0 and s = -tau
 * (relative to the max), and solve for s in the bracket [n^-(alpha-1), 1] (Blondel et al. 2019:
 * tau in [max-1, max-(1/n)^(alpha-1)] of (alpha-1)z).
 *
 * Why iterate on a norm: H(s) = ||[y + s]_+||_{1/(alpha-1)} is convex and increasing in s for
 * alpha <= 2 (a norm of a vector that is convex and increasing in s), with H(1) >= 1. Newton's
 * method on H(s) = 1 from an upper bound s0 <= 1 of the root (bis_start: a power-mean bound over
 * the entries above a threshold) therefore never overshoots and converges monotonically and
 * quadratically; H is much closer to linear than sum p itself (H is exactly linear while the
 * support holds one element, and exactly the sparsemax Michelot step at alpha = 2). Halley's
 * correction (the second derivative costs one more product per entry) makes it cubic, and the
 * last step is applied to the p_j by a second-order Taylor update instead of by another pass,
 * once that is exact to float precision: typically 2-3 passes from s0 where 25-50 bisections
 * would be needed. For alpha > 2 H is not convex and its slope blows up where an entry joins the
 * support: Illinois regula falsi inside the bracket instead, with d formed in double.
 * Passes run only over the candidates ((alpha-1)(x - max) > -s0, the support for any s <= s0),
 * Passes run only over the candidates ((alpha-1)(x - max) > -s0, the support for any s <= s0),
 * compacted per row, and compacted again once a Newton/Halley iterate bounds the support.
 *
 * Rows run over batches phase by phase (see bisect_batch), which lets the CPU overlap the rows'
 * chains of reductions; the per-row scalar decisions (start bounds, Newton/Halley steps, stop
 * tests) run rows-in-lanes, one vector lane per row of the batch, with results bitwise those of
 * the one-row arithmetic; the decisions are branch-free where the way a row goes is data.
 * The file opens with the scalar reference in double (the tests' oracle). */
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/normalizers.h"
#include "attnlab/threads.h"
#include "entmax_common.h"

/* ---- scalar reference (double) ----
 * out (n) = [(alpha-1)(x - max) - t]_+^(1/(alpha-1)) over the kept finite entries, t by 200
 * halvings of the bracket [-1, -(1/n)^(alpha-1)] (Blondel et al. 2019), then renormalised to
 * sum 1; param = alpha. */
void al_entmax_bisect_ref_fwd(double *out, const float *x, const uint8_t *kr, int64_t n, double param) {
  al_norm_ref_entry *v = malloc(sizeof *v * (size_t)(n > 0 ? n : 1));
  for (int64_t j = 0; j < n; j++) out[j] = 0.0;
  const int64_t m = v ? al_norm_ref_sorted_(v, x, kr, n) : 0;
  if (m == 0) { free(v); return; }
  const double mx = v[0].v, am1 = param - 1;
  double lo = -1.0, hi = -pow(1.0 / (double)n, am1), s = 0;
  for (int it = 0; it < 200; it++) {
    const double t = 0.5 * (lo + hi);
    s = 0;
    for (int64_t i = 0; i < m; i++) {
      const double d = am1 * (v[i].v - mx) - t;
      if (d > 0) s += pow(d, 1.0 / am1);
    }
    if (s >= 1) lo = t; else hi = t;
  }
  const double t = 0.5 * (lo + hi);
  s = 0;
  for (int64_t i = 0; i < m; i++) {
    const double d = am1 * (v[i].v - mx) - t;
    out[v[i].i] = d > 0 ? pow(d, 1.0 / am1) : 0.0;
    s += out[v[i].i];
  }
  for (int64_t i = 0; i < m; i++) out[v[i].i] /= s;
  free(v);
}
/* Correia, Niculae & Martins 2019: on the support w = out^(2-alpha), w~ = w / sum(w);
 * gin = w gout - w <w, gout>/sum(w); *galpha = <gout, dp/dalpha> with
 * dp/dalpha = (p - w~)/(alpha-1)^2 - (S - w~ H)/(alpha-1), S = p log p, H = sum S. */
void al_entmax_bisect_ref_bwd(double *gin, double *galpha, const double *gout, const double *out,
                              int64_t n, double param) {
  const double am1 = param - 1;
  double sw = 0, swg = 0, H = 0;
  for (int64_t j = 0; j < n; j++)
    if (out[j] > 0) {
      const double w = pow(out[j], 2 - param);
      sw += w;
      swg += w * gout[j];
      H += out[j] * log(out[j]);
    }
  double ga = 0;
  for (int64_t j = 0; j < n; j++) {
    if (!(out[j] > 0)) { gin[j] = 0.0; continue; }
    const double w = pow(out[j], 2 - param), wt = w / sw, S = out[j] * log(out[j]);
    gin[j] = w * gout[j] - w * swg / sw;
    ga += gout[j] * ((out[j] - wt) / (am1 * am1) - (S - wt * H) / am1);
  }
  if (galpha) *galpha = ga;
}

/* ---- forward ---- */
static al_status check_alpha(const char *who, const float *alpha, int64_t rows) {
  if (rows > 0 && !alpha) return al_seterr(AL_EINVAL, "%s: alpha is NULL, want %" PRId64 " values", who, rows);
  for (int64_t r = 0; r < rows; r++)
    if (!(alpha[r] > 1.0f) || alpha[r] == INFINITY)
      return al_seterr(AL_EINVAL, "%s: alpha[%" PRId64 "] = %g, want a finite alpha > 1", who,
                       r, (double)alpha[r]);
  return AL_OK;
}

/* Per-row state of alpha-entmax between the phases of a batch. */
typedef struct {
  float m, fam1, finv, finvm1;   /* max; alpha-1, 1/(alpha-1), 1/(alpha-1) - 1 as floats */
  double am1, inv;
  int32_t state;   /* 0 NaN row, 1 nothing kept, 2 done, 3 Newton, 4-6 regula falsi phases */
  int32_t k, kb;   /* candidates; their blocks */
  int32_t side;
  float lim;   /* the candidates are y > lim */
  double flo, fhi;
} bis_row;
enum { BIS_NAN, BIS_EMPTY, BIS_DONE, BIS_NEWTON, BIS_RF0, BIS_RF1, BIS_RF };

typedef struct {
  double s[AL_NORM_BATCH], lo[AL_NORM_BATCH], hi[AL_NORM_BATCH];
  double it[AL_NORM_BATCH];
  double corr[AL_NORM_BATCH], corr2[AL_NORM_BATCH];
  double am1[AL_NORM_BATCH], inv[AL_NORM_BATCH];
  double h[AL_NORM_BATCH], D[AL_NORM_BATCH], D2[AL_NORM_BATCH], dm[AL_NORM_BATCH];
  int64_t live[AL_NORM_BATCH];
  int64_t more[AL_NORM_BATCH];
} bis_lanes;

/* One evaluation at s over a row's candidates c (kbe blocks, padded with -inf): o = d^inv and
 * pc = d^(inv-1) where d = y + s > 0 (y = (alpha-1)(x - max) for alpha <= 2; for alpha > 2 c
 * holds x and d is formed in double), 0 elsewhere. Returns h = sum o; *D = sum pc (dh/ds =
 * inv D); *dmin = min d over the support. */
static inline __attribute__((always_inline)) double bis_eval(const al_vf *c, al_vf *o, al_vf *pc,
                                                             al_vf *pc2, const bis_row *r, double s,
                                                             int64_t kbe,
                                                             double *D, double *D2, float *dmin) {
  al_dacc ah, ad, ad2;
  al_dacc_init(&ah);
  al_dacc_init(&ad);
  al_dacc_init(&ad2);
  al_vf mn = al_vsplat(INFINITY);
  const al_vf fs = al_vsplat((float)s), finv = al_vsplat(r->finv), fim1 = al_vsplat(r->finvm1);
  const al_vf zero = al_vsplat(0.0f);
  if (r->finv < 1.0f) {
    /* alpha > 2: p = d^inv has an infinite slope at d = 0, so d is formed without the
     * cancellation of float y + s: in double, then rounded (relative error 2^-24 of d). */
    const al_vd dam1 = (al_vd){0} + r->am1, dm = (al_vd){0} + (double)r->m, ds = (al_vd){0} + s;
    for (int64_t b = 0; b < kbe; b++) {
      const al_vf xv = c[b];
      const al_vd lo = (al_vlo(xv) - dm) * dam1 + ds, hi = (al_vhi(xv) - dm) * dam1 + ds;
      al_vf d = {0};
      for (int l = 0; l < 8; l++) { d[l] = (float)lo[l]; d[l + 8] = (float)hi[l]; }
      const al_vm in = al_vm_gt(d, zero);
      const al_vf q = al_vzero(al_vexp(fim1 * al_vlog(d)), in);   /* d^(inv-1) >= 1 here */
      const al_vf pv = al_vzero(q * d, in);
      o[b] = pv;
      pc[b] = q;
      pc2[b] = al_vsplat(0.0f);
      ah.f += pv;
      ad.f += q;
      mn = al_vmin(mn, al_vsel(in, d, al_vsplat(INFINITY)));
      if (AL_DACC_DUE(b)) { al_dacc_flush(&ah); al_dacc_flush(&ad); }
    }
  } else {
    /* two loops (the log, then the rest): one loop's dependency chain per block is long enough
     * to fill the scheduler with two or three blocks, the split ones overlap more */
    for (int64_t b = 0; b < kbe; b++) pc[b] = fim1 * al_vlog(c[b] + fs);
    for (int64_t b = 0; b < kbe; b++) {
      const al_vf y = c[b], d = y + fs;
      const al_vf e = y - (d - fs);   /* Fast2Sum (|s| >= |y| on the support): d + e = y + s */
      const al_vm in = al_vm_gt(d, zero);
      const al_vf q = al_vzero(al_vexp_le0(pc[b]), in);   /* d^(inv-1) <= 1 */
      const al_vf pv = al_vzero(q * al_vfma(finv, e, d), in);   /* d^inv, to first order in e */
      o[b] = pv;
      pc[b] = q;
      ah.f += pv;
      ad.f += q;
      const al_vf q2 = al_vzero(q * al_vrcp_approx(d), in);   /* d^(inv-2), to ~14 bits */
      pc2[b] = q2;
      ad2.f += q2;
      mn = al_vmin(mn, al_vsel(in, d, al_vsplat(INFINITY)));
      if (AL_DACC_DUE(b)) { al_dacc_flush(&ah); al_dacc_flush(&ad); al_dacc_flush(&ad2); }
    }
  }
  *dmin = al_vhmin(mn);
  *D = al_dacc_total(&ad);
  *D2 = al_dacc_total(&ad2);
  return al_dacc_total(&ah);   /* >= the max's term (d = s): > 0 */
}

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
 * (alpha > 2: bis_step_rf.) */
AL_VI void bis_step_newton(bis_lanes *L, int q, int max_iter) {
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
static int bis_step_rf(bis_row *r, bis_lanes *L, int64_t i, double h, int max_iter) {
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

/* The lanes of v selected by m appended at c[k..] (room for 16 more); returns the new count. */
AL_VI int64_t bis_compact(float *c, int64_t k, al_vf v, al_vm m) {
#if defined(__AVX512F__)
  _mm512_storeu_ps(c + k, _mm512_maskz_compress_ps(m, (__m512)v));
  return k + al_vm_count(m);
#else
  for (uint32_t bits = al_vm_bits(m); bits; bits &= bits - 1) c[k++] = v[__builtin_ctz(bits)];
  return k;
#endif
}
/* Lanes of bits filled in order from p[0..popcount), zeros elsewhere. */
AL_VI al_vf bis_expand(const float *p, uint32_t bits) {
#if defined(__AVX512F__)
  return (al_vf)_mm512_maskz_expandloadu_ps((__mmask16)bits, p);
#else
  al_vf v = al_vsplat(0.0f);
  for (int64_t q = 0; bits; bits &= bits - 1) v[__builtin_ctz(bits)] = p[q++];
  return v;
#endif
}

/* One evaluation (bis_eval) of each row in act, at its s: the Newton rows' blocks as (row, block)
 * items in counted loops (see bisect_batch, phase 3), the regula falsi rows (alpha > 2) one by
 * one. Sets L->h, L->D, L->D2, L->dm. kbm: the largest block count. */
#define BIS_ITEMS (AL_NORM_BATCH * 16)
static inline __attribute__((always_inline)) void bis_items(al_vf *ws, int64_t per, int64_t nb,
                                                            const bis_row *st, bis_lanes *L,
                                                            const int32_t *act, int64_t na,
                                                            int64_t kbm) {
  int32_t item[BIS_ITEMS + AL_NORM_BATCH * 16];
  int64_t nt = 0, nn = 0;
  for (int64_t j = 0; j < na; j++) {   /* the Newton rows' blocks, and how many rows */
    const int newton = st[act[j]].state == BIS_NEWTON;
    nt += newton ? st[act[j]].kb : 0;
    nn += newton;
  }
  /* Items for short candidate lists (<= 2 blocks, most rows at alpha >~ 1.2), else only where
   * padding would waste >= 30% of the blocks: on rows of several blocks an item costs more
   * than a block of a row's own loop (accumulators in memory, per-item addressing), e.g. at
   * alpha ~1.05 every row has all n candidates and nothing is padded (items: slower).
   * Long rows go row by row (the loop exits matter less there). */
  const int listed = kbm <= 16 && (kbm <= 2 || 10 * nt <= 7 * nn * kbm);
  nt = 0;
  for (int64_t j = 0; j < na; j++) {
    const int64_t i = act[j];
    const int newton = listed && st[i].state == BIS_NEWTON;
    if (listed)   /* kbm items written, kb kept: no exit that depends on the row */
      for (int64_t b = 0; b < kbm; b++) item[nt + b] = (int32_t)(i << 16 | b);
    nt += newton ? st[i].kb : 0;
    if (!newton) {
      al_vf *A = ws + i * per + nb;
      float dm;
      L->h[i] = bis_eval(A, A + nb, A + 2 * nb, A + 3 * nb, &st[i], L->s[i], kbm, &L->D[i], &L->D2[i], &dm);
      L->dm[i] = dm;
    }
  }
  if (nt == 0) return;
  al_dacc ah[AL_NORM_BATCH], ad[AL_NORM_BATCH], ad2[AL_NORM_BATCH];
  al_vf mn[AL_NORM_BATCH], fs[AL_NORM_BATCH];
  for (int64_t j = 0; j < na; j++) {
    const int64_t i = act[j];
    al_dacc_init(&ah[i]);
    al_dacc_init(&ad[i]);
    al_dacc_init(&ad2[i]);
    mn[i] = al_vsplat(INFINITY);
    fs[i] = al_vsplat((float)L->s[i]);
  }
  const al_vf zero = al_vsplat(0.0f);
  /* two loops (the log, then the rest): see bis_eval */
  for (int64_t t = 0; t < nt; t++) {
    const int64_t i = item[t] >> 16, b = item[t] & 0xFFFF;
    al_vf *A = ws + i * per + nb;
    A[2 * nb + b] = al_vsplat(st[i].finvm1) * al_vlog(A[b] + fs[i]);
  }
  for (int64_t t = 0; t < nt; t++) {
    const int64_t i = item[t] >> 16, b = item[t] & 0xFFFF;
    al_vf *A = ws + i * per + nb;
    const al_vf y = A[b], d = y + fs[i];
    const al_vf e = y - (d - fs[i]);   /* Fast2Sum (|s| >= |y| on the support): d + e = y + s */
    const al_vm in = al_vm_gt(d, zero);
    const al_vf q = al_vzero(al_vexp_le0(A[2 * nb + b]), in);   /* d^(inv-1) <= 1 */
    const al_vf pv = al_vzero(q * al_vfma(al_vsplat(st[i].finv), e, d), in);   /* d^inv */
    const al_vf q2 = al_vzero(q * al_vrcp_approx(d), in);   /* d^(inv-2), to ~14 bits */
    A[nb + b] = pv;
    A[2 * nb + b] = q;
    A[3 * nb + b] = q2;
    ah[i].f += pv;
    ad[i].f += q;
    ad2[i].f += q2;
    mn[i] = al_vmin(mn[i], al_vsel(in, d, al_vsplat(INFINITY)));
    if (AL_DACC_DUE(b)) { al_dacc_flush(&ah[i]); al_dacc_flush(&ad[i]); al_dacc_flush(&ad2[i]); }
  }
  for (int64_t j = 0; j < na; j++) {
    const int64_t i = act[j];
    if (st[i].state != BIS_NEWTON) continue;
    L->dm[i] = al_vhmin(mn[i]);
    L->D[i] = al_dacc_total(&ad[i]);
    L->D2[i] = al_dacc_total(&ad2[i]);
    L->h[i] = al_dacc_total(&ah[i]);
  }
}

/* Rows in lanes (n <= BIS_TR_MAX_N): the Newton rows' candidate lists transposed, T[c] lane i =
 * candidate c of row i (-inf past its count, and in the lanes of other rows), so that one pass
 * over c evaluates every row at once: the sums come out per lane, with no per-row reduction and
 * no per-row loop exit (the (row, block) items of bis_items pay for both). A row that has stopped
 * is evaluated again at its unchanged s, to the same values, until the batch's last row stops.
 * O, P, P2: d^inv, d^(inv-1), d^(inv-2) per candidate (see bis_eval), kc vectors each. */
#define BIS_TR_MAX_N 256
AL_VI int bis_tr_ok(int64_t n) { return n <= BIS_TR_MAX_N; }
/* Their workspace: T, O, P, P2. */
AL_VI int64_t bis_tr_vectors(int64_t n) { return bis_tr_ok(n) ? 4 * AL_V * (n / AL_V + 1) : 0; }
static inline __attribute__((always_inline)) void bis_tr_eval(const al_vf *T, al_vf *O, al_vf *P,
                                                              al_vf *P2, int64_t kc, al_vf fs,
                                                              al_vf finv, al_vf fim1,
                                                              bis_lanes *L) {
  /* h straight into double: its rounding is what bounds the final s (the root of h = 1); D and
   * D2 only set the step's length, float runs of AL_DACC_RUN terms are plenty there (as in
   * bis_eval, where a row of one or two blocks puts one or two terms in a lane's run) */
  al_vd hlo = {0}, hhi = {0};
  al_dacc ad, ad2;
  al_dacc_init(&ad);
  al_dacc_init(&ad2);
  al_vf mn = al_vsplat(INFINITY);
  const al_vf zero = al_vsplat(0.0f);
  for (int64_t c = 0; c < kc; c++) P[c] = fim1 * al_vlog(T[c] + fs);   /* (see bis_eval) */
  for (int64_t c = 0; c < kc; c++) {
    const al_vf y = T[c], d = y + fs;
    const al_vf e = y - (d - fs);   /* Fast2Sum: d + e = y + s */
    const al_vm in = al_vm_gt(d, zero);
    const al_vf q = al_vzero(al_vexp_le0(P[c]), in);
    const al_vf pv = al_vzero(q * al_vfma(finv, e, d), in);
    const al_vf q2 = al_vzero(q * al_vrcp_approx(d), in);
    O[c] = pv;
    P[c] = q;
    P2[c] = q2;
    hlo += al_vlo(pv);
    hhi += al_vhi(pv);
    ad.f += q;
    ad2.f += q2;
    mn = al_vmin(mn, al_vsel(in, d, al_vsplat(INFINITY)));
    if (AL_DACC_DUE(c)) { al_dacc_flush(&ad); al_dacc_flush(&ad2); }
  }
  al_dacc_flush(&ad);
  al_dacc_flush(&ad2);
  bis_dst(L->h, hlo);
  bis_dst(L->h + 8, hhi);
  bis_dst(L->D, ad.lo);
  bis_dst(L->D + 8, ad.hi);
  bis_dst(L->D2, ad2.lo);
  bis_dst(L->D2 + 8, ad2.hi);
  bis_dst(L->dm, al_vlo(mn));
  bis_dst(L->dm + 8, al_vhi(mn));
}

/* The first s of the Newton rows (alpha <= 2), one lane per row: an upper bound s0 on s*, so
 * that Newton starts right of the root, and much tighter than 1 (H(1) >= 1: the max alone has
 * d = 1). For any set T of j entries, with q = 1/(alpha-1) >= 1 and the power-mean inequality
 * ||v||_q >= j^(1/q-1) ||v||_1 (v >= 0 in R^j):
 *   H(s) >= ||[y_T + s]_+||_q >= j^(alpha-2) sum_T (y + s),
 * so H(s_T) >= 1 at s_T = (j^(2-alpha) - sum_T y)/j, and s* <= s_T; T = {y > c} for three
 * thresholds c (each holds the max: j >= 1). sj, ss: j and sum_T y per threshold; tma: 2-alpha.
 * In float, once per row: j^(2-alpha) = exp((2-alpha) log j) is off by ~1e-6 relative (the
 * rounding of (2-alpha) log j <= 8.4 at n = 4096), which the relative margin covers (s_T >=
 * j^(2-alpha)/j); each lane of the sums adds <= nb terms of |y| <= 1, so sum_T y is off by
 * < (nb + 4) 2^-24 j and s_T by < (nb + 4) 2^-24 absolute, which the absolute margin covers
 * (as in e15_start). From 3.3 passes per row to 2.6 at n = 65 (per-head alphas in
 * (1.05, 1.95)). */
AL_VI al_vf bis_start(int64_t nb, al_vf sj1, al_vf ss1, al_vf sj2, al_vf ss2, al_vf sj4,
                      al_vf ss4, al_vf tma) {
  const al_vf b1 = (al_vexp(tma * al_vlog(sj1)) - ss1) / sj1;
  const al_vf b2 = (al_vexp(tma * al_vlog(sj2)) - ss2) / sj2;
  const al_vf b4 = (al_vexp(tma * al_vlog(sj4)) - ss4) / sj4;
  const al_vf b = al_vmin(al_vmin(b1, b2), b4);
  const al_vf bm = b * (1.0f + 1e-4f) + (float)(nb + 4) * 0x1p-23f;
  return al_vmin(bm, al_vsplat(1.0f));
}

/* Workspace vectors per row: X (the row), A (the candidates), O, P, P2 (d^inv, d^(inv-1),
 * d^(inv-2)). */
AL_VI int64_t bis_per_row(int64_t nb) { return 5 * nb; }

/* A batch of rows r0 .. r0+nr-1, n >= 16, phase by phase (so that the rows' chains overlap).
 * L: the rows' iteration state, one lane per row (bis_lanes).
 *   1. load: max, NaN/+inf test;
 *   2. candidates y = (alpha-1)(x - max) > -1 (the support for any s <= 1, with slack for
 *      rounding), compacted: the passes run on ~k/n of the row (all of it as alpha -> 1, a
 *      block as alpha -> 2); with them the sums for the start s0 >= s* (bis_start, all rows at
 *      once), and the candidates of the Newton rows compacted again to y > -s0 (29 -> ~18 of
 *      65 scores ~ N(0,1) at per-head alphas in (1.05, 1.95));
 *   3. rounds of evaluations and decisions (bis_step_newton, eight rows a vector; bis_step_rf
 *      for alpha > 2) over the rows still iterating, from s0: 3.3 -> 2.6 passes per row. Rows
 *      up to BIS_TR_MAX_N: the Newton rows in lanes (bis_tr_eval). Longer rows: their blocks as
 *      items (bis_items), and after the second round, the Newton iterate s' >= s* (never
 *      overshooting) bounds the support by y > -s' and the candidates are compacted again;
 *   4. p = [o - corr pc + corr2 pc2]_+ renormalised to sum 1, expanded back to the columns
 *      (the candidate test y > lim, repeated on the row, says where). */
static inline __attribute__((always_inline)) int bisect_batch(
    float *out, const float *x, const float *alpha, const uint8_t *keep, int64_t mrows,
    int64_t rows, int64_t n, int64_t r0, int64_t nr, int max_iter, al_vf *ws, bis_row *st,
    bis_lanes *L) {
  const al_rowgeo g = al_rowgeo_(n);
  const int64_t nb = g.nb, per = bis_per_row(nb);
  int used = 0;
  for (int i = 0; i < AL_NORM_BATCH; i++) {   /* every lane benign (see bis_lanes) */
    L->s[i] = L->hi[i] = L->h[i] = L->D[i] = L->dm[i] = 1.0;
    L->lo[i] = L->it[i] = L->corr[i] = L->corr2[i] = L->D2[i] = 0.0;
    L->am1[i] = 0.5;
    L->inv[i] = 2.0;
    L->live[i] = L->more[i] = 0;
  }
  for (int64_t i = 0; i < nr; i++) {   /* 1 */
    const float *xr = x + (r0 + i) * n;
    const uint8_t *kr = al_norm_keeprow_(keep, mrows, rows, n, r0 + i);
    al_vf *X = ws + i * per, mx = al_vsplat(-INFINITY);
    al_vm bad = al_vm_none();
    for (int64_t b = 0; b < nb; b++) {
      const al_vf v = al_norm_blk_(xr, kr, &g, b);
      X[b] = v;
      mx = al_vmax(mx, v);
      bad |= al_vm_nle(v, al_vsplat(FLT_MAX));
    }
    bis_row *r = &st[i];
    r->m = al_vhmax(mx);
    r->state = al_vm_any(bad) ? BIS_NAN : r->m == -INFINITY ? BIS_EMPTY : BIS_NEWTON;
  }
  start_lanes SL;   /* bis_start's inputs, with 2 - alpha per lane */
  float tma[AL_V];
  start_lanes_init(&SL);
  for (int l = 0; l < AL_V; l++) tma[l] = 0.5f;
  int32_t all2[AL_NORM_BATCH] = {0}, all4[AL_NORM_BATCH] = {0};   /* every candidate > -1/2, > -1/4 */
  for (int64_t i = 0; i < nr; i++) {   /* 2 */
    al_norm_prefetch_row_(x, out, r0 + i + nr, rows, n, nb);   /* the next batch */
    bis_row *r = &st[i];
    if (r->state != BIS_NEWTON) continue;
    const al_vf *X = ws + i * per;
    float *A = (float *)(X + nb);
    r->am1 = (double)alpha[r0 + i] - 1.0;
    r->inv = 1.0 / r->am1;
    r->fam1 = (float)r->am1;
    r->finv = (float)r->inv;
    r->finvm1 = (float)(r->inv - 1.0);
    L->am1[i] = r->am1;
    L->inv[i] = r->inv;
    const int big = r->finv < 1.0f;   /* alpha > 2: keep x, d is formed in double */
    const al_vf m = al_vsplat(r->m), fam1 = al_vsplat(r->fam1), lim = al_vsplat(-1.0001f);
    int64_t k = 0, k2 = 0, k4 = 0;
    al_vf a1 = al_vsplat(0.0f), a2 = a1, a4 = a1;   /* sum y over y > -1.0001, > -1/2, > -1/4 */
    for (int64_t b = 0; b < nb; b++) {
      const al_vf v = X[b], y = (v - m) * fam1;
      const al_vm m1 = al_vm_gt(y, lim), m2 = al_vm_gt(y, al_vsplat(-0.5f));
      const al_vm m4 = al_vm_gt(y, al_vsplat(-0.25f));
      k = bis_compact(A, k, big ? v : y, m1);
      k2 += al_vm_count(m2);
      k4 += al_vm_count(m4);
      a1 += al_vzero(y, m1);
      a2 += al_vzero(y, m2);
      a4 += al_vzero(y, m4);
    }
    if (!big) {
      start_lanes_put(&SL, i, k, k2, k4, a1, a2, a4);
      tma[i] = (float)(1.0 - r->am1);
    }
    all2[i] = k2 == k;
    all4[i] = k4 == k;
    r->k = (int32_t)k;
    r->lim = -1.0001f;   /* (L: the bracket H(lo = 0) <= 1 <= H(hi = s = 1), corr = 0) */
    if (big) r->state = BIS_RF0;
  }
  {   /* the start s0 >= s* of the Newton rows (bis_start), and their candidates cut to y > -s0 */
    float s0[AL_V];
    al_vst(s0, bis_start(nb, al_vld(SL.cnt[0]), al_vld(SL.sum[0]), al_vld(SL.cnt[1]), al_vld(SL.sum[1]),
                         al_vld(SL.cnt[2]), al_vld(SL.sum[2]), al_vld(tma)));
    for (int64_t i = 0; i < nr; i++) {
      bis_row *r = &st[i];
      if (r->state != BIS_NEWTON) continue;
      L->s[i] = L->hi[i] = (double)s0[i];   /* H(s0) >= 1 */
      /* the support for any s <= s0 lies in y > -s0: compacted in place (block b is read
       * before the count reaches it) */
      float *A = (float *)(ws + i * per + nb);
      const float bound = -s0[i] * (1.0f + 1e-5f);   /* >= -1.00001 > the first cut */
      /* nothing to cut when every candidate is above it (alpha near 1: y = (alpha-1)(x - max)
       * is small, and so is the gain of s0) */
      if ((all4[i] && bound <= -0.25f) || (all2[i] && bound <= -0.5f)) continue;
      const al_vf lim = al_vsplat(bound);
      int64_t kk = 0;
      for (int64_t b = 0; b * AL_V < r->k; b++) {
        const al_vf y = al_vld(A + b * AL_V);
        const al_vm live = al_vm_ilt(al_vlane(), al_vspliti((int32_t)(r->k - b * AL_V)));
        kk = bis_compact(A, kk, y, al_vm_gt(y, lim) & live);
      }
      r->k = (int32_t)kk;
      r->lim = bound;
    }
  }
  /* 3. rounds over the rows still iterating (listed in act): all their evaluations, then all
   * decisions. A loop over a row's blocks would exit at a different count on every row,
   * mispredicted; padding every row to the batch's largest count evaluated many padding
   * blocks. Rows up to BIS_TR_MAX_N go in lanes, 16 rows a vector (bis_tr_eval: faster than
   * the items below, n = 16 .. 256, alpha 1.05 .. 2; the rows' sums per lane, no
   * reductions). Longer rows: the Newton rows' blocks are listed as (row, block) items and evaluated in one counted loop
   * (bis_items). The candidates are -inf padded to the largest count (for the regula falsi
   * rows, which go row by row, and the recompaction). */
  int32_t act[AL_NORM_BATCH];
  int64_t na = 0, km = 0;
  for (int64_t i = 0; i < nr; i++) {
    act[na] = (int32_t)i;
    na += st[i].state >= BIS_NEWTON;
    km = st[i].state >= BIS_NEWTON && st[i].k > km ? st[i].k : km;
  }
  int64_t kbm = (km + AL_V - 1) / AL_V;
  for (int64_t j = 0; j < na; j++) {
    pad_ninf((float *)(ws + act[j] * per + nb), st[act[j]].k, kbm);
    st[act[j]].kb = (st[act[j]].k + AL_V - 1) / AL_V;
  }
  /* rows in lanes (bis_tr_eval) for rows up to BIS_TR_MAX_N: the Newton rows' candidates
   * transposed, block by block */
  const int tr = bis_tr_ok(n);
  al_vf *T = NULL, *TO = NULL, *TP = NULL, *TP2 = NULL;
  int64_t kcn = 0, kbn = 0;   /* the Newton rows' largest candidate count; its blocks */
  int32_t lane_newton[AL_NORM_BATCH] = {0};
  float finv_l[AL_NORM_BATCH], fim1_l[AL_NORM_BATCH];
  if (tr) {
    T = ws + AL_NORM_BATCH * per;   /* (past 16 rows: a batch has 16 rows of room here) */
    TO = T + AL_V * nb;
    TP = TO + AL_V * nb;
    TP2 = TP + AL_V * nb;
    for (int64_t i = 0; i < AL_NORM_BATCH; i++) {
      lane_newton[i] = i < nr && st[i].state == BIS_NEWTON;
      finv_l[i] = lane_newton[i] ? st[i].finv : 2.0f;
      fim1_l[i] = lane_newton[i] ? st[i].finvm1 : 1.0f;
      kcn = lane_newton[i] && st[i].k > kcn ? st[i].k : kcn;
    }
    kbn = (kcn + AL_V - 1) / AL_V;
    cand_transpose(T, ws + nb, per, kbn, lane_newton);
  }
  for (int round = 0; round < max_iter + 2 && na > 0; round++) {
    if (tr) {
      int newton_live = 0;
      for (int64_t j = 0; j < na; j++) newton_live |= st[act[j]].state == BIS_NEWTON;
      if (newton_live) {
        float fsl[AL_NORM_BATCH];
        for (int64_t i = 0; i < AL_NORM_BATCH; i++) fsl[i] = (float)L->s[i];
        bis_tr_eval(T, TO, TP, TP2, kcn, al_vld(fsl), al_vld(finv_l), al_vld(fim1_l), L);
        for (int64_t i = 0; i < AL_NORM_BATCH; i++)   /* the other lanes benign */
          if (!lane_newton[i]) { L->h[i] = L->D[i] = L->dm[i] = 1.0; L->D2[i] = 0.0; }
      }
      for (int64_t j = 0; j < na; j++) {   /* regula falsi rows, one by one */
        const int64_t i = act[j];
        if (st[i].state == BIS_NEWTON) continue;
        al_vf *A = ws + i * per + nb;
        float dm;
        L->h[i] = bis_eval(A, A + nb, A + 2 * nb, A + 3 * nb, &st[i], L->s[i], kbm, &L->D[i], &L->D2[i], &dm);
        L->dm[i] = dm;
      }
    } else {
      bis_items(ws, per, nb, st, L, act, na, kbm);
    }
    for (int64_t j = 0; j < na; j++) {
      const int64_t i = act[j];
      L->live[i] = -(int64_t)(st[i].state == BIS_NEWTON);
    }
    for (int q = 0; q < nr; q += 8) bis_step_newton(L, q, max_iter);
    int64_t na2 = 0;
    for (int64_t j = 0; j < na; j++) {
      const int64_t i = act[j];
      const int more = st[i].state == BIS_NEWTON ? L->more[i] != 0 : bis_step_rf(&st[i], L, i, L->h[i], max_iter);
      L->live[i] = 0;
      st[i].state = more ? st[i].state : BIS_DONE;   /* O, P hold its last evaluation */
      act[na2] = (int32_t)i;
      na2 += more;
    }
    na = na2;
    if (round == 1 && !tr) {   /* the support lies in y > -hi (H(hi) >= 1): fewer candidates */
      km = 0;
      for (int64_t j = 0; j < na; j++) {
        bis_row *r = &st[act[j]];
        float *A = (float *)(ws + act[j] * per + nb);
        /* (regula falsi rows keep theirs: hi there is not checked the same way) */
        const double hi = L->hi[act[j]];
        float bound = r->state == BIS_NEWTON && hi < 1.0 ? (float)(-hi * (1.0 + 1e-4)) : r->lim;
        bound = bound > r->lim ? bound : r->lim;   /* (never looser than the cut already made) */
        const al_vf lim = al_vsplat(bound);
        int64_t k = 0;
        for (int64_t b = 0; b < kbm; b++) {   /* in place: block b is read before k reaches it */
          const al_vf y = al_vld(A + b * AL_V);
          k = bis_compact(A, k, y, al_vm_gt(y, lim));
        }
        r->k = (int32_t)k;
        r->lim = bound;   /* the candidates are now y > bound (> -1.0001) */
        km = k > km ? k : km;
      }
      kbm = (km + AL_V - 1) / AL_V;
      for (int64_t j = 0; j < na; j++) {
        pad_ninf((float *)(ws + act[j] * per + nb), st[act[j]].k, kbm);
        st[act[j]].kb = (st[act[j]].k + AL_V - 1) / AL_V;
      }
    }
  }
  if (tr && kbn > 0) {   /* the Newton rows' final values, p = [o - corr pc + corr2 pc2]_+, back to rows */
    float fc_l[AL_NORM_BATCH], fc2_l[AL_NORM_BATCH];
    for (int64_t i = 0; i < AL_NORM_BATCH; i++) {
      fc_l[i] = (float)L->corr[i];
      fc2_l[i] = (float)L->corr2[i];
    }
    const al_vf fc = al_vld(fc_l), fc2 = al_vld(fc2_l);
    for (int64_t c = 0; c < kcn; c++) {
      const al_vf v = al_vfma(fc2, TP2[c], al_vfma(-fc, TP[c], TO[c]));
      TO[c] = al_vzero(v, al_vm_gt(v, al_vsplat(0.0f)));
    }
    for (int64_t c = kcn; c < kbn * AL_V; c++) TO[c] = al_vsplat(0.0f);
    for (int64_t cb = 0; cb < kbn; cb++) {
      al_vf t[AL_V];
      for (int64_t j = 0; j < AL_V; j++) t[j] = TO[cb * AL_V + j];
      al_vtranspose16(t);
      for (int64_t i = 0; i < nr; i++)
        if (lane_newton[i]) ws[i * per + 2 * nb + cb] = t[i];
    }
  }
  for (int64_t i = 0; i < nr; i++) {   /* 4 */
    bis_row *r = &st[i];
    float *o = out + (r0 + i) * n;
    if (r->state == BIS_NAN) { al_norm_fill_(o, n, NAN); used = used > 1 ? used : 1; continue; }
    if (r->state == BIS_EMPTY) { al_norm_fill_(o, n, 0.0f); used = used > 1 ? used : 1; continue; }
    used = (int)L->it[i] > used ? (int)L->it[i] : used;
    al_vf *X = ws + i * per, *O = X + 2 * nb;
    const al_vf *P = X + 3 * nb, *P2 = X + 4 * nb;
    const al_vf fc = al_vsplat((float)L->corr[i]), fc2 = al_vsplat((float)L->corr2[i]);
    al_dacc sum;
    al_dacc_init(&sum);
    for (int64_t b = 0; b < r->kb; b++) {
      if (!lane_newton[i]) {   /* (the Newton rows' are final already, when tr) */
        const al_vf v = al_vfma(fc2, P2[b], al_vfma(-fc, P[b], O[b]));
        O[b] = al_vzero(v, al_vm_gt(v, al_vsplat(0.0f)));
      }
      sum.f += O[b];
      if (AL_DACC_DUE(b)) al_dacc_flush(&sum);
    }
    const al_vf sc = al_vsplat((float)(1.0 / al_dacc_total(&sum)));
    /* expand back: the candidates are y > lim, in column order; the last block first (its
     * values are the list's last: the k candidates are exactly the row's y > lim) */
    const al_vf m = al_vsplat(r->m), fam1 = al_vsplat(r->fam1), lim = al_vsplat(r->lim);
    const float *pv = (const float *)O;
    if (g.rem) {
      const uint32_t bits = al_vm_bits(al_vm_gt((X[g.nbf] - m) * fam1, lim));
      al_vst(o + g.jt, bis_expand(pv + r->k - __builtin_popcount(bits), bits) * sc);
    }
    int64_t off = 0;
    for (int64_t b = 0; b < g.nbf; b++) {
      const uint32_t bits = al_vm_bits(al_vm_gt((X[b] - m) * fam1, lim));
      al_vst(o + b * AL_V, bis_expand(pv + off, bits) * sc);
      off += __builtin_popcount(bits);
    }
  }
  return used;
}

static int bisect_range(float *out, const float *x, const float *alpha, const uint8_t *keep,
                        int64_t mrows, int64_t rows, int64_t n, int64_t r0, int64_t r1,
                        int max_iter, al_vf *ws) {
  bis_row st[AL_NORM_BATCH];
  bis_lanes L;
  int used = 0;
  if (n < AL_V) {   /* rows padded to one block, a batch at a time */
    for (int64_t r = r0; r < r1; r += AL_NORM_BATCH) {
      const int64_t nr = r1 - r < AL_NORM_BATCH ? r1 - r : AL_NORM_BATCH;
      float xp[AL_NORM_BATCH * AL_V], op[AL_NORM_BATCH * AL_V];
      uint8_t kp[AL_NORM_BATCH * AL_V];
      pad_rows(xp, kp, x, keep, mrows, rows, n, r, nr);
      const int u = bisect_batch(op, xp, alpha + r, kp, nr, nr, AL_V, 0, nr, max_iter, ws, st, &L);
      used = u > used ? u : used;
      unpad_rows(out, op, n, r, nr);
    }
    return used;
  }
  const int64_t bs = al_norm_batch_(n);
  for (int64_t r = r0; r < r1; r += bs) {
    const int64_t nr = r1 - r < bs ? r1 - r : bs;
    const int u = keep ? bisect_batch(out, x, alpha, keep, mrows, rows, n, r, nr, max_iter, ws, st, &L)
                       : bisect_batch(out, x, alpha, NULL, 1, rows, n, r, nr, max_iter, ws, st, &L);
    used = u > used ? u : used;
  }
  return used;
}

typedef struct {
  float *out;
  const float *x, *alpha;
  const uint8_t *keep;
  int64_t mrows, rows, n;
  int max_iter;
  int used;   /* the max evaluations per row over the threads */
} fwd_args;
static void bisect_fwd_sweep(void *ctx, al_vf *ws, int64_t r0, int64_t r1) {
  fwd_args *a = ctx;
  const int u = bisect_range(a->out, a->x, a->alpha, a->keep, a->mrows, a->rows, a->n, r0, r1,
                             a->max_iter, ws);
#pragma omp critical(al_bisect_used)
  a->used = u > a->used ? u : a->used;
}

al_status al_entmax_bisect_fwd(float *out, const float *x, const float *alpha,
                               const uint8_t *keep, int64_t mrows, int64_t rows, int64_t n,
                               int max_iter, int *iters_used) {
  al_status st = al_norm_check_("entmax_bisect", out, x, keep, mrows, rows, n);
  if (st == AL_OK) st = check_alpha("entmax_bisect", alpha, rows);
  if (st == AL_OK && max_iter < 1)
    st = al_seterr(AL_EINVAL, "entmax_bisect: max_iter = %d, want >= 1", max_iter);
  if (st != AL_OK) return st;
  if (iters_used) *iters_used = 0;
  if (rows * n == 0) return AL_OK;
  fwd_args a = {out, x, alpha, keep, mrows, rows, n, max_iter, 0};
  st = al_norm_sweep_("entmax_bisect", rows, n,
                      al_norm_batch_(n) * bis_per_row(n / AL_V + 1) + bis_tr_vectors(n),
                      bisect_fwd_sweep, &a);
  if (st == AL_OK && iters_used) *iters_used = a.used;
  return st;
}

/* ---- backward ---- */

/* Backward of p = [(alpha-1)z - tau]_+^(1/(alpha-1)) with sum p = 1.
 * Implicit differentiation (Peters et al. 2019, Prop. 2; Correia et al. 2019, eq. 10-12):
 *   w = p^(2-alpha) on the support, dL/dz = w*g - w <w, g>/sum(w);
 *   dp/dalpha = (p - w~)/(alpha-1)^2 - (S - w~ H)/(alpha-1),  S = p log p, H = sum S,
 *   w~ = w / sum(w), so dL/dalpha = (<g,p> - <g,w~>)/(alpha-1)^2 - (<g,S> - <g,w~> H)/(alpha-1)
 *   = sum_j t_j - <g,w~> (1/(alpha-1)^2 - H/(alpha-1)),  t_j = g_j (p_j/(alpha-1) - S_j)/(alpha-1).
 * The two terms cancel to O(1) as alpha -> 1: galpha carries a relative error of roughly
 * 1e-7/(alpha-1)^2 (4e-5 at alpha = 1.05) from the float w and p alone, so for alpha < 1.25 the
 * sums take exact double products; above, float runs of four terms into double (al_dacc) add
 * less than that. Rows four at a time (in lockstep: one row alone is latency-bound); rows up to
 * BIS_TR_MAX_N 16 at a time in lanes instead (bisect_bwd_lanes: faster in cache, less so where
 * memory bounds it, no gain where the support is the whole row). */
#define BIS_R 4
/* Only the support matters (w = S = 0 off it), and for alpha well above 1 it is a small part of
 * the row (~15 of 65 scores ~ N(0,1) at alpha = 1.5): p and g on the support are compacted
 * first (in column order: the full blocks, then the new lanes of the last block), the log, exp
 * and sums run on those blocks only, and w is expanded back to the columns for gin. Per row:
 * pc, gc, w, log p -- nb + 1 vectors each (a compress store may write 15 lanes past the end). */
AL_VI int64_t bis_bwd_per_row(int64_t nb) { return 4 * (nb + 1); }
/* Row p's support (p > 0, not NaN) compacted into pc, and g there into gc, in column order: the
 * full blocks, then the new lanes of the last block (its repeated lanes are not in it); returns
 * the support's size. pf: a gin row to prefetch for writing alongside (see al_norm_prefetch_),
 * or NULL. */
AL_VI int64_t bis_support_compact(float *pc, float *gc, const float *p, const float *gr,
                                  const al_rowgeo *g, const float *pf) {
  const al_vf zero = al_vsplat(0.0f);
  int64_t q = 0;
  for (int64_t b = 0; b < g->nbf; b++) {
    if (pf) __builtin_prefetch(pf + b * AL_V, 1, 3);
    const al_vf pv = al_vld(p + b * AL_V);
    const al_vm in = al_vm_gt(pv, zero);
    al_vst_compress(pc + q, pv, in);
    al_vst_compress(gc + q, al_vld(gr + b * AL_V), in);
    q += al_vm_count(in);
  }
  if (g->rem) {
    const al_vf pv = al_vld(p + g->jt);
    const al_vm in = al_vm_gt(pv, zero) & g->tm;
    al_vst_compress(pc + q, pv, in);
    al_vst_compress(gc + q, al_vld(gr + g->jt), in);
    q += al_vm_count(in);
  }
  return q;
}
/* gin = w (g - c) (+ gin if ACC) over row p, w given compacted (wc, k entries, as
 * bis_support_compact lays them out; 0 off the support). The last block first: its repeated
 * lanes get w = 0 and are rewritten by the full blocks. */
AL_VI void bis_grad_expand(float *gi, const float *wc, int64_t k, const float *p, const float *gr,
                           float c, const al_rowgeo *g, const int ACC) {
  const al_vf zero = al_vsplat(0.0f), cv = al_vsplat(c);
  if (g->rem) {
    const al_vm in = al_vm_gt(al_vld(p + g->jt), zero) & g->tm;
    const al_vf wv = bis_expand(wc + k - al_vm_count(in), al_vm_bits(in));
    al_vst(gi + g->jt, al_vfma(wv, al_vld(gr + g->jt) - cv, ACC ? al_vld(gi + g->jt) : zero));
  }
  int64_t off = 0;
  for (int64_t b = 0; b < g->nbf; b++) {
    const int64_t j = b * AL_V;
    const uint32_t bits = al_vm_bits(al_vm_gt(al_vld(p + j), zero));
    const al_vf wv = bis_expand(wc + off, bits);
    al_vst(gi + j, al_vfma(wv, al_vld(gr + j) - cv, ACC ? al_vld(gi + j) : zero));
    off += __builtin_popcount(bits);
  }
}
static inline __attribute__((always_inline)) void bisect_bwd_rows(
    float *gin, float *galpha, const float *gout, const float *out, const float *alpha,
    int64_t n, int64_t r0, const int R, al_vf *ws, const int ACC, int64_t rows) {
  const al_rowgeo g = al_rowgeo_(n);
  const int64_t nb = g.nb, per = bis_bwd_per_row(nb);
  const al_vf zero = al_vsplat(0.0f);
  al_dacc sw[BIS_R], sg[BIS_R], st[BIS_R], sh[BIS_R];
  const float *p[BIS_R], *gr[BIS_R];
  float *pc[BIS_R], *gc[BIS_R];
  al_vf *w[BIS_R], *lpv[BIS_R], tma[BIS_R], ia[BIS_R];
  int big[BIS_R], exact[BIS_R];
  int64_t k[BIS_R], kc = 0;
  for (int i = 0; i < R; i++) {
    p[i] = out + (r0 + i) * n;
    gr[i] = gout + (r0 + i) * n;
    pc[i] = (float *)(ws + i * per);
    gc[i] = (float *)(ws + i * per + (nb + 1));
    w[i] = ws + i * per + 2 * (nb + 1);
    lpv[i] = w[i] + (nb + 1);
    tma[i] = al_vsplat(2.0f - alpha[r0 + i]);
    ia[i] = al_vsplat((float)(1.0 / ((double)alpha[r0 + i] - 1.0)));
    big[i] = alpha[r0 + i] > 2.0f;
    exact[i] = alpha[r0 + i] < 1.25f;
    al_dacc_init(&sw[i]);
    al_dacc_init(&sg[i]);
    al_dacc_init(&st[i]);
    al_dacc_init(&sh[i]);
    const int64_t q = bis_support_compact(pc[i], gc[i], p[i], gr[i], &g,
                                          !ACC && gin && r0 + R + i < rows ? gin + (r0 + R + i) * n : NULL);
    k[i] = q;
    kc = (q + AL_V - 1) / AL_V > kc ? (q + AL_V - 1) / AL_V : kc;
  }
  for (int i = 0; i < R; i++)   /* zeros past the support, up to kc whole blocks */
    for (int64_t q = k[i]; q < kc * AL_V; q += AL_V) {
      al_vst(pc[i] + q, zero);
      al_vst(gc[i] + q, zero);
    }
  /* log p (its own loop: see bis_eval), then w, S and the four sums */
  for (int64_t b = 0; b < kc; b++)
    for (int i = 0; i < R; i++) lpv[i][b] = al_vlog(al_vld(pc[i] + b * AL_V));
  for (int64_t b = 0; b < kc; b++)
    for (int i = 0; i < R; i++) {
      const al_vf pv = al_vld(pc[i] + b * AL_V), gv = al_vld(gc[i] + b * AL_V), lp = lpv[i][b];
      const al_vm in = al_vm_gt(pv, zero);
      al_vf wv;   /* alpha <= 2: the exponent (2-alpha) log p is <= 0 */
      if (big[i]) wv = al_vzero(al_vexp(tma[i] * lp), in);
      else wv = al_vzero(al_vexp_le0(tma[i] * lp), in);
      const al_vf sv = al_vzero(pv * lp, in);
      w[i][b] = wv;
      if (galpha && exact[i]) {   /* products formed in double (see above) */
        const al_vd gl = al_vlo(gv), gh = al_vhi(gv), wl = al_vlo(wv), wh = al_vhi(wv);
        const al_vd sl = al_vlo(sv), shh = al_vhi(sv), dia = (al_vd){0} + 1.0 / ((double)alpha[r0 + i] - 1.0);
        sw[i].lo += wl;
        sw[i].hi += wh;
        sg[i].lo += wl * gl;
        sg[i].hi += wh * gh;
        st[i].lo += gl * ((al_vlo(pv) * dia - sl) * dia);
        st[i].hi += gh * ((al_vhi(pv) * dia - shh) * dia);
        sh[i].lo += sl;
        sh[i].hi += shh;
        continue;
      }
      sw[i].f += wv;
      sg[i].f = al_vfma(wv, gv, sg[i].f);
      if (galpha) {
        st[i].f = al_vfma(gv, al_vfma(pv, ia[i], -sv) * ia[i], st[i].f);
        sh[i].f += sv;
      }
      if (AL_DACC_DUE(b)) {
        al_dacc_flush(&sw[i]);
        al_dacc_flush(&sg[i]);
        al_dacc_flush(&st[i]);
        al_dacc_flush(&sh[i]);
      }
    }
  for (int i = 0; i < R; i++) {
    const double wsum = al_dacc_total(&sw[i]);
    if (!(wsum > 0.0)) {   /* all-masked row: no gradient; NaN row: NaN gradients */
      if (al_norm_nan_row_grad_(gin ? gin + (r0 + i) * n : NULL, p[i], n)) {
        if (galpha) galpha[r0 + i] = NAN;
        continue;
      }
      if (!ACC && gin) al_norm_fill_(gin + (r0 + i) * n, n, 0.0f);
      if (!ACC && galpha) galpha[r0 + i] = 0.0f;
      continue;
    }
    const double gw = al_dacc_total(&sg[i]) / wsum;   /* <g, w~> */
    if (gin) bis_grad_expand(gin + (r0 + i) * n, (const float *)w[i], k[i], p[i], gr[i], (float)gw, &g, ACC);
    if (galpha) {
      const double am1 = (double)alpha[r0 + i] - 1.0;
      const double t = al_dacc_total(&st[i]), H = al_dacc_total(&sh[i]);
      const float ga = (float)(t - gw * (1.0 / (am1 * am1) - H / am1));
      galpha[r0 + i] = ACC ? galpha[r0 + i] + ga : ga + 0.0f;   /* (+0: as accumulated into 0) */
    }
  }
}

/* Rows up to BIS_TR_MAX_N, 16 at a time in lanes: each row's support compacted as above, then
 * transposed (lane i = row i), so the log, exp and sums run once per candidate position for all
 * rows and the four sums of each row come out in its lane (no horizontal reductions, which
 * above cost about as much as the rest); w transposed back and expanded as above. The sums take
 * double products for every alpha (above, only for alpha < 1.25): each lane is one row, so the
 * terms arrive one at a time anyway. Rows r0 .. r0+R-1, R <= 16. Workspace: per row pc, gc, w
 * (nb + 1 vectors each, of room for 16 rows), then the transposed P, G, L (log p, then w): 16
 * (nb + 1) vectors each. */
AL_VI int64_t bis_bwd_lanes_vectors(int64_t nb) { return (3 * AL_NORM_BATCH + 3 * AL_V) * (nb + 1); }
static inline __attribute__((always_inline)) void bisect_bwd_lanes(
    float *gin, float *galpha, const float *gout, const float *out, const float *alpha,
    int64_t n, int64_t r0, const int R, al_vf *ws, const int ACC) {
  const al_rowgeo g = al_rowgeo_(n);
  const int64_t nb = g.nb, per = 3 * (nb + 1);
  al_vf *Pt = ws + AL_NORM_BATCH * per, *Gt = Pt + AL_V * (nb + 1), *Lt = Gt + AL_V * (nb + 1);
  const al_vf zero = al_vsplat(0.0f);
  int64_t k[AL_NORM_BATCH] = {0}, kc = 0, km = 0;
  float tma_l[AL_V];
  double dia_l[AL_V];
  int anybig = 0;
  for (int i = 0; i < AL_V; i++) {
    const double a = i < R ? (double)alpha[r0 + i] : 1.5;
    tma_l[i] = (float)(2.0 - a);   /* (2.0f - alpha as a float: the same value) */
    dia_l[i] = 1.0 / (a - 1.0);
    anybig |= a > 2.0;
  }
  /* the support p > 0 (not NaN), compacted, per row (no prefetches here: of gin, or of the next
   * group's p and g, they measured slower at full size) */
  for (int i = 0; i < R; i++) {
    k[i] = bis_support_compact((float *)(ws + i * per), (float *)(ws + i * per + (nb + 1)),
                               out + (r0 + i) * n, gout + (r0 + i) * n, &g, NULL);
    km = k[i] > km ? k[i] : km;
  }
  kc = (km + AL_V - 1) / AL_V;
  for (int64_t cb = 0; cb < kc; cb++) {   /* transposed, zeros past each row's support */
    al_vf tp[AL_V], tg[AL_V];
    for (int i = 0; i < AL_V; i++) {
      const al_vm live = al_vm_ilt(al_vlane(), al_vspliti((int32_t)(k[i] - cb * AL_V)));
      tp[i] = i < R ? al_vzero(al_vld((float *)(ws + i * per) + cb * AL_V), live) : zero;
      tg[i] = i < R ? al_vzero(al_vld((float *)(ws + i * per + (nb + 1)) + cb * AL_V), live) : zero;
    }
    al_vtranspose16(tp);
    al_vtranspose16(tg);
    for (int j = 0; j < AL_V; j++) {
      Pt[cb * AL_V + j] = tp[j];
      Gt[cb * AL_V + j] = tg[j];
    }
  }
  /* log p (its own loop: see bis_eval), then w, S and the four sums, in double, per lane */
  for (int64_t c = 0; c < km; c++) Lt[c] = al_vlog(Pt[c]);
  const al_vf tma = al_vld(tma_l);
  const al_vd dial = bis_dld(dia_l), diah = bis_dld(dia_l + 8);
  al_vd swl = {0}, swh = {0}, sgl = {0}, sgh = {0}, stl = {0}, sth = {0}, shl = {0}, shh = {0};
  for (int64_t c = 0; c < km; c++) {
    const al_vf pv = Pt[c], gv = Gt[c], lp = Lt[c];
    const al_vm in = al_vm_gt(pv, zero);
    /* (al_vexp and al_vexp_le0 agree bitwise for arguments <= 0: the lanes of alpha <= 2) */
    const al_vf wv = al_vzero(anybig ? al_vexp(tma * lp) : al_vexp_le0(tma * lp), in);
    const al_vf sv = al_vzero(pv * lp, in);
    Lt[c] = wv;
    const al_vd gl = al_vlo(gv), gh = al_vhi(gv), wl = al_vlo(wv), wh = al_vhi(wv);
    const al_vd sl = al_vlo(sv), sh = al_vhi(sv);
    swl += wl;
    swh += wh;
    sgl += wl * gl;
    sgh += wh * gh;
    stl += gl * ((al_vlo(pv) * dial - sl) * dial);
    sth += gh * ((al_vhi(pv) * diah - sh) * diah);
    shl += sl;
    shh += sh;
  }
  double wsum[AL_V], sgw[AL_V], stt[AL_V], shs[AL_V];
  bis_dst(wsum, swl); bis_dst(wsum + 8, swh);
  bis_dst(sgw, sgl); bis_dst(sgw + 8, sgh);
  bis_dst(stt, stl); bis_dst(stt + 8, sth);
  bis_dst(shs, shl); bis_dst(shs + 8, shh);
  if (gin)   /* w back to rows, into each row's w (compacted order) */
    for (int64_t cb = 0; cb < kc; cb++) {
      al_vf t[AL_V];
      for (int j = 0; j < AL_V; j++) t[j] = Lt[cb * AL_V + j];
      al_vtranspose16(t);
      for (int i = 0; i < R; i++) ws[i * per + 2 * (nb + 1) + cb] = t[i];
    }
  for (int i = 0; i < R; i++) {
    const float *p = out + (r0 + i) * n, *gr = gout + (r0 + i) * n;
    if (!(wsum[i] > 0.0)) {   /* all-masked row: no gradient; NaN row: NaN gradients */
      if (al_norm_nan_row_grad_(gin ? gin + (r0 + i) * n : NULL, p, n)) {
        if (galpha) galpha[r0 + i] = NAN;
        continue;
      }
      if (!ACC && gin) al_norm_fill_(gin + (r0 + i) * n, n, 0.0f);
      if (!ACC && galpha) galpha[r0 + i] = 0.0f;
      continue;
    }
    const double gw = sgw[i] / wsum[i];   /* <g, w~> */
    if (gin)
      bis_grad_expand(gin + (r0 + i) * n, (const float *)(ws + i * per + 2 * (nb + 1)), k[i], p, gr,
                      (float)gw, &g, ACC);
    if (galpha) {
      const double am1 = (double)alpha[r0 + i] - 1.0;
      const float ga = (float)(stt[i] - gw * (1.0 / (am1 * am1) - shs[i] / am1));
      galpha[r0 + i] = ACC ? galpha[r0 + i] + ga : ga + 0.0f;   /* (+0: as accumulated into 0) */
    }
  }
}

typedef struct {
  float *gin, *galpha;
  const float *gout, *out, *alpha;
  int64_t rows, n;
  int acc, lanes;
} bwd_args;
static void bisect_bwd_sweep(void *ctx, al_vf *ws, int64_t r0, int64_t r1) {
  const bwd_args *a = ctx;
  float *gin = a->gin, *galpha = a->galpha;
  const float *gout = a->gout, *out = a->out, *alpha = a->alpha;
  const int64_t rows = a->rows, n = a->n;
  const int acc = a->acc, lanes = a->lanes;
  int64_t r = r0;
  if (lanes) {
    for (; r < r1; r += AL_NORM_BATCH) {
      const int R = r1 - r < AL_NORM_BATCH ? (int)(r1 - r) : AL_NORM_BATCH;
      if (acc) bisect_bwd_lanes(gin, galpha, gout, out, alpha, n, r, R, ws, 1);
      else bisect_bwd_lanes(gin, galpha, gout, out, alpha, n, r, R, ws, 0);
    }
  } else if (n < AL_V) {
    for (; r < r1; r++) {
      float pp[AL_V] = {0}, gp[AL_V] = {0}, ip[AL_V] = {0}, ga = 0.0f;
      memcpy(pp, out + r * n, (size_t)n * sizeof(float));
      memcpy(gp, gout + r * n, (size_t)n * sizeof(float));
      if (gin && acc) memcpy(ip, gin + r * n, (size_t)n * sizeof(float));
      if (galpha && acc) ga = galpha[r];
      bisect_bwd_rows(gin ? ip : NULL, galpha ? &ga : NULL, gp, pp, alpha + r, AL_V, 0, 1, ws, 1, 0);
      if (gin) memcpy(gin + r * n, ip, (size_t)n * sizeof(float));
      if (galpha) galpha[r] = ga;
    }
  } else if (acc) {
    for (; r + BIS_R <= r1; r += BIS_R) bisect_bwd_rows(gin, galpha, gout, out, alpha, n, r, BIS_R, ws, 1, rows);
    for (; r < r1; r++) bisect_bwd_rows(gin, galpha, gout, out, alpha, n, r, 1, ws, 1, rows);
  } else {
    for (; r + BIS_R <= r1; r += BIS_R) bisect_bwd_rows(gin, galpha, gout, out, alpha, n, r, BIS_R, ws, 0, rows);
    for (; r < r1; r++) bisect_bwd_rows(gin, galpha, gout, out, alpha, n, r, 1, ws, 0, rows);
  }
}

static al_status bisect_bwd_all(float *gin, float *galpha, const float *gout, const float *out,
                                const float *alpha, int64_t rows, int64_t n, int acc) {
  al_status st = al_norm_check_("entmax_bisect_bwd", out, gout, NULL, 1, rows, n);
  if (st == AL_OK) st = check_alpha("entmax_bisect_bwd", alpha, rows);
  if (st != AL_OK) return st;
  if (rows * n == 0 || (!gin && !galpha)) return AL_OK;
  const int lanes = bis_tr_ok(n) && n >= AL_V;
  bwd_args a = {gin, galpha, gout, out, alpha, rows, n, acc, lanes};
  return al_norm_sweep_("entmax_bisect_bwd", rows, n,
                        lanes ? bis_bwd_lanes_vectors(n / AL_V + 1) : BIS_R * bis_bwd_per_row(n / AL_V + 1),
                        bisect_bwd_sweep, &a);
}

al_status al_entmax_bisect_bwd(float *gin, float *galpha, const float *gout, const float *out,
                               const float *alpha, int64_t rows, int64_t n) {
  return bisect_bwd_all(gin, galpha, gout, out, alpha, rows, n, 1);
}
al_status al_entmax_bisect_bwd_write(float *gin, float *galpha, const float *gout,
                                     const float *out, const float *alpha, int64_t rows,
                                     int64_t n) {
  return bisect_bwd_all(gin, galpha, gout, out, alpha, rows, n, 0);
}
