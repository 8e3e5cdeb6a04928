/* tests/c/test_gemm.c -- attnlab's own sgemm (core/gemm/gemm.c) and al_sgemm's use of it.
 *
 *   - al_gemm_f32 against a float64 reference, every transpose combination, sizes 1, 15,
 *     16, 17, 63, 65, 257 in M, N and K (each M x N pair with a K from the list, plus K
 *     past the K-blocking threshold), alpha/beta variants, padded lda/ldb/ldc (the padding
 *     of C must stay untouched), beta = 0 ignoring NaN in C, alpha = 0 ignoring A and B;
 *   - the accumulation order: bitwise equal to a scalar chain acc = fmaf(a, b, acc) on the
 *     FMA levels (acc + a*b on the generic level), so the AVX-512 and AVX2 builds are
 *     bitwise equal to each other: checked in-process by switching the dispatched kernels
 *     (al_cpu_set_level) over a fixed set of products; `make test-levels` also runs this
 *     whole file compiled for, and dispatched to, each level;
 *   - bitwise independence of how M and N are cut into panels, and A^T B formed as (B^T A)^T
 *     (al_gemm_f32_finish_transposed_, core/gemm/internal.h) bitwise equal to the direct product;
 *   - al_sgemm at 1 and 2 threads, bitwise, on model shapes in all four transposes, with
 *     attnlab's kernel and with OpenBLAS forced (al_sgemm_force_path);
 *   - the bias form (al_gemm_f32_bias, al_sgemm_bias) bitwise equal to bias rows + beta = 1, and
 *     exactly the bias rows at K = 0 and alpha = 0;
 *   - bad arguments return AL_EINVAL, never a crash;
 *   - two threads whose first GEMMs start together get OpenBLAS's bits, both of them (the
 *     one-time set-up runs once and the second waits for it).
 * Every check prints PASS/FAIL/SKIP (check.h). */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/blas.h"
#include "attnlab/cpu.h"
#include "attnlab/gemm.h"
#include "attnlab/threads.h"
#include "../../core/gemm/internal.h"   /* al_gemm_f32_finish_transposed_ */
#include "check.h"

