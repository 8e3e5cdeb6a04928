/* core/norm_entmax.c -- entmax-1.5 (exact) and alpha-entmax (safeguarded Newton, learnable alpha).
 *
 * Pure C11 + OpenMP, no Lua. alpha-entmax (Peters, Niculae & Martins 2019, eq. 9):
 *   p_j = [(alpha-1) z_j - tau]_+^(1/(alpha-1)),  tau such that sum_j p_j = 1.
 * We shift each row so that max z = 0, write y_j = (alpha-1)(z_j - max) <= 0 and s = -tau
 * (relative to the max), and solve for s in the bracket [n^-(alpha-1), 1] (Blondel et al. 2019:
 * tau in [max-1, max-(1/n)^(alpha-1)] of (alpha-1)z).
 *
 * Why Newton on a norm: H(s) = ||[y + s]_+||_{1/(alpha-1)} is convex and increasing in s for
 * alpha <= 2 (a norm of a vector that is convex and increasing in s), with H(1) >= 1. Newton's
 * method on H(s) = 1 from s = 1 therefore never overshoots and converges monotonically and
 * quadratically; H is much closer to linear than sum p itself (H is exactly linear while the
 * support holds one element, and exactly the sparsemax Michelot step at alpha = 2). The last
 * Newton step is applied to the p_j to first order instead of by another pass once that is
 * exact to float precision. In practice 3-6 passes where 25-50 bisections would be needed.
 * For alpha > 2 H is not convex and its slope blows up where an entry joins the support:
 * Illinois regula falsi inside the bracket instead, with d formed in double.
 * Passes run only over the candidates ((alpha-1)(x - max) > -1, the support for any s <= 1),
 * compacted once per row and padded to whole 16-lane blocks.
 *
 * entmax15 is the exact alpha = 1.5 case: p = [z/2 - tau]_+^2. On a fixed support S of size k
 * the condition sum_S (t_j - delta)^2 = 1 is a quadratic with the closed-form root used by the
 * sort-based algorithm (Peters et al. 2019, alg. 2: tau = mean - sqrt((1 - k var)/k)); we
 * reach the support with the same safe Newton steps on H = ||[u + s]_+||_2 and stop as soon as
 * the closed form is consistent (every element of S stays positive), which makes tau exact. */
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "attnlab/normalizers.h"
#include "attnlab/threads.h"

/* ------------------------------------------------------------------------------------------ */
/* entmax15                                                                                   */

/* One pass at s: o_j = t_j = [(x_j - max)/2 + s]_+ over the kept entries; returns k = |S|
 * and *mn = bits of min_S t, *s1 = sum t, *s2 = sum t^2 (double). k and mn are plain integer
 * reductions (GCC vectorizes them with a fast horizontal step); the double sums then read
 * the stored t from L1 (as fast as fusing them here, and simpler). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int32_t entmax15_pass(float *o, const float *x, const uint8_t *kr, int64_t n,
                                    float m, float s, uint32_t *mn, double *s1, double *s2) {
  int32_t k = 0;
  uint32_t mm = 0xFFFFFFFFu;
  if (kr) {
    for (int64_t j = 0; j < n; j++) {
      float t = (x[j] - m) * 0.5f + s;
      int in = (t > 0.0f) & (kr[j] != 0);
      o[j] = al_fmask_(t, in);
      k += in;
      uint32_t b = al_f2u_(t) | ((uint32_t)in - 1u);   /* all ones off S */
      mm = b < mm ? b : mm;
    }
  } else {
    for (int64_t j = 0; j < n; j++) {
      float t = (x[j] - m) * 0.5f + s;
      int in = t > 0.0f;
      o[j] = al_fmask_(t, in);
      k += in;
      uint32_t b = al_f2u_(t) | ((uint32_t)in - 1u);
      mm = b < mm ? b : mm;
    }
  }
  *mn = mm;
  *s1 = al_dsum_(o, n);
  *s2 = al_ddot_(o, o, n);
  return k;
}

