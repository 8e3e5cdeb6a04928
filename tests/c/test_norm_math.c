/* tests/c/test_norm_math.c -- the normalizer kernels' math (core/norm/vec.h, core/simd/fastmath.h):
 *   - the vectorizable al_expf / al_expf_le0 / al_logf / al_sqrtf against libm, in ulps, and
 *     their 16-lane twins used by the kernels (al_vexp, ...) against them, bitwise (and the
 *     faster al_vsqrt_fast against sqrtf; al_vexp_le0_sel against al_vexp_le0 and a mask);
 *   - the lane operations (masks, selects, FMA, min/max, compaction) against their lane-by-lane
 *     definitions, bitwise, at each level;
 *   - the 16-rows-in-lanes transpose and sorting network (all 0-1 inputs) and the batched double
 *     reductions (al_vhsumd_rows).
 * Every check prints PASS/FAIL/SKIP (tests/c/check.h). Single-threaded. */
#include "norm_check.h"

/* ---------------------------------------------------------------- 1. vector math */
static double ulps(float a, float ref) {
  if (a == ref) return 0;
  if (isnan(a) || isnan(ref) || isinf(a) || isinf(ref)) return INFINITY;
  float u = nextafterf(fabsf(ref), INFINITY) - fabsf(ref);
  return fabs((double)a - (double)ref) / u;
}

static void test_math(void) {
  double me = 0, me0 = 0, ml = 0, ms = 0;
  float we = 0, wl = 0, ws = 0;
  long cnt = 0;
  /* every 401st float of [-87.33, 88.72] by key: all exponents, ~5.6M mantissa patterns */
  for (uint32_t k = al_fkey_(-87.33f); k <= al_fkey_(88.72f); k += 401) {
    float x = al_fkey_inv_(k);
    double e = ulps(al_expf(x), expf(x));
    if (e > me) { me = e; we = x; }
    if (x <= 0) { e = ulps(al_expf_le0(x), expf(x)); if (e > me0) me0 = e; }
    cnt++;
  }
  char msg[200];
  snprintf(msg, sizeof msg, "max %.2f ulp at x=%g over %ld points", me, we, cnt);
  printf("  al_expf vs expf on [-87.33, 88.72]: %s; al_expf_le0 on [-87.33, 0]: max %.2f ulp\n",
         msg, me0);
  CHECK("math: al_expf within 2 ulp of expf", me <= 2.0, "%s", msg);
  CHECK("math: al_expf_le0 within 2 ulp of expf", me0 <= 2.0, "max %.2f ulp", me0);
  CHECK("math: al_expf specials",
        al_expf(-INFINITY) == 0.0f && al_expf(INFINITY) == INFINITY && isnan(al_expf(NAN)) &&
        al_expf(0.0f) == 1.0f && al_expf(-100.0f) == 0.0f && al_expf(89.0f) == INFINITY &&
        isfinite(al_expf(88.72f)) && al_expf_le0(-INFINITY) == 0.0f && isnan(al_expf_le0(NAN)) &&
        al_expf_le0(0.0f) == 1.0f,
        "exp(-inf)=%g exp(inf)=%g exp(0)=%g exp(88.72)=%g", al_expf(-INFINITY), al_expf(INFINITY),
        al_expf(0.0f), al_expf(88.72f));
  for (uint32_t k = al_fkey_(FLT_MIN); k < al_fkey_(FLT_MAX); k += 509) {
    float x = al_fkey_inv_(k);
    double e = ulps(al_logf(x), logf(x));
    if (e > ml) { ml = e; wl = x; }
    e = ulps(al_sqrtf(x), sqrtf(x));
    if (e > ms) { ms = e; ws = x; }
  }
  printf("  al_logf vs logf on [FLT_MIN, FLT_MAX]: max %.2f ulp at %g; al_sqrtf: max %.2f ulp at %g\n",
         ml, wl, ms, ws);
  CHECK("math: al_logf within 2 ulp of logf", ml <= 2.0, "max %.2f ulp at %g", ml, wl);
  CHECK("math: al_sqrtf within 1 ulp of sqrtf (and sqrt(0) = 0)", ms <= 1.0 && al_sqrtf(0.0f) == 0.0f,
        "max %.2f ulp at %g", ms, ws);
}

