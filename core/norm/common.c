/* core/norm/common.c -- what the normalizer kernels share out of line: argument checks, the row
 * sweeps (the rows split across OpenMP threads, each thread's workspace, short rows padded, the
 * kernel called over its groups of rows), support counts, and the sorted gather of the scalar
 * references.
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
    /* no rows: a mask of no rows too (an empty batch's key mask, mrows = 0), or one to broadcast */
    if (mrows < 0 || (rows > 0 && (mrows == 0 || rows % mrows != 0)))
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
  if (nt == 1) {
    /* no OpenMP region at all: attention calls this per (example, head) from inside its own
     * region, and entering a nested one, even of one thread, costs libgomp a futex wake (the
     * cost measured: experiments/classifier/THROUGHPUT.md). The one thread takes every row. */
    al_vf stack[heap ? 1 : AL_NORM_STACK_V];
    fn(ctx, heap ? heap : stack, 0, rows);
  } else {
#pragma omp parallel num_threads(nt)
    {
      al_vf stack[heap ? 1 : AL_NORM_STACK_V];
      al_vf *ws = heap ? heap + (size_t)omp_get_thread_num() * (size_t)nv : stack;
      int64_t r0, r1;
      al_norm_thread_rows_(rows, &r0, &r1);
      fn(ctx, ws, r0, r1);
    }
  }
  al_free(heap, hb);
  return AL_OK;
}

/* ---- forward sweeps ---- */
typedef struct {
  const al_norm_fwd_kernel *k;
  const al_norm_fwd_rows *a;
  int used;   /* the most iterations over the threads */
} fwd_sweep;

/* Rows r .. r+nr-1 of a (n < 16, nr <= AL_NORM_BATCH) padded to one block each (al_norm_pad_)
 * as the rows of view v, into xp, kp (AL_NORM_BATCH * AL_V entries each), outputs to op. */
static void pad_view(al_norm_fwd_rows *v, float *op, float *xp, uint8_t *kp, const al_norm_fwd_rows *a,
                     int64_t r, int64_t nr) {
  for (int64_t i = 0; i < nr; i++)
    al_norm_pad_(xp + i * AL_V, kp + i * AL_V, a->x + (r + i) * a->n,
                 al_norm_keeprow_(a->keep, a->mrows, a->rows, a->n, r + i), a->n);
  *v = *a;
  v->out = op;
  v->x = xp;
  v->keep = kp;
  v->mrows = v->rows = nr;
  v->n = AL_V;
  if (a->alpha) v->alpha = a->alpha + r;
}

/* This thread's rows r0 .. r1-1: batches of the kernel's size, or padded short rows. */
static void fwd_thread(void *ctx, al_vf *ws, int64_t r0, int64_t r1) {
  fwd_sweep *sw = ctx;
  const al_norm_fwd_kernel *k = sw->k;
  const al_norm_fwd_rows *a = sw->a;
  _Alignas(16) unsigned char state[AL_NORM_STATE_BYTES] = {0};
  int used = 0;
  if (a->n < AL_V) {
    for (int64_t r = r0; r < r1; r += k->short_rows) {
      const int64_t nr = r1 - r < k->short_rows ? r1 - r : k->short_rows;
      float xp[AL_NORM_BATCH * AL_V], op[AL_NORM_BATCH * AL_V];
      uint8_t kp[AL_NORM_BATCH * AL_V];
      al_norm_fwd_rows v;
      pad_view(&v, op, xp, kp, a, r, nr);
      const int u = k->batch(&v, 0, nr, ws, state);
      used = u > used ? u : used;
      for (int64_t i = 0; i < nr; i++)
        memcpy(a->out + (r + i) * a->n, op + i * AL_V, (size_t)a->n * sizeof(float));
    }
  } else {
    const int64_t bs = k->batch_rows ? k->batch_rows : al_norm_batch_(a->n);
    for (int64_t r = r0; r < r1; r += bs) {
      const int u = k->batch(a, r, r1 - r < bs ? r1 - r : bs, ws, state);
      used = u > used ? u : used;
    }
  }
#pragma omp critical(al_norm_fwd_used)
  sw->used = used > sw->used ? used : sw->used;
}

al_status al_norm_fwd_run_(const al_norm_fwd_kernel *k, const al_norm_fwd_rows *a, int64_t nv,
                           int *used) {
  fwd_sweep sw = {k, a, 0};
  const al_status st = al_norm_sweep_(k->who, a->rows, a->n, nv, fwd_thread, &sw);
  if (st == AL_OK && used) *used = sw.used;
  return st;
}

/* ---- backward sweeps ---- */
typedef struct {
  const al_norm_bwd_kernel *k;
  const al_norm_bwd_rows *a;
} bwd_sweep;

static void bwd_thread(void *ctx, al_vf *ws, int64_t r0, int64_t r1) {
  const bwd_sweep *sw = ctx;
  const al_norm_bwd_kernel *k = sw->k;
  const al_norm_bwd_rows *a = sw->a;
  const int64_t n = a->n;
  int64_t r = r0;
  if (n < AL_V) {   /* short rows: padded to one block with p = 0, accumulated into a copy */
    for (; r < r1; r++) {
      float pp[AL_V] = {0}, gp[AL_V] = {0}, ip[AL_V] = {0}, ga = 0.0f;
      memcpy(pp, a->out + r * n, (size_t)n * sizeof(float));
      memcpy(gp, a->gout + r * n, (size_t)n * sizeof(float));
      if (a->gin && a->acc) memcpy(ip, a->gin + r * n, (size_t)n * sizeof(float));
      if (a->galpha && a->acc) ga = a->galpha[r];
      const al_norm_bwd_rows v = {a->gin ? ip : NULL, a->galpha ? &ga : NULL, gp, pp,
                                  a->alpha ? a->alpha + r : NULL, 1, AL_V, 1};
      k->rows(&v, 0, 1, ws);
      if (a->gin) memcpy(a->gin + r * n, ip, (size_t)n * sizeof(float));
      if (a->galpha) a->galpha[r] = ga;
    }
    return;
  }
  if (k->group && n <= AL_NORM_BWD_GROUP_MAX_N)
    for (; r + k->group <= r1; r += k->group) k->rows(a, r, k->group, ws);
  for (; r + k->step <= r1; r += k->step) k->rows(a, r, k->step, ws);
  for (int R; r < r1; r += R) {
    R = r1 - r < k->tail ? (int)(r1 - r) : k->tail;
    k->rows(a, r, R, ws);
  }
}

al_status al_norm_bwd_run_(const al_norm_bwd_kernel *k, const al_norm_bwd_rows *a, int64_t nv) {
  const bwd_sweep sw = {k, a};
  return al_norm_sweep_(k->who, a->rows, a->n, nv, bwd_thread, (void *)&sw);
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