static uint64_t rs = 0x9E3779B97F4A7C15ull;
static uint64_t rnext(void) {   /* splitmix64 */
  uint64_t z = (rs += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static float runi(void) { return (float)((double)(rnext() >> 11) * 0x1p-53 * 2 - 1); }
static void fill(float *p, size_t n) { for (size_t i = 0; i < n; i++) p[i] = runi(); }

static int fma_level(void) { return strcmp(al_gemm_level(), "generic") != 0; }

/* op(X)[r, c] of a stored matrix */
static float at(const float *X, int64_t ld, int trans, int64_t r, int64_t c) { return trans ? X[c * ld + r] : X[r * ld + c]; }

typedef struct {
  int ta, tb;
  int64_t M, N, K, lda, ldb, ldc;
  float *A, *B, *C, *C0;   /* C0: C before the product */
} prob;

/* pad: extra elements per row of every operand */
static prob prob_new(int ta, int tb, int64_t M, int64_t N, int64_t K, int64_t pad) {
  prob p = {ta, tb, M, N, K, 0, 0, 0, NULL, NULL, NULL, NULL};
  p.lda = (ta ? M : K) + pad; p.ldb = (tb ? K : N) + pad; p.ldc = N + pad;
  if (p.lda < 1) p.lda = 1;
  if (p.ldb < 1) p.ldb = 1;
  size_t na = (size_t)(ta ? K : M) * p.lda + 1, nb = (size_t)(tb ? N : K) * p.ldb + 1, nc = (size_t)M * p.ldc + 1;
  p.A = malloc(sizeof(float) * na); p.B = malloc(sizeof(float) * nb);
  p.C = malloc(sizeof(float) * nc); p.C0 = malloc(sizeof(float) * nc);
  fill(p.A, na); fill(p.B, nb); fill(p.C0, nc);
  memcpy(p.C, p.C0, sizeof(float) * nc);
  return p;
}
static void prob_reset(prob *p) { memcpy(p->C, p->C0, sizeof(float) * ((size_t)p->M * p->ldc + 1)); }
static void prob_free(prob *p) { free(p->A); free(p->B); free(p->C); free(p->C0); }
static al_status prob_run(prob *p, float alpha, float beta) {
  return al_gemm_f32(p->ta, p->tb, p->M, p->N, p->K, alpha, p->A, p->lda, p->B, p->ldb, beta, p->C, p->ldc);
}

/* The kernel's definition, element by element: the FMA chain (or acc + a*b) and the one
 * epilogue. The FMA levels must match it bitwise. */
static float chain(const prob *p, int64_t i, int64_t j, float alpha, float beta) {
  float acc = 0;
  for (int64_t k = 0; k < p->K; k++) {
    float a = at(p->A, p->lda, p->ta, i, k), b = at(p->B, p->ldb, p->tb, k, j);
    acc = fma_level() ? fmaf(a, b, acc) : acc + a * b;
  }
  float t = alpha * acc;
  if (beta != 0) t = t + beta * p->C0[i * p->ldc + j];
  return t;
}

/* max over C of |C - ref| / bound, with ref and the bound in float64:
 * bound = (K + 3) u (|alpha| sum_k |a b| + |beta c|), u = 2^-24. Also: is C bitwise the
 * chain, and is the padding of C untouched. */
static double prob_check(const prob *p, float alpha, float beta, int *bitwise, int *pad_ok) {
  double worst = 0;
  *bitwise = 1; *pad_ok = 1;
  for (int64_t i = 0; i < p->M; i++) {
    for (int64_t j = 0; j < p->N; j++) {
      double s = 0, sa = 0;
      for (int64_t k = 0; k < p->K; k++) {
        double a = at(p->A, p->lda, p->ta, i, k), b = at(p->B, p->ldb, p->tb, k, j);
        s += a * b; sa += fabs(a * b);
      }
      double c0 = beta != 0 ? p->C0[i * p->ldc + j] : 0;
      double ref = (double)alpha * s + (double)beta * c0;
      double bound = (double)(p->K + 3) * 0x1p-24 * (fabs((double)alpha) * sa + fabs((double)beta * c0)) + 1e-30;
      float got = p->C[i * p->ldc + j];
      double q = fabs((double)got - ref) / bound;
      if (!(q <= worst)) worst = q;   /* NaN sticks */
      float want = chain(p, i, j, alpha, beta);
      if (memcmp(&got, &want, sizeof got) != 0) *bitwise = 0;
    }
    for (int64_t j = p->N; j < p->ldc && i < p->M; j++)
      if (memcmp(&p->C[i * p->ldc + j], &p->C0[i * p->ldc + j], sizeof(float)) != 0) *pad_ok = 0;
  }
  return worst;
}

static void test_reference(void) {
  static const int64_t sz[] = {1, 15, 16, 17, 63, 65, 257};
  const int nsz = 7;
  for (int t = 0; t < 4; t++) {
    int ta = t & 1, tb = t >> 1;
    char name[128];
    double worst = 0;
    int all_bitwise = 1, all_pad = 1, all_ok = 1, n = 0;
    char where[128] = "";
    /* every M x N pair, K cycling through the list (and 1100: four K blocks and a tail) */
    for (int im = 0; im < nsz; im++)
      for (int in = 0; in < nsz; in++) {
        int64_t M = sz[im], N = sz[in], K = (im + in + t) % 8 == 7 ? 1100 : sz[(im + in + t) % 8 % nsz];
        if (M * N * K > 257 * 257 * 65) K = sz[(im + in) % 4];   /* keep the reference quick */
        static const float ab[][2] = {{1, 0}, {0.5f, 0}, {1, 1}, {-1.5f, 0.25f}};
        int v = (im * 3 + in + t) % 4;
        int64_t pad = (im + in) % 3 == 0 ? 3 : 0;
        prob p = prob_new(ta, tb, M, N, K, pad);
        al_status st = prob_run(&p, ab[v][0], ab[v][1]);
        int bw, po;
        double q = prob_check(&p, ab[v][0], ab[v][1], &bw, &po);
        if (st != AL_OK) all_ok = 0;
        if (!(q <= worst)) { worst = q; snprintf(where, sizeof where, "%lldx%lldx%lld", (long long)M, (long long)N, (long long)K); }
        if (!bw && all_bitwise) { all_bitwise = 0; snprintf(where, sizeof where, "not the chain at %lldx%lldx%lld", (long long)M, (long long)N, (long long)K); }
        if (!po) all_pad = 0;
        prob_free(&p);
        n++;
      }
    snprintf(name, sizeof name, "gemm %c%c: %d shapes in 1..257 (K to 1100) vs float64, alpha/beta, padded ld", ta ? 'T' : 'N',
             tb ? 'T' : 'N', n);
    CHECK(name, all_ok && worst <= 1 && all_pad, "worst error/bound %.3g (%s), padding of C %s", worst, where,
          all_pad ? "kept" : "overwritten");
    snprintf(name, sizeof name, "gemm %c%c (%s): every element bitwise the sequential %s chain over k", ta ? 'T' : 'N',
             tb ? 'T' : 'N', al_gemm_level(), fma_level() ? "fmaf" : "acc + a*b");
    CHECK(name, all_bitwise, "%s", where);
  }
}

static void test_alpha_beta_edges(void) {
  /* beta = 0: C is never read (NaN there must not show); alpha = 0: A and B are not read */
  prob p = prob_new(0, 1, 33, 40, 20, 2);
  for (size_t i = 0; i < (size_t)p.M * p.ldc; i++) p.C[i] = NAN;
  al_status st = prob_run(&p, 1, 0);
  int finite = 1;
  for (int64_t i = 0; i < p.M; i++)
    for (int64_t j = 0; j < p.N; j++) if (!isfinite(p.C[i * p.ldc + j])) finite = 0;
  CHECK("gemm beta = 0 ignores NaN in C", st == AL_OK && finite, "status %d", st);
  prob_reset(&p);
  p.A[5] = NAN;
  st = prob_run(&p, 0, 2);
  int ok = st == AL_OK;
  for (int64_t i = 0; i < p.M; i++)
    for (int64_t j = 0; j < p.N; j++) ok &= p.C[i * p.ldc + j] == 2 * p.C0[i * p.ldc + j];
  CHECK("gemm alpha = 0: C = beta*C, A and B not read", ok, "status %d", st);
  prob_reset(&p);
  st = al_gemm_f32(0, 1, p.M, p.N, 0, 1, NULL, 1, NULL, 1, 0.5f, p.C, p.ldc);
  ok = st == AL_OK;
  for (int64_t i = 0; i < p.M; i++)
    for (int64_t j = 0; j < p.N; j++) ok &= p.C[i * p.ldc + j] == 0.5f * p.C0[i * p.ldc + j];
  CHECK("gemm K = 0: C = beta*C", ok, "status %d", st);
  prob_free(&p);
}

static void test_errors(void) {
  float a[16] = {0}, b[16] = {0}, c[16] = {0};
  int ok = 1;
  ok &= al_gemm_f32(0, 0, -1, 2, 2, 1, a, 2, b, 2, 0, c, 2) == AL_EINVAL;
  int named = strstr(al_errmsg(), "M=-1") != NULL;
  ok &= al_gemm_f32(0, 0, 2, 2, -3, 1, a, 2, b, 2, 0, c, 2) == AL_EINVAL;
  ok &= al_gemm_f32(0, 0, 2, 2, 3, 1, a, 2, b, 2, 0, c, 2) == AL_EINVAL;   /* lda < K */
  ok &= al_gemm_f32(1, 0, 3, 2, 2, 1, a, 2, b, 2, 0, c, 2) == AL_EINVAL;   /* transA: lda < M */
  ok &= al_gemm_f32(0, 1, 2, 3, 2, 1, a, 2, b, 1, 0, c, 3) == AL_EINVAL;   /* transB: ldb < K */
  ok &= al_gemm_f32(0, 0, 2, 3, 2, 1, a, 2, b, 3, 0, c, 2) == AL_EINVAL;   /* ldc < N */
  ok &= al_gemm_f32(0, 0, 2, 2, 2, 1, NULL, 2, b, 2, 0, c, 2) == AL_EINVAL;
  ok &= al_gemm_f32(0, 0, 2, 2, 2, 1, a, 2, b, 2, 0, NULL, 2) == AL_EINVAL;
  ok &= al_gemm_f32(0, 0, 0, 2, 2, 1, NULL, 0, NULL, 0, 0, NULL, 0) == AL_OK;   /* nothing to do */
  CHECK("gemm bad sizes, short leading dimensions, NULL: AL_EINVAL (empty product: AL_OK)", ok, "%s", al_errmsg());
  /* N within a tile of INT64_MAX: rounding it up to whole tiles overflowed int64 (UBSan stopped) */
  al_status big = al_gemm_f32(0, 1, 2, INT64_MAX, 2, 1, a, 2, b, 2, 0, c, INT64_MAX);
  CHECK("gemm transB with N = INT64_MAX: too large to pack, refused", big == AL_ENOMEM && strstr(al_errmsg(), "too large"),
        "status %d: %s", (int)big, al_errmsg());
  CHECK("gemm error message names the sizes", named, "no M=-1 in the message");
}

/* The first GEMMs of the process, on two threads at the same moment, in a shape the crossover
 * sends to OpenBLAS. al_blas_init set its "done" flag before probing OpenBLAS (child processes,
 * tens of ms), so the second thread skipped the set-up and ran its product on the builtin loop:
 * other bits than the same call a moment later. Must run before anything else touches BLAS. */
enum { RM = 64, RN = 1024, RK = 300 };
static float ra[RM * RK], rb[RK * RN], rc[2][RM * RN], rc_after[RM * RN];
static pthread_barrier_t rbar;
static void *race_job(void *c) {
  pthread_barrier_wait(&rbar);
  al_sgemm(0, 0, RM, RN, RK, 1.0f, ra, RK, rb, RN, 0.0f, (float *)c, RN);
  return NULL;
}
static void test_first_gemm_race(void) {
  fill(ra, RM * RK);
  fill(rb, (size_t)RK * RN);
  pthread_barrier_init(&rbar, NULL, 2);
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, race_job, rc[i]);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&rbar);
  al_sgemm(0, 0, RM, RN, RK, 1.0f, ra, RK, rb, RN, 0.0f, rc_after, RN);
  int same0 = !memcmp(rc[0], rc_after, sizeof rc_after), same1 = !memcmp(rc[1], rc_after, sizeof rc_after);
  CHECK("first GEMMs on two threads at once: both equal the same call after the set-up, bitwise", same0 && same1,
        "thread 1 %s, thread 2 %s (backend %s, path %d)", same0 ? "equal" : "differs", same1 ? "equal" : "differs",
        al_blas_info()->backend, al_sgemm_path(RM, RN, RK));
}

