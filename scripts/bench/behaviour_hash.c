/* scripts/bench/behaviour_hash.c -- one SHA-256 per case of every normalizer's and mixer's
 * output and gradient bytes, on fixed pseudo-random inputs: the evidence that a refactoring
 * is behaviour-neutral. Run it before and after a change, at each CPU level, and diff:
 *
 *   make bench
 *   for l in avx512 avx2 generic; do
 *     ATTNLAB_CPU=$l build/release/bench/behaviour_hash > /tmp/hash-$l.txt; done
 *
 * Cases (one line each, "<case> <sha256>"):
 *   kernel/<norm>/<rows>x<n>/<variant>   the C kernels of normalizers.h: forward output, the
 *                                         accumulating backward (into a nonzero gin) and the
 *                                         _write backward, and for entmax_bisect galpha; with
 *                                         and without a keep mask, ties and -inf entries;
 *                                         every top-k ratio of the study and a few odd ones
 *   op/<norm>/...                         al_normalize along the last and a middle dim, with a
 *                                         mask, its autograd backward (and alpha's gradient)
 *   attention/<norm>/...                  al_attention forward, weights, and backward to qkv
 *                                         and the per-head alpha (hae)
 *   unary/<op>                            the elementwise ops built on the fast-math helpers
 *                                         (exp, sigmoid, silu, softplus, tanh, gelu), forward
 *                                         and backward, on normal inputs
 *   mixer/bilstm|bimamba/...              the mixer cores, forward and backward (every grad)
 * Inputs come from a fixed xorshift stream, so the lines depend only on the library.
 * Everything runs on one thread (results are bitwise the same for any count: the tests check
 * that), so that a kernel forward that has not returned after 5 s can be abandoned (siglongjmp
 * out of it) and its case printed as HANG: at 19008a5, top-k's forward does not terminate on
 * some of these inputs (rows with ties), e.g. kernel/topk_softmax0.3/34x65/mask. */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/mixers.h"
#include "attnlab/normalizers.h"
#include "attnlab/ops.h"
#include "attnlab/sha256.h"
#include "attnlab/threads.h"

static uint64_t rs;
static void seed(uint64_t s) { rs = s * 0x9E3779B97F4A7C15ull + 1; }
static double unif(void) {   /* (0, 1) */
  rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
  return ((rs >> 11) + 0.5) * 0x1p-53;
}
static double normal(void) { return sqrt(-2.0 * log(unif())) * cos(6.283185307179586 * unif()); }
static float *fvec(int64_t n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(float)); }
static void randn(float *x, int64_t n, double s) { for (int64_t i = 0; i < n; i++) x[i] = (float)(s * normal()); }

static void emit(const char *name, const void *p, size_t nbytes) {
  uint8_t d[AL_SHA256_SIZE];
  char hex[AL_SHA256_HEX];
  al_sha256(p, nbytes, d);
  al_sha256_hex(d, hex);
  printf("%-48s %s\n", name, hex);
}
static void emit_status(const char *name, al_status st) {
  if (st) printf("%-48s status %d: %s\n", name, (int)st, al_errmsg());
}
static void emit_tensor(const char *name, al_tensor *t) {
  if (!t) { printf("%-48s (none)\n", name); return; }
  al_tensor *c = NULL;
  if (al_contiguous_ref(&c, t)) { printf("%-48s (error)\n", name); return; }
  emit(name, al_f32(c), sizeof(float) * (size_t)al_numel(c));
  al_tensor_release(c);
}

/* ---- kernels --------------------------------------------------------------------------- */
enum { SOFTMAX, SPARSEMAX, ENTMAX15, BISECT, TOPK, NNORM };
static const char *NAMES[NNORM] = {"softmax", "sparsemax", "entmax15", "entmax_bisect", "topk_softmax"};
static const double RATIOS[] = {0.1, 0.125, 0.25, 0.3, 0.5, 0.75, 1.0};

