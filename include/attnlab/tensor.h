/* attnlab/tensor.h -- strided tensors over refcounted storage.
 *
 * A tensor is (storage, offset, shape, stride) like torch7's THTensor: views
 * (reshape, transpose, permute, narrow, select, expand) share the storage and copy
 * nothing. dtypes: float32 for data, int64 for labels and token ids. Strides and
 * offsets count elements, not bytes. Reference counts are plain ints: a tensor is
 * owned by one thread at a time (the Lua state that made it).
 *
 * Ownership rule: functions named *_new / *_view / ops returning `al_tensor **out`
 * hand the caller one reference; al_tensor_release() drops it. */
#ifndef ATTNLAB_TENSOR_H
#define ATTNLAB_TENSOR_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { AL_F32 = 0, AL_I64 = 1 } al_dtype;

typedef struct al_storage {
  void *data;
  size_t nbytes;
  int refcount;
  /* Counts in-place changes of the data (al_tensor_mark_modified), shared by every view of
   * the storage: a backward that finds a tensor it saved at another version refuses to run
   * on the changed values instead of returning a wrong gradient (as PyTorch's version
   * counter). Kernels that write an op's fresh output do not count. */
  uint64_t version;
} al_storage;

typedef struct al_node al_node;

typedef struct al_tensor {
  int refcount;
  al_dtype dtype;
  int ndim;                     /* 0 = scalar */
  int64_t shape[AL_MAXDIM];
  int64_t stride[AL_MAXDIM];    /* elements */
  int64_t offset;               /* elements */
  al_storage *storage;
  /* autograd: a leaf has requires_grad and no grad_fn; results of ops on tensors
   * that require grad carry the node that made them. */
  uint8_t requires_grad;
  struct al_tensor *grad;       /* leaves: accumulated gradient, contiguous, same shape */
  al_node *grad_fn;
} al_tensor;

size_t al_dtype_size(al_dtype dt);
const char *al_dtype_name(al_dtype dt);

/* New contiguous tensor; data uninitialised (al_tensor_zeros: zero-filled). shape: ndim sizes (may
 * be NULL for ndim 0). NULL with al_errmsg() set on a bad dtype, ndim or shape (AL_EINVAL) or no
 * memory; al_tensor_view and al_tensor_new_like likewise. */
al_tensor *al_tensor_new(al_dtype dt, int ndim, const int64_t *shape);
al_tensor *al_tensor_zeros(al_dtype dt, int ndim, const int64_t *shape);
al_tensor *al_tensor_new_like(const al_tensor *t);      /* same dtype and shape, contiguous */
/* A view of t's storage with the given geometry (no bounds check: callers check). */
al_tensor *al_tensor_view(const al_tensor *t, int ndim, const int64_t *shape,
                          const int64_t *stride, int64_t offset);
al_tensor *al_tensor_retain(al_tensor *t);
void al_tensor_release(al_tensor *t);                    /* NULL is fine */

int64_t al_numel(const al_tensor *t);
/* Row-major with no gaps; the strides of size-1 dims do not matter, and a tensor with no
 * elements is contiguous whatever its strides (as PyTorch). */
int al_is_contiguous(const al_tensor *t);
int al_same_shape(const al_tensor *a, const al_tensor *b);
static inline float *al_f32(const al_tensor *t) {
  return (float *)t->storage->data + t->offset;
}
static inline int64_t *al_i64(const al_tensor *t) {
  return (int64_t *)t->storage->data + t->offset;
}
/* "float32 (2,3,4)" into buf; returns buf. */
char *al_shape_str(const al_tensor *t, char *buf, size_t n);
char *al_dims_str(int ndim, const int64_t *shape, char *buf, size_t n);

/* Contiguous copy (or a new reference when already contiguous: then *out is t itself, and
 * writing into it writes into t). */
al_status al_contiguous_ref(al_tensor **out, al_tensor *t);
/* dst[...] = src[...]: same numel (both walked in row-major order), any strides, any
 * dtypes; float -> int64 truncates toward zero and saturates (NaN -> 0). */
al_status al_copy_into(al_tensor *dst, const al_tensor *src);
void al_fill(al_tensor *t, double v);
/* al_fill with an integer: exact into an int64 tensor whatever its size (a double holds
 * integers exactly only up to 2^53), rounded to float into a float32 one. */
void al_fill_i64(al_tensor *t, int64_t v);
/* Record that t's data was changed in place (t.copy_, fill_, add_, mul_, t[i] = v, an
 * optimizer step...): every API entry point that overwrites the data of a tensor the caller
 * already holds calls this once, after the write. C callers that write into a tensor that
 * may have been used by a recorded op should call it too. */
void al_tensor_mark_modified(al_tensor *t);

/* Normalise a 0-based dim that may be negative (-1 = last). The error message speaks
 * in the Lua API's 1-based dims ("dim 3 out of range" for a 0-based 2). */
al_status al_wrap_dim(int *dim, int ndim, const char *what);

#ifdef __cplusplus
}
#endif

#endif
