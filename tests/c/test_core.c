/* tests/c/test_core.c -- C-level tests of the core's services: the vectorized exp/erf of
 * core/simd/fastmath.h against libm (in ulps), the Philox known-answer vector and the
 * generator's streams and its refusals (negative counts, NULL), the augmentation draws' batch
 * size, error codes and messages, al_malloc (alignment, counting), run-time
 * CPU dispatch, and al_mem_live() returning to its start value (no leaks). The tensor and
 * its graph: test_tensor.c. Every check prints PASS/FAIL/SKIP (tests/c/check.h). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/augment.h"
#include "attnlab/autograd.h"
#include "attnlab/cpu.h"
#include "attnlab/normalizers.h"
#include "attnlab/ops.h"
#include "attnlab/rng.h"
#include "attnlab/threads.h"
#include "check.h"
#include "../../core/simd/fastmath.h"

static size_t mem_start;

/* ---------------------------------------------------------------- fastmath */
static double ulp_err(float got, double want) {
  if (isinf(want) || want > FLT_MAX) return isinf(got) && got > 0 ? 0 : INFINITY;
  double w = (float)want;   /* compare against the correctly rounded float */
  if (got == w) return 0;
  double u = w == 0 ? 0x1p-149 : fmax(nextafterf((float)fabs(w), INFINITY) - fabs(w), 0x1p-149);
  return fabs(got - want) / u;
}

static void test_fastmath(void) {
  double worst = 0, worst_x = 0;
  for (int i = 0; i <= 2000000; i++) {   /* [-87.3, 88.7], the normal range */
    float x = (float)(-87.3 + (88.7 + 87.3) * i / 2000000.0);
    double e = ulp_err(al_fexp(x), exp((double)x));
    if (e > worst) { worst = e; worst_x = x; }
  }
  CHECK("al_fexp within 2 ulp on [-87.3, 88.7] (2e6 points)", worst <= 2.0, "worst %.2f ulp at %.9g", worst, worst_x);
  printf("#   al_fexp: worst %.2f ulp at x = %.9g\n", worst, worst_x);
  double worst_sub = 0, xs = 0;
  for (int i = 0; i <= 200000; i++) {   /* the subnormal range: one rounding, so <= 1 subnormal ulp */
    float x = (float)(-103.9 + (103.9 - 87.4) * i / 200000.0);
    double want = exp((double)x), got = al_fexp(x);
    double err = fabs(got - want) / 0x1p-149;
    if (err > worst_sub) { worst_sub = err; xs = x; }
  }
  CHECK("al_fexp in the subnormal range [-103.9, -87.4]: within 1 subnormal ulp (not flushed to 0)",
        worst_sub <= 1.0, "worst %.3f at %.9g", worst_sub, xs);
  float big = al_fexp(88.7228f);
  CHECK("al_fexp just below ln(FLT_MAX) is finite and right", isfinite(big) && ulp_err(big, exp((double)88.7228f)) <= 2,
        "got %a want %a", big, exp((double)88.7228f));
  CHECK("al_fexp special values: exp(0)=1, exp(-inf)=0, exp(inf)=inf, exp(NaN)=NaN, exp(89)=inf, exp(-110)=0",
        al_fexp(0) == 1 && al_fexp(-INFINITY) == 0 && isinf(al_fexp(INFINITY)) && isnan(al_fexp(NAN)) &&
        isinf(al_fexp(89.0f)) && al_fexp(-110.0f) == 0, "");
  double werf = 0, werf_x = 0, wphi = 0, wphi_x = 0;
  for (int i = 0; i <= 400000; i++) {
    float x = (float)(-6 + 12.0 * i / 400000.0);
    double e = fabs((double)al_ferf(x) - erf((double)x));
    if (e > werf) { werf = e; werf_x = x; }
    /* Phi in relative terms (both tails), x in [-12, 12] */
    float xp = 2 * x;
    double want = 0.5 * erfc(-(double)xp / sqrt(2.0)), r = fabs(al_fphi(xp) - want) / want;
    if (r > wphi) { wphi = r; wphi_x = xp; }
  }
  CHECK("al_ferf absolute error < 1.5e-7 on [-6, 6]", werf < 1.5e-7, "worst %.3g at %.6g", werf, werf_x);
  printf("#   al_ferf: worst abs error %.3g at x = %.6g\n", werf, werf_x);
  CHECK("al_fphi (normal CDF) relative error < 5e-7 on [-12, 12] (no cancellation in the left tail)", wphi < 5e-7,
        "worst %.3g at %.6g", wphi, wphi_x);
  printf("#   al_fphi: worst relative error %.3g at x = %.6g\n", wphi, wphi_x);
  CHECK("al_ferf odd and saturating, NaN propagates; Phi(0) = 1/2, Phi(-inf) = 0, Phi(inf) = 1",
        al_ferf(-1.5f) == -al_ferf(1.5f) && al_ferf(10) == 1 && al_ferf(INFINITY) == 1 && al_ferf(-INFINITY) == -1 &&
        isnan(al_ferf(NAN)) && al_ferf(0) == 0 && al_fphi(0) == 0.5f && al_fphi(-INFINITY) == 0 && al_fphi(INFINITY) == 1 &&
        isnan(al_fphi(NAN)), "");
}

