/* core/norm_softmax.c -- softmax over rows, its backward, and helpers shared by the other
 * normalizers (argument checks, support counts).
 *
 * Pure C11 + OpenMP, no Lua, no BLAS. The loops are written so that GCC -O3 -march=native
 * vectorizes them: al_expf (include/attnlab/normalizers.h) instead of libm's expf, and sums
 * over explicit 16-lane arrays (fixed order: the result never depends on the thread count,
 * nor on the vector width the compiler picks). Rows are split across threads, reductions not. */
#include <inttypes.h>
#include <math.h>

#include "attnlab/normalizers.h"
#include "attnlab/threads.h"

al_status al_norm_check_(const char *who, const void *out, const void *x, const uint8_t *keep,
                         int64_t mrows, int64_t rows, int64_t n) {
  if (rows < 0 || n < 0)
    return al_seterr(AL_EINVAL, "%s: bad shape (rows=%" PRId64 ", n=%" PRId64 "), want >= 0",
                     who, rows, n);
  if (rows * n > 0 && (!out || !x))
    return al_seterr(AL_EINVAL, "%s: NULL %s for (%" PRId64 ", %" PRId64 ")", who,
                     !out ? "output" : "input", rows, n);
  if (keep) {
    if (mrows <= 0 || rows % mrows != 0)
      return al_seterr(AL_EINVAL,
                       "%s: keep mask is (%" PRId64 ", %" PRId64 "), want (mrows, %" PRId64
                       ") with rows %% mrows == 0 for x (%" PRId64 ", %" PRId64 ")",
                       who, mrows, n, n, rows, n);
  }
  return AL_OK;
}

void al_support_count(int32_t *count, const float *out, int64_t rows, int64_t n) {
  if (!count || rows <= 0) return;
#pragma omp parallel for schedule(static) if (rows * n >= AL_PAR_MIN_WORK)
  for (int64_t r = 0; r < rows; r++) {
    const float *o = out + r * n;
    int32_t c = 0;
#pragma omp simd reduction(+ : c)
    for (int64_t j = 0; j < n; j++) c += o[j] > 0.0f;
    count[r] = c;
  }
}

/* One row: o = exp(x - max) / sum over the kept entries. Masked (or -inf) entries get
 * exp(-inf) = 0 exactly. The max shift keeps every exponent <= 0, so no overflow for any
 * finite input, and the largest term is exp(0) = 1, so the sum is >= 1 (no 0/0). */
static inline void softmax_row(float *o, const float *x, const uint8_t *kr, int64_t n) {
  int bad;
  float m = al_norm_rowmax_(x, kr, n, &bad);
  if (bad) { al_norm_fill_(o, n, NAN); return; }
  if (m == -INFINITY) { al_norm_fill_(o, n, 0.0f); return; }   /* nothing kept */
  /* exp and the double sum in one pass, 16 lanes at a time (see AL_LANE_LOOP). */
  double a[AL_LANES] = {0};
  if (kr) {
#define SOFTMAX_MASKED(J, L, V)                                                \
  {                                                                            \
    float e = al_fmask_(al_expf_le0(x[J] - m), kr[J]);                         \
    o[J] = e;                                                                  \
    a[L] += al_fmask_(e, V);                                                   \
  }
    AL_LANE_LOOP(n, SOFTMAX_MASKED);
#undef SOFTMAX_MASKED
  } else {
#define SOFTMAX_PLAIN(J, L, V)                                                 \
  {                                                                            \
    float e = al_expf_le0(x[J] - m);                                           \
    o[J] = e;                                                                  \
    a[L] += al_fmask_(e, V);                                                   \
  }
    AL_LANE_LOOP(n, SOFTMAX_PLAIN);
#undef SOFTMAX_PLAIN
  }
  double s = al_lanes_total_(a);
  float inv = (float)(1.0 / s);
#pragma omp simd
  for (int64_t j = 0; j < n; j++) o[j] *= inv;
}

al_status al_softmax_fwd(float *out, const float *x, const uint8_t *keep, int64_t mrows,
                         int64_t rows, int64_t n) {
  al_status st = al_norm_check_("softmax", out, x, keep, mrows, rows, n);
  if (st != AL_OK) return st;
  if (rows * n == 0) return AL_OK;
  if (keep) {
#pragma omp parallel for schedule(static) if (rows * n >= AL_PAR_MIN_WORK)
    for (int64_t r = 0; r < rows; r++)
      softmax_row(out + r * n, x + r * n, al_norm_keeprow_(keep, mrows, rows, n, r), n);
  } else {
#pragma omp parallel for schedule(static) if (rows * n >= AL_PAR_MIN_WORK)
    for (int64_t r = 0; r < rows; r++) softmax_row(out + r * n, x + r * n, NULL, n);
  }
  return AL_OK;
}

/* Forward p = softmax(x): dL/dx_j = p_j (g_j - sum_i p_i g_i) (the Jacobian diag(p) - p p^T).
 * Masked entries have p_j = 0 and so get exactly 0. Shared with top-k softmax. */
static inline void softmax_bwd_row(float *gi, const float *g, const float *p, int64_t n) {
  float c = (float)al_ddot_(p, g, n);
#pragma omp simd
  for (int64_t j = 0; j < n; j++) gi[j] += p[j] * (g[j] - c);
}

al_status al_softmax_bwd(float *gin, const float *gout, const float *out, int64_t rows,
                         int64_t n) {
  al_status st = al_norm_check_("softmax_bwd", gin, gout, NULL, 1, rows, n);
  if (st == AL_OK && rows * n > 0 && !out)
    st = al_seterr(AL_EINVAL, "softmax_bwd: NULL saved output");
  if (st != AL_OK) return st;
  if (rows * n == 0) return AL_OK;
#pragma omp parallel for schedule(static) if (rows * n >= AL_PAR_MIN_WORK)
  for (int64_t r = 0; r < rows; r++)
    softmax_bwd_row(gin + r * n, gout + r * n, out + r * n, n);
  return AL_OK;
}

/* Top-k softmax's backward is softmax's: the selection is locally constant. */
al_status al_topk_softmax_bwd(float *gin, const float *gout, const float *out, int64_t rows,
                              int64_t n) {
  al_status st = al_norm_check_("topk_softmax_bwd", gin, gout, NULL, 1, rows, n);
  if (st == AL_OK && rows * n > 0 && !out)
    st = al_seterr(AL_EINVAL, "topk_softmax_bwd: NULL saved output");
  if (st != AL_OK) return st;
  if (rows * n == 0) return AL_OK;
#pragma omp parallel for schedule(static) if (rows * n >= AL_PAR_MIN_WORK)
  for (int64_t r = 0; r < rows; r++)
    softmax_bwd_row(gin + r * n, gout + r * n, out + r * n, n);
  return AL_OK;
}
