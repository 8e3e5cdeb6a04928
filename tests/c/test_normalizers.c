/* tests/c/test_normalizers.c -- the attention normalizer kernels (include/attnlab/normalizers.h).
 *
 * What is checked, for softmax, sparsemax, entmax15, entmax_bisect and top-k softmax:
 *   - the vectorizable al_expf / al_expf_le0 / al_logf / al_sqrtf against libm, in ulps, and
 *     their 16-lane twins used by the kernels (al_vexp, ...) against them, bitwise (and the
 *     faster al_vsqrt_fast against sqrtf; al_vexp_le0_sel against al_vexp_le0 and a mask);
 *   - closed forms derived by hand on tiny inputs;
 *   - double-precision reference loops written here from the definitions (sort-based sparsemax
 *     and entmax15, 200-step bisection, stable-sort top-k) on many shapes and scales, incl.
 *     1000*randn, masks, n = 1 and n = 4096;
 *   - reference vectors tests/ref/normalizers.json (made once from the shared PyTorch
 *     definitions by tests/ref/make_normalizer_refs.py), forward, backward and d/dalpha;
 *   - central finite differences of every backward (loss in double), incl. the alpha gradient,
 *     skipping points where the support changes within eps; and a self-test that the check
 *     rejects a gradient that is 2% off;
 *   - every row length 1..48 (the kernels' 16-lane blocks: padded rows, whole blocks, an
 *     overlapped last block) and skewed/bimodal rows (top-k's band guess misses, the search
 *     takes over) against the references;
 *   - identities: bisect(1.5) == entmax15, bisect(2) == sparsemax, bisect(1.001) ~ softmax,
 *     shift invariance, topk(1) == softmax, masked == truncated, masked == -inf (bitwise),
 *     all-masked rows -> 0, NaN handling, ties (top-k lower index wins), thread-count
 *     independence (bitwise), backward accumulation, argument errors;
 *   - the _write backward twins == accumulation into zeros (bitwise), never reading gin;
 *   - the 16-rows-in-lanes transpose and sorting network (all 0-1 inputs), and top-k's rows
 *     ranked in lanes == the same rows alone (bitwise).
 * Every check prints PASS/FAIL/SKIP (tests/c/check.h). Single-threaded unless stated. */
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "attnlab/base.h"
#include "attnlab/norm_registry.h"
#include "attnlab/normalizers.h"
#include "attnlab/threads.h"
#include "../../core/norm/internal.h"   /* the kernels' 16-lane math, checked against the scalar functions */
#include "check.h"