/* The kernels compute with al_vexp/al_vexp_le0/al_vlog/al_vsqrt on 16 lanes: each lane must be
 * bitwise the scalar function (whose accuracy against libm is checked above). */
static void test_vector_math(void) {
  long cnt = 0, bad[4] = {0, 0, 0, 0};
  float wx[4] = {0, 0, 0, 0};
  for (uint32_t k0 = al_fkey_(-100.0f); k0 <= al_fkey_(100.0f); k0 += 16 * 997) {
    float xs[AL_V], ys[AL_V];
    for (int l = 0; l < AL_V; l++) {
      xs[l] = al_fkey_inv_(k0 + (uint32_t)l * 61);
      ys[l] = fabsf(xs[l]) + FLT_MIN;   /* log/sqrt domain */
    }
    const al_vf x = al_vld(xs), y = al_vld(ys);
    const al_vf e = al_vexp(x), e0 = al_vexp_le0(al_vmin(x, al_vsplat(0.0f))), lg = al_vlog(y),
                sq = al_vsqrt(y);
    for (int l = 0; l < AL_V; l++) {
      const float x0 = xs[l] < 0.0f ? xs[l] : 0.0f;
      const float got[4] = {e[l], e0[l], lg[l], sq[l]};
      const float want[4] = {al_expf(xs[l]), al_expf_le0(x0), al_logf(ys[l]), al_sqrtf(ys[l])};
      for (int f = 0; f < 4; f++)
        if (memcmp(&got[f], &want[f], 4)) { bad[f]++; wx[f] = f < 2 ? xs[l] : ys[l]; }
    }
    cnt += AL_V;
  }
  /* specials: NaN, +-inf, the clamps */
  const float sp[AL_V] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 88.72f, 89.0f, -87.3f,
                          -87.34f, -87.4f, -100.0f, -1e30f, 1e30f, FLT_MIN, 1.0f, -1.0f};
  const al_vf e = al_vexp(al_vld(sp)), e0 = al_vexp_le0(al_vld(sp));
  for (int l = 0; l < AL_V; l++) {
    const float a = al_expf(sp[l]), b = al_expf_le0(sp[l]), va = e[l], vb = e0[l];
    if (memcmp(&a, &va, 4)) { bad[0]++; wx[0] = sp[l]; }
    if (sp[l] <= 88.0f && memcmp(&b, &vb, 4)) { bad[1]++; wx[1] = sp[l]; }
  }
  printf("  16-lane math vs scalar over %ld points: mismatches exp %ld, exp_le0 %ld, log %ld, sqrt %ld"
         " (vector path: %s)\n", cnt, bad[0], bad[1], bad[2], bad[3],
#if defined(__AVX512F__)
         "AVX-512"
#else
         "generic"
#endif
  );
  CHECK("math: al_vexp == al_expf lane by lane (bitwise, incl. NaN/inf/clamps)", bad[0] == 0,
        "%ld mismatches, e.g. at %g", bad[0], wx[0]);
  CHECK("math: al_vexp_le0 == al_expf_le0 lane by lane (bitwise)", bad[1] == 0,
        "%ld mismatches, e.g. at %g", bad[1], wx[1]);
  /* al_vexp_le0_sel(x, m) (top-k's exp pass) == al_vzero(al_vexp_le0(x), m), bitwise: the same
   * points and specials as above under rotating lane masks */
  long bad_sel = 0;
  uint32_t mk = 0x9E37u;
  for (uint32_t k0 = al_fkey_(-100.0f); k0 <= al_fkey_(100.0f); k0 += 16 * 997) {
    float xs[AL_V];
    for (int l = 0; l < AL_V; l++) {
      xs[l] = al_fkey_inv_(k0 + (uint32_t)l * 61);
      if (xs[l] > 0.0f) xs[l] = -xs[l];
    }
    mk = mk * 1103515245u + 12345u;
    const al_vm m = al_vm_lt(al_vld(xs), al_vsplat(0.0f)) &
                    al_vm_ilt(al_vspliti((int32_t)((mk >> 8) & 0xFFFF)), al_vlane() * 4096 + 2048);
    const al_vf a = al_vexp_le0_sel(al_vld(xs), m), b = al_vzero(al_vexp_le0(al_vld(xs)), m);
    bad_sel += memcmp(&a, &b, sizeof a) != 0;
  }
  for (int q = 0; q < 3; q++) {
    const al_vm m = q == 0 ? al_vm_none() : q == 1 ? al_vm_first(AL_V) : al_vm_first(7);
    const al_vf a = al_vexp_le0_sel(al_vld(sp), m), b = al_vzero(al_vexp_le0(al_vld(sp)), m);
    for (int l = 0; l < AL_V; l++) bad_sel += sp[l] <= 88.0f && memcmp(&a[l], &b[l], 4) != 0;
  }
  CHECK("math: al_vexp_le0_sel(x, m) == al_vzero(al_vexp_le0(x), m) (bitwise, random masks, specials)",
        bad_sel == 0, "%ld mismatching vectors/lanes", bad_sel);
  CHECK("math: al_vlog == al_logf and al_vsqrt == al_sqrtf lane by lane (bitwise)",
        bad[2] == 0 && bad[3] == 0, "%ld / %ld mismatches, e.g. at %g / %g", bad[2], bad[3], wx[2],
        wx[3]);
  /* al_vsqrt_fast (entmax15's backward weights): within 1 ulp of sqrtf on normal floats,
   * exactly 0 at 0 (subnormal p: the generic path is al_vsqrt, as rough there as al_sqrtf) */
  double mu = 0;
  float wu = 0;
  for (uint32_t k = al_fkey_(FLT_MIN); k < al_fkey_(FLT_MAX) - 512; k += 16 * 1013) {
    float xs[AL_V];
    for (int l = 0; l < AL_V; l++) xs[l] = al_fkey_inv_(k + (uint32_t)l * 31);
    const al_vf v = al_vsqrt_fast(al_vld(xs));
    for (int l = 0; l < AL_V; l++) {
      const double eu = ulps(v[l], sqrtf(xs[l]));
      if (eu > mu) { mu = eu; wu = xs[l]; }
    }
  }
  const al_vf z = al_vsqrt_fast(al_vsplat(0.0f));
  CHECK("math: al_vsqrt_fast within 1 ulp of sqrtf on [FLT_MIN, FLT_MAX], sqrt(0) = 0", mu <= 1.0 && z[0] == 0.0f,
        "max %.2f ulp at %g, sqrt(0) = %g", mu, wu, (double)z[0]);
}

