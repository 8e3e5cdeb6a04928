/* core/ops/shape.c -- views (reshape, permute, narrow, select, expand, squeeze),
 * copies (contiguous, clone, cat, stack) and indexing (index_select, gather,
 * embedding, masked_fill), each with its backward. Views share storage. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static al_status record1(al_tensor *o, al_tensor *x, const char *name, al_backward_fn bw, al_node **nout) {
  al_status st;
  al_node *n = al_node_new(name, bw, 1, &x, &st);
  if (st) return st;
  if (n) al_node_attach(n, o);
  if (nout) *nout = n;
  return AL_OK;
}

static al_tensor *new_view(al_tensor *x, int ndim, const int64_t *shape, const int64_t *stride, int64_t off) {
  al_tensor *v = al_tensor_view(x, ndim, shape, stride, off);
  return v;
}

/* ---- reshape ---------------------------------------------------------------- */
static al_status reshape_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  return al_reshape(&gin[0], g, n->in[0].ndim, n->in[0].shape);
}

al_status al_reshape(al_tensor **out, al_tensor *x, int ndim, const int64_t *shape_in) {
  AL_NEED(out, "reshape", "out"); AL_NEED(x, "reshape", "x");
  char b1[128], b2[128];
  if (ndim < 0 || ndim > AL_MAXDIM) return al_seterr(AL_EINVAL, "reshape: %d dims (at most %d)", ndim, AL_MAXDIM);
  if (ndim > 0) AL_NEED(shape_in, "reshape", "shape");
  int64_t shape[AL_MAXDIM], known = 1;
  int infer = -1;
  for (int i = 0; i < ndim; i++) {
    shape[i] = shape_in[i];
    if (shape[i] == -1) {
      if (infer >= 0) return al_seterr(AL_EINVAL, "reshape: only one dim can be -1, got %s", al_dims_str(ndim, shape_in, b1, sizeof b1));
      infer = i;
    } else if (shape[i] < 0) {
      return al_seterr(AL_EINVAL, "reshape: invalid size %lld in %s", (long long)shape[i], al_dims_str(ndim, shape_in, b1, sizeof b1));
    } else if (__builtin_mul_overflow(known, shape[i], &known)) {
      /* a product that wraps could equal numel and make a view far past the storage */
      return al_seterr(AL_EINVAL, "reshape: %s has more elements than an int64 counts", al_dims_str(ndim, shape_in, b1, sizeof b1));
    }
  }
  int64_t n = al_numel(x);
  if (infer >= 0) {
    if (known == 0 || n % known) return al_seterr(AL_EINVAL, "reshape: cannot view %s as %s", al_shape_str(x, b1, sizeof b1), al_dims_str(ndim, shape_in, b2, sizeof b2));
    shape[infer] = n / known;
    known *= shape[infer];
  }
  if (known != n) return al_seterr(AL_EINVAL, "reshape: cannot view %s (%lld elements) as %s", al_shape_str(x, b1, sizeof b1), (long long)n, al_dims_str(ndim, shape_in, b2, sizeof b2));
  /* an empty tensor matches any shape with a 0 in it, (0, 2^40, 2^40) too, whose strides below
   * would overflow int64: the nonzero sizes are capped as al_tensor_new caps them */
  int64_t span = 1;
  for (int i = 0; i < ndim; i++) {
    if (!shape[i]) continue;
    if (span > AL_MAX_SPAN / shape[i])
      return al_seterr(AL_EINVAL, "reshape: shape %s is too large (its nonzero sizes multiply past 2^60 elements)",
                       al_dims_str(ndim, shape, b1, sizeof b1));
    span *= shape[i];
  }
  al_tensor *c = NULL;
  /* a copy when the layout is not contiguous; the copy is not a node of its own */
  int was = al_grad_enabled();
  al_set_grad_enabled(0);
  al_status st = al_contiguous_ref(&c, x);
  al_set_grad_enabled(was);
  if (st) return st;
  int64_t stride[AL_MAXDIM], s = 1;
  for (int i = ndim - 1; i >= 0; i--) { stride[i] = s; s *= shape[i]; }
  al_tensor *o = new_view(c, ndim, shape, stride, c->offset);
  al_tensor_release(c);
  if (!o) return AL_ENOMEM;
  st = record1(o, x, "reshape", reshape_bwd, NULL);
  if (st) { al_tensor_release(o); return st; }
  *out = o;
  return AL_OK;
}

