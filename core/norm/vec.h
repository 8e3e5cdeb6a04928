/* core/norm/vec.h -- the 16-lane vector layer the normalizer kernels are written on, private to
 * core/norm/ and tests/c/test_norm_math.c (which checks its math against core/simd/fastmath.h). */
#ifndef ATTNLAB_NORM_VEC_H
#define ATTNLAB_NORM_VEC_H

#include "../simd/fastmath.h"
#include "../simd/approx14.h"

/* ---- 16-lane vectors for the row kernels (core/norm/ and its test) ----------
 *
 * Why not the auto-vectorizer: attention rows are short (n = 65 is four full blocks and one
 * entry), so a row is a chain of dependent reductions -- max, sums, a threshold -- and a
 * kernel's speed is set by latency and instruction count, not by a long inner loop. The
 * kernels are written on 16-lane vectors (GNU C vector extensions: GCC and Clang, any target)
 * so that they control the blocking (whole blocks, an overlapped last block instead of a
 * scalar epilogue), the reduction trees, and the batching of rows whose chains overlap. Lane
 * masks are an opaque al_vm: an AVX-512 mask register (one instruction per compare, select,
 * masked add or popcount) or, elsewhere, a vector of 0 / -1 lanes. The few operations that
 * GCC lowers poorly from generic vectors (FMA, float <-> double, compaction, reductions) use
 * AVX-512 intrinsics when available. At AVX2 the masks, selects, FMA, min/max and shuffles work
 * on 8-lane halves (below: GCC would lower them lane by lane); the generic level keeps the plain
 * forms (tested: the test suite builds and runs at AVX2 and x86-64-v2 too, and every level
 * gives the AVX-512 level's bits where it has FMA: tests/c/test_norm_math.c, tests/lua/test_nn.lua).
 * The math (al_vexp, al_vexp_le0, al_vlog, al_vsqrt) repeats the scalar al_expf, ... operation
 * for operation, so each lane returns bitwise what the scalar function returns. */
#if !defined(__GNUC__)
#error "core/norm/ needs GNU C vector extensions (GCC or Clang)"
#endif
#if defined(__AVX512F__) || defined(__SSE2__)
#include <immintrin.h>
#endif
/* 64-byte vectors passed by value between inlined helpers: GCC's note that their ABI differs
 * on pre-AVX-512 targets concerns calls across objects, which these never are. */
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float al_vf __attribute__((vector_size(64)));
typedef int32_t al_vi __attribute__((vector_size(64)));
typedef uint32_t al_vu __attribute__((vector_size(64)));
typedef double al_vd __attribute__((vector_size(64)));     /* 8 lanes */
typedef uint8_t al_vb_ __attribute__((vector_size(16)));
typedef float al_vf8_ __attribute__((vector_size(32)));
typedef float al_vf4_ __attribute__((vector_size(16)));
typedef int32_t al_vi8_ __attribute__((vector_size(32)));
typedef int32_t al_vi4_ __attribute__((vector_size(16)));
typedef uint32_t al_vu8_ __attribute__((vector_size(32)));
typedef uint32_t al_vu4_ __attribute__((vector_size(16)));
typedef double al_vd4_ __attribute__((vector_size(32)));
typedef double al_vd2_ __attribute__((vector_size(16)));
#define AL_VI static inline __attribute__((always_inline))
#define AL_V 16

AL_VI al_vf al_vld(const float *p) { al_vf v; memcpy(&v, p, sizeof v); return v; }
AL_VI void al_vst(float *p, al_vf v) { memcpy(p, &v, sizeof v); }
AL_VI al_vf al_vsplat(float a) { return (al_vf){a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a}; }
AL_VI al_vi al_vspliti(int32_t a) { return (al_vi){a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a}; }
AL_VI al_vi al_vlane(void) { return (al_vi){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}; }

/* ---- halves, below AVX-512 ----
 * Without AVX-512 a 64-byte vector has no register: GCC keeps it in memory and splits plain
 * arithmetic on it into 32-byte pieces, but lowers comparisons, selects, shuffles and lane
 * loops lane by lane (-Wvector-operation-performance lists them). The helpers below that would
 * be lowered so work on the halves themselves, which at AVX2 are registers: a half is one
 * 32-byte load of the vector's memory and a join two stores, where __builtin_shufflevector's
 * upper half is eight scalar moves. */
#if !defined(__AVX512F__)
#define AL_HALF_(T, v, i)                                                                      \
  ({ const __typeof__(v) w_ = (v); T h_; memcpy(&h_, (const char *)&w_ + (i) * sizeof h_, sizeof h_); h_; })
#define AL_JOIN_(T, lo, hi)                                                                    \
  ({ const __typeof__(lo) l_ = (lo), u_ = (hi); T v_;                                          \
     memcpy(&v_, &l_, sizeof l_); memcpy((char *)&v_ + sizeof l_, &u_, sizeof u_); v_; })
AL_VI al_vf8_ al_lo8_(al_vf v) { return AL_HALF_(al_vf8_, v, 0); }
AL_VI al_vf8_ al_hi8_(al_vf v) { return AL_HALF_(al_vf8_, v, 1); }
AL_VI al_vf al_join8_(al_vf8_ lo, al_vf8_ hi) { return AL_JOIN_(al_vf, lo, hi); }
#endif

/* sqrt of a double >= 0 without libm's errno path (a call that makes GCC spill the vector
 * registers around it in the kernels' loops). */
AL_VI double al_dsqrt(double x) {
#if defined(__SSE2__)
  return _mm_cvtsd_f64(_mm_sqrt_sd(_mm_setzero_pd(), _mm_set_sd(x)));
#else
  return sqrt(x);
#endif
}