/* ---------------------------------------------------------------- rng */
static void test_rng(void) {
  uint32_t r[4];
  al_rng_philox(r, 0, 0);
  /* Random123 known-answer vector: philox4x32-10, counter 0, key 0 */
  CHECK("Philox4x32-10 known answer (counter 0, key 0)",
        r[0] == 0x6627e8d5u && r[1] == 0xe169c58du && r[2] == 0xbc57ac4cu && r[3] == 0x9b00dbd8u,
        "%08x %08x %08x %08x", r[0], r[1], r[2], r[3]);
  al_rng g1, g2;
  al_rng_seed(&g1, 77);
  al_rng_seed(&g2, 77);
  float a[10], b[10];
  al_rng_normal(&g1, a, 10, 0, 1);
  al_rng_normal(&g2, b, 8, 0, 1);
  al_rng_normal(&g2, b + 8, 2, 0, 1);   /* the counter advances in whole blocks of 4 values */
  CHECK("normal stream: 10 at once == 8 then 2 (bit-identical)", !memcmp(a, b, sizeof a), "");
  int64_t perm[100], seen[100] = {0};
  al_rng_permutation(&g1, perm, 100);
  int ok = 1;
  for (int i = 0; i < 100; i++) { if (perm[i] < 0 || perm[i] >= 100 || seen[perm[i]]++) ok = 0; }
  CHECK("permutation of 0..99 is a permutation", ok, "");
  int64_t ri[3000];
  int counts[3] = {0};
  al_rng_randint(&g1, ri, 3000, 3);
  for (int i = 0; i < 3000; i++) { if (ri[i] < 0 || ri[i] > 2) ok = 0; else counts[ri[i]]++; }
  CHECK("randint(3) in range and about uniform", ok && counts[0] > 850 && counts[1] > 850 && counts[2] > 850,
        "%d %d %d", counts[0], counts[1], counts[2]);
  double u[1000];
  al_rng_uniform_f64(&g1, u, 1000);
  ok = 1;
  for (int i = 0; i < 1000; i++) ok &= u[i] >= 0 && u[i] < 1;
  CHECK("uniform_f64 in [0,1)", ok, "");

  /* The distributions' moments, seed 2026, 20000 draws each; every bound is more than 5
   * standard errors wide (a uniform's mean: SE sqrt(1/12/20000) = 0.002). */
  enum { ND = 20000 };
  static float fz[ND];
  static double fd[ND];
  al_rng gd;
  al_rng_seed(&gd, 2026);
  double s = 0, s2 = 0, sxy = 0;
  al_rng_uniform(&gd, fz, ND, 0, 1);
  for (int i = 0; i < ND; i++) s += fz[i];
  CHECK("uniform [0,1): mean 1/2", fabs(s / ND - 0.5) < 0.012, "mean %.4f", s / ND);
  al_rng_uniform_f64(&gd, fd, ND);
  s = 0;
  for (int i = 0; i < ND; i++) s += fd[i];
  CHECK("uniform_f64 [0,1): mean 1/2", fabs(s / ND - 0.5) < 0.012, "mean %.4f", s / ND);
  /* normal(3, 2): mean 3 (SE 0.014), variance 4 (SE 4 sqrt(2/N) = 0.04), and the two values
   * of a Box-Muller pair (elements 2k, 2k+1) uncorrelated (SE of r: 1/sqrt(N/2) = 0.01) */
  al_rng_normal(&gd, fz, ND, 3, 2);
  s = 0;
  for (int i = 0; i < ND; i++) s += fz[i];
  double mean = s / ND;
  for (int i = 0; i < ND; i++) s2 += (fz[i] - mean) * (fz[i] - mean);
  for (int i = 0; i < ND; i += 2) sxy += (fz[i] - mean) * (fz[i + 1] - mean);
  double var = s2 / ND, corr = sxy / (ND / 2) / var;
  CHECK("normal(3, 2): mean 3, variance 4, a Box-Muller pair uncorrelated",
        fabs(mean - 3) < 0.08 && fabs(var - 4) < 0.25 && fabs(corr) < 0.06, "mean %.4f var %.4f corr %.4f", mean, var, corr);
  /* the counter moves by whole Philox blocks: 5 floats take 2 blocks (else the next draw
   * would repeat the fifth value's block) */
  uint64_t c0 = gd.counter;
  al_rng_uniform(&gd, fz, 5, 0, 1);
  al_rng_normal(&gd, fz, 5, 0, 1);
  al_rng_uniform_f64(&gd, fd, 3);
  CHECK("uniform(5), normal(5), uniform_f64(3) advance the counter by 2 + 2 + 2 blocks", gd.counter == c0 + 6,
        "moved %llu", (unsigned long long)(gd.counter - c0));
  /* permutation is uniform over all n! orders (Fisher-Yates): of 2 elements both orders come
   * up (expected 300 each of 600), of 3 all six (expected 100 each) */
  int n2[2] = {0}, n3[6] = {0};
  for (int t = 0; t < 600; t++) {
    int64_t p2[2], p3[3];
    al_rng_permutation(&gd, p2, 2);
    n2[p2[0]]++;
    al_rng_permutation(&gd, p3, 3);
    n3[p3[0] * 2 + (p3[1] > p3[2])]++;   /* first element and the order of the other two */
  }
  ok = n2[0] > 220 && n2[1] > 220;
  for (int k = 0; k < 6; k++) ok &= n3[k] > 55;
  CHECK("permutation: both orders of 2, all six of 3, about equally often", ok, "%d %d / %d %d %d %d %d %d",
        n2[0], n2[1], n3[0], n3[1], n3[2], n3[3], n3[4], n3[5]);
}