al_status al_squeeze(al_tensor **out, al_tensor *x, int dim) {
  AL_NEED(out, "squeeze", "out"); AL_NEED(x, "squeeze", "x");
  int64_t shape[AL_MAXDIM];
  int nd = 0;
  if (dim != -100) {
    AL_TRY(al_wrap_dim(&dim, x->ndim, "squeeze"));
    for (int i = 0; i < x->ndim; i++) if (i != dim || x->shape[i] != 1) shape[nd++] = x->shape[i];
  } else {
    for (int i = 0; i < x->ndim; i++) if (x->shape[i] != 1) shape[nd++] = x->shape[i];
  }
  return al_reshape(out, x, nd, shape);
}

al_status al_unsqueeze(al_tensor **out, al_tensor *x, int dim) {
  AL_NEED(out, "unsqueeze", "out"); AL_NEED(x, "unsqueeze", "x");
  if (dim < 0) dim += x->ndim + 1;
  if (dim < 0 || dim > x->ndim || x->ndim >= AL_MAXDIM) {
    char b[128];
    return al_seterr(AL_EINVAL, "unsqueeze: dim out of range for %s (dims are 1..%d or -%d..-1, at most %d dims)",
                     al_shape_str(x, b, sizeof b), x->ndim + 1, x->ndim + 1, AL_MAXDIM);
  }
  int64_t shape[AL_MAXDIM];
  int nd = 0;
  for (int i = 0; i <= x->ndim; i++) {
    if (i == dim) shape[nd++] = 1;
    if (i < x->ndim) shape[nd++] = x->shape[i];
  }
  return al_reshape(out, x, nd, shape);
}

/* ---- permute / transpose --------------------------------------------------- */
static al_status permute_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  int inv[AL_MAXDIM];
  for (int i = 0; i < n->in[0].ndim; i++) inv[n->k[i]] = i;
  return al_permute(&gin[0], g, inv);
}

al_status al_permute(al_tensor **out, al_tensor *x, const int *perm) {
  AL_NEED(out, "permute", "out"); AL_NEED(x, "permute", "x");
  if (x->ndim > 0) AL_NEED(perm, "permute", "perm");
  int seen[AL_MAXDIM] = {0};
  int64_t shape[AL_MAXDIM], stride[AL_MAXDIM];
  for (int i = 0; i < x->ndim; i++) {
    int p = perm[i];
    if (p < 0 || p >= x->ndim || seen[p]) {
      char b[128];
      return al_seterr(AL_EINVAL, "permute: not a permutation of %d dims for %s", x->ndim, al_shape_str(x, b, sizeof b));
    }
    seen[p] = 1;
    shape[i] = x->shape[p];
    stride[i] = x->stride[p];
  }
  al_tensor *o = new_view(x, x->ndim, shape, stride, x->offset);
  if (!o) return AL_ENOMEM;
  al_node *n = NULL;
  al_status st = record1(o, x, "permute", permute_bwd, &n);
  if (st) { al_tensor_release(o); return st; }
  if (n) for (int i = 0; i < x->ndim; i++) n->k[i] = perm[i];
  *out = o;
  return AL_OK;
}

al_status al_transpose(al_tensor **out, al_tensor *x, int d1, int d2) {
  AL_NEED(out, "transpose", "out"); AL_NEED(x, "transpose", "x");
  AL_TRY(al_wrap_dim(&d1, x->ndim, "transpose"));
  AL_TRY(al_wrap_dim(&d2, x->ndim, "transpose"));
  int perm[AL_MAXDIM];
  for (int i = 0; i < x->ndim; i++) perm[i] = i;
  perm[d1] = d2;
  perm[d2] = d1;
  return al_permute(out, x, perm);
}