/* the product cut into row panels of r rows and, separately, column panels of c columns */
static void test_panels(void) {
  static const int64_t rows[] = {1, 7, 13, 14, 64}, cols[] = {5, 17, 33, 64};
  for (int t = 0; t < 4; t++) {
    int ta = t & 1, tb = t >> 1, same = 1;
    int64_t M = 150, N = 97, K = t == 3 ? 700 : 67;
    prob p = prob_new(ta, tb, M, N, K, 1);
    prob_run(&p, 1.25f, 0.5f);
    float *full = malloc(sizeof(float) * (size_t)M * p.ldc);
    memcpy(full, p.C, sizeof(float) * (size_t)M * p.ldc);
    for (int r = 0; r < 5; r++) {
      prob_reset(&p);
      for (int64_t s = 0; s < M; s += rows[r]) {
        int64_t n = M - s < rows[r] ? M - s : rows[r];
        al_gemm_f32(ta, tb, n, N, K, 1.25f, ta ? p.A + s : p.A + s * p.lda, p.lda, p.B, p.ldb, 0.5f, p.C + s * p.ldc, p.ldc);
      }
      same &= memcmp(full, p.C, sizeof(float) * (size_t)M * p.ldc) == 0;
    }
    for (int c = 0; c < 4; c++) {
      prob_reset(&p);
      for (int64_t s = 0; s < N; s += cols[c]) {
        int64_t n = N - s < cols[c] ? N - s : cols[c];
        al_gemm_f32(ta, tb, M, n, K, 1.25f, p.A, p.lda, tb ? p.B + s * p.ldb : p.B + s, p.ldb, 0.5f, p.C + s, p.ldc);
      }
      same &= memcmp(full, p.C, sizeof(float) * (size_t)M * p.ldc) == 0;
    }
    char name[128];
    snprintf(name, sizeof name, "gemm %c%c %lldx%lldx%lld: row panels 1/7/13/14/64 and column panels 5/17/33/64 bitwise equal one call",
             ta ? 'T' : 'N', tb ? 'T' : 'N', (long long)M, (long long)N, (long long)K);
    CHECK(name, same, "differs");
    free(full);
    prob_free(&p);
  }
}