/* ---------------------------------------------------------------- 2. the same bits at every level */
/* AVX-512's VRCP14PS and VRSQRT14PS (core/simd/approx14.h: al_rcp14f, al_rsqrt14f; vec.h:
 * al_vrcp_approx, al_vrsqrt_approx) on every sign, biased exponent and 16-bit mantissa index,
 * the mantissa's low 7 bits varied, then every power of two and the specials. */
#define A14_COUNT (2u * 256u * 65536u)
static float a14_input(uint32_t k) {   /* k < A14_COUNT */
  const uint32_t sign = k >> 24, exponent = (k >> 16) & 255u, index = k & 0xFFFFu;
  const uint32_t low = (index * 37u + exponent + sign) & 127u;
  return al_u2f_(sign << 31 | exponent << 23 | index << 7 | low);
}
#define A14_SPECIALS 16
static const uint32_t a14_specials[A14_SPECIALS] = {
    0x00000000u, 0x80000000u, 0x00000001u, 0x007FFFFFu, 0x00800000u, 0x7F7FFFFFu, 0x7F800000u,
    0xFF800000u, 0x7FC00000u, 0xFFC00001u, 0x7F800001u, 0x3F800000u, 0xBF800000u, 0x7F000000u,
    0x00400000u, 0x00000100u};
/* the instructions, where the CPU has them (this file is also compiled for the AVX2 and generic
 * levels: the function carries its own target) */