/* ---- narrow / select ---------------------------------------------------------- */
static al_status narrow_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  al_tensor *z = al_tensor_zeros(AL_F32, n->in[0].ndim, n->in[0].shape), *v = NULL;
  if (!z) return AL_ENOMEM;
  al_status st = n->k[2] ? al_select(&v, z, (int)n->k[0], n->k[1]) : al_narrow(&v, z, (int)n->k[0], n->k[1], n->out_shape[n->k[0]]);
  if (!st) st = al_copy_into(v, g);
  al_tensor_release(v);
  if (st) { al_tensor_release(z); return st; }
  gin[0] = z;
  return AL_OK;
}

al_status al_narrow(al_tensor **out, al_tensor *x, int dim, int64_t start, int64_t len) {
  AL_NEED(out, "narrow", "out"); AL_NEED(x, "narrow", "x");
  char b[128];
  AL_TRY(al_wrap_dim(&dim, x->ndim, "narrow"));
  if (x->ndim == 0) return al_seterr(AL_EINVAL, "narrow: cannot narrow a 0-dim tensor");
  if (start < 0 || len < 0 || start > x->shape[dim] - len)   /* (start + len could overflow) */
    return al_seterr(AL_EINVAL, "narrow: start %lld, length %lld out of range for dim %d of %s (start is 1-based; start + length - 1 must be <= %lld)",
                     (long long)(start < INT64_MAX ? start + 1 : start), (long long)len, dim + 1,   /* (1-based) */
                     al_shape_str(x, b, sizeof b), (long long)x->shape[dim]);
  int64_t shape[AL_MAXDIM];
  memcpy(shape, x->shape, sizeof shape);
  shape[dim] = len;
  al_tensor *o = new_view(x, x->ndim, shape, x->stride, x->offset + start * x->stride[dim]);
  if (!o) return AL_ENOMEM;
  al_node *n = NULL;
  al_status st = record1(o, x, "narrow", narrow_bwd, &n);
  if (st) { al_tensor_release(o); return st; }
  if (n) { n->k[0] = dim; n->k[1] = start; n->k[2] = 0; }
  *out = o;
  return AL_OK;
}

al_status al_select(al_tensor **out, al_tensor *x, int dim, int64_t index) {
  AL_NEED(out, "select", "out"); AL_NEED(x, "select", "x");
  char b[128];
  AL_TRY(al_wrap_dim(&dim, x->ndim, "select"));
  if (x->ndim == 0) return al_seterr(AL_EINVAL, "select: cannot index a 0-dim tensor");
  int64_t given = index;
  if (index < 0) index += x->shape[dim];
  if (x->shape[dim] == 0)   /* (the range below read "indices are 1..0 or -0..-1") */
    return al_seterr(AL_EINVAL, "select: index %lld out of range for dim %d of %s: the dim is empty (size 0)",
                     (long long)(given >= 0 ? given + 1 : given), dim + 1, al_shape_str(x, b, sizeof b));
  if (index < 0 || index >= x->shape[dim])
    return al_seterr(AL_EINVAL, "select: index %lld out of range for dim %d of %s (indices are 1..%lld or -%lld..-1)",
                     (long long)(given >= 0 ? given + 1 : given), dim + 1, al_shape_str(x, b, sizeof b), (long long)x->shape[dim], (long long)x->shape[dim]);
  int64_t shape[AL_MAXDIM], stride[AL_MAXDIM];
  int nd = 0;
  for (int i = 0; i < x->ndim; i++) if (i != dim) { shape[nd] = x->shape[i]; stride[nd++] = x->stride[i]; }
  al_tensor *o = new_view(x, nd, shape, stride, x->offset + index * x->stride[dim]);
  if (!o) return AL_ENOMEM;
  al_node *n = NULL;
  al_status st = record1(o, x, "select", narrow_bwd, &n);
  if (st) { al_tensor_release(o); return st; }
  if (n) { n->k[0] = dim; n->k[1] = index; n->k[2] = 1; }
  *out = o;
  return AL_OK;
}

/* ---- expand ---------------------------------------------------------------- */
static al_status expand_view_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  return al_sum_to_shape(&gin[0], g, n->in[0].ndim, n->in[0].shape);
}

