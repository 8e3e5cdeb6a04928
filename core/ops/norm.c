/* core/ops/norm.c -- autograd wrappers for the attention normalizers.
 *
 * Rows run along `dim`: when it is not the last dim the input is moved there (a
 * transposed copy) and the result moved back as a view. A mask broadcastable to x
 * (nonzero = keep) becomes the kernels' uint8 keep array. For alpha-entmax, alpha is
 * a number or a tensor broadcastable to x with size 1 along dim; it is expanded to
 * one value per row, and its gradient (per row) is summed back to alpha's shape. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/norm_registry.h"
#include "internal.h"
#include "../util/numfmt.h"

static al_status norm_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  al_norm_kind kind = (al_norm_kind)n->k[0];
  al_tensor *y = n->saved[0];
  int64_t len = n->k[1], rows = len ? al_numel(y) / len : 0;
  al_tensor *gc = NULL;
  AL_TRY(al_contiguous_ref(&gc, g));
  al_status st = AL_OK;
  al_tensor *gx = NULL;
  /* fresh gradient buffers: the kernels' _write mode fills them (no zero fill first) */
  if (n->in[0].needs) {
    gx = al_tensor_new(AL_F32, y->ndim, y->shape);
    if (!gx) { al_tensor_release(gc); return AL_ENOMEM; }
  }
  float *pgx = gx ? al_f32(gx) : NULL;
  const float *pg = al_f32(gc), *py = al_f32(y);
  const al_norm_desc *d = al_norm_get(kind);
  al_norm_params prm = {.ratio = n->d[0]};
  al_tensor *ga = NULL;
  if (d->param == AL_NORM_P_ALPHA) {
    prm.alpha = al_f32(n->saved[1]);   /* one alpha per row */
    if (n->ninputs > 1 && n->in[1].needs) {
      int64_t ash[AL_MAXDIM];
      memcpy(ash, y->shape, sizeof ash);
      ash[y->ndim - 1] = 1;
      ga = al_tensor_new(AL_F32, y->ndim, ash);
      if (!ga) st = AL_ENOMEM;
    }
  }
  /* an alpha row runs with gx == NULL too: its kernel then fills the alpha gradient only */
  if (!st && (pgx || ga)) st = d->bwd_write(pgx, ga ? al_f32(ga) : NULL, pg, py, rows, len, &prm);
  if (!st && ga) {
    /* per-row gradient (x.shape[:-1], 1) -> alpha padded to x's rank -> alpha's shape */
    al_tensor *padded = NULL;
    st = al_sum_to_shape(&padded, ga, (int)n->k[3], (const int64_t *)n->extra);
    if (!st) st = al_reshape(&gin[1], padded, n->in[1].ndim, n->in[1].shape);
    al_tensor_release(padded);
  }
  al_tensor_release(ga);
  al_tensor_release(gc);
  if (st) { al_tensor_release(gx); return st; }
  gin[0] = gx;
  return AL_OK;
}

al_status al_mask_check_finite_(const char *op, const al_tensor *m) {
  const float *p = al_f32(m);
  const int64_t cnt = al_numel(m);
  int64_t e = 0;
  while (e < cnt && isfinite(p[e])) e++;
  if (e == cnt) return AL_OK;
  char at[160] = "", s1[128];
  int used = 0;
  int64_t idx[AL_MAXDIM], rest = e;
  for (int i = m->ndim - 1; i >= 0; i--) { idx[i] = rest % m->shape[i]; rest /= m->shape[i]; }
  for (int i = 0; i < m->ndim && used < (int)sizeof at - 24; i++)
    used += snprintf(at + used, sizeof at - used, "%s%lld", i ? "," : "", (long long)(idx[i] + 1));
  const float v = p[e];
  return al_seterr(AL_EINVAL, "%s: mask %s is %s%s%s%s: a mask is nonzero = keep, 0 = drop%s", op,
                   al_shape_str(m, s1, sizeof s1), v != v ? "NaN" : v > 0 ? "inf" : "-inf", used ? " at (" : "", at,
                   used ? ")" : "", v == -INFINITY ? " (0 and -inf is an additive mask, which as a keep mask drops what it keeps: its keep mask is al.eq(mask, 0))" : "");
}

/* The caller's mask against the caller's x (before dim is moved last, whose shapes a message
 * would otherwise name): at most x's dims, broadcastable to x, finite (al_mask_check_finite_). */