/* ---- lane masks ---- */
#if defined(__AVX512F__)
typedef __mmask16 al_vm;
#define AL_VCMP_(a, b, P) ((al_vm)_mm512_cmp_ps_mask((__m512)(a), (__m512)(b), P))
AL_VI al_vm al_vm_lt(al_vf a, al_vf b) { return AL_VCMP_(a, b, _CMP_LT_OQ); }
AL_VI al_vm al_vm_le(al_vf a, al_vf b) { return AL_VCMP_(a, b, _CMP_LE_OQ); }
AL_VI al_vm al_vm_gt(al_vf a, al_vf b) { return AL_VCMP_(a, b, _CMP_GT_OQ); }
AL_VI al_vm al_vm_ge(al_vf a, al_vf b) { return AL_VCMP_(a, b, _CMP_GE_OQ); }
AL_VI al_vm al_vm_eq(al_vf a, al_vf b) { return AL_VCMP_(a, b, _CMP_EQ_OQ); }
AL_VI al_vm al_vm_nle(al_vf a, al_vf b) { return AL_VCMP_(a, b, _CMP_NLE_UQ); }   /* !(a <= b) */
AL_VI al_vm al_vm_ilt(al_vi a, al_vi b) { return _mm512_cmplt_epi32_mask((__m512i)a, (__m512i)b); }
AL_VI al_vm al_vm_ile(al_vi a, al_vi b) { return _mm512_cmple_epi32_mask((__m512i)a, (__m512i)b); }
AL_VI al_vm al_vm_ieq(al_vi a, al_vi b) { return _mm512_cmpeq_epi32_mask((__m512i)a, (__m512i)b); }
AL_VI al_vm al_vm_first(int k) {   /* lanes < k */
  return (al_vm)(k >= AL_V ? 0xFFFFu : k <= 0 ? 0u : (1u << k) - 1u);
}
AL_VI uint32_t al_vm_bits(al_vm m) { return m; }
AL_VI al_vm al_vm_none(void) { return 0; }
AL_VI al_vm al_vm_keep(const uint8_t *k) {   /* keep bytes != 0 */
  al_vb_ b;
  memcpy(&b, k, sizeof b);
  return _mm512_test_epi32_mask(_mm512_cvtepu8_epi32((__m128i)b), _mm512_cvtepu8_epi32((__m128i)b));
}
AL_VI al_vf al_vsel(al_vm m, al_vf a, al_vf b) { return (al_vf)_mm512_mask_mov_ps((__m512)b, m, (__m512)a); }
AL_VI al_vi al_vseli(al_vm m, al_vi a, al_vi b) {
  return (al_vi)_mm512_mask_mov_epi32((__m512i)b, m, (__m512i)a);
}
AL_VI al_vf al_vzero(al_vf v, al_vm m) { return (al_vf)_mm512_maskz_mov_ps(m, (__m512)v); }
AL_VI al_vi al_vinc(al_vi acc, al_vm m) {   /* acc + 1 where m */
  return (al_vi)_mm512_mask_sub_epi32((__m512i)acc, m, (__m512i)acc, _mm512_set1_epi32(-1));
}
AL_VI al_vf al_vaddm(al_vf acc, al_vm m, al_vf v) {   /* acc + v where m */
  return (al_vf)_mm512_mask_add_ps((__m512)acc, m, (__m512)acc, (__m512)v);
}
#elif defined(__AVX2__)
typedef al_vi al_vm;
/* AVX2: masks are 0 / -1 lanes as in the generic code below, every operation on the two 8-lane
 * halves (see "halves" above); the compares, selects and bit masks are the same lane for lane. */
/* a OP b on the halves, compared as 8-lane vectors of T8 (float or int32 lanes) */
#define AL_HCMP_(T8, a, b, OP)                                                                 \
  ((al_vi)al_join8_((al_vf8_)((T8)al_lo8_((al_vf)(a)) OP (T8)al_lo8_((al_vf)(b))),             \
                    (al_vf8_)((T8)al_hi8_((al_vf)(a)) OP (T8)al_hi8_((al_vf)(b)))))
AL_VI al_vm al_vm_lt(al_vf a, al_vf b) { return AL_HCMP_(al_vf8_, a, b, <); }
AL_VI al_vm al_vm_le(al_vf a, al_vf b) { return AL_HCMP_(al_vf8_, a, b, <=); }
AL_VI al_vm al_vm_gt(al_vf a, al_vf b) { return AL_HCMP_(al_vf8_, a, b, >); }
AL_VI al_vm al_vm_ge(al_vf a, al_vf b) { return AL_HCMP_(al_vf8_, a, b, >=); }
AL_VI al_vm al_vm_eq(al_vf a, al_vf b) { return AL_HCMP_(al_vf8_, a, b, ==); }
AL_VI al_vm al_vm_nle(al_vf a, al_vf b) { return ~AL_HCMP_(al_vf8_, a, b, <=); }
AL_VI al_vm al_vm_ilt(al_vi a, al_vi b) { return AL_HCMP_(al_vi8_, a, b, <); }
AL_VI al_vm al_vm_ile(al_vi a, al_vi b) { return AL_HCMP_(al_vi8_, a, b, <=); }
AL_VI al_vm al_vm_ieq(al_vi a, al_vi b) { return AL_HCMP_(al_vi8_, a, b, ==); }
AL_VI al_vm al_vm_first(int k) { return al_vm_ilt(al_vlane(), al_vspliti(k)); }
AL_VI uint32_t al_vm_bits(al_vm m) {
  return (uint32_t)_mm256_movemask_ps((__m256)al_lo8_((al_vf)m)) |
         (uint32_t)_mm256_movemask_ps((__m256)al_hi8_((al_vf)m)) << 8;
}
AL_VI al_vm al_vm_none(void) { return (al_vm){0}; }
AL_VI al_vm al_vm_keep(const uint8_t *k) {   /* keep bytes != 0 */
  const __m128i b = _mm_loadu_si128((const __m128i *)k);
  const al_vi8_ lo = (al_vi8_)_mm256_cvtepu8_epi32(b);
  const al_vi8_ hi = (al_vi8_)_mm256_cvtepu8_epi32(_mm_srli_si128(b, 8));
  return (al_vi)al_join8_((al_vf8_)(lo != 0), (al_vf8_)(hi != 0));
}
AL_VI al_vf al_vsel(al_vm m, al_vf a, al_vf b) {
  const al_vi8_ ml = (al_vi8_)al_lo8_((al_vf)m), mh = (al_vi8_)al_hi8_((al_vf)m);
  return al_join8_((al_vf8_)(((al_vi8_)al_lo8_(a) & ml) | ((al_vi8_)al_lo8_(b) & ~ml)),
                   (al_vf8_)(((al_vi8_)al_hi8_(a) & mh) | ((al_vi8_)al_hi8_(b) & ~mh)));
}
AL_VI al_vi al_vseli(al_vm m, al_vi a, al_vi b) { return (al_vi)al_vsel(m, (al_vf)a, (al_vf)b); }
AL_VI al_vf al_vzero(al_vf v, al_vm m) { return al_vsel(m, v, (al_vf){0}); }
AL_VI al_vi al_vinc(al_vi acc, al_vm m) { return acc - m; }
AL_VI al_vf al_vaddm(al_vf acc, al_vm m, al_vf v) { return al_vsel(m, acc + v, acc); }
#else   /* generic */
typedef al_vi al_vm;
AL_VI al_vm al_vm_lt(al_vf a, al_vf b) { return a < b; }
AL_VI al_vm al_vm_le(al_vf a, al_vf b) { return a <= b; }
AL_VI al_vm al_vm_gt(al_vf a, al_vf b) { return a > b; }
AL_VI al_vm al_vm_ge(al_vf a, al_vf b) { return a >= b; }
AL_VI al_vm al_vm_eq(al_vf a, al_vf b) { return a == b; }
AL_VI al_vm al_vm_nle(al_vf a, al_vf b) { return ~(a <= b); }
AL_VI al_vm al_vm_ilt(al_vi a, al_vi b) { return a < b; }
AL_VI al_vm al_vm_ile(al_vi a, al_vi b) { return a <= b; }
AL_VI al_vm al_vm_ieq(al_vi a, al_vi b) { return a == b; }
AL_VI al_vm al_vm_first(int k) { return al_vlane() < k; }
AL_VI uint32_t al_vm_bits(al_vm m) {
  uint32_t b = 0;
  for (int l = 0; l < AL_V; l++) b |= (uint32_t)(m[l] & 1) << l;
  return b;
}
AL_VI al_vm al_vm_none(void) { return (al_vm){0}; }
AL_VI al_vm al_vm_keep(const uint8_t *k) {
  al_vb_ b;
  memcpy(&b, k, sizeof b);
  return __builtin_convertvector(b, al_vi) != 0;
}
AL_VI al_vf al_vsel(al_vm m, al_vf a, al_vf b) { return (al_vf)(((al_vi)a & m) | ((al_vi)b & ~m)); }
AL_VI al_vi al_vseli(al_vm m, al_vi a, al_vi b) { return (a & m) | (b & ~m); }
AL_VI al_vf al_vzero(al_vf v, al_vm m) { return (al_vf)((al_vi)v & m); }
AL_VI al_vi al_vinc(al_vi acc, al_vm m) { return acc - m; }
AL_VI al_vf al_vaddm(al_vf acc, al_vm m, al_vf v) { return al_vsel(m, acc + v, acc); }
#endif
AL_VI int al_vm_count(al_vm m) { return __builtin_popcount(al_vm_bits(m)); }
AL_VI int al_vm_any(al_vm m) { return al_vm_bits(m) != 0; }

