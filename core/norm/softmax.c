/* core/norm/softmax.c -- softmax over rows: out = exp(x - max) / sum over the kept entries.
 *
 * Pure C11 + GNU vector extensions + OpenMP, no Lua, no BLAS. The file opens with the scalar
 * reference in double (the tests' oracle), then the kernels on the 16-lane vectors of
 * core/norm/vec.h: two rows in flight, so that one row's reductions overlap the other's vector
 * work; sums in double (al_dacc) in a fixed order, so the result never depends on the thread
 * count. Rows are split across threads, reductions not. Top-k softmax's backward is this one
 * (core/norm/topk.c). */
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/normalizers.h"
#include "attnlab/threads.h"
#include "internal.h"

/* ---- scalar reference (double) ----
 * out (n) = exp(x - max) / sum over the kept finite entries of x (keep row kr, NULL = all),
 * 0 elsewhere and everywhere in a row with none. */
void al_softmax_ref_fwd(double *out, const float *x, const uint8_t *kr, int64_t n, double param) {
  al_norm_ref_entry *v = malloc(sizeof *v * (size_t)(n > 0 ? n : 1));
  for (int64_t j = 0; j < n; j++) out[j] = 0.0;
  const int64_t m = v ? al_norm_ref_sorted_(v, x, kr, n) : 0;   /* v[0]: the max */
  double s = 0;
  for (int64_t i = 0; i < m; i++) s += exp(v[i].v - v[0].v);
  for (int64_t i = 0; i < m; i++) out[v[i].i] = exp(v[i].v - v[0].v) / s;
  free(v);
}
/* out = softmax(x): gin = out * (gout - <out, gout>) (the Jacobian diag(p) - p p^T). */
void al_softmax_ref_bwd(double *gin, double *galpha, const double *gout, const double *out, int64_t n,
                        double param) {
  double c = 0;
  for (int64_t j = 0; j < n; j++) c += out[j] * gout[j];
  for (int64_t j = 0; j < n; j++) gin[j] = out[j] * (gout[j] - c);
}

/* ---- forward ---- */
/* Rows r0 .. r0+R-1 (R = 1 or 2, in lockstep), n >= 16: o = exp(x - max) / sum over the kept
 * entries. Masked (or -inf) entries get exp(-inf) = 0 exactly. The max shift keeps every
 * exponent <= 0, so no overflow for any finite input, and the largest term is exp(0) = 1, so the
 * sum is >= 1. Three sweeps: max; exp into the workspace (aligned, L1) and the double sum; the
 * scaled store. A kept NaN or +inf mostly needs no test of its own: it makes the max or some
 * x - max NaN, hence the sum NaN, and the row is then filled with NaN. Not always: al_vmax
 * returns its second operand when either is NaN, so a NaN lane of the running max is replaced
 * by the next block's value, and a row whose kept entries are all NaN can end with max = -inf,
 * the "nothing kept" case. Only that case rescans the row (softmax_nan_only); testing for NaN
 * in every block would slow every row for the sake of rows that are garbage anyway, and the
 * finite rows' arithmetic stays exactly what it was. ws: R * nb vectors. */
#define SM_R 2
/* Whether row xr (n entries, keep row kr may be NULL) keeps a NaN: asked only of a row whose
 * max came out -inf. Without a kept NaN the max is exact, so the row keeps nothing finite and
 * gives zeros; with one (whatever else the NaN made the max drop) it is a NaN row. */
