/* core/simd/approx14.h -- AVX-512's approximate reciprocal (VRCP14PS) and reciprocal square
 * root (VRSQRT14PS), bit for bit, for CPUs without them (private to core/ and its C tests).
 *
 * Why: two kernels use these instructions at the AVX-512 level where about 14 bits suffice --
 * alpha-entmax's forward for the second-derivative sum that only steers its Halley steps, and
 * entmax-1.5's backward for sqrt(p) -- and their bits reach the results: the steps taken, and
 * so the threshold found; the gradient. The other CPU levels (core/norm/vec.h's al_vrcp_approx
 * and al_vrsqrt_approx) compute exactly these bits from the tables below, so that a record is the
 * same at the AVX-512 and AVX2 levels: a sweep on a cluster whose nodes differ gives the
 * records any one node would. (Before 2026-12-04 they used an exact division and al_vsqrt:
 * entmax15 and hae records then differed between the levels by a few ulp from the first step.)
 *
 * The instructions' results are fixed bits, not merely "within 2^-14" (a Xeon-made hae record
 * reproduces on an EPYC bit for bit, experiments/normalizers/RESULTS.md): VRCP14PS's 16-bit
 * result mantissa M depends only on the input mantissa's top 16 bits (an exact power of two gets
 * its exact reciprocal), VRSQRT14PS's on the exponent's parity and the mantissa's top 15 bits; in
 * equal segments of those indices M = (A - B l) >> AL_APPROX14_SHIFT, l the offset in the
 * segment. scripts/approx14_tables.c derives the {A, B} of each segment from the instruction and
 * checks these functions against it on all 2^32 floats (0 mismatches), and
 * tests/c/test_norm_math.c checks them against the instruction wherever the CPU has it, and
 * against a hash of its results everywhere. Maximum relative error: 2^-14.2 (rcp), 2^-14.1
 * (rsqrt). Specials as the instructions: 1/+-0 = +-inf, 1/+-inf = +-0, subnormal inputs by
 * value, results below FLT_MIN as subnormals (truncated), above FLT_MAX inf; rsqrt of +-0 is
 * +-inf, of +inf 0, of any other negative the default NaN; NaN in, the same NaN quieted out. */
#ifndef ATTNLAB_SIMD_APPROX14_H
#define ATTNLAB_SIMD_APPROX14_H

#include "fastmath.h"   /* al_f2u_, al_u2f_ */

#define AL_APPROX14_SHIFT 9
/* VRCP14PS: {A, B} of 64 segments of the 16-bit index (mantissa >> 7), 1024 indices each */
static const int32_t al_rcp14_seg_[64][2] = {
  {33552640, 1009}, {32519680, 977}, {31519232, 949}, {30547968, 921},
  {29604608, 893}, {28690176, 869}, {27800320, 843}, {26936832, 821},
  {26096128, 797}, {25279488, 777}, {24483840, 755}, {23710208, 735},
  {22957056, 717}, {22223616, 699}, {21508352, 681}, {20810752, 663},
  {20131584, 647}, {19468544, 631}, {18822656, 617}, {18191104, 601},
  {17575168, 587}, {16973568, 573}, {16386560, 561}, {15811840, 547},
  {15250944, 535}, {14702592, 523}, {14167296, 513}, {13642240, 501},
  {13129472, 491}, {12627200, 479}, {12135936, 469}, {11654912, 459},
  {11184640, 451}, {10723072, 441}, {10271744, 433}, {9828352, 423},
  {9394688, 415}, {8969472, 407}, {8552448, 399}, {8143616, 391},
  {7743488, 385}, {7349504, 377}, {6963456, 369}, {6585088, 363},
  {6213888, 357}, {5848320, 349}, {5490176, 343}, {5138432, 337},
  {4793088, 331}, {4453632, 325}, {4120064, 319}, {3793408, 315},
  {3470848, 309}, {3154176, 303}, {2843648, 299}, {2537216, 293},
  {2236928, 289}, {1941248, 285}, {1649920, 279}, {1364736, 275},
  {1083648, 271}, {806656, 267}, {533760, 263}, {264960, 259},
};
/* VRSQRT14PS: {A, B} of 32 segments of the 15-bit index (mantissa >> 8), 1024 indices each:
 * rows 0-31 for even exponents (the mantissa read in [1, 2)), rows 32-63 for odd ([2, 4)) */