/* ---- arithmetic ---- */
/* a*b + c with one rounding where AL_FMAF has one (GCC's SLP vectorizer does not reliably turn
 * a lane loop of fmaf into one vector FMA, so AVX-512 gets the intrinsic, and AVX2 it on halves). */
AL_VI al_vf al_vfma(al_vf a, al_vf b, al_vf c) {
#if defined(__AVX512F__)
  return (al_vf)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#elif defined(__AVX2__) && defined(__FMA__)
  return al_join8_((al_vf8_)_mm256_fmadd_ps((__m256)al_lo8_(a), (__m256)al_lo8_(b), (__m256)al_lo8_(c)),
                   (al_vf8_)_mm256_fmadd_ps((__m256)al_hi8_(a), (__m256)al_hi8_(b), (__m256)al_hi8_(c)));
#else
  al_vf r;
  for (int l = 0; l < AL_V; l++) r[l] = AL_FMAF(a[l], b[l], c[l]);
  return r;
#endif
}
/* Float max/min (a NaN lane may yield either operand: callers catch NaN otherwise). */
AL_VI al_vf al_vmax(al_vf a, al_vf b) {
#if defined(__AVX512F__)
  return (al_vf)_mm512_max_ps((__m512)a, (__m512)b);
#elif defined(__AVX2__)
  return al_join8_((al_vf8_)_mm256_max_ps((__m256)al_lo8_(a), (__m256)al_lo8_(b)),
                   (al_vf8_)_mm256_max_ps((__m256)al_hi8_(a), (__m256)al_hi8_(b)));
#else
  return al_vsel(al_vm_gt(a, b), a, b);
#endif
}
AL_VI al_vf al_vmin(al_vf a, al_vf b) {
#if defined(__AVX512F__)
  return (al_vf)_mm512_min_ps((__m512)a, (__m512)b);
#elif defined(__AVX2__)
  return al_join8_((al_vf8_)_mm256_min_ps((__m256)al_lo8_(a), (__m256)al_lo8_(b)),
                   (al_vf8_)_mm256_min_ps((__m256)al_hi8_(a), (__m256)al_hi8_(b)));
#else
  return al_vsel(al_vm_lt(a, b), a, b);
#endif
}
AL_VI al_vu al_vmaxu(al_vu a, al_vu b) {
#if defined(__AVX512F__)
  return (al_vu)_mm512_max_epu32((__m512i)a, (__m512i)b);
#else
  al_vu m = (al_vu)(a > b);
  return (a & m) | (b & ~m);
#endif
}
AL_VI al_vu al_vminu(al_vu a, al_vu b) {
#if defined(__AVX512F__)
  return (al_vu)_mm512_min_epu32((__m512i)a, (__m512i)b);
#else
  al_vu m = (al_vu)(a < b);
  return (a & m) | (b & ~m);
#endif
}
AL_VI al_vu al_vkey(al_vf f) {            /* al_fkey_ per lane (-0 takes +0's key) */
  al_vu u = (al_vu)f;
  u &= (al_vu)(u != 0x80000000u);
  return u ^ ((al_vu)((al_vi)u >> 31) | 0x80000000u);
}
AL_VI al_vf al_vkey_inv(al_vu k) { return (al_vf)(k ^ ((al_vu)((al_vi)~k >> 31) | 0x80000000u)); }
/* Lanes 0-7 / 8-15 widened to double (GCC 12 splits the generic conversion in four). */
AL_VI al_vd al_vlo(al_vf v) {
#if defined(__AVX512F__)
  return (al_vd)_mm512_cvtps_pd(_mm512_castps512_ps256((__m512)v));
#else
  return __builtin_convertvector(al_lo8_(v), al_vd);
#endif
}
AL_VI al_vd al_vhi(al_vf v) {
#if defined(__AVX512F__)
  return (al_vd)_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd((__m512)v), 1)));
#else
  return __builtin_convertvector(al_hi8_(v), al_vd);
#endif
}