static int softmax_nan_only(const float *xr, const uint8_t *kr, int64_t n) {
  for (int64_t j = 0; j < n; j++)
    if ((!kr || kr[j]) && xr[j] != xr[j]) return 1;
  return 0;
}
static inline __attribute__((always_inline)) void softmax_rows(
    float *out, const float *x, const uint8_t *keep, int64_t mrows, int64_t rows, int64_t n,
    int64_t r0, const int R, al_vf *ws) {
  const al_rowgeo g = al_rowgeo_(n);
  const float *xr[SM_R];
  const uint8_t *kr[SM_R];
  al_vf mx[SM_R], m[SM_R];
  al_dacc sum[SM_R];
  for (int i = 0; i < R; i++) {
    xr[i] = x + (r0 + i) * n;
    kr[i] = al_norm_keeprow_(keep, mrows, rows, n, r0 + i);
    mx[i] = al_vsplat(-INFINITY);
    al_dacc_init(&sum[i]);
  }
  for (int64_t b = 0; b < g.nb; b++)
    for (int i = 0; i < R; i++) mx[i] = al_vmax(mx[i], al_norm_blk_(xr[i], kr[i], &g, b));
  for (int i = 0; i < R; i++) m[i] = al_vsplat(al_vhmax(mx[i]));
  for (int64_t b = 0; b < g.nb; b++)
    for (int i = 0; i < R; i++) {
      const al_vf e = al_vexp_le0(al_norm_blk_(xr[i], kr[i], &g, b) - m[i]);
      ws[i * g.nb + b] = e;
      sum[i].f += e;
      if (AL_DACC_DUE(b)) al_dacc_flush(&sum[i]);
    }
  for (int i = 0; i < R; i++) {
    float *o = out + (r0 + i) * n;
    const al_vf *e = ws + i * g.nb;
    const double s = al_dacc_total(&sum[i]);
    if (m[i][0] == -INFINITY) {   /* nothing kept -- or nothing but NaN (see softmax_nan_only) */
      al_norm_fill_(o, n, softmax_nan_only(xr[i], kr[i], n) ? NAN : 0.0f);
      continue;
    }
    if (s != s) { al_norm_fill_(o, n, NAN); continue; }                  /* NaN or +inf */
    const float inv = (float)(1.0 / s);
    if (g.rem) al_vst(o + g.jt, e[g.nbf] * inv);   /* the last block first (see al_rowgeo) */
    for (int64_t b = 0; b < g.nbf; b++) al_vst(o + b * AL_V, e[b] * inv);
  }
}


/* A batch of rows r0 .. r0+nr-1 of a (al_norm_fwd_kernel): in pairs, then the last row alone. */
static int softmax_batch(const al_norm_fwd_rows *a, int64_t r0, int64_t nr, al_vf *ws, void *state) {
  int64_t r = r0;
  const int64_t r1 = r0 + nr;
  if (a->keep) {
    for (; r + 2 <= r1; r += 2) softmax_rows(a->out, a->x, a->keep, a->mrows, a->rows, a->n, r, 2, ws);
    if (r < r1) softmax_rows(a->out, a->x, a->keep, a->mrows, a->rows, a->n, r, 1, ws);
  } else {
    for (; r + 2 <= r1; r += 2) softmax_rows(a->out, a->x, NULL, 1, a->rows, a->n, r, 2, ws);
    if (r < r1) softmax_rows(a->out, a->x, NULL, 1, a->rows, a->n, r, 1, ws);
  }
  return 0;
}
static const al_norm_fwd_kernel SOFTMAX_FWD = {"softmax", softmax_batch, AL_NORM_BATCH, 1};

/* Workspace vectors per thread for rows of n: nb for each of the SM_R rows run together. */
static int64_t softmax_vectors(int64_t n) { return SM_R * (n / AL_V + 1); }

al_status al_softmax_fwd(float *out, const float *x, const uint8_t *keep, int64_t mrows,
                         int64_t rows, int64_t n) {
  return al_norm_fwd_plain_(&SOFTMAX_FWD, softmax_vectors, out, x, keep, mrows, rows, n);
}

/* ---- backward ---- */
/* Forward p = softmax(x): dL/dx_j = p_j (g_j - sum_i p_i g_i) (the Jacobian diag(p) - p p^T).
 * Masked entries have p_j = 0 and so get exactly 0. Shared with top-k softmax. Rows r0 ..
 * r0+R-1 (R <= SM_RB), n >= 16: a sweep for the double dot products c = <p, g> of the R rows;
 * their reductions together (al_vhsumd_rows: row by row, each was a chain of dependent
 * operations that the next row could only partly overlap); a sweep for gin += p (g - c)
 * (ACC = 1) or gin = p (g - c) (ACC = 0: gin is not read, so a fresh buffer needs no zero fill;
 * fma(p, g - c, 0) rounds exactly as the accumulation into zeros does, -0 included). */