static const int32_t al_rsqrt14_seg_[64][2] = {
  {33551488, 1001}, {32526464, 955}, {31548032, 915}, {30611712, 877},
  {29714176, 841}, {28853120, 807}, {28026496, 775}, {27232384, 747},
  {26467584, 719}, {25731200, 693}, {25021312, 669}, {24336896, 647},
  {23675136, 625}, {23035136, 603}, {22417280, 585}, {21818752, 567},
  {21238656, 549}, {20676992, 533}, {20131712, 517}, {19602432, 501},
  {19089024, 487}, {18590080, 473}, {18105344, 461}, {17633664, 449},
  {17174400, 437}, {16727424, 425}, {16292608, 415}, {15867648, 403},
  {15454080, 393}, {15051520, 385}, {14657408, 375}, {14273792, 367},
  {13896320, 707}, {13171840, 675}, {12480000, 647}, {11817472, 619},
  {11183616, 595}, {10574720, 571}, {9990272, 549}, {9428096, 527},
  {8887936, 509}, {8367488, 491}, {7864960, 473}, {7380608, 457},
  {6912640, 441}, {6460672, 427}, {6023296, 413}, {5600640, 401},
  {5190528, 389}, {4792704, 377}, {4407168, 365}, {4033664, 355},
  {3670400, 345}, {3317504, 335}, {2974208, 325}, {2640896, 317},
  {2316544, 309}, {2000512, 301}, {1692544, 293}, {1392384, 285},
  {1100416, 279}, {814720, 271}, {536576, 265}, {264960, 259},
};

/* |x| (bits a, not zero, inf or NaN) as 2^(E - 127) (1 + f 2^-23), subnormals normalized: E is
 * the biased exponent, below 1 for a subnormal. */
static inline void al_approx14_split_(uint32_t a, int32_t *E, uint32_t *f) {
  if (a < 0x00800000u) {   /* subnormal: times 2^64, exactly, then 64 off the exponent */
    a = al_f2u_(al_u2f_(a) * 0x1p64f);
    *E = (int32_t)(a >> 23) - 64;
  } else {
    *E = (int32_t)(a >> 23);
  }
  *f = a & 0x007FFFFFu;
}

/* The float with biased exponent `be` (any integer) and mantissa bits `mant`: inf from 255 on,
 * a subnormal (the mantissa with its leading 1 shifted right, truncated) below 1. */
static inline uint32_t al_approx14_pack_(int32_t be, uint32_t mant) {
  if (be >= 255) return 0x7F800000u;
  if (be <= 0) return 1 - be >= 32 ? 0u : (0x00800000u | mant) >> (1 - be);
  return (uint32_t)be << 23 | mant;
}

/* VRCP14PS on one float */
static inline float al_rcp14f(float x) {
  const uint32_t u = al_f2u_(x), a = u & 0x7FFFFFFFu, sign = u & 0x80000000u;
  if (a > 0x7F800000u) return al_u2f_(u | 0x00400000u);   /* NaN, quieted */
  if (a == 0x7F800000u) return al_u2f_(sign);             /* 1/inf = 0 */
  if (a == 0) return al_u2f_(sign | 0x7F800000u);         /* 1/0 = inf */
  int32_t E;
  uint32_t f;
  al_approx14_split_(a, &E, &f);
  if (f == 0) return al_u2f_(sign | al_approx14_pack_(254 - E, 0));   /* 2^(127 - E) */
  const uint32_t i = f >> 7, j = i >> 10, l = i & 1023u;
  const uint32_t M = (uint32_t)((al_rcp14_seg_[j][0] - al_rcp14_seg_[j][1] * (int32_t)l) >> AL_APPROX14_SHIFT);
  return al_u2f_(sign | al_approx14_pack_(253 - E, M << 7));   /* in (1/2, 1) 2^(127 - E) */
}

/* VRSQRT14PS on one float */
static inline float al_rsqrt14f(float x) {
  const uint32_t u = al_f2u_(x), a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return al_u2f_(u | 0x00400000u);   /* NaN, quieted */
  if (a == 0) return al_u2f_(u | 0x7F800000u);            /* +-0: +-inf */
  if (u & 0x80000000u) return al_u2f_(0xFFC00000u);       /* negative: NaN */
  if (a == 0x7F800000u) return 0.0f;
  int32_t E;
  uint32_t f;
  al_approx14_split_(a, &E, &f);
  const int32_t e = E - 127, odd = e & 1, half = (e - odd) / 2;   /* x = 2^(2 half) [1, 4) */
  if (!odd && f == 0) return al_u2f_(al_approx14_pack_(127 - half, 0));   /* 2^-half */
  const uint32_t i = f >> 8, j = (uint32_t)odd << 5 | i >> 10, l = i & 1023u;
  const uint32_t M = (uint32_t)((al_rsqrt14_seg_[j][0] - al_rsqrt14_seg_[j][1] * (int32_t)l) >> AL_APPROX14_SHIFT);
  return al_u2f_(al_approx14_pack_(126 - half, M << 7));   /* in (1/2, 1) 2^-half */
}

#endif
