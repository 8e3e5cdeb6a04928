/* core/norm_sparsemax.c -- sparsemax over rows (Martins & Astudillo 2016), exact, sort-free.
 *
 * Pure C11 + OpenMP, no Lua. sparsemax(z) = argmin_{p in simplex} ||p - z||^2 = [z - tau]_+
 * with tau the unique root of f(tau) = sum_j [z_j - tau]_+ - 1 (eq. 2-4 of the paper; the
 * sort-based algorithm finds the support size k from the sorted z). Here instead, with the row
 * shifted so that max z = 0 and s = -tau in [1/n, 1]:
 *   start at s = 1 (tau = max - 1 <= tau*, since p_max <= 1), support S = {z + s > 0};
 *   the closed form on S, s' = s - (sum_S (z + s) - 1)/|S|, is a Newton step on the piecewise
 *   linear f, so s decreases monotonically to s* and S only shrinks (Michelot 1986);
 *   it stops when every element of S stays positive at s', i.e. S is the support: then
 *   tau = (sum_S z - 1)/|S| exactly as in the sort-based definition.
 * Typically 1-5 passes over a row of 65 (fewer for peaked rows); at most |S| passes. */
#include <inttypes.h>
#include <math.h>

#include "attnlab/normalizers.h"
#include "attnlab/threads.h"

/* One pass at s: o_j = t_j = [z_j + s]_+ (z = x - max, masked entries out), returns
 * sum t in double; *k = |S|, *mn = bits of min_S t (t > 0: float order = bit order).
 * k and mn are plain integer reductions, which GCC vectorizes with a fast horizontal step;
 * the double sum then reads the stored t from L1 (measured faster than fusing it here). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline double sparsemax_pass(float *o, const float *x, const uint8_t *kr, int64_t n,
                                    float m, float s, int32_t *k, uint32_t *mn) {
  int32_t kk = 0;
  uint32_t mm = 0xFFFFFFFFu;
  if (kr) {
    for (int64_t j = 0; j < n; j++) {
      float t = (x[j] - m) + s;
      int in = (t > 0.0f) & (kr[j] != 0);
      o[j] = al_fmask_(t, in);
      kk += in;
      uint32_t b = al_f2u_(t) | ((uint32_t)in - 1u);
      mm = b < mm ? b : mm;
    }
  } else {
    for (int64_t j = 0; j < n; j++) {
      float t = (x[j] - m) + s;
      int in = t > 0.0f;
      o[j] = al_fmask_(t, in);
      kk += in;
      uint32_t b = al_f2u_(t) | ((uint32_t)in - 1u);
      mm = b < mm ? b : mm;
    }
  }
  *k = kk;
  *mn = mm;
  return al_dsum_(o, n);
}

/* One row; o doubles as scratch for the shifted, clipped values t_j = [z_j + s]_+. */
static void sparsemax_row(float *o, const float *x, const uint8_t *kr, int64_t n) {
  int bad;
  float m = al_norm_rowmax_(x, kr, n, &bad);
  if (bad) { al_norm_fill_(o, n, NAN); return; }
  if (m == -INFINITY) { al_norm_fill_(o, n, 0.0f); return; }
  float s = 1.0f;          /* -tau relative to the max, as float: every pass uses this value */
  double delta = 0.0;
  for (int64_t it = 0; it <= n + 1; it++) {
    int32_t k;
    uint32_t mn;
    double s1 = sparsemax_pass(o, x, kr, n, m, s, &k, &mn);
    /* k >= 1: the max has t = s > 0. Closed form on S: sum_S (t - delta) = 1. */
    delta = (s1 - 1.0) / k;
    /* Stable support: all of S stays > 0 after the shift (delta <= 0 only by rounding). */
    if (delta <= 0.0 || (double)al_u2f_(mn) > delta) break;
    s = (float)(s - delta);
  }
  float d = (float)delta;
  for (int64_t j = 0; j < n; j++) {
    float t = o[j];
    float p = t - d;             /* (z_j + s) - delta = z_j - tau */
    o[j] = al_fmask_(p, (t > 0.0f) & (p > 0.0f));   /* t = 0 off S, even if delta < 0 */
  }
}

al_status al_sparsemax_fwd(float *out, const float *x, const uint8_t *keep, int64_t mrows,
                           int64_t rows, int64_t n) {
  al_status st = al_norm_check_("sparsemax", out, x, keep, mrows, rows, n);
  if (st != AL_OK) return st;
  if (rows * n == 0) return AL_OK;
#pragma omp parallel for schedule(static) if (rows * n >= AL_PAR_MIN_WORK)
  for (int64_t r = 0; r < rows; r++)
    sparsemax_row(out + r * n, x + r * n, al_norm_keeprow_(keep, mrows, rows, n, r), n);
  return AL_OK;
}

/* Forward p = [z - tau]_+ with tau = (sum_S z - 1)/|S|: on the support dp/dz = I - 1 1^T/|S|,
 * zero elsewhere, so dL/dz_j = s_j (g_j - sum_S g / |S|), s = [p > 0]. */
static inline void sparsemax_bwd_row(float *gi, const float *g, const float *p, int64_t n) {
  double a[AL_LANES] = {0};
  int32_t k = 0;
  for (int64_t j = 0; j < n; j++) k += p[j] > 0.0f;
#define SPARSEMAX_BWD(J, L, V) a[L] += al_fmask_(g[J], p[J] > 0.0f);
  AL_LANE_LOOP(n, SPARSEMAX_BWD);
#undef SPARSEMAX_BWD
  if (k == 0) return;   /* all-masked row: no gradient */
  float c = (float)(al_lanes_total_(a) / k);
  for (int64_t j = 0; j < n; j++) gi[j] += al_fmask_(g[j] - c, p[j] > 0.0f);
}

al_status al_sparsemax_bwd(float *gin, const float *gout, const float *out, int64_t rows,
                           int64_t n) {
  al_status st = al_norm_check_("sparsemax_bwd", gin, gout, NULL, 1, rows, n);
  if (st == AL_OK && rows * n > 0 && !out)
    st = al_seterr(AL_EINVAL, "sparsemax_bwd: NULL saved output");
  if (st != AL_OK) return st;
  if (rows * n == 0) return AL_OK;
#pragma omp parallel for schedule(static) if (rows * n >= AL_PAR_MIN_WORK)
  for (int64_t r = 0; r < rows; r++)
    sparsemax_bwd_row(gin + r * n, gout + r * n, out + r * n, n);
  return AL_OK;
}
