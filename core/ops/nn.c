/* core/ops/nn.c -- fused layer norm, log-softmax, cross-entropy; MSE and dropout.
 * Parameter-gradient reductions sum fixed 64-row blocks in order, so results do not
 * depend on the thread count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/rng.h"
#include "attnlab/threads.h"
#include "../simd/fastmath.h"
#include "internal.h"

#define ROW_BLOCK 64

/* ---- layer norm ----------------------------------------------------------------
 * x (R, D) -> y = (x - mu) * rstd * w + b, rstd = 1/sqrt(var + eps), biased var.
 * Saves x, mu (R), rstd (R). Backward with xh = (x-mu)*rstd, gh = g*w:
 *   gx = rstd * (gh - mean(gh) - xh * mean(gh*xh)); gw = sum_r g*xh; gb = sum_r g. */
typedef struct { float *mu, *rstd; int64_t R, nalloc; } ln_extra;
static void ln_free(void *p) {
  ln_extra *e = p;
  al_free(e->mu, sizeof(float) * (size_t)e->nalloc);
  al_free(e->rstd, sizeof(float) * (size_t)e->nalloc);
  free(e);
}

static al_status layer_norm_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  al_tensor *x = n->saved[0], *w = n->nsaved > 1 ? n->saved[1] : NULL;
  ln_extra *e = n->extra;
  int64_t R = e->R, D = n->k[0];
  int has_w = (int)n->k[1], has_b = (int)n->k[2];
  al_tensor *gc = NULL;
  AL_TRY(al_contiguous_ref(&gc, g));
  const float *px = al_f32(x), *pg = al_f32(gc), *pw = w ? al_f32(w) : NULL;
  al_tensor *gx = NULL;
  if (n->in[0].needs) {
    gx = al_tensor_new(AL_F32, n->in[0].ndim, n->in[0].shape);
    if (!gx) { al_tensor_release(gc); return AL_ENOMEM; }
    float *pgx = al_f32(gx);
    #pragma omp parallel for if (R * D >= AL_PAR_MIN_WORK) schedule(static)
    for (int64_t r = 0; r < R; r++) {
      const float *xr = px + r * D, *gr = pg + r * D;
      float mu = e->mu[r], rs = e->rstd[r];
      double s1 = 0, s2 = 0;
      /* simd reduction: a fixed 8-lane double order, so still thread-count independent */
      if (pw) {
        #pragma omp simd reduction(+ : s1, s2)
        for (int64_t j = 0; j < D; j++) {
          float gh = gr[j] * pw[j], xh = (xr[j] - mu) * rs;
          s1 += gh;
          s2 += gh * xh;
        }
      } else {
        #pragma omp simd reduction(+ : s1, s2)
        for (int64_t j = 0; j < D; j++) {
          float gh = gr[j], xh = (xr[j] - mu) * rs;
          s1 += gh;
          s2 += gh * xh;
        }
      }
      float m1 = (float)(s1 / D), m2 = (float)(s2 / D);
      float *o = pgx + r * D;
      for (int64_t j = 0; j < D; j++) {
        float gh = gr[j] * (pw ? pw[j] : 1.0f), xh = (xr[j] - mu) * rs;
        o[j] = rs * (gh - m1 - xh * m2);
      }
    }
    gin[0] = gx;
  }
  int need_w = has_w && n->in[1].needs, need_b = has_b && n->in[1 + has_w].needs;
  if (need_w || need_b) {
    int64_t nblk = (R + ROW_BLOCK - 1) / ROW_BLOCK;
    double *part = calloc((size_t)(nblk * 2 * D), sizeof *part);
    if (!part) { al_tensor_release(gc); return al_seterr(AL_ENOMEM, "layer_norm: out of memory"); }
    #pragma omp parallel for if (R * D >= AL_PAR_MIN_WORK) schedule(static)
    for (int64_t bk = 0; bk < nblk; bk++) {
      double *pw_ = part + bk * 2 * D, *pb_ = pw_ + D;
      int64_t r1 = (bk + 1) * ROW_BLOCK < R ? (bk + 1) * ROW_BLOCK : R;
      for (int64_t r = bk * ROW_BLOCK; r < r1; r++) {
        const float *xr = px + r * D, *gr = pg + r * D;
        float mu = e->mu[r], rs = e->rstd[r];
        for (int64_t j = 0; j < D; j++) { pw_[j] += gr[j] * ((xr[j] - mu) * rs); pb_[j] += gr[j]; }
      }
    }
    al_tensor *gw = need_w ? al_tensor_new(AL_F32, 1, &D) : NULL, *gb = need_b ? al_tensor_new(AL_F32, 1, &D) : NULL;
    if ((need_w && !gw) || (need_b && !gb)) {
      free(part); al_tensor_release(gw); al_tensor_release(gb); al_tensor_release(gc);
      return AL_ENOMEM;
    }
    for (int64_t j = 0; j < D; j++) {
      double sw = 0, sb = 0;
      for (int64_t bk = 0; bk < nblk; bk++) { sw += part[bk * 2 * D + j]; sb += part[bk * 2 * D + D + j]; }
      if (gw) al_f32(gw)[j] = (float)sw;
      if (gb) al_f32(gb)[j] = (float)sb;
    }
    free(part);
    if (need_w) gin[1] = gw;
    if (need_b) gin[1 + has_w] = gb;
  }
  al_tensor_release(gc);
  return AL_OK;
}