static al_status fwd(int k, float *o, const float *x, const float *a, double r, const uint8_t *keep,
                     int64_t mrows, int64_t rows, int64_t n) {
  switch (k) {
    case SOFTMAX: return al_softmax_fwd(o, x, keep, mrows, rows, n);
    case SPARSEMAX: return al_sparsemax_fwd(o, x, keep, mrows, rows, n);
    case ENTMAX15: return al_entmax15_fwd(o, x, keep, mrows, rows, n);
    case BISECT: return al_entmax_bisect_fwd(o, x, a, keep, mrows, rows, n, 50, NULL);
    case TOPK: return al_topk_softmax_fwd(o, x, r, keep, mrows, rows, n);
  }
  return AL_EINVAL;
}
static al_status bwd(int k, int write, float *gi, float *ga, const float *g, const float *o,
                     const float *a, int64_t rows, int64_t n) {
  switch (k) {
    case SOFTMAX: return (write ? al_softmax_bwd_write : al_softmax_bwd)(gi, g, o, rows, n);
    case SPARSEMAX: return (write ? al_sparsemax_bwd_write : al_sparsemax_bwd)(gi, g, o, rows, n);
    case ENTMAX15: return (write ? al_entmax15_bwd_write : al_entmax15_bwd)(gi, g, o, rows, n);
    case BISECT: return (write ? al_entmax_bisect_bwd_write : al_entmax_bisect_bwd)(gi, ga, g, o, a, rows, n);
    case TOPK: return (write ? al_topk_softmax_bwd_write : al_topk_softmax_bwd)(gi, g, o, rows, n);
  }
  return AL_EINVAL;
}

static sigjmp_buf hang_jb;
static void on_alarm(int sig) { siglongjmp(hang_jb, 1); }

/* One kernel case: rows x n scores ~ N(0, scale^2), every 7th row with ties (values rounded
 * to 0.5), every 5th entry of every 3rd row -inf; masked: keep (mrows = 2, rows even). */
static void kernel_case(int k, int64_t rows, int64_t n, double scale, int masked, double ratio,
                        double alpha_lo, double alpha_hi) {
  char nm[128], tag[96];
  if (k == TOPK) snprintf(tag, sizeof tag, "kernel/%s%g/%lldx%lld%s%s", NAMES[k], ratio, (long long)rows, (long long)n, scale > 10 ? "/x1000" : "", masked ? "/mask" : "");
  else if (k == BISECT) snprintf(tag, sizeof tag, "kernel/%s[%g,%g]/%lldx%lld%s%s", NAMES[k], alpha_lo, alpha_hi, (long long)rows, (long long)n, scale > 10 ? "/x1000" : "", masked ? "/mask" : "");
  else snprintf(tag, sizeof tag, "kernel/%s/%lldx%lld%s%s", NAMES[k], (long long)rows, (long long)n, scale > 10 ? "/x1000" : "", masked ? "/mask" : "");
  seed((uint64_t)(rows * 1000003 + n * 31 + k * 7 + masked));
  int64_t m = rows * n, mrows = masked ? 2 : 1;
  float *x = fvec(m), *o = fvec(m), *g = fvec(m), *gi = fvec(m), *a = fvec(rows), *ga = fvec(rows);
  uint8_t *keep = masked ? malloc((size_t)(mrows * n)) : NULL;
  randn(x, m, scale);
  randn(g, m, 1.0);
  for (int64_t r = 0; r < rows; r++) {
    a[r] = (float)(alpha_lo + (alpha_hi - alpha_lo) * unif());
    if (r % 7 == 3) for (int64_t j = 0; j < n; j++) x[r * n + j] = roundf(2.0f * x[r * n + j]) * 0.5f;
    if (r % 3 == 2) for (int64_t j = 0; j < n; j += 5) x[r * n + j] = -INFINITY;
  }
  if (keep) for (int64_t i = 0; i < mrows * n; i++) keep[i] = unif() < 0.7;
  snprintf(nm, sizeof nm, "%s/fwd", tag);
  al_status st;
  if (sigsetjmp(hang_jb, 1)) {
    printf("%-48s HANG\n", nm);
    free(x); free(o); free(g); free(gi); free(a); free(ga); free(keep);
    return;
  }
  alarm(5);
  st = fwd(k, o, x, a, ratio, keep, mrows, rows, n);
  alarm(0);
  if (st) emit_status(nm, st); else emit(nm, o, sizeof(float) * (size_t)m);
  /* accumulate into gin = 0.25 * g, galpha = 0.5 */
  for (int64_t i = 0; i < m; i++) gi[i] = 0.25f * g[i];
  for (int64_t r = 0; r < rows; r++) ga[r] = 0.5f;
  st = bwd(k, 0, gi, ga, g, o, a, rows, n);
  snprintf(nm, sizeof nm, "%s/bwd", tag);
  if (st) emit_status(nm, st); else emit(nm, gi, sizeof(float) * (size_t)m);
  if (k == BISECT) { snprintf(nm, sizeof nm, "%s/bwd.galpha", tag); emit(nm, ga, sizeof(float) * (size_t)rows); }
  for (int64_t i = 0; i < m; i++) gi[i] = NAN;
  for (int64_t r = 0; r < rows; r++) ga[r] = NAN;
  st = bwd(k, 1, gi, ga, g, o, a, rows, n);
  snprintf(nm, sizeof nm, "%s/bwd_write", tag);
  if (st) emit_status(nm, st); else emit(nm, gi, sizeof(float) * (size_t)m);
  if (k == BISECT) { snprintf(nm, sizeof nm, "%s/bwd_write.galpha", tag); emit(nm, ga, sizeof(float) * (size_t)rows); }
  free(x); free(o); free(g); free(gi); free(a); free(ga); free(keep);
}