/* al_gemm_f32_finish_transposed_: A^T B formed as T = B^T A (alpha 1, beta 0) and then alpha
 * T^T + beta C has al_gemm_f32's own bits for A^T B (the same chains, fmaf being symmetric, and
 * the same last step), K within one block and past it; beta = 0 leaves C unread (NaN there
 * does not show). Shapes where al_gemm_f32 computes A^T B directly (N < M). */
static void test_finish_transposed(void) {
  static const int64_t ks[2] = {67, 700};
  for (int c = 0; c < 4; c++) {
    int64_t M = 40, N = 24, K = ks[c & 1];
    float beta = c < 2 ? 0.5f : 0.0f;
    prob p = prob_new(1, 0, M, N, K, 0);   /* A: K x M, B: K x N */
    if (beta == 0) for (int64_t i = 0; i < M * p.ldc; i++) p.C0[i] = NAN;
    prob_reset(&p);
    al_status s1 = al_gemm_f32(1, 0, M, N, K, 1.25f, p.A, p.lda, p.B, p.ldb, beta, p.C, p.ldc);
    float *direct = malloc(sizeof(float) * (size_t)M * p.ldc), *t = malloc(sizeof(float) * (size_t)N * M);
    memcpy(direct, p.C, sizeof(float) * (size_t)M * p.ldc);
    al_status s2 = al_gemm_f32(1, 0, N, M, K, 1.0f, p.B, p.ldb, p.A, p.lda, 0.0f, t, M);   /* B^T A */
    prob_reset(&p);
    al_gemm_f32_finish_transposed_(M, N, 1.25f, t, beta, p.C, p.ldc, p.C, p.ldc);
    char name[160];
    snprintf(name, sizeof name, "al_gemm_f32_finish_transposed_: (B^T A)^T bitwise al_gemm_f32's A^T B, %lldx%lldx%lld, beta %g",
             (long long)M, (long long)N, (long long)K, beta);
    CHECK(name, s1 == AL_OK && s2 == AL_OK && memcmp(direct, p.C, sizeof(float) * (size_t)M * p.ldc) == 0, "differs");
    free(direct);
    free(t);
    prob_free(&p);
  }
}