static al_status check_mask(const char *op, const al_tensor *x, al_tensor *mask) {
  char s1[128], s2[128];
  if (mask->ndim > x->ndim) return al_seterr(AL_EINVAL, "%s: mask %s has more dims than x %s", op, al_shape_str(mask, s1, sizeof s1), al_shape_str(x, s2, sizeof s2));
  for (int i = 0; i < mask->ndim; i++) {
    const int64_t ms = mask->shape[i], xs = x->shape[x->ndim - mask->ndim + i];
    if (ms != 1 && ms != xs)
      return al_seterr(AL_EINVAL, "%s: mask %s does not broadcast to x %s", op, al_shape_str(mask, s1, sizeof s1), al_shape_str(x, s2, sizeof s2));
  }
  if (mask->dtype != AL_F32) return AL_OK;   /* (int64 values are finite) */
  al_tensor *m32 = NULL;
  AL_TRY(al_contiguous_ref(&m32, mask));
  const al_status st = al_mask_check_finite_(op, m32);
  al_tensor_release(m32);
  return st;
}

/* mask passed check_mask (its dims, broadcasting, finiteness) */
static al_status build_keep(uint8_t **keep, al_tensor *mask, const al_tensor *x, const char *op) {
  char s1[128], s2[128];
  al_tensor *e = NULL, *c = NULL;
  int was = al_grad_enabled();
  al_set_grad_enabled(0);
  al_status st = al_expand(&e, mask, x->ndim, x->shape);
  if (!st) st = al_to_dtype(&c, e, AL_F32);
  al_set_grad_enabled(was);
  al_tensor_release(e);
  if (st) return al_seterr(AL_EINVAL, "%s: mask %s does not broadcast to x %s", op, al_shape_str(mask, s1, sizeof s1), al_shape_str(x, s2, sizeof s2));
  int64_t n = al_numel(c);
  uint8_t *k = malloc((size_t)(n ? n : 1));
  if (!k) { al_tensor_release(c); return al_seterr(AL_ENOMEM, "%s: out of memory", op); }
  const float *p = al_f32(c);
  for (int64_t i = 0; i < n; i++) k[i] = p[i] != 0;
  al_tensor_release(c);
  *keep = k;
  return AL_OK;
}

/* alpha as al_normalize takes it, checked against the caller's own x and dim (before dim is moved
 * last, whose shapes and dim a message would otherwise name): a tensor that broadcasts to x with
 * size 1 along dim, each value (as the float32 the kernels compute in) finite and >= 1.0001; or
 * the number av. Each refusal names the value -- the caller's double as given, and what float32
 * makes of it where that decides -- and, for a tensor, the element. */