/* Two rows are kept in flight: each round runs one pass for both, then the scalar decisions
 * for both. The passes and the decisions of the two rows are independent, so the CPU overlaps
 * one row's reduction and closed-form latency with the other's vector work -- a single row's
 * iteration is latency-bound (horizontal sums, sqrt, division, an unpredictable exit branch).
 * Rows are still computed exactly as alone: results do not depend on the pairing. */
typedef struct {
  float *o;
  const float *x;
  const uint8_t *kr;
  float m, s;
  int64_t it;
  int live;
} e15_slot;

/* Start row r in slot q; rows that need no iteration (NaN, all masked) are finished here. */
static inline int e15_load(e15_slot *q, float *out, const float *x, const uint8_t *keep,
                           int64_t mrows, int64_t rows, int64_t n, int64_t r) {
  q->o = out + r * n;
  q->x = x + r * n;
  q->kr = al_norm_keeprow_(keep, mrows, rows, n, r);
  int bad;
  q->m = al_norm_rowmax_(q->x, q->kr, n, &bad);
  q->live = 0;
  if (bad) { al_norm_fill_(q->o, n, NAN); return 0; }
  if (q->m == -INFINITY) { al_norm_fill_(q->o, n, 0.0f); return 0; }
  q->s = 1.0f;                   /* -tau relative to max/2; H(1) >= 1 since t_max = 1 */
  q->it = 0;
  q->live = 1;
  return 1;
}

/* After a pass: exact (write the output, return 1) or take a safe step (return 0). */
static inline int e15_decide(e15_slot *q, int64_t n, int32_t k, uint32_t mn, double s1,
                             double s2) {
  /* Closed form on S: k delta^2 - 2 s1 delta + (s2 - 1) = 0, smaller root, written without
   * cancellation: delta = (s2 - 1) / (s1 + sqrt(s1^2 - k (s2 - 1))). */
  double disc = s1 * s1 - k * (s2 - 1.0);
  double delta = 0.0;
  int exact = 0;
  if (disc >= 0.0) {
    delta = (s2 - 1.0) / (s1 + sqrt(disc));
    exact = delta <= 0.0 || (double)al_u2f_(mn) > delta;   /* S is the support */
  }
  if (!exact && ++q->it < 4 * n + 64) {
    /* Not yet the support: safe Newton step on H(s) = sqrt(s2) = 1 (convex, from the right). */
    double h = sqrt(s2);
    q->s = (float)(q->s - (s2 - h) / s1);
    return 0;
  }
  if (!exact) delta = 0.0;
  float d = (float)delta;
  float *o = q->o;
  for (int64_t j = 0; j < n; j++) {
    float t = o[j];
    float v = t - d;
    o[j] = al_fmask_(v * v, (t > 0.0f) & (v > 0.0f));
  }
  return 1;
}

static void entmax15_rows(float *out, const float *x, const uint8_t *keep, int64_t mrows,
                          int64_t rows, int64_t n, int64_t r0, int64_t r1) {
  e15_slot q[2];
  int64_t next = r0;
  for (int i = 0; i < 2; i++) {
    q[i].live = 0;
    while (!q[i].live && next < r1) e15_load(&q[i], out, x, keep, mrows, rows, n, next++);
  }
  while (q[0].live | q[1].live) {
    int32_t k[2] = {0, 0};
    uint32_t mn[2] = {0, 0};
    double s1[2] = {0, 0}, s2[2] = {0, 0};
    for (int i = 0; i < 2; i++)
      if (q[i].live)
        k[i] = entmax15_pass(q[i].o, q[i].x, q[i].kr, n, q[i].m, q[i].s, &mn[i], &s1[i], &s2[i]);
    for (int i = 0; i < 2; i++)
      if (q[i].live && e15_decide(&q[i], n, k[i], mn[i], s1[i], s2[i])) {
        q[i].live = 0;
        while (!q[i].live && next < r1) e15_load(&q[i], out, x, keep, mrows, rows, n, next++);
      }
  }
}