/* al_sgemm at 1 and 2 threads, bitwise, on the model's shapes; path: AL_SGEMM_* */
static void test_threads(int path, const char *label) {
  static const int64_t shapes[][3] = {{1088, 192, 64}, {2176, 64, 256}, {64, 192, 2176}, {2176, 256, 64}, {200, 300, 100}};
  /* under valgrind (tests/valgrind.sh sets ATTNLAB_VALGRIND) an eighth of the rows: still
   * large enough to be split over the threads */
  int64_t mdiv = under_valgrind() ? 8 : 1;
  al_sgemm_force_path(path);
  for (int s = 0; s < 5; s++) {
    int same = 1;
    int64_t M = (shapes[s][0] + mdiv - 1) / mdiv;
    for (int t = 0; t < 4; t++) {
      int ta = t & 1, tb = t >> 1;
      prob p = prob_new(ta, tb, M, shapes[s][1], shapes[s][2], 0);
      size_t nc = (size_t)p.M * p.ldc;
      float *c1 = malloc(sizeof(float) * nc);
      al_set_num_threads(1);
      al_sgemm(ta, tb, p.M, p.N, p.K, 1, p.A, p.lda, p.B, p.ldb, 0.5f, p.C, p.ldc);
      memcpy(c1, p.C, sizeof(float) * nc);
      prob_reset(&p);
      al_set_num_threads(2);
      al_sgemm(ta, tb, p.M, p.N, p.K, 1, p.A, p.lda, p.B, p.ldb, 0.5f, p.C, p.ldc);
      al_set_num_threads(1);
      same &= memcmp(c1, p.C, sizeof(float) * nc) == 0;
      free(c1);
      prob_free(&p);
    }
    char name[160];
    snprintf(name, sizeof name, "al_sgemm (%s) %lldx%lldx%lld NN/TN/NT/TT: 1 and 2 threads bitwise equal", label,
             (long long)M, (long long)shapes[s][1], (long long)shapes[s][2]);
    CHECK(name, same, "differs");
  }
  al_sgemm_force_path(AL_SGEMM_AUTO);
}