/* ---------------------------------------------------------------- random numbers */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng_next(void) {   /* splitmix64 */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static double rng_unif(void) { return (rng_next() >> 11) * 0x1p-53; }
static double rng_normal(void) {
  double u1 = rng_unif(), u2 = rng_unif();
  if (u1 < 1e-300) u1 = 1e-300;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
static void fill_randn(float *x, long n, double scale) {
  for (long i = 0; i < n; i++) x[i] = (float)(scale * rng_normal());
}

/* ---------------------------------------------------------------- the ops: the registry's rows */
/* The test's names for the kinds it has references for; NOPS covers every row of the table, so
 * a kind added there without a reference here fails ref_row (below) instead of passing as
 * another normalizer. */
enum { SOFTMAX = AL_NORM_SOFTMAX, SPARSEMAX = AL_NORM_SPARSEMAX, ENTMAX15 = AL_NORM_ENTMAX15,
       BISECT = AL_NORM_ENTMAX_BISECT, TOPK = AL_NORM_TOPK_SOFTMAX, NOPS = AL_NORM_COUNT };
#define op_name(op) (al_norm_get((al_norm_kind)(op))->name)
static int last_iters;

/* alpha: per-row array (BISECT); ratio (TOPK). */
static al_status op_fwd(int op, float *out, const float *x, const uint8_t *keep, long mrows,
                        long rows, long n, const float *alpha, double ratio) {
  al_norm_params p = {.ratio = ratio, .alpha = alpha, .max_iter = 100, .iters_used = &last_iters};
  return al_norm_get((al_norm_kind)op)->fwd(out, x, keep, mrows, rows, n, &p);
}
static al_status op_bwd(int op, float *gin, float *galpha, const float *gout, const float *out,
                        long rows, long n, const float *alpha) {
  al_norm_params p = {.alpha = alpha};
  return al_norm_get((al_norm_kind)op)->bwd(gin, galpha, gout, out, rows, n, &p);
}

/* ---------------------------------------------------------------- double references */
/* The scalar reference of the normalizer's own file (its registry row): one row in double;
 * alpha for the alpha rows (BISECT), ratio for the ratio rows (TOPK). */
static void ref_row(int op, double *o, const float *x, const uint8_t *kr, long n, double alpha,
                    double ratio) {
  const al_norm_desc *d = al_norm_get((al_norm_kind)op);
  if (!d->ref_fwd || !d->ref_bwd) {   /* a row without its reference: no check can pass */
    fprintf(stderr, "test_normalizers: the row of %s has no scalar reference\n", d->name);
    exit(1);
  }
  d->ref_fwd(o, x, kr, n, d->param == AL_NORM_P_ALPHA ? alpha : ratio);
}

/* max |a - b| / (atol + rtol |b|) against a double reference; *maxd gets max |a - b|. */
static double cmp_ref(const float *a, const double *b, long n, double atol, double rtol,
                      double *maxd) {
  double r = 0, md = 0;
  for (long i = 0; i < n; i++) {
    double d = fabs((double)a[i] - b[i]);
    if (isnan(a[i]) || isnan(b[i])) d = INFINITY;
    if (d > md) md = d;
    double q = d / (atol + rtol * fabs(b[i]));
    if (q > r) r = q;
  }
  if (maxd) *maxd = md;
  return r;
}

static float *falloc(long n) { return calloc(n > 0 ? n : 1, sizeof(float)); }
static double *dalloc(long n) { return calloc(n > 0 ? n : 1, sizeof(double)); }

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

/* ---------------------------------------------------------------- 2. closed forms */
static void check_vec(const char *name, int op, const float *x, long n, const double *want,
                      double alpha, double ratio, double atol) {
  float *o = falloc(n), a = (float)alpha;
  al_status st = op_fwd(op, o, x, NULL, 1, 1, n, &a, ratio);
  double md;
  double r = cmp_ref(o, want, n, atol, 0, &md);
  CHECK(name, st == AL_OK && r <= 1, "got {%.7g, %.7g, %.7g...} want {%.7g, %.7g, %.7g...} max diff %.2e",
        o[0], n > 1 ? o[1] : 0, n > 2 ? o[2] : 0, want[0], n > 1 ? want[1] : 0, n > 2 ? want[2] : 0, md);
  free(o);
}

static void test_closed_forms(void) {
  /* sparsemax {1,0,-1}: support {1}: tau = 0 -> {1,0,0}. */
  check_vec("closed form: sparsemax{1,0,-1} = {1,0,0}", SPARSEMAX, (float[]){1, 0, -1}, 3,
            (double[]){1, 0, 0}, 0, 0, 1e-7);
  /* sparsemax {0.5,0.2,0}: all three in the support, tau = (0.7-1)/3 = -0.1 -> {.6,.3,.1}. */
  check_vec("closed form: sparsemax{0.5,0.2,0} = {0.6,0.3,0.1}", SPARSEMAX, (float[]){0.5f, 0.2f, 0},
            3, (double[]){0.6, 0.3, 0.1}, 0, 0, 1e-7);
  /* sparsemax {1,0.2,0}: support {1,2}, tau = (1.2-1)/2 = 0.1 -> {0.9,0.1,0}. */
  check_vec("closed form: sparsemax{1,0.2,0} = {0.9,0.1,0}", SPARSEMAX, (float[]){1, 0.2f, 0}, 3,
            (double[]){0.9, 0.1, 0}, 0, 0, 1e-7);
  /* entmax15 of {a, b}, D = (a-b)/2 < 1: p1 = (1 + D sqrt(2 - D^2))/2, p2 = 1 - p1
   * (from (u1-tau)^2 + (u2-tau)^2 = 1); D >= 1 gives {1, 0}. */
  {
    double d = 0.5, s = sqrt(2 - d * d);
    check_vec("closed form: entmax15{1,0} = {(1+D sqrt(2-D^2))/2, ...}, D=1/2", ENTMAX15,
              (float[]){1, 0}, 2, (double[]){(1 + d * s) / 2, (1 - d * s) / 2}, 0, 0, 2e-7);
    d = 0.15; s = sqrt(2 - d * d);
    check_vec("closed form: entmax15{0.3,0} two-element formula", ENTMAX15, (float[]){0.3f, 0}, 2,
              (double[]){(1 + d * s) / 2, (1 - d * s) / 2}, 0, 0, 2e-7);
    check_vec("closed form: entmax15{2.5,0} = {1,0}", ENTMAX15, (float[]){2.5f, 0}, 2,
              (double[]){1, 0}, 0, 0, 1e-7);
    check_vec("closed form: entmax15 all equal (n=4) = 1/4", ENTMAX15, (float[]){7, 7, 7, 7}, 4,
              (double[]){.25, .25, .25, .25}, 0, 0, 1e-7);
  }
  /* alpha = 2 on two elements is sparsemax: {(1+D)/2, (1-D)/2}, D = a - b. */
  check_vec("closed form: entmax_bisect(alpha=2){0.4,0} = {0.7,0.3}", BISECT, (float[]){0.4f, 0}, 2,
            (double[]){0.7, 0.3}, 2.0, 0, 1e-6);
  /* alpha = 3, two elements: p = [2z - tau]^(1/2), so p1^2 - p2^2 = 2(a - b) and p1 + p2 = 1:
   * p1 - p2 = 2(a-b) -> p1 = (1 + 2(a-b))/2 = 0.6 for a-b = 0.1. */
  check_vec("closed form: entmax_bisect(alpha=3){0.1,0} = {0.6,0.4}", BISECT, (float[]){0.1f, 0},
            2, (double[]){0.6, 0.4}, 3.0, 0, 1e-6);
  /* softmax{0, ln2, ln3} = {1,2,3}/6 */
  check_vec("closed form: softmax{0,ln2,ln3} = {1,2,3}/6", SOFTMAX,
            (float[]){0, (float)log(2.0), (float)log(3.0)}, 3, (double[]){1 / 6.0, 2 / 6.0, 3 / 6.0},
            0, 0, 2e-7);
  /* top-k: {3,1,2,5,4}, ratio 0.4 -> k = 2: {5,4} -> {1, e^-1}/(1+e^-1) */
  {
    double e = exp(-1.0);
    check_vec("closed form: topk{3,1,2,5,4}, ratio .4 -> softmax{5,4}", TOPK, (float[]){3, 1, 2, 5, 4}, 5,
              (double[]){0, 0, 0, 1 / (1 + e), e / (1 + e)}, 0, 0.4, 2e-7);
  }
  /* ceil robustness: 0.3*10 -> 3 (not 4), 0.25*17 -> 5, 0.125*65 -> 9, ratio*n tiny -> 1 */
  CHECK("topk count: ceil(0.3*10)=3, ceil(0.25*17)=5, ceil(0.125*65)=9, min 1, 1.0*n=n",
        al_topk_count(0.3, 10) == 3 && al_topk_count(0.25, 17) == 5 && al_topk_count(0.125, 65) == 9 &&
        al_topk_count(0.01, 5) == 1 && al_topk_count(1.0, 65) == 65 && al_topk_count(0.7, 10) == 7 &&
        al_topk_count(0.5, 0) == 0,
        "got %ld %ld %ld %ld %ld %ld", (long)al_topk_count(0.3, 10), (long)al_topk_count(0.25, 17),
        (long)al_topk_count(0.125, 65), (long)al_topk_count(0.01, 5), (long)al_topk_count(1.0, 65),
        (long)al_topk_count(0.7, 10));
  /* n = 1 -> 1 for every op */
  for (int op = 0; op < NOPS; op++) {
    char name[80];
    snprintf(name, sizeof name, "n=1: %s gives 1", op_name(op));
    check_vec(name, op, (float[]){-3.5f}, 1, (double[]){1}, 1.5, 0.1, 0);
  }
}

/* ---------------------------------------------------------------- 3. vs reference loops */
static const double op_alpha_list[] = {1.05, 1.25, 1.5, 1.75, 2.0, 2.6};

static void test_vs_reference(void) {
  static const long ns[] = {1, 2, 3, 5, 7, 16, 17, 31, 64, 65, 100, 257};
  static const double scales[] = {0.1, 1.0, 3.0, 1000.0};
  static const double ratios[] = {0.125, 0.25, 0.3, 0.5, 0.9, 1.0};
  for (int op = 0; op < NOPS; op++) {
    for (int masked = 0; masked < 2; masked++) {
      double worst = 0, worst_d = 0, worst_sum = 0;
      long worst_n = 0, nrows_total = 0;
      int nonfinite = 0;
      for (size_t in = 0; in < sizeof ns / sizeof *ns; in++)
        for (size_t is = 0; is < sizeof scales / sizeof *scales; is++) {
          long n = ns[in], rows = 12, mrows = 3;
          float *x = falloc(rows * n), *o = falloc(rows * n), alpha[12];
          uint8_t *keep = malloc(mrows * n);
          double *ref = dalloc(n);
          fill_randn(x, rows * n, scales[is]);
          for (long i = 0; i < mrows * n; i++) keep[i] = rng_unif() > 0.25;
          keep[0] = 1;
          for (long i = 0; i < rows * n; i++)
            if (masked && !keep[((i / n) / (rows / mrows)) * n + i % n]) x[i] = NAN;  /* garbage */
          for (long r = 0; r < rows; r++) alpha[r] = (float)op_alpha_list[r % 6];
          double ratio = ratios[(in + is) % 6];
          al_status st = op_fwd(op, o, x, masked ? keep : NULL, mrows, rows, n, alpha, ratio);
          if (st != AL_OK) { worst = INFINITY; break; }
          for (long r = 0; r < rows; r++) {
            const uint8_t *kr = masked ? keep + (r / (rows / mrows)) * n : NULL;
            ref_row(op, ref, x + r * n, kr, n, alpha[r], ratio);
            double md, q;
            double atol = op == BISECT ? 2e-6 : 1e-6, rtol = op == BISECT ? 2e-5 : 1e-5;
            q = cmp_ref(o + r * n, ref, n, atol, rtol, &md);
            if (q > worst) { worst = q; worst_d = md; worst_n = n; }
            double s = 0, want_s = 0;
            for (long j = 0; j < n; j++) {
              s += o[r * n + j];
              want_s += ref[j];
              nonfinite |= !isfinite(o[r * n + j]);
            }
            if (fabs(s - want_s) > worst_sum) worst_sum = fabs(s - want_s);   /* 1, or 0 if all masked */
            nrows_total++;
          }
          free(x); free(o); free(keep); free(ref);
        }
      char name[120];
      snprintf(name, sizeof name, "%s%s == double reference loop (n=1..257, scale 0.1..1000)",
               op_name(op), masked ? " masked" : "");
      printf("  %s: %ld rows, max |diff| %.2e (worst ratio %.2f at n=%ld), max |sum-1| %.2e\n",
             name, nrows_total, worst_d, worst, worst_n, worst_sum);
      CHECK(name, worst <= 1 && !nonfinite && worst_sum < 2e-6,
            "worst |diff| %.2e (ratio %.2f at n=%ld), max |sum-1| %.2e, nonfinite %d", worst_d,
            worst, worst_n, worst_sum, nonfinite);
    }
  }
}

/* Every row length 1..48 (padded single block, whole blocks, an overlapped last block of every
 * width), masked and not, against the references; and top-k on rows the band guess misses. */
static void test_every_length(void) {
  for (int op = 0; op < NOPS; op++) {
    double worst = 0, worst_d = 0;
    long worst_n = 0;
    for (long n = 1; n <= 48; n++) {
      const long rows = 6, mrows = 2;
      float *x = falloc(rows * n), *o = falloc(rows * n), alpha[6];
      uint8_t *keep = malloc(mrows * n);
      double *ref = dalloc(n);
      fill_randn(x, rows * n, n % 3 == 0 ? 0.3 : 2.0);
      for (long i = 0; i < mrows * n; i++) keep[i] = rng_unif() > 0.2;
      for (long r = 0; r < rows; r++) alpha[r] = (float)op_alpha_list[(r + n) % 6];
      for (int masked = 0; masked < 2; masked++) {
        op_fwd(op, o, x, masked ? keep : NULL, mrows, rows, n, alpha, 0.3);
        for (long r = 0; r < rows; r++) {
          ref_row(op, ref, x + r * n, masked ? keep + (r / (rows / mrows)) * n : NULL, n, alpha[r], 0.3);
          double md, q = cmp_ref(o + r * n, ref, n, 2e-6, 2e-5, &md);
          if (q > worst) { worst = q; worst_d = md; worst_n = n; }
        }
      }
      free(x); free(o); free(keep); free(ref);
    }
    char name[120];
    snprintf(name, sizeof name, "%s: every row length 1..48, masked and not, == reference", op_name(op));
    CHECK(name, worst <= 1, "worst |diff| %.2e (ratio %.2f) at n=%ld", worst_d, worst, worst_n);
  }
  /* top-k: skewed (lognormal), bimodal and one-outlier rows: the normal-quantile band misses */
  const long rows = 90, n = 65;
  float *x = falloc(rows * n), *o = falloc(rows * n);
  double *ref = dalloc(n);
  for (long r = 0; r < rows; r++)
    for (long j = 0; j < n; j++) {
      double z = rng_normal();
      x[r * n + j] = (float)(r % 3 == 0 ? exp(2.0 * z) : r % 3 == 1 ? (j % 5 ? z : 8.0 + z)
                                                                       : (j == r % n ? 1e6 : z));
    }
  double worst = 0, worst_d = 0;
  const double ratios[] = {0.05, 0.125, 0.25, 0.5, 0.9};
  for (int q = 0; q < 5; q++) {
    al_topk_softmax_fwd(o, x, ratios[q], NULL, 1, rows, n);
    for (long r = 0; r < rows; r++) {
      ref_row(TOPK, ref, x + r * n, NULL, n, 0, ratios[q]);
      double md, qq = cmp_ref(o + r * n, ref, n, 1e-6, 1e-5, &md);
      if (qq > worst) { worst = qq; worst_d = md; }
    }
  }
  CHECK("topk_softmax on skewed, bimodal and outlier rows (band misses) == reference", worst <= 1,
        "worst |diff| %.2e (ratio %.2f)", worst_d, worst);
  free(x); free(o); free(ref);
}

/* n = 4096, +-1e4 inputs and rows with -inf entries: finite, sums to 1, equals the reference. */
static void test_long_and_extreme(void) {
  const long n = 4096, rows = 4;
  float *x = falloc(rows * n), *o = falloc(rows * n), alpha[4] = {1.5f, 1.2f, 1.8f, 2.0f};
  double *ref = dalloc(n);
  for (int kind = 0; kind < 3; kind++) {
    fill_randn(x, rows * n, kind == 1 ? 1e4 : 2.0);
    if (kind == 1) for (long i = 0; i < rows * n; i += 7) x[i] = (i & 8) ? 1e4f : -1e4f;
    if (kind == 2)
      for (long r = 0; r < rows; r++)
        for (long j = 0; j < n; j += 3) x[r * n + j] = -INFINITY;
    for (int op = 0; op < NOPS; op++) {
      al_status st = op_fwd(op, o, x, NULL, 1, rows, n, alpha, 0.25);
      double worst = 0, worst_d = 0, worst_sum = 0;
      int bad = 0;
      for (long r = 0; r < rows; r++) {
        ref_row(op, ref, x + r * n, NULL, n, alpha[r], 0.25);
        double md, s = 0;
        double q = cmp_ref(o + r * n, ref, n, 2e-6, 2e-5, &md);
        if (q > worst) { worst = q; worst_d = md; }
        for (long j = 0; j < n; j++) { s += o[r * n + j]; bad |= !isfinite(o[r * n + j]) || o[r * n + j] < 0; }
        if (kind == 2) for (long j = 0; j < n; j += 3) bad |= o[r * n + j] != 0.0f;
        if (fabs(s - 1) > worst_sum) worst_sum = fabs(s - 1);
      }
      char name[120];
      snprintf(name, sizeof name, "%s n=4096 %s: finite, sums to 1, == reference", op_name(op),
               kind == 0 ? "randn*2" : kind == 1 ? "+-1e4" : "with -inf entries");
      CHECK(name, st == AL_OK && !bad && worst <= 1 && worst_sum < 4e-6,
            "max |diff| %.2e (ratio %.2f), max |sum-1| %.2e, bad %d", worst_d, worst, worst_sum, bad);
    }
  }
  free(x); free(o); free(ref);
}

/* ---------------------------------------------------------------- 4. JSON reference vectors */
static float *json_floats(cJSON *arr, long *len) {
  long n = cJSON_GetArraySize(arr);
  float *v = falloc(n);
  long i = 0;
  cJSON *e;
  cJSON_ArrayForEach(e, arr) v[i++] = (float)e->valuedouble;
  if (len) *len = n;
  return v;
}
static double *json_doubles(cJSON *arr) {
  double *v = dalloc(cJSON_GetArraySize(arr));
  long i = 0;
  cJSON *e;
  cJSON_ArrayForEach(e, arr) v[i++] = e->valuedouble;
  return v;
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long sz = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc(sz + 1);
  if (fread(buf, 1, sz, f) != (size_t)sz) { free(buf); fclose(f); return NULL; }
  buf[sz] = 0;
  fclose(f);
  return buf;
}

static void test_json_refs(void) {
  const char *paths[] = {"tests/ref/normalizers.json", "../tests/ref/normalizers.json",
                         "../../tests/ref/normalizers.json", "../../../tests/ref/normalizers.json"};
  char *text = NULL;
  const char *env = getenv("ATTNLAB_REF_DIR");
  char envpath[1024];
  if (env) {
    snprintf(envpath, sizeof envpath, "%s/normalizers.json", env);
    text = read_file(envpath);
  }
  for (size_t i = 0; !text && i < sizeof paths / sizeof *paths; i++) text = read_file(paths[i]);
  if (!text) {
    CHECK("reference vectors: tests/ref/normalizers.json readable", 0,
          "not found from the current directory (run from the repo root or set ATTNLAB_REF_DIR)");
    return;
  }
  cJSON *doc = cJSON_Parse(text);
  cJSON *cases = doc ? cJSON_GetObjectItem(doc, "cases") : NULL;
  CHECK("reference vectors: normalizers.json parses", cases && cJSON_GetArraySize(cases) > 0,
        "bad JSON");
  if (!cases) { cJSON_Delete(doc); free(text); return; }
  cJSON *c;
  cJSON_ArrayForEach(c, cases) {
    const char *name = cJSON_GetObjectItem(c, "name")->valuestring;
    const char *ops = cJSON_GetObjectItem(c, "op")->valuestring;
    int op = -1;
    for (int k = 0; k < NOPS; k++) if (!strcmp(ops, op_name(k))) op = k;
    long rows = (long)cJSON_GetObjectItem(c, "rows")->valuedouble;
    long n = (long)cJSON_GetObjectItem(c, "n")->valuedouble, len;
    float *x = json_floats(cJSON_GetObjectItem(c, "x"), &len);
    float *g = json_floats(cJSON_GetObjectItem(c, "gout"), NULL);
    double *want = json_doubles(cJSON_GetObjectItem(c, "out"));
    double *wgin = json_doubles(cJSON_GetObjectItem(c, "gin"));
    cJSON *jk = cJSON_GetObjectItem(c, "keep"), *ja = cJSON_GetObjectItem(c, "alpha");
    cJSON *jr = cJSON_GetObjectItem(c, "ratio"), *jga = cJSON_GetObjectItem(c, "galpha");
    uint8_t *keep = NULL;
    if (jk) {
      keep = malloc(rows * n);
      long i = 0;
      cJSON *e;
      cJSON_ArrayForEach(e, jk) keep[i++] = (uint8_t)e->valueint;
      for (i = 0; i < rows * n; i++) if (!keep[i]) x[i] = NAN;   /* must never be read */
    }
    float *alpha = ja ? json_floats(ja, NULL) : NULL;
    double ratio = jr ? jr->valuedouble : 0;
    float *o = falloc(rows * n), *gi = falloc(rows * n), *ga = falloc(rows);
    al_status st = op_fwd(op, o, x, keep, rows, rows, n, alpha, ratio);
    if (st == AL_OK) st = op_bwd(op, gi, ga, g, o, rows, n, alpha);
    double md_o, md_g, md_a = 0;
    int bis = op == BISECT;
    double qo = cmp_ref(o, want, rows * n, bis ? 1e-6 : 5e-7, 1e-5, &md_o);
    double qg = cmp_ref(gi, wgin, rows * n, bis ? 1e-5 : 2e-6, bis ? 1e-4 : 2e-5, &md_g);
    double qa = 0;
    if (jga) {
      double *wga = json_doubles(jga);
      qa = cmp_ref(ga, wga, rows, 1e-4, 1e-3, &md_a);
      printf("  %-22s galpha %.6f %.6f (want %.6f %.6f)\n", name, ga[0], ga[1], wga[0], wga[1]);
      free(wga);
    }
    printf("  %-22s out %.7f %.7f %.7f (want %.7f %.7f %.7f) max diff out %.1e gin %.1e galpha %.1e\n",
           name, o[0], o[1], o[2], want[0], want[1], want[2], md_o, md_g, md_a);
    char cname[120];
    snprintf(cname, sizeof cname, "reference vectors: %s (fwd, bwd%s)", name, jga ? ", dalpha" : "");
    CHECK(cname, op >= 0 && len == rows * n && st == AL_OK && qo <= 1 && qg <= 1 && qa <= 1,
          "status %d, max diff out %.2e gin %.2e galpha %.2e", st, md_o, md_g, md_a);
    free(x); free(g); free(want); free(wgin); free(keep); free(alpha); free(o); free(gi); free(ga);
  }
  cJSON_Delete(doc);
  free(text);
}

/* ---------------------------------------------------------------- 5. finite differences */
/* L(x, alpha) = sum_j w_j out_j in double. */
static double loss(int op, const float *x, const uint8_t *keep, long rows, long n,
                   const float *alpha, double ratio, const double *w, float *scratch,
                   uint8_t *support) {
  op_fwd(op, scratch, x, keep, keep ? rows : 1, rows, n, alpha, ratio);
  double L = 0;
  for (long i = 0; i < rows * n; i++) {
    L += w[i] * scratch[i];
    if (support) support[i] = scratch[i] > 0;
  }
  return L;
}

/* Returns the worst ratio |fd - an| / (atol + rtol |an|) over checked coordinates; counts. */
static double gradcheck(int op, long rows, long n, double scale, int masked, double ratio,
                        double eps, double atol, double rtol, double perturb, long *checked,
                        long *skipped, double *worst_abs, double *alpha_ratio) {
  float *x = falloc(rows * n), *o = falloc(rows * n), *gi = falloc(rows * n), *ga = falloc(rows);
  float *tmp = falloc(rows * n), alpha[16];
  double *w = dalloc(rows * n);
  float *g = falloc(rows * n);
  uint8_t *keep = masked ? malloc(rows * n) : NULL, *s1 = malloc(rows * n), *s2 = malloc(rows * n);
  fill_randn(x, rows * n, scale);
  for (long i = 0; i < rows * n; i++) { w[i] = rng_normal(); g[i] = (float)w[i]; }
  if (keep) {
    for (long i = 0; i < rows * n; i++) keep[i] = rng_unif() > 0.3;
    for (long r = 0; r < rows; r++) keep[r * n] = 1;
  }
  for (long r = 0; r < rows; r++) alpha[r] = (float)(1.1 + 1.5 * rng_unif());   /* incl. > 2 */
  op_fwd(op, o, x, keep, keep ? rows : 1, rows, n, alpha, ratio);
  op_bwd(op, gi, ga, g, o, rows, n, alpha);
  double worst = 0, wabs = 0;
  *checked = *skipped = 0;
  for (long i = 0; i < rows * n; i++) {
    if (keep && !keep[i]) continue;
    float x0 = x[i];
    x[i] = x0 + (float)eps;
    float xp = x[i];
    double Lp = loss(op, x, keep, rows, n, alpha, ratio, w, tmp, s1);
    x[i] = x0 - (float)eps;
    float xm = x[i];
    double Lm = loss(op, x, keep, rows, n, alpha, ratio, w, tmp, s2);
    x[i] = x0;
    if (memcmp(s1, s2, rows * n)) { (*skipped)++; continue; }   /* support changes */
    double fd = (Lp - Lm) / ((double)xp - (double)xm);
    double an = gi[i] * perturb;
    double d = fabs(fd - an), q = d / (atol + rtol * fabs(an));
    if (q > worst) worst = q;
    if (d > wabs) wabs = d;
    (*checked)++;
  }
  double aw = 0;
  if (op == BISECT) {
    for (long r = 0; r < rows; r++) {
      float a0 = alpha[r];
      alpha[r] = a0 + (float)eps;
      float ap = alpha[r];
      double Lp = loss(op, x, keep, rows, n, alpha, ratio, w, tmp, s1);
      alpha[r] = a0 - (float)eps;
      float am = alpha[r];
      double Lm = loss(op, x, keep, rows, n, alpha, ratio, w, tmp, s2);
      alpha[r] = a0;
      if (memcmp(s1, s2, rows * n)) continue;
      double fd = (Lp - Lm) / ((double)ap - (double)am);
      double an = ga[r] * perturb;
      double q = fabs(fd - an) / (atol + rtol * fabs(an));
      if (q > aw) aw = q;
    }
  }
  *alpha_ratio = aw;
  *worst_abs = wabs;
  free(x); free(o); free(gi); free(ga); free(tmp); free(w); free(g); free(keep); free(s1); free(s2);
  return worst;
}

static void test_gradients(void) {
  for (int op = 0; op < NOPS; op++) {
    for (int masked = 0; masked < 2; masked++) {
      long checked, skipped;
      double wabs, aw;
      double ratio = 0.4, eps = 1e-3, atol = 5e-4, rtol = 5e-3;
      double q = gradcheck(op, 4, 11, 1.5, masked, ratio, eps, atol, rtol, 1.0, &checked, &skipped,
                           &wabs, &aw);
      char name[120];
      snprintf(name, sizeof name, "gradcheck: %s%s d/dx%s vs central differences (eps 1e-3)",
               op_name(op), masked ? " masked" : "", op == BISECT ? " and d/dalpha" : "");
      printf("  %s: %ld coords checked, %ld skipped (support change), max |fd-an| %.2e, dalpha ratio %.2f\n",
             name, checked, skipped, wabs, aw);
      CHECK(name, q <= 1 && aw <= 1 && checked >= 20,
            "worst ratio %.2f (max |fd-an| %.2e, atol %.0e rtol %.0e), alpha ratio %.2f, %ld checked",
            q, wabs, atol, rtol, aw, checked);
      if (!masked) {
        /* The same check must reject a gradient that is 2% off. */
        double q2 = gradcheck(op, 4, 11, 1.5, 0, ratio, eps, atol, rtol, 1.02, &checked, &skipped,
                              &wabs, &aw);
        snprintf(name, sizeof name, "gradcheck: %s rejects a gradient scaled by 1.02", op_name(op));
        CHECK(name, q2 > 1 && (op != BISECT || aw > 1), "worst ratio %.2f alpha ratio %.2f", q2, aw);
      }
    }
  }
}

/* ---------------------------------------------------------------- 6. identities */
static void test_identities(void) {
  const long rows = 40, n = 65;
  float *x = falloc(rows * n), *a = falloc(rows * n), *b = falloc(rows * n), alpha[40];
  fill_randn(x, rows * n, 1.5);
  double ma;
  /* bisect(alpha = 1.5) == entmax15, bisect(2) == sparsemax */
  for (long r = 0; r < rows; r++) alpha[r] = 1.5f;
  al_entmax_bisect_fwd(a, x, alpha, NULL, 1, rows, n, 100, NULL);
  al_entmax15_fwd(b, x, NULL, 1, rows, n);
  ma = check_close_ratio(a, b, rows * n, 1e-6, 0, NULL) * 1e-6;
  CHECK("identity: entmax_bisect(alpha=1.5) == entmax15", ma <= 1e-6, "max diff %.2e", ma);
  printf("  entmax_bisect(1.5) vs entmax15: max diff %.2e\n", ma);
  for (long r = 0; r < rows; r++) alpha[r] = 2.0f;
  al_entmax_bisect_fwd(a, x, alpha, NULL, 1, rows, n, 100, NULL);
  al_sparsemax_fwd(b, x, NULL, 1, rows, n);
  ma = check_close_ratio(a, b, rows * n, 1e-6, 0, NULL) * 1e-6;
  CHECK("identity: entmax_bisect(alpha=2) == sparsemax", ma <= 1e-6, "max diff %.2e", ma);
  printf("  entmax_bisect(2) vs sparsemax: max diff %.2e\n", ma);
  /* alpha -> 1 approaches softmax: the gap shrinks roughly linearly in alpha - 1 */
  al_softmax_fwd(b, x, NULL, 1, rows, n);
  double gap[3];
  const float al1[3] = {1.1f, 1.01f, 1.001f};
  for (int k = 0; k < 3; k++) {
    for (long r = 0; r < rows; r++) alpha[r] = al1[k];
    al_entmax_bisect_fwd(a, x, alpha, NULL, 1, rows, n, 100, NULL);
    gap[k] = check_close_ratio(a, b, rows * n, 1, 0, NULL);
  }
  printf("  max |entmax_bisect(alpha) - softmax| at alpha = 1.1, 1.01, 1.001: %.2e %.2e %.2e\n",
         gap[0], gap[1], gap[2]);
  CHECK("identity: entmax_bisect(alpha=1.001) ~ softmax (gap < 2e-3, shrinking with alpha-1)",
        gap[2] < 2e-3 && gap[1] < gap[0] * 0.3 && gap[2] < gap[1] * 0.3, "gaps %.2e %.2e %.2e",
        gap[0], gap[1], gap[2]);
  /* top-k with ratio 1 is softmax */
  al_topk_softmax_fwd(a, x, 1.0, NULL, 1, rows, n);
  ma = check_close_ratio(a, b, rows * n, 1e-7, 0, NULL) * 1e-7;
  CHECK("identity: topk_softmax(ratio=1) == softmax", ma <= 1e-7, "max diff %.2e", ma);
  /* shift invariance: f(x + c) == f(x) */
  float *xs = falloc(rows * n);
  for (long i = 0; i < rows * n; i++) xs[i] = x[i] + 3.25f;
  for (long r = 0; r < rows; r++) alpha[r] = (float)op_alpha_list[r % 6];
  for (int op = 0; op < NOPS; op++) {
    op_fwd(op, a, x, NULL, 1, rows, n, alpha, 0.25);
    op_fwd(op, b, xs, NULL, 1, rows, n, alpha, 0.25);
    ma = check_close_ratio(a, b, rows * n, 2e-6, 0, NULL) * 2e-6;
    char name[100];
    snprintf(name, sizeof name, "identity: %s(x + 3.25) == %s(x)", op_name(op), op_name(op));
    CHECK(name, ma <= 2e-6, "max diff %.2e", ma);
  }
  /* all-equal rows: uniform for all but top-k; top-k gives the first k 1/k each */
  for (long i = 0; i < n; i++) xs[i] = 0.75f;
  for (int op = 0; op < NOPS; op++) {
    op_fwd(op, a, xs, NULL, 1, 1, n, alpha, 0.25);
    long k = op == TOPK ? al_topk_count(0.25, n) : n;
    double md = 0;
    for (long j = 0; j < n; j++) md = fmax(md, fabs(a[j] - (j < k ? 1.0 / k : 0.0)));
    char name[100];
    snprintf(name, sizeof name, "ties: %s of an all-equal row (n=65)%s", op_name(op),
             op == TOPK ? ": first k=17 get 1/17" : " is uniform");
    CHECK(name, md < 1e-7, "max diff %.2e, out[0]=%.8f out[64]=%.8f", md, a[0], a[n - 1]);
  }
  free(x); free(a); free(b); free(xs);
}

/* masked rows == truncated rows; keep == 0 == -inf (bitwise); all masked -> 0; NaN */
static void test_masks(void) {
  const long rows = 12, mrows = 4, n = 37;
  float *x = falloc(rows * n), *xi = falloc(rows * n), *o = falloc(rows * n), *o2 = falloc(rows * n);
  float *t = falloc(n), *to = falloc(n), alpha[12];
  uint8_t *keep = malloc(mrows * n);
  fill_randn(x, rows * n, 2.0);
  for (long i = 0; i < mrows * n; i++) keep[i] = rng_unif() > 0.4;
  memset(keep + 3 * n, 0, n);                        /* keep row 3 -> rows 9..11 all masked */
  for (long r = 0; r < rows; r++) alpha[r] = (float)op_alpha_list[r % 6];
  for (long i = 0; i < rows * n; i++) {
    const uint8_t *kr = keep + ((i / n) / (rows / mrows)) * n;
    xi[i] = kr[i % n] ? x[i] : -INFINITY;
    if (!kr[i % n]) x[i] = (i & 1) ? NAN : 1e30f;   /* garbage where masked */
  }
  for (int op = 0; op < NOPS; op++) {
    op_fwd(op, o, x, keep, mrows, rows, n, alpha, 0.3);
    double md = 0;
    int zeros = 1;
    for (long r = 0; r < rows; r++) {
      const uint8_t *kr = keep + (r / (rows / mrows)) * n;
      long m = 0;
      for (long j = 0; j < n; j++) if (kr[j]) t[m++] = x[r * n + j];
      if (m) op_fwd(op, to, t, NULL, 1, 1, m, alpha + r, 0.3);
      m = 0;
      for (long j = 0; j < n; j++) {
        float want = kr[j] ? to[m++] : 0.0f;
        if (!kr[j] && o[r * n + j] != 0.0f) zeros = 0;
        md = fmax(md, fabs(o[r * n + j] - want));
        if (isnan(o[r * n + j])) md = INFINITY;
      }
    }
    char name[120];
    snprintf(name, sizeof name, "mask: %s masked (garbage/NaN underneath) == truncated rows", op_name(op));
    CHECK(name, md <= 1e-6 && zeros, "max diff %.2e, exact zeros %d", md, zeros);
    int allz = 1;
    for (long i = 9 * n; i < rows * n; i++) allz &= o[i] == 0.0f;
    snprintf(name, sizeof name, "mask: %s all-masked rows give exact zeros", op_name(op));
    CHECK(name, allz, "nonzero or NaN in an all-masked row");
    op_fwd(op, o2, xi, NULL, 1, rows, n, alpha, 0.3);
    snprintf(name, sizeof name, "mask: %s with -inf entries == with keep=0 (bitwise)", op_name(op));
    CHECK(name, !memcmp(o, o2, rows * n * sizeof(float)), "outputs differ");
    /* a kept NaN poisons its row (only) */
    float y[6] = {1, 2, NAN, 0, 1, 2};
    float yo[6];
    op_fwd(op, yo, y, NULL, 1, 2, 3, alpha, 0.5);
    snprintf(name, sizeof name, "NaN: %s kept NaN -> NaN row, other rows fine", op_name(op));
    CHECK(name, isnan(yo[0]) && isnan(yo[2]) && isfinite(yo[3]) && fabs(yo[3] + yo[4] + yo[5] - 1) < 1e-6,
          "row0 %g %g %g row1 %g %g %g", yo[0], yo[1], yo[2], yo[3], yo[4], yo[5]);
  }
  free(x); free(xi); free(o); free(o2); free(t); free(to); free(keep);
}

static void test_topk_ties(void) {
  float o[8];
  /* {1,2,2,2,0}, k = 2: indices 1 and 2 win (lower index), exactly 1/2 each */
  al_topk_softmax_fwd(o, (float[]){1, 2, 2, 2, 0}, 0.4, NULL, 1, 1, 5);
  CHECK("ties: topk {1,2,2,2,0} k=2 -> {0,.5,.5,0,0}",
        o[0] == 0 && o[1] == 0.5f && o[2] == 0.5f && o[3] == 0 && o[4] == 0,
        "got {%g,%g,%g,%g,%g}", o[0], o[1], o[2], o[3], o[4]);
  /* {5,3,3,3,3,1}, k = 3: 5 and the first two 3s */
  al_topk_softmax_fwd(o, (float[]){5, 3, 3, 3, 3, 1}, 0.5, NULL, 1, 1, 6);
  double e = exp(-2.0), s = 1 + 2 * e;
  CHECK("ties: topk {5,3,3,3,3,1} k=3 -> {1,e^-2,e^-2,0,0,0}/(1+2e^-2)",
        fabs(o[0] - 1 / s) < 1e-7 && fabs(o[1] - e / s) < 1e-7 && fabs(o[2] - e / s) < 1e-7 &&
        o[3] == 0 && o[4] == 0 && o[5] == 0,
        "got {%g,%g,%g,%g,%g,%g}", o[0], o[1], o[2], o[3], o[4], o[5]);
  /* ties above the boundary, tie at the max: {4,4,4,0}, k = 2 -> {.5,.5,0,0} */
  al_topk_softmax_fwd(o, (float[]){4, 4, 4, 0}, 0.5, NULL, 1, 1, 4);
  CHECK("ties: topk {4,4,4,0} k=2 -> {.5,.5,0,0}", o[0] == 0.5f && o[1] == 0.5f && o[2] == 0 && o[3] == 0,
        "got {%g,%g,%g,%g}", o[0], o[1], o[2], o[3]);
  /* random rows with many repeated values: exactly k nonzeros and the reference's choice */
  const long rows = 200, n = 40;
  float *x = falloc(rows * n), *y = falloc(rows * n);
  double *ref = dalloc(n);
  for (long i = 0; i < rows * n; i++) x[i] = (float)floor(rng_unif() * 6);
  int ok = 1;
  double ratios[] = {0.1, 0.25, 0.5, 0.75};
  for (int q = 0; q < 4; q++) {
    al_topk_softmax_fwd(y, x, ratios[q], NULL, 1, rows, n);
    for (long r = 0; r < rows; r++) {
      ref_row(TOPK, ref, x + r * n, NULL, n, 0, ratios[q]);
      long nz = 0;
      for (long j = 0; j < n; j++) {
        nz += y[r * n + j] > 0;
        if ((y[r * n + j] > 0) != (ref[j] > 0) || fabs(y[r * n + j] - ref[j]) > 1e-6) ok = 0;
      }
      if (nz != al_topk_count(ratios[q], n)) ok = 0;
    }
  }
  CHECK("ties: topk on rows of small integers (many ties): exactly k nonzeros, lower index wins", ok,
        "mismatch with the stable-sort reference");
  free(x); free(y); free(ref);
}

/* ---------------------------------------------------------------- 7. threads, bwd, errors */
static void test_threads(void) {
  const long rows = 700, n = 65;   /* rows*n >= AL_PAR_MIN_WORK: the parallel path */
  float *x = falloc(rows * n), *g = falloc(rows * n), *o1 = falloc(rows * n), *o2 = falloc(rows * n);
  float *g1 = falloc(rows * n), *g2 = falloc(rows * n), *a1 = falloc(rows), *a2 = falloc(rows);
  float *alpha = falloc(rows);
  uint8_t *keep = malloc(7 * n);
  fill_randn(x, rows * n, 2.0);
  fill_randn(g, rows * n, 1.0);
  for (long i = 0; i < 7 * n; i++) keep[i] = rng_unif() > 0.2;
  for (long r = 0; r < rows; r++) alpha[r] = (float)(1.05 + 0.9 * rng_unif());
  for (int op = 0; op < NOPS; op++) {
    al_set_num_threads(1);
    op_fwd(op, o1, x, keep, 7, rows, n, alpha, 0.25);
    memset(g1, 0, rows * n * 4); memset(a1, 0, rows * 4);
    op_bwd(op, g1, a1, g, o1, rows, n, alpha);
    al_set_num_threads(2);
    op_fwd(op, o2, x, keep, 7, rows, n, alpha, 0.25);
    memset(g2, 0, rows * n * 4); memset(a2, 0, rows * 4);
    op_bwd(op, g2, a2, g, o2, rows, n, alpha);
    al_set_num_threads(1);
    char name[100];
    snprintf(name, sizeof name, "threads: %s fwd+bwd identical with 1 and 2 threads (bitwise)", op_name(op));
    CHECK(name, !memcmp(o1, o2, rows * n * 4) && !memcmp(g1, g2, rows * n * 4) && !memcmp(a1, a2, rows * 4),
          "results differ");
  }
  /* backward accumulates: two calls give twice one call */
  for (int op = 0; op < NOPS; op++) {
    op_fwd(op, o1, x, NULL, 1, 50, n, alpha, 0.25);
    memset(g1, 0, 50 * n * 4); memset(a1, 0, 50 * 4);
    op_bwd(op, g1, a1, g, o1, 50, n, alpha);
    memcpy(g2, g1, 50 * n * 4); memcpy(a2, a1, 50 * 4);
    op_bwd(op, g2, a2, g, o1, 50, n, alpha);
    int ok = 1;
    for (long i = 0; i < 50 * n; i++) ok &= g2[i] == 2 * g1[i];
    for (long r = 0; r < 50; r++) ok &= a2[r] == 2 * a1[r];
    char name[100];
    snprintf(name, sizeof name, "backward: %s accumulates into gin (and galpha)", op_name(op));
    CHECK(name, ok, "second call did not add the same amount");
  }
  /* support counts */
  al_sparsemax_fwd(o1, x, NULL, 1, rows, n);
  int32_t *cnt = malloc(rows * sizeof(int32_t));
  al_support_count(cnt, o1, rows, n);
  int ok = 1;
  for (long r = 0; r < rows; r++) {
    int32_t c = 0;
    for (long j = 0; j < n; j++) c += o1[r * n + j] > 0;
    ok &= c == cnt[r] && c >= 1;
  }
  CHECK("al_support_count == count of out > 0", ok, "mismatch");
  free(cnt); free(x); free(g); free(o1); free(o2); free(g1); free(g2); free(a1); free(a2);
  free(alpha); free(keep);
}

static void test_bisect_iters(void) {
  const long rows = 512, n = 65;
  float *x = falloc(rows * n), *o = falloc(rows * n), *alpha = falloc(rows);
  fill_randn(x, rows * n, 1.0);
  for (long r = 0; r < rows; r++) alpha[r] = (float)(1.05 + 0.9 * rng_unif());
  int used = -1;
  al_status st = al_entmax_bisect_fwd(o, x, alpha, NULL, 1, rows, n, 100, &used);
  printf("  entmax_bisect: max passes used over 512 rows (alpha in [1.05,1.95]): %d\n", used);
  CHECK("entmax_bisect: converges in few passes (<= 10) for alpha in [1.05, 1.95]",
        st == AL_OK && used >= 2 && used <= 10, "used %d", used);
  st = al_entmax_bisect_fwd(o, x, alpha, NULL, 1, rows, n, 2, &used);
  double ws = 0;
  for (long r = 0; r < rows; r++) {
    double s = 0;
    for (long j = 0; j < n; j++) s += o[r * n + j];
    ws = fmax(ws, fabs(s - 1));
  }
  CHECK("entmax_bisect: max_iter=2 is honoured and rows still sum to 1", st == AL_OK && used <= 2 && ws < 1e-6,
        "used %d, max |sum-1| %.2e", used, ws);
  free(x); free(o); free(alpha);
}

static void test_errors(void) {
  float x[6] = {0}, o[6], alpha[2] = {1.5f, 1.0f};
  uint8_t keep[6] = {1, 1, 1, 1, 1, 1};
  al_status st = al_entmax_bisect_fwd(o, x, alpha, NULL, 1, 2, 3, 50, NULL);
  CHECK("errors: alpha = 1 -> AL_EINVAL naming alpha[1] = 1",
        st == AL_EINVAL && strstr(al_errmsg(), "alpha[1] = 1"), "status %d msg '%s'", st, al_errmsg());
  alpha[1] = NAN;
  st = al_entmax_bisect_fwd(o, x, alpha, NULL, 1, 2, 3, 50, NULL);
  CHECK("errors: alpha = NaN -> AL_EINVAL", st == AL_EINVAL && strstr(al_errmsg(), "alpha[1]"),
        "status %d msg '%s'", st, al_errmsg());
  alpha[1] = 1.2f;
  st = al_entmax_bisect_bwd(o, NULL, x, x, (float[]){0.5f, 2.0f}, 2, 3);
  CHECK("errors: bisect backward checks alpha too", st == AL_EINVAL && strstr(al_errmsg(), "alpha[0] = 0.5"),
        "status %d msg '%s'", st, al_errmsg());
  st = al_entmax_bisect_fwd(o, x, alpha, NULL, 1, 2, 3, 0, NULL);
  CHECK("errors: max_iter = 0 -> AL_EINVAL", st == AL_EINVAL, "status %d", st);
  double bad_r[] = {0.0, -0.5, 1.5, NAN};
  int ok = 1;
  for (int i = 0; i < 4; i++) ok &= al_topk_softmax_fwd(o, x, bad_r[i], NULL, 1, 2, 3) == AL_EINVAL;
  CHECK("errors: topk ratio 0, -0.5, 1.5, NaN -> AL_EINVAL naming the ratio",
        ok && strstr(al_errmsg(), "ratio"), "msg '%s'", al_errmsg());
  st = al_softmax_fwd(o, x, keep, 4, 6, 1);
  CHECK("errors: rows % mrows != 0 -> AL_EINVAL with shapes", st == AL_EINVAL && strstr(al_errmsg(), "(4, 1)"),
        "status %d msg '%s'", st, al_errmsg());
  st = al_sparsemax_fwd(o, x, NULL, 1, 2, -3);
  CHECK("errors: negative n -> AL_EINVAL", st == AL_EINVAL && strstr(al_errmsg(), "n=-3"), "status %d msg '%s'",
        st, al_errmsg());
  st = al_entmax15_fwd(NULL, x, NULL, 1, 2, 3);
  CHECK("errors: NULL output -> AL_EINVAL", st == AL_EINVAL, "status %d", st);
  CHECK("errors: empty input (rows=0 or n=0) is fine",
        al_softmax_fwd(o, x, NULL, 1, 0, 3) == AL_OK && al_entmax15_fwd(o, x, NULL, 1, 3, 0) == AL_OK &&
        al_topk_softmax_fwd(o, x, 0.5, NULL, 1, 0, 0) == AL_OK,
        "nonzero status");
}

/* ---------------------------------------------------------------- 8. backward write mode */
static al_status op_bwd_write(int op, float *gin, float *galpha, const float *gout,
                              const float *out, long rows, long n, const float *alpha) {
  al_norm_params p = {.alpha = alpha};
  return al_norm_get((al_norm_kind)op)->bwd_write(gin, galpha, gout, out, rows, n, &p);
}

/* The _write backward == the accumulating one run on zeros, bitwise (the sign of zero too), and
 * it never reads gin/galpha: they start as NaN. Rows: random, masked, all-masked (gradient 0),
 * NaN (forward NaN); every block geometry; 1 and 2 threads (rows*n above AL_PAR_MIN_WORK). */
static void test_write_mode(void) {
  const long lens[] = {1, 5, 15, 16, 17, 31, 33, 48, 65, 100, 257};
  int ok[NOPS] = {1, 1, 1, 1, 1};
  for (int t = 1; t <= 2; t++) {
    al_set_num_threads(t);
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
      const long n = lens[li], rows = t == 1 ? 40 : 1 + AL_PAR_MIN_WORK / n;
      float *x = falloc(rows * n), *g = falloc(rows * n), *o = falloc(rows * n);
      float *ga = falloc(rows * n), *gw = falloc(rows * n), *aa = falloc(rows), *aw = falloc(rows);
      float *alpha = falloc(rows);
      uint8_t *keep = malloc(rows * n);
      fill_randn(x, rows * n, 1.5);
      fill_randn(g, rows * n, 1.0);
      for (long i = 0; i < rows * n; i++) keep[i] = rng_unif() > 0.3;
      for (long r = 0; r < rows; r++) alpha[r] = (float)(1.05 + 0.9 * rng_unif());
      memset(keep + 3 * n, 0, n);               /* row 3: all masked */
      x[5 * n + (n - 1) / 2] = NAN;             /* row 5: NaN when kept */
      keep[5 * n + (n - 1) / 2] = 1;
      for (int op = 0; op < NOPS; op++) {
        op_fwd(op, o, x, keep, rows, rows, n, alpha, 0.3);
        memset(ga, 0, rows * n * 4); memset(aa, 0, rows * 4);
        for (long i = 0; i < rows * n; i++) gw[i] = NAN;
        for (long r = 0; r < rows; r++) aw[r] = NAN;
        al_status s1 = op_bwd(op, ga, aa, g, o, rows, n, alpha);
        al_status s2 = op_bwd_write(op, gw, aw, g, o, rows, n, alpha);
        ok[op] &= s1 == AL_OK && s2 == AL_OK && !memcmp(ga, gw, rows * n * 4);
        if (op == BISECT) {
          ok[op] &= !memcmp(aa, aw, rows * 4);
          /* gin only (for alpha < 1.25 its sums are then formed differently), and galpha only */
          memset(ga, 0, rows * n * 4);
          for (long i = 0; i < rows * n; i++) gw[i] = NAN;
          ok[op] &= al_entmax_bisect_bwd(ga, NULL, g, o, alpha, rows, n) == AL_OK &&
                    al_entmax_bisect_bwd_write(gw, NULL, g, o, alpha, rows, n) == AL_OK &&
                    !memcmp(ga, gw, rows * n * 4);
          for (long r = 0; r < rows; r++) aw[r] = NAN;
          ok[op] &= al_entmax_bisect_bwd_write(NULL, aw, g, o, alpha, rows, n) == AL_OK &&
                    !memcmp(aa, aw, rows * 4);
        }
      }
      free(x); free(g); free(o); free(ga); free(gw); free(aa); free(aw); free(alpha); free(keep);
    }
  }
  al_set_num_threads(1);
  for (int op = 0; op < NOPS; op++) {
    char name[120];
    snprintf(name, sizeof name,
             "backward: %s_bwd_write == accumulate into zeros (bitwise), never reads gin", op_name(op));
    CHECK(name, ok[op], "mismatch");
  }
}

/* NaN in, NaN gradient out: a row with a kept NaN or +inf has a NaN forward row, and its
 * backward gives NaN for every entry of gin (and galpha) under every normalizer, accumulating
 * or writing; the other rows (finite, all-masked) are unaffected, bitwise. Every block geometry
 * (n < 16 padded, rows in lanes, per-row paths). */
static void test_nan_grad(void) {
  const long lens[] = {3, 16, 17, 65, 300};
  int ok[NOPS] = {1, 1, 1, 1, 1};
  for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
    const long n = lens[li], rows = 20;
    float *x = falloc(rows * n), *xc = falloc(rows * n), *g = falloc(rows * n), *o = falloc(rows * n);
    float *oc = falloc(rows * n), *gi = falloc(rows * n), *gc = falloc(rows * n), *alpha = falloc(rows);
    float ga[20], gac[20];
    uint8_t *keep = malloc(rows * n);
    fill_randn(x, rows * n, 1.5);
    fill_randn(g, rows * n, 1.0);
    for (long i = 0; i < rows * n; i++) keep[i] = 1;
    memset(keep + 3 * n, 0, n);                             /* row 3: all masked */
    for (long r = 0; r < rows; r++) alpha[r] = (float)(1.05 + 0.9 * rng_unif());
    memcpy(xc, x, rows * n * 4);
    x[5 * n + n / 2] = NAN;                                 /* row 5: NaN */
    x[11 * n + n - 1] = INFINITY;                           /* row 11: +inf */
    for (int op = 0; op < NOPS; op++)
      for (int acc = 0; acc < 2; acc++) {
        op_fwd(op, o, x, keep, rows, rows, n, alpha, 0.3);
        op_fwd(op, oc, xc, keep, rows, rows, n, alpha, 0.3);
        for (long i = 0; i < rows * n; i++) gi[i] = gc[i] = acc ? 0.5f : NAN;
        for (long r = 0; r < rows; r++) ga[r] = gac[r] = acc ? 0.25f : NAN;
        if (acc) { op_bwd(op, gi, ga, g, o, rows, n, alpha); op_bwd(op, gc, gac, g, oc, rows, n, alpha); }
        else { op_bwd_write(op, gi, ga, g, o, rows, n, alpha); op_bwd_write(op, gc, gac, g, oc, rows, n, alpha); }
        for (long r = 0; r < rows; r++) {
          const int bad = r == 5 || r == 11;
          for (long j = 0; j < n; j++) {
            if (bad) ok[op] &= isnan(gi[r * n + j]);
            else ok[op] &= !memcmp(gi + r * n + j, gc + r * n + j, 4);
          }
          if (op == BISECT) ok[op] &= bad ? isnan(ga[r]) : !memcmp(ga + r, gac + r, 4);
        }
      }
    free(x); free(xc); free(g); free(o); free(oc); free(gi); free(gc); free(alpha); free(keep);
  }
  for (int op = 0; op < NOPS; op++) {
    char name[120];
    snprintf(name, sizeof name, "NaN: %s backward of a NaN/+inf row is NaN (other rows unchanged)", op_name(op));
    CHECK(name, ok[op], "a NaN row got a non-NaN gradient, or another row changed");
  }
}

