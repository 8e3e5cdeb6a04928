/* attnlab/normalizers.h -- attention normalizers over contiguous rows (C kernels).
 *
 * Pure C11, no Lua. Every kernel maps rows of length n to probability rows:
 *   softmax            exp(x - max) / sum
 *   sparsemax          [x - tau]_+                      Martins & Astudillo 2016, eq. 2-4
 *   entmax15           [x/2 - tau]_+^2                  Peters, Niculae & Martins 2019, alg. 2
 *   entmax_bisect      [(alpha-1)x - tau]_+^(1/(alpha-1))   Peters et al. 2019 eq. 9;
 *                      alpha per row, gradient to alpha: Correia, Niculae & Martins 2019
 *   topk_softmax       softmax over the k largest entries, exact zeros elsewhere
 *
 * Layout: x, out, gout, gin are (rows, n) float32, contiguous.
 * keep:   NULL, or uint8 (mrows, n) with rows % mrows == 0; row r uses keep row
 *         r / (rows / mrows) (e.g. a key-padding mask (B, T) for scores (B, H, T, T) flattened
 *         to rows = B*H*T: mrows = B).
 *         keep[j] == 0 -> out[j] = 0 exactly and x[j] never influences anything (it may be NaN
 *         or garbage). x[j] == -inf behaves exactly like keep[j] == 0, for every normalizer.
 *         A row with no kept finite entry gives all zeros (never NaN).
 *         A kept NaN or +inf makes that whole output row NaN (as PyTorch would), so NaN guards
 *         see it instead of it being silently dropped.
 * Backward functions ACCUMULATE: gin += dL/dx. They need no mask: out is 0 where masked, and
 *         every backward gives 0 gradient where out == 0. (On a NaN output row the softmax and
 *         top-k backward propagate NaN, the sparse ones give 0: the forward NaN is the signal.)
 * Threads: rows are split across OpenMP threads when rows*n >= AL_PAR_MIN_WORK; a single row's
 *         reductions are never split, so results are bitwise identical for any thread count.
 * Sums are accumulated in double. Errors: AL_EINVAL with a message naming the bad value or shape
 *         (al_errmsg()); nothing is written then. */
#ifndef ATTNLAB_NORMALIZERS_H
#define ATTNLAB_NORMALIZERS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base.h"

/* out = softmax(x) over each row. Saves: out. */
al_status al_softmax_fwd(float *out, const float *x, const uint8_t *keep, int64_t mrows,
                         int64_t rows, int64_t n);
/* out = softmax(x): gin += out * (gout - <out, gout>). */
al_status al_softmax_bwd(float *gin, const float *gout, const float *out, int64_t rows, int64_t n);

/* out = sparsemax(x) = argmin_{p in simplex} ||p - x||^2, exact (sort-free; equals the
 * sort-based definition). Saves: out (the support is out > 0). */
al_status al_sparsemax_fwd(float *out, const float *x, const uint8_t *keep, int64_t mrows,
                           int64_t rows, int64_t n);
/* out = [x - tau]_+: gin += s * (gout - <s, gout>/|s|), s = [out > 0]. */
al_status al_sparsemax_bwd(float *gin, const float *gout, const float *out, int64_t rows,
                           int64_t n);

/* out = 1.5-entmax(x) = [x/2 - tau]_+^2 with sum 1, exact (equals the sort-based closed form).
 * Saves: out. */
al_status al_entmax15_fwd(float *out, const float *x, const uint8_t *keep, int64_t mrows,
                          int64_t rows, int64_t n);
/* out = [x/2 - tau]_+^2: w = sqrt(out), gin += w*gout - w*<w, gout>/sum(w). */
al_status al_entmax15_bwd(float *gin, const float *gout, const float *out, int64_t rows, int64_t n);