static al_status check_alpha(const char *op, const al_tensor *x, int dim, al_tensor *alpha, double av) {
  char s1[128], s2[128], b[32], bf[32], bm[32];
  if (!alpha) {
    const float a = (float)av;
    if (!(a > 1.0f) || isinf(a)) {
      if (av > 1.0 && isfinite(av))   /* > 1 as given, not as a float32 */
        return al_seterr(AL_EINVAL, "%s: alpha must be > 1 and finite, got %s (%s as a float32, which the kernels compute in)",
                         op, al_fmt_d_(b, av), al_fmt_f_(bf, a));
      return al_seterr(AL_EINVAL, "%s: alpha must be > 1 and finite, got %s", op, al_fmt_d_(b, av));
    }
    if (a < AL_ENTMAX_ALPHA_MIN)
      return al_seterr(AL_EINVAL, "%s: alpha = %s is below %s: " AL_ENTMAX_ALPHA_MIN_WHY, op, al_fmt_d_(b, av),
                       al_fmt_f_(bm, AL_ENTMAX_ALPHA_MIN));
    return AL_OK;
  }
  if (alpha->ndim > x->ndim)
    return al_seterr(AL_EINVAL, "%s: alpha %s has more dims than x %s", op, al_shape_str(alpha, s1, sizeof s1), al_shape_str(x, s2, sizeof s2));
  const int pad = x->ndim - alpha->ndim;
  if (dim >= pad && alpha->shape[dim - pad] != 1)   /* (alpha padded on the left with 1s) */
    return al_seterr(AL_EINVAL, "%s: alpha %s must broadcast to x %s with size 1 along dim %d", op,
                     al_shape_str(alpha, s1, sizeof s1), al_shape_str(x, s2, sizeof s2), dim + 1);
  for (int i = pad; i < x->ndim; i++)
    if (alpha->shape[i - pad] != 1 && alpha->shape[i - pad] != x->shape[i])
      return al_seterr(AL_EINVAL, "%s: alpha %s does not broadcast to x %s with size 1 along dim %d", op,
                       al_shape_str(alpha, s1, sizeof s1), al_shape_str(x, s2, sizeof s2), dim + 1);
  al_tensor *a32 = NULL;
  int was = al_grad_enabled();
  al_set_grad_enabled(0);
  al_status st = al_to_dtype(&a32, alpha, AL_F32);   /* (contiguous, in alpha's own order) */
  al_set_grad_enabled(was);
  if (st) return st;
  const float *pa = al_f32(a32);
  const int64_t cnt = al_numel(a32);
  for (int64_t e = 0; e < cnt && !st; e++) {
    const float a = pa[e];
    const int bad = !(a > 1.0f) || isinf(a), low = !bad && a < AL_ENTMAX_ALPHA_MIN;
    if (!bad && !low) continue;
    char at[160];   /* the element, 1-based, in alpha's shape */
    int used = snprintf(at, sizeof at, "alpha[");
    int64_t rest = e;
    int64_t idx[AL_MAXDIM];
    for (int i = alpha->ndim - 1; i >= 0; i--) { idx[i] = rest % alpha->shape[i]; rest /= alpha->shape[i]; }
    for (int i = 0; i < alpha->ndim && used < (int)sizeof at - 24; i++)
      used += snprintf(at + used, sizeof at - used, "%s%lld", i ? "," : "", (long long)(idx[i] + 1));
    snprintf(at + used, sizeof at - used, "]");
    if (bad)
      st = al_seterr(AL_EINVAL, "%s: alpha must be > 1 and finite, got %s (%s)", op, al_fmt_f_(b, a), at);
    else
      st = al_seterr(AL_EINVAL, "%s: alpha = %s (%s) is below %s: " AL_ENTMAX_ALPHA_MIN_WHY, op, al_fmt_f_(b, a),
                     at, al_fmt_f_(bm, AL_ENTMAX_ALPHA_MIN));
  }
  al_tensor_release(a32);
  return st;
}

/* al_normalize; checked: alpha and mask passed check_alpha and check_mask already (the call that
 * moved dim last: its moved views need not be scanned again, the mask's as an x-sized copy) */