__attribute__((target("avx512f"))) static void a14_instructions(const float *x, float *rcp, float *rsqrt) {
  const __m512 v = _mm512_loadu_ps(x);
  _mm512_storeu_ps(rcp, _mm512_rcp14_ps(v));
  _mm512_storeu_ps(rsqrt, _mm512_rsqrt14_ps(v));
}
static uint64_t fnv1a(uint64_t h, uint32_t v) {
  for (int b = 0; b < 4; b++) h = (h ^ ((v >> (8 * b)) & 0xFFu)) * 0x100000001B3ull;
  return h;
}
static void test_approx14(void) {
  /* FNV-1a 64 of the instructions' results on the inputs above (rcp, then rsqrt, input by input,
   * then the powers of two), as the AVX-512 EPYC of 2026-12-04 computed them: machines without
   * AVX-512 check the tables against it */
  const uint64_t want_hash = 0xD359712C1B07FCD1ull;
  const int have = __builtin_cpu_supports("avx512f");
  uint64_t hash = 0xCBF29CE484222325ull, hw_hash = 0xCBF29CE484222325ull;
  long bad_hw = 0, bad_vec = 0;
  uint32_t where_hw = 0, where_vec = 0;
  for (uint32_t k0 = 0; k0 < A14_COUNT + 2 * 256 + A14_SPECIALS; k0 += AL_V) {
    float x[AL_V], hr[AL_V], hs[AL_V];
    for (int l = 0; l < AL_V; l++) {
      const uint32_t k = k0 + (uint32_t)l;
      x[l] = k < A14_COUNT ? a14_input(k)
           : k < A14_COUNT + 512 ? al_u2f_((k - A14_COUNT) << 23)   /* powers of two, +-0, +-inf */
           : al_u2f_(a14_specials[(k - A14_COUNT - 512) % A14_SPECIALS]);
    }
    const al_vf vr = al_vrcp_approx(al_vld(x)), vs = al_vrsqrt_approx(al_vld(x));
    if (have) a14_instructions(x, hr, hs);
    for (int l = 0; l < AL_V; l++) {
      const uint32_t r = al_f2u_(al_rcp14f(x[l])), q = al_f2u_(al_rsqrt14f(x[l]));
      if (k0 + (uint32_t)l < A14_COUNT + 512) { hash = fnv1a(fnv1a(hash, r), q); }
      if (r != al_f2u_(vr[l]) || q != al_f2u_(vs[l])) { bad_vec++; where_vec = al_f2u_(x[l]); }
      if (have) {
        if (k0 + (uint32_t)l < A14_COUNT + 512)
          hw_hash = fnv1a(fnv1a(hw_hash, al_f2u_(hr[l])), al_f2u_(hs[l]));
        if (r != al_f2u_(hr[l]) || q != al_f2u_(hs[l])) { bad_hw++; where_hw = al_f2u_(x[l]); }
      }
    }
  }
  printf("  approx14: %u inputs, results hash %016llx\n", A14_COUNT + 512 + A14_SPECIALS, (unsigned long long)hash);
  if (have)
    CHECK("approx14: al_rcp14f / al_rsqrt14f == VRCP14PS / VRSQRT14PS bitwise (every sign, exponent, "
          "16-bit mantissa index; powers of two, subnormals, inf, NaN)",
          bad_hw == 0 && hw_hash == want_hash, "%ld mismatches (e.g. input bits %08x); the instructions' hash %016llx",
          bad_hw, where_hw, (unsigned long long)hw_hash);
  else
    check_skip("approx14: al_rcp14f / al_rsqrt14f == VRCP14PS / VRSQRT14PS", "this CPU has no AVX-512 (SKIPPED LOUDLY); the hash check below stands in");
  CHECK("approx14: the emulations' results hash to what the instructions gave (any CPU)", hash == want_hash,
        "hash %016llx, expected %016llx", (unsigned long long)hash, (unsigned long long)want_hash);
  CHECK("approx14: al_vrcp_approx / al_vrsqrt_approx == al_rcp14f / al_rsqrt14f lane by lane at this level",
        bad_vec == 0, "%ld lanes differ, e.g. input bits %08x", bad_vec, where_vec);
}