static void kernels(void) {
  static const int64_t shapes[][2] = {{1, 1}, {3, 2}, {7, 5}, {16, 16}, {33, 17}, {40, 31}, {34, 65},
                                      {12, 100}, {5, 257}, {2200, 17}, {600, 65}};
  const int ns = (int)(sizeof shapes / sizeof *shapes);
  for (int k = 0; k < NNORM; k++)
    for (int s = 0; s < ns; s++)
      for (int masked = 0; masked < 2; masked++) {
        int64_t rows = shapes[s][0] + (masked && shapes[s][0] % 2), n = shapes[s][1];
        if (k == TOPK) {
          for (size_t i = 0; i < sizeof RATIOS / sizeof *RATIOS; i++) kernel_case(k, rows, n, 1.0, masked, RATIOS[i], 0, 0);
        } else if (k == BISECT) {
          kernel_case(k, rows, n, 1.0, masked, 0, 1.05, 1.95);
          kernel_case(k, rows, n, 1.0, masked, 0, 1.001, 1.02);
          kernel_case(k, rows, n, 1.0, masked, 0, 2.0, 3.0);
        } else {
          kernel_case(k, rows, n, 1.0, masked, 0, 0, 0);
        }
      }
  /* large scores */
  for (int k = 0; k < NNORM; k++) kernel_case(k, 40, 65, 1000.0, 1, 0.25, 1.05, 1.95);
}

/* ---- ops (autograd) -------------------------------------------------------------------- */
static al_tensor *rand_tensor(int ndim, const int64_t *shape, double s, int grad) {
  al_tensor *t = al_tensor_new(AL_F32, ndim, shape);
  randn(al_f32(t), al_numel(t), s);
  t->requires_grad = (uint8_t)grad;
  return t;
}