static al_status normalize(al_tensor **out, al_norm_kind kind, al_tensor *x, int dim, al_tensor *mask, double ratio,
                           al_tensor *alpha, double alpha_value, int max_iter, int checked) {
  AL_NEED(out, "normalize", "out"); AL_NEED(x, "normalize", "x");
  const al_norm_desc *d = al_norm_get(kind);
  if (!d) return al_seterr(AL_EINVAL, "normalize: unknown normalizer %d", (int)kind);
  const char *op = d->name;
  char s1[128], s2[128];
  if (x->dtype != AL_F32) return al_seterr(AL_EINVAL, "%s: expected a float32 tensor, got %s", op, al_shape_str(x, s1, sizeof s1));
  if (x->ndim == 0) return al_seterr(AL_EINVAL, "%s: expected at least 1 dim, got a 0-dim tensor", op);
  AL_TRY(al_wrap_dim(&dim, x->ndim, op));
  if (d->param == AL_NORM_P_RATIO && !(ratio > 0 && ratio <= 1)) {
    char b[32];
    return al_seterr(AL_EINVAL, "%s: ratio must be in (0, 1], got %s", op, al_fmt_d_(b, ratio));
  }
  if (d->param == AL_NORM_P_ALPHA && !checked) AL_TRY(check_alpha(op, x, dim, alpha, alpha_value));
  if (mask && !checked) AL_TRY(check_mask(op, x, mask));
  if (dim != x->ndim - 1) {
    /* move dim last; the mask and alpha move with it */
    al_tensor *xt = NULL, *mt = NULL, *at = NULL, *y = NULL, *tmp = NULL;
    al_status st = al_transpose(&xt, x, dim, -1);
    if (!st && mask) {
      st = al_expand(&tmp, mask, x->ndim, x->shape);
      if (!st) st = al_transpose(&mt, tmp, dim, -1);
      al_tensor_release(tmp); tmp = NULL;
    }
    if (!st && alpha) {
      int64_t sh[AL_MAXDIM];
      int pad = x->ndim - alpha->ndim;
      if (pad < 0) st = al_seterr(AL_EINVAL, "%s: alpha %s has more dims than x %s", op, al_shape_str(alpha, s1, sizeof s1), al_shape_str(x, s2, sizeof s2));
      else {
        for (int i = 0; i < x->ndim; i++) sh[i] = i < pad ? 1 : alpha->shape[i - pad];
        st = al_reshape(&tmp, alpha, x->ndim, sh);
        if (!st) st = al_transpose(&at, tmp, dim, -1);
        al_tensor_release(tmp);
      }
    }
    if (!st) st = normalize(&y, kind, xt, -1, mt, ratio, at, alpha_value, max_iter, 1);
    if (!st) st = al_transpose(out, y, dim, -1);
    al_tensor_release(xt); al_tensor_release(mt); al_tensor_release(at); al_tensor_release(y);
    return st;
  }
  int64_t n = x->shape[dim], rows = n ? al_numel(x) / n : 0;
  al_tensor *xc = NULL;
  AL_TRY(al_contiguous_ref(&xc, x));
  uint8_t *keep = NULL;
  al_status st = AL_OK;
  if (mask) st = build_keep(&keep, mask, x, op);
  /* alpha per row */
  al_tensor *arows = NULL;
  int64_t *alpha_shape = NULL;
  int alpha_nd = 0;
  if (!st && d->param == AL_NORM_P_ALPHA) {
    int64_t rshape[AL_MAXDIM];
    memcpy(rshape, x->shape, sizeof rshape);
    rshape[x->ndim - 1] = 1;
    if (alpha) {
      if (alpha->ndim > x->ndim || (alpha->ndim == x->ndim && alpha->shape[x->ndim - 1] != 1)) {
        st = al_seterr(AL_EINVAL, "%s: alpha %s must broadcast to x %s with size 1 along dim %d", op, al_shape_str(alpha, s1, sizeof s1), al_shape_str(x, s2, sizeof s2), dim + 1);
      } else {
        al_tensor *e = NULL;
        int was = al_grad_enabled();
        al_set_grad_enabled(0);
        st = al_expand(&e, alpha, x->ndim, rshape);
        if (!st) st = al_to_dtype(&arows, e, AL_F32);
        al_set_grad_enabled(was);
        al_tensor_release(e);
        if (st) st = al_seterr(AL_EINVAL, "%s: alpha %s does not broadcast to x %s with size 1 along dim %d", op, al_shape_str(alpha, s1, sizeof s1), al_shape_str(x, s2, sizeof s2), dim + 1);
        /* the shape to sum alpha's gradient back to: alpha padded to x's rank */
        alpha_nd = x->ndim;
        alpha_shape = calloc(AL_MAXDIM, sizeof *alpha_shape);
        if (!alpha_shape) st = al_seterr(AL_ENOMEM, "%s: out of memory", op);
        else for (int i = 0; i < x->ndim; i++) { int ia = i - (x->ndim - alpha->ndim); alpha_shape[i] = ia >= 0 ? alpha->shape[ia] : 1; }
      }
    } else {
      arows = al_tensor_new(AL_F32, x->ndim, rshape);
      if (!arows) st = AL_ENOMEM;
      else al_fill(arows, alpha_value);
    }
  }
  al_tensor *o = st ? NULL : al_tensor_new(AL_F32, x->ndim, x->shape);
  if (!st && !o) st = AL_ENOMEM;
  if (!st) {
    float *po = al_f32(o);
    const float *px = al_f32(xc);
    al_norm_params prm = {.ratio = ratio, .alpha = arows ? al_f32(arows) : NULL,
                          .max_iter = max_iter > 0 ? max_iter : 50};
    st = d->fwd(po, px, keep, rows, rows, n, &prm);
  }
  free(keep);
  al_tensor_release(xc);
  if (!st) {
    al_tensor *ins[2] = {x, alpha};
    al_node *node = al_node_new(op, norm_bwd, alpha ? 2 : 1, ins, &st);
    if (!st && node) {
      node->k[0] = kind;
      node->k[1] = n;
      node->k[3] = alpha_nd;
      node->d[0] = ratio;
      al_node_save(node, o);
      if (arows) al_node_save(node, arows);
      node->extra = alpha_shape;
      node->free_extra = free;
      alpha_shape = NULL;
      al_node_attach(node, o);
    }
  }
  free(alpha_shape);
  al_tensor_release(arows);
  if (st) { al_tensor_release(o); return st; }
  *out = o;
  return AL_OK;
}

al_status al_normalize(al_tensor **out, al_norm_kind kind, al_tensor *x, int dim, al_tensor *mask, double ratio,
                       al_tensor *alpha, double alpha_value, int max_iter) {
  return normalize(out, kind, x, dim, mask, ratio, alpha, alpha_value, max_iter, 0);
}