/* entmax_bisect backward (which compacts the support before its log/exp) against the formula
 * evaluated in double on the same forward output, for every row length 1..80 (all block
 * geometries), masked and not, rows not a multiple of the kernel's row group, several alphas. */
static void test_bisect_bwd_lengths(void) {
  const float alphas[] = {1.05f, 1.2f, 1.5f, 1.8f, 2.0f, 2.6f};
  double worst_g = 0, worst_a = 0;
  int ok = 1;
  for (long n = 1; n <= 80; n++) {
    const long rows = 7;
    float *x = falloc(rows * n), *g = falloc(rows * n), *o = falloc(rows * n), *gi = falloc(rows * n);
    float *alpha = falloc(rows), *ga = falloc(rows);
    uint8_t *keep = malloc(rows * n);
    fill_randn(x, rows * n, 1.5);
    fill_randn(g, rows * n, 1.0);
    for (long i = 0; i < rows * n; i++) keep[i] = (n & 1) ? rng_unif() > 0.3 : 1;
    for (long r = 0; r < rows; r++) alpha[r] = alphas[(r + n) % 6];
    ok &= al_entmax_bisect_fwd(o, x, alpha, keep, rows, rows, n, 100, NULL) == AL_OK;
    for (long i = 0; i < rows * n; i++) gi[i] = 0.25f;   /* accumulate onto something */
    for (long r = 0; r < rows; r++) ga[r] = -0.5f;
    ok &= al_entmax_bisect_bwd(gi, ga, g, o, alpha, rows, n) == AL_OK;
    for (long r = 0; r < rows; r++) {
      const float *pr = o + r * n, *gr = g + r * n;
      const double a = alpha[r], am1 = a - 1.0;
      double sw = 0, sg = 0, H = 0, t = 0, gmax = 0;
      for (long j = 0; j < n; j++) {
        if (!(pr[j] > 0)) continue;
        const double pj = pr[j], w = pow(pj, 2.0 - a), S = pj * log(pj);
        sw += w; sg += w * gr[j]; H += S; t += gr[j] * (pj / am1 - S) / am1;
      }
      const double gw = sw > 0 ? sg / sw : 0;
      for (long j = 0; j < n; j++) {
        const double w = pr[j] > 0 ? pow(pr[j], 2.0 - a) : 0.0;
        gmax = fmax(gmax, fabs(w * (gr[j] - gw)));
      }
      for (long j = 0; j < n; j++) {
        const double w = pr[j] > 0 ? pow(pr[j], 2.0 - a) : 0.0;
        const double ref = 0.25 + w * (gr[j] - gw);
        const double d = fabs(gi[r * n + j] - ref) / (gmax + 1e-3);
        worst_g = fmax(worst_g, d);
        if (!(d < 2e-5)) ok = 0;
      }
      const double ra = sw > 0 ? t - gw * (1.0 / (am1 * am1) - H / am1) : 0.0;
      const double da = fabs((ga[r] + 0.5) - ra) / (fabs(ra) + 1e-2);
      worst_a = fmax(worst_a, da);
      if (!(da < 1e-3)) ok = 0;
    }
    free(x); free(g); free(o); free(gi); free(alpha); free(ga); free(keep);
  }
  printf("  entmax_bisect bwd vs double formula, n = 1..80: worst gin %.2e (of the row's max), worst dalpha %.2e (relative)\n",
         worst_g, worst_a);
  CHECK("entmax_bisect: backward == double formula on its output, every n 1..80, masks, alpha 1.05..2.6", ok,
        "worst gin %.2e, dalpha %.2e", worst_g, worst_a);
}