/* Counts and pointers the generator cannot use: randint refuses them with nothing drawn (a
 * negative count returned AL_OK); the void draws take n <= 0 as nothing (a negative n moved
 * the counter back: n = -8 rewound it one block, and the next draws repeated old ones). */
static void test_rng_edges(void) {
  al_rng g;
  al_rng_seed(&g, 9);
  int64_t r[4] = {7, 7, 7, 7};
  al_status st = al_rng_randint(&g, r, -1, 5);
  CHECK("randint: a negative count is AL_EINVAL, nothing drawn", st == AL_EINVAL && g.counter == 0 && strstr(al_errmsg(), "count"),
        "status %d, counter %llu: %s", (int)st, (unsigned long long)g.counter, al_errmsg());
  st = al_rng_randint(&g, NULL, 3, 5);
  CHECK("randint: NULL out for 3 values is AL_EINVAL", st == AL_EINVAL && g.counter == 0, "status %d", (int)st);
  st = al_rng_randint(NULL, r, 3, 5);
  CHECK("randint: a NULL generator is AL_EINVAL", st == AL_EINVAL && r[0] == 7, "status %d", (int)st);
  st = al_rng_randint(&g, NULL, 0, 5);
  CHECK("randint: 0 values into NULL is fine", st == AL_OK && g.counter == 0, "status %d", (int)st);
  al_rng h = {9, 5};
  float f[1];
  double dd[1];
  al_rng_uniform(&h, f, -8, 0, 1);
  al_rng_normal(&h, f, -8, 0, 1);
  al_rng_uniform_f64(&h, dd, -8);
  CHECK("uniform, normal, uniform_f64: a negative n draws nothing and leaves the counter", h.counter == 5,
        "counter %llu, want 5", (unsigned long long)h.counter);
  /* crop_flip_draw: a negative batch drew nothing, then cleared (size_t)-1 * 8 bytes of flip */
  int64_t top[2], left[2], flip[2];
  st = al_crop_flip_draw(&g, -1, 0, 0, top, left, flip);
  CHECK("crop_flip_draw: a negative batch size is AL_EINVAL", st == AL_EINVAL && strstr(al_errmsg(), "batch size"),
        "status %d: %s", (int)st, al_errmsg());
  st = al_crop_flip_draw(&g, -1, 4, 1, top, left, flip);
  CHECK("crop_flip_draw: ... with padding and flips too (returned AL_OK)", st == AL_EINVAL, "status %d", (int)st);
  st = al_crop_flip_draw(&g, 2, 4, 1, top, NULL, flip);
  CHECK("crop_flip_draw: NULL left is AL_EINVAL", st == AL_EINVAL && strstr(al_errmsg(), "left is NULL"), "status %d: %s", (int)st, al_errmsg());
  st = al_crop_flip_draw(&g, 0, 0, 0, NULL, NULL, NULL);
  CHECK("crop_flip_draw: an empty batch needs no arrays", st == AL_OK, "status %d: %s", (int)st, al_errmsg());
}

