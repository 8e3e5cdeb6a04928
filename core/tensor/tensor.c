/* core/tensor/tensor.c -- tensor and storage lifetime, geometry helpers, strided copy.
 * C11 + OpenMP (a large strided copy splits its rows). Storage bytes come from al_malloc so
 * they are counted (base.h). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/autograd.h"
#include "attnlab/tensor.h"
#include "attnlab/threads.h"
#include "../util/need.h"

size_t al_dtype_size(al_dtype dt) { return dt == AL_I64 ? 8 : 4; }
const char *al_dtype_name(al_dtype dt) { return dt == AL_I64 ? "int64" : "float32"; }

static al_storage *storage_new(size_t nbytes) {
  al_storage *s = malloc(sizeof *s);
  if (!s) return NULL;
  s->data = al_malloc(nbytes ? nbytes : 1);
  if (!s->data) { free(s); return NULL; }
  s->nbytes = nbytes;
  s->refcount = 1;
  s->version = 0;
  return s;
}

static void storage_release(al_storage *s) {
  if (s && --s->refcount == 0) {
    al_free(s->data, s->nbytes ? s->nbytes : 1);
    free(s);
  }
}

al_tensor *al_tensor_new(al_dtype dt, int ndim, const int64_t *shape) {
  if (dt != AL_F32 && dt != AL_I64) { al_seterr(AL_EINVAL, "tensor: unknown dtype %d", (int)dt); return NULL; }
  if (ndim < 0 || ndim > AL_MAXDIM) {
    al_seterr(AL_EINVAL, "tensor: %d dims, at most %d supported", ndim, AL_MAXDIM);
    return NULL;
  }
  if (ndim > 0 && !shape) { al_seterr(AL_EINVAL, "tensor: shape is NULL for %d dims", ndim); return NULL; }
  /* span: the product of the nonzero sizes, which the strides below reach. Capping numel alone
   * let (0, 2^40, 2^40) through (numel 0) and its strides overflowed int64 (undefined). The cap
   * is on span, which is numel whenever numel > 0. */
  int64_t n = 1, span = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) { al_seterr(AL_EINVAL, "tensor: negative size %lld in dim %d", (long long)shape[i], i + 1); return NULL; }
    if (shape[i] && span > AL_MAX_SPAN / shape[i]) {
      char b[160];
      al_seterr(AL_EINVAL, "tensor: shape %s is too large (its nonzero sizes multiply past 2^60 elements)",
                al_dims_str(ndim, shape, b, sizeof b));
      return NULL;
    }
    if (shape[i]) span *= shape[i];
    n *= shape[i];
  }
  al_tensor *t = calloc(1, sizeof *t);
  if (!t) { al_seterr(AL_ENOMEM, "tensor: out of memory"); return NULL; }
  t->storage = storage_new((size_t)n * al_dtype_size(dt));
  if (!t->storage) {
    free(t);
    al_seterr(AL_ENOMEM, "tensor: cannot allocate %lld bytes", (long long)(n * (int64_t)al_dtype_size(dt)));
    return NULL;
  }
  t->refcount = 1;
  t->dtype = dt;
  t->ndim = ndim;
  int64_t st = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    t->shape[i] = shape[i];
    t->stride[i] = st;
    st *= shape[i];
  }
  return t;
}

al_tensor *al_tensor_zeros(al_dtype dt, int ndim, const int64_t *shape) {
  al_tensor *t = al_tensor_new(dt, ndim, shape);
  if (t) memset(t->storage->data, 0, t->storage->nbytes);
  return t;
}

al_tensor *al_tensor_new_like(const al_tensor *t) {
  if (!t) { al_seterr(AL_EINVAL, "tensor: new_like of a NULL tensor"); return NULL; }
  return al_tensor_new(t->dtype, t->ndim, t->shape);
}

al_tensor *al_tensor_view(const al_tensor *src, int ndim, const int64_t *shape, const int64_t *stride,
                          int64_t offset) {
  /* the geometry is the caller's to get right (no bounds check), but ndim indexes shape[] here */
  if (ndim < 0 || ndim > AL_MAXDIM) {
    al_seterr(AL_EINVAL, "tensor view: %d dims, at most %d supported", ndim, AL_MAXDIM);
    return NULL;
  }
  if (!src || (ndim > 0 && (!shape || !stride))) {
    al_seterr(AL_EINVAL, "tensor view: %s is NULL", !src ? "the source tensor" : !shape ? "shape" : "stride");
    return NULL;
  }
  al_tensor *t = calloc(1, sizeof *t);
  if (!t) { al_seterr(AL_ENOMEM, "tensor view: out of memory"); return NULL; }
  t->refcount = 1;
  t->dtype = src->dtype;
  t->ndim = ndim;
  for (int i = 0; i < ndim; i++) { t->shape[i] = shape[i]; t->stride[i] = stride[i]; }
  t->offset = offset;
  t->storage = src->storage;
  t->storage->refcount++;
  return t;
}