static void test_sgemm_paths_agree(void) {
  /* the two paths compute the same product (to rounding), K = 0 and M = 0 as before */
  prob p = prob_new(1, 0, 100, 70, 300, 0);
  al_sgemm_force_path(AL_SGEMM_BLAS);
  al_sgemm(1, 0, p.M, p.N, p.K, 1, p.A, p.lda, p.B, p.ldb, 0, p.C, p.ldc);
  float *lib = malloc(sizeof(float) * (size_t)p.M * p.ldc);
  memcpy(lib, p.C, sizeof(float) * (size_t)p.M * p.ldc);
  al_sgemm_force_path(AL_SGEMM_OWN);
  al_sgemm(1, 0, p.M, p.N, p.K, 1, p.A, p.lda, p.B, p.ldb, 0, p.C, p.ldc);
  al_sgemm_force_path(AL_SGEMM_AUTO);
  long w = 0;
  double r = check_close_ratio(p.C, lib, (long)(p.M * p.ldc), 1e-5, 1e-5, &w);
  CHECK("al_sgemm: attnlab's kernel and OpenBLAS agree to float32 rounding", r <= 1, "ratio %.3g at %ld", r, w);
  free(lib);
  prob_reset(&p);
  al_sgemm(1, 0, p.M, p.N, 0, 1, p.A, p.lda, p.B, p.ldb, 0.5f, p.C, p.ldc);
  int ok = 1;
  for (size_t i = 0; i < (size_t)p.M * p.ldc; i++) ok &= p.C[i] == 0.5f * p.C0[i];
  al_sgemm(1, 0, 0, p.N, p.K, 1, NULL, 1, NULL, 1, 0, NULL, 1);   /* M = 0: no access */
  CHECK("al_sgemm K = 0 gives beta*C, M = 0 touches nothing", ok, "differs");
  prob_free(&p);
  const al_blas_info_t *bi = al_blas_info();
  CHECK("al_blas_info reports the kernel level and the crossover",
        bi->gemm && strcmp(bi->gemm, al_gemm_level()) == 0 && bi->gemm_rule && bi->gemm_rule[0], "gemm %s, rule %s",
        bi->gemm ? bi->gemm : "NULL", bi->gemm_rule ? bi->gemm_rule : "NULL");
}

/* The bias form: C = alpha op(A)op(B) + bias in every row is bitwise what writing bias into
 * every row of C and calling with beta = 1 gives, in al_gemm_f32_bias (every transpose, edge
 * sizes, a K-blocked K) and in al_sgemm_bias (1 and 2 threads, either kernel, panels cut by
 * rows and by columns, K = 0). */
static int bias_case(int which, int ta, int tb, int64_t M, int64_t N, int64_t K, int threads) {
  prob p = prob_new(ta, tb, M, N, K, 2);
  float *bias = malloc(sizeof(float) * (size_t)N), *want = malloc(sizeof(float) * ((size_t)M * p.ldc + 1));
  fill(bias, (size_t)N);
  memcpy(want, p.C0, sizeof(float) * ((size_t)M * p.ldc + 1));
  for (int64_t i = 0; i < M; i++) memcpy(want + i * p.ldc, bias, sizeof(float) * (size_t)N);
  al_set_num_threads(1);
  int ok = 1;
  if (which == 0) {
    ok &= al_gemm_f32(ta, tb, M, N, K, 0.75f, p.A, p.lda, p.B, p.ldb, 1.0f, want, p.ldc) == AL_OK;
    ok &= al_gemm_f32_bias(ta, tb, M, N, K, 0.75f, p.A, p.lda, p.B, p.ldb, bias, p.C, p.ldc) == AL_OK;
  } else {
    al_sgemm(ta, tb, M, N, K, 0.75f, p.A, p.lda, p.B, p.ldb, 1.0f, want, p.ldc);
    al_set_num_threads(threads);
    al_sgemm_bias(ta, tb, M, N, K, 0.75f, p.A, p.lda, p.B, p.ldb, bias, p.C, p.ldc);
    al_set_num_threads(1);
  }
  ok &= memcmp(want, p.C, sizeof(float) * ((size_t)M * p.ldc + 1)) == 0;   /* the padding too */
  free(bias);
  free(want);
  prob_free(&p);
  return ok;
}