static void op_case(int k, int dim, int masked, int alpha_tensor, double ratio) {
  char tag[96], nm[128];
  snprintf(tag, sizeof tag, "op/%s%s/dim%d%s%s", NAMES[k], k == TOPK ? (ratio == 0.25 ? "0.25" : "0.5") : "", dim,
           masked ? "/mask" : "", alpha_tensor ? "/alpha_t" : "");
  seed((uint64_t)(k * 100 + dim * 10 + masked * 3 + alpha_tensor));
  int64_t sh[3] = {3, 5, 17}, mshape[3] = {3, 1, 17}, ash[3] = {3, 1, 1};
  if (dim == 1) { ash[1] = 1; ash[2] = 17; mshape[1] = 5; mshape[2] = 1; }
  al_tensor *x = rand_tensor(3, sh, 1.5, 1), *mask = NULL, *alpha = NULL, *y = NULL, *g = rand_tensor(3, sh, 1.0, 0);
  if (masked) {
    mask = al_tensor_new(AL_F32, 3, mshape);
    for (int64_t i = 0; i < al_numel(mask); i++) al_f32(mask)[i] = unif() < 0.75 ? 1.0f : 0.0f;
  }
  if (alpha_tensor) {
    alpha = al_tensor_new(AL_F32, 3, ash);
    for (int64_t i = 0; i < al_numel(alpha); i++) al_f32(alpha)[i] = (float)(1.05 + 0.9 * unif());
    alpha->requires_grad = 1;
  }
  al_status st = al_normalize(&y, (al_norm_kind)k, x, dim, mask, ratio, alpha, 1.5, 50);
  snprintf(nm, sizeof nm, "%s/fwd", tag);
  if (st) emit_status(nm, st);
  else {
    emit_tensor(nm, y);
    st = al_backward(y, g, 0);
    snprintf(nm, sizeof nm, "%s/bwd.x", tag);
    if (st) emit_status(nm, st); else emit_tensor(nm, x->grad);
    if (alpha) { snprintf(nm, sizeof nm, "%s/bwd.alpha", tag); emit_tensor(nm, alpha->grad); }
  }
  al_tensor_release(y); al_tensor_release(x); al_tensor_release(g); al_tensor_release(mask); al_tensor_release(alpha);
}

static void attention_case(int k, int64_t B, int64_t N, int64_t D, int64_t H, int masked, int alpha_tensor,
                           double ratio) {
  char tag[96], nm[128];
  snprintf(tag, sizeof tag, "attention/%s%s/B%lldN%lldD%lldH%lld%s%s", NAMES[k],
           k == TOPK ? (ratio == 0.25 ? "0.25" : ratio == 0.125 ? "0.125" : "0.5") : "",
           (long long)B, (long long)N, (long long)D, (long long)H, masked ? "/mask" : "", alpha_tensor ? "/hae" : "");
  seed((uint64_t)(k * 1000 + N * 10 + masked * 3 + alpha_tensor));
  al_tensor *qkv = rand_tensor(3, (int64_t[]){B, N, 3 * D}, 1.0, 1), *g = rand_tensor(3, (int64_t[]){B, N, D}, 1.0, 0);
  al_tensor *mask = NULL, *alpha = NULL, *y = NULL, *P = NULL;
  if (masked) {
    mask = al_tensor_new(AL_F32, 2, (int64_t[]){B, N});
    for (int64_t i = 0; i < B * N; i++) al_f32(mask)[i] = (i % N == 0 || unif() < 0.8) ? 1.0f : 0.0f;
  }
  if (alpha_tensor) {
    alpha = al_tensor_new(AL_F32, 1, (int64_t[]){H});
    for (int64_t h = 0; h < H; h++) al_f32(alpha)[h] = (float)(1.05 + 0.9 / (1 + exp(-normal())));
    alpha->requires_grad = 1;
  }
  al_attention_opts o = {.heads = H, .scale = 1.0 / sqrt((double)(D / H)), .kind = (al_norm_kind)k, .ratio = ratio,
                         .alpha = alpha, .alpha_value = 1.5, .max_iter = 50, .key_mask = mask};
  al_status st = al_attention(&y, &P, qkv, &o);
  snprintf(nm, sizeof nm, "%s/fwd", tag);
  if (st) emit_status(nm, st);
  else {
    emit_tensor(nm, y);
    snprintf(nm, sizeof nm, "%s/weights", tag);
    emit_tensor(nm, P);
    st = al_backward(y, g, 0);
    snprintf(nm, sizeof nm, "%s/bwd.qkv", tag);
    if (st) emit_status(nm, st); else emit_tensor(nm, qkv->grad);
    if (alpha) { snprintf(nm, sizeof nm, "%s/bwd.alpha", tag); emit_tensor(nm, alpha->grad); }
  }
  al_tensor_release(y); al_tensor_release(P); al_tensor_release(qkv); al_tensor_release(g);
  al_tensor_release(mask); al_tensor_release(alpha);
}