al_status al_expand(al_tensor **out, al_tensor *x, int ndim, const int64_t *shape_in) {
  AL_NEED(out, "expand", "out"); AL_NEED(x, "expand", "x");
  if (ndim > 0) AL_NEED(shape_in, "expand", "shape");
  char b1[128], b2[128];
  if (ndim < x->ndim || ndim > AL_MAXDIM)
    return al_seterr(AL_EINVAL, "expand: cannot expand %s to %s", al_shape_str(x, b1, sizeof b1), al_dims_str(ndim, shape_in, b2, sizeof b2));
  int64_t shape[AL_MAXDIM], stride[AL_MAXDIM];
  for (int i = 0; i < ndim; i++) {
    int ix = i - (ndim - x->ndim);
    int64_t want = shape_in[i];
    if (ix < 0) {
      if (want < 0) return al_seterr(AL_EINVAL, "expand: -1 not allowed for a new leading dim");
      shape[i] = want; stride[i] = 0;
    } else {
      int64_t have = x->shape[ix];
      if (want == -1) want = have;
      if (want < 0) return al_seterr(AL_EINVAL, "expand: invalid size %lld in %s", (long long)want, al_dims_str(ndim, shape_in, b2, sizeof b2));
      if (have == want) { shape[i] = have; stride[i] = x->stride[ix]; }
      else if (have == 1) { shape[i] = want; stride[i] = 0; }
      else return al_seterr(AL_EINVAL, "expand: cannot expand %s to %s (dim %d: %lld to %lld)", al_shape_str(x, b1, sizeof b1), al_dims_str(ndim, shape_in, b2, sizeof b2), i + 1, (long long)have, (long long)want);
    }
  }
  /* a view of (2^62,4) elements: its numel wraps, and every op over it would loop on a
   * wrong count (al.ones{1,3}:expand{2^62,3}); refused as reshape refuses it */
  int64_t n = 1;
  for (int i = 0; i < ndim; i++)
    if (__builtin_mul_overflow(n, shape[i], &n))
      return al_seterr(AL_EINVAL, "expand: %s has more elements than an int64 counts", al_dims_str(ndim, shape_in, b2, sizeof b2));
  al_tensor *o = new_view(x, ndim, shape, stride, x->offset);
  if (!o) return AL_ENOMEM;
  al_status st = record1(o, x, "expand", expand_view_bwd, NULL);
  if (st) { al_tensor_release(o); return st; }
  *out = o;
  return AL_OK;
}

/* ---- copies ----------------------------------------------------------------- */
static al_status identity_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  gin[0] = al_tensor_retain(g);
  return AL_OK;
}

al_status al_clone(al_tensor **out, al_tensor *x) {
  AL_NEED(out, "clone", "out"); AL_NEED(x, "clone", "x");
  al_tensor *o = al_tensor_new_like(x);
  if (!o) return AL_ENOMEM;
  al_status st = al_copy_into(o, x);
  if (!st) st = record1(o, x, "clone", identity_bwd, NULL);
  if (st) { al_tensor_release(o); return st; }
  *out = o;
  return AL_OK;
}

al_status al_contiguous(al_tensor **out, al_tensor *x) {
  AL_NEED(out, "contiguous", "out"); AL_NEED(x, "contiguous", "x");
  if (al_is_contiguous(x)) { *out = al_tensor_retain(x); return AL_OK; }
  return al_clone(out, x);
}

static al_status cat_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  int dim = (int)n->k[0];
  int64_t start = 0;
  for (int i = 0; i < n->ninputs; i++) {
    int64_t len = n->in[i].shape[dim];
    if (n->in[i].needs) AL_TRY(al_narrow(&gin[i], g, dim, start, len));
    start += len;
  }
  return AL_OK;
}

