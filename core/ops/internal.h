/* core/ops/internal.h -- helpers shared by the core's op files (not public API). */
#ifndef ATTNLAB_CORE_INTERNAL_H
#define ATTNLAB_CORE_INTERNAL_H
#include <math.h>
#include <stdint.h>

#include "attnlab/ops.h"
#include "../util/need.h"

al_status al_broadcast_shape_(int *ndim, int64_t *shape, const al_tensor *a, const al_tensor *b, const char *op);

/* Make x contiguous float32 (new reference), or fail naming `op` and the dtype. */
al_status al_need_f32_(al_tensor **out, al_tensor *x, const char *op);

/* Whether v is a whole number an int64 holds (NaN and +-inf are not): a scalar that keeps an
 * int64 op in int64 (clamp's bounds, masked_fill's value). */
static inline int al_whole_i64_(double v) {
  return v == floor(v) && v >= -9223372036854775808.0 && v < 9223372036854775808.0;
}
/* v as int64 the way al_copy_into converts: toward zero, saturating, NaN -> 0 (a plain cast of
 * NaN or of a value out of range is undefined behaviour). */
static inline int64_t al_i64_saturating_(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

/* A keep mask (nonzero = keep, 0 = drop; the normalizers' and attention's), as float32
 * contiguous m: AL_OK when every value is finite, else AL_EINVAL naming op, the first NaN or
 * +-inf (1-based, in m's shape) and why. -inf is what an additive mask (0 keep, -inf drop, as
 * PyTorch's float attn_mask) holds, and as nonzero it kept what it was meant to drop while
 * dropping the rest; NaN is a computed mask gone wrong. (core/ops/norm.c) */
al_status al_mask_check_finite_(const char *op, const al_tensor *m);

#define AL_TRY(expr) do { al_status st_ = (expr); if (st_) return st_; } while (0)

#endif
