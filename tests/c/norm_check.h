/* tests/c/norm_check.h -- what the normalizer tests (tests/c/test_norm_*.c) share: a seeded
 * random stream (splitmix64, one per test program), the registry's rows as the test's ops, the
 * scalar references of the normalizers' own files (core/norm/<name>.c) as oracles, and the
 * comparison against them. Every check prints PASS/FAIL/SKIP (tests/c/check.h). */
#ifndef ATTNLAB_TEST_NORM_CHECK_H
#define ATTNLAB_TEST_NORM_CHECK_H

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
static inline uint64_t rng_next(void) {   /* splitmix64 */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
/* The normalizer checks were one program once, drawing from this one stream in turn; each now
 * starts at the draw where it started there (rng_at(draws): the state after that many draws),
 * so that its inputs are still those it was written and tuned against. */
static inline void rng_at(uint64_t draws) { rng_state = 0x9E3779B97F4A7C15ull * (draws + 1); }
static inline double rng_unif(void) { return (rng_next() >> 11) * 0x1p-53; }
static inline double rng_normal(void) {
  double u1 = rng_unif(), u2 = rng_unif();
  if (u1 < 1e-300) u1 = 1e-300;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
static inline void fill_randn(float *x, long n, double scale) {
  for (long i = 0; i < n; i++) x[i] = (float)(scale * rng_normal());
}

/* ---------------------------------------------------------------- the ops: the registry's rows */
/* The test's names for the kinds it has closed forms for; NOPS covers every row of the table, so
 * a kind added there is checked by every loop over the kinds, a row without its scalar
 * reference stops the tests (ref_row, below), and a kind without hand-derived cases fails
 * test_norm_reference's "has hand-derived cases" check. */
enum { SOFTMAX = AL_NORM_SOFTMAX, SPARSEMAX = AL_NORM_SPARSEMAX, ENTMAX15 = AL_NORM_ENTMAX15,
       BISECT = AL_NORM_ENTMAX_BISECT, TOPK = AL_NORM_TOPK_SOFTMAX, NOPS = AL_NORM_COUNT };
/* The registry's row of a kind; a kind of the enum without its row stops the test with a line
 * saying so (al_norm_get gives NULL: dereferencing it was a bare segfault). */
static inline const al_norm_desc *op_row(int op) {
  const al_norm_desc *d = al_norm_get((al_norm_kind)op);
  if (!d) {
    printf("FAIL: kind %d of al_norm_kind has no row in core/norm/registry.c (AL_NORMS)\n", op);
    exit(1);
  }
  return d;
}
#define op_name(op) (op_row(op)->name)
static int last_iters;

/* alpha: per-row array (BISECT); ratio (TOPK). */
static inline al_status op_fwd(int op, float *out, const float *x, const uint8_t *keep, long mrows,
                        long rows, long n, const float *alpha, double ratio) {
  al_norm_params p = {.ratio = ratio, .alpha = alpha, .max_iter = 100, .iters_used = &last_iters};
  return op_row(op)->fwd(out, x, keep, mrows, rows, n, &p);
}
static inline al_status op_bwd(int op, float *gin, float *galpha, const float *gout, const float *out,
                        long rows, long n, const float *alpha) {
  al_norm_params p = {.alpha = alpha};
  return op_row(op)->bwd(gin, galpha, gout, out, rows, n, &p);
}

/* ---------------------------------------------------------------- double references */
/* The scalar reference of the normalizer's own file (its registry row): one row in double;
 * alpha for the alpha rows (BISECT), ratio for the ratio rows (TOPK). */
static inline void ref_row(int op, double *o, const float *x, const uint8_t *kr, long n, double alpha,
                    double ratio) {
  const al_norm_desc *d = op_row(op);
  if (!d->ref_fwd || !d->ref_bwd) {   /* a row without its reference: no check can pass */
    fprintf(stderr, "norm tests: the row of %s has no scalar reference\n", d->name);
    exit(1);
  }
  d->ref_fwd(o, x, kr, n, d->param == AL_NORM_P_ALPHA ? alpha : ratio);
}

/* max |a - b| / (atol + rtol |b|) against a double reference; *maxd gets max |a - b|. */
static inline double cmp_ref(const float *a, const double *b, long n, double atol, double rtol,
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

static inline float *falloc(long n) { return calloc(n > 0 ? n : 1, sizeof(float)); }
static inline double *dalloc(long n) { return calloc(n > 0 ? n : 1, sizeof(double)); }

static const double op_alpha_list[] __attribute__((unused)) = {1.05, 1.25, 1.5, 1.75, 2.0, 2.6};

static inline al_status op_bwd_write(int op, float *gin, float *galpha, const float *gout,
                              const float *out, long rows, long n, const float *alpha) {
  al_norm_params p = {.alpha = alpha};
  return op_row(op)->bwd_write(gin, galpha, gout, out, rows, n, &p);
}


#endif