/* out = alpha-entmax(x) with alpha[r] (> 1) for row r: [(alpha-1)x - tau]_+^(1/(alpha-1)).
 * alpha: one value per row (rows floats), each must be > 1 and finite (else AL_EINVAL naming
 * the value); alpha = 2 is sparsemax, 1.5 is entmax15, alpha -> 1 tends to softmax.
 * tau lies in [max-1, max-(1/n)^(alpha-1)] of (alpha-1)x (the bisection bracket) and is solved
 * to float32 precision: for alpha <= 2 by Newton's method on the norm
 * ||[(alpha-1)x - tau]_+||_{1/(alpha-1)} = 1, which is convex in tau, so the iterates never
 * overshoot (bisection only guards against rounding), finished by an exact first-order update
 * -- typically 3-6 evaluations per row where bisection needs 25+; for alpha > 2 (not convex)
 * by Illinois regula falsi inside the bracket, to 1e-12 (20-45 evaluations: give max_iter >= 50).
 * At most max_iter (>= 1) evaluations per row; *iters_used (may be NULL) gets the max used over
 * rows. The output is renormalised to sum to 1 over the support. Saves: out and alpha. */
al_status al_entmax_bisect_fwd(float *out, const float *x, const float *alpha,
                               const uint8_t *keep, int64_t mrows, int64_t rows, int64_t n,
                               int max_iter, int *iters_used);
/* gin += dL/dx (gin may be NULL); galpha[r] += dL/dalpha_r (galpha may be NULL).
 * Correia, Niculae & Martins 2019: w = p^(2-alpha) on the support, dx = w*g - w*<w,g>/sum(w);
 * dp/dalpha = (p - w~)/(alpha-1)^2 - (S - w~ H)/(alpha-1), S = p log p, H = sum S,
 * w~ = w/sum w. The two terms of dp/dalpha cancel to O(1) as alpha -> 1, so galpha carries a
 * relative error of roughly 1e-7/(alpha-1)^2 (1e-3 at alpha = 1.01, 4e-5 at 1.05). */
al_status al_entmax_bisect_bwd(float *gin, float *galpha, const float *gout, const float *out,
                               const float *alpha, int64_t rows, int64_t n);

/* out = softmax over the k largest kept entries of each row, exact zeros elsewhere, with
 * k = max(1, ceil(ratio * n_kept)) (n_kept: kept entries that are not -inf; the ceil forgives
 * a relative rounding error of 1e-9, so 0.3*10 gives 3 and 0.25*17 gives 5). Among equal values
 * at the boundary the LOWER index wins. ratio in (0, 1], else AL_EINVAL. Saves: out. */
al_status al_topk_softmax_fwd(float *out, const float *x, double ratio, const uint8_t *keep,
                              int64_t mrows, int64_t rows, int64_t n);
/* Same as softmax's: gin += out * (gout - <out, gout>) (0 where out == 0). */
al_status al_topk_softmax_bwd(float *gin, const float *gout, const float *out, int64_t rows,
                              int64_t n);
/* The k that al_topk_softmax_fwd uses for n_kept entries (0 when n_kept == 0). */
int64_t al_topk_count(double ratio, int64_t n_kept);

/* Diagnostics: count[r] = #{j : out[r, j] > 0} (support size; rows ints). */
void al_support_count(int32_t *count, const float *out, int64_t rows, int64_t n);

/* ---- vectorizable float math used by the kernels (also handy for other elementwise ops) ----
 * Plain C on purpose: GCC -O3 -march=native turns loops calling these into SIMD code, which
 * libm's expf/logf calls would prevent. No float->int conversions (no UB on NaN/inf input). */

#if defined(__FMA__)
#define AL_FMAF(a, b, c) fmaf((a), (b), (c))
#else
#define AL_FMAF(a, b, c) ((a) * (b) + (c))
#endif