/* ---------------------------------------------------------------- errors */
static void test_errors(void) {
  size_t m0 = al_mem_live();
  int64_t s23[2] = {2, 3}, s45[2] = {4, 5};
  al_tensor *a = al_tensor_zeros(AL_F32, 2, s23), *b = al_tensor_zeros(AL_F32, 2, s45), *o = NULL;
  al_status st = al_matmul(&o, a, b);
  CHECK("matmul shape error names both shapes", st == AL_EINVAL && strstr(al_errmsg(), "(2,3)") && strstr(al_errmsg(), "(4,5)") && !o,
        "%s", al_errmsg());
  st = al_linear(&o, a, b, NULL);
  CHECK("linear shape error", st == AL_EINVAL && strstr(al_errmsg(), "linear"), "%s", al_errmsg());
  st = al_sum_dim(&o, a, 2, 0);
  CHECK("dim out of range: message in the Lua API's 1-based dims", st == AL_EINVAL && strstr(al_errmsg(), "dim 3 out of range"),
        "%s", al_errmsg());
  st = al_narrow(&o, a, 1, 2, 2);
  CHECK("narrow out of range", st == AL_EINVAL && strstr(al_errmsg(), "(2,3)"), "%s", al_errmsg());
  int64_t sh6[2] = {4, 2};
  st = al_reshape(&o, a, 2, sh6);
  CHECK("reshape to a wrong size", st == AL_EINVAL && strstr(al_errmsg(), "(4,2)"), "%s", al_errmsg());
  int64_t s2[1] = {2};
  al_tensor *lab = al_tensor_zeros(AL_I64, 1, s2);
  al_i64(lab)[1] = 3;
  st = al_cross_entropy(&o, a, lab, 0, -1);
  CHECK("cross_entropy label out of range says 1-based", st == AL_EINVAL && strstr(al_errmsg(), "1-based"), "%s", al_errmsg());
  st = al_unary(&o, AL_EXP, lab);
  CHECK("exp of int64 is AL_EINVAL", st == AL_EINVAL && strstr(al_errmsg(), "int64"), "%s", al_errmsg());
  CHECK("status names", !strcmp(al_status_name(AL_ESTATE), "invalid state") && !strcmp(al_status_name(AL_OK), "ok"), "");
  int d = 5;
  st = al_wrap_dim(&d, 2, "x");
  int dn = -1;
  al_status st2 = al_wrap_dim(&dn, 3, "x");
  CHECK("al_wrap_dim: out of range is an error, -1 is the last", st == AL_EINVAL && !st2 && dn == 2, "");
  /* printf spells a NaN with its sign bit set "-nan": every one in a message reads "nan" */
  al_seterr(AL_ENUM, "x = %g, y = %g", -(double)NAN, -(double)NAN);
  CHECK("al_seterr: two negative NaNs both read \"nan\"", !strcmp(al_errmsg(), "x = nan, y = nan"), "%s", al_errmsg());
  al_tensor_release(a); al_tensor_release(b); al_tensor_release(lab);
  CHECK("error paths leave no bytes", al_mem_live() == m0, "live %zu vs %zu", al_mem_live(), m0);
}

