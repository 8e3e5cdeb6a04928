/* core/simd/fastmath.h -- the one header of vectorizable float32 transcendentals (private to
 * core/ and its C tests; pure C11, no libm calls in the hot forms).
 *
 * Why: libm's expf/logf/erff are scalar calls that GCC will not vectorize without -ffast-math,
 * which the build refuses (it breaks NaN/Inf handling). These are branch-free selects and
 * polynomials that -O3 turns into SIMD code.
 *
 * Three exp families live here, side by side, because they do NOT agree bitwise on normal
 * inputs (different reductions and polynomials), and each is part of outputs that must stay
 * bitwise what they were (the normalizers, the elementwise ops of a training run, the mixers):
 *   al_expf, al_expf_le0   (+ al_logf, al_sqrtf)  the normalizers; their 16-lane twins in
 *                          core/norm/vec.h repeat them operation for operation
 *   al_fexp, al_fexp_le0   (+ erf, erfc, the normal CDF; al_fsigmoid) the elementwise and nn ops
 *   mx_exp, mx_exp_le0     (+ expm1, log1p, sigmoid, SiLU, softplus, tanh) the mixers
 * So sigmoid (al_fsigmoid / mx_sigmoid) and softplus, SiLU exist once per family that uses them.
 * They cannot be merged without moving bits: al_expf reduces with a fitted degree-6 polynomial
 * and flushes below ln(FLT_MIN); al_fexp (Cephes) keeps subnormals; mx_exp (a Taylor series)
 * clamps at 88. Within a family the bounded forms share their reduction and polynomial
 * (al_expf_reduce_, al_fexp_core_, mx_exp_clamped_; in core/norm/vec.h al_vexp_reduce_), so
 * al_expf_le0, al_fexp_le0 and mx_exp_le0 agree bitwise with al_expf, al_fexp and mx_exp
 * wherever both are defined.
 *
 * Edge behaviour (tests/c/test_simd.c checks every line of this table, at every CPU level):
 *                     NaN     -inf   +inf   underflow                      overflow
 *   al_expf           NaN     0      +inf   0 below -87.3365 (no subnormal) +inf above 88.7228
 *   al_expf_le0       NaN     0      (x <= 88 only)  0 below -87.3365       -
 *   al_fexp           NaN     0      +inf   subnormal down to -104, then 0 +inf above 88.7228
 *   al_fexp_le0       (not NaN) 0    (x <= 88.7228 only)  as al_fexp      -
 *   mx_exp            NaN     0      1.65e38  0 below -87.3                 exp(88) = 1.65e38 above 88
 *   mx_exp_le0        NaN     0      (x <= 88 only)  0 below -87.3          -
 *   mx_expm1          NaN     -1     1.65e38
 *   mx_sigmoid        NaN     6e-39  1      mx_silu(-inf): -inf / 1.65e38 = -inf; NaN -> NaN
 *   al_fsigmoid       NaN     0      1      (keeps subnormal tails: sigmoid(-100) = 3.8e-44)
 *   mx_softplus       NaN     0      +inf   (x for x > 20 to float precision)
 * (mx_exp's clamp at 88 is the one overflow kept: no mixer helper turns a finite input into inf.)
 *   mx_tanh           NaN     -1     1      (tanh(+0) = -0: the sign of a zero is not kept)
 *   al_logf           unspecified for x <= 0, subnormal, inf or NaN (callers mask those lanes)
 *   al_sqrtf          finite x >= 0 only
 * Accuracy on normal inputs: al_expf and al_fexp within 2 ulp of expf, mx_exp within a few ulp
 * (tests/c/test_norm_math.c, test_core.c, test_mixers.c). */
#ifndef ATTNLAB_SIMD_FASTMATH_H
#define ATTNLAB_SIMD_FASTMATH_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* ======== the normalizers' family (core/norm/) ======== */
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
/* What al_expf and al_expf_le0 share: for xc in [-87.34, 88.73] (clamped by the caller),
 * xc = n ln2 + r, |r| <= ln2/2; returns p = exp(r) and sets *t, whose low mantissa bits hold n
 * (the 1.5*2^23 rounding trick). */
