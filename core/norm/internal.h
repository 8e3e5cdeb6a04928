/* core/norm/internal.h -- private to core/norm/ (and the tests tests/c/test_norm_*.c): what the
 * normalizer kernels share -- argument checks, the row split across threads and its workspace,
 * rows as 16-lane blocks, batching and prefetching -- on top of the vector layer (vec.h) and
 * its scalar math (core/simd/fastmath.h). The public API is include/attnlab/normalizers.h. */
#ifndef ATTNLAB_NORM_INTERNAL_H
#define ATTNLAB_NORM_INTERNAL_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "attnlab/normalizers.h"
#include "vec.h"

/* ---- shared by the files of core/norm/, not part of the API ---- */

/* Tests only (defined once, in core/runtime/test_hooks.c): nonzero sends top-k's n % 16 == 1 rows
 * through the generic last-block path, so that the test can compare the two bitwise
 * (core/norm/topk.c). */
extern int al_topk_lane1_off_;

/* Checks pointers, sizes and the keep geometry; sets the message and returns AL_EINVAL. */
al_status al_norm_check_(const char *who, const void *out, const void *x, const uint8_t *keep,
                         int64_t mrows, int64_t rows, int64_t n);

/* This thread's share of rows for a static split, inside an omp parallel region (the same rows
 * as `omp for schedule(static)`; only speed depends on the split, never results). */
void al_norm_thread_rows_(int64_t rows, int64_t *r0, int64_t *r1);

/* The keep row of row r (NULL when keep is NULL). */
static inline const uint8_t *al_norm_keeprow_(const uint8_t *keep, int64_t mrows, int64_t rows,
                                              int64_t n, int64_t r) {
  return keep ? keep + (r / (rows / mrows)) * n : NULL;
}

/* Order-preserving map float -> uint32 (a < b as floats <=> key(a) < key(b) as unsigned, for
 * non-NaN values): top-k searches over these keys, so that "the next float up" is key + 1. */
#define AL_KEY_NEGINF 0x007FFFFFu   /* key(-inf); keys below it are negative NaNs */
#define AL_KEY_POSINF 0xFF800000u   /* key(+inf); keys above it are positive NaNs */
static inline uint32_t al_fkey_(float f) {
  uint32_t u = al_f2u_(f);
  /* -0 takes +0's key: float compares treat them as equal, and the search's counts are float
   * compares. With two keys for one value a row holding both could leave the search's bracket
   * stuck between them: it never returned. The key 0x7FFFFFFF (-0's own) is then no element's. */
  if (u == 0x80000000u) u = 0;
  return u ^ ((0u - (u >> 31)) | 0x80000000u);
}
static inline float al_fkey_inv_(uint32_t k) {
  return al_u2f_(k ^ ((0u - (~k >> 31)) | 0x80000000u));
}
static inline void al_norm_fill_(float *o, int64_t n, float v) {
  for (int64_t j = 0; j < n; j++) o[j] = v;
}

/* The rare path of the sparse backwards: a row with no support is either all-masked (no
 * gradient) or a NaN row (the forward fills a row with a kept NaN or +inf with NaN). A NaN row
 * gets NaN gradients, as softmax's and top-k's do, so the NaN is not hidden by zeros. Returns
 * 1 (and fills gin with NaN, whether accumulating or not: gin + NaN = NaN) for a NaN row. */
static inline int al_norm_nan_row_grad_(float *gin, const float *p, int64_t n) {
  int nan = 0;
  for (int64_t j = 0; j < n; j++) nan |= p[j] != p[j];
  if (nan && gin) al_norm_fill_(gin, n, NAN);
  return nan;
}

/* ---- rows as 16-lane blocks ---- */
/* For n >= 16 (shorter rows go through al_norm_pad_). The full blocks start at j = 0, 16, ...,
 * nf - 16; when rem = n % 16 > 0 a last block starts at jt = n - 16, overlapping the one before:
 * its lanes below 16 - rem repeat earlier columns and are masked (tm), so every column is seen
 * once. All loads are whole unaligned vectors inside the row -- no masked loads, no scalar
 * epilogue. A kernel that writes the last block writes it first; the full blocks then rewrite
 * the repeated columns with their own values. */