/* ---- AVX-512's VRCP14PS and VRSQRT14PS, the same bits at every level ----
 * Elsewhere they are computed from core/simd/approx14.h's segment tables, lane by lane the
 * arithmetic of its al_rcp14f / al_rsqrt14f (tests/c/test_norm_math.c checks both against the
 * instructions and each other), so that the kernels that use them give the AVX-512 level's bits
 * at the AVX2 level too. On 8-lane halves: 32-byte vectors are AVX2's own registers, while GCC
 * keeps a 64-byte vector's temporaries in memory there (on whole 16-lane vectors the
 * emulations took 1.6-1.9x the time). */
#if !defined(__AVX512F__)
/* {A, B} of each lane's segment j (AVX2: one gather each) */
AL_VI void al_seg14x8_(const int32_t (*seg)[2], al_vi8_ j, al_vi8_ *A, al_vi8_ *B) {
#if defined(__AVX2__)
  *A = (al_vi8_)_mm256_i32gather_epi32(&seg[0][0], (__m256i)j, 8);
  *B = (al_vi8_)_mm256_i32gather_epi32(&seg[0][1], (__m256i)j, 8);
#else
  for (int l = 0; l < 8; l++) { (*A)[l] = seg[j[l]][0]; (*B)[l] = seg[j[l]][1]; }
#endif
}
/* al_approx14_split_ per lane: |x| (bits a) as biased exponent E (< 1 for subnormals, which are
 * scaled by 2^64 first) and mantissa bits f */
AL_VI void al_split14x8_(al_vu8_ a, al_vi8_ *E, al_vu8_ *f) {
  const al_vi8_ sub = (al_vi8_)(a < 0x00800000u);
  const al_vi8_ scaled = (al_vi8_)((al_vf8_)a * 0x1p64f);
  const al_vu8_ n = (al_vu8_)((scaled & sub) | ((al_vi8_)a & ~sub));
  *E = (al_vi8_)(n >> 23) - (sub & 64);
  *f = n & 0x007FFFFFu;
}
/* al_approx14_pack_ per lane */
AL_VI al_vu8_ al_pack14x8_(al_vi8_ be, al_vu8_ mant) {
  /* the subnormal shift where be <= 0 (from 24 on it leaves 0), kept in [0, 31] in every lane */
  const al_vi8_ sh = 1 - be, big = sh > 31, neg = sh < 0;
  const al_vu8_ subn = (0x00800000u | mant) >> (al_vu8_)((sh & ~big & ~neg) | (31 & big));
  const al_vu8_ normal = (al_vu8_)be << 23 | mant;
  const al_vi8_ inf = be >= 255, low = be <= 0;
  return (al_vu8_)((0x7F800000 & inf) | ((al_vi8_)subn & low & ~inf) | ((al_vi8_)normal & ~low & ~inf));
}
AL_VI al_vu8_ al_sel14x8_(al_vi8_ m, al_vu8_ a, al_vu8_ b) { return (a & (al_vu8_)m) | (b & ~(al_vu8_)m); }
AL_VI al_vu8_ al_rcp14x8_(al_vu8_ u) {
  const al_vu8_ a = u & 0x7FFFFFFFu, sign = u & 0x80000000u;
  al_vi8_ E, A, B;
  al_vu8_ f;
  al_split14x8_(a, &E, &f);   /* (0: E = -64, f = 0, so 254 - E packs to inf below) */
  al_seg14x8_(al_rcp14_seg_, (al_vi8_)(f >> 17), &A, &B);
  const al_vu8_ M = (al_vu8_)((A - B * (al_vi8_)((f >> 7) & 1023u)) >> AL_APPROX14_SHIFT);
  const al_vi8_ exact = (al_vi8_)(f == 0);   /* a power of two: its exact reciprocal */
  const al_vu8_ r = sign | al_pack14x8_(253 - E - exact, (M << 7) & ~(al_vu8_)exact);
  return al_sel14x8_((al_vi8_)(a > 0x7F800000u), u | 0x00400000u, al_sel14x8_((al_vi8_)(a == 0x7F800000u), sign, r));
}
AL_VI al_vu8_ al_rsqrt14x8_(al_vu8_ u) {
  const al_vu8_ a = u & 0x7FFFFFFFu;
  al_vi8_ E, A, B;
  al_vu8_ f;
  al_split14x8_(a, &E, &f);
  const al_vi8_ e = E - 127, odd = e & 1, half = (e - odd) >> 1;   /* x = 2^(2 half) [1, 4) */
  al_seg14x8_(al_rsqrt14_seg_, odd << 5 | (al_vi8_)(f >> 18), &A, &B);
  const al_vu8_ M = (al_vu8_)((A - B * (al_vi8_)((f >> 8) & 1023u)) >> AL_APPROX14_SHIFT);
  const al_vi8_ exact = (odd == 0) & (al_vi8_)(f == 0);   /* an even power of two: exact */
  const al_vu8_ r = al_pack14x8_(126 - half - exact, (M << 7) & ~(al_vu8_)exact);
  const al_vu8_ nan = (al_vu8_){0xFFC00000u, 0xFFC00000u, 0xFFC00000u, 0xFFC00000u,
                                0xFFC00000u, 0xFFC00000u, 0xFFC00000u, 0xFFC00000u};
  return al_sel14x8_((al_vi8_)(a > 0x7F800000u), u | 0x00400000u,
                     al_sel14x8_((al_vi8_)(a == 0), u | 0x7F800000u,
                                 al_sel14x8_((al_vi8_)u < 0, nan,
                                             al_sel14x8_((al_vi8_)(a == 0x7F800000u), (al_vu8_){0}, r))));
}
/* the two halves of a 16-lane vector through an 8-lane function */
#define AL_HALVES14_(F, x)                                                                     \
  ({ const al_vf x_ = (x);                                                                    \
     al_join8_((al_vf8_)F((al_vu8_)al_lo8_(x_)), (al_vf8_)F((al_vu8_)al_hi8_(x_))); })
AL_VI al_vf al_vrcp14_(al_vf x) { return AL_HALVES14_(al_rcp14x8_, x); }
AL_VI al_vf al_vrsqrt14_(al_vf x) { return AL_HALVES14_(al_rsqrt14x8_, x); }
#endif

