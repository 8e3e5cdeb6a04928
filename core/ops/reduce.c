/* core/ops/reduce.c -- sums, means, max/min with indices, variance, and sum-to-shape
 * (the adjoint of broadcasting). Sums accumulate in double. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/threads.h"
#include "internal.h"

al_status al_need_f32_(al_tensor **out, al_tensor *x, const char *op) {
  if (x->dtype != AL_F32) {
    char b[128];
    return al_seterr(AL_EINVAL, "%s: expected a float32 tensor, got %s", op, al_shape_str(x, b, sizeof b));
  }
  return al_contiguous_ref(out, x);
}

/* ---- sum to shape ------------------------------------------------------------ */
al_status al_sum_to_shape(al_tensor **out, al_tensor *g, int ndim, const int64_t *shape) {
  AL_NEED(out, "sum_to_shape", "out"); AL_NEED(g, "sum_to_shape", "g");
  if (ndim < 0 || ndim > AL_MAXDIM) return al_seterr(AL_EINVAL, "sum_to_shape: %d dims (0..%d)", ndim, AL_MAXDIM);
  if (ndim > 0) AL_NEED(shape, "sum_to_shape", "shape");
  if (g->ndim == ndim && (ndim == 0 || !memcmp(g->shape, shape, sizeof(int64_t) * (size_t)ndim))) {
    *out = al_tensor_retain(g);
    return AL_OK;
  }
  if (ndim > g->ndim) return al_seterr(AL_EINVAL, "sum_to_shape: target has more dims than the gradient");
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0) {
      char b[128];
      return al_seterr(AL_EINVAL, "sum_to_shape: target %s has a negative size", al_dims_str(ndim, shape, b, sizeof b));
    }
  al_tensor *o = al_tensor_zeros(AL_F32, ndim, shape);
  if (!o) return AL_ENOMEM;
  int64_t total = al_numel(o);
  double *acc = calloc((size_t)(total ? total : 1), sizeof *acc);
  if (!acc) { al_tensor_release(o); return al_seterr(AL_ENOMEM, "sum_to_shape: out of memory"); }
  /* strides of o laid on g's shape (0 where summed) */
  int nd = g->ndim;
  int64_t ost[AL_MAXDIM], ostride = 1;
  for (int i = nd - 1; i >= 0; i--) {
    int io = i - (nd - ndim);
    int64_t s = io >= 0 ? shape[io] : 1;
    if (io >= 0 && s != 1 && s != g->shape[i]) {
      char a[128], b[128];
      free(acc); al_tensor_release(o);
      return al_seterr(AL_EINVAL, "sum_to_shape: cannot reduce %s to %s", al_shape_str(g, a, sizeof a), al_dims_str(ndim, shape, b, sizeof b));
    }
    ost[i] = (s == 1) ? 0 : ostride;
    ostride *= s;
  }
  int64_t idx[AL_MAXDIM] = {0}, n = al_numel(g);
  const float *pg = (const float *)g->storage->data;
  int64_t inner = nd ? g->shape[nd - 1] : 1, gs = nd ? g->stride[nd - 1] : 1, os = nd ? ost[nd - 1] : 0;
  for (int64_t k = 0; k < n; k += inner) {
    int64_t goff = g->offset, ooff = 0;
    for (int d = 0; d < nd - 1; d++) { goff += idx[d] * g->stride[d]; ooff += idx[d] * ost[d]; }
    if (os == 0) {
      double s = 0;
      for (int64_t i = 0; i < inner; i++) s += pg[goff + i * gs];
      acc[ooff] += s;
    } else {
      for (int64_t i = 0; i < inner; i++) acc[ooff + i * os] += pg[goff + i * gs];
    }
    for (int d = nd - 2; d >= 0; d--) { if (++idx[d] < g->shape[d]) break; idx[d] = 0; }
  }
  float *po = al_f32(o);
  for (int64_t i = 0; i < total; i++) po[i] = (float)acc[i];
  free(acc);
  *out = o;
  return AL_OK;
}