/* al_malloc: 64-byte aligned for every size, the whole block writable (ASan and valgrind see
 * overruns), counted in al_mem_live and uncounted by al_free. */
static void test_malloc(void) {
  static const size_t sizes[] = {0, 1, 15, 16, 63, 64, 65, 4095, 4096, 100000, (size_t)17305600};
  const size_t live0 = al_mem_live();
  int aligned = 1, counted = 1;
  void *p[sizeof sizes / sizeof *sizes];
  size_t sum = 0;
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    p[i] = al_malloc(sizes[i]);
    aligned &= p[i] != NULL && ((uintptr_t)p[i] & 63) == 0;
    if (p[i]) memset(p[i], 0xA5, sizes[i]);
    sum += sizes[i];
  }
  counted &= al_mem_live() == live0 + sum;
  /* the high-water mark is at least what is live with all of them allocated (the peak was
   * never raised at all when its update loop tested the wrong direction) */
  CHECK("al_mem_peak: at least the bytes live at their highest", al_mem_peak() >= live0 + sum && live0 + sum > 17305600,
        "peak %zu, live %zu", al_mem_peak(), live0 + sum);
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) al_free(p[i], sizes[i]);
  counted &= al_mem_live() == live0;
  CHECK("al_malloc: 64-byte aligned (0 B .. 17 MB), writable, counted and uncounted", aligned && counted,
        "aligned %d counted %d", aligned, counted);
  CHECK("al_malloc: an impossible size gives NULL, not a wrapped small block",
        al_malloc(SIZE_MAX - 8) == NULL && al_mem_live() == live0, "got a block");
}

/* Run-time dispatch (include/attnlab/cpu.h): the levels built, the cap, switching, and one
 * kernel's result at every level this CPU runs against the same float64 reference. */
