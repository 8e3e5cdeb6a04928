/* core/fastmath.h -- vectorizable float32 exp and erf (private to core/).
 *
 * libm's expf/erff are scalar calls; GCC cannot vectorize loops that call them
 * without -ffast-math, which we refuse (it breaks NaN/Inf handling). These are plain
 * branch-free arithmetic that -O3 turns into SIMD. Accuracy: exp within 2 ulp on
 * [-87.3, 88.7] (Cody-Waite reduction + degree-6 minimax polynomial, the classic
 * Cephes coefficients); erf absolute error < 2e-7 (Abramowitz & Stegun 7.1.26 form
 * with a refit). NaN propagates; exp(-inf) = 0, exp(+inf) = inf. */
#ifndef ATTNLAB_FASTMATH_H
#define ATTNLAB_FASTMATH_H
#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float al_fexp(float x) {
  const float hi = 88.7228f, lo = -87.3365f;
  float xc = x > hi ? hi : (x < lo ? lo : x);
  /* round-to-nearest of xc*log2(e) with the 1.5*2^23 trick (no rintf call) */
  float k = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xc - k * 0.693359375f;
  r = r + k * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  int32_t ki = (int32_t)k + 127;
  uint32_t bits = (uint32_t)ki << 23;
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  float y = p * scale;
  y = x < lo ? 0.0f : y;
  y = x > hi ? INFINITY : y;
  return x != x ? x : y;
}

/* erf(x), |error| < 2e-7: A&S 7.1.26, erf(x) = 1 - t*P(t) exp(-x^2), t = 1/(1+p|x|). */
static inline float al_ferf(float x) {
  float ax = fabsf(x);
  float t = 1.0f / (1.0f + 0.3275911f * ax);
  float poly = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  float y = 1.0f - poly * al_fexp(-ax * ax);
  y = x < 0 ? -y : y;
  return x != x ? x : y;
}

#endif