typedef struct {
  int64_t nf, jt;   /* entries in full blocks; start of the last block */
  int64_t nb, nbf;  /* blocks; full blocks */
  int rem;          /* n % 16: 0 = no last block */
  al_vm tm;         /* lanes of the last block that are new columns */
} al_rowgeo;
AL_VI al_rowgeo al_rowgeo_(int64_t n) {
  al_rowgeo g;
  g.nf = n & ~(int64_t)(AL_V - 1);
  g.rem = (int)(n - g.nf);
  g.jt = n - AL_V;
  g.nbf = g.nf / AL_V;
  g.nb = g.nbf + (g.rem != 0);
#if defined(__AVX512F__)
  g.tm = (al_vm)(0xFFFFu << (AL_V - g.rem));
#else
  g.tm = al_vm_ile(al_vspliti(AL_V - g.rem), al_vlane());   /* lanes >= 16 - rem */
#endif
  return g;
}
/* Column of each lane of block b. */
AL_VI al_vi al_rowgeo_cols_(const al_rowgeo *g, int64_t b) {
  return al_vlane() + (int32_t)(b == g->nbf ? g->jt : b * AL_V);
}
/* Block b of a row as every kernel sees it: -inf where the keep row kr (may be NULL) is 0, so
 * garbage or NaN under the mask never reaches the arithmetic, and in the repeated lanes of the
 * last block. */
AL_VI al_vf al_norm_blk_(const float *x, const uint8_t *kr, const al_rowgeo *g, int64_t b) {
  const int last = b == g->nbf;
  const int64_t j = last ? g->jt : b * AL_V;
  const al_vf v = al_vld(x + j);
  al_vm ok = last ? g->tm : (al_vm)~al_vm_none();
  if (kr) ok &= al_vm_keep(kr + j);
  return al_vsel(ok, v, al_vsplat(-INFINITY));
}
/* Rows shorter than 16 run as one block: the row padded to 16 with masked entries (which behave
 * exactly like absent ones), processed, and the first n outputs copied back. */
AL_VI void al_norm_pad_(float *xp, uint8_t *kp, const float *x, const uint8_t *kr, int64_t n) {
  for (int l = 0; l < AL_V; l++) {
    xp[l] = l < n ? x[l] : 0.0f;
    kp[l] = l < n ? (kr ? kr[l] : 1) : 0;
  }
}
/* Rows per batch for the kernels that run phase by phase over a batch of rows (so that the rows'
 * latency chains overlap in the CPU): up to AL_NORM_BATCH, fewer for long rows (the batch's
 * blocks should stay in L1/L2). */
#define AL_NORM_BATCH 16
AL_VI int64_t al_norm_batch_(int64_t n) {
  const int64_t b = 2048 / (n / AL_V + 1);
  return b < 1 ? 1 : b > AL_NORM_BATCH ? AL_NORM_BATCH : b;
}
/* The batched kernels load a batch of rows in one burst and then compute without touching
 * memory, which leaves the hardware prefetcher idle: while loading (and storing) row r of a
 * batch they prefetch block b of the same row of the next batch, row r + nr -- one prefetch per
 * load, spread out (a burst of prefetches would stall on the line fill buffers). The backward
 * kernels in write mode store gin without loading it, and stores do not wake the prefetchers as
 * loads do: they prefetch (for writing) the gin rows of their next group of rows. */
AL_VI void al_norm_prefetch_(const float *base, int64_t r, int64_t rows, int64_t n, int64_t b,
                             int write) {
  if (r < rows) {
    if (write) __builtin_prefetch(base + r * n + b * AL_V, 1, 3);
    else __builtin_prefetch(base + r * n + b * AL_V, 0, 3);
  }
}
/* The same for block b of row r of the next batch, x's line and out's (for writing), and for a
 * whole such row: the batched forward kernels issue these in a pass after loading, one row per
 * row of the batch, rather than one per load while loading, where a batch's worth at once
 * stalled the loads on the line fill buffers (top-k's full-size forward ran slower). */
AL_VI void al_norm_prefetch_blk_(const float *x, const float *out, int64_t r, int64_t rows,
                                 int64_t n, int64_t b) {
  al_norm_prefetch_(x, r, rows, n, b, 0);
  al_norm_prefetch_(out, r, rows, n, b, 1);
}
AL_VI void al_norm_prefetch_row_(const float *x, const float *out, int64_t r, int64_t rows,
                                 int64_t n, int64_t nb) {
  for (int64_t b = 0; b < nb; b++) al_norm_prefetch_blk_(x, out, r, rows, n, b);
}