al_tensor *al_tensor_retain(al_tensor *t) {
  if (t) t->refcount++;
  return t;
}

void al_tensor_release(al_tensor *t) {
  if (!t || --t->refcount > 0) return;
  storage_release(t->storage);
  al_tensor_release(t->grad);
  al_node_release(t->grad_fn);
  free(t);
}

int64_t al_numel(const al_tensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
  return n;
}

int al_is_contiguous(const al_tensor *t) {
  /* no elements: no layout to disagree with (as PyTorch; an empty transpose or narrow was "not
   * contiguous", and view() refused it) */
  if (al_numel(t) == 0) return 1;
  int64_t st = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    if (t->shape[i] != 1 && t->stride[i] != st) return 0;
    st *= t->shape[i];
  }
  return 1;
}

int al_same_shape(const al_tensor *a, const al_tensor *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++) if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

char *al_dims_str(int ndim, const int64_t *shape, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "(");
  for (int i = 0; i < ndim && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, i ? ",%lld" : "%lld", (long long)shape[i]);
  if (k < n) snprintf(buf + k, n - k, ")");
  return buf;
}

char *al_shape_str(const al_tensor *t, char *buf, size_t n) {
  char dims[256];
  snprintf(buf, n, "%s %s", al_dtype_name(t->dtype), al_dims_str(t->ndim, t->shape, dims, sizeof dims));
  return buf;
}

al_status al_wrap_dim(int *dim, int ndim, const char *what) {
  AL_NEED(dim, what ? what : "wrap_dim", "dim");
  int d = *dim;
  int lim = ndim > 0 ? ndim : 1;
  if (d < 0) d += lim;
  /* the message speaks the Lua API's 1-based dims (the binding passes d-1 for d > 0) */
  if (d < 0 || d >= lim)
    return al_seterr(AL_EINVAL, "%s: dim %d out of range for a %d-dim tensor (dims are 1..%d or -%d..-1)", what,
                     *dim >= 0 ? *dim + 1 : *dim, ndim, lim, lim);
  *dim = d;
  return AL_OK;
}

/* float -> int64 by truncation, saturating (NaN -> 0): a plain cast of NaN or of
 * |v| >= 2^63 is undefined behaviour in C. al_to_dtype reports such values. */
static inline int64_t f32_to_i64(float v) {
  if (v != v) return 0;
  if (v >= 9.2233720e18f) return INT64_MAX;
  if (v <= -9.2233720e18f) return INT64_MIN;
  return (int64_t)v;
}

/* Rows [r0, r1) of copy_same_shape's merged geometry: the first row's offsets by division,
 * the next ones by stepping the index like an odometer (a division per dim per row cost more
 * than a short row's copy: the ViT's patch split copies 49,152 rows of 8 floats a batch). */
static void copy_rows(char *dbase, const char *sbase, size_t es, int m, const int64_t *shape, const int64_t *ds,
                      const int64_t *ss, int64_t r0, int64_t r1) {
  int64_t idx[AL_MAXDIM] = {0}, doff = 0, soff = 0, rem = r0;
  int64_t inner = shape[m - 1], di = ds[m - 1], si = ss[m - 1];
  for (int d = m - 2; d >= 0; d--) { idx[d] = rem % shape[d]; rem /= shape[d]; doff += idx[d] * ds[d]; soff += idx[d] * ss[d]; }
  size_t bytes = (size_t)inner * es;
  int short16 = bytes % 16 == 0 && bytes <= 256;   /* short rows: inline 16-byte moves, no memcpy call */
  for (int64_t r = r0; r < r1; r++) {
    if (di == 1 && si == 1) {
      char *o = dbase + doff * (int64_t)es;
      const char *p = sbase + soff * (int64_t)es;
      if (short16)
        for (size_t b = 0; b < bytes; b += 16) memcpy(o + b, p + b, 16);
      else
        memcpy(o, p, bytes);
    } else if (es == 4) {
      float *o = (float *)dbase + doff;
      const float *p = (const float *)sbase + soff;
      for (int64_t i = 0; i < inner; i++) o[i * di] = p[i * si];
    } else {
      int64_t *o = (int64_t *)dbase + doff;
      const int64_t *p = (const int64_t *)sbase + soff;
      for (int64_t i = 0; i < inner; i++) o[i * di] = p[i * si];
    }
    for (int d = m - 2; d >= 0; d--) {
      doff += ds[d]; soff += ss[d];
      if (++idx[d] < shape[d]) break;
      doff -= ds[d] * shape[d]; soff -= ss[d] * shape[d];
      idx[d] = 0;
    }
  }
}