/* The horizontal reductions: the tree of GCC's _mm512_reduce_*_ps, written out (the high half OP
 * the low half to four lanes q, then OP(OP(q0, q2), OP(q1, q3))), at every level, bitwise for
 * zeros of either sign and infinities, NaN where the tree gives NaN. The sum in double likewise. */
static float op_add(float a, float b) { return a + b; }
static float op_min(float a, float b) { return a < b ? a : b; }
static float op_max(float a, float b) { return a > b ? a : b; }
static float tree16(const float *x, float (*op)(float, float)) {
  float a8[8], a4[4];
  for (int l = 0; l < 8; l++) a8[l] = op(x[8 + l], x[l]);
  for (int l = 0; l < 4; l++) a4[l] = op(a8[4 + l], a8[l]);
  return op(op(a4[0], a4[2]), op(a4[1], a4[3]));
}
static int same_or_nan(float a, float b) { return (isnan(a) && isnan(b)) || !memcmp(&a, &b, sizeof a); }
static void test_hreduce(void) {
  static const float pool[] = {0.0f, -0.0f, 1.0f, -1.0f, 1e-8f, 3e7f, -2.5e7f, INFINITY, -INFINITY, NAN, 0.1f, 1.7e-3f};
  long bad[5] = {0, 0, 0, 0, 0}, n = 0;
  for (int call = 0; call < 20000; call++) {
    float x[AL_V], y[AL_V], z[AL_V];
    double d[16];
    const int specials = call % 4 == 0;   /* a quarter of the vectors draw from the pool */
    for (int l = 0; l < AL_V; l++) {
      x[l] = specials && rng_unif() < 0.5 ? pool[(int)(rng_unif() * 12)] : (float)(rng_normal() * pow(10.0, (int)(rng_unif() * 12) - 6));
      y[l] = (float)rng_normal();
      z[l] = (float)(rng_normal() * 1e4);
      d[l] = rng_normal() * pow(10.0, (int)(rng_unif() * 24) - 12);
    }
    const al_vf v = al_vld(x);
    float s3[3];
    al_vhsum3f(v, al_vld(y), al_vld(z), &s3[0], &s3[1], &s3[2]);
    bad[0] += !same_or_nan(al_vhsumf(v), tree16(x, op_add));
    bad[1] += !same_or_nan(al_vhmin(v), tree16(x, op_min));
    bad[2] += !same_or_nan(al_vhmax(v), tree16(x, op_max));
    bad[3] += !same_or_nan(s3[0], tree16(x, op_add)) || !same_or_nan(s3[1], tree16(y, op_add)) ||
              !same_or_nan(s3[2], tree16(z, op_add));
    al_vd lo, hi;
    for (int l = 0; l < 8; l++) { lo[l] = d[l]; hi[l] = d[8 + l]; }
    double a8[8], a4[4];
    for (int l = 0; l < 8; l++) a8[l] = d[8 + l] + d[l];
    for (int l = 0; l < 4; l++) a4[l] = a8[4 + l] + a8[l];
    const double want = (a4[2] + a4[0]) + (a4[3] + a4[1]), got = al_vhsumd(lo, hi);
    bad[4] += memcmp(&got, &want, sizeof got) != 0;
    n++;
  }
  CHECK("hreduce: al_vhsumf, al_vhmin, al_vhmax, al_vhsum3f and al_vhsumd add and compare in the AVX-512 "
        "intrinsics' order at this level (bitwise, zeros of either sign, inf, NaN)",
        bad[0] + bad[1] + bad[2] + bad[3] + bad[4] == 0,
        "of %ld vectors: sum %ld, min %ld, max %ld, sum3 %ld, double sum %ld differ", n, bad[0], bad[1], bad[2], bad[3], bad[4]);
}

/* ---------------------------------------------------------------- lane operations */
/* The masks, selects, FMA, min/max and conversions the kernels are written with, against their
 * lane-by-lane definitions, bitwise: each level implements them its own way (AVX-512 mask
 * registers and intrinsics; AVX2 on 8-lane halves; generic vectors), and the kernels' results
 * are the same at every level only if these are. Inputs mix zeros of either sign, infinities,
 * NaN, ties and subnormals with ordinary values. */
