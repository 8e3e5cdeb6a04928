/* scripts/bench/bench_normalizers.c -- forward+backward time of every normalizer on an
 * attention score tensor {B,H,T,T} = {128,4,65,65} (rows = B*H*T = 33280, n = 65), 1 thread.
 *
 * Prints the median (and the minimum) over interleaved rounds (after warm-up) in microseconds
 * -- forward and
 * backward apart, then their sum and its ratio to our softmax -- and softmax's memory traffic
 * per second next to a plain memcpy moving the same bytes in the same run (the bound a softmax
 * can approach: it must read x, gout, out and write out, gin -- five tensors; the backward runs
 * in the _write mode that al_normalize uses, so gin is not read). Scores ~ N(0, scale^2)
 * (scale 1 as in the PyTorch anchors), gout ~ N(0, 1); HAE-style per-head alpha = 1.05 + 0.9
 * sigmoid(a_h) with a_h ~ N(0, 1), with the alpha gradient. Every row is different data, and
 * every round draws new rows (--fresh 1, the default; untimed, and at full size followed by a
 * 32 MB cache sweep so that no kernel finds them cached): a benchmark that repeats rows lets
 * the branch predictor learn them and flatters any kernel with data-dependent branches (by
 * 20-40% for the iterative ones here; with 2080 rows at --B 8 it learns them across rounds).
 *
 * Build: make bench (build/release/bench/bench_normalizers), or standalone from the repo root:
 *   gcc -std=c11 -D_GNU_SOURCE -O3 -march=native -fopenmp -Iinclude \
 *       scripts/bench/bench_normalizers.c core/norm/[a-z]*.c core/tensor/base.c \
 *       core/runtime/threads.c core/gemm/blas.c \
 *       -o build/bench_normalizers -ldl -lm
 * Run:  build/bench_normalizers [--reps N] [--threads N] [--scale S] [--B B --H H --T T]
 *                               [--fresh 0|1]
 * Keep the machine quiet (other processes distort medians on a 2-core box). */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnlab/base.h"
#include "attnlab/norm_registry.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static uint64_t rs = 0x2545F4914F6CDD1Dull;
static double unif(void) {
  rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
  return ((rs >> 11) + 0.5) * 0x1p-53;
}
static double normal(void) { return sqrt(-2.0 * log(unif())) * cos(6.283185307179586 * unif()); }

typedef struct {
  char name[64];
  const al_norm_desc *norm;   /* a row of the normalizer table */
  double ratio;               /* AL_NORM_P_RATIO rows */
} bench_t;

typedef struct {
  float *x, *out, *gout, *gin, *alpha, *galpha;
  int64_t rows, n;
  int iters;
} data_t;

/* Forward then backward (write mode, with the alpha gradient for alpha rows); *tf gets the
 * forward's seconds. */
static void run(const bench_t *b, data_t *d, double *tf) {
  al_norm_params p = {.ratio = b->ratio, .alpha = d->alpha, .max_iter = 50, .iters_used = &d->iters};
  double t0 = now();
  al_status st = b->norm->fwd(d->out, d->x, NULL, 1, d->rows, d->n, &p);
  *tf = now() - t0;
  if (st == AL_OK) st = b->norm->bwd_write(d->gin, d->galpha, d->gout, d->out, d->rows, d->n, &p);
  if (st != AL_OK) {
    fprintf(stderr, "%s: %s\n", b->name, al_errmsg());
    exit(1);
  }
}

static double median(double *t, int m) {
  qsort(t, m, sizeof(double), cmp_double);
  return m % 2 ? t[m / 2] : 0.5 * (t[m / 2 - 1] + t[m / 2]);
}