/* Same shape and dtype: merge dims that are contiguous in both, then copy rows of the
 * innermost merged dim with a tight loop (memcpy when both are unit-stride). Large copies
 * split their rows across threads (each row is written once: no result depends on it);
 * not from inside a parallel region, where a nested one would only cost a wake-up. */
static void copy_same_shape(al_tensor *dst, const al_tensor *src) {
  int64_t shape[AL_MAXDIM], ds[AL_MAXDIM], ss[AL_MAXDIM];
  int m = 0;
  for (int i = 0; i < dst->ndim; i++) {
    if (dst->shape[i] == 1) continue;
    if (m > 0 && ds[m - 1] == dst->stride[i] * dst->shape[i] && ss[m - 1] == src->stride[i] * dst->shape[i]) {
      shape[m - 1] *= dst->shape[i];
      ds[m - 1] = dst->stride[i];
      ss[m - 1] = src->stride[i];
      continue;
    }
    shape[m] = dst->shape[i]; ds[m] = dst->stride[i]; ss[m] = src->stride[i];
    m++;
  }
  if (m == 0) { shape[0] = 1; ds[0] = ss[0] = 1; m = 1; }
  size_t es = al_dtype_size(dst->dtype);
  char *dbase = (char *)dst->storage->data + dst->offset * (int64_t)es;
  const char *sbase = (const char *)src->storage->data + src->offset * (int64_t)es;
  int64_t rows = 1;
  for (int i = 0; i < m - 1; i++) rows *= shape[i];
  int nt = al_get_num_threads();
  if (nt < 2 || rows < 2 || rows * shape[m - 1] < AL_PAR_MIN_WORK || omp_in_parallel()) {
    copy_rows(dbase, sbase, es, m, shape, ds, ss, 0, rows);
    return;
  }
  if (nt > rows) nt = (int)rows;
  #pragma omp parallel num_threads(nt)
  {
    int64_t t = omp_get_thread_num(), per = (rows + nt - 1) / nt, r0 = t * per, r1 = r0 + per < rows ? r0 + per : rows;
    if (r0 < r1) copy_rows(dbase, sbase, es, m, shape, ds, ss, r0, r1);
  }
}

/* The first and last element a non-empty view can touch in its storage. */
static void view_span(const al_tensor *t, int64_t *lo, int64_t *hi) {
  *lo = *hi = t->offset;
  for (int d = 0; d < t->ndim; d++) {
    int64_t reach = (t->shape[d] - 1) * t->stride[d];
    if (reach < 0) *lo += reach; else *hi += reach;
  }
}

static int same_view(const al_tensor *a, const al_tensor *b) {
  if (a->storage != b->storage || a->dtype != b->dtype || a->offset != b->offset || !al_same_shape(a, b)) return 0;
  for (int d = 0; d < a->ndim; d++) if (a->shape[d] > 1 && a->stride[d] != b->stride[d]) return 0;
  return 1;
}