static float lane_input(void) {
  static const float pool[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 1e-40f, -3e-39f, 2.5f};
  const double u = rng_unif();
  return u < 0.4 ? pool[(int)(rng_unif() * 10)] : (float)(rng_normal() * 4);
}
static int same_bits(float a, float b) { return !memcmp(&a, &b, sizeof a); }
static void test_lane_ops(void) {
  long bad[9] = {0}, n = 0;
  for (int call = 0; call < 20000; call++, n++) {
    float a[AL_V], b[AL_V], c[AL_V];
    int32_t ia[AL_V], ib[AL_V];
    uint8_t keep[AL_V];
    for (int l = 0; l < AL_V; l++) {
      a[l] = lane_input();
      b[l] = rng_unif() < 0.3 ? a[l] : lane_input();   /* ties and equal NaNs too */
      c[l] = lane_input();
      ia[l] = (int32_t)(rng_next() >> 60) - 8;
      ib[l] = rng_unif() < 0.3 ? ia[l] : (int32_t)(rng_next() >> 60) - 8;
      keep[l] = rng_unif() < 0.5 ? 0 : (uint8_t)(1 + (rng_next() >> 57));
    }
    const al_vf va = al_vld(a), vb = al_vld(b), vc = al_vld(c);
    al_vi via, vib;
    memcpy(&via, ia, sizeof via);
    memcpy(&vib, ib, sizeof vib);
    /* comparisons, as bit masks */
    uint32_t want[9] = {0};
    for (int l = 0; l < AL_V; l++) {
      want[0] |= (uint32_t)(a[l] < b[l]) << l;
      want[1] |= (uint32_t)(a[l] <= b[l]) << l;
      want[2] |= (uint32_t)(a[l] > b[l]) << l;
      want[3] |= (uint32_t)(a[l] >= b[l]) << l;
      want[4] |= (uint32_t)(a[l] == b[l]) << l;
      want[5] |= (uint32_t)!(a[l] <= b[l]) << l;
      want[6] |= (uint32_t)(ia[l] < ib[l]) << l;
      want[7] |= (uint32_t)(ia[l] <= ib[l]) << l;
      want[8] |= (uint32_t)(ia[l] == ib[l]) << l;
    }
    const al_vm got[9] = {al_vm_lt(va, vb), al_vm_le(va, vb), al_vm_gt(va, vb), al_vm_ge(va, vb),
                          al_vm_eq(va, vb), al_vm_nle(va, vb), al_vm_ilt(via, vib),
                          al_vm_ile(via, vib), al_vm_ieq(via, vib)};
    for (int q = 0; q < 9; q++) bad[0] += al_vm_bits(got[q]) != want[q];
    const int k = call % 19 - 1;   /* -1 .. 17 */
    uint32_t keep_bits = 0;
    for (int l = 0; l < AL_V; l++) keep_bits |= (uint32_t)(keep[l] != 0) << l;
    bad[1] += al_vm_bits(al_vm_first(k)) != (k <= 0 ? 0u : k >= AL_V ? 0xFFFFu : (1u << k) - 1u) ||
              al_vm_bits(al_vm_keep(keep)) != keep_bits || al_vm_bits(al_vm_none()) != 0 ||
              al_vm_count(got[0]) != __builtin_popcount(want[0]) || al_vm_any(got[4]) != (want[4] != 0);
    /* selects, zeroing, masked add and increment under the mask a < b */
    const al_vm m = got[0];
    const al_vf sel = al_vsel(m, va, vb), zer = al_vzero(va, m), addm = al_vaddm(va, m, vc);
    const al_vi seli = al_vseli(m, via, vib), inc = al_vinc(via, m);
    /* FMA (AL_FMAF: one rounding where the level has FMA), min and max (maxps: a > b ? a : b),
     * unsigned min and max, and the halves widened to double */
    const al_vf fma = al_vfma(va, vb, vc), mx = al_vmax(va, vb), mn = al_vmin(va, vb);
    const al_vu ua = (al_vu)via * 0x9E3779B1u, ub = (al_vu)vib * 0x85EBCA77u;
    const al_vu mxu = al_vmaxu(ua, ub), mnu = al_vminu(ua, ub);
    const al_vd lo = al_vlo(va), hi = al_vhi(va);
    for (int l = 0; l < AL_V; l++) {
      const int ml = (want[0] >> l) & 1;
      bad[2] += !same_bits(sel[l], ml ? a[l] : b[l]) || seli[l] != (ml ? ia[l] : ib[l]);
      bad[3] += !same_bits(zer[l], ml ? a[l] : 0.0f) || !same_bits(addm[l], ml ? a[l] + c[l] : a[l]) ||
                inc[l] != ia[l] + ml;
      bad[4] += !same_or_nan(fma[l], AL_FMAF(a[l], b[l], c[l]));
      bad[5] += !same_bits(mx[l], a[l] > b[l] ? a[l] : b[l]) || !same_bits(mn[l], a[l] < b[l] ? a[l] : b[l]);
      bad[6] += mxu[l] != (ua[l] > ub[l] ? ua[l] : ub[l]) || mnu[l] != (ua[l] < ub[l] ? ua[l] : ub[l]);
      const double w = l < 8 ? lo[l] : hi[l - 8];
      bad[7] += !(same_or_nan((float)w, a[l]) && (isnan(w) || w == (double)a[l]));
    }
    /* compaction: the lanes of m in order */
    float packed[2 * AL_V], want_packed[AL_V];
    int q = 0;
    for (int l = 0; l < AL_V; l++)
      if ((want[2] >> l) & 1) want_packed[q++] = a[l];
    al_vst_compress(packed, va, got[2]);
    al_vf acc = al_vsplat(7.0f);
    const int k2 = al_vappend(&acc, 3, va, got[2]);
    int okc = k2 == 3 + q;
    for (int i = 0; i < q; i++) okc &= same_bits(packed[i], want_packed[i]);
    for (int i = 0; i < AL_V; i++)
      okc &= same_bits(acc[i], i < 3 ? 7.0f : i < 3 + q ? want_packed[i - 3] : 7.0f);
    bad[8] += !okc;
  }
  CHECK("lanes: compares as bit masks (float and int, NaN, +-0, ties) at this level", bad[0] == 0,
        "%ld of %ld masks differ", bad[0], 9 * n);
  CHECK("lanes: al_vm_first, al_vm_keep, al_vm_none, al_vm_count, al_vm_any", bad[1] == 0,
        "%ld of %ld calls differ", bad[1], n);
  CHECK("lanes: al_vsel, al_vseli bitwise", bad[2] == 0, "%ld lanes differ", bad[2]);
  CHECK("lanes: al_vzero, al_vaddm, al_vinc bitwise", bad[3] == 0, "%ld lanes differ", bad[3]);
  CHECK("lanes: al_vfma == AL_FMAF lane by lane", bad[4] == 0, "%ld lanes differ", bad[4]);
  CHECK("lanes: al_vmax/al_vmin pick maxps/minps's operand (NaN, +-0)", bad[5] == 0, "%ld lanes differ", bad[5]);
  CHECK("lanes: al_vmaxu/al_vminu", bad[6] == 0, "%ld lanes differ", bad[6]);
  CHECK("lanes: al_vlo/al_vhi widen lanes 0-7 / 8-15 exactly", bad[7] == 0, "%ld lanes differ", bad[7]);
  CHECK("lanes: al_vst_compress and al_vappend keep the masked lanes in order", bad[8] == 0,
        "%ld of %ld calls differ", bad[8], n);
}

