/* core/norm/sparsemax.c -- sparsemax over rows (Martins & Astudillo 2016), exact, sort-free.
 *
 * Pure C11 + GNU vector extensions + OpenMP, no Lua. sparsemax(z) = argmin_{p in simplex}
 * ||p - z||^2 = [z - tau]_+ with tau the unique root of sum_j [z_j - tau]_+ = 1 (eq. 2-4 of the
 * paper). With the row shifted so that max z = 0:
 *   tau >= -1 (the top element alone gives that bound), so the support lies among the
 *   candidates z > -1 -- typically 3-8 of a row of 65 attention scores ~ N(0,1);
 *   with at most 16 candidates, one vector holds them all and the sort-based test of eq. 4
 *   (with k(z_i) = #{z_j >= z_i}: 1 + k z_i > sum_{z_j >= z_i} z_j) runs on all of them at
 *   once, k(z_i) and the sums coming from one broadcast-compare-add per candidate -- no sort;
 *   the support is the top set down to the smallest candidate passing, and tau = (sum_S z -
 *   1)/|S| in double;
 *   with more candidates (flat rows): Newton's method on the piecewise linear f(tau) = sum
 *   [z - tau]_+ - 1 from tau = -1, i.e. Michelot's (1986) iteration tau <- (sum_S z - 1)/|S|,
 *   S = {z > tau}, which increases monotonically to tau* and stops when S no longer shrinks.
 * Rows go in batches, phase by phase (load; tau; output), so the rows' latency chains overlap.
 * The file opens with the scalar reference in double (the tests' oracle). */
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/normalizers.h"
#include "attnlab/threads.h"
#include "internal.h"

/* ---- scalar reference (double) ----
 * out (n) = [x - tau]_+ over the kept finite entries, by the sort-based rule (eq. 4): sorted
 * descending, the support is the largest k with 1 + k z_(k) > sum_{i<=k} z_(i), and
 * tau = (sum_S z - 1)/|S|. */
void al_sparsemax_ref_fwd(double *out, const float *x, const uint8_t *kr, int64_t n, double param) {
  al_norm_ref_entry *v = malloc(sizeof *v * (size_t)(n > 0 ? n : 1));
  for (int64_t j = 0; j < n; j++) out[j] = 0.0;
  const int64_t m = v ? al_norm_ref_sorted_(v, x, kr, n) : 0;
  double cs = 0, tau = 0;
  for (int64_t i = 0; i < m; i++) {
    cs += v[i].v;
    if (1.0 + (double)(i + 1) * v[i].v > cs) tau = (cs - 1.0) / (double)(i + 1);
  }
  for (int64_t i = 0; i < m; i++) out[v[i].i] = fmax(v[i].v - tau, 0.0);
  free(v);
}
/* On the support S = {out > 0}: gin = gout - mean_S gout; 0 elsewhere. */
void al_sparsemax_ref_bwd(double *gin, double *galpha, const double *gout, const double *out,
                          int64_t n, double param) {
  double s = 0;
  int64_t k = 0;
  for (int64_t j = 0; j < n; j++)
    if (out[j] > 0) { s += gout[j]; k++; }
  for (int64_t j = 0; j < n; j++) gin[j] = out[j] > 0 ? gout[j] - s / (double)k : 0.0;
}

/* ---- forward ---- */

/* Michelot's iteration over a row's blocks w (any number of candidates); returns tau. */
static double tau_michelot(const al_vf *w, int64_t nb, float m, int64_t n) {
  double tau = -1.0;
  for (int64_t it = 0; it <= n + 1; it++) {
    const al_vf tf = al_vsplat((float)tau);
    al_vi cnt = {0};
    al_dacc sum;
    al_dacc_init(&sum);
    al_vf zmin = al_vsplat(INFINITY);
    for (int64_t b = 0; b < nb; b++) {
      const al_vf z = w[b] - m;
      const al_vm in = al_vm_gt(z, tf);
      cnt = al_vinc(cnt, in);
      sum.f = al_vaddm(sum.f, in, z);
      zmin = al_vmin(zmin, al_vsel(in, z, al_vsplat(INFINITY)));
      if (AL_DACC_DUE(b)) al_dacc_flush(&sum);
    }
    const int k = al_vhsumi(cnt);   /* >= 1: the max has z = 0 > tau */
    const double t1 = (al_dacc_total(&sum) - 1.0) / k;
    /* S is the support once every member stays above the new tau (t1 <= tau only by rounding) */
    if (t1 <= tau || (double)al_vhmin(zmin) > t1) return t1 > tau ? t1 : tau;
    tau = t1;
  }
  return tau;
}