/* 1/x to about 14 bits, for terms that only steer: AVX-512's VRCP14PS, at every level. */
AL_VI al_vf al_vrcp_approx(al_vf x) {
#if defined(__AVX512F__)
  return (al_vf)_mm512_rcp14_ps((__m512)x);
#else
  return al_vrcp14_(x);
#endif
}
/* 1/sqrt(x) to about 14 bits: AVX-512's VRSQRT14PS, at every level (al_vsqrt_fast's start). */
AL_VI al_vf al_vrsqrt_approx(al_vf x) {
#if defined(__AVX512F__)
  return (al_vf)_mm512_rsqrt14_ps((__m512)x);
#else
  return al_vrsqrt14_(x);
#endif
}

/* ---- horizontal reductions: fixed trees (results never depend on threads or batching) ---- */
#if defined(__AVX512F__)
AL_VI float al_vhmax(al_vf v) { return _mm512_reduce_max_ps((__m512)v); }
AL_VI float al_vhmin(al_vf v) { return _mm512_reduce_min_ps((__m512)v); }
AL_VI float al_vhsumf(al_vf v) { return _mm512_reduce_add_ps((__m512)v); }
AL_VI uint32_t al_vhmaxu(al_vu v) { return _mm512_reduce_max_epu32((__m512i)v); }
AL_VI uint32_t al_vhminu(al_vu v) { return _mm512_reduce_min_epu32((__m512i)v); }
AL_VI uint32_t al_vhoru(al_vu v) { return (uint32_t)_mm512_reduce_or_epi32((__m512i)v); }
AL_VI int32_t al_vhsumi(al_vi v) { return _mm512_reduce_add_epi32((__m512i)v); }
AL_VI double al_vhsumd(al_vd lo, al_vd hi) { return _mm512_reduce_add_pd((__m512d)(lo + hi)); }
#else
/* The same trees as GCC's _mm512_reduce_*_ps above, operand for operand, so that each level
 * gives the AVX-512 level's result (the order of float additions, and for min and max which of
 * two equal or unordered operands comes out: OP(a, b) is minps/maxps's a < b ? a : b): the
 * high half OP the low half, down to four lanes q, then OP(OP(q0, q2), OP(q1, q3)).
 * tests/c/test_norm_math.c checks these against that tree written out, at every level. */
#define AL_VH16_(T8, T4, v, OP)                                                            \
  T8 a8_ = AL_HALF_(T8, v, 1);                                                             \
  T8 b8_ = AL_HALF_(T8, v, 0);                                                             \
  a8_ = OP(a8_, b8_);                                                                      \
  T4 a4_ = __builtin_shufflevector(a8_, a8_, 4, 5, 6, 7);                                  \
  T4 b4_ = __builtin_shufflevector(a8_, a8_, 0, 1, 2, 3);                                  \
  a4_ = OP(a4_, b4_);
#define AL_OPMAX_(a, b) ((a) > (b) ? (a) : (b))
#define AL_OPMIN_(a, b) ((a) < (b) ? (a) : (b))
#define AL_OPADD_(a, b) ((a) + (b))
#define AL_OPOR_(a, b) ((a) | (b))
/* (vector ?: is C++ only in GCC: per-lane loops for the 8- and 4-lane steps) */
#define AL_VHLANES_(T, a, b, OP)                                                           \
  ({ T r_; for (unsigned l_ = 0; l_ < sizeof(T) / 4; l_++) r_[l_] = OP((a)[l_], (b)[l_]); r_; })
AL_VI float al_vhmax(al_vf v) {
#define OP_(a, b) AL_VHLANES_(__typeof__(a), a, b, AL_OPMAX_)
  AL_VH16_(al_vf8_, al_vf4_, v, OP_)
#undef OP_
  return AL_OPMAX_(AL_OPMAX_(a4_[0], a4_[2]), AL_OPMAX_(a4_[1], a4_[3]));
}
AL_VI float al_vhmin(al_vf v) {
#define OP_(a, b) AL_VHLANES_(__typeof__(a), a, b, AL_OPMIN_)
  AL_VH16_(al_vf8_, al_vf4_, v, OP_)
#undef OP_
  return AL_OPMIN_(AL_OPMIN_(a4_[0], a4_[2]), AL_OPMIN_(a4_[1], a4_[3]));
}
AL_VI float al_vhsumf(al_vf v) {
  AL_VH16_(al_vf8_, al_vf4_, v, AL_OPADD_)
  return (a4_[0] + a4_[2]) + (a4_[1] + a4_[3]);
}
AL_VI uint32_t al_vhmaxu(al_vu v) {
#define OP_(a, b) AL_VHLANES_(__typeof__(a), a, b, AL_OPMAX_)
  AL_VH16_(al_vu8_, al_vu4_, v, OP_)
#undef OP_
  return AL_OPMAX_(AL_OPMAX_(a4_[0], a4_[2]), AL_OPMAX_(a4_[1], a4_[3]));
}
AL_VI uint32_t al_vhminu(al_vu v) { return ~al_vhmaxu(~v); }
AL_VI uint32_t al_vhoru(al_vu v) {
  AL_VH16_(al_vu8_, al_vu4_, v, AL_OPOR_)
  return (a4_[0] | a4_[2]) | (a4_[1] | a4_[3]);
}
AL_VI int32_t al_vhsumi(al_vi v) {
  AL_VH16_(al_vi8_, al_vi4_, v, AL_OPADD_)
  return (a4_[0] + a4_[2]) + (a4_[1] + a4_[3]);
}
AL_VI double al_vhsumd(al_vd lo, al_vd hi) {
  al_vd a = lo + hi;
  al_vd4_ b = AL_HALF_(al_vd4_, a, 0) + AL_HALF_(al_vd4_, a, 1);
  al_vd2_ c = __builtin_shufflevector(b, b, 0, 1) + __builtin_shufflevector(b, b, 2, 3);
  return c[0] + c[1];
}
#endif

/* The sums of up to 16 vectors, one per row: out[i] = al_vhsumd(v[i], 0), bitwise (the same
 * tree, (v0 + v4) + (v2 + v6) + ((v1 + v5) + (v3 + v7))), for a batch of rows at once. Row by
 * row, each reduction is a chain of ~8 dependent operations ending in a scalar;
 * on AVX-512 eight rows go through the tree together, transposed into lanes by the shuffles:
 * 22 operations for 8 rows. */