/* ---- sum / mean ------------------------------------------------------------- */
static al_status expand_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  /* sum backward: broadcast the (keepdim-shaped) gradient back; scale for mean */
  al_tensor *gk = NULL, *e = NULL;
  int64_t kshape[AL_MAXDIM];
  int nd = n->in[0].ndim;
  memcpy(kshape, n->in[0].shape, sizeof kshape);
  if (n->k[0] >= 0) kshape[n->k[0]] = 1;
  else for (int i = 0; i < nd; i++) kshape[i] = 1;
  al_status st = al_reshape(&gk, g, nd, kshape);
  if (!st) st = al_expand(&e, gk, nd, n->in[0].shape);
  al_tensor_release(gk);
  if (st) return st;
  if (n->d[0] != 1.0) { st = al_affine(&gin[0], e, n->d[0], 0); al_tensor_release(e); return st; }
  gin[0] = e;
  return AL_OK;
}

static al_status reduce_sum(al_tensor **out, al_tensor *x, int dim, int keepdim, int mean, int all) {
  AL_NEED(out, mean ? "mean" : "sum", "out"); AL_NEED(x, mean ? "mean" : "sum", "x");
  al_tensor *xc = NULL;
  al_status st = al_need_f32_(&xc, x, mean ? "mean" : "sum");
  if (st) return st;
  int64_t outer = 1, len = 1, inner = 1;
  int64_t oshape[AL_MAXDIM];
  int ond = 0;
  if (all) {
    len = al_numel(xc);
  } else {
    st = al_wrap_dim(&dim, x->ndim, mean ? "mean" : "sum");
    if (st) { al_tensor_release(xc); return st; }
    for (int i = 0; i < x->ndim; i++) {
      if (i < dim) outer *= x->shape[i];
      else if (i == dim) len = x->shape[i];
      else inner *= x->shape[i];
      if (i != dim) oshape[ond++] = x->shape[i];
      else if (keepdim) oshape[ond++] = 1;
    }
  }
  al_tensor *o = al_tensor_new(AL_F32, ond, oshape);
  if (!o) { al_tensor_release(xc); return AL_ENOMEM; }
  const float *px = al_f32(xc);
  float *po = al_f32(o);
  double scale = mean ? 1.0 / (double)len : 1.0;
  if (mean && len == 0) scale = NAN;
  if (inner == 1) {
    #pragma omp parallel for if (outer * len >= AL_PAR_MIN_WORK && outer > 1) schedule(static)
    for (int64_t r = 0; r < outer; r++) {
      double s = 0;
      const float *p = px + r * len;
      for (int64_t l = 0; l < len; l++) s += p[l];
      po[r] = (float)(s * scale);
    }
  } else {
    double *acc = malloc((size_t)inner * sizeof *acc);
    if (!acc) { al_tensor_release(o); al_tensor_release(xc); return al_seterr(AL_ENOMEM, "sum: out of memory"); }
    for (int64_t r = 0; r < outer; r++) {
      for (int64_t i = 0; i < inner; i++) acc[i] = 0;
      for (int64_t l = 0; l < len; l++) {
        const float *p = px + (r * len + l) * inner;
        for (int64_t i = 0; i < inner; i++) acc[i] += p[i];
      }
      for (int64_t i = 0; i < inner; i++) po[r * inner + i] = (float)(acc[i] * scale);
    }
    free(acc);
  }
  al_tensor_release(xc);
  al_node *n = al_node_new(mean ? "mean" : "sum", expand_bwd, 1, &x, &st);
  if (st) { al_tensor_release(o); return st; }
  if (n) { n->k[0] = all ? -1 : dim; n->d[0] = scale; al_node_attach(n, o); }
  *out = o;
  return AL_OK;
}

al_status al_sum_all(al_tensor **out, al_tensor *x) { return reduce_sum(out, x, 0, 0, 0, 1); }
al_status al_mean_all(al_tensor **out, al_tensor *x) { return reduce_sum(out, x, 0, 0, 1, 1); }
al_status al_sum_dim(al_tensor **out, al_tensor *x, int dim, int keepdim) { return reduce_sum(out, x, dim, keepdim, 0, 0); }
al_status al_mean_dim(al_tensor **out, al_tensor *x, int dim, int keepdim) { return reduce_sum(out, x, dim, keepdim, 1, 0); }