static void test_bias(void) {
  static const int64_t sz[] = {1, 15, 16, 17, 63, 65, 257};
  int ok = 1, n = 0;
  char where[96] = "";
  for (int t = 0; t < 4; t++)
    for (int im = 0; im < 7; im++)
      for (int in = 0; in < 7; in++) {
        int64_t M = sz[im], N = sz[in], K = (im + in + t) % 5 == 4 ? 1100 : sz[(im * 2 + in + t) % 7];
        if (M * N * K > 257 * 257 * 65) K = 17;
        if (!bias_case(0, t & 1, t >> 1, M, N, K, 1) && ok) {
          ok = 0;
          snprintf(where, sizeof where, "%c%c %lldx%lldx%lld", t & 1 ? 'T' : 'N', t >> 1 ? 'T' : 'N', (long long)M,
                   (long long)N, (long long)K);
        }
        n++;
      }
  char name[160];
  snprintf(name, sizeof name, "gemm bias (%s): %d shapes, every transpose, bitwise bias rows + beta = 1, padding kept",
           al_gemm_level(), n);
  CHECK(name, ok, "differs at %s", where);
  {   /* a NULL bias is no bias: bitwise the beta = 0 product, C's old values (NaN) unread */
    prob p = prob_new(0, 1, 33, 40, 20, 2);
    float *want = malloc(sizeof(float) * ((size_t)p.M * p.ldc + 1));
    memcpy(want, p.C0, sizeof(float) * ((size_t)p.M * p.ldc + 1));
    al_gemm_f32(0, 1, p.M, p.N, p.K, 0.75f, p.A, p.lda, p.B, p.ldb, 0.0f, want, p.ldc);
    for (int64_t i = 0; i < p.M; i++)
      for (int64_t j = 0; j < p.N; j++) p.C[i * p.ldc + j] = NAN;
    int same = al_gemm_f32_bias(0, 1, p.M, p.N, p.K, 0.75f, p.A, p.lda, p.B, p.ldb, NULL, p.C, p.ldc) == AL_OK;
    for (int64_t i = 0; i < p.M; i++) same &= memcmp(want + i * p.ldc, p.C + i * p.ldc, sizeof(float) * (size_t)p.N) == 0;
    for (int64_t i = 0; i < p.M; i++)
      for (int64_t j = 0; j < p.N; j++) p.C[i * p.ldc + j] = NAN;
    al_set_num_threads(2);
    al_sgemm_bias(0, 1, p.M, p.N, p.K, 0.75f, p.A, p.lda, p.B, p.ldb, NULL, p.C, p.ldc);
    al_set_num_threads(1);
    for (int64_t i = 0; i < p.M; i++) same &= memcmp(want + i * p.ldc, p.C + i * p.ldc, sizeof(float) * (size_t)p.N) == 0;
    CHECK("gemm bias: a NULL bias is no bias (al_gemm_f32_bias and al_sgemm_bias: the beta = 0 product)", same, "differs");
    free(want);
    prob_free(&p);
  }
  {   /* K = 0 or alpha = 0: A and B are not read and C is the bias rows, exactly (C's old values,
       * here random, unread; the padding of C kept). al_sgemm_bias answers K = 0 before it gets
       * here, so only al_gemm_f32_bias itself reaches this path. */
    int same = 1;
    for (int c = 0; c < 2; c++) {
      prob p = prob_new(0, c, 9, 37, c ? 5 : 0, 2);
      float *bias = malloc(sizeof(float) * (size_t)p.N), *want = malloc(sizeof(float) * ((size_t)p.M * p.ldc + 1));
      fill(bias, (size_t)p.N);
      memcpy(want, p.C0, sizeof(float) * ((size_t)p.M * p.ldc + 1));
      for (int64_t i = 0; i < p.M; i++) memcpy(want + i * p.ldc, bias, sizeof(float) * (size_t)p.N);
      same &= al_gemm_f32_bias(0, c, p.M, p.N, p.K, c ? 0.0f : 0.75f, p.A, p.lda, p.B, p.ldb, bias, p.C, p.ldc) == AL_OK;
      same &= memcmp(want, p.C, sizeof(float) * ((size_t)p.M * p.ldc + 1)) == 0;
      free(bias);
      free(want);
      prob_free(&p);
    }
    CHECK("gemm bias: K = 0 and alpha = 0 give the bias rows (al_gemm_f32_bias), C's old values unread", same, "differs");
  }
  /* al_sgemm_bias: the linear layer's shape, split by rows; a wide one split by columns;
   * odd sizes; K = 0 */
  static const int64_t shapes[][3] = {{2176, 192, 64}, {48, 700, 64}, {301, 65, 17}, {33, 70, 0}};
  static const int paths[3] = {AL_SGEMM_AUTO, AL_SGEMM_OWN, AL_SGEMM_BLAS};
  int64_t mdiv = under_valgrind() ? 8 : 1;
  for (int pi = 0; pi < 3; pi++) {
    al_sgemm_force_path(paths[pi]);
    int same = 1;
    for (int s = 0; s < 4; s++)
      for (int t = 0; t < 4; t++)
        for (int th = 1; th <= 2; th++) {
          int64_t M = s == 0 ? shapes[s][0] / mdiv : shapes[s][0];
          same &= bias_case(1, t & 1, t >> 1, M, shapes[s][1], shapes[s][2], th);
        }
    al_sgemm_force_path(AL_SGEMM_AUTO);
    snprintf(name, sizeof name, "al_sgemm_bias (%s): 1 and 2 threads, row and column panels, K = 0: bitwise bias rows + beta = 1",
             pi == 0 ? "auto" : pi == 1 ? "attnlab kernel" : al_blas_info()->backend);
    CHECK(name, same, "differs");
  }
}

