/* tests/embed/capi.c -- attnlab from C alone: no Lua anywhere.
 *
 * Builds against an installed attnlab (see README, "Embedding attnlab"):
 *   cc -std=c11 -O2 -o capi tests/embed/capi.c $(pkg-config --cflags --libs attnlab) -lm
 *
 * What it shows, and checks (exit status 1 on any failure):
 *  1. tensors: al_tensor_new, a seeded al_rng generator of our own, the data pointer;
 *  2. a normalizer through autograd: y = entmax15(x) over the last dim, L = sum(w * y),
 *     al_backward -> x->grad; the rows of y sum to 1 and have exact zeros (sparsity);
 *  3. the same normalizer as a raw kernel pair over float buffers (al_entmax15_fwd and
 *     al_entmax15_bwd), which must agree bitwise with (2), and central differences;
 *  4. errors: a status code plus al_errmsg(), never an abort;
 *  5. the library's version against the headers'. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <attnlab/normalizers.h>
#include <attnlab/ops.h>
#include <attnlab/rng.h>
#include <attnlab/version.h>

#define ROWS 4
#define N 7

static int failures;

static void check(int ok, const char *what) {
  printf("%s: %s\n", ok ? "PASS" : "FAIL", what);
  if (!ok) failures++;
}

/* sum(w * entmax15(x)) in double, for central differences */
static double loss_raw(const float *x, const float *w) {
  float y[ROWS * N];
  double s = 0;
  if (al_entmax15_fwd(y, x, NULL, 1, ROWS, N) != AL_OK) return NAN;
  for (int i = 0; i < ROWS * N; i++) s += (double)w[i] * y[i];
  return s;
}

int main(void) {
  int64_t shape[2] = {ROWS, N};
  al_rng gen;
  al_status st;

  printf("attnlab %s (headers %s)\n", al_version(), ATTNLAB_VERSION_STRING);
  check(al_version_number() / 10000 == ATTNLAB_VERSION_MAJOR, "library major version == headers'");

  /* 1. tensors: x (ROWS, N) ~ N(0, 1), w the loss weights, from our own generator */
  al_rng_seed(&gen, 42);
  al_tensor *x = al_tensor_new(AL_F32, 2, shape), *w = al_tensor_new(AL_F32, 2, shape);
  if (!x || !w) { fprintf(stderr, "out of memory\n"); return 1; }
  al_rng_normal(&gen, al_f32(x), al_numel(x), 0.0f, 1.0f);
  al_rng_uniform(&gen, al_f32(w), al_numel(w), -1.0f, 1.0f);
  x->requires_grad = 1;

  /* 2. autograd: y = entmax15(x, dim -1), L = sum(w * y), dL/dx */
  al_tensor *y = NULL, *wy = NULL, *loss = NULL;
  st = al_normalize(&y, AL_NORM_ENTMAX15, x, -1, NULL, 0.0, NULL, 0.0, 0);
  if (!st) st = al_mul(&wy, w, y);
  if (!st) st = al_sum_all(&loss, wy);
  if (!st) st = al_backward(loss, NULL, 0);
  check(st == AL_OK, st ? al_errmsg() : "entmax15 forward + backward through autograd");
  if (st) return 1;
  int zeros = 0, rows_ok = 1;
  for (int r = 0; r < ROWS; r++) {
    double s = 0;
    for (int j = 0; j < N; j++) {
      float v = al_f32(y)[r * N + j];
      s += v;
      zeros += v == 0.0f;
    }
    rows_ok &= fabs(s - 1.0) < 1e-5;
  }
  printf("y row 1: ");
  for (int j = 0; j < N; j++) printf("%.4f ", al_f32(y)[j]);
  printf("\nloss %.6f, %d exact zeros of %d\n", al_f32(loss)[0], zeros, ROWS * N);
  check(rows_ok, "every row of entmax15(x) sums to 1");
  check(zeros > 0, "entmax15 gives exact zeros (sparse rows)");
  check(x->grad != NULL, "x.grad is set after al_backward");

  /* 3. the raw kernels: the same numbers, bitwise; gradient vs central differences */
  float yr[ROWS * N], gr[ROWS * N];
  memset(gr, 0, sizeof gr); /* _bwd accumulates into gin */
  st = al_entmax15_fwd(yr, al_f32(x), NULL, 1, ROWS, N);
  if (!st) st = al_entmax15_bwd(gr, al_f32(w), yr, ROWS, N);
  check(st == AL_OK, "raw kernels al_entmax15_fwd / _bwd");
  check(memcmp(yr, al_f32(y), sizeof yr) == 0, "raw forward == autograd forward (bitwise)");
  check(memcmp(gr, al_f32(x->grad), sizeof gr) == 0, "raw backward == autograd gradient (bitwise)");
  double worst = 0, eps = 1e-3;
  float xp[ROWS * N];
  memcpy(xp, al_f32(x), sizeof xp);
  for (int i = 0; i < ROWS * N; i++) {
    float v = xp[i];
    xp[i] = v + (float)eps;
    double lp = loss_raw(xp, al_f32(w));
    xp[i] = v - (float)eps;
    double lm = loss_raw(xp, al_f32(w));
    xp[i] = v;
    double num = (lp - lm) / (2 * eps), err = fabs(num - gr[i]) / (1e-3 + 1e-2 * fabs(num));
    if (err > worst) worst = err;
  }
  printf("gradient vs central differences: worst scaled error %.3g (1 = tolerance)\n", worst);
  check(worst < 1.0, "gradient matches central differences");

  /* 4. errors are statuses with a message */
  al_tensor *bad = NULL;
  st = al_normalize(&bad, AL_NORM_ENTMAX15, x, 5, NULL, 0.0, NULL, 0.0, 0);
  printf("error for dim 5 of a 2-dim tensor: %s: %s\n", al_status_name(st), al_errmsg());
  check(st == AL_EINVAL && bad == NULL && strlen(al_errmsg()) > 0, "bad dim -> AL_EINVAL + message");

  al_tensor_release(loss);
  al_tensor_release(wy);
  al_tensor_release(y);
  al_tensor_release(w);
  al_tensor_release(x);
  printf("live tensor bytes after release: %zu\n", al_mem_live());
  check(al_mem_live() == 0, "every tensor byte freed");
  printf("%s\n", failures ? "capi: FAILED" : "capi: ok");
  return failures ? 1 : 0;
}