/* ---- max / min -------------------------------------------------------------- */
static al_status select_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  /* scatter g to the arg positions saved in saved[0] (int64, keepdim shape, -1 = all) */
  al_tensor *gc = NULL;
  al_status st = al_contiguous_ref(&gc, g);
  if (st) return st;
  al_tensor *gi = al_tensor_zeros(AL_F32, n->in[0].ndim, n->in[0].shape);
  if (!gi) { al_tensor_release(gc); return AL_ENOMEM; }
  const int64_t *idx = al_i64(n->saved[0]);
  const float *pg = al_f32(gc);
  float *pi = al_f32(gi);
  int64_t outer = n->k[1], len = n->k[2], inner = n->k[3];
  for (int64_t r = 0; r < outer; r++)
    for (int64_t i = 0; i < inner; i++) pi[(r * len + idx[r * inner + i]) * inner + i] += pg[r * inner + i];
  al_tensor_release(gc);
  gin[0] = gi;
  return AL_OK;
}

/* max(x) / min(x) over all elements: g shared evenly by the positions that hold the extreme,
 * saved in saved[0] (int64, 0-based flat), as PyTorch's max() without a dim
 * (evenly_distribute_backward). Giving all of g to the first of tied elements differed from it
 * wherever the maximum repeats (relu outputs, whole numbers, a padded row). */
static al_status ties_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  al_tensor *gi = al_tensor_zeros(AL_F32, n->in[0].ndim, n->in[0].shape);
  if (!gi) return AL_ENOMEM;
  const al_tensor *pos = n->saved[0];
  int64_t cnt = al_numel(pos);
  const int64_t *pp = al_i64(pos);
  float share = al_f32(g)[0] / (float)cnt;   /* g is 0-dim: its one element */
  float *pi = al_f32(gi);
  for (int64_t k = 0; k < cnt; k++) pi[pp[k]] = share;
  gin[0] = gi;
  return AL_OK;
}

