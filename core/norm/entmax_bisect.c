/* core/norm/entmax_bisect.c -- alpha-entmax over rows, alpha per row (learnable: "hae" learns
 * it per head), by safeguarded Halley/Newton steps on a norm; the registry's entmax_bisect row.
 *
 * Pure C11 + GNU vector extensions + OpenMP, no Lua. alpha-entmax (Peters, Niculae & Martins
 * 2019, eq. 9):  p_j = [(alpha-1) z_j - tau]_+^(1/(alpha-1)),  tau such that sum_j p_j = 1.
 * We shift each row so that max z = 0, write y_j = (alpha-1)(z_j - max) <= 0 and s = -tau
 * (relative to the max), and solve for s in the bracket [n^-(alpha-1), 1] (Blondel et al. 2019:
 * tau in [max-1, max-(1/n)^(alpha-1)] of (alpha-1)z).
 *
 * Why iterate on a norm: H(s) = ||[y + s]_+||_{1/(alpha-1)} is convex and increasing in s for
 * alpha <= 2 (a norm of a vector that is convex and increasing in s), with H(1) >= 1. Newton's
 * method on H(s) = 1 from an upper bound s0 <= 1 of the root (bis_start: a power-mean bound over
 * the entries above a threshold) therefore never overshoots and converges monotonically and
 * quadratically; H is much closer to linear than sum p itself (H is exactly linear while the
 * support holds one element, and exactly the sparsemax Michelot step at alpha = 2). Halley's
 * correction (the second derivative costs one more product per entry) makes it cubic, and the
 * last step is applied to the p_j by a second-order Taylor update instead of by another pass,
 * once that is exact to float precision: typically 2-3 passes from s0 where 25-50 bisections
 * would be needed. For alpha > 2 H is not convex, its slope blows up where an entry joins the
 * support, and s cannot even hold the answer: an entry at the support's edge holds a large p on
 * a d = y + s below s's double rounding (at alpha = 20, p = 0.11 on d = 6e-19). Such rows are
 * solved whole in double, at exact breakpoints and for the smallest p itself
 * (al_bisect_solve_big_, entmax_bisect_step.c); their backward likewise (entmax_bisect_bwd.c).
 * Passes run only over the candidates ((alpha-1)(x - max) > -s0, the support for any s <= s0),
 * compacted per row, and compacted again once a Newton/Halley iterate bounds the support.
 *
 * Rows run over batches phase by phase (see bisect_batch), which lets the CPU overlap the rows'
 * chains of reductions; the per-row scalar decisions (start bounds, Newton/Halley steps, stop
 * tests) run rows-in-lanes, one vector lane per row of the batch, with results bitwise those of
 * the one-row arithmetic; the decisions are branch-free where the way a row goes is data.
 *
 * The files: this one, the scalar reference in double (the tests' oracle) and the entry points
 * (checks, then the row sweeps of core/norm/common.c); entmax_bisect_fwd.c, the forward's row
 * kernels; entmax_bisect_step.c, the per-row decisions between its passes; entmax_bisect_bwd.c,
 * the backward's row kernels; entmax_bisect.h, what they share. */
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/normalizers.h"
#include "attnlab/threads.h"
#include "entmax_bisect.h"
#include "../util/numfmt.h"

/* ---- scalar reference (double) ----
 * out (n) = [(alpha-1)(x - max) - t]_+^(1/(alpha-1)) over the kept finite entries, t by 200
 * halvings of the bracket [-1, -(1/n)^(alpha-1)] (Blondel et al. 2019), then renormalised to
 * sum 1; param = alpha. */
void al_entmax_bisect_ref_fwd(double *out, const float *x, const uint8_t *kr, int64_t n, double param) {
  al_norm_ref_entry *v = malloc(sizeof *v * (size_t)(n > 0 ? n : 1));
  for (int64_t j = 0; j < n; j++) out[j] = 0.0;
  const int64_t m = v ? al_norm_ref_sorted_(v, x, kr, n) : 0;
  if (m == 0) { free(v); return; }
  const double mx = v[0].v, am1 = param - 1;
  double lo = -1.0, hi = -pow(1.0 / (double)n, am1), s = 0;
  for (int it = 0; it < 200; it++) {
    const double t = 0.5 * (lo + hi);
    s = 0;
    for (int64_t i = 0; i < m; i++) {
      const double d = am1 * (v[i].v - mx) - t;
      if (d > 0) s += pow(d, 1.0 / am1);
    }
    if (s >= 1) lo = t; else hi = t;
  }
  const double t = 0.5 * (lo + hi);
  s = 0;
  for (int64_t i = 0; i < m; i++) {
    const double d = am1 * (v[i].v - mx) - t;
    out[v[i].i] = d > 0 ? pow(d, 1.0 / am1) : 0.0;
    s += out[v[i].i];
  }
  for (int64_t i = 0; i < m; i++) out[v[i].i] /= s;
  free(v);
}
/* Correia, Niculae & Martins 2019: on the support w = out^(2-alpha), w~ = w / sum(w);
 * gin = w gout - w <w, gout>/sum(w); *galpha = <gout, dp/dalpha> with
 * dp/dalpha = (p - w~)/(alpha-1)^2 - (S - w~ H)/(alpha-1), S = p log p, H = sum S. */