/* entmax15's first iterate is an upper bound on s* from the sums over u > -1, > -1/2, > -1/4
 * (u = (x - max)/2); it is tight on rows of j equal maxima (s* = 1/sqrt(j)), and a start even
 * slightly left of s* would settle on a support that misses entries. Rows built to sit on that
 * edge: j equal maxima (j = 1, 4, 16: s* = 1, 1/2, 1/4, which are the thresholds), plus entries
 * with u = -s* + d for tiny d of either sign (just in or just out of the support) or at the
 * thresholds exactly, optional 1e-7..1e-3 noise, long rows too; against the double reference. */
/* Under valgrind (tests/valgrind.sh sets ATTNLAB_VALGRIND) the edge-row tests below keep only
 * rows of n <= 100 (16, 17, 65): their double references (a pow per entry and bisection step)
 * take minutes there. The native and sanitizer builds run every length. */
static int valgrind_light(long n) { return n > 100 && getenv("ATTNLAB_VALGRIND") != NULL; }

/* One row on the edge of an entmax start bound, in units y = (alpha-1)(x - max): j equal maxima
 * (y = 0, s* = j^(1-alpha)); the rest at the support edge y = -s* + d (layout 0), or, in layout
 * 1, every third there and the others at the bound's thresholds y = -1/2, -1/4; x = 3 + y/(alpha-1)
 * plus `noise` * N(0,1); then shuffled, so that the maxima are spread over the blocks. */