/* This thread's share of rows for a static split (same rows as `omp for schedule(static)`
 * would give; only the speed depends on the split, never the results). */
static inline void thread_rows(int64_t rows, int64_t *r0, int64_t *r1) {
  int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
  int64_t q = rows / nt, rem = rows % nt;
  *r0 = t * q + (t < rem ? t : rem);
  *r1 = *r0 + q + (t < rem);
}

al_status al_entmax15_fwd(float *out, const float *x, const uint8_t *keep, int64_t mrows,
                          int64_t rows, int64_t n) {
  al_status st = al_norm_check_("entmax15", out, x, keep, mrows, rows, n);
  if (st != AL_OK) return st;
  if (rows * n == 0) return AL_OK;
#pragma omp parallel if (rows * n >= AL_PAR_MIN_WORK)
  {
    int64_t r0, r1;
    thread_rows(rows, &r0, &r1);
    entmax15_rows(out, x, keep, mrows, rows, n, r0, r1);
  }
  return AL_OK;
}

/* Forward p = [z/2 - tau]_+^2. Implicit differentiation of sum p = 1 gives, with
 * w = sqrt(p) = p^(2-alpha) on the support (up to a constant factor that cancels):
 * dL/dz = w*g - w * <w, g>/sum(w). */
#define AL_ENTMAX15_WBUF 1024   /* rows up to this length keep w on the stack (4 KB) */
static inline void entmax15_bwd_row(float *gi, const float *g, const float *p, int64_t n) {
  float wbuf[AL_ENTMAX15_WBUF];
  const int keep_w = n <= AL_ENTMAX15_WBUF;   /* else recompute w in the second loop */
  double aw[AL_LANES] = {0}, ag[AL_LANES] = {0};
#define ENTMAX15_BWD(J, L, V)                                                  \
  {                                                                            \
    float w = al_sqrtf(p[J]);                                                  \
    if (keep_w) wbuf[J] = w;                                                   \
    float wc = al_fmask_(w, V);                                                \
    aw[L] += wc;                                                               \
    ag[L] += (double)wc * g[J];                                                \
  }
  AL_LANE_LOOP(n, ENTMAX15_BWD);
#undef ENTMAX15_BWD
  double ws = al_lanes_total_(aw);
  if (!(ws > 0.0)) return;   /* all-masked row */
  float c = (float)(al_lanes_total_(ag) / ws);
  if (keep_w)
    for (int64_t j = 0; j < n; j++) gi[j] += wbuf[j] * (g[j] - c);
  else
    for (int64_t j = 0; j < n; j++) gi[j] += al_sqrtf(p[j]) * (g[j] - c);
}

