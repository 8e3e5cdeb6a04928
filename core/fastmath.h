/* core/fastmath.h -- vectorizable float32 exp and erf (private to core/).
 *
 * libm's expf/erff are scalar calls; GCC cannot vectorize loops that call them
 * without -ffast-math, which we refuse (it breaks NaN/Inf handling). These are plain
 * branch-free arithmetic that -O3 turns into SIMD. Accuracy (checked in
 * tests/c/test_core.c): exp within 2 ulp on [-87.3, 88.7], scaled with a single rounding
 * into the subnormal range down to -104 (Cody-Waite reduction + degree-6 minimax
 * polynomial, the classic Cephes coefficients); erf absolute error < 1.5e-7 (a series
 * near 0, a Chebyshev erfc fit beyond); the normal CDF al_fphi (for the exact GELU)
 * relative error < 5e-7 in both tails. NaN propagates; exp(-inf) = 0, exp(+inf) = inf. */
#ifndef ATTNLAB_FASTMATH_H
#define ATTNLAB_FASTMATH_H
#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float al_fexp(float x) {
  /* above ln(FLT_MAX) the result overflows; below -104 it rounds to 0 even as a subnormal */
  const float hi = 88.72284f, lo = -104.0f;
  float xc = x > hi ? hi : (x < lo ? lo : x);
  xc = xc == xc ? xc : 0.0f;   /* NaN: a float -> int conversion of NaN is undefined in C */
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
  float y = (p * s1) * s2;
  y = x < lo ? 0.0f : y;
  y = x > hi ? INFINITY : y;
  return x != x ? x : y;
}

/* erfc(a) for a >= 0 (and a = +inf), given a2 = a*a exactly (in double): the Chebyshev
 * fit of Numerical Recipes' erfcc, erfc(a) = t exp(-a^2 - 1.26551223 + t P(t)),
 * t = 1/(1 + a/2), fractional error < 1.2e-7 (Press et al., 2nd ed., sec. 6.2).
 * Relative accuracy is what 1 - erf and the normal CDF of negative x need. The exponent
 * is formed in double (a^2 up to ~150 would lose 1e-5 relative in float) and handed to
 * the float exp as hi + lo, exp(hi + lo) = exp(hi) (1 + lo). Everything else is float. */
/* The exponent's polynomial part: -1.26551223 + t P(t), t = 1/(1 + a/2) (also used by the
 * GELU kernels of ops_elementwise.c). */
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

#endif