int main(int argc, char **argv) {
  int reps = 21, threads = 1, fresh = 1;
  long B = 128, H = 4, T = 65;
  double scale = 1.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--scale")) scale = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--B")) B = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--H")) H = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--T")) T = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--fresh")) fresh = atoi(argv[i + 1]);
    else { fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
  }
  if (reps < 1) reps = 1;
  omp_set_num_threads(threads);
  data_t d;
  d.rows = B * H * T;
  d.n = T;
  int64_t N = d.rows * d.n;
  size_t bytes = (size_t)N * sizeof(float);
  d.x = malloc(bytes); d.out = malloc(bytes); d.gout = malloc(bytes); d.gin = malloc(bytes);
  d.alpha = malloc(d.rows * sizeof(float)); d.galpha = malloc(d.rows * sizeof(float));
  for (int64_t i = 0; i < N; i++) { d.x[i] = (float)(scale * normal()); d.gout[i] = (float)normal(); }
  memset(d.out, 0, bytes); memset(d.gin, 0, bytes); memset(d.galpha, 0, d.rows * sizeof(float));
  float ah[64];
  for (long h = 0; h < H && h < 64; h++) ah[h] = (float)(1.05 + 0.9 / (1.0 + exp(-normal())));
  for (int64_t r = 0; r < d.rows; r++) d.alpha[r] = ah[(r / T) % H % 64];

  printf("attnlab normalizers: fwd+bwd on {%ld,%ld,%ld,%ld} (rows=%lld, n=%ld), %d thread(s), "
         "scores ~ N(0,%g^2), median of %d, %s rows each round\n", B, H, T, T, (long long)d.rows, T,
         threads, scale, reps, fresh ? "new" : "the same");
  size_t fbytes = (size_t)32 << 20;   /* the cache sweep after new rows */
  char *sweep = malloc(fbytes);
  memset(sweep, 0, fbytes);
  /* every row of the table (softmax first: the ratios are to it); alpha rows with per-head
   * alpha and its gradient, ratio rows at 0.125, 0.25 and 0.5 */
  bench_t benches[16];
  int nb = 0;
  for (int k = 0; k < AL_NORM_COUNT; k++) {
    const al_norm_desc *nd = al_norm_get((al_norm_kind)k);
    if (!nd) continue;
    if (nd->param == AL_NORM_P_RATIO) {
      static const double ratios[] = {0.125, 0.25, 0.5};
      for (int i = 0; i < 3 && nb < 16; i++, nb++) {
        benches[nb] = (bench_t){.norm = nd, .ratio = ratios[i]};
        snprintf(benches[nb].name, sizeof benches[nb].name, "%s %g", nd->name, ratios[i]);
      }
    } else if (nb < 16) {
      benches[nb] = (bench_t){.norm = nd};
      snprintf(benches[nb].name, sizeof benches[nb].name, "%s%s", nd->name,
               nd->param == AL_NORM_P_ALPHA ? " (per-head alpha, +dalpha)" : "");
      nb++;
    }
  }
  /* Interleaved rounds: every normalizer (and the memcpy) once per round, so a slow phase of
   * the machine hits all of them alike; medians over rounds. */
  double traffic = 5.0 * (double)bytes;      /* softmax fwd: read x, write out; bwd: read
                                                gout, out, write gin (not read: _write mode) */
  size_t cbytes = 5 * bytes / 2;             /* memcpy of 2.5 tensors: 2.5 read + 2.5 written */
  char *src = malloc(cbytes), *dst = malloc(cbytes);
  memset(src, 1, cbytes); memset(dst, 0, cbytes);
  double *t = malloc(sizeof(double) * (size_t)reps * (nb + 1));
  double *tfw = malloc(sizeof(double) * (size_t)reps * nb), tf;
  int iters[16] = {0};
  for (int w = 0; w < 2; w++) {
    for (int i = 0; i < nb; i++) run(&benches[i], &d, &tf);
    memcpy(dst, src, cbytes);
  }
  for (int r = 0; r < reps; r++) {
    if (fresh) {   /* new rows, untimed; then, unless all fits in cache anyway (--B 8), out of it */
      for (int64_t i = 0; i < N; i++) {
        d.x[i] = (float)(scale * normal());
        d.gout[i] = (float)normal();
      }
      if (traffic > 8e6) memset(sweep, r & 0xFF, fbytes);
    }
    for (int i = 0; i < nb; i++) {
      double t0 = now();
      run(&benches[i], &d, &tf);
      t[(size_t)i * reps + r] = now() - t0;
      tfw[(size_t)i * reps + r] = tf;
      if (benches[i].norm->param == AL_NORM_P_ALPHA && d.iters > iters[i]) iters[i] = d.iters;
    }
    double t0 = now();
    memcpy(dst, src, cbytes);
    t[(size_t)nb * reps + r] = now() - t0;
    src[r % cbytes] ^= dst[cbytes - 1 - r % cbytes];   /* keep the copies observable */
  }
  /* On a shared machine other processes' memory traffic comes and goes between rounds: the
   * ratio to softmax is also taken within each round (the kernels of a round run back to back)
   * and its median printed ("per round"), with the minimum time (the kernel closest to alone). */
  double *rr = malloc(sizeof(double) * (size_t)reps * nb);
  for (int i = 0; i < nb; i++)
    for (int r = 0; r < reps; r++) rr[(size_t)i * reps + r] = t[(size_t)i * reps + r] / t[r];
  double tsoft = median(t, reps);   /* (median() sorts: t[0] is then the minimum) */
  for (int i = 0; i < nb; i++) {
    double ti = i == 0 ? tsoft : median(t + (size_t)i * reps, reps);
    const double tmin = t[(size_t)i * reps];
    const double tfi = median(tfw + (size_t)i * reps, reps);
    printf("  %-42s fwd %8.1f  bwd %8.1f  sum %8.1f us  %5.2fx softmax  (per round %5.2fx; min %8.1f us)",
           benches[i].name, tfi * 1e6, (ti - tfi) * 1e6, ti * 1e6, ti / tsoft,
           median(rr + (size_t)i * reps, reps), tmin * 1e6);
    if (benches[i].norm->param == AL_NORM_P_ALPHA) printf("  (max passes per row %d)", iters[i]);
    printf("\n");
  }
  double tmem = median(t + (size_t)nb * reps, reps);
  printf("  memory: softmax fwd+bwd moves %.1f MB in %.1f us = %.1f GB/s; memcpy of the same "
         "%.1f MB (half read, half written) takes %.1f us = %.1f GB/s -> softmax at %.0f%% of "
         "memcpy speed\n",
         traffic / 1e6, tsoft * 1e6, traffic / tsoft / 1e9, traffic / 1e6, tmem * 1e6,
         traffic / tmem / 1e9, 100.0 * tmem / tsoft);
  free(t); free(tfw); free(rr); free(src); free(dst); free(sweep);
  free(d.x); free(d.out); free(d.gout); free(d.gin); free(d.alpha); free(d.galpha);
  return 0;
}