static void edge_row(float *xr, long n, long j, double am1, double d, double noise, int layout) {
  const double c = 3.0, sstar = pow((double)j, -am1);
  for (long q = 0; q < n; q++) {
    double y;
    if (q < j) y = 0.0;                                   /* the maxima */
    else if (layout == 0 || q % 3 == 0) y = -sstar + d;   /* the edge */
    else y = q % 3 == 1 ? -0.5 : -0.25;                   /* the thresholds */
    xr[q] = (float)(c + y / am1 + noise * rng_normal());
  }
  for (long q = 0; q < n; q++) {
    const long p = (long)(rng_unif() * (double)n) % n;
    const float t = xr[q]; xr[q] = xr[p]; xr[p] = t;
  }
}

static void test_e15_start_edges(void) {
  static const long js[] = {1, 2, 4, 9, 16, 64};
  static const long ns[] = {16, 17, 65, 300, 4096};
  static const double ds[] = {0.0, 1e-7, -1e-7, 1e-5, -1e-5, 1e-3, -1e-3};
  static const double noise[] = {0.0, 1e-7, 1e-5, 1e-3};
  double worst = 0, worst_d = 0;
  long rows_total = 0, worst_n = 0;
  int nonfinite = 0;
  for (size_t in = 0; in < sizeof ns / sizeof *ns; in++)
    for (size_t ij = 0; ij < sizeof js / sizeof *js; ij++) {
      const long n = ns[in], j = js[ij];
      if (j >= n || valgrind_light(n)) continue;
      const long rows = (long)(sizeof ds / sizeof *ds) * (long)(sizeof noise / sizeof *noise) * 2;
      float *x = falloc(rows * n), *o = falloc(rows * n);
      double *ref = dalloc(n);
      long r = 0;
      for (size_t id = 0; id < sizeof ds / sizeof *ds; id++)
        for (size_t iz = 0; iz < sizeof noise / sizeof *noise; iz++)
          for (int layout = 0; layout < 2; layout++, r++)
            edge_row(x + r * n, n, j, 0.5, ds[id], noise[iz], layout);   /* u = y */
      if (al_entmax15_fwd(o, x, NULL, 1, rows, n) != AL_OK) { worst = INFINITY; break; }
      for (r = 0; r < rows; r++) {
        ref_row(ENTMAX15, ref, x + r * n, NULL, n, 1.5, 1.0);
        double md;
        const double q = cmp_ref(o + r * n, ref, n, 1e-6, 1e-5, &md);
        if (q > worst) { worst = q; worst_d = md; worst_n = n; }
        for (long k = 0; k < n; k++) nonfinite |= !isfinite(o[r * n + k]);
        rows_total++;
      }
      free(x); free(o); free(ref);
    }
  printf("  entmax15 start-bound edge rows: %ld rows, max |diff| %.2e (worst ratio %.2f at n=%ld)\n",
         rows_total, worst_d, worst, worst_n);
  if (valgrind_light(4096)) printf("  (under valgrind: rows of n = 300 and 4096 left out)\n");
  CHECK("entmax15 on rows where its start bound is tight (equal maxima, support edge) == reference",
        worst <= 1 && !nonfinite, "worst |diff| %.2e (ratio %.2f at n=%ld), nonfinite %d", worst_d,
        worst, worst_n, nonfinite);
}