AL_VI void al_vhsumd_rows(const al_vd *v, int nr, double *out) {
#if defined(__AVX512F__)
  for (int r0 = 0; r0 < nr; r0 += 8) {
    __m512d w[4], u[2];
    for (int p = 0; p < 4; p++) {   /* rows a, b: [a0+a4 .. a3+a7 | b0+b4 .. b3+b7] */
      const __m512d a = r0 + 2 * p < nr ? (__m512d)v[r0 + 2 * p] : _mm512_setzero_pd();
      const __m512d b = r0 + 2 * p + 1 < nr ? (__m512d)v[r0 + 2 * p + 1] : _mm512_setzero_pd();
      w[p] = _mm512_add_pd(_mm512_shuffle_f64x2(a, b, 0x44), _mm512_shuffle_f64x2(a, b, 0xEE));
    }
    for (int p = 0; p < 2; p++)     /* rows a..d: [t0+t2, t1+t3] of each, t = the above */
      u[p] = _mm512_add_pd(_mm512_shuffle_f64x2(w[2 * p], w[2 * p + 1], 0x88),
                           _mm512_shuffle_f64x2(w[2 * p], w[2 * p + 1], 0xDD));
    /* lanes: rows 0, 4, 1, 5, 2, 6, 3, 7 of the eight, then in order */
    const __m512d t = _mm512_add_pd(_mm512_unpacklo_pd(u[0], u[1]), _mm512_unpackhi_pd(u[0], u[1]));
    double r[8];
    _mm512_storeu_pd(r, _mm512_permutexvar_pd(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7), t));
    for (int i = 0; i < 8 && r0 + i < nr; i++) out[r0 + i] = r[i];
  }
#else
  for (int i = 0; i < nr; i++) {
    const al_vd a = v[i];
    al_vd4_ b = AL_HALF_(al_vd4_, a, 0) + AL_HALF_(al_vd4_, a, 1);
    al_vd2_ c = __builtin_shufflevector(b, b, 0, 1) + __builtin_shufflevector(b, b, 2, 3);
    out[i] = c[0] + c[1];
  }
#endif
}

/* The sums of three vectors at once (one reduction tree for all three: 6 shuffles and 5 adds
 * where three al_vhsumf take 12 and 12): the order of al_vhsumf's additions, bitwise its results. */
AL_VI void al_vhsum3f(al_vf a, al_vf b, al_vf c, float *ra, float *rb, float *rc) {
#if defined(__AVX512F__)
  const __m512 A = (__m512)a, B = (__m512)b, C = (__m512)c, Z = _mm512_setzero_ps();
  /* 128-bit quarters: ab = [a0+a2, a1+a3, b0+b2, b1+b3], cz likewise for (c, 0) */
  const __m512 ab = _mm512_add_ps(_mm512_shuffle_f32x4(A, B, 0x44), _mm512_shuffle_f32x4(A, B, 0xEE));
  const __m512 cz = _mm512_add_ps(_mm512_shuffle_f32x4(C, Z, 0x44), _mm512_shuffle_f32x4(C, Z, 0xEE));
  /* quarter q of t: four partial sums of vector q (a, b, c, 0) */
  __m512 t = _mm512_add_ps(_mm512_shuffle_f32x4(ab, cz, 0x88), _mm512_shuffle_f32x4(ab, cz, 0xDD));
  t = _mm512_add_ps(t, _mm512_permute_ps(t, 0x4E));   /* lanes (2,3,0,1) of each quarter */
  t = _mm512_add_ps(t, _mm512_permute_ps(t, 0xB1));   /* lanes (1,0,3,2) */
  const al_vf r = (al_vf)t;
  *ra = r[0];
  *rb = r[4];
  *rc = r[8];
#else
  *ra = al_vhsumf(a);
  *rb = al_vhsumf(b);
  *rc = al_vhsumf(c);
#endif
}

/* Sums in double, cheaply: terms are added per lane in float for at most AL_DACC_RUN blocks,
 * then the float partials are widened and added into 8 + 8 double lanes (al_dacc_flush). Four
 * float terms carry a relative error below 2e-7 -- the resolution of the float results -- and
 * the widening then costs three instructions per flush instead of per block. */
#define AL_DACC_RUN 4
typedef struct { al_vf f; al_vd lo, hi; } al_dacc;
AL_VI void al_dacc_init(al_dacc *a) { a->f = (al_vf){0}; a->lo = a->hi = (al_vd){0}; }
AL_VI void al_dacc_flush(al_dacc *a) {
  a->lo += al_vlo(a->f);
  a->hi += al_vhi(a->f);
  a->f = (al_vf){0};
}
AL_VI double al_dacc_total(al_dacc *a) {
  al_dacc_flush(a);
  return al_vhsumd(a->lo, a->hi);
}
/* Block index b of a sweep: flush after every AL_DACC_RUN-th block. */
#define AL_DACC_DUE(b) (((b) & (AL_DACC_RUN - 1)) == AL_DACC_RUN - 1)

/* The lanes of v selected by m stored in order at p[0 .. popcount(m)); p[popcount .. 16) get
 * unspecified values (a whole-vector store: the caller's next store, or padding, covers them). */
AL_VI void al_vst_compress(float *p, al_vf v, al_vm m) {
#if defined(__AVX512F__)
  _mm512_storeu_ps(p, _mm512_maskz_compress_ps(m, (__m512)v));
#else
  int q = 0;
  for (uint32_t bits = al_vm_bits(m); bits; bits &= bits - 1) p[q++] = v[__builtin_ctz(bits)];
#endif
}

/* ---- 16 rows in lanes: a 16 x 16 transpose and a sort of 16 vectors lane by lane ----
 * For work that is cheaper done for 16 rows at once than row by row (top-k's band ranking).
 * The transpose (t[r][c] -> t[c][r]) is four stages of 16 two-source permutes; stage `bit`
 * swaps that bit of the row index with the same bit of the column index, between rows r and
 * r + bit. */