al_status al_layer_norm(al_tensor **out, al_tensor *x, al_tensor *w, al_tensor *b, double eps) {
  AL_NEED(out, "layer_norm", "out"); AL_NEED(x, "layer_norm", "x");
  char s1[128], s2[128];
  if (x->dtype != AL_F32 || x->ndim < 1) return al_seterr(AL_EINVAL, "layer_norm: expected a float32 tensor (..., D), got %s", al_shape_str(x, s1, sizeof s1));
  int64_t D = x->shape[x->ndim - 1], R = D ? al_numel(x) / D : 0;
  if (w && (w->ndim != 1 || w->shape[0] != D || w->dtype != AL_F32)) return al_seterr(AL_EINVAL, "layer_norm: weight %s does not match input %s (want (%lld))", al_shape_str(w, s2, sizeof s2), al_shape_str(x, s1, sizeof s1), (long long)D);
  if (b && (b->ndim != 1 || b->shape[0] != D || b->dtype != AL_F32)) return al_seterr(AL_EINVAL, "layer_norm: bias %s does not match input %s (want (%lld))", al_shape_str(b, s2, sizeof s2), al_shape_str(x, s1, sizeof s1), (long long)D);
  if (!(eps >= 0)) return al_seterr(AL_EINVAL, "layer_norm: eps must be >= 0, got %g", eps);
  al_tensor *xc = NULL, *wc = NULL, *bc = NULL;
  al_status st = al_contiguous_ref(&xc, x);
  if (!st && w) st = al_contiguous_ref(&wc, w);
  if (!st && b) st = al_contiguous_ref(&bc, b);
  al_tensor *o = st ? NULL : al_tensor_new(AL_F32, x->ndim, x->shape);
  ln_extra *e = calloc(1, sizeof *e);
  if (e) {
    e->R = R;
    e->nalloc = R ? R : 1;
    e->mu = al_malloc(sizeof(float) * (size_t)e->nalloc);
    e->rstd = al_malloc(sizeof(float) * (size_t)e->nalloc);
  }
  if (st || !o || !e || !e->mu || !e->rstd) {
    if (!st) st = al_seterr(AL_ENOMEM, "layer_norm: out of memory");
    if (e) ln_free(e);
    al_tensor_release(o); al_tensor_release(xc); al_tensor_release(wc); al_tensor_release(bc);
    return st;
  }
  const float *px = al_f32(xc), *pw = wc ? al_f32(wc) : NULL, *pb = bc ? al_f32(bc) : NULL;
  float *po = al_f32(o);
  #pragma omp parallel for if (R * D >= AL_PAR_MIN_WORK) schedule(static)
  for (int64_t r = 0; r < R; r++) {
    const float *xr = px + r * D;
    double s = 0, ss = 0;
    /* simd reductions: a fixed 8-lane double order (thread-count independent) */
    #pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < D; j++) s += xr[j];
    double mu = s / D;
    #pragma omp simd reduction(+ : ss)
    for (int64_t j = 0; j < D; j++) { double d = xr[j] - mu; ss += d * d; }
    float rs = (float)(1.0 / sqrt(ss / D + eps));
    float m = (float)mu;
    e->mu[r] = m;
    e->rstd[r] = rs;
    float *yr = po + r * D;
    for (int64_t j = 0; j < D; j++) {
      float v = (xr[j] - m) * rs;
      if (pw) v *= pw[j];
      if (pb) v += pb[j];
      yr[j] = v;
    }
  }
  al_tensor *ins[3] = {x, w ? w : b, w ? b : NULL};
  int nin = 1 + (w != NULL) + (b != NULL);
  al_node *n = al_node_new("layer_norm", layer_norm_bwd, nin, ins, &st);
  if (st) { al_tensor_release(o); o = NULL; }
  if (n) {
    n->k[0] = D; n->k[1] = w != NULL; n->k[2] = b != NULL;
    al_node_save(n, xc);
    if (wc) al_node_save(n, wc);
    n->extra = e;
    n->free_extra = ln_free;
    e = NULL;
    al_node_attach(n, o);
  }
  if (e) ln_free(e);
  al_tensor_release(xc); al_tensor_release(wc); al_tensor_release(bc);
  if (st) return st;
  *out = o;
  return AL_OK;
}