static void ops(void) {
  for (int k = 0; k < NNORM; k++)
    for (int dim = 1; dim <= 2; dim++)
      for (int masked = 0; masked < 2; masked++) {
        if (k == BISECT) { op_case(k, dim, masked, 0, 0); op_case(k, dim, masked, 1, 0); }
        else if (k == TOPK) { op_case(k, dim, masked, 0, 0.25); op_case(k, dim, masked, 0, 0.5); }
        else op_case(k, dim, masked, 0, 0);
      }
  static const int64_t shapes[][4] = {{2, 17, 12, 3}, {3, 65, 32, 4}, {1, 5, 6, 2}};
  for (int k = 0; k < NNORM; k++)
    for (int s = 0; s < 3; s++)
      for (int masked = 0; masked < 2; masked++) {
        const int64_t *d = shapes[s];
        if (k == BISECT) { attention_case(k, d[0], d[1], d[2], d[3], masked, 0, 0); attention_case(k, d[0], d[1], d[2], d[3], masked, 1, 0); }
        else if (k == TOPK) for (int r = 0; r < 3; r++) attention_case(k, d[0], d[1], d[2], d[3], masked, 0, (double[]){0.125, 0.25, 0.5}[r]);
        else attention_case(k, d[0], d[1], d[2], d[3], masked, 0, 0);
      }
}

static void unary(void) {
  static const al_unop opsl[] = {AL_EXP, AL_SIGMOID, AL_SILU, AL_SOFTPLUS, AL_TANH, AL_GELU, AL_LOG1P, AL_ERF};
  for (size_t i = 0; i < sizeof opsl / sizeof *opsl; i++) {
    char nm[128];
    seed(77 + i);
    al_tensor *x = rand_tensor(1, (int64_t[]){1031}, 4.0, 1), *y = NULL, *g = rand_tensor(1, (int64_t[]){1031}, 1.0, 0);
    if (opsl[i] == AL_LOG1P) for (int64_t j = 0; j < 1031; j++) al_f32(x)[j] = fabsf(al_f32(x)[j]);
    al_status st = al_unary(&y, opsl[i], x);
    snprintf(nm, sizeof nm, "unary/%s/fwd", al_unop_name(opsl[i]));
    if (st) emit_status(nm, st);
    else {
      emit_tensor(nm, y);
      st = al_backward(y, g, 0);
      snprintf(nm, sizeof nm, "unary/%s/bwd", al_unop_name(opsl[i]));
      if (st) emit_status(nm, st); else emit_tensor(nm, x->grad);
    }
    al_tensor_release(x); al_tensor_release(y); al_tensor_release(g);
  }
}