/* ---- the row sweeps: what every normalizer's entry points share ----
 * A forward or backward kernel is described once (al_norm_fwd_kernel, al_norm_bwd_kernel) and
 * run by al_norm_fwd_run_ / al_norm_bwd_run_: the rows split across the OpenMP threads
 * (al_norm_thread_rows_: a row's result never depends on the split), each thread with its
 * workspace, rows shorter than 16 padded to one block, and the kernel called over its own
 * groups of rows. The kernels keep their rows in lockstep; only these loops are shared. */

/* One thread's share of a row sweep (al_norm_sweep_): rows r0 .. r1-1, with ws this thread's
 * workspace; ctx holds the kernel's arguments. */
typedef void (*al_norm_rows_fn)(void *ctx, al_vf *ws, int64_t r0, int64_t r1);

/* Runs fn over rows 0 .. rows-1 (of n entries each), split across the OpenMP threads when
 * rows * n >= AL_PAR_MIN_WORK (al_norm_thread_rows_: a row's result never depends on the
 * split), each thread with a workspace of nv vectors: on its stack up to AL_NORM_STACK_V
 * vectors (32 KB), else one al_malloc block for all threads. Returns AL_ENOMEM, with a message
 * naming who, if that block cannot be had (nothing has run then), else AL_OK. */
#define AL_NORM_STACK_V 512
al_status al_norm_sweep_(const char *who, int64_t rows, int64_t n, int64_t nv, al_norm_rows_fn fn,
                         void *ctx);

/* A forward's rows: out = f(x), both (rows, n); keep NULL or (mrows, n); the parameters of the
 * kernels that take one. A kernel's batch sees either the caller's rows or a view of padded
 * short rows (n = 16, their own keep rows, alpha from the first of them). */
typedef struct {
  float *out;
  const float *x;
  const uint8_t *keep;
  int64_t mrows, rows, n;
  double ratio;         /* top-k */
  const float *alpha;   /* entmax_bisect: one per row */
  int max_iter;         /* entmax_bisect */
} al_norm_fwd_rows;

/* Per-thread state of a forward kernel, kept across the thread's batches: this many bytes,
 * zero at the start of each sweep. */
#define AL_NORM_STATE_BYTES 64

/* A forward kernel as al_norm_fwd_run_ runs it. batch: rows r0 .. r0+nr-1 of a (n >= 16;
 * nr <= the batch size), with this thread's workspace and state; returns the iterations it
 * used (0 for the direct kernels). */
typedef int (*al_norm_fwd_batch_fn)(const al_norm_fwd_rows *a, int64_t r0, int64_t nr, al_vf *ws,
                                    void *state);
typedef struct {
  const char *who;
  al_norm_fwd_batch_fn batch;
  int64_t batch_rows;   /* rows per batch; 0: al_norm_batch_(n) */
  int64_t short_rows;   /* rows shorter than 16 padded and run this many at a time (1 .. 16) */
} al_norm_fwd_kernel;

/* Runs kernel k over all rows of a with nv workspace vectors per thread (al_norm_sweep_);
 * *used (may be NULL) gets the most iterations any batch used. rows * n > 0. */
al_status al_norm_fwd_run_(const al_norm_fwd_kernel *k, const al_norm_fwd_rows *a, int64_t nv,
                           int *used);

/* The whole public forward of a normalizer that takes no parameter (softmax, sparsemax,
 * entmax15): the checks every forward makes (al_norm_check_, errors named k->who), nothing to do
 * for an empty x, else kernel k over all rows with vectors(n) workspace vectors per thread. */
static inline al_status al_norm_fwd_plain_(const al_norm_fwd_kernel *k, int64_t (*vectors)(int64_t n),
                                           float *out, const float *x, const uint8_t *keep,
                                           int64_t mrows, int64_t rows, int64_t n) {
  al_status st = al_norm_check_(k->who, out, x, keep, mrows, rows, n);
  if (st != AL_OK || rows * n == 0) return st;
  const al_norm_fwd_rows a = {.out = out, .x = x, .keep = keep, .mrows = mrows, .rows = rows, .n = n};
  return al_norm_fwd_run_(k, &a, vectors(n), NULL);
}