/* alpha-entmax's start bound s0 (core/norm/entmax_bisect.c, bis_start) on the rows where it is tight:
 * j equal maxima and the rest out of the support give s* = j^(1-alpha) = s0 exactly; entries at
 * the support edge y = -s* + d (y = (alpha-1)(x - max)) test the cut of the candidates to
 * y > -s0; entries at the bound's thresholds y = -1/2, -1/4 test its sums. Against the double
 * bisection reference with test_vs_reference's tolerances. (The only check that fails if s0
 * loses its rounding margins: ratio 45 at n = 4096, alpha 2 without them; 470 with s0 1e-3 low.)
 * Not at n = 4096 with noise 1e-7: thousands of entries within float resolution of the support
 * edge, where the float y = (alpha-1)(x - max) and the float s in y + s (errors ~3e-8 each, a
 * few 1e-5 summed over ~4000 entries) exceed the tolerance -- a limit of the float passes that
 * predates the start bound (HEAD c89d92f gives the same numbers), not of the bound. */
static void test_bisect_start_edges(void) {
  static const double alphas[] = {1.05, 1.25, 1.5, 1.75, 1.95, 2.0};
  static const long js[] = {1, 2, 5, 16, 40};
  static const long ns[] = {16, 17, 65, 300, 4096};
  static const double ds[] = {0.0, 1e-7, -1e-7, 1e-5, -1e-5, 1e-3, -1e-3};
  static const double noise[] = {0.0, 1e-7, 1e-4};
  double worst = 0, worst_d = 0, worst_a = 0;
  long rows_total = 0, worst_n = 0;
  int nonfinite = 0;
  for (size_t ia = 0; ia < sizeof alphas / sizeof *alphas; ia++)
    for (size_t in = 0; in < sizeof ns / sizeof *ns; in++)
      for (size_t ij = 0; ij < sizeof js / sizeof *js; ij++) {
        const long n = ns[in], j = js[ij];
        const double am1 = alphas[ia] - 1.0;
        if (j >= n || valgrind_light(n)) continue;
        const long rows = (long)(sizeof ds / sizeof *ds) * (long)(sizeof noise / sizeof *noise) * 2;
        float *x = falloc(rows * n), *o = falloc(rows * n), *alpha = falloc(rows);
        uint8_t *skip = calloc((size_t)rows, 1);
        double *ref = dalloc(n);
        long r = 0;
        for (size_t id = 0; id < sizeof ds / sizeof *ds; id++)
          for (size_t iz = 0; iz < sizeof noise / sizeof *noise; iz++)
            for (int layout = 0; layout < 2; layout++, r++) {
              alpha[r] = (float)alphas[ia];
              skip[r] = n > 1000 && noise[iz] > 0.0 && noise[iz] < 1e-6;   /* see above */
              edge_row(x + r * n, n, j, am1, ds[id], noise[iz], layout);
            }
        if (al_entmax_bisect_fwd(o, x, alpha, NULL, 1, rows, n, 100, NULL) != AL_OK) {
          worst = INFINITY;
          break;
        }
        for (r = 0; r < rows; r++) {
          if (skip[r]) continue;
          ref_row(BISECT, ref, x + r * n, NULL, n, alpha[r], 1.0);
          double md;
          const double q = cmp_ref(o + r * n, ref, n, 2e-6, 2e-5, &md);
          if (q > worst) { worst = q; worst_d = md; worst_n = n; worst_a = alphas[ia]; }
          for (long k = 0; k < n; k++) nonfinite |= !isfinite(o[r * n + k]);
          rows_total++;
        }
        free(x); free(o); free(alpha); free(ref); free(skip);
      }
  printf("  entmax_bisect start-bound edge rows: %ld rows, max |diff| %.2e (worst ratio %.2f at n=%ld, alpha %.2f)\n",
         rows_total, worst_d, worst, worst_n, worst_a);
  if (valgrind_light(4096)) printf("  (under valgrind: rows of n = 300 and 4096 left out)\n");
  CHECK("entmax_bisect on rows where its start bound is tight (equal maxima, support edge) == reference",
        worst <= 1 && !nonfinite, "worst |diff| %.2e (ratio %.2f at n=%ld, alpha %.2f), nonfinite %d",
        worst_d, worst, worst_n, worst_a, nonfinite);
}