/* ---- log-softmax over the last dim of a contiguous (R, C) view ----------------- */
static void log_softmax_rows(float *out, const float *x, int64_t R, int64_t C) {
  #pragma omp parallel for if (R * C >= AL_PAR_MIN_WORK) schedule(static)
  for (int64_t r = 0; r < R; r++) {
    const float *xr = x + r * C;
    float m = -INFINITY;
    for (int64_t j = 0; j < C; j++) m = xr[j] > m ? xr[j] : m;
    if (m == -INFINITY) {
      /* the max skips NaN: a row of nothing but NaN (and -inf) lands here too, and must come
       * out NaN, not as a row of -inf that a loss would take for a certain miss */
      float fill = -INFINITY;
      for (int64_t j = 0; j < C; j++) if (xr[j] != xr[j]) fill = NAN;
      for (int64_t j = 0; j < C; j++) out[r * C + j] = fill;
      continue;
    }
    double s = 0;
    for (int64_t j = 0; j < C; j++) s += expf(xr[j] - m);
    float lse = m + (float)log(s);
    for (int64_t j = 0; j < C; j++) out[r * C + j] = xr[j] - lse;
  }
}

/* gx = g - exp(y) * sum(g), y = log_softmax(x) */
static al_status log_softmax_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  al_tensor *y = n->saved[0], *gc = NULL;
  AL_TRY(al_contiguous_ref(&gc, g));
  int64_t C = n->k[0], R = al_numel(y) / (C ? C : 1);
  al_tensor *gx = al_tensor_new(AL_F32, y->ndim, y->shape);
  if (!gx) { al_tensor_release(gc); return AL_ENOMEM; }
  const float *py = al_f32(y), *pg = al_f32(gc);
  float *po = al_f32(gx);
  for (int64_t r = 0; r < R; r++) {
    double s = 0;
    for (int64_t j = 0; j < C; j++) s += pg[r * C + j];
    for (int64_t j = 0; j < C; j++) po[r * C + j] = pg[r * C + j] - expf(py[r * C + j]) * (float)s;
  }
  al_tensor_release(gc);
  gin[0] = gx;
  return AL_OK;
}