/* tau from the candidates c[0..k) (1 <= k <= 16; c[k..16) = -inf): eq. 4 on all at once. */
static inline double tau_pairs(const float *c, int k) {
  const al_vf z = al_vld(c);
  al_vi cnt = {0};
  al_vf sum = {0};
  /* 8 or 16 rounds, not k: a loop exit that moves with the data is mispredicted on most rows,
   * which costs more than the extra rounds (-inf lanes add nothing to a candidate lane) */
  const int kk = k <= 8 ? 8 : AL_V;
  for (int j = 0; j < kk; j++) {
    const al_vf zj = al_vsplat(c[j]);
    const al_vm ge = al_vm_le(z, zj);   /* lane i: z_j >= z_i */
    cnt = al_vinc(cnt, ge);
    sum = al_vaddm(sum, ge, zj);
  }
  const al_vm pass = al_vm_gt(al_vfma(__builtin_convertvector(cnt, al_vf), z, al_vsplat(1.0f)), sum) &
                     al_vm_first(k);
  const float zmin = al_vhmin(al_vsel(pass, z, al_vsplat(INFINITY)));
  const al_vm in = al_vm_ge(z, al_vsplat(zmin));
  const al_vf zs = al_vzero(z, in);
  return (al_vhsumd(al_vlo(zs), al_vhi(zs)) - 1.0) / al_vm_count(in);
}

typedef struct {
  float m;
  int state;   /* 0 = NaN row, 1 = nothing kept, 2 = solved */
  float tau;
} spm_row;

/* A batch of rows r0 .. r0+nr-1, n >= 16. ws: nr * nb vectors. */
static inline __attribute__((always_inline)) void sparsemax_batch(
    float *out, const float *x, const uint8_t *keep, int64_t mrows, int64_t rows, int64_t n,
    int64_t r0, int64_t nr, al_vf *ws, spm_row *st) {
  const al_rowgeo g = al_rowgeo_(n);
  const int64_t nb = g.nb;
  for (int64_t i = 0; i < nr; i++) {   /* 1. load: max, NaN/+inf test */
    int bad;
    st[i].m = al_norm_load_row_(ws + i * nb, x + (r0 + i) * n,
                                al_norm_keeprow_(keep, mrows, rows, n, r0 + i), &g, &bad);
    st[i].state = bad ? 0 : st[i].m == -INFINITY ? 1 : 2;
  }
  for (int64_t i = 0; i < nr; i++) {   /* 2. tau (relative to the max) */
    al_norm_prefetch_row_(x, out, r0 + i + nr, rows, n, nb);   /* the next batch */
    if (st[i].state != 2) continue;
    const al_vf *w = ws + i * nb;
    const float m = st[i].m;
    al_vf cand = al_vsplat(-INFINITY);
    int kc = 0;
    for (int64_t b = 0; b < nb; b++) {
      const al_vf z = w[b] - m;
      kc = al_vappend(&cand, kc, z, al_vm_gt(z, al_vsplat(-1.0f)));
    }
    float c[AL_V] __attribute__((aligned(64)));
    al_vst(c, cand);
    st[i].tau = (float)(kc <= AL_V ? tau_pairs(c, kc) : tau_michelot(w, nb, m, n));
  }
  for (int64_t i = 0; i < nr; i++) {   /* 3. p = [z - tau]_+ */
    float *o = out + (r0 + i) * n;
    if (st[i].state != 2) { al_norm_fill_(o, n, st[i].state == 0 ? NAN : 0.0f); continue; }
    const al_vf *w = ws + i * nb;
    const float m = st[i].m, tf = st[i].tau;
#define SPM_OUT(B) ({ const al_vf p_ = w[B] - m - tf; al_vzero(p_, al_vm_gt(p_, al_vsplat(0.0f))); })
    if (g.rem) al_vst(o + g.jt, SPM_OUT(g.nbf));   /* the last block first (see al_rowgeo) */
    for (int64_t b = 0; b < g.nbf; b++) al_vst(o + b * AL_V, SPM_OUT(b));
#undef SPM_OUT
  }
}

/* A batch of rows r0 .. r0+nr-1 of a (al_norm_fwd_kernel). */
static int sparsemax_fwd_batch(const al_norm_fwd_rows *a, int64_t r0, int64_t nr, al_vf *ws,
                               void *state) {
  spm_row st[AL_NORM_BATCH];
  if (a->keep) sparsemax_batch(a->out, a->x, a->keep, a->mrows, a->rows, a->n, r0, nr, ws, st);
  else sparsemax_batch(a->out, a->x, NULL, 1, a->rows, a->n, r0, nr, ws, st);
  return 0;
}
static const al_norm_fwd_kernel SPARSEMAX_FWD = {"sparsemax", sparsemax_fwd_batch, 0, 1};

/* Workspace vectors per thread for rows of n: nb for each row of a batch. */
static int64_t sparsemax_vectors(int64_t n) { return al_norm_batch_(n) * (n / AL_V + 1); }

al_status al_sparsemax_fwd(float *out, const float *x, const uint8_t *keep, int64_t mrows,
                           int64_t rows, int64_t n) {
  return al_norm_fwd_plain_(&SPARSEMAX_FWD, sparsemax_vectors, out, x, keep, mrows, rows, n);
}

/* ---- backward ---- */