/* ---------------------------------------------------------------- 16 rows in lanes */
/* al_vtranspose16 on a known matrix; al_vsort16_desc by the 0-1 principle (a comparator network
 * sorts every input iff it sorts all 2^16 inputs of zeros and ones: 16 patterns a call, one per
 * lane) and on random floats with ties and -inf against qsort. */
static int cmp_fdesc(const void *a, const void *b) {
  const float x = *(const float *)a, y = *(const float *)b;
  return x > y ? -1 : x < y;
}
/* The batch reduction of double sums equals al_vhsumd row by row, bitwise: for every batch size,
 * on terms of mixed magnitudes (where the order of the additions shows in the last bits). */
static void test_hsumd_rows(void) {
  long bad = 0, rounding_visible = 0;
  for (int call = 0; call < 400; call++) {
    const int nr = 1 + call % 16;
    al_vd v[16];
    double got[16];
    for (int i = 0; i < nr; i++)
      for (int l = 0; l < 8; l++) v[i][l] = rng_normal() * pow(10.0, (int)(rng_unif() * 24) - 12);
    al_vhsumd_rows(v, nr, got);
    for (int i = 0; i < nr; i++) {
      const double want = al_vhsumd(v[i], (al_vd){0});
      double seq = 0;
      for (int l = 0; l < 8; l++) seq += v[i][l];
      bad += memcmp(&got[i], &want, sizeof want) != 0;
      rounding_visible += seq != want;
    }
  }
  CHECK("hsumd_rows: al_vhsumd_rows == al_vhsumd row by row (1..16 rows, bitwise)", bad == 0,
        "%ld rows differ", bad);
  printf("  hsumd_rows: %ld of the rows' sums differ from a left-to-right sum (the tree shows)\n",
         rounding_visible);
}