al_status al_log_softmax(al_tensor **out, al_tensor *x, int dim) {
  AL_NEED(out, "log_softmax", "out"); AL_NEED(x, "log_softmax", "x");
  char s1[128];
  if (x->dtype != AL_F32) return al_seterr(AL_EINVAL, "log_softmax: expected float32, got %s", al_shape_str(x, s1, sizeof s1));
  AL_TRY(al_wrap_dim(&dim, x->ndim, "log_softmax"));
  if (x->ndim == 0) return al_seterr(AL_EINVAL, "log_softmax: needs at least 1 dim");
  if (dim != x->ndim - 1) {   /* move dim last, apply, move back (a view) */
    al_tensor *t = NULL, *y = NULL;
    AL_TRY(al_transpose(&t, x, dim, -1));
    al_status st = al_log_softmax(&y, t, -1);
    al_tensor_release(t);
    if (st) return st;
    st = al_transpose(out, y, dim, -1);
    al_tensor_release(y);
    return st;
  }
  al_tensor *xc = NULL;
  AL_TRY(al_contiguous_ref(&xc, x));
  int64_t C = x->shape[dim], R = C ? al_numel(x) / C : 0;
  al_tensor *o = al_tensor_new(AL_F32, x->ndim, x->shape);
  if (!o) { al_tensor_release(xc); return AL_ENOMEM; }
  log_softmax_rows(al_f32(o), al_f32(xc), R, C);
  al_tensor_release(xc);
  al_status st;
  al_node *n = al_node_new("log_softmax", log_softmax_bwd, 1, &x, &st);
  if (st) { al_tensor_release(o); return st; }
  if (n) { n->k[0] = C; al_node_save(n, o); al_node_attach(n, o); }
  *out = o;
  return AL_OK;
}

/* ---- cross-entropy ---------------------------------------------------------------
 * logits (B, C), labels (B) int64 0-based. With smoothing e, the target is
 * q = (1-e) onehot(y) + e/C, loss_b = -sum_c q_c log p_bc; mean over counted rows
 * (rows whose label == ignore_index are skipped). Backward: (p - q) / count * g. */
static al_status cross_entropy_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  al_tensor *logp = n->saved[0], *lab = n->saved[1];
  int64_t B = logp->shape[0], C = logp->shape[1], ign = n->k[0];
  double eps = n->d[0], count = n->d[1];
  al_tensor *gc = NULL;
  AL_TRY(al_contiguous_ref(&gc, g));
  float scale = (float)(al_f32(gc)[0] / count);
  al_tensor_release(gc);
  al_tensor *gx = al_tensor_new(AL_F32, 2, logp->shape);
  if (!gx) return AL_ENOMEM;
  const float *lp = al_f32(logp);
  const int64_t *y = al_i64(lab);
  float *po = al_f32(gx);
  for (int64_t b = 0; b < B; b++) {
    float *row = po + b * C;
    if (y[b] == ign) { for (int64_t c = 0; c < C; c++) row[c] = 0; continue; }
    for (int64_t c = 0; c < C; c++) {
      float q = (float)(eps / C) + (c == y[b] ? (float)(1 - eps) : 0.0f);
      row[c] = (expf(lp[b * C + c]) - q) * scale;
    }
  }
  gin[0] = gx;
  return AL_OK;
}