/* Forward p = [z - tau]_+ with tau = (sum_S z - 1)/|S|: on the support dp/dz = I - 1 1^T/|S|,
 * zero elsewhere, so dL/dz_j = s_j (g_j - sum_S g / |S|), s = [p > 0]. Rows in pairs. */
#define SPM_R 2
static inline __attribute__((always_inline)) void sparsemax_bwd_rows(
    float *gin, const float *gout, const float *out, int64_t n, int64_t r0, const int R,
    const int ACC, int64_t rows) {
  const al_rowgeo g = al_rowgeo_(n);
  al_dacc sum[SPM_R];
  al_vi cnt[SPM_R];
  const float *p[SPM_R], *gr[SPM_R];
  float *gi[SPM_R];
  const al_vf zero = al_vsplat(0.0f);
  for (int i = 0; i < R; i++) {
    p[i] = out + (r0 + i) * n;
    gr[i] = gout + (r0 + i) * n;
    gi[i] = gin + (r0 + i) * n;
    al_dacc_init(&sum[i]);
    cnt[i] = (al_vi){0};
    if (g.rem) {
      const al_vm s = al_vm_gt(al_vld(p[i] + g.jt), zero) & g.tm;
      cnt[i] = al_vinc(cnt[i], s);
      sum[i].f = al_vaddm(sum[i].f, s, al_vld(gr[i] + g.jt));
    }
  }
  for (int64_t b = 0; b < g.nbf; b++)
    for (int i = 0; i < R; i++) {
      if (!ACC) al_norm_prefetch_(gin, r0 + R + i, rows, n, b, 1);   /* see al_norm_prefetch_ */
      const al_vm s = al_vm_gt(al_vld(p[i] + b * AL_V), zero);
      cnt[i] = al_vinc(cnt[i], s);
      sum[i].f = al_vaddm(sum[i].f, s, al_vld(gr[i] + b * AL_V));
      if (AL_DACC_DUE(b)) al_dacc_flush(&sum[i]);
    }
  for (int i = 0; i < R; i++) {
    const int k = al_vhsumi(cnt[i]);
    if (k == 0) {   /* all-masked row: no gradient; NaN row: NaN gradient */
      if (!al_norm_nan_row_grad_(gi[i], p[i], n) && !ACC) al_norm_fill_(gi[i], n, 0.0f);
      continue;
    }
    const al_vf c = al_vsplat((float)(al_dacc_total(&sum[i]) / k));
    if (g.rem) {   /* the last block first; its repeated lanes add nothing */
      const al_vm s = al_vm_gt(al_vld(p[i] + g.jt), zero) & g.tm;
      al_vst(gi[i] + g.jt, al_vaddm(ACC ? al_vld(gi[i] + g.jt) : zero, s, al_vld(gr[i] + g.jt) - c));
    }
    for (int64_t b = 0; b < g.nbf; b++) {
      const int64_t j = b * AL_V;
      const al_vm s = al_vm_gt(al_vld(p[i] + j), zero);
      al_vst(gi[i] + j, al_vaddm(ACC ? al_vld(gi[i] + j) : zero, s, al_vld(gr[i] + j) - c));
    }
  }
}

/* Rows r0 .. r0+R-1 (al_norm_bwd_kernel: in pairs, then the last row alone), R and ACC
 * constants in each instance. */
static void sparsemax_bwd_kernel(const al_norm_bwd_rows *a, int64_t r0, int R, al_vf *ws) {
  if (a->acc) {
    if (R == SPM_R) sparsemax_bwd_rows(a->gin, a->gout, a->out, a->n, r0, SPM_R, 1, a->rows);
    else sparsemax_bwd_rows(a->gin, a->gout, a->out, a->n, r0, 1, 1, a->rows);
  } else {
    if (R == SPM_R) sparsemax_bwd_rows(a->gin, a->gout, a->out, a->n, r0, SPM_R, 0, a->rows);
    else sparsemax_bwd_rows(a->gin, a->gout, a->out, a->n, r0, 1, 0, a->rows);
  }
}
static const al_norm_bwd_kernel SPARSEMAX_BWD = {"sparsemax_bwd", sparsemax_bwd_kernel, 0, SPM_R, 1};

static al_status sparsemax_bwd_all(float *gin, const float *gout, const float *out, int64_t rows,
                                   int64_t n, int acc) {
  al_status st = al_norm_bwd_check_("sparsemax_bwd", gin, gout, out, rows, n);
  if (st != AL_OK || rows * n == 0) return st;
  const al_norm_bwd_rows a = {gin, NULL, gout, out, NULL, rows, n, acc};
  return al_norm_bwd_run_(&SPARSEMAX_BWD, &a, 0);
}

al_status al_sparsemax_bwd(float *gin, const float *gout, const float *out, int64_t rows,
                           int64_t n) {
  return sparsemax_bwd_all(gin, gout, out, rows, n, 1);
}
al_status al_sparsemax_bwd_write(float *gin, const float *gout, const float *out, int64_t rows,
                                 int64_t n) {
  return sparsemax_bwd_all(gin, gout, out, rows, n, 0);
}