/* A backward's rows: gin (rows, n) += (acc) or = dL/dx from gout and the saved out; galpha
 * (rows) likewise for entmax_bisect (gin or galpha may be NULL there). */
typedef struct {
  float *gin, *galpha;
  const float *gout, *out, *alpha;
  int64_t rows, n;
  int acc;
} al_norm_bwd_rows;

/* A backward kernel as al_norm_bwd_run_ runs it. rows: rows r0 .. r0+R-1 of a (R one of the
 * counts below), with this thread's workspace. While n <= AL_NORM_BWD_GROUP_MAX_N it takes
 * `group` rows at a time (0: no such groups), then `step` at a time, then what is left at most
 * `tail` at a time. Rows shorter than 16 go one at a time, padded to 16 with p = 0 and
 * accumulated (acc = 1) into a copy of gin. */
typedef void (*al_norm_bwd_rows_fn)(const al_norm_bwd_rows *a, int64_t r0, int R, al_vf *ws);
typedef struct {
  const char *who;
  al_norm_bwd_rows_fn rows;
  int group, step, tail;
} al_norm_bwd_kernel;

/* Runs kernel k over all rows of a with nv workspace vectors per thread. rows * n > 0. */
al_status al_norm_bwd_run_(const al_norm_bwd_kernel *k, const al_norm_bwd_rows *a, int64_t nv);

/* The backward kernels whose rows are independent take rows RG at a time while n <=
 * AL_NORM_BWD_GROUP_MAX_N (softmax in groups of 8 beat two at a time while the rows stay in
 * L2, and lost once they leave it), then two at a time, then the last row alone. */
#define AL_NORM_BWD_GROUP_MAX_N 80

/* A row's blocks as every kernel sees them (al_norm_blk_) into w; returns the row's max and
 * sets *bad when a kept entry is NaN or +inf (-inf is fine). */
AL_VI float al_norm_load_row_(al_vf *w, const float *xr, const uint8_t *kr, const al_rowgeo *g,
                              int *bad) {
  al_vf mx = al_vsplat(-INFINITY);
  al_vm nonfinite = al_vm_none();
  for (int64_t b = 0; b < g->nb; b++) {
    const al_vf v = al_norm_blk_(xr, kr, g, b);
    w[b] = v;
    mx = al_vmax(mx, v);
    nonfinite |= al_vm_nle(v, al_vsplat(FLT_MAX));   /* NaN or +inf */
  }
  *bad = al_vm_any(nonfinite);
  return al_vhmax(mx);
}

/* The lanes of v selected by m appended at c[k..] (room for 16 more); returns the new count. */
AL_VI int64_t al_norm_compact_(float *c, int64_t k, al_vf v, al_vm m) {
#if defined(__AVX512F__)
  _mm512_storeu_ps(c + k, _mm512_maskz_compress_ps(m, (__m512)v));
  return k + al_vm_count(m);
#else
  for (uint32_t bits = al_vm_bits(m); bits; bits &= bits - 1) c[k++] = v[__builtin_ctz(bits)];
  return k;
#endif
}

/* The checks every backward makes: shapes and pointers (al_norm_check_), and a saved output
 * when there is work. */
static inline al_status al_norm_bwd_check_(const char *who, float *gin, const float *gout,
                                           const float *out, int64_t rows, int64_t n) {
  al_status st = al_norm_check_(who, gin, gout, NULL, 1, rows, n);
  if (st == AL_OK && rows * n > 0 && !out) st = al_seterr(AL_EINVAL, "%s: NULL saved output", who);
  return st;
}

/* The backward of softmax, shared by top-k softmax (core/norm/softmax.c): gin += (acc) or =
 * out * (gout - <out, gout>); who names the caller in errors. */
al_status al_norm_softmax_bwd_(const char *who, float *gin, const float *gout, const float *out,
                               int64_t rows, int64_t n, int acc);

/* ---- scalar references (double), the tests' oracles: each normalizer's file opens with its
 * own; these are the pieces they share. ---- */
/* An entry of a row: value and column. */
typedef struct { double v; int64_t i; } al_norm_ref_entry;
/* The kept finite entries of row x (keep row kr may be NULL) sorted by value descending, ties
 * by column ascending, into v (n entries of room); returns how many. */
int64_t al_norm_ref_sorted_(al_norm_ref_entry *v, const float *x, const uint8_t *kr, int64_t n);

#endif