al_status al_cat(al_tensor **out, al_tensor *const *xs, int n, int dim) {
  AL_NEED(out, "cat", "out");
  if (n >= 1) AL_NEED(xs, "cat", "the tensor list");
  for (int i = 0; i < n; i++) if (!xs[i]) return al_seterr(AL_EINVAL, "cat: tensor %d is NULL", i + 1);
  char b1[128], b2[128];
  if (n < 1) return al_seterr(AL_EINVAL, "cat: need at least one tensor");
  const al_tensor *x0 = xs[0];
  /* al_wrap_dim lets a 0-dim tensor take dim 1 (as squeeze does); cat has no dim to join on */
  if (x0->ndim == 0) return al_seterr(AL_EINVAL, "cat: tensor 1 is 0-dim; cat joins along a dim (use stack for scalars)");
  AL_TRY(al_wrap_dim(&dim, x0->ndim, "cat"));
  int64_t shape[AL_MAXDIM];
  memcpy(shape, x0->shape, sizeof shape);
  shape[dim] = 0;
  for (int i = 0; i < n; i++) {
    const al_tensor *x = xs[i];
    if (x->dtype != x0->dtype)   /* said as such: "all dims but 1 must match" sent one to the shapes */
      return al_seterr(AL_EINVAL, "cat: tensor %d is %s, tensor 1 is %s (all must have one dtype)", i + 1, al_shape_str(x, b1, sizeof b1), al_shape_str(x0, b2, sizeof b2));
    int bad = x->ndim != x0->ndim;
    for (int d = 0; d < x0->ndim && !bad; d++) if (d != dim && x->shape[d] != x0->shape[d]) bad = 1;
    if (bad) return al_seterr(AL_EINVAL, "cat: tensor %d is %s, tensor 1 is %s (all dims but %d must match)", i + 1, al_shape_str(x, b1, sizeof b1), al_shape_str(x0, b2, sizeof b2), dim + 1);
    shape[dim] += x->shape[dim];
  }
  al_tensor *o = al_tensor_new(x0->dtype, x0->ndim, shape);
  if (!o) return AL_ENOMEM;
  int64_t start = 0;
  int was = al_grad_enabled();
  al_set_grad_enabled(0);
  al_status st = AL_OK;
  for (int i = 0; i < n && !st; i++) {
    al_tensor *v = NULL;
    st = al_narrow(&v, o, dim, start, xs[i]->shape[dim]);
    if (!st) st = al_copy_into(v, xs[i]);
    al_tensor_release(v);
    start += xs[i]->shape[dim];
  }
  al_set_grad_enabled(was);
  if (st) { al_tensor_release(o); return st; }
  al_node *node = al_node_new("cat", cat_bwd, n, xs, &st);
  if (st) { al_tensor_release(o); return st; }
  if (node) { node->k[0] = dim; al_node_attach(node, o); }
  *out = o;
  return AL_OK;
}

al_status al_stack(al_tensor **out, al_tensor *const *xs, int n, int dim) {
  AL_NEED(out, "stack", "out");
  if (n >= 1) AL_NEED(xs, "stack", "the tensor list");
  for (int i = 0; i < n; i++) if (!xs[i]) return al_seterr(AL_EINVAL, "stack: tensor %d is NULL", i + 1);
  if (n < 1) return al_seterr(AL_EINVAL, "stack: need at least one tensor");
  /* wrapped here and checked: al_unsqueeze would wrap a negative dim a second time, so -4 on
   * a 2-dim tensor landed at dim 3 instead of being refused */
  if (dim < -(xs[0]->ndim + 1) || dim > xs[0]->ndim) {
    char b[128];
    return al_seterr(AL_EINVAL, "stack: dim out of range for tensors %s (dims are 1..%d or -%d..-1)",
                     al_shape_str(xs[0], b, sizeof b), xs[0]->ndim + 1, xs[0]->ndim + 1);
  }
  if (dim < 0) dim += xs[0]->ndim + 1;
  al_tensor **us = calloc((size_t)n, sizeof *us);
  if (!us) return al_seterr(AL_ENOMEM, "stack: out of memory");
  al_status st = AL_OK;
  for (int i = 0; i < n && !st; i++) {
    if (xs[i]->ndim != xs[0]->ndim || !al_same_shape(xs[i], xs[0]) || xs[i]->dtype != xs[0]->dtype) {
      char b1[128], b2[128];
      st = al_seterr(AL_EINVAL, "stack: tensor %d is %s, tensor 1 is %s (all must match in shape and dtype)", i + 1, al_shape_str(xs[i], b1, sizeof b1), al_shape_str(xs[0], b2, sizeof b2));
      break;
    }
    st = al_unsqueeze(&us[i], xs[i], dim);
  }
  if (!st) st = al_cat(out, us, n, dim);
  for (int i = 0; i < n; i++) al_tensor_release(us[i]);
  free(us);
  return st;
}