al_status al_copy_into(al_tensor *dst, const al_tensor *src) {
  AL_NEED(dst, "copy", "dst"); AL_NEED(src, "copy", "src");
  int64_t n = al_numel(dst);
  if (n != al_numel(src)) {
    char a[128], b[128];
    return al_seterr(AL_EINVAL, "copy: sizes differ: %s vs %s", al_shape_str(dst, a, sizeof a), al_shape_str(src, b, sizeof b));
  }
  if (n == 0) return AL_OK;
  if (dst->storage == src->storage) {
    int64_t dlo, dhi, slo, shi;
    view_span(dst, &dlo, &dhi);
    view_span(src, &slo, &shi);
    if (dlo <= shi && slo <= dhi) {
      if (same_view(dst, src)) return AL_OK;   /* x:copy_(x) */
      /* overlapping views of one storage (a shifted slice into itself): every element of src
       * is read before any of dst is written, through a copy, as if they did not share memory */
      al_tensor *tmp = al_tensor_new(src->dtype, src->ndim, src->shape);
      if (!tmp) return AL_ENOMEM;
      copy_same_shape(tmp, src);
      al_status st = al_copy_into(dst, tmp);
      al_tensor_release(tmp);
      return st;
    }
  }
  if (dst->dtype == src->dtype && al_same_shape(dst, src)) {
    copy_same_shape(dst, src);
    return AL_OK;
  }
  /* iterate in dst's shape; src is walked in its own shape (same numel, row-major order) */
  int64_t di[AL_MAXDIM] = {0}, si[AL_MAXDIM] = {0};
  int64_t doff = dst->offset, soff = src->offset;
  int dn = dst->ndim, sn = src->ndim;
  int dinner = dn ? dn - 1 : 0, sinner = sn ? sn - 1 : 0;
  int64_t dlen = dn ? dst->shape[dinner] : 1, dstr = dn ? dst->stride[dinner] : 1;
  int64_t slen = sn ? src->shape[sinner] : 1, sstr = sn ? src->stride[sinner] : 1;
  int64_t dpos = 0, spos = 0;   /* position within the innermost dims */
  for (int64_t k = 0; k < n; k++) {
    int64_t dof = doff + dpos * dstr, sof = soff + spos * sstr;
    if (dst->dtype == AL_F32) {
      float v = src->dtype == AL_F32 ? ((float *)src->storage->data)[sof]
                                     : (float)((int64_t *)src->storage->data)[sof];
      ((float *)dst->storage->data)[dof] = v;
    } else {
      int64_t v = src->dtype == AL_I64 ? ((int64_t *)src->storage->data)[sof]
                                       : f32_to_i64(((float *)src->storage->data)[sof]);
      ((int64_t *)dst->storage->data)[dof] = v;
    }
    if (++dpos == dlen) {
      dpos = 0;
      for (int d = dinner - 1; d >= 0; d--) {
        doff += dst->stride[d];
        if (++di[d] < dst->shape[d]) break;
        doff -= dst->stride[d] * dst->shape[d];
        di[d] = 0;
      }
    }
    if (++spos == slen) {
      spos = 0;
      for (int d = sinner - 1; d >= 0; d--) {
        soff += src->stride[d];
        if (++si[d] < src->shape[d]) break;
        soff -= src->stride[d] * src->shape[d];
        si[d] = 0;
      }
    }
  }
  return AL_OK;
}

al_status al_contiguous_ref(al_tensor **out, al_tensor *t) {
  AL_NEED(out, "contiguous", "out"); AL_NEED(t, "contiguous", "t");
  if (al_is_contiguous(t)) { *out = al_tensor_retain(t); return AL_OK; }
  al_tensor *c = al_tensor_new_like(t);
  if (!c) return AL_ENOMEM;
  al_status st = al_copy_into(c, t);
  if (st) { al_tensor_release(c); return st; }
  *out = c;
  return AL_OK;
}

/* double -> int64 as al_copy_into converts: toward zero, saturating, NaN -> 0 (a plain cast
 * of NaN or of a value out of range is undefined behaviour). */
static int64_t to_i64_saturating(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

/* One fill for both: an int64 tensor takes v exactly, a float32 one (float)v; a strided
 * tensor is filled through a contiguous temporary. */
static void fill_value(al_tensor *t, double v, int64_t iv) {
  int64_t n = al_numel(t);
  if (al_is_contiguous(t)) {
    if (t->dtype == AL_F32) { float *p = al_f32(t); for (int64_t i = 0; i < n; i++) p[i] = (float)v; }
    else { int64_t *p = al_i64(t); for (int64_t i = 0; i < n; i++) p[i] = iv; }
    return;
  }
  al_tensor *c = al_tensor_new_like(t);
  if (!c) return;
  fill_value(c, v, iv);
  al_copy_into(t, c);
  al_tensor_release(c);
}

void al_fill_i64(al_tensor *t, int64_t v) { fill_value(t, (double)v, v); }

void al_fill(al_tensor *t, double v) { fill_value(t, v, t->dtype == AL_I64 ? to_i64_saturating(v) : 0); }

void al_tensor_mark_modified(al_tensor *t) {
  if (t && t->storage) t->storage->version++;
}