static void test_cpu_dispatch(void) {
  const char *built = al_cpu_levels_built();
  CHECK("cpu: this build contains the generic kernels and the level in use",
        strstr(built, "generic") && strstr(built, al_cpu_level_name(al_cpu_active())), "built: %s, active %s", built,
        al_cpu_level_name(al_cpu_active()));
  const char *cap = getenv("ATTNLAB_CPU");
  al_cpu_level want = al_cpu_detect();
  if (cap && strcmp(cap, "avx2") == 0 && want > AL_CPU_AVX2) want = AL_CPU_AVX2;
  if (cap && strcmp(cap, "generic") == 0) want = AL_CPU_GENERIC;
  while (want > AL_CPU_GENERIC && !strstr(built, al_cpu_level_name(want))) want = (al_cpu_level)(want - 1);
  al_cpu_level start = al_cpu_active();
  CHECK("cpu: the level in use is the best the CPU runs, capped by ATTNLAB_CPU", start == want,
        "active %s, expected %s (ATTNLAB_CPU=%s)", al_cpu_level_name(start), al_cpu_level_name(want), cap ? cap : "");
  /* the detected level against the kernel's own account of the CPU (Linux /proc/cpuinfo, whose
   * flags already leave out what the OS does not enable): avx512 with F, DQ, CD, BW and VL,
   * avx2 with AVX2, FMA, BMI1/2, MOVBE and F16C (x86-64-v3; every such CPU has LZCNT) */
  FILE *ci = fopen("/proc/cpuinfo", "r");
  char line[8192];
  int have_flags = 0;
  while (ci && fgets(line, sizeof line, ci))
    if (!strncmp(line, "flags", 5)) { have_flags = 1; break; }
  if (ci) fclose(ci);
  if (under_valgrind()) {
    /* valgrind emulates CPUID and offers no AVX-512, whatever the kernel reports */
    check_skip("cpu: the detected level is what /proc/cpuinfo's flags allow", "valgrind emulates CPUID");
  } else if (have_flags) {
    const char *v3[] = {" avx2", " fma", " bmi1", " bmi2", " movbe", " f16c"},
               *v4[] = {" avx512f", " avx512dq", " avx512cd", " avx512bw", " avx512vl"};
    char *nl = strchr(line, '\n');
    if (nl) *nl = ' ';   /* every flag is then followed by a space */
    int n3 = 0, n4 = 0;
    char want_flag[32];
    for (int k = 0; k < 6; k++) { snprintf(want_flag, sizeof want_flag, "%s ", v3[k]); n3 += strstr(line, want_flag) != NULL; }
    for (int k = 0; k < 5; k++) { snprintf(want_flag, sizeof want_flag, "%s ", v4[k]); n4 += strstr(line, want_flag) != NULL; }
    al_cpu_level expect = n3 < 6 ? AL_CPU_GENERIC : n4 < 5 ? AL_CPU_AVX2 : AL_CPU_AVX512;
    CHECK("cpu: the detected level is what /proc/cpuinfo's flags allow", al_cpu_detect() == expect,
          "detected %s, cpuinfo says %s", al_cpu_level_name(al_cpu_detect()), al_cpu_level_name(expect));
  } else {
    check_skip("cpu: the detected level is what /proc/cpuinfo's flags allow", "no /proc/cpuinfo flags line");
  }
  al_status st = al_cpu_set_level("sse9");
  CHECK("cpu: an unknown level is refused with a message naming it",
        st == AL_EINVAL && strstr(al_errmsg(), "sse9") && al_cpu_active() == start, "status %d: %s", st, al_errmsg());
  if (al_cpu_detect() < AL_CPU_AVX512) {
    st = al_cpu_set_level("avx512");
    CHECK("cpu: a level this CPU cannot run is refused", st == AL_EINVAL && al_cpu_active() == start, "status %d", st);
  }
  enum { N = 37 };
  float x[N], y[N];
  double ref[N], m = -1e300, z = 0;
  for (int j = 0; j < N; j++) x[j] = (float)(0.37 * j - 5.0 + 0.11 * (j % 5) * (j % 3));
  for (int j = 0; j < N; j++) m = x[j] > m ? x[j] : m;
  for (int j = 0; j < N; j++) z += exp((double)x[j] - m);
  for (int j = 0; j < N; j++) ref[j] = exp((double)x[j] - m) / z;
  for (int l = AL_CPU_GENERIC; l <= (int)al_cpu_detect(); l++) {
    const char *name = al_cpu_level_name((al_cpu_level)l);
    if (!strstr(built, name)) continue;   /* a build with fewer ISA_LEVELS (the valgrind one) */
    char label[96];
    snprintf(label, sizeof label, "cpu: softmax at level %s matches float64 (switched in-process)", name);
    st = al_cpu_set_level(name);
    double worst = 0;
    if (!st) {
      al_softmax_fwd(y, x, NULL, 1, 1, N);
      for (int j = 0; j < N; j++) worst = fmax(worst, fabs(y[j] - ref[j]) / ref[j]);
    }
    CHECK(label, !st && al_cpu_active() == (al_cpu_level)l && worst < 1e-6, "status %d, active %s, worst rel err %.3g",
          st, al_cpu_level_name(al_cpu_active()), worst);
  }
  al_cpu_set_level(al_cpu_level_name(start));
}

/* al_set_num_threads(100000) made libgomp abort the process at the next parallel loop ("Thread
 * creation failed"): counts above AL_MAX_THREADS are capped, and a loop then runs. */
static void test_thread_cap(void) {
  al_set_num_threads(100000);
  int got = al_get_num_threads();
  double s = 0;
  #pragma omp parallel for reduction(+ : s)
  for (int i = 0; i < 1000; i++) s += i;
  al_set_num_threads(1);
  CHECK("threads: a count above AL_MAX_THREADS is capped, and a parallel loop runs", got == AL_MAX_THREADS && s == 499500.0,
        "got %d threads, sum %.1f", got, s);
  /* and one below 1 (the C API has no error return here) is 1 */
  al_set_num_threads(0);
  int got0 = al_get_num_threads();
  al_set_num_threads(-3);
  int gotn = al_get_num_threads();
  al_set_num_threads(1);
  CHECK("threads: a count of 0 or -3 is raised to 1", got0 == 1 && gotn == 1, "got %d and %d", got0, gotn);
}

int main(void) {
  al_set_num_threads(1);
  mem_start = al_mem_live();
  test_fastmath();
  test_rng();
  test_rng_edges();
  test_errors();
  test_malloc();
  test_cpu_dispatch();
  test_thread_cap();
  CHECK("al_mem_live() is back at its start value after everything was released", al_mem_live() == mem_start,
        "live %zu vs %zu", al_mem_live(), mem_start);
  CHECK_EXIT();
}