static inline uint32_t al_f2u_(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float al_u2f_(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
/* c ? a : b on the bits: GCC if-converts (vectorizes) this where a float ?: sometimes stays a
 * branch, e.g. inside loops that also update lane arrays. */
static inline float al_fsel_(int c, float a, float b) {
  uint32_t m = 0u - (uint32_t)(c != 0);
  return al_u2f_((al_f2u_(a) & m) | (al_f2u_(b) & ~m));
}

/* exp(x), within 2 ulp of expf for x in [-87.33, 88.72] (tested against expf); 0 below
 * ln(FLT_MIN) = -87.3365 (subnormal results are flushed), +inf above ln(FLT_MAX), NaN -> NaN.
 * Range reduction x = n ln2 + r, |r| <= ln2/2, and a degree-6 polynomial for exp(r) whose
 * coefficients were fitted to minimise the relative error (3e-9) on that interval. */
static inline float al_expf(float x) {
  const float lo = -87.336544750553f, hi = 88.722839f;
  int under = x < lo, over = x > hi;           /* both false for NaN: NaN propagates */
  float xc = al_fsel_(under, lo, al_fsel_(over, hi, x));
  /* Round xc/ln2 to an integer with the 1.5*2^23 trick: n lands in t's low mantissa bits. */
  float t = AL_FMAF(xc, 1.44269504088896341f, 12582912.0f);
  float nf = t - 12582912.0f;
  float r = AL_FMAF(nf, -0.693145751953125f, xc);          /* ln2 split hi+lo: hi*n exact */
  r = AL_FMAF(nf, -1.428606765330187e-06f, r);
  float q = AL_FMAF(1.381461043e-03f, r, 8.368710056e-03f);
  q = AL_FMAF(q, r, 4.166838899e-02f);
  q = AL_FMAF(q, r, 1.666652113e-01f);
  q = AL_FMAF(q, r, 4.999999404e-01f);
  float p = AL_FMAF(q, r * r, r) + 1.0f;                  /* 1 + r + r^2 q(r) */
  uint32_t n = al_f2u_(t) - 0x4B400000u;                 /* n in [-126, 128], two's complement */
  /* 2^128 is not a float: for n == 128 scale p by 2 and use 2^127. */
  uint32_t big = n == 128u;
  p = al_fsel_(big, p + p, p);
  float s = al_u2f_((n - big + 127u) << 23);
  float y = al_fsel_(under, 0.0f, p * s);
  return al_fsel_(over, INFINITY, y);
}

/* exp(x) for x <= 88 (meant for x <= 0: softmax after the max shift): al_expf without the
 * overflow handling, ~20% fewer instructions. -inf -> 0, NaN -> NaN. */
static inline float al_expf_le0(float x) {
  const float lo = -87.336544750553f;
  int under = x < lo;                          /* false for NaN: NaN propagates */
  float xc = al_fsel_(under, lo, x);
  float t = AL_FMAF(xc, 1.44269504088896341f, 12582912.0f);
  float nf = t - 12582912.0f;
  float r = AL_FMAF(nf, -0.693145751953125f, xc);
  r = AL_FMAF(nf, -1.428606765330187e-06f, r);
  float q = AL_FMAF(1.381461043e-03f, r, 8.368710056e-03f);
  q = AL_FMAF(q, r, 4.166838899e-02f);
  q = AL_FMAF(q, r, 1.666652113e-01f);
  q = AL_FMAF(q, r, 4.999999404e-01f);
  float p = AL_FMAF(q, r * r, r) + 1.0f;
  float s = al_u2f_((al_f2u_(t) - 0x4B400000u + 127u) << 23);   /* 2^n, n in [-126, 127] */
  return al_fsel_(under, 0.0f, p * s);
}

/* log(x) for x > 0 normal, within 2 ulp of logf (tested); x <= 0, subnormal, inf or NaN give
 * unspecified values -- callers mask those lanes. x = 2^e m with m in [sqrt(1/2), sqrt(2)),
 * log(m) = f - f^2/2 + f^3 P(f), f = m - 1 exact, P of degree 7 fitted for relative error
 * 6e-9 on [sqrt(1/2)-1, sqrt(2)-1]. */
static inline float al_logf(float x) {
  uint32_t u = al_f2u_(x);
  /* Move the exponent so that m lands in [sqrt(1/2), sqrt(2)): 0x3F3504F3 = sqrt(1/2). */
  uint32_t v = u - 0x3F3504F3u;
  int32_t e = (int32_t)(v >> 23) - (int32_t)((v >> 31) << 9);   /* arithmetic shift, no UB */
  float m = al_u2f_((v & 0x007FFFFFu) + 0x3F3504F3u);
  float f = m - 1.0f;
  float q = AL_FMAF(-7.634460181e-02f, f, 1.276156306e-01f);
  q = AL_FMAF(q, f, -1.316018999e-01f);
  q = AL_FMAF(q, f, 1.420176029e-01f);
  q = AL_FMAF(q, f, -1.662335694e-01f);
  q = AL_FMAF(q, f, 2.000122666e-01f);
  q = AL_FMAF(q, f, -2.500081956e-01f);
  q = AL_FMAF(q, f, 3.333333135e-01f);
  float f2 = f * f;
  float ef = (float)e;
  float y = AL_FMAF(q * f, f2, AL_FMAF(-0.5f, f2, f));     /* f - f^2/2 + f^3 q */
  y = AL_FMAF(ef, 1.42860677e-06f, y);                      /* e*ln2, split hi + lo */
  return AL_FMAF(ef, 0.693145751953125f, y);
}

/* sqrt(x) for finite x >= 0, within 1 ulp of sqrtf (tested). libm's sqrtf keeps loops scalar
 * under the default -fmath-errno. Reciprocal square root from an exponent-halving guess and
 * two Newton steps (error 5e-6), then one Newton step on sqrt itself (error ~1e-11). */
static inline float al_sqrtf(float x) {
  float y = al_u2f_(0x5F375A86u - (al_f2u_(x) >> 1));   /* 1/sqrt(x) within 3.5% */
  float hx = 0.5f * x;
  y = y * (1.5f - hx * y * y);                           /* 1.8e-3 */
  y = y * (1.5f - hx * y * y);                           /* 5e-6 */
  float r = x * y;                                       /* 0 for x = 0 */
  return AL_FMAF(0.5f * y, AL_FMAF(-r, r, x), r);
}

/* ---- internal: shared by core/norm_*.c, not part of the API ---- */

/* Checks pointers, sizes and the keep geometry; sets the message and returns AL_EINVAL. */
al_status al_norm_check_(const char *who, const void *out, const void *x, const uint8_t *keep,
                         int64_t mrows, int64_t rows, int64_t n);

/* The keep row of row r (NULL when keep is NULL). */
static inline const uint8_t *al_norm_keeprow_(const uint8_t *keep, int64_t mrows, int64_t rows,
                                              int64_t n, int64_t r) {
  return keep ? keep + (r / (rows / mrows)) * n : NULL;
}

/* v if on != 0 else +0.0f, by bit masking: GCC vectorizes this where it refuses the float
 * select `on ? v : 0.0f` (it treats a conditionally computed v as a possible FP trap). */
static inline float al_fmask_(float v, int on) {
  return al_u2f_(al_f2u_(v) & (0u - (uint32_t)(on != 0)));
}

/* Order-preserving map float -> uint32 (a < b as floats <=> key(a) < key(b) as unsigned, for
 * non-NaN values). Integer max/or reductions vectorize with a fast horizontal step, which
 * float max under the default -ftrapping-math does not. */
#define AL_KEY_NEGINF 0x007FFFFFu   /* key(-inf); keys below it are negative NaNs */
#define AL_KEY_POSINF 0xFF800000u   /* key(+inf); keys above it are positive NaNs */
static inline uint32_t al_fkey_(float f) {
  uint32_t u = al_f2u_(f);
  return u ^ ((0u - (u >> 31)) | 0x80000000u);
}
static inline float al_fkey_inv_(uint32_t k) {
  return al_u2f_(k ^ ((0u - (~k >> 31)) | 0x80000000u));
}
/* key of x, or key(-inf) when keep == 0 (bitwise select: vectorizes inside reductions). */
static inline uint32_t al_fkey_kept_(float x, uint8_t keep) {
  uint32_t m = 0u - (uint32_t)(keep != 0);
  return (al_fkey_(x) & m) | (AL_KEY_NEGINF & ~m);
}

/* Max over the kept entries of a row (-inf when none); *bad = 1 if a kept entry is NaN or +inf.
 * Masked entries are loaded but replaced, so garbage there is harmless. */
static inline float al_norm_rowmax_(const float *x, const uint8_t *kr, int64_t n, int *bad) {
  uint32_t m = AL_KEY_NEGINF, b = 0;
  if (kr) {
    for (int64_t j = 0; j < n; j++) {
      uint32_t k = al_fkey_kept_(x[j], kr[j]);
      b |= (k >= AL_KEY_POSINF) | (k < AL_KEY_NEGINF);
      m = k > m ? k : m;
    }
  } else {
    for (int64_t j = 0; j < n; j++) {
      uint32_t k = al_fkey_(x[j]);
      b |= (k >= AL_KEY_POSINF) | (k < AL_KEY_NEGINF);
      m = k > m ? k : m;
    }
  }
  *bad = b != 0;
  return al_fkey_inv_(m);
}

/* Sums in double in a fixed order -- lane l accumulates the entries j = l (mod 16), then a
 * pairwise tree -- so the result never depends on threads. Written with explicit lane arrays
 * because GCC vectorizes that (and its tree) well, while `omp simd reduction` ends in a slow
 * serial pass over the lanes and a plain loop is not vectorized at all without -ffast-math.
 *
 * AL_LANE_LOOP(n, BODY) runs BODY(J, L, V) over 16-lane blocks: J the column, L the lane (a
 * constant position in every block, so the lane arrays can live in vector registers), V = 1
 * (kept as a hook: a variant that re-ran the last block with V masking lanes measured slower
 * with GCC 12, which then scalarised the loop). The n mod 16 tail runs entry by entry into
 * lanes 0..14; GCC vectorizes that remainder loop too. */
#define AL_LANES 16
#define AL_LANE_LOOP(N, BODY)                                                          \
  do {                                                                                 \
    const int64_t al_n_ = (N), al_nb_ = al_n_ & ~(int64_t)(AL_LANES - 1);              \
    int64_t al_j_;                                                                     \
    for (al_j_ = 0; al_j_ < al_nb_; al_j_ += AL_LANES)                                 \
      for (int al_l_ = 0; al_l_ < AL_LANES; al_l_++) BODY(al_j_ + al_l_, al_l_, 1)     \
    for (; al_j_ < al_n_; al_j_++) BODY(al_j_, al_j_ - al_nb_, 1)                      \
  } while (0)

static inline double al_lanes_total_(double *a) {
  for (int l = 0; l < 8; l++) a[l] += a[l + 8];
  for (int l = 0; l < 4; l++) a[l] += a[l + 4];
  for (int l = 0; l < 2; l++) a[l] += a[l + 2];
  return a[0] + a[1];
}
static inline double al_dsum_(const float *v, int64_t n) {
  double a[AL_LANES] = {0};
#define AL_DSUM_BODY(J, L, V) a[L] += al_fmask_(v[J], V);
  AL_LANE_LOOP(n, AL_DSUM_BODY);
#undef AL_DSUM_BODY
  return al_lanes_total_(a);
}
static inline double al_ddot_(const float *u, const float *v, int64_t n) {
  double a[AL_LANES] = {0};
#define AL_DDOT_BODY(J, L, V) a[L] += (double)al_fmask_(u[J], V) * v[J];
  AL_LANE_LOOP(n, AL_DDOT_BODY);
#undef AL_DDOT_BODY
  return al_lanes_total_(a);
}

static inline void al_norm_fill_(float *o, int64_t n, float v) {
  for (int64_t j = 0; j < n; j++) o[j] = v;
}

#endif