/* ---- indexing ----------------------------------------------------------------- */
static al_status check_index(const al_tensor *idx, int64_t limit, const char *op) {
  char b[128];
  const char *what = strcmp(op, "embedding") ? "index" : "id";
  if (idx->dtype != AL_I64) return al_seterr(AL_EINVAL, "%s: indices must be int64, got %s", op, al_shape_str(idx, b, sizeof b));
  al_tensor *c = NULL;
  AL_TRY(al_contiguous_ref(&c, (al_tensor *)idx));
  int64_t n = al_numel(c);
  const int64_t *p = al_i64(c);
  for (int64_t i = 0; i < n; i++)
    if (p[i] < 0 || p[i] >= limit) {
      int64_t v = p[i];
      al_tensor_release(c);
      return al_seterr(AL_EINVAL, "%s: %s %lld (element %lld) out of range 1..%lld (1-based)", op, what, (long long)(v + 1),
                       (long long)(i + 1), (long long)limit);
    }
  al_tensor_release(c);
  return AL_OK;
}

/* index_select backward: zeros, then rows of g added at idx (repeats accumulate). */
static al_status index_select_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  int dim = (int)n->k[0];
  al_tensor *gc = NULL;
  AL_TRY(al_contiguous_ref(&gc, g));
  al_tensor *gi = al_tensor_zeros(AL_F32, n->in[0].ndim, n->in[0].shape);
  if (!gi) { al_tensor_release(gc); return AL_ENOMEM; }
  const int64_t *idx = al_i64(n->saved[0]);
  int64_t m = al_numel(n->saved[0]);
  int64_t outer = 1, inner = 1, len = n->in[0].shape[dim];
  for (int i = 0; i < dim; i++) outer *= n->in[0].shape[i];
  for (int i = dim + 1; i < n->in[0].ndim; i++) inner *= n->in[0].shape[i];
  const float *pg = al_f32(gc);
  float *pi = al_f32(gi);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < m; j++) {
      float *dst = pi + (o * len + idx[j]) * inner;
      const float *src = pg + (o * m + j) * inner;
      for (int64_t i = 0; i < inner; i++) dst[i] += src[i];
    }
  al_tensor_release(gc);
  gin[0] = gi;
  return AL_OK;
}