al_status al_entmax15_bwd(float *gin, const float *gout, const float *out, int64_t rows,
                          int64_t n) {
  al_status st = al_norm_check_("entmax15_bwd", gin, gout, NULL, 1, rows, n);
  if (st == AL_OK && rows * n > 0 && !out)
    st = al_seterr(AL_EINVAL, "entmax15_bwd: NULL saved output");
  if (st != AL_OK) return st;
  if (rows * n == 0) return AL_OK;
#pragma omp parallel for schedule(static) if (rows * n >= AL_PAR_MIN_WORK)
  for (int64_t r = 0; r < rows; r++)
    entmax15_bwd_row(gin + r * n, gout + r * n, out + r * n, n);
  return AL_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* alpha-entmax                                                                               */

static al_status check_alpha(const char *who, const float *alpha, int64_t rows) {
  if (rows > 0 && !alpha) return al_seterr(AL_EINVAL, "%s: alpha is NULL, want %" PRId64 " values", who, rows);
  for (int64_t r = 0; r < rows; r++)
    if (!(alpha[r] > 1.0f) || alpha[r] == INFINITY)
      return al_seterr(AL_EINVAL, "%s: alpha[%" PRId64 "] = %g, want a finite alpha > 1", who,
                       r, (double)alpha[r]);
  return AL_OK;
}

/* Working set of one row: the candidates (entries that can be in the support for any s <= 1,
 * i.e. (alpha-1)(x - max) > -1), compacted and padded with -inf to whole 16-lane blocks, so
 * the passes run on ~k/n of the row with no scalar tail. Scratch per thread: 4 (n + 16). */
typedef struct {
  float *xc, *oc, *pc;   /* candidate x, p, d^(inv-1) */
  int32_t *ic;           /* their column */
} bisect_ws;

/* One evaluation at s (-tau relative to the max, shifted coordinates): over the candidates,
 * o = d^inv and pd = d^(inv-1) with d = (alpha-1)(x - max) + s where d > 0, else 0.
 * Returns h = sum o; *D = sum pd (dh/ds = inv D); *dmin = min d over the support.
 * kb: number of 16-lane blocks. */
static inline double bisect_eval(const bisect_ws *w, int64_t kb, float m, float fam1,
                                 float finv, float finvm1, double s, double *D, float *dmin) {
  double ah[AL_LANES] = {0}, ad[AL_LANES] = {0};
  uint32_t mb[AL_LANES];
  for (int l = 0; l < AL_LANES; l++) mb[l] = 0xFFFFFFFFu;
  const float *xc = w->xc;
  float *oc = w->oc, *pc = w->pc;
  const float fs = (float)s;
  if (finv < 1.0f) {
    /* alpha > 2: p = d^inv has an infinite slope at d = 0, so d must be formed without the
     * cancellation of float y + s: in double, then rounded (relative error 2^-24 of d). */
    const double dam1 = fam1, dm = m;
    for (int64_t b = 0; b < kb * AL_LANES; b += AL_LANES)
      for (int l = 0; l < AL_LANES; l++) {
        float d = (float)(dam1 * ((double)xc[b + l] - dm) + s);
        int in = d > 0.0f;
        float q = al_expf(finvm1 * al_logf(d));          /* d^(inv-1) >= 1 here */
        float pv = al_fmask_(q * d, in), qv = al_fmask_(q, in);
        pc[b + l] = qv;
        oc[b + l] = pv;
        ah[l] += pv;
        ad[l] += qv;
        uint32_t db = al_f2u_(d) | ((uint32_t)in - 1u);
        mb[l] = db < mb[l] ? db : mb[l];
      }
  } else {
    for (int64_t b = 0; b < kb * AL_LANES; b += AL_LANES)
      for (int l = 0; l < AL_LANES; l++) {
        float y = (xc[b + l] - m) * fam1;
        float d = y + fs;
        float e = y - (d - fs);                          /* Fast2Sum: d + e = y + s exactly */
        int in = d > 0.0f;
        float q = al_expf_le0(finvm1 * al_logf(d));      /* d^(inv-1) <= 1; junk off S */
        float pv = al_fmask_(q * AL_FMAF(finv, e, d), in);   /* d^inv, to first order in e */
        float qv = al_fmask_(q, in);
        pc[b + l] = qv;
        oc[b + l] = pv;
        ah[l] += pv;
        ad[l] += qv;
        uint32_t db = al_f2u_(d) | ((uint32_t)in - 1u);
        mb[l] = db < mb[l] ? db : mb[l];
      }
  }
  uint32_t mm = 0xFFFFFFFFu;
  for (int l = 0; l < AL_LANES; l++) mm = mb[l] < mm ? mb[l] : mm;
  *dmin = al_u2f_(mm);
  *D = al_lanes_total_(ad);
  return al_lanes_total_(ah);                             /* >= the max's term (d = s): > 0 */
}

/* 1 - h^(-a) for h > 0, a > 0, without libm calls (two per pass would cost as much as the
 * pass) and with short dependency chains (the next pass waits for this): a double series when
 * h is near 1 (the converging passes, where precision matters), else log via atanh and exp via
 * an Estrin polynomial, relative error ~2e-6 -- plenty for an early Newton step. */
static inline double one_minus_pow_neg(double h, double a) {
  double u = h - 1.0;
  if (fabs(u) < 1e-3) {
    double lh = u * (1.0 + u * (-0.5 + u * (1.0 / 3 + u * (-0.25 + u * 0.2))));   /* log h */
    double t = -a * lh;
    if (fabs(t) < 1e-3)   /* -expm1(t): error < |t|^6/720 */
      return -t * (1.0 + t * (0.5 + t * (1.0 / 6 + t * (1.0 / 24 + t * (1.0 / 120)))));
  }
  if (!(h > 0.0) || !(h < 1e300)) return h > 1.0 ? 1.0 : -INFINITY;   /* not expected */
  /* h = 2^e m, m in [sqrt(1/2), sqrt(2)): log m = 2 atanh(t), t = (m-1)/(m+1), |t| < 0.172 */
  uint64_t b;
  memcpy(&b, &h, 8);
  int64_t e = (int64_t)((b >> 52) & 0x7FF) - 1023;
  b = (b & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull;
  double m;
  memcpy(&m, &b, 8);
  if (m > 1.4142135623730951) { m *= 0.5; e++; }
  double t = (m - 1.0) / (m + 1.0), t2 = t * t;
  double lm = 2.0 * t * ((1.0 + t2 * (1.0 / 3)) + t2 * t2 * (0.2 + t2 * (1.0 / 7)));
  double v = -a * (lm + (double)e * 0.6931471805599453);   /* log(h^-a) */
  if (v < -700.0) return 1.0;
  if (v > 700.0) return -INFINITY;
  /* exp(v) = 2^k exp(r), |r| <= ln2/2, Estrin degree 6 */
  double k = nearbyint(v * 1.4426950408889634);
  double r = v - k * 0.6931471805599453, r2 = r * r;
  double p = (1.0 + r) + r2 * ((0.5 + r * (1.0 / 6)) + r2 * ((1.0 / 24 + r * (1.0 / 120)) + r2 * (1.0 / 720)));
  return 1.0 - ldexp(p, (int)k);
}

/* One row: out receives p. Returns the number of evaluations (passes). */
static int bisect_row(float *out, const bisect_ws *w, const float *x, const uint8_t *kr,
                      int64_t n, float alpha, int max_iter) {
  int bad;
  float m = al_norm_rowmax_(x, kr, n, &bad);
  if (bad) { al_norm_fill_(out, n, NAN); return 1; }
  if (m == -INFINITY) { al_norm_fill_(out, n, 0.0f); return 1; }
  const double am1 = (double)alpha - 1.0, inv = 1.0 / am1;
  const float fam1 = (float)am1, finv = (float)inv, finvm1 = (float)(inv - 1.0);
  /* Candidates: the support for any s <= 1 lies in y > -1 (slack for y rounded in float);
   * branch-free compaction (each entry is written, the cursor advances only for candidates). */
  int64_t k = 0;
  const float xlo = m - 1.0001f / fam1;
  if (kr) {
    for (int64_t j = 0; j < n; j++) {
      float xv = x[j];
      w->xc[k] = xv;
      w->ic[k] = (int32_t)j;
      k += (xv > xlo) & (kr[j] != 0);
    }
  } else {
    for (int64_t j = 0; j < n; j++) {
      float xv = x[j];
      w->xc[k] = xv;
      w->ic[k] = (int32_t)j;
      k += xv > xlo;
    }
  }
  const int64_t kb = (k + AL_LANES - 1) / AL_LANES;
  for (int64_t i = k; i < kb * AL_LANES; i++) w->xc[i] = -INFINITY;
  const double tol = 4.0 * 0x1p-24;
  double lo = 0.0, hi = 1.0;                /* H(lo) <= 1 <= H(hi), H = h^(alpha-1) */
  double s = 1.0, h, D, corr = 0.0;
  float dmin;
  int it = 1;
  h = bisect_eval(w, kb, m, fam1, finv, finvm1, s, &D, &dmin);
  if (inv >= 1.0) {
    /* alpha <= 2: Newton on the convex H(s) = 1 from the right, never overshooting:
     * H'(s) = h^(alpha-2) D, step = (H - 1) h / (H D) = (1 - h^(1-alpha)) h / D. */
    for (;;) {
      double step = one_minus_pow_neg(h, am1) * h / D;
      /* Done when the first-order update below is exact to float precision: its error is
       * ~ (inv step / d)^2 relative for the entry nearest the support boundary. */
      if (!(fabs(step) * inv > 0x1p-12 * (double)dmin && fabs(step) > tol * s) ||
          it >= max_iter) {
        if (isfinite(step)) corr = step * inv;           /* p_j -= step inv d_j^(inv-1) */
        break;
      }
      if (step >= 0.0) hi = s; else lo = s;   /* H(s) >= 1 <=> step >= 0 */
      double sn = s - step;
      if (!(sn > lo && sn < hi)) sn = 0.5 * (lo + hi);   /* only by rounding: stay bracketed */
      s = sn;
      h = bisect_eval(w, kb, m, fam1, finv, finvm1, s, &D, &dmin);
      it++;
    }
  } else {
    /* alpha > 2: H is not convex and its slope blows up where an entry joins the support, which
     * stalls Newton; use the Illinois variant of regula falsi on H - 1 inside [lo, hi].
     * d is formed in double there, so s is resolved far below float resolution -- which
     * p = d^inv with inv < 1 needs near the support boundary. */
    double fhi = exp(am1 * log(h)) - 1.0, flo = -1.0;
    lo = exp(-am1 * log((double)k));        /* sum of k entries <= k lo^inv = 1 */
    if (it < max_iter) {
      s = lo;
      h = bisect_eval(w, kb, m, fam1, finv, finvm1, s, &D, &dmin);
      it++;
      flo = exp(am1 * log(h)) - 1.0;
    }
    int side = 0;
    while (it < max_iter && flo < 0.0 && fhi > 0.0 && hi - lo > 1e-12 * hi) {
      s = hi - fhi * (hi - lo) / (fhi - flo);
      if (!(s > lo && s < hi)) s = 0.5 * (lo + hi);
      h = bisect_eval(w, kb, m, fam1, finv, finvm1, s, &D, &dmin);
      it++;
      double f = exp(am1 * log(h)) - 1.0;
      if (f >= 0.0) {
        hi = s; fhi = f;
        if (side == 1) flo *= 0.5;
        side = 1;
      } else {
        lo = s; flo = f;
        if (side == -1) fhi *= 0.5;
        side = -1;
      }
      if (f == 0.0) break;
    }
  }
  /* Apply the last first-order correction, clip, renormalise over the support, scatter. */
  const float fc = (float)corr;
  double a[AL_LANES] = {0};
  for (int64_t b = 0; b < kb * AL_LANES; b += AL_LANES)
    for (int l = 0; l < AL_LANES; l++) {
      float v = AL_FMAF(-fc, w->pc[b + l], w->oc[b + l]);
      v = al_fmask_(v, v > 0.0f);
      w->oc[b + l] = v;
      a[l] += v;
    }
  const float sc = (float)(1.0 / al_lanes_total_(a));
  al_norm_fill_(out, n, 0.0f);
  for (int64_t i = 0; i < k; i++) out[w->ic[i]] = w->oc[i] * sc;
  return it;
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
  int nt = (rows * n >= AL_PAR_MIN_WORK) ? omp_get_max_threads() : 1;
  const size_t per = 4 * (size_t)(n + AL_LANES);          /* floats per thread */
  size_t nbytes = (size_t)nt * per * sizeof(float);
  float *scratch = al_malloc(nbytes);
  if (!scratch)
    return al_seterr(AL_ENOMEM, "entmax_bisect: no memory for %d x %zu scratch floats", nt, per);
  int used = 0;
#pragma omp parallel num_threads(nt) if (nt > 1) reduction(max : used)
  {
    float *base = scratch + (size_t)omp_get_thread_num() * per;
    bisect_ws w = {base, base + (n + AL_LANES), base + 2 * (n + AL_LANES),
                   (int32_t *)(base + 3 * (n + AL_LANES))};
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
      int u = bisect_row(out + r * n, &w, x + r * n, al_norm_keeprow_(keep, mrows, rows, n, r),
                         n, alpha[r], max_iter);
      used = u > used ? u : used;
    }
  }
  al_free(scratch, nbytes);
  if (iters_used) *iters_used = used;
  return AL_OK;
}

/* Backward of p = [(alpha-1)z - tau]_+^(1/(alpha-1)) with sum p = 1.
 * Implicit differentiation (Peters et al. 2019, Prop. 2; Correia et al. 2019, eq. 10-12):
 *   w = p^(2-alpha) on the support, dL/dz = w*g - w <w, g>/sum(w);
 *   dp/dalpha = (p - w~)/(alpha-1)^2 - (S - w~ H)/(alpha-1),  S = p log p, H = sum S,
 *   w~ = w / sum(w), so dL/dalpha = (<g,p> - <g,w~>)/(alpha-1)^2 - (<g,S> - <g,w~> H)/(alpha-1).
 * ws, ss: scratch rows for w and S. */
static void bisect_bwd_row(float *gi, float *ga, const float *g, const float *p, float alpha,
                           float *ws, float *ss, int64_t n) {
  const float tma = 2.0f - alpha;
  if (tma >= 0.0f) {   /* alpha <= 2: the exponent (2-alpha) log p is <= 0 */
    for (int64_t j = 0; j < n; j++) {
      float pj = p[j];
      int in = pj > 0.0f;
      float lp = al_logf(pj);
      ws[j] = al_fmask_(al_expf_le0(tma * lp), in);
      ss[j] = al_fmask_(pj * lp, in);
    }
  } else {
    for (int64_t j = 0; j < n; j++) {
      float pj = p[j];
      int in = pj > 0.0f;
      float lp = al_logf(pj);
      ws[j] = al_fmask_(al_expf(tma * lp), in);
      ss[j] = al_fmask_(pj * lp, in);
    }
  }
  double wsum = al_dsum_(ws, n);
  if (!(wsum > 0.0)) return;                 /* all-masked (or NaN) row: no gradient */
  double gw = al_ddot_(g, ws, n) / wsum;     /* <g, w~> */
  if (gi) {
    float c = (float)gw;
    for (int64_t j = 0; j < n; j++) gi[j] += ws[j] * (g[j] - c);
  }
  if (ga) {
    double am1 = (double)alpha - 1.0;
    double gp = al_ddot_(g, p, n), gs = al_ddot_(g, ss, n), H = al_dsum_(ss, n);
    *ga += (float)((gp - gw) / (am1 * am1) - (gs - gw * H) / am1);
  }
}

al_status al_entmax_bisect_bwd(float *gin, float *galpha, const float *gout, const float *out,
                               const float *alpha, int64_t rows, int64_t n) {
  al_status st = al_norm_check_("entmax_bisect_bwd", out, gout, NULL, 1, rows, n);
  if (st == AL_OK) st = check_alpha("entmax_bisect_bwd", alpha, rows);
  if (st != AL_OK) return st;
  if (rows * n == 0 || (!gin && !galpha)) return AL_OK;
  int nt = (rows * n >= AL_PAR_MIN_WORK) ? omp_get_max_threads() : 1;
  size_t nbytes = (size_t)nt * 2 * (size_t)n * sizeof(float);
  float *scratch = al_malloc(nbytes);
  if (!scratch)
    return al_seterr(AL_ENOMEM, "entmax_bisect_bwd: no memory for %d x 2 x %" PRId64
                     " scratch floats", nt, n);
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    float *ws = scratch + (size_t)omp_get_thread_num() * 2 * (size_t)n, *ss = ws + n;
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; r++)
      bisect_bwd_row(gin ? gin + r * n : NULL, galpha ? galpha + r : NULL, gout + r * n,
                     out + r * n, alpha[r], ws, ss, n);
  }
  al_free(scratch, nbytes);
  return AL_OK;
}