#define SM_RB 8
static inline __attribute__((always_inline)) void softmax_bwd_rows(
    float *gin, const float *gout, const float *out, int64_t n, int64_t r0, const int R,
    const int ACC, int64_t rows) {
  const al_rowgeo g = al_rowgeo_(n);
  const al_vf zero = al_vsplat(0.0f);
  al_vd dsum[SM_RB];
  double tot[SM_RB];
  for (int i = 0; i < R; i++) {
    const float *p = out + (r0 + i) * n, *gr = gout + (r0 + i) * n;
    al_dacc dot;
    al_dacc_init(&dot);
    if (g.rem)   /* the repeated lanes of the last block count as p = 0 */
      dot.f = al_vfma(al_vzero(al_vld(p + g.jt), g.tm), al_vld(gr + g.jt), dot.f);
    for (int64_t b = 0; b < g.nbf; b++) {
      if (!ACC) al_norm_prefetch_(gin, r0 + R + i, rows, n, b, 1);   /* see al_norm_prefetch_ */
      dot.f = al_vfma(al_vld(p + b * AL_V), al_vld(gr + b * AL_V), dot.f);
      if (AL_DACC_DUE(b)) al_dacc_flush(&dot);
    }
    al_dacc_flush(&dot);
    dsum[i] = dot.lo + dot.hi;
  }
  al_vhsumd_rows(dsum, R, tot);   /* tot[i]: al_dacc_total of row i, bitwise */
  for (int i = 0; i < R; i++) {
    const float *p = out + (r0 + i) * n, *gr = gout + (r0 + i) * n;
    float *gi = gin + (r0 + i) * n;
    const float c = (float)tot[i];
    /* the last block first; its repeated lanes add nothing (the full blocks own them) */
    if (g.rem) {
      const al_vf pt = al_vzero(al_vld(p + g.jt), g.tm);
      al_vst(gi + g.jt, al_vfma(pt, al_vld(gr + g.jt) - c, ACC ? al_vld(gi + g.jt) : zero));
    }
    for (int64_t b = 0; b < g.nbf; b++) {
      const int64_t j = b * AL_V;
      al_vst(gi + j, al_vfma(al_vld(p + j), al_vld(gr + j) - c, ACC ? al_vld(gi + j) : zero));
    }
  }
}

/* Rows r0 .. r0+R-1 (al_norm_bwd_kernel: groups of SM_RB rows while n <=
 * AL_NORM_BWD_GROUP_MAX_N, then pairs, then the last row alone), R and ACC constants in each
 * instance. */
static void softmax_bwd_kernel(const al_norm_bwd_rows *a, int64_t r0, int R, al_vf *ws) {
  if (a->acc) {
    if (R == SM_RB) softmax_bwd_rows(a->gin, a->gout, a->out, a->n, r0, SM_RB, 1, a->rows);
    else if (R == 2) softmax_bwd_rows(a->gin, a->gout, a->out, a->n, r0, 2, 1, a->rows);
    else softmax_bwd_rows(a->gin, a->gout, a->out, a->n, r0, 1, 1, a->rows);
  } else {
    if (R == SM_RB) softmax_bwd_rows(a->gin, a->gout, a->out, a->n, r0, SM_RB, 0, a->rows);
    else if (R == 2) softmax_bwd_rows(a->gin, a->gout, a->out, a->n, r0, 2, 0, a->rows);
    else softmax_bwd_rows(a->gin, a->gout, a->out, a->n, r0, 1, 0, a->rows);
  }
}

/* The backward of softmax and of top-k softmax (who names the caller in errors). */
al_status al_norm_softmax_bwd_(const char *who, float *gin, const float *gout, const float *out,
                               int64_t rows, int64_t n, int acc) {
  al_status st = al_norm_bwd_check_(who, gin, gout, out, rows, n);
  if (st != AL_OK || rows * n == 0) return st;
  const al_norm_bwd_kernel k = {who, softmax_bwd_kernel, SM_RB, 2, 1};
  const al_norm_bwd_rows a = {gin, NULL, gout, out, NULL, rows, n, acc};
  return al_norm_bwd_run_(&k, &a, 0);
}

al_status al_softmax_bwd(float *gin, const float *gout, const float *out, int64_t rows,
                         int64_t n) {
  return al_norm_softmax_bwd_("softmax_bwd", gin, gout, out, rows, n, 1);
}
al_status al_softmax_bwd_write(float *gin, const float *gout, const float *out, int64_t rows,
                               int64_t n) {
  return al_norm_softmax_bwd_("softmax_bwd", gin, gout, out, rows, n, 0);
}