al_status al_index_select(al_tensor **out, al_tensor *x, int dim, al_tensor *idx) {
  AL_NEED(out, "index_select", "out"); AL_NEED(x, "index_select", "x"); AL_NEED(idx, "index_select", "idx");
  char b[128];
  AL_TRY(al_wrap_dim(&dim, x->ndim, "index_select"));
  if (idx->ndim > 1) return al_seterr(AL_EINVAL, "index_select: indices must be 1-D, got %s", al_shape_str(idx, b, sizeof b));
  AL_TRY(check_index(idx, x->ndim ? x->shape[dim] : 1, "index_select"));
  /* a 0-dim x has one element and its result is 0-dim too: room for exactly one index (as torch).
   * Two indices wrote past the 1-element output; none left it uninitialised. */
  if (x->ndim == 0 && al_numel(idx) != 1)
    return al_seterr(AL_EINVAL, "index_select: a 0-dim tensor takes exactly one index, got %s", al_shape_str(idx, b, sizeof b));
  al_tensor *xc = NULL, *ic = NULL;
  AL_TRY(al_contiguous_ref(&xc, x));
  al_status st = al_contiguous_ref(&ic, idx);
  if (st) { al_tensor_release(xc); return st; }
  int64_t m = al_numel(ic), shape[AL_MAXDIM];
  memcpy(shape, x->shape, sizeof shape);
  shape[dim] = m;
  al_tensor *o = al_tensor_new(x->dtype, x->ndim, shape);
  if (!o) { al_tensor_release(xc); al_tensor_release(ic); return AL_ENOMEM; }
  int64_t outer = 1, inner = 1, len = x->shape[dim];
  for (int i = 0; i < dim; i++) outer *= x->shape[i];
  for (int i = dim + 1; i < x->ndim; i++) inner *= x->shape[i];
  size_t es = al_dtype_size(x->dtype);
  const char *px = (const char *)xc->storage->data + xc->offset * (int64_t)es;
  char *po = (char *)o->storage->data;
  const int64_t *pi = al_i64(ic);
  for (int64_t r = 0; r < outer; r++)
    for (int64_t j = 0; j < m; j++)
      memcpy(po + ((r * m + j) * inner) * (int64_t)es, px + ((r * len + pi[j]) * inner) * (int64_t)es, (size_t)inner * es);
  al_tensor_release(xc);
  al_node *n = al_node_new("index_select", index_select_bwd, 1, &x, &st);
  if (st) { al_tensor_release(o); al_tensor_release(ic); return st; }
  if (n) { n->k[0] = dim; al_node_save(n, ic); al_node_attach(n, o); }
  al_tensor_release(ic);
  *out = o;
  return AL_OK;
}

al_status al_embedding(al_tensor **out, al_tensor *weight, al_tensor *ids) {
  AL_NEED(out, "embedding", "out"); AL_NEED(weight, "embedding", "weight"); AL_NEED(ids, "embedding", "ids");
  char b[128];
  if (weight->ndim != 2) return al_seterr(AL_EINVAL, "embedding: weight must be (V,D), got %s", al_shape_str(weight, b, sizeof b));
  if (ids->dtype != AL_I64) return al_seterr(AL_EINVAL, "embedding: ids must be int64, got %s", al_shape_str(ids, b, sizeof b));
  AL_TRY(check_index(ids, weight->shape[0], "embedding"));
  al_tensor *flat = NULL, *rows = NULL;
  int64_t m = al_numel(ids);
  AL_TRY(al_reshape(&flat, ids, 1, &m));
  al_status st = al_index_select(&rows, weight, 0, flat);
  al_tensor_release(flat);
  if (st) return st;
  int64_t shape[AL_MAXDIM];
  if (ids->ndim + 1 > AL_MAXDIM) { al_tensor_release(rows); return al_seterr(AL_EINVAL, "embedding: too many dims"); }
  memcpy(shape, ids->shape, sizeof(int64_t) * (size_t)ids->ndim);
  shape[ids->ndim] = weight->shape[1];
  st = al_reshape(out, rows, ids->ndim + 1, shape);
  al_tensor_release(rows);
  return st;
}

static al_status gather_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  int dim = (int)n->k[0];
  al_tensor *gc = NULL;
  AL_TRY(al_contiguous_ref(&gc, g));
  al_tensor *gi = al_tensor_zeros(AL_F32, n->in[0].ndim, n->in[0].shape);
  if (!gi) { al_tensor_release(gc); return AL_ENOMEM; }
  al_tensor *idx = n->saved[0];
  int nd = idx->ndim;
  int64_t cnt = al_numel(idx), pos[AL_MAXDIM] = {0};
  int64_t xst[AL_MAXDIM], s = 1;
  for (int i = nd - 1; i >= 0; i--) { xst[i] = s; s *= n->in[0].shape[i]; }
  const int64_t *pi = al_i64(idx);
  const float *pg = al_f32(gc);
  float *px = al_f32(gi);
  for (int64_t k = 0; k < cnt; k++) {
    int64_t off = 0;
    for (int d = 0; d < nd; d++) off += (d == dim ? pi[k] : pos[d]) * xst[d];
    px[off] += pg[k];
    for (int d = nd - 1; d >= 0; d--) { if (++pos[d] < idx->shape[d]) break; pos[d] = 0; }
  }
  al_tensor_release(gc);
  gin[0] = gi;
  return AL_OK;
}