/* An FNV-1a hash of the outputs of a fixed set of products (all transposes, edge sizes, one
 * K-blocked case): the FMA levels must give the same one. */
static uint64_t products_digest(void) {
  static const int64_t shapes[][3] = {{17, 65, 63}, {257, 16, 15}, {1, 257, 17}, {65, 63, 1100}, {100, 64, 256}};
  uint64_t h = 0xcbf29ce484222325ull;
  for (int s = 0; s < 5; s++)
    for (int t = 0; t < 4; t++) {
      rs = 0x1234 + (uint64_t)(s * 4 + t);
      prob p = prob_new(t & 1, t >> 1, shapes[s][0], shapes[s][1], shapes[s][2], 1);
      prob_run(&p, 1, s & 1 ? 0.5f : 0);
      for (int64_t i = 0; i < p.M; i++)
        for (int64_t j = 0; j < p.N; j++) {
          uint32_t u;
          memcpy(&u, &p.C[i * p.ldc + j], 4);
          for (int b = 0; b < 4; b++) { h ^= (u >> (8 * b)) & 0xff; h *= 0x100000001b3ull; }
        }
      prob_free(&p);
    }
  return h;
}

/* The AVX-512 and AVX2 kernels, switched in one process, agree bitwise. */
static void test_fma_levels_agree(void) {
  const char *name = "gemm: the AVX-512 and AVX2 kernels give bitwise the same products";
  if (al_cpu_detect() < AL_CPU_AVX512) { check_skip(name, "this CPU has no AVX-512 (SKIPPED LOUDLY)"); return; }
  al_cpu_level start = al_cpu_active();
  uint64_t h[2] = {0, 0};
  const char *lv[2] = {"avx512", "avx2"}, *got[2] = {"", ""};
  int ok = 1;
  for (int i = 0; i < 2; i++) {
    ok &= al_cpu_set_level(lv[i]) == AL_OK;
    got[i] = al_gemm_level();
    h[i] = products_digest();
  }
  al_cpu_set_level(al_cpu_level_name(start));
  CHECK(name, ok && strcmp(got[0], "avx512") == 0 && strcmp(got[1], "avx2") == 0 && h[0] == h[1],
        "levels %s/%s, digests %016llx vs %016llx", got[0], got[1], (unsigned long long)h[0], (unsigned long long)h[1]);
}

int main(void) {
  al_set_num_threads(1);
  size_t mem0 = al_mem_live();
  test_first_gemm_race();   /* first: nothing may have set up BLAS before it */
  printf("gemm level: %s\n", al_gemm_level());
  test_reference();
  test_alpha_beta_edges();
  test_errors();
  test_panels();
  test_finish_transposed();
  test_threads(AL_SGEMM_AUTO, "auto");
  test_threads(AL_SGEMM_OWN, "attnlab kernel");
  test_threads(AL_SGEMM_BLAS, al_blas_info()->backend);
  test_sgemm_paths_agree();
  test_bias();
  test_fma_levels_agree();
  CHECK("gemm frees its packing buffers", al_mem_live() == mem0, "%zu bytes left", al_mem_live() - mem0);
  CHECK_EXIT();
}