#define AL_TR1_LO 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30
#define AL_TR1_HI 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31
#define AL_TR2_LO 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29
#define AL_TR2_HI 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31
#define AL_TR4_LO 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27
#define AL_TR4_HI 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31
#define AL_TR8_LO 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23
#define AL_TR8_HI 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
#if defined(__AVX512F__)
#define AL_TR_PAIR(bit, r)                                                                     \
  do {                                                                                         \
    const al_vf a_ = t[r], b_ = t[(r) + (bit)];                                                \
    t[r] = __builtin_shufflevector(a_, b_, AL_TR##bit##_LO);                                   \
    t[(r) + (bit)] = __builtin_shufflevector(a_, b_, AL_TR##bit##_HI);                         \
  } while (0)
#else
/* On halves: stages 1, 2 and 4 permute within the low halves of the two rows and within their
 * high halves, by the same 8-lane pattern (the first half of the 16-lane one, with b's lanes
 * renumbered from 8); stage 8 pairs whole halves. */
#define AL_TR1_LO8 0, 8, 2, 10, 4, 12, 6, 14
#define AL_TR1_HI8 1, 9, 3, 11, 5, 13, 7, 15
#define AL_TR2_LO8 0, 1, 8, 9, 4, 5, 12, 13
#define AL_TR2_HI8 2, 3, 10, 11, 6, 7, 14, 15
#define AL_TR4_LO8 0, 1, 2, 3, 8, 9, 10, 11
#define AL_TR4_HI8 4, 5, 6, 7, 12, 13, 14, 15
#define AL_TR_PAIRH_(bit, r)                                                                   \
  do {                                                                                         \
    const al_vf8_ a_lo_ = al_lo8_(t[r]), a_hi_ = al_hi8_(t[r]);                                \
    const al_vf8_ b_lo_ = al_lo8_(t[(r) + (bit)]), b_hi_ = al_hi8_(t[(r) + (bit)]);            \
    t[r] = al_join8_(__builtin_shufflevector(a_lo_, b_lo_, AL_TR##bit##_LO8),                  \
                     __builtin_shufflevector(a_hi_, b_hi_, AL_TR##bit##_LO8));                 \
    t[(r) + (bit)] = al_join8_(__builtin_shufflevector(a_lo_, b_lo_, AL_TR##bit##_HI8),        \
                               __builtin_shufflevector(a_hi_, b_hi_, AL_TR##bit##_HI8));       \
  } while (0)
#define AL_TR_PAIR_1(r) AL_TR_PAIRH_(1, r)
#define AL_TR_PAIR_2(r) AL_TR_PAIRH_(2, r)
#define AL_TR_PAIR_4(r) AL_TR_PAIRH_(4, r)
#define AL_TR_PAIR_8(r)                                                                        \
  do {                                                                                         \
    const al_vf a_ = t[r], b_ = t[(r) + 8];                                                    \
    t[r] = al_join8_(al_lo8_(a_), al_lo8_(b_));                                                \
    t[(r) + 8] = al_join8_(al_hi8_(a_), al_hi8_(b_));                                          \
  } while (0)
#define AL_TR_PAIR(bit, r) AL_TR_PAIR_##bit(r)
#endif
#define AL_TR_STAGE(bit, r0, r1, r2, r3, r4, r5, r6, r7)                                       \
  AL_TR_PAIR(bit, r0); AL_TR_PAIR(bit, r1); AL_TR_PAIR(bit, r2); AL_TR_PAIR(bit, r3);          \
  AL_TR_PAIR(bit, r4); AL_TR_PAIR(bit, r5); AL_TR_PAIR(bit, r6); AL_TR_PAIR(bit, r7)
AL_VI void al_vtranspose16(al_vf t[AL_V]) {
  AL_TR_STAGE(1, 0, 2, 4, 6, 8, 10, 12, 14);
  AL_TR_STAGE(2, 0, 1, 4, 5, 8, 9, 12, 13);
  AL_TR_STAGE(4, 0, 1, 2, 3, 8, 9, 10, 11);
  AL_TR_STAGE(8, 0, 1, 2, 3, 4, 5, 6, 7);
}

/* Batcher's odd-even merge sort of 16 inputs (63 comparators, depth 10; checked on all 2^16
 * 0-1 inputs in tests/c/test_norm_math.c), largest first, lane by lane: comparator (i, j) puts
 * the max in t[i] and the min in t[j]. For NaN-free lanes (al_vmax/al_vmin do not order NaN). */
#define AL_SORT16(X)                                                                           \
  X(0, 1) X(2, 3) X(0, 2) X(1, 3) X(1, 2) X(4, 5) X(6, 7) X(4, 6) X(5, 7) X(5, 6) X(0, 4)      \
  X(2, 6) X(2, 4) X(1, 5) X(3, 7) X(3, 5) X(1, 2) X(3, 4) X(5, 6) X(8, 9) X(10, 11)            \
  X(8, 10) X(9, 11) X(9, 10) X(12, 13) X(14, 15) X(12, 14) X(13, 15) X(13, 14) X(8, 12)        \
  X(10, 14) X(10, 12) X(9, 13) X(11, 15) X(11, 13) X(9, 10) X(11, 12) X(13, 14) X(0, 8)        \
  X(4, 12) X(4, 8) X(2, 10) X(6, 14) X(6, 10) X(2, 4) X(6, 8) X(10, 12) X(1, 9) X(5, 13)       \
  X(5, 9) X(3, 11) X(7, 15) X(7, 11) X(3, 5) X(7, 9) X(11, 13) X(1, 2) X(3, 4) X(5, 6)         \
  X(7, 8) X(9, 10) X(11, 12) X(13, 14)
#define AL_CMPX_(i, j)                                                                         \
  { const al_vf hi_ = al_vmax(t[i], t[j]), lo_ = al_vmin(t[i], t[j]); t[i] = hi_; t[j] = lo_; }
AL_VI void al_vsort16_desc(al_vf t[AL_V]) { AL_SORT16(AL_CMPX_) }

/* ---- compaction: the lanes of v selected by m, appended to k lanes already gathered in a
 * vector (lanes past the capacity are dropped); returns k + popcount(m). In registers:
 * a vector reloaded after overlapping stores would stall on store forwarding. ---- */
AL_VI int al_vappend(al_vf *acc, int k, al_vf v, al_vm m) {
  const int c = al_vm_count(m);
  if (k < AL_V) {
#if defined(__AVX512F__)
    const __mmask16 ins = (__mmask16)((((1u << c) - 1u) << k) & 0xFFFFu);
    *acc = (al_vf)_mm512_mask_expand_ps((__m512)*acc, ins, _mm512_maskz_compress_ps(m, (__m512)v));
#else
    uint32_t bits = al_vm_bits(m);
    for (int q = k; bits && q < AL_V; bits &= bits - 1) (*acc)[q++] = v[__builtin_ctz(bits)];
#endif
  }
  return k + c;
}

/* ---- the math of al_expf, al_expf_le0, al_logf, al_sqrtf, lane by lane ---- */
/* What al_vexp and al_vexp_le0_raw_ share (al_expf_reduce_ lane by lane): p = exp(r) for the
 * clamped xc = n ln2 + r, with *t (n in its low mantissa bits) and *nf = n as a float. */
AL_VI al_vf al_vexp_reduce_(al_vf xc, al_vf *t, al_vf *nf) {
  *t = al_vfma(xc, al_vsplat(1.44269504088896341f), al_vsplat(12582912.0f));
  *nf = *t - 12582912.0f;
  al_vf r = al_vfma(*nf, al_vsplat(-0.693145751953125f), xc);
  r = al_vfma(*nf, al_vsplat(-1.428606765330187e-06f), r);
  al_vf q = al_vfma(al_vsplat(1.381461043e-03f), r, al_vsplat(8.368710056e-03f));
  q = al_vfma(q, r, al_vsplat(4.166838899e-02f));
  q = al_vfma(q, r, al_vsplat(1.666652113e-01f));
  q = al_vfma(q, r, al_vsplat(4.999999404e-01f));
  return al_vfma(q, r * r, r) + 1.0f;
}
AL_VI al_vf al_vexp(al_vf x) {
  const float lo = -87.336544750553f, hi = 88.722839f;
  const al_vm under = al_vm_lt(x, al_vsplat(lo)), over = al_vm_gt(x, al_vsplat(hi));
  const al_vf xc = al_vsel(under, al_vsplat(-64.0f), al_vsel(over, al_vsplat(hi), x));
  al_vf t, nf;
  al_vf p = al_vexp_reduce_(xc, &t, &nf);
#if defined(__AVX512F__)
  /* p 2^n, n in [-126, 128], in one instruction (see al_vexp_le0_raw_): the same correctly
   * rounded product as (2p) 2^127 for n = 128 and p 2^n below */
  const al_vf e = (al_vf)_mm512_scalef_ps((__m512)p, (__m512)nf);
  return al_vsel(over, al_vsplat(INFINITY), al_vzero(e, ~under));
#else
  const al_vu n = (al_vu)t - 0x4B400000u;
  const al_vm big = al_vm_ieq((al_vi)n, al_vspliti(128));
  p = al_vsel(big, p + p, p);
  const al_vf s = (al_vf)(((al_vu)al_vseli(big, (al_vi)n - 1, (al_vi)n) + 127u) << 23);
  return al_vsel(over, al_vsplat(INFINITY), al_vzero(p * s, ~under));
#endif
}
/* exp(x) for x <= 0 before its underflow zeroing: the value, and in *under the lanes below
 * ln(FLT_MIN) whose result must be 0 (al_vexp_le0 and al_vexp_le0_sel apply it). */
AL_VI al_vf al_vexp_le0_raw_(al_vf x, al_vm *under) {
  *under = al_vm_lt(x, al_vsplat(-87.336544750553f));
  const al_vf xc = al_vsel(*under, al_vsplat(-64.0f), x);
  al_vf t, nf;
  const al_vf p = al_vexp_reduce_(xc, &t, &nf);
#if defined(__AVX512F__)
  /* p 2^n in one instruction where building 2^n from t's bits and multiplying takes three; n
   * is in [-126, 0], so both are one correctly rounded product: the same value */
  (void)t;
  return (al_vf)_mm512_scalef_ps((__m512)p, (__m512)nf);
#else
  const al_vf s = (al_vf)(((al_vu)t - 0x4B400000u + 127u) << 23);
  return p * s;
#endif
}
AL_VI al_vf al_vexp_le0(al_vf x) {
  al_vm under;
  const al_vf e = al_vexp_le0_raw_(x, &under);
  return al_vzero(e, ~under);
}
/* al_vzero(al_vexp_le0(x), m) with the two zeroings in one masked multiply (the same values):
 * for a pass that keeps only some lanes' exps (top-k's selection). */
AL_VI al_vf al_vexp_le0_sel(al_vf x, al_vm m) {
  al_vm under;
  const al_vf e = al_vexp_le0_raw_(x, &under);
  return al_vzero(e, m & ~under);
}
AL_VI al_vf al_vlog(al_vf x) {
  const al_vu v = (al_vu)x - 0x3F3504F3u;
  const al_vi e = (al_vi)(v >> 23) - (al_vi)((v >> 31) << 9);
  const al_vf m = (al_vf)((v & 0x007FFFFFu) + 0x3F3504F3u);
  const al_vf f = m - 1.0f;
  al_vf q = al_vfma(al_vsplat(-7.634460181e-02f), f, al_vsplat(1.276156306e-01f));
  q = al_vfma(q, f, al_vsplat(-1.316018999e-01f));
  q = al_vfma(q, f, al_vsplat(1.420176029e-01f));
  q = al_vfma(q, f, al_vsplat(-1.662335694e-01f));
  q = al_vfma(q, f, al_vsplat(2.000122666e-01f));
  q = al_vfma(q, f, al_vsplat(-2.500081956e-01f));
  q = al_vfma(q, f, al_vsplat(3.333333135e-01f));
  const al_vf f2 = f * f, ef = __builtin_convertvector(e, al_vf);
  al_vf y = al_vfma(q * f, f2, al_vfma(al_vsplat(-0.5f), f2, f));
  y = al_vfma(ef, al_vsplat(1.42860677e-06f), y);
  return al_vfma(ef, al_vsplat(0.693145751953125f), y);
}
AL_VI al_vf al_vsqrt(al_vf x) {
  al_vf y = (al_vf)(0x5F375A86u - ((al_vu)x >> 1));
  const al_vf hx = 0.5f * x;
  y = y * (1.5f - hx * y * y);
  y = y * (1.5f - hx * y * y);
  const al_vf r = x * y;
  return al_vfma(0.5f * y, al_vfma(-r, r, x), r);
}
/* sqrt(x) to about 1 ulp for x = 0 or finite normal x > 0, cheaply: AVX-512's 14-bit reciprocal
 * square root (VRSQRT14PS, the same bits at every level) and one Newton step, for backward
 * weights (al_vsqrt is the exact twin of al_sqrtf). At the AVX-512 and AVX2 levels the same bits;
 * the generic level rounds the two FMAs twice each. */
AL_VI al_vf al_vsqrt_fast(al_vf x) {
  const al_vm pos = al_vm_gt(x, al_vsplat(0.0f));
#if !defined(__AVX512F__)
  if (!al_vm_any(pos)) return al_vsplat(0.0f);   /* (the same zeros, without the tables' cost) */
#endif
  const al_vf y = al_vrsqrt_approx(x);                                  /* 1/sqrt(x) to 2^-14 */
  const al_vf r = x * y;                                                /* (0 * inf at x = 0) */
  return al_vzero(al_vfma(0.5f * r, al_vfma(-y, r, al_vsplat(1.0f)), r), pos);   /* a Newton step */
}


#endif