/* alpha-entmax and entmax15 run the rows of a batch in lockstep (their decisions and start
 * bounds as lanes of one vector; alpha-entmax's evaluations too for n <= 256, 16 rows a vector,
 * n < 16 rows padded and batched, and its blocks as one list of items above): each row's result
 * must not depend on its neighbours. Batches of 37 rows (not a multiple of the 8 or 16 lanes)
 * mixing alpha 1.05 ... 1.95 (Newton), 2 and 2.5, 3 (regula falsi), rows ~ N(0,1), N(0,1e4^2),
 * with -inf entries, fully masked and NaN rows, n = 1 ... 4096: the whole batch == each row
 * alone, bitwise (and alpha-entmax's passes reported are the max over the rows). */
static void test_bisect_lanes(void) {
  static const long ns[] = {1, 5, 16, 17, 65, 300, 4096};
  static const float alphas[] = {1.05f, 1.95f, 1.5f, 2.5f, 1.25f, 2.0f, 1.7f, 3.0f, 1.1f};
  int same = 1, iters_ok = 1, nonfinite = 0, same15 = 1, same_bwd = 1;
  long bad_n = 0, bad_r = 0, bad15_n = 0, bad15_r = 0, bad_bwd_n = 0, bad_bwd_r = 0;
  for (size_t in = 0; in < sizeof ns / sizeof *ns; in++) {
    const long n = ns[in], rows = 37;
    float *x = falloc(rows * n), *o = falloc(rows * n), *o1 = falloc(n), *alpha = falloc(rows);
    uint8_t *keep = malloc(rows * n);
    for (long r = 0; r < rows; r++) {
      alpha[r] = alphas[(r * 7 + in) % (sizeof alphas / sizeof *alphas)];
      const int kind = (int)(r % 6);
      for (long q = 0; q < n; q++) {
        x[r * n + q] = (float)(rng_normal() * (kind == 1 ? 1e4 : 1.0));
        keep[r * n + q] = kind == 3 ? 0 : rng_unif() > 0.2 || q == 0;
        if (kind == 2 && q % 3 == 1) x[r * n + q] = -INFINITY;
      }
      if (kind == 4 && r % 12 == 4) x[r * n + n / 2] = NAN;
    }
    for (int masked = 0; masked < 2; masked++) {
      const uint8_t *kp = masked ? keep : NULL;
      int it_all = 0, it_max = 0;
      if (al_entmax_bisect_fwd(o, x, alpha, kp, masked ? rows : 1, rows, n, 100, &it_all) != AL_OK) {
        same = 0;
        continue;
      }
      for (long r = 0; r < rows; r++) {
        int it1 = 0;
        al_entmax_bisect_fwd(o1, x + r * n, alpha + r, kp ? kp + r * n : NULL, 1, 1, n, 100, &it1);
        it_max = it1 > it_max ? it1 : it_max;
        const int nanrow = r % 6 == 4 && r % 12 == 4;
        if (memcmp(o1, o + r * n, (size_t)n * sizeof(float)) != 0) {
          if (same) { bad_n = n; bad_r = r; }
          same = 0;
        }
        for (long q = 0; q < n; q++) nonfinite |= !nanrow && !isfinite(o[r * n + q]);
      }
      iters_ok &= it_all == it_max;
      /* its backward the same way (rows in lanes up to n = 256: a row of alpha > 2 switches
       * the batch's exp to the unbounded one, which must agree on the other rows' lanes) */
      {
        float *g = falloc(rows * n), *gi = falloc(rows * n), *ga = falloc(rows), gi1[4096], ga1;
        for (long q = 0; q < rows * n; q++) g[q] = (float)rng_normal();
        al_entmax_bisect_bwd_write(gi, ga, g, o, alpha, rows, n);
        for (long r = 0; r < rows; r++) {
          al_entmax_bisect_bwd_write(gi1, &ga1, g + r * n, o + r * n, alpha + r, 1, n);
          if (memcmp(gi1, gi + r * n, (size_t)n * sizeof(float)) != 0 || memcmp(&ga1, ga + r, sizeof ga1) != 0) {
            if (same_bwd) { bad_bwd_n = n; bad_bwd_r = r; }
            same_bwd = 0;
          }
        }
        free(g); free(gi); free(ga);
      }
      /* entmax15 the same way */
      if (al_entmax15_fwd(o, x, kp, masked ? rows : 1, rows, n) != AL_OK) { same15 = 0; continue; }
      for (long r = 0; r < rows; r++) {
        al_entmax15_fwd(o1, x + r * n, kp ? kp + r * n : NULL, 1, 1, n);
        if (memcmp(o1, o + r * n, (size_t)n * sizeof(float)) != 0) {
          if (same15) { bad15_n = n; bad15_r = r; }
          same15 = 0;
        }
      }
    }
    free(x); free(o); free(o1); free(alpha); free(keep);
  }
  printf("  entmax_bisect batches of 37 mixed rows == rows alone: %s\n", same ? "bitwise" : "DIFFER");
  CHECK("entmax_bisect: a row's result does not depend on its batch (37 rows, mixed alpha 1.05..3, "
        "masks, +-1e4, -inf, NaN rows, n = 1..4096; bitwise)",
        same && iters_ok && !nonfinite, "first differing row %ld at n=%ld, passes ok %d, nonfinite %d",
        bad_r, bad_n, iters_ok, nonfinite);
  printf("  entmax_bisect backward, batches of 37 mixed rows == rows alone: %s\n", same_bwd ? "bitwise" : "DIFFER");
  CHECK("entmax_bisect backward: a row's gradients do not depend on its batch (the same rows; bitwise)",
        same_bwd, "first differing row %ld at n=%ld", bad_bwd_r, bad_bwd_n);
  printf("  entmax15 batches of 37 mixed rows == rows alone: %s\n", same15 ? "bitwise" : "DIFFER");
  CHECK("entmax15: a row's result does not depend on its batch (37 rows, masks, +-1e4, -inf, NaN "
        "rows, n = 1..4096; bitwise)", same15, "first differing row %ld at n=%ld", bad15_r, bad15_n);
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

/* Top-k ranks the band of up to 16 rows of a batch at once (rows in lanes) and other rows one
 * by one; a row's result must not depend on its batch. Batches of 53 mixed rows against each row
 * alone (which takes the one-by-one path), bitwise: normal rows (most; so the lanes path runs),
 * 1e4-scaled, keep-masked, -inf entries, small integers (ties at the boundary), skewed rows (the
 * band misses), constant rows, a NaN row. */
static void test_topk_batches(void) {
  static const long ns[] = {17, 33, 65, 100, 257};
  static const double ratios[] = {0.125, 0.25, 0.5, 0.9};
  int same = 1, same1 = 1;
  long bad_n = 0, bad_r = 0, cases = 0, bad1_n = 0, lane1_cases = 0;
  double bad_q = 0, bad1_q = 0;
  for (size_t in = 0; in < sizeof ns / sizeof *ns; in++) {
    const long n = ns[in], rows = 53;
    float *x = falloc(rows * n), *o = falloc(rows * n), *o1 = falloc(n), *og = falloc(rows * n);
    uint8_t *keep = malloc(rows * n);
    for (long r = 0; r < rows; r++) {
      const int kind = (int)(r % 13);
      for (long q = 0; q < n; q++) {
        double v = rng_normal();
        if (kind == 7) v *= 1e4;
        if (kind == 9) v = (double)(int)(rng_unif() * 5);
        if (kind == 10) v = -log(rng_unif() + 1e-12) * (q % 7 == 0 ? 30 : 1);
        if (kind == 11) v = 0.25;
        x[r * n + q] = (float)v;
        keep[r * n + q] = kind == 12 ? 0 : rng_unif() > 0.2 || q == 0;
        if (kind == 8 && q % 3 == 1) x[r * n + q] = -INFINITY;
      }
      if (r == 25) x[r * n + n / 2] = NAN;
      if (r == 38) x[r * n + n - 1] = NAN;
      if (r % 4 == 1) x[r * n + n - 1] = x[r * n + n - 2];   /* the last column tied */
      if (r % 9 == 2) x[r * n + n - 1] = -INFINITY;
    }
    for (size_t iq = 0; iq < sizeof ratios / sizeof *ratios; iq++)
      for (int masked = 0; masked < 2; masked++) {
        const uint8_t *kp = masked ? keep : NULL;
        if (al_topk_softmax_fwd(o, x, ratios[iq], kp, masked ? rows : 1, rows, n) != AL_OK) {
          same = 0;
          continue;
        }
        /* n % 16 == 1: the last column in lanes == the generic last block */
        al_topk_lane1_off_ = 1;
        al_topk_softmax_fwd(og, x, ratios[iq], kp, masked ? rows : 1, rows, n);
        al_topk_lane1_off_ = 0;
        if (n % 16 == 1) {
          lane1_cases++;
          if (memcmp(og, o, (size_t)(rows * n) * sizeof(float)) != 0) {
            if (same1) { bad1_n = n; bad1_q = ratios[iq]; }
            same1 = 0;
          }
        }
        for (long r = 0; r < rows; r++) {
          al_topk_softmax_fwd(o1, x + r * n, ratios[iq], kp ? kp + r * n : NULL, 1, 1, n);
          cases++;
          if (memcmp(o1, o + r * n, (size_t)n * sizeof(float)) != 0) {
            if (same) { bad_n = n; bad_r = r; bad_q = ratios[iq]; }
            same = 0;
          }
        }
      }
    free(x); free(o); free(o1); free(og); free(keep);
  }
  CHECK("topk_softmax: n % 16 == 1 rows with the last column in lanes == the generic last block "
        "(n = 17, 33, 65, 257; bitwise)", same1 && lane1_cases == 32,
        "first difference at n=%ld ratio %g (%ld cases)", bad1_n, bad1_q, lane1_cases);
  CHECK("topk_softmax: a row's result does not depend on its batch (53 mixed rows, n = 17..257, "
        "ratios .125-.9, masks, ties, band misses, -inf, NaN; bitwise)",
        same, "first differing row %ld at n=%ld ratio %g (of %ld)", bad_r, bad_n, bad_q, cases);
}

/* ---------------------------------------------------------------- backward vs reference */
/* Every backward (write mode) against its file's scalar reference backward in double, fed the
 * kernel's own forward output (so both see the same support), and alpha's gradient too. */
static void test_bwd_vs_reference(void) {
  static const long ns[] = {1, 5, 16, 17, 31, 65, 100};
  for (int op = 0; op < NOPS; op++) {
    const al_norm_desc *d = al_norm_get((al_norm_kind)op);
    double worst = 0, worst_d = 0, worst_a = 0;
    for (size_t in = 0; in < sizeof ns / sizeof *ns; in++) {
      const long n = ns[in], rows = 8;
      float *x = falloc(rows * n), *o = falloc(rows * n), *g = falloc(rows * n), *gi = falloc(rows * n);
      float alpha[8], ga[8];
      double *po = dalloc(n), *pg = dalloc(n), *ref = dalloc(n);
      fill_randn(x, rows * n, 1.0);
      fill_randn(g, rows * n, 1.0);
      for (long r = 0; r < rows; r++) alpha[r] = (float)(1.2 + 0.1 * (double)r);   /* 1.2 .. 1.9 */
      al_status st = op_fwd(op, o, x, NULL, 1, rows, n, alpha, 0.3);
      if (st == AL_OK) st = op_bwd_write(op, gi, ga, g, o, rows, n, alpha);
      if (st != AL_OK) { worst = INFINITY; }
      for (long r = 0; r < rows && st == AL_OK; r++) {
        double gar = 0, md;
        for (long j = 0; j < n; j++) { po[j] = o[r * n + j]; pg[j] = g[r * n + j]; }
        d->ref_bwd(ref, &gar, pg, po, n, d->param == AL_NORM_P_ALPHA ? alpha[r] : 0.3);
        const double q = cmp_ref(gi + r * n, ref, n, 1e-6, 1e-5, &md);
        if (q > worst) { worst = q; worst_d = md; }
        if (d->param == AL_NORM_P_ALPHA) {
          const double qa = fabs((double)ga[r] - gar) / (1e-5 + 1e-4 * fabs(gar));
          if (!(qa <= worst_a)) worst_a = qa;
        }
      }
      free(x); free(o); free(g); free(gi); free(po); free(pg); free(ref);
    }
    char name[120];
    snprintf(name, sizeof name, "%s backward == its scalar reference backward (n=1..100)%s", op_name(op),
             d->param == AL_NORM_P_ALPHA ? ", and d/dalpha" : "");
    printf("  %s: max |diff| %.2e (worst ratio %.2f), alpha ratio %.2f\n", name, worst_d, worst, worst_a);
    CHECK(name, worst <= 1 && worst_a <= 1, "worst |diff| %.2e (ratio %.2f), alpha ratio %.2f", worst_d,
          worst, worst_a);
  }
}


/* ------------------------------------------------- top-k on rows holding both -0 and +0 */
/* The counting search of top-k's forward used to key -0 and +0 apart while counting them as
 * equal, and never returned on such rows when the k-th value was 0 (found by behaviour_hash).
 * A regression would hang, so an alarm turns it into a FAIL line. */
static void topk_zeros_alarm(int sig) {
  (void)sig;
  static const char msg[] = "FAIL: topk: rows with -0 and +0 at the k-th value (the forward did not return within 20 s)\n";
  if (write(1, msg, sizeof msg - 1) < 0) _exit(1);
  _exit(1);
}
static void test_topk_signed_zeros(void) {
  signal(SIGALRM, topk_zeros_alarm);
  alarm(20);
  /* the row that hung: 65 scores on a 0.5 grid, a keep mask of 48, ratio 0.3 (k = 15) */
  static const float row[65] = {
      0.5f, -1, -0.5f, -0.0f, -1.5f, -1, -1, 0, 2.5f, 1, 2, 0.5f, 0, 0, -0.5f, 0.5f, -0.5f, 0,
      -0.5f, -0.5f, 0.5f, -0.5f, 1, 0, 1, 0, 0, -0.5f, -0.5f, -1, 0.5f, 0.5f, 1, -0.5f, -0.5f,
      0.5f, -0.5f, -0.5f, 0.5f, -0.5f, 1, 1, 0.5f, -0.5f, 0.5f, 0, -0.0f, -1.5f, -0.5f, -0.5f,
      -0.5f, 1.5f, 0.5f, -0.5f, 1, -0.5f, -0.5f, 1, 0, 0, -0.0f, -1.5f, 0, -1.5f, 0.5f};
  static const char keep_bits[] =
      "11111110100111101101010111111110100110111011111111111000111111100";
  uint8_t keep[65];
  for (int j = 0; j < 65; j++) keep[j] = keep_bits[j] == '1';
  float y[65];
  double ref[65];
  al_topk_softmax_fwd(y, row, 0.3, keep, 1, 1, 65);
  al_topk_softmax_ref_fwd(ref, row, keep, 65, 0.3);
  long nz = 0;
  double err = 0;
  for (int j = 0; j < 65; j++) {
    nz += y[j] > 0;
    err = fmax(err, fabs(y[j] - ref[j]));
  }
  CHECK("topk: the row with -0 and +0 at the k-th value returns, = reference, k = 15 nonzeros",
        nz == 15 && err < 1e-6, "nonzeros %ld, max |y - ref| %g", nz, err);
  /* many such rows: a 0.5 grid with zeros of either sign, masks, several ratios; each output
   * equals the reference, and flipping every zero's sign changes no bit of it */
  const long rows = 400, n = 65;
  float *x = falloc(rows * n), *xp = falloc(rows * n), *a = falloc(rows * n), *b = falloc(rows * n);
  uint8_t *km = malloc((size_t)(rows * n));
  double *r1 = dalloc(n);
  uint64_t st = 0x2545F4914F6CDD1Dull;
  for (long i = 0; i < rows * n; i++) {
    st ^= st << 13; st ^= st >> 7; st ^= st << 17;
    const int v = (int)(st % 9) - 4;                   /* -2 .. 2 in steps of 0.5 */
    x[i] = v == 0 ? ((st >> 20) & 1 ? -0.0f : 0.0f) : 0.5f * (float)v;
    xp[i] = x[i] == 0 ? 0.0f : x[i];
    km[i] = ((st >> 33) % 10) < 8;
  }
  const double ratios[] = {0.125, 0.25, 0.3, 0.5, 0.75};
  int ok_ref = 1, ok_same = 1;
  for (int q = 0; q < 5; q++) {
    for (int masked = 0; masked < 2; masked++) {
      for (long r = 0; r < rows; r++) {
        const uint8_t *kr = masked ? km + r * n : NULL;
        al_topk_softmax_fwd(a + r * n, x + r * n, ratios[q], kr, 1, 1, n);
        al_topk_softmax_fwd(b + r * n, xp + r * n, ratios[q], kr, 1, 1, n);
        al_topk_softmax_ref_fwd(r1, x + r * n, kr, n, ratios[q]);
        for (long j = 0; j < n; j++)
          if ((a[r * n + j] > 0) != (r1[j] > 0) || fabs(a[r * n + j] - r1[j]) > 1e-6) ok_ref = 0;
      }
      if (memcmp(a, b, sizeof(float) * (size_t)(rows * n)) != 0) ok_same = 0;
    }
  }
  alarm(0);
  CHECK("topk: 4,000 grid rows with signed zeros (5 ratios, masked and not) return and = reference",
        ok_ref, "mismatch with the reference");
  CHECK("topk: -0 and +0 select alike (bitwise the same output)", ok_same, "outputs differ");
  free(x); free(xp); free(a); free(b); free(km); free(r1);
}

int main(void) {
  al_set_num_threads(1);
  printf("seed: splitmix64 0x9E3779B97F4A7C15, 1 thread unless stated\n");
  test_math();
  test_vector_math();
  test_closed_forms();
  test_vs_reference();
  test_long_and_extreme();
  test_json_refs();
  test_gradients();
  test_identities();
  test_masks();
  test_topk_ties();
  test_threads();
  test_bisect_iters();
  test_errors();
  test_every_length();   /* after the checks above: it draws from their random stream */
  test_write_mode();
  test_nan_grad();
  test_bisect_bwd_lengths();
  test_e15_start_edges();
  test_bisect_start_edges();
  test_bisect_lanes();
  test_lanes16();
  test_hsumd_rows();
  test_topk_batches();
  test_bwd_vs_reference();   /* it draws from the random stream of the checks above */
  test_topk_signed_zeros();  /* its own generator */
  CHECK_EXIT();
}
