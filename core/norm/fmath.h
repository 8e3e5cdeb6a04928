/* core/norm/fmath.h -- the vectorizable scalar float math of the normalizer kernels (exp, log,
 * sqrt), private to core/norm/ and tests/c/test_normalizers.c. The kernels use the 16-lane
 * twins in core/norm/vec.h (same operations, same results, lane by lane). */
#ifndef ATTNLAB_NORM_FMATH_H
#define ATTNLAB_NORM_FMATH_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- vectorizable float math (also handy for other elementwise ops) ----
 * Plain C on purpose: GCC -O3 -march=native turns loops calling these into SIMD code, which
 * libm's expf/logf calls would prevent. No float->int conversions (no UB on NaN/inf input).
 * The kernels use their 16-lane twins (al_vexp, ...: same operations, same results). */

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
  /* Lanes below lo compute exp(-64) and are then replaced by 0: clamping them to lo itself
   * could round p * 2^-126 to a subnormal, which costs a microcode assist per vector. */
  float xc = al_fsel_(under, -64.0f, al_fsel_(over, hi, x));
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
  float xc = al_fsel_(under, -64.0f, x);       /* see al_expf */
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

#endif
