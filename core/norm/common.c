/* core/norm/common.c -- what the normalizer kernels share out of line: argument checks, the row
 * split across OpenMP threads with its per-thread workspace, support counts, and the sorted
 * gather of the scalar references.
 *
 * Pure C11 + OpenMP, no Lua, no BLAS. Compiled once per CPU level with the kernels. */
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/normalizers.h"
#include "attnlab/threads.h"
#include "internal.h"

al_status al_norm_check_(const char *who, const void *out, const void *x, const uint8_t *keep,
                         int64_t mrows, int64_t rows, int64_t n) {
  if (rows < 0 || n < 0)
    return al_seterr(AL_EINVAL, "%s: bad shape (rows=%" PRId64 ", n=%" PRId64 "), want >= 0",
                     who, rows, n);
  if (rows * n > 0 && (!out || !x))
    return al_seterr(AL_EINVAL, "%s: NULL %s for (%" PRId64 ", %" PRId64 ")", who,
                     !out ? "output" : "input", rows, n);
  if (keep) {
    if (mrows <= 0 || rows % mrows != 0)
      return al_seterr(AL_EINVAL,
                       "%s: keep mask is (%" PRId64 ", %" PRId64 "), want (mrows, %" PRId64
                       ") with rows %% mrows == 0 for x (%" PRId64 ", %" PRId64 ")",
                       who, mrows, n, n, rows, n);
  }
  return AL_OK;
}

void al_norm_thread_rows_(int64_t rows, int64_t *r0, int64_t *r1) {
  int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
  int64_t q = rows / nt, rem = rows % nt;
  *r0 = t * q + (t < rem ? t : rem);
  *r1 = *r0 + q + (t < rem);
}

void al_support_count(int32_t *count, const float *out, int64_t rows, int64_t n) {
  if (!count || rows <= 0) return;
#pragma omp parallel for schedule(static) if (rows * n >= AL_PAR_MIN_WORK)
  for (int64_t r = 0; r < rows; r++) {
    const float *o = out + r * n;
    int32_t c = 0;
#pragma omp simd reduction(+ : c)
    for (int64_t j = 0; j < n; j++) c += o[j] > 0.0f;
    count[r] = c;
  }
}

al_status al_norm_sweep_(const char *who, int64_t rows, int64_t n, int64_t nv, al_norm_rows_fn fn,
                         void *ctx) {
  const int nt = rows * n >= AL_PAR_MIN_WORK ? omp_get_max_threads() : 1;
  al_vf *heap = NULL;
  size_t hb = 0;
  if (nv > AL_NORM_STACK_V) {
    hb = (size_t)nt * (size_t)nv * sizeof(al_vf);
    heap = al_malloc(hb);
    if (!heap)
      return al_seterr(AL_ENOMEM, "%s: no memory for %d x %lld scratch vectors", who, nt, (long long)nv);
  }
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    al_vf stack[heap ? 1 : AL_NORM_STACK_V];
    al_vf *ws = heap ? heap + (size_t)omp_get_thread_num() * (size_t)nv : stack;
    int64_t r0, r1;
    al_norm_thread_rows_(rows, &r0, &r1);
    fn(ctx, ws, r0, r1);
  }
  al_free(heap, hb);
  return AL_OK;
}

static int ref_cmp_desc(const void *a, const void *b) {   /* value desc, then column asc */
  const al_norm_ref_entry *p = a, *q = b;
  if (p->v != q->v) return p->v > q->v ? -1 : 1;
  return p->i < q->i ? -1 : (p->i > q->i);
}

int64_t al_norm_ref_sorted_(al_norm_ref_entry *v, const float *x, const uint8_t *kr, int64_t n) {
  int64_t m = 0;
  for (int64_t j = 0; j < n; j++)
    if ((!kr || kr[j]) && x[j] != -INFINITY) { v[m].v = x[j]; v[m].i = j; m++; }
  qsort(v, (size_t)m, sizeof *v, ref_cmp_desc);
  return m;
}
