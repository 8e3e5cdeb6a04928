/* core/mix_internal.h -- helpers shared by the token mixers core/mix_*.c (private;
 * pure C11, no Lua): branch-free float32 transcendentals and keep-mask compaction.
 *
 * Why: the mixers evaluate exp in their innermost loops (the selective scan computes
 * exp(dt*A) for every (b, t, channel, state): B*T*E*N calls per direction). libm's expf
 * is a scalar call that GCC will not vectorize without -ffast-math, which the build
 * refuses. These helpers are plain selects and polynomials, so -O3 turns the loops
 * that call them into SIMD code.
 *
 * Derivations (written for this file):
 *   exp(x)   = 2^k * e^r, k = round(x / ln 2), r = x - k ln 2 (two-constant Cody-Waite
 *              split of ln 2, |r| <= 0.347); e^r by its Taylor series to r^7/7!
 *              (truncation < 0.347^8/8! = 5.1e-9 relative, below float rounding).
 *              Polynomials use fmaf: the build's ISO C mode does not contract a*b+c.
 *   expm1(x) = Taylor series to x^9/9! for |x| < 0.3466 (no cancellation), else exp(x)-1.
 *   log1p(y) for y in [0, 1]: log1p(y) = 2 atanh(s), s = y/(2+y) in [0, 1/3]; the odd
 *              series 2(s + s^3/3 + ... + s^15/15) truncates below 1.3e-8 relative.
 *   tanh(x)  = -expm1(-2|x|) / (2 + expm1(-2|x|)), sign restored: accurate relative
 *              error also for tiny x (no 1 - t cancellation).
 * Accuracy (measured by tests/c/test_mixers.c against double libm): within a few ulp.
 * Inputs are clamped to the finite range, so no helper returns Inf or NaN for finite
 * input; NaN inputs are not expected here (mixers take finite activations). */
#ifndef ATTNLAB_MIX_INTERNAL_H
#define ATTNLAB_MIX_INTERNAL_H
#include <math.h>
#include <stdint.h>
#include <string.h>

/* exp(x), argument clamped to [-87.3, 88] (so 1.2e-38 <= result <= 1.7e38). */
static inline float mx_exp(float x) {
  x = x < -87.3f ? -87.3f : x;
  x = x > 88.0f ? 88.0f : x;                 /* keeps k <= 127 (2^k finite) */
  /* k = round(x * log2 e): adding and removing 1.5*2^23 rounds to nearest in float. */
  float k = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = fmaf(-k, 0.693145751953125f, x);   /* ln 2 high part (14 bits): k*hi exact */
  r = fmaf(-k, 1.42860682030941723e-6f, r);    /* ln 2 - hi */
  float p = 1.0f / 5040.0f;                  /* Taylor to r^7/7!: error < 5.1e-9 relative */
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

/* exp(x) for x <= 0 (the scan's exp(dt * A), dt > 0 > A): only the lower clamp, which
 * lets GCC fold the clamped lanes to a constant; faster than mx_exp in the scan. */
static inline float mx_exp_le0(float x) {
  x = x > -87.3f ? x : -87.3f;
  float k = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = fmaf(-k, 0.693145751953125f, x);
  r = fmaf(-k, 1.42860682030941723e-6f, r);
  float p = 1.0f / 5040.0f;
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

/* ---- keep-mask compaction -------------------------------------------------------
 * A sequence b keeps len[b] tokens; compact position p (0 <= p < len[b]) is original
 * token pos[b*Tk + p]; Tk = max_b len[b]. Entries p >= len[b] of pos are -1. */

/* Returns Tk and fills len (B) unless len is NULL. keep NULL: every len is T.
 * *dense = 1 when every token is kept (pos is then the identity: compact rows are the
 * original rows, and Tk = T). */
static inline int64_t mx_keep_lengths(int64_t *len, int *dense, const uint8_t *keep,
                                      int64_t B, int64_t T) {
  int64_t tk = 0;
  *dense = 1;
  for (int64_t b = 0; b < B; b++) {
    int64_t n = T;
    if (keep) {
      n = 0;
      for (int64_t t = 0; t < T; t++) n += keep[b * T + t] != 0;
    }
    if (len) len[b] = n;
    if (n != T) *dense = 0;
    if (n > tk) tk = n;
  }
  return tk;
}

static inline void mx_keep_positions(int32_t *pos, const uint8_t *keep, int64_t B,
                                     int64_t T, int64_t tk) {
  for (int64_t b = 0; b < B; b++) {
    int64_t p = 0;
    for (int64_t t = 0; t < T; t++)
      if (!keep || keep[b * T + t]) pos[b * tk + p++] = (int32_t)t;
    for (; p < tk; p++) pos[b * tk + p] = -1;
  }
}

/* Carve 64-byte aligned pieces out of one allocation: first call with base NULL to
 * count, then with the block. */
static inline void *mx_carve(char *base, size_t *off, size_t nbytes) {
  void *p = base ? base + *off : NULL;
  *off += (nbytes + 63) & ~(size_t)63;
  return p;
}

#endif