al_status al_gather(al_tensor **out, al_tensor *x, int dim, al_tensor *idx) {
  AL_NEED(out, "gather", "out"); AL_NEED(x, "gather", "x"); AL_NEED(idx, "gather", "idx");
  char b1[128], b2[128];
  AL_TRY(al_wrap_dim(&dim, x->ndim, "gather"));
  if (idx->ndim != x->ndim) return al_seterr(AL_EINVAL, "gather: index %s must have the same number of dims as input %s", al_shape_str(idx, b1, sizeof b1), al_shape_str(x, b2, sizeof b2));
  for (int d = 0; d < x->ndim; d++)
    if (d != dim && idx->shape[d] > x->shape[d])
      return al_seterr(AL_EINVAL, "gather: index %s larger than input %s in dim %d", al_shape_str(idx, b1, sizeof b1), al_shape_str(x, b2, sizeof b2), d + 1);
  /* a 0-dim x has one entry along its (wrapped) dim; shape[0] it does not have said "out of
   * range 1..0" for every index (index_select already counts it so) */
  AL_TRY(check_index(idx, x->ndim ? x->shape[dim] : 1, "gather"));
  al_tensor *xc = NULL, *ic = NULL;
  AL_TRY(al_contiguous_ref(&xc, x));
  al_status st = al_contiguous_ref(&ic, idx);
  if (st) { al_tensor_release(xc); return st; }
  al_tensor *o = al_tensor_new(x->dtype, idx->ndim, idx->shape);
  if (!o) { al_tensor_release(xc); al_tensor_release(ic); return AL_ENOMEM; }
  int nd = x->ndim;
  int64_t cnt = al_numel(ic), pos[AL_MAXDIM] = {0};
  const int64_t *pi = al_i64(ic);
  for (int64_t k = 0; k < cnt; k++) {
    int64_t off = 0;
    for (int d = 0; d < nd; d++) off += (d == dim ? pi[k] : pos[d]) * xc->stride[d];
    if (x->dtype == AL_F32) al_f32(o)[k] = al_f32(xc)[off]; else al_i64(o)[k] = al_i64(xc)[off];
    for (int d = nd - 1; d >= 0; d--) { if (++pos[d] < ic->shape[d]) break; pos[d] = 0; }
  }
  al_tensor_release(xc);
  al_node *n = al_node_new("gather", gather_bwd, 1, &x, &st);
  if (st) { al_tensor_release(o); al_tensor_release(ic); return st; }
  if (n) { n->k[0] = dim; al_node_save(n, ic); al_node_attach(n, o); }
  al_tensor_release(ic);
  *out = o;
  return AL_OK;
}

al_status al_masked_fill(al_tensor **out, al_tensor *x, al_tensor *mask, double value) {
  AL_NEED(out, "masked_fill", "out"); AL_NEED(x, "masked_fill", "x"); AL_NEED(mask, "masked_fill", "mask");
  /* the mask broadcasts to x; the result has x's shape (as torch.masked_fill) */
  int nd;
  int64_t shape[AL_MAXDIM];
  if (al_broadcast_shape_(&nd, shape, mask, x, "masked_fill") || nd != x->ndim ||
      memcmp(shape, x->shape, sizeof(int64_t) * (size_t)nd)) {
    char b1[128], b2[128];
    return al_seterr(AL_EINVAL, "masked_fill: mask %s does not broadcast to x %s", al_shape_str(mask, b1, sizeof b1), al_shape_str(x, b2, sizeof b2));
  }
  /* an int64 x filled with a whole number stays int64 (al_where of two int64s), as in PyTorch */
  int whole = x->dtype == AL_I64 && al_whole_i64_(value);
  al_tensor *v = al_tensor_new(whole ? AL_I64 : AL_F32, 0, NULL);
  if (!v) return AL_ENOMEM;
  if (whole) al_i64(v)[0] = (int64_t)value;
  else al_f32(v)[0] = (float)value;
  al_status st = al_where(out, mask, v, x);
  al_tensor_release(v);
  return st;
}