static inline float al_expf_reduce_(float xc, float *t) {
  *t = AL_FMAF(xc, 1.44269504088896341f, 12582912.0f);
  float nf = *t - 12582912.0f;
  float r = AL_FMAF(nf, -0.693145751953125f, xc);          /* ln2 split hi+lo: hi*n exact */
  r = AL_FMAF(nf, -1.428606765330187e-06f, r);
  float q = AL_FMAF(1.381461043e-03f, r, 8.368710056e-03f);
  q = AL_FMAF(q, r, 4.166838899e-02f);
  q = AL_FMAF(q, r, 1.666652113e-01f);
  q = AL_FMAF(q, r, 4.999999404e-01f);
  return AL_FMAF(q, r * r, r) + 1.0f;                     /* 1 + r + r^2 q(r) */
}

static inline float al_expf(float x) {
  const float lo = -87.336544750553f, hi = 88.722839f;
  int under = x < lo, over = x > hi;           /* both false for NaN: NaN propagates */
  /* Lanes below lo compute exp(-64) and are then replaced by 0: clamping them to lo itself
   * could round p * 2^-126 to a subnormal, which costs a microcode assist per vector. */
  float xc = al_fsel_(under, -64.0f, al_fsel_(over, hi, x));
  float t;
  float p = al_expf_reduce_(xc, &t);
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
  float t;
  float p = al_expf_reduce_(xc, &t);
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

/* sqrt(x) for finite x >= 0, within 1 ulp of sqrtf (tested). Written when libm's sqrtf kept
 * loops scalar under GCC's default -fmath-errno (the build now passes -fno-math-errno); the
 * normalizers' results are this function's roundings, so it stays. Reciprocal square root from an exponent-halving guess and
 * two Newton steps (error 5e-6), then one Newton step on sqrt itself (error ~1e-11). */
static inline float al_sqrtf(float x) {
  float y = al_u2f_(0x5F375A86u - (al_f2u_(x) >> 1));   /* 1/sqrt(x) within 3.5% */
  float hx = 0.5f * x;
  y = y * (1.5f - hx * y * y);                           /* 1.8e-3 */
  y = y * (1.5f - hx * y * y);                           /* 5e-6 */
  float r = x * y;                                       /* 0 for x = 0 */
  return AL_FMAF(0.5f * y, AL_FMAF(-r, r, x), r);
}


/* ======== the elementwise and nn ops' family (core/ops/unary.c, core/ops/nn.c) ========
 * exp within 2 ulp on [-87.3, 88.7], scaled with a single rounding into the subnormal range down
 * to -104 (Cody-Waite reduction + degree-6 minimax polynomial, the classic Cephes
 * coefficients); erf absolute error < 1.5e-7 (a series near 0, a Chebyshev erfc fit beyond);
 * the normal CDF al_fphi (for the exact GELU) relative error < 5e-7 in both tails. */

/* al_fexp's arithmetic on an x already in [-104, 88.72284] */
static inline float al_fexp_core_(float xc) {
  /* round-to-nearest of xc*log2(e) with the 1.5*2^23 trick (no rintf call) */
  float k = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xc - k * 0.693359375f;   /* Cody-Waite: k*0.693359375 is exact for |k| <= 150 */
  r = r + k * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  /* 2^k as 2^h * 2^(k-h), both normal floats for k in [-150, 128]: p*2^h is exact, and
   * the one rounding left is the last multiply -- so subnormal results (x < -87.3) and
   * results just below FLT_MAX come out right instead of 0 or inf */
  int32_t ki = (int32_t)k, h = ki / 2;
  uint32_t b1 = (uint32_t)(h + 127) << 23, b2 = (uint32_t)(ki - h + 127) << 23;
  float s1, s2;
  memcpy(&s1, &b1, sizeof s1);
  memcpy(&s2, &b2, sizeof s2);
  return (p * s1) * s2;
}

static inline float al_fexp(float x) {
  /* above ln(FLT_MAX) the result overflows; below -104 it rounds to 0 even as a subnormal */
  const float hi = 88.72284f, lo = -104.0f;
  float xc = x > hi ? hi : (x < lo ? lo : x);
  xc = xc == xc ? xc : 0.0f;   /* NaN: a float -> int conversion of NaN is undefined in C */
  float y = al_fexp_core_(xc);
  y = x < lo ? 0.0f : y;
  y = x > hi ? INFINITY : y;
  return x != x ? x : y;
}

/* al_fexp(x), bit for bit, for x <= 88.72284 and not NaN (the GELU forward's exponent, at
 * most ~0 and never NaN): without the overflow and NaN lanes. */
static inline float al_fexp_le0(float x) {
  const float lo = -104.0f;
  float y = al_fexp_core_(x < lo ? lo : x);
  return x < lo ? 0.0f : y;
}

/* erfc(a) for a >= 0 (and a = +inf), given a2 = a*a exactly (in double): the Chebyshev
 * fit of Numerical Recipes' erfcc, erfc(a) = t exp(-a^2 - 1.26551223 + t P(t)),
 * t = 1/(1 + a/2), fractional error < 1.2e-7 (Press et al., 2nd ed., sec. 6.2).
 * Relative accuracy is what 1 - erf and the normal CDF of negative x need. The exponent
 * is formed in double (a^2 up to ~150 would lose 1e-5 relative in float) and handed to
 * the float exp as hi + lo, exp(hi + lo) = exp(hi) (1 + lo). Everything else is float. */
/* The exponent's polynomial part: -1.26551223 + t P(t), t = 1/(1 + a/2) (also used by the
 * GELU kernels of core/ops/unary.c). */
static inline float al_erfcc_poly(float t) {
  float q = 0.17087277f;
  q = q * t - 0.82215223f;
  q = q * t + 1.48851587f;
  q = q * t - 1.13520398f;
  q = q * t + 0.27886807f;
  q = q * t - 0.18628806f;
  q = q * t + 0.09678418f;
  q = q * t + 0.37409196f;
  q = q * t + 1.00002368f;
  return t * q - 1.26551223f;
}

static inline float al_ferfc_tail(float a, double a2) {
  float t = 1.0f / (1.0f + 0.5f * a);
  a2 = a2 < 4096.0 ? a2 : 4096.0;   /* a = inf: keep exp's argument finite (lo would be NaN) */
  double arg = (double)al_erfcc_poly(t) - a2;
  float hi = (float)arg;
  float lo = (float)(arg - (double)hi);
  float e = al_fexp(hi);
  return t * (e + e * lo);
}

/* erf(x) for |x| < 0.75: its Maclaurin series to x^17, 2/sqrt(pi) sum (-1)^n x^(2n+1) /
 * (n! (2n+1)); the first dropped term is < 1e-9 there. */
static inline float al_ferf_series(float x) {
  float z = x * x;
  float p = 1.6462114365889246e-06f;
  p = p * z - 1.492565035840625e-05f;
  p = p * z + 1.2055332981789664e-04f;
  p = p * z - 8.548327023450852e-04f;
  p = p * z + 5.223977625442188e-03f;
  p = p * z - 2.6866170645131252e-02f;
  p = p * z + 1.1283791670955126e-01f;
  p = p * z - 3.7612638903183754e-01f;
  p = p * z + 1.1283791670955126f;
  return x * p;
}

/* erf(x): the series near 0 (where 1 - erfc would lose the relative accuracy of small
 * results), 1 - erfc(|x|) beyond 0.75. Both are computed and one is selected, with no FP
 * operation inside a ?: arm and no float select among values computed in double: either
 * makes GCC keep a branch (if-conversion fails) and the loop stays scalar. Absolute error
 * < 1.5e-7 (tests/c/test_core.c). */
static inline float al_ferf(float x) {
  float ax = fabsf(x);
  float tail = 1.0f - al_ferfc_tail(ax, (double)x * (double)x), ntail = -tail, series = al_ferf_series(x);
  tail = x < 0 ? ntail : tail;
  float y = ax < 0.75f ? series : tail;
  return x != x ? x : y;
}

/* The standard normal CDF Phi(x) = (1 + erf(x/sqrt2))/2 = erfc(-x/sqrt2)/2, for the exact
 * (erf) GELU x*Phi(x). The erfc fit holds for every a >= 0, so one evaluation serves the
 * whole line: x < 0 gives erfc(|x|/sqrt2)/2 directly -- gelu(-5) = -1.4333e-6 keeps its
 * digits instead of cancelling in 1 + erf, as 0.5x(1 + erf(x/sqrt2)) in float does -- and
 * x >= 0 gives 1 - erfc/2, where erfc/2 <= 1/2 so its error stays below an ulp of Phi.
 * Relative error < 5e-7 on [-12, 12] (test_core.c). */
static inline float al_fphi(float x) {
  float a = fabsf(x) * 0.70710678118654752f;
  float ec = 0.5f * al_ferfc_tail(a, 0.5 * (double)x * (double)x), one_minus = 1.0f - ec;
  float y = x < 0 ? ec : one_minus;
  return x != x ? x : y;
}


/* 1/(1+e^-x) for x >= 0, e^x/(1+e^x) for x < 0: the same e = exp(-|x|) serves both, never
 * overflows, and keeps tiny results such as sigmoid(-100) = 3.8e-44 (not 0). */
static inline float al_fsigmoid(float x) {
  float e = al_fexp(-fabsf(x)), r = 1.0f / (1.0f + e);
  return x >= 0 ? r : e * r;
}

/* ======== the mixers' family (core/mix/) ========
 * Derivations (written for this file):
 *   exp(x)   = 2^k * e^r, k = round(x / ln 2), r = x - k ln 2 (two-constant Cody-Waite
 *              split of ln 2, |r| <= 0.347); e^r by its Taylor series to r^7/7!
 *              (truncation < 0.347^8/8! = 5.1e-9 relative, below float rounding).
 *              Polynomials use fmaf: the build's ISO C mode does not contract a*b+c.
 *   expm1(x) = Taylor series to x^9/9! for |x| < 0.3466 (no cancellation), else exp(x)-1.
 *   log1p(y) for y in [0, 1]: log1p(y) = 2 atanh(s), s = y/(2+y) in [0, 1/3]; the odd
 *              series 2(s + s^3/3 + ... + s^15/15) truncates below 1.3e-8 relative.
 *   tanh(x)  = -expm1(-2|x|) / (2 + expm1(-2|x|)), sign restored: accurate relative
 *              error also for tiny x (no 1 - t cancellation). */
/* exp(x): x in [-87.3, 88] as the Taylor form below; 0 below -87.3 (the true value is then a
 * subnormal or 0: this family flushes it), NaN -> NaN. Above 88 (+inf too) the argument stays
 * clamped, exp(88) = 1.65e38: the mixers count on finite results for finite or infinite
 * activations (tests/c/test_mixers.c asserts mx_exp(1000) < inf). The argument is clamped
 * before the int conversion (NaN to 0), which C leaves undefined for NaN and out-of-range k. */
/* What mx_exp and mx_exp_le0 share: exp(xc) for xc in [-87.3, 88] (clamped by the caller, NaN
 * already replaced). */
static inline float mx_exp_clamped_(float xc) {
  /* k = round(x * log2 e): adding and removing 1.5*2^23 rounds to nearest in float. */
  float k = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = fmaf(-k, 0.693145751953125f, xc);   /* ln 2 high part (14 bits): k*hi exact */
  r = fmaf(-k, 1.42860682030941723e-6f, r);     /* ln 2 - hi */
  float p = 1.0f / 5040.0f;                    /* Taylor to r^7/7!: error < 5.1e-9 relative */
  p = fmaf(p, r, 1.0f / 720.0f);
  p = fmaf(p, r, 1.0f / 120.0f);
  p = fmaf(p, r, 1.0f / 24.0f);
  p = fmaf(p, r, 1.0f / 6.0f);
  p = fmaf(p, r, 0.5f);
  p = fmaf(p, r, 1.0f);
  p = fmaf(p, r, 1.0f);
  uint32_t bits = (uint32_t)((int32_t)k + 127) << 23;
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

static inline float mx_exp(float x) {
  const int under = x < -87.3f, over = x > 88.0f;   /* both false for NaN */
  float xc = under ? -87.3f : x;
  xc = over ? 88.0f : xc;                  /* keeps k <= 127 (2^k finite) */
  xc = xc == xc ? xc : 0.0f;
  float e = mx_exp_clamped_(xc);
  float y = under ? 0.0f : e;
  return x != x ? x : y;
}

/* exp(x) for x <= 0 (the scan's exp(dt * A), dt > 0 > A): mx_exp without the overflow
 * handling (x > 88 is not supported), fewer operations in the scan. 0 below -87.3, NaN -> NaN;
 * bitwise mx_exp on [-87.3, 0]. */
static inline float mx_exp_le0(float x) {
  const int under = x < -87.3f;            /* false for NaN */
  float xc = under ? -87.3f : x;
  xc = xc == xc ? xc : 0.0f;
  float e = mx_exp_clamped_(xc);
  float y = under ? 0.0f : e;
  return x != x ? x : y;
}

/* exp(x) - 1 without cancellation near 0. */
static inline float mx_expm1(float x) {
  float p = 1.0f / 362880.0f;
  p = fmaf(p, x, 1.0f / 40320.0f);
  p = fmaf(p, x, 1.0f / 5040.0f);
  p = fmaf(p, x, 1.0f / 720.0f);
  p = fmaf(p, x, 1.0f / 120.0f);
  p = fmaf(p, x, 1.0f / 24.0f);
  p = fmaf(p, x, 1.0f / 6.0f);
  p = fmaf(p, x, 0.5f);
  p = fmaf(p * x, x, x);
  float e = mx_exp(x) - 1.0f;
  float ax = x < 0 ? -x : x;
  return ax < 0.3466f ? p : e;
}

/* log(1 + y) for y in [0, 1] (the only range the mixers need: softplus). */
static inline float mx_log1p01(float y) {
  float s = y / (2.0f + y);
  float s2 = s * s;
  float p = 1.0f / 15.0f;
  p = fmaf(p, s2, 1.0f / 13.0f);
  p = fmaf(p, s2, 1.0f / 11.0f);
  p = fmaf(p, s2, 1.0f / 9.0f);
  p = fmaf(p, s2, 1.0f / 7.0f);
  p = fmaf(p, s2, 1.0f / 5.0f);
  p = fmaf(p, s2, 1.0f / 3.0f);
  p = fmaf(p, s2, 1.0f);
  return 2.0f * s * p;
}

static inline float mx_sigmoid(float x) { return 1.0f / (1.0f + mx_exp(-x)); }

static inline float mx_silu(float x) { return x / (1.0f + mx_exp(-x)); }

/* d silu / dx = s (1 + x (1 - s)), s = sigmoid(x). */
static inline float mx_dsilu(float x) {
  float s = mx_sigmoid(x);
  return s * (1.0f + x * (1.0f - s));
}

/* softplus(x) = log(1 + e^x) = max(x, 0) + log1p(e^-|x|); equals x to float precision
 * for x > 20, like torch.nn.functional.softplus (beta 1, threshold 20). */
static inline float mx_softplus(float x) {
  float ax = x < 0 ? -x : x;
  float m = x > 0 ? x : 0.0f;
  return m + mx_log1p01(mx_exp(-ax));
}

static inline float mx_tanh(float x) {
  float ax = x < 0 ? -x : x;
  float em = mx_expm1(-2.0f * ax);          /* in (-1, 0] */
  float t = -em / (2.0f + em);
  return x < 0 ? -t : t;
}

#endif