al_status al_cross_entropy(al_tensor **out, al_tensor *logits, al_tensor *labels, double smoothing, int64_t ignore_index) {
  AL_NEED(out, "cross_entropy", "out"); AL_NEED(logits, "cross_entropy", "logits"); AL_NEED(labels, "cross_entropy", "labels");
  char s1[128], s2[128];
  if (logits->dtype != AL_F32 || logits->ndim != 2)
    return al_seterr(AL_EINVAL, "cross_entropy: logits must be float32 (B,C), got %s", al_shape_str(logits, s1, sizeof s1));
  if (labels->dtype != AL_I64 || labels->ndim != 1 || labels->shape[0] != logits->shape[0])
    return al_seterr(AL_EINVAL, "cross_entropy: labels must be int64 (B) matching logits %s, got %s", al_shape_str(logits, s1, sizeof s1), al_shape_str(labels, s2, sizeof s2));
  if (!(smoothing >= 0 && smoothing <= 1)) return al_seterr(AL_EINVAL, "cross_entropy: label_smoothing must be in [0,1], got %g", smoothing);
  int64_t B = logits->shape[0], C = logits->shape[1];
  /* a mean over no examples is not a loss (it came out NaN); a batch whose every row is
   * ignore_index still gives NaN, as PyTorch does: its rows exist, none counts */
  if (B == 0) return al_seterr(AL_EINVAL, "cross_entropy: empty batch %s: the mean loss over no examples is undefined", al_shape_str(logits, s1, sizeof s1));
  al_tensor *lc = NULL, *yc = NULL;
  AL_TRY(al_contiguous_ref(&lc, logits));
  al_status st = al_contiguous_ref(&yc, labels);
  if (st) { al_tensor_release(lc); return st; }
  const int64_t *y = al_i64(yc);
  int64_t count = 0;
  for (int64_t b = 0; b < B; b++) {
    if (y[b] == ignore_index) continue;
    if (y[b] < 0 || y[b] >= C) {
      st = al_seterr(AL_EINVAL, "cross_entropy: label %lld of row %lld out of range 1..%lld (labels are 1-based)", (long long)(y[b] + 1), (long long)(b + 1), (long long)C);
      al_tensor_release(lc); al_tensor_release(yc);
      return st;
    }
    count++;
  }
  al_tensor *logp = al_tensor_new(AL_F32, 2, logits->shape);
  al_tensor *o = al_tensor_new(AL_F32, 0, NULL);
  if (!logp || !o) { al_tensor_release(logp); al_tensor_release(o); al_tensor_release(lc); al_tensor_release(yc); return AL_ENOMEM; }
  log_softmax_rows(al_f32(logp), al_f32(lc), B, C);
  const float *lp = al_f32(logp);
  double total = 0;
  for (int64_t b = 0; b < B; b++) {
    if (y[b] == ignore_index) continue;
    double s = 0;
    if (smoothing > 0) for (int64_t c = 0; c < C; c++) s += lp[b * C + c];
    total += -(1 - smoothing) * lp[b * C + y[b]] - smoothing / C * s;
  }
  al_f32(o)[0] = count ? (float)(total / count) : NAN;
  al_node *n = al_node_new("cross_entropy", cross_entropy_bwd, 1, &logits, &st);
  if (!st && n) {
    n->k[0] = ignore_index; n->d[0] = smoothing; n->d[1] = count ? (double)count : 1.0;
    al_node_save(n, logp);
    al_node_save(n, yc);
    al_node_attach(n, o);
  }
  al_tensor_release(logp); al_tensor_release(lc); al_tensor_release(yc);
  if (st) { al_tensor_release(o); return st; }
  *out = o;
  return AL_OK;
}

al_status al_mse(al_tensor **out, al_tensor *a, al_tensor *b) {
  AL_NEED(out, "mse", "out"); AL_NEED(a, "mse", "a"); AL_NEED(b, "mse", "b");
  char s1[128], s2[128];
  if (!al_same_shape(a, b)) return al_seterr(AL_EINVAL, "mse: shapes differ: %s vs %s", al_shape_str(a, s1, sizeof s1), al_shape_str(b, s2, sizeof s2));
  /* (two int64s went through int64 arithmetic, wrapping, to mean's refusal: "mse: mean: ...") */
  if (a->dtype == AL_I64 && b->dtype == AL_I64)
    return al_seterr(AL_EINVAL, "mse: expected float32 tensors, got %s and %s (convert one with :float())",
                     al_shape_str(a, s1, sizeof s1), al_shape_str(b, s2, sizeof s2));
  al_tensor *d = NULL, *d2 = NULL;
  al_status st = al_sub(&d, a, b);
  if (!st) st = al_mul(&d2, d, d);
  if (!st) st = al_mean_all(out, d2);
  al_tensor_release(d); al_tensor_release(d2);
  return st;
}

al_status al_dropout(al_tensor **out, al_tensor *x, double p, al_rng *rng) {
  AL_NEED(out, "dropout", "out"); AL_NEED(x, "dropout", "x");
  if (!(p >= 0 && p < 1)) return al_seterr(AL_EINVAL, "dropout: p must be in [0, 1), got %g", p);
  if (p == 0) { *out = al_tensor_retain(x); return AL_OK; }
  al_tensor *m = al_tensor_new(AL_F32, x->ndim, x->shape);
  if (!m) return AL_ENOMEM;
  int64_t n = al_numel(m);
  float *pm = al_f32(m), keep = (float)(1.0 / (1.0 - p));
  al_rng_uniform(rng ? rng : al_rng_default(), pm, n, 0.0f, 1.0f);
  for (int64_t i = 0; i < n; i++) pm[i] = pm[i] >= (float)p ? keep : 0.0f;
  al_status st = al_mul(out, x, m);
  al_tensor_release(m);
  return st;
}