/* ---- mixers ---------------------------------------------------------------------------- */
static void bilstm_case(int64_t B, int64_t T, int64_t C, int64_t H, int masked) {
  char tag[96], nm[128];
  snprintf(tag, sizeof tag, "mixer/bilstm/B%lldT%lldC%lldH%lld%s", (long long)B, (long long)T, (long long)C, (long long)H, masked ? "/mask" : "");
  seed((uint64_t)(B * 1000 + T * 10 + C + masked));
  int64_t hd = C / H, nw = H * 4 * hd * hd, nb = H * 4 * hd;
  al_bilstm_dims d = {B, T, C, H};
  al_bilstm_params p;
  al_bilstm_grads q;
  float *x = fvec(B * T * C), *y = fvec(B * T * 2 * C), *gy = fvec(B * T * 2 * C), *dx = fvec(B * T * C);
  float *w[2][4], *gw[2][4];
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < 4; i++) {
      int64_t sz = i < 2 ? nw : nb;
      w[k][i] = fvec(sz); gw[k][i] = fvec(sz);
      randn(w[k][i], sz, 1.0 / sqrt((double)hd));
    }
  for (int k = 0; k < 2; k++) {
    p.w_ih[k] = w[k][0]; p.w_hh[k] = w[k][1]; p.b_ih[k] = w[k][2]; p.b_hh[k] = w[k][3];
    q.w_ih[k] = gw[k][0]; q.w_hh[k] = gw[k][1]; q.b_ih[k] = gw[k][2]; q.b_hh[k] = gw[k][3];
  }
  randn(x, B * T * C, 1.0);
  randn(gy, B * T * 2 * C, 1.0);
  uint8_t *keep = masked ? malloc((size_t)(B * T)) : NULL;
  if (keep) for (int64_t i = 0; i < B * T; i++) keep[i] = i % T == 0 || unif() < 0.7;
  al_bilstm_ws *ws = NULL;
  al_status st = al_bilstm_fwd(y, &ws, x, keep, &p, &d);
  snprintf(nm, sizeof nm, "%s/fwd", tag);
  if (st) emit_status(nm, st);
  else {
    emit(nm, y, sizeof(float) * (size_t)(B * T * 2 * C));
    st = al_bilstm_bwd(dx, &q, gy, ws, x, &p);
    snprintf(nm, sizeof nm, "%s/bwd.x", tag);
    if (st) emit_status(nm, st);
    else {
      emit(nm, dx, sizeof(float) * (size_t)(B * T * C));
      al_sha256_ctx c;
      uint8_t dg[AL_SHA256_SIZE];
      char hex[AL_SHA256_HEX];
      al_sha256_init(&c);
      for (int k = 0; k < 2; k++)
        for (int i = 0; i < 4; i++) al_sha256_update(&c, gw[k][i], sizeof(float) * (size_t)(i < 2 ? nw : nb));
      al_sha256_final(&c, dg);
      al_sha256_hex(dg, hex);
      printf("%-48s %s\n", (snprintf(nm, sizeof nm, "%s/bwd.params", tag), nm), hex);
    }
  }
  al_bilstm_ws_free(ws);
  for (int k = 0; k < 2; k++) for (int i = 0; i < 4; i++) { free(w[k][i]); free(gw[k][i]); }
  free(x); free(y); free(gy); free(dx); free(keep);
}

