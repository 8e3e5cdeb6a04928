/* core/ops/internal.h -- helpers shared by the core's op files (not public API). */
#ifndef ATTNLAB_CORE_INTERNAL_H
#define ATTNLAB_CORE_INTERNAL_H
#include "attnlab/ops.h"

al_status al_broadcast_shape_(int *ndim, int64_t *shape, const al_tensor *a, const al_tensor *b, const char *op);

/* Make x contiguous float32 (new reference), or fail naming `op` and the dtype. */
al_status al_need_f32_(al_tensor **out, al_tensor *x, const char *op);

#define AL_TRY(expr) do { al_status st_ = (expr); if (st_) return st_; } while (0)

#endif