void al_entmax_bisect_ref_bwd(double *gin, double *galpha, const double *gout, const double *out,
                              int64_t n, double param) {
  const double am1 = param - 1;
  double sw = 0, swg = 0, H = 0;
  for (int64_t j = 0; j < n; j++)
    if (out[j] > 0) {
      const double w = pow(out[j], 2 - param);
      sw += w;
      swg += w * gout[j];
      H += out[j] * log(out[j]);
    }
  double ga = 0;
  for (int64_t j = 0; j < n; j++) {
    if (!(out[j] > 0)) { gin[j] = 0.0; continue; }
    const double w = pow(out[j], 2 - param), wt = w / sw, S = out[j] * log(out[j]);
    gin[j] = w * gout[j] - w * swg / sw;
    ga += gout[j] * ((out[j] - wt) / (am1 * am1) - (S - wt * H) / am1);
  }
  if (galpha) *galpha = ga;
}

/* ---- entry points ---- */
al_status al_bisect_check_alpha_(const char *who, const float *alpha, int64_t rows) {
  char b[32], bm[32];
  if (rows > 0 && !alpha) return al_seterr(AL_EINVAL, "%s: alpha is NULL, want %" PRId64 " values", who, rows);
  for (int64_t r = 0; r < rows; r++) {
    if (!(alpha[r] > 1.0f) || alpha[r] == INFINITY)
      return al_seterr(AL_EINVAL, "%s: alpha[%" PRId64 "] = %s, want a finite alpha > 1", who,
                       r, al_fmt_f_(b, alpha[r]));
    if (alpha[r] < AL_ENTMAX_ALPHA_MIN)
      return al_seterr(AL_EINVAL, "%s: alpha[%" PRId64 "] = %s is below %s: " AL_ENTMAX_ALPHA_MIN_WHY,
                       who, r, al_fmt_f_(b, alpha[r]), al_fmt_f_(bm, AL_ENTMAX_ALPHA_MIN));
  }
  return AL_OK;
}

static const al_norm_fwd_kernel BISECT_FWD = {"entmax_bisect", al_bisect_fwd_batch_, 0, AL_NORM_BATCH};

al_status al_entmax_bisect_fwd(float *out, const float *x, const float *alpha,
                               const uint8_t *keep, int64_t mrows, int64_t rows, int64_t n,
                               int max_iter, int *iters_used) {
  al_status st = al_norm_check_("entmax_bisect", out, x, keep, mrows, rows, n);
  if (st == AL_OK) st = al_bisect_check_alpha_("entmax_bisect", alpha, rows);
  if (st == AL_OK && max_iter < 1)
    st = al_seterr(AL_EINVAL, "entmax_bisect: max_iter = %d, want >= 1", max_iter);
  if (st != AL_OK) return st;
  if (iters_used) *iters_used = 0;
  if (rows * n == 0) return AL_OK;
  const al_norm_fwd_rows a = {.out = out, .x = x, .keep = keep, .mrows = mrows, .rows = rows, .n = n,
                              .alpha = alpha, .max_iter = max_iter};
  return al_norm_fwd_run_(&BISECT_FWD, &a, al_bisect_fwd_vectors_(n), iters_used);
}

/* The rows in lockstep, BIS_R at a time, then one by one; or, for 16 <= n <= BIS_TR_MAX_N, 16
 * rows at a time in lanes (the last group of fewer). */
static const al_norm_bwd_kernel BISECT_BWD_ROWS = {"entmax_bisect_bwd", al_bisect_bwd_rows_, 0, BIS_R, 1};
static const al_norm_bwd_kernel BISECT_BWD_LANES = {"entmax_bisect_bwd", al_bisect_bwd_lanes_, 0,
                                                    AL_NORM_BATCH, AL_NORM_BATCH};

static al_status bisect_bwd_all(float *gin, float *galpha, const float *gout, const float *out,
                                const float *alpha, int64_t rows, int64_t n, int acc) {
  al_status st = al_norm_check_("entmax_bisect_bwd", out, gout, NULL, 1, rows, n);
  if (st == AL_OK) st = al_bisect_check_alpha_("entmax_bisect_bwd", alpha, rows);
  if (st != AL_OK) return st;
  if (rows * n == 0 || (!gin && !galpha)) return AL_OK;
  const int lanes = bis_tr_ok(n) && n >= AL_V;
  const al_norm_bwd_rows a = {gin, galpha, gout, out, alpha, rows, n, acc};
  return al_norm_bwd_run_(lanes ? &BISECT_BWD_LANES : &BISECT_BWD_ROWS, &a, al_bisect_bwd_vectors_(n, lanes));
}

al_status al_entmax_bisect_bwd(float *gin, float *galpha, const float *gout, const float *out,
                               const float *alpha, int64_t rows, int64_t n) {
  return bisect_bwd_all(gin, galpha, gout, out, alpha, rows, n, 1);
}
al_status al_entmax_bisect_bwd_write(float *gin, float *galpha, const float *gout,
                                     const float *out, const float *alpha, int64_t rows,
                                     int64_t n) {
  return bisect_bwd_all(gin, galpha, gout, out, alpha, rows, n, 0);
}