static void bimamba_case(int64_t B, int64_t T, int64_t E, int64_t H, int64_t N, int64_t R, int64_t K, int masked,
                         double xscale) {
  char tag[112], nm[144];
  snprintf(tag, sizeof tag, "mixer/bimamba/B%lldT%lldE%lldH%lldN%lldR%lldK%lld%s%s", (long long)B, (long long)T,
           (long long)E, (long long)H, (long long)N, (long long)R, (long long)K, masked ? "/mask" : "",
           xscale > 5 ? "/x8" : "");
  seed((uint64_t)(B * 1000 + T * 10 + E + masked + H * 7));
  int64_t Eh = E / H, P = R + 2 * N;
  int64_t sz[7] = {E * K, E, H * P * Eh, E * R, E, E * N, E};
  al_bimamba_dims d = {B, T, E, H, N, R, K, 0};
  al_bimamba_params p;
  al_bimamba_grads q;
  float *w[2][7], *gw[2][7];
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < 7; i++) { w[k][i] = fvec(sz[i]); gw[k][i] = fvec(sz[i]); }
  for (int k = 0; k < 2; k++) {
    randn(w[k][0], sz[0], 0.5);
    randn(w[k][1], sz[1], 0.2);
    randn(w[k][2], sz[2], 1.0 / sqrt((double)Eh));
    randn(w[k][3], sz[3], 1.0 / sqrt((double)R));
    for (int64_t e = 0; e < E; e++) w[k][4][e] = (float)(-1.0 + 0.5 * normal());
    for (int64_t e = 0; e < E; e++)
      for (int64_t n = 0; n < N; n++) w[k][5][e * N + n] = (float)(log((double)(n + 1)) + 0.1 * normal());
    for (int64_t e = 0; e < E; e++) w[k][6][e] = (float)(1.0 + 0.5 * normal());
    p.conv_w[k] = w[k][0]; p.conv_b[k] = w[k][1]; p.x_proj[k] = w[k][2]; p.dt_w[k] = w[k][3];
    p.dt_b[k] = w[k][4]; p.A_log[k] = w[k][5]; p.D[k] = w[k][6];
    q.conv_w[k] = gw[k][0]; q.conv_b[k] = gw[k][1]; q.x_proj[k] = gw[k][2]; q.dt_w[k] = gw[k][3];
    q.dt_b[k] = gw[k][4]; q.A_log[k] = gw[k][5]; q.D[k] = gw[k][6];
  }
  int64_t m = B * T * E;
  float *x = fvec(m), *z = fvec(m), *out = fvec(m), *gout = fvec(m), *dx = fvec(m), *dz = fvec(m);
  randn(x, m, xscale); randn(z, m, xscale); randn(gout, m, 1.0);
  uint8_t *keep = masked ? malloc((size_t)(B * T)) : NULL;
  if (keep) for (int64_t i = 0; i < B * T; i++) keep[i] = i % T == 0 || unif() < 0.7;
  al_bimamba_ws *ws = NULL;
  al_status st = al_bimamba_fwd(out, &ws, x, z, keep, &p, &d);
  snprintf(nm, sizeof nm, "%s/fwd", tag);
  if (st) emit_status(nm, st);
  else {
    emit(nm, out, sizeof(float) * (size_t)m);
    st = al_bimamba_bwd(dx, dz, &q, gout, ws, x, z, &p);
    snprintf(nm, sizeof nm, "%s/bwd.xz", tag);
    if (st) emit_status(nm, st);
    else {
      al_sha256_ctx c;
      uint8_t dg[AL_SHA256_SIZE];
      char hex[AL_SHA256_HEX];
      al_sha256_init(&c);
      al_sha256_update(&c, dx, sizeof(float) * (size_t)m);
      al_sha256_update(&c, dz, sizeof(float) * (size_t)m);
      al_sha256_final(&c, dg);
      al_sha256_hex(dg, hex);
      printf("%-48s %s\n", nm, hex);
      al_sha256_init(&c);
      for (int k = 0; k < 2; k++) for (int i = 0; i < 7; i++) al_sha256_update(&c, gw[k][i], sizeof(float) * (size_t)sz[i]);
      al_sha256_final(&c, dg);
      al_sha256_hex(dg, hex);
      snprintf(nm, sizeof nm, "%s/bwd.params", tag);
      printf("%-48s %s\n", nm, hex);
    }
  }
  al_bimamba_ws_free(ws);
  for (int k = 0; k < 2; k++) for (int i = 0; i < 7; i++) { free(w[k][i]); free(gw[k][i]); }
  free(x); free(z); free(out); free(gout); free(dx); free(dz); free(keep);
}

static void mixers(void) {
  for (int masked = 0; masked < 2; masked++) {
    bilstm_case(2, 7, 8, 2, masked);
    bilstm_case(3, 17, 12, 1, masked);
    bilstm_case(2, 33, 24, 3, masked);
    bimamba_case(2, 7, 8, 2, 4, 2, 3, masked, 1.0);
    bimamba_case(3, 37, 16, 1, 16, 4, 4, masked, 1.0);
    bimamba_case(2, 70, 24, 3, 8, 3, 4, masked, 1.0);
    bimamba_case(2, 40, 16, 2, 16, 4, 4, masked, 8.0);
  }
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  signal(SIGALRM, on_alarm);
  al_set_num_threads(1);
  kernels();
  ops();
  unary();
  mixers();
  return 0;
}