static void test_lanes16(void) {
  al_vf t[AL_V];
  for (int r = 0; r < AL_V; r++)
    for (int c = 0; c < AL_V; c++) t[r][c] = (float)(r * 100 + c);
  al_vtranspose16(t);
  int tr_ok = 1;
  for (int r = 0; r < AL_V; r++)
    for (int c = 0; c < AL_V; c++) tr_ok &= t[r][c] == (float)(c * 100 + r);
  CHECK("lanes16: al_vtranspose16 moves t[r][c] to t[c][r] (all 256 entries)", tr_ok, "wrong");
  long bad01 = 0;
  for (uint32_t call = 0; call < 65536 / AL_V; call++) {
    for (int m = 0; m < AL_V; m++)
      for (int l = 0; l < AL_V; l++) t[m][l] = (float)((call * AL_V + (uint32_t)l) >> m & 1);
    al_vsort16_desc(t);
    for (int l = 0; l < AL_V; l++) {
      const uint32_t pat = call * AL_V + (uint32_t)l;
      int ones = 0, sorted = 1;
      for (int m = 0; m < AL_V; m++) {
        ones += t[m][l] == 1.0f;
        if (m > 0 && t[m][l] > t[m - 1][l]) sorted = 0;
      }
      bad01 += !sorted || ones != __builtin_popcount(pat);
    }
  }
  CHECK("lanes16: al_vsort16_desc sorts all 65536 0-1 inputs (so every input)", bad01 == 0,
        "%ld patterns unsorted", bad01);
  long badf = 0;
  for (int call = 0; call < 200; call++) {
    float ref[AL_V][AL_V];
    for (int m = 0; m < AL_V; m++)
      for (int l = 0; l < AL_V; l++) {
        const double u = rng_unif();
        t[m][l] = u < 0.1 ? -INFINITY : u < 0.3 ? (float)(int)(rng_unif() * 4) : (float)rng_normal();
        ref[l][m] = t[m][l];
      }
    al_vsort16_desc(t);
    for (int l = 0; l < AL_V; l++) {
      qsort(ref[l], AL_V, sizeof(float), cmp_fdesc);
      for (int m = 0; m < AL_V; m++) badf += memcmp(&t[m][l], &ref[l][m], sizeof(float)) != 0;
    }
  }
  CHECK("lanes16: al_vsort16_desc == qsort on 3200 random lanes (ties, -inf)", badf == 0,
        "%ld entries differ", badf);
}

int main(void) {
  al_set_num_threads(1);
  printf("seed: splitmix64 0x9E3779B97F4A7C15, 1 thread unless stated\n");
  rng_at(0);
  test_math();
  rng_at(0);
  test_vector_math();
  test_approx14();
  rng_at(0);
  test_hreduce();
  rng_at(0);
  test_lane_ops();
  rng_at(25788693);
  test_lanes16();
  rng_at(25921813);
  test_hsumd_rows();
  CHECK_EXIT();
}