static al_status reduce_max(al_tensor **values, al_tensor **indices, al_tensor *x, int dim, int keepdim, int is_min, int all) {
  const char *op = is_min ? "min" : "max";
  AL_NEED(x, op, "x");
  /* max_dim/min_dim: the values or the indices alone may be asked for (the other slot NULL) */
  if (all) AL_NEED(values, op, "out");
  else if (!values && !indices) return al_seterr(AL_EINVAL, "%s: values and indices are both NULL", op);
  al_tensor *xc = NULL;
  AL_TRY(al_contiguous_ref(&xc, x));
  int64_t outer = 1, len = 1, inner = 1, oshape[AL_MAXDIM];
  int ond = 0;
  al_status st;
  if (all) len = al_numel(xc);
  else {
    st = al_wrap_dim(&dim, x->ndim, op);
    if (st) { al_tensor_release(xc); return st; }
    for (int i = 0; i < x->ndim; i++) {
      if (i < dim) outer *= x->shape[i]; else if (i == dim) len = x->shape[i]; else inner *= x->shape[i];
      if (i != dim) oshape[ond++] = x->shape[i]; else if (keepdim) oshape[ond++] = 1;
    }
  }
  if (len == 0) {
    char b[128];
    al_tensor_release(xc);
    return al_seterr(AL_EINVAL, "%s: reducing an empty dimension of %s", op, al_shape_str(x, b, sizeof b));
  }
  /* values keep the input's dtype (int64 ids compare exactly, beyond 2^24) */
  al_tensor *v = al_tensor_new(x->dtype, ond, oshape), *ix = al_tensor_new(AL_I64, ond, oshape);
  if (!v || !ix) { al_tensor_release(v); al_tensor_release(ix); al_tensor_release(xc); return AL_ENOMEM; }
  int64_t *pi = al_i64(ix);
  for (int64_t r = 0; r < outer; r++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t bi = 0, base = r * len * inner + i;
      if (x->dtype == AL_F32) {
        const float *p = al_f32(xc) + base;
        float best = p[0];
        for (int64_t l = 1; l < len && best == best; l++) {
          float c = p[l * inner];
          if (c != c) { best = c; bi = l; break; }          /* NaN wins, as in PyTorch */
          if (is_min ? c < best : c > best) { best = c; bi = l; }
        }
        al_f32(v)[r * inner + i] = best;
      } else {
        const int64_t *p = al_i64(xc) + base;
        int64_t best = p[0];
        for (int64_t l = 1; l < len; l++)
          if (is_min ? p[l * inner] < best : p[l * inner] > best) { best = p[l * inner]; bi = l; }
        al_i64(v)[r * inner + i] = best;
      }
      pi[r * inner + i] = bi;
    }
  al_tensor *ties = NULL;
  if (all && x->dtype == AL_F32 && al_grad_enabled() && x->requires_grad) {
    /* the positions equal to the extreme (NaN: the NaNs), for ties_bwd */
    const float *p = al_f32(xc), best = al_f32(v)[0];
    int64_t cnt = 0;
    for (int64_t l = 0; l < len; l++) cnt += best != best ? p[l] != p[l] : p[l] == best;
    ties = al_tensor_new(AL_I64, 1, &cnt);
    if (!ties) { al_tensor_release(v); al_tensor_release(ix); al_tensor_release(xc); return AL_ENOMEM; }
    int64_t *pt = al_i64(ties), k = 0;
    for (int64_t l = 0; l < len; l++)
      if (best != best ? p[l] != p[l] : p[l] == best) pt[k++] = l;
  }
  al_tensor_release(xc);
  if (x->dtype == AL_F32) {
    al_node *n = al_node_new(op, ties ? ties_bwd : select_bwd, 1, &x, &st);
    if (st) { al_tensor_release(v); al_tensor_release(ix); al_tensor_release(ties); return st; }
    if (n) {
      n->k[1] = outer; n->k[2] = len; n->k[3] = inner;
      al_node_save(n, ties ? ties : ix);
      al_node_attach(n, v);
    }
  }
  al_tensor_release(ties);
  if (values) *values = v; else al_tensor_release(v);
  if (indices) *indices = ix; else al_tensor_release(ix);
  return AL_OK;
}

al_status al_max_dim(al_tensor **v, al_tensor **i, al_tensor *x, int dim, int keepdim) { return reduce_max(v, i, x, dim, keepdim, 0, 0); }
al_status al_min_dim(al_tensor **v, al_tensor **i, al_tensor *x, int dim, int keepdim) { return reduce_max(v, i, x, dim, keepdim, 1, 0); }
al_status al_max_all(al_tensor **out, al_tensor *x) { return reduce_max(out, NULL, x, 0, 0, 0, 1); }
al_status al_min_all(al_tensor **out, al_tensor *x) { return reduce_max(out, NULL, x, 0, 0, 1, 1); }

/* var = sum((x - mean)^2) / (n - unbiased), built from differentiable ops. */
al_status al_var_dim(al_tensor **out, al_tensor *x, int dim, int keepdim, int unbiased) {
  AL_NEED(out, "var", "out"); AL_NEED(x, "var", "x");
  AL_TRY(al_wrap_dim(&dim, x->ndim, "var"));
  int64_t n = x->ndim ? x->shape[dim] : 1;
  if (n - (unbiased ? 1 : 0) <= 0) {
    char b[128];
    return al_seterr(AL_EINVAL, "var: need at least %d elements along dim %d, got %s", unbiased ? 2 : 1, dim + 1, al_shape_str(x, b, sizeof b));
  }
  al_tensor *m = NULL, *d = NULL, *d2 = NULL, *s = NULL;
  al_status st = al_mean_dim(&m, x, dim, 1);
  if (!st) st = al_sub(&d, x, m);
  if (!st) st = al_mul(&d2, d, d);
  if (!st) st = al_sum_dim(&s, d2, dim, keepdim);
  if (!st) st = al_affine(out, s, 1.0 / (double)(n - (unbiased ? 1 : 0)), 0);
  al_tensor_release(m); al_tensor_release(d); al_tensor_release(d2); al_tensor_release(s);
  return st;
}
