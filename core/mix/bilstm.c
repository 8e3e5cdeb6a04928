/* core/mix/bilstm.c -- multi-head bidirectional LSTM core (API and equations in
 * include/attnlab/mixers.h). Pure C11 + OpenMP, no Lua; projections through al_sgemm.
 *
 * Work split: the input projections x W_ih^T of every (head, direction) run as one
 * GEMM over all B*Tk rows; only h_{t-1} W_hh^T is sequential. Each (head, direction,
 * group of up to 8 sequences) is an independent recurrence, one OpenMP task; within a
 * task the sequences advance in lock step so each W_hh^T row is loaded once per step
 * for up to 4 sequences (rows_gemm_acc). Threads never share an output element, so
 * the result does not depend on the thread count.
 *
 * Layout of the stored activations (compact rows r = b*Tk + p, p = kept position):
 *   G  (r, H, 2, 4hd): gate activations [i f g o] after sigmoid/tanh; the backward
 *      overwrites them with dL/d(pre-activation) (hence "consumes the workspace").
 *   Cs (r, H, 2, hd): c_t;  Hs (r, H, 2, hd): h_t, already in y's channel order. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "attnlab/blas.h"
#include "attnlab/mixers.h"
#include "attnlab/threads.h"
#include "internal.h"

#define ROWGROUP 8   /* sequences per recurrence task */

struct al_bilstm_ws {
  al_bilstm_dims d;
  int64_t tk;        /* longest kept length: compact rows per sequence */
  int dense, used;
  int64_t *len;      /* (B) kept tokens per sequence */
  int32_t *pos;      /* (B, Tk) original t of compact position p; -1 past len */
  float *G, *Cs, *Hs;
  size_t bytes;
};

size_t al_bilstm_ws_bytes(const al_bilstm_ws *ws) { return ws ? ws->bytes : 0; }

void al_bilstm_ws_free(al_bilstm_ws *ws) {
  if (ws) al_free(ws, ws->bytes);
}

static al_status check_args(const al_bilstm_params *p, const al_bilstm_dims *d, const char *fn) {
  if (!d || !p) return al_seterr(AL_EINVAL, "%s: dims and params are required", fn);
  if (d->B < 0 || d->T < 0 || d->C < 1 || d->H < 1 || d->C % d->H != 0)
    return al_seterr(AL_EINVAL,
                     "%s: dims (B=%lld, T=%lld, C=%lld, H=%lld) invalid: want B, T >= 0, "
                     "C >= 1, H >= 1 and C %% H == 0", fn, (long long)d->B, (long long)d->T,
                     (long long)d->C, (long long)d->H);
  if (d->T > INT32_MAX)
    return al_seterr(AL_EINVAL, "%s: T=%lld exceeds 2^31-1", fn, (long long)d->T);
  long long hd = d->C / d->H;
  /* the largest buffers: the gates (B*T, 8C) and the weights (2, H, 4hd, hd) */
  if (!mx_count_fits(2, (int64_t[]){d->B, 8}) || !mx_count_fits(4, (int64_t[]){d->B, d->T, 8, d->C}) || !mx_count_fits(3, (int64_t[]){8, d->C, hd}))
    return al_seterr(AL_EINVAL, "%s: dims (B=%lld, T=%lld, C=%lld, H=%lld) too large: the workspace "
                     "size overflows", fn, (long long)d->B, (long long)d->T, (long long)d->C, (long long)d->H);
  for (int k = 0; k < 2; k++) {
    if (!p->w_ih[k] || !p->w_hh[k])
      return al_seterr(AL_EINVAL, "%s: w_ih[%d] and w_hh[%d] (H=%lld, 4hd=%lld, hd=%lld) are "
                       "required, got NULL", fn, k, k, (long long)d->H, 4 * hd, hd);
  }
  return AL_OK;
}

/* out[r][0:n] += sum_k a[r][k] * M[k][0:n] for r < nr (M row-major, K x n).
 * Tiles of 4 rows x 64 columns keep 16 AVX-512 accumulators in registers and load
 * each M element once per 4 rows. */
#define JT 64
static void tile4(float *const *out, const float *const *a, const float *M, int64_t K,
                  int64_t ldm, int64_t j0) {
  float acc0[JT], acc1[JT], acc2[JT], acc3[JT];
  memcpy(acc0, out[0] + j0, sizeof acc0);
  memcpy(acc1, out[1] + j0, sizeof acc1);
  memcpy(acc2, out[2] + j0, sizeof acc2);
  memcpy(acc3, out[3] + j0, sizeof acc3);
  const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3];
  for (int64_t k = 0; k < K; k++) {
    const float *m = M + k * ldm + j0;
    float x0 = a0[k], x1 = a1[k], x2 = a2[k], x3 = a3[k];
    for (int j = 0; j < JT; j++) {
      float w = m[j];
      acc0[j] = fmaf(x0, w, acc0[j]);
      acc1[j] = fmaf(x1, w, acc1[j]);
      acc2[j] = fmaf(x2, w, acc2[j]);
      acc3[j] = fmaf(x3, w, acc3[j]);
    }
  }
  memcpy(out[0] + j0, acc0, sizeof acc0);
  memcpy(out[1] + j0, acc1, sizeof acc1);
  memcpy(out[2] + j0, acc2, sizeof acc2);
  memcpy(out[3] + j0, acc3, sizeof acc3);
}

static void rows_gemm_acc(float *const *out, const float *const *a, int nr, const float *M,
                          int64_t K, int64_t n) {
  for (int r0 = 0; r0 < nr; r0 += 4) {
    int rn = nr - r0 < 4 ? nr - r0 : 4;
    for (int64_t j0 = 0; j0 < n; j0 += JT) {
      int64_t jn = n - j0 < JT ? n - j0 : JT;
      if (rn == 4 && jn == JT) {
        tile4(out + r0, a + r0, M, K, n, j0);
        continue;
      }
      for (int r = r0; r < r0 + rn; r++) {   /* edge tile: one row at a time */
        float *o = out[r] + j0;
        const float *ar = a[r];
        for (int64_t k = 0; k < K; k++) {
          const float *m = M + k * n + j0;
          float x = ar[k];
          for (int64_t j = 0; j < jn; j++) o[j] = fmaf(x, m[j], o[j]);
        }
      }
    }
  }
}

/* Sequences of this task that are still running at step k, with the compact position
 * p of step k (forward: p = k; reverse: p = len-1-k) and of step k-1. */
static int active_rows(const al_bilstm_ws *ws, int d, int64_t k, int64_t b0, int64_t b1,
                       int64_t *rows, int64_t *prow) {
  int nr = 0;
  for (int64_t b = b0; b < b1; b++) {
    int64_t n = ws->len[b];
    if (k >= n) continue;
    int64_t p = d == 0 ? k : n - 1 - k;
    rows[nr] = b * ws->tk + p;
    prow[nr] = d == 0 ? rows[nr] - 1 : rows[nr] + 1;   /* used only when k > 0 */
    nr++;
  }
  return nr;
}

/* One LSTM cell update for one sequence (separate function with restrict pointers
 * so that GCC vectorises it): g = the 4hd pre-activations [i f g o] on entry, their
 * activations on return; c, hs <- c_t, h_t; cprev = c_{t-1} (zeros at the first step). */
static void cell_fwd(int64_t hd, float *restrict g, float *restrict c, float *restrict hs,
                     const float *restrict cprev) {
  for (int64_t j = 0; j < hd; j++) {
    float gi = mx_sigmoid(g[j]);
    float gf = mx_sigmoid(g[hd + j]);
    float gg = mx_tanh(g[2 * hd + j]);
    float go = mx_sigmoid(g[3 * hd + j]);
    float cn = fmaf(gf, cprev[j], gi * gg);          /* c_t = f c_{t-1} + i g */
    g[j] = gi;
    g[hd + j] = gf;
    g[2 * hd + j] = gg;
    g[3 * hd + j] = go;
    c[j] = cn;
    hs[j] = go * mx_tanh(cn);                        /* h_t = o tanh(c_t) */
  }
}

/* Backward of cell_fwd: g holds the activations [i f g o] on entry and
 * dL/d(pre-activation) on return; dh (dL/dh_t from step t+1) is consumed, dc is
 * dL/dc_t from step t+1 on entry and dL/dc_{t-1} on return. */
static void cell_bwd(int64_t hd, float *restrict g, const float *restrict c,
                     const float *restrict cprev, const float *restrict dyr,
                     const float *restrict dh, float *restrict dc) {
  for (int64_t j = 0; j < hd; j++) {
    float gi = g[j], gf = g[hd + j], gg = g[2 * hd + j], go = g[3 * hd + j];
    float tc = mx_tanh(c[j]);
    float dhj = dh[j] + dyr[j];
    /* h = o tanh(c), c = f c' + i g: */
    float dcj = fmaf(dhj * go, 1.0f - tc * tc, dc[j]);
    float d_o = dhj * tc, d_i = dcj * gg, d_g = dcj * gi, d_f = dcj * cprev[j];
    dc[j] = dcj * gf;                                /* dL/dc_{t-1} */
    g[j] = d_i * gi * (1.0f - gi);                   /* sigmoid' = s (1 - s) */
    g[hd + j] = d_f * gf * (1.0f - gf);
    g[2 * hd + j] = d_g * (1.0f - gg * gg);          /* tanh' = 1 - tanh^2 */
    g[3 * hd + j] = d_o * go * (1.0f - go);
  }
}

/* Forward recurrence of one (head h, direction d) over sequences [b0, b1).
 * G holds x W_ih^T + b_ih + b_hh on entry; WT is W_hh^T (hd, 4hd); zeros: hd zeros. */
static void fwd_task(al_bilstm_ws *ws, const float *WT, int64_t h, int d, int64_t b0,
                     int64_t b1, const float *zeros) {
  const int64_t C = ws->d.C, hd = C / ws->d.H, G4 = 4 * hd, ldG = 8 * C, ldS = 2 * C;
  const int64_t chain = h * 2 + d;
  int64_t rows[ROWGROUP], prow[ROWGROUP];
  float *gp[ROWGROUP];
  const float *hp[ROWGROUP];
  for (int64_t k = 0; k < ws->tk; k++) {
    int nr = active_rows(ws, d, k, b0, b1, rows, prow);
    if (nr == 0) break;
    for (int r = 0; r < nr; r++) {
      gp[r] = ws->G + rows[r] * ldG + chain * G4;
      hp[r] = k > 0 ? ws->Hs + prow[r] * ldS + chain * hd : NULL;
    }
    if (k > 0) rows_gemm_acc(gp, hp, nr, WT, hd, G4);   /* += h_{t-1} W_hh^T */
    for (int r = 0; r < nr; r++)
      cell_fwd(hd, gp[r], ws->Cs + rows[r] * ldS + chain * hd, ws->Hs + rows[r] * ldS + chain * hd,
               k > 0 ? ws->Cs + prow[r] * ldS + chain * hd : zeros);
  }
}

/* Backward recurrence of one (head, direction) over sequences [b0, b1): reverse order
 * of the forward's steps; replaces the gate activations in G by dL/d(pre-activation).
 * dh, dc: scratch (ROWGROUP, hd) each, the gradients carried to the previous step;
 * zeros: hd zeros (c_{-1}). */
static void bwd_task(al_bilstm_ws *ws, const float *dy, const float *Whh, int64_t h, int d,
                     int64_t b0, int64_t b1, float *dh, float *dc, const float *zeros) {
  const int64_t C = ws->d.C, T = ws->d.T, hd = C / ws->d.H, G4 = 4 * hd, ldG = 8 * C,
                ldS = 2 * C;
  const int64_t chain = h * 2 + d;
  float *dhp[ROWGROUP];
  const float *gp[ROWGROUP];
  memset(dh, 0, sizeof(float) * ROWGROUP * hd);
  memset(dc, 0, sizeof(float) * ROWGROUP * hd);
  for (int64_t k = ws->tk - 1; k >= 0; k--) {
    int nr = 0;
    for (int64_t b = b0; b < b1; b++) {   /* like active_rows, keeping each sequence's slot */
      int64_t n = ws->len[b];
      if (k >= n) continue;
      int64_t p = d == 0 ? k : n - 1 - k;
      int64_t r = b * ws->tk + p;
      int64_t rp = d == 0 ? r - 1 : r + 1;   /* step k-1 */
      float *g = ws->G + r * ldG + chain * G4;
      const float *dyr = dy + (b * T + ws->pos[r]) * ldS + chain * hd;
      float *dhb = dh + (b - b0) * hd, *dcb = dc + (b - b0) * hd;
      cell_bwd(hd, g, ws->Cs + r * ldS + chain * hd, k > 0 ? ws->Cs + rp * ldS + chain * hd : zeros,
               dyr, dhb, dcb);
      dhp[nr] = dhb;
      gp[nr] = g;
      nr++;
    }
    if (nr == 0) continue;
    /* dL/dh_{t-1} = dpre_t W_hh (pre_t = ... + h_{t-1} W_hh^T) */
    for (int r = 0; r < nr; r++) memset(dhp[r], 0, sizeof(float) * hd);
    if (k > 0) rows_gemm_acc(dhp, gp, nr, Whh, G4, hd);
  }
}

al_status al_bilstm_fwd(float *y, al_bilstm_ws **wsp, const float *x, const uint8_t *keep,
                        const al_bilstm_params *p, const al_bilstm_dims *dims) {
  if (wsp) *wsp = NULL;
  al_status st = check_args(p, dims, "bilstm_fwd");
  if (st) return st;
  const int64_t B = dims->B, T = dims->T, C = dims->C, H = dims->H, hd = C / H, G4 = 4 * hd;
  const int64_t ldG = 8 * C, ldS = 2 * C;
  if (B * T > 0 && (!y || !x))
    return al_seterr(AL_EINVAL, "bilstm_fwd: y (B=%lld, T=%lld, 2C=%lld) and x (B, T, C=%lld) "
                     "are required", (long long)B, (long long)T, (long long)ldS, (long long)C);
  int dense;
  int64_t tk = mx_keep_lengths(NULL, &dense, keep, B, T);
  int64_t rows = B * tk;

  size_t off = 0;
  mx_carve(NULL, &off, sizeof(al_bilstm_ws));
  mx_carve(NULL, &off, sizeof(int64_t) * B);
  mx_carve(NULL, &off, sizeof(int32_t) * rows);
  mx_carve(NULL, &off, sizeof(float) * rows * ldG);
  mx_carve(NULL, &off, sizeof(float) * rows * ldS);
  mx_carve(NULL, &off, sizeof(float) * rows * ldS);
  size_t bytes = off;
  char *blk = al_malloc(bytes);
  if (!blk) return al_seterr(AL_ENOMEM, "bilstm_fwd: out of memory for the %zu-byte workspace "
                             "(B=%lld, Tk=%lld, C=%lld)", bytes, (long long)B, (long long)tk,
                             (long long)C);
  off = 0;
  al_bilstm_ws *ws = mx_carve(blk, &off, sizeof(al_bilstm_ws));
  memset(ws, 0, sizeof *ws);
  ws->d = *dims;
  ws->tk = tk;
  ws->dense = dense;
  ws->bytes = bytes;
  ws->len = mx_carve(blk, &off, sizeof(int64_t) * B);
  ws->pos = mx_carve(blk, &off, sizeof(int32_t) * rows);
  ws->G = mx_carve(blk, &off, sizeof(float) * rows * ldG);
  ws->Cs = mx_carve(blk, &off, sizeof(float) * rows * ldS);
  ws->Hs = mx_carve(blk, &off, sizeof(float) * rows * ldS);
  mx_keep_lengths(ws->len, &dense, keep, B, T);
  mx_keep_positions(ws->pos, keep, B, T, tk);

  /* Temporaries: compacted x (masked case) and W_hh^T of every (head, direction). */
  const int nt = al_get_num_threads();
  size_t xc_bytes = dense ? 0 : sizeof(float) * rows * C;
  size_t wt_bytes = sizeof(float) * (2 * H * hd * G4 + hd);   /* + hd zeros for c_{-1} */
  float *xc_buf = dense ? NULL : al_malloc(xc_bytes);
  float *WT = al_malloc(wt_bytes);
  if ((!dense && !xc_buf) || !WT) {
    al_free(xc_buf, xc_bytes);
    al_free(WT, wt_bytes);
    al_bilstm_ws_free(ws);
    return al_seterr(AL_ENOMEM, "bilstm_fwd: out of memory for temporaries");
  }
  const float *zeros = WT + 2 * H * hd * G4;
  memset(WT + 2 * H * hd * G4, 0, sizeof(float) * hd);
  const float *xc = dense ? x : xc_buf;
  if (!dense) {
    #pragma omp parallel for num_threads(nt) schedule(static) if (rows * C > AL_PAR_MIN_WORK)
    for (int64_t r = 0; r < rows; r++) {
      int32_t t = ws->pos[r];
      if (t >= 0) memcpy(xc_buf + r * C, x + ((r / tk) * T + t) * C, sizeof(float) * C);
      else memset(xc_buf + r * C, 0, sizeof(float) * C);
    }
  }

  if (rows > 0) {
    /* G[:, h, d, :] = x_h W_ih^T  (rows, 4hd) for every head and direction */
    for (int64_t h = 0; h < H; h++)
      for (int d = 0; d < 2; d++)
        al_sgemm(0, 1, rows, G4, hd, 1.0f, xc + h * hd, C, p->w_ih[d] + h * G4 * hd, hd, 0.0f,
                 ws->G + (h * 2 + d) * G4, ldG);
    #pragma omp parallel for num_threads(nt) schedule(static) if (rows * ldG > AL_PAR_MIN_WORK)
    for (int64_t r = 0; r < rows; r++) {
      for (int64_t h = 0; h < H; h++)
        for (int d = 0; d < 2; d++) {
          float *g = ws->G + r * ldG + (h * 2 + d) * G4;
          const float *bi = p->b_ih[d] ? p->b_ih[d] + h * G4 : NULL;
          const float *bh = p->b_hh[d] ? p->b_hh[d] + h * G4 : NULL;
          if (bi) for (int64_t j = 0; j < G4; j++) g[j] += bi[j];
          if (bh) for (int64_t j = 0; j < G4; j++) g[j] += bh[j];
        }
    }
    /* WT[h, d] = W_hh[d][h]^T (hd, 4hd): the recurrence reads rows of it */
    #pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t hc = 0; hc < 2 * H; hc++) {
      const float *W = p->w_hh[hc % 2] + (hc / 2) * G4 * hd;
      float *Wt = WT + hc * hd * G4;
      for (int64_t j = 0; j < G4; j++)
        for (int64_t k = 0; k < hd; k++) Wt[k * G4 + j] = W[j * hd + k];
    }
    const int64_t ngroups = (B + ROWGROUP - 1) / ROWGROUP, ntask = 2 * H * ngroups;
    #pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
    for (int64_t task = 0; task < ntask; task++) {
      int64_t hc = task / ngroups, grp = task % ngroups;
      int64_t b0 = grp * ROWGROUP, b1 = b0 + ROWGROUP < B ? b0 + ROWGROUP : B;
      fwd_task(ws, WT + hc * hd * G4, hc / 2, (int)(hc % 2), b0, b1, zeros);
    }
  }
  al_free(xc_buf, xc_bytes);
  al_free(WT, wt_bytes);

  /* y[b, t] = h at t's compact position, 0 for dropped tokens */
  #pragma omp parallel for num_threads(nt) schedule(static) if (B * T * ldS > AL_PAR_MIN_WORK)
  for (int64_t b = 0; b < B; b++) {
    int64_t pp = 0;
    for (int64_t t = 0; t < T; t++) {
      float *yr = y + (b * T + t) * ldS;
      if (!keep || keep[b * T + t]) memcpy(yr, ws->Hs + (b * tk + pp++) * ldS, sizeof(float) * ldS);
      else memset(yr, 0, sizeof(float) * ldS);
    }
  }

  if (wsp) *wsp = ws;
  else al_bilstm_ws_free(ws);
  return AL_OK;
}

al_status al_bilstm_bwd(float *dx, const al_bilstm_grads *g, const float *dy,
                        al_bilstm_ws *ws, const float *x, const al_bilstm_params *p) {
  if (!ws) return al_seterr(AL_EINVAL, "bilstm_bwd: workspace is NULL (forward without ws?)");
  if (ws->used) return al_seterr(AL_ESTATE, "bilstm_bwd: backward called twice on one workspace");
  al_status st = check_args(p, &ws->d, "bilstm_bwd");
  if (st) return st;
  const int64_t B = ws->d.B, T = ws->d.T, C = ws->d.C, H = ws->d.H, hd = C / H, G4 = 4 * hd;
  const int64_t ldG = 8 * C, ldS = 2 * C, tk = ws->tk, rows = B * tk;
  static const al_bilstm_grads nograds;
  if (!g) g = &nograds;
  if (rows > 0 && (!dy || !x))
    return al_seterr(AL_EINVAL, "bilstm_bwd: dy (B=%lld, T=%lld, 2C=%lld) and x (B, T, C=%lld) "
                     "are required", (long long)B, (long long)T, (long long)ldS, (long long)C);
  ws->used = 1;
  if (rows == 0) return AL_OK;
  const int nt = al_get_num_threads();

  size_t scr_bytes = sizeof(float) * ((size_t)nt * 2 * ROWGROUP * hd + hd);  /* + hd zeros */
  size_t xc_bytes = ws->dense ? 0 : sizeof(float) * rows * C;
  float *scr = al_malloc(scr_bytes);
  float *xc_buf = ws->dense ? NULL : al_malloc(xc_bytes);
  if (!scr || (!ws->dense && !xc_buf)) {
    al_free(scr, scr_bytes);
    al_free(xc_buf, xc_bytes);
    return al_seterr(AL_ENOMEM, "bilstm_bwd: out of memory for temporaries");
  }

  const float *zeros = scr + (size_t)nt * 2 * ROWGROUP * hd;
  memset(scr + (size_t)nt * 2 * ROWGROUP * hd, 0, sizeof(float) * hd);
  /* 1. the recurrences, reverse in time: G <- dL/d(pre-activation) */
  const int64_t ngroups = (B + ROWGROUP - 1) / ROWGROUP, ntask = 2 * H * ngroups;
  #pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
  for (int64_t task = 0; task < ntask; task++) {
    int64_t hc = task / ngroups, grp = task % ngroups;
    int64_t b0 = grp * ROWGROUP, b1 = b0 + ROWGROUP < B ? b0 + ROWGROUP : B;
    int d = (int)(hc % 2);
    float *s = scr + (size_t)omp_get_thread_num() * 2 * ROWGROUP * hd;
    bwd_task(ws, dy, p->w_hh[d] + (hc / 2) * G4 * hd, hc / 2, d, b0, b1, s, s + ROWGROUP * hd,
             zeros);
  }
  /* compact rows past a sequence's length hold forward leftovers: zero them so the
   * GEMMs over all rows below see no contribution from them. */
  if (!ws->dense)
    for (int64_t b = 0; b < B; b++)
      for (int64_t q = ws->len[b]; q < tk; q++) memset(ws->G + (b * tk + q) * ldG, 0, sizeof(float) * ldG);

  const float *xc = ws->dense ? x : xc_buf;
  if (!ws->dense) {
    #pragma omp parallel for num_threads(nt) schedule(static) if (rows * C > AL_PAR_MIN_WORK)
    for (int64_t r = 0; r < rows; r++) {
      int32_t t = ws->pos[r];
      if (t >= 0) memcpy(xc_buf + r * C, x + ((r / tk) * T + t) * C, sizeof(float) * C);
      else memset(xc_buf + r * C, 0, sizeof(float) * C);
    }
  }
  for (int64_t h = 0; h < H; h++)
    for (int d = 0; d < 2; d++) {
      const float *dP = ws->G + (h * 2 + d) * G4;   /* (rows, 4hd), ld 8C */
      /* 2. dW_ih += dP^T x_h   (pre = x W_ih^T + ...) */
      if (g->w_ih[d])
        al_sgemm(1, 0, G4, hd, rows, 1.0f, dP, ldG, xc + h * hd, C, 1.0f,
                 g->w_ih[d] + h * G4 * hd, hd);
      /* 3. dW_hh += sum_t dP_t^T h_{t-1}, per sequence (h_{t-1} is the neighbour row) */
      if (g->w_hh[d])
        for (int64_t b = 0; b < B; b++) {
          int64_t n = ws->len[b];
          if (n < 2) continue;
          int64_t r0 = b * tk;
          const float *A = dP + (d == 0 ? r0 + 1 : r0) * ldG;
          const float *Hp = ws->Hs + (d == 0 ? r0 : r0 + 1) * ldS + (h * 2 + d) * hd;
          al_sgemm(1, 0, G4, hd, n - 1, 1.0f, A, ldG, Hp, ldS, 1.0f, g->w_hh[d] + h * G4 * hd, hd);
        }
    }
  /* 4. biases: column sums of dP over all rows, in double */
  if (g->b_ih[0] || g->b_ih[1] || g->b_hh[0] || g->b_hh[1]) {
    #pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t hc = 0; hc < 2 * H; hc++) {
      int d = (int)(hc % 2);
      int64_t h = hc / 2;
      double acc[256];
      for (int64_t j0 = 0; j0 < G4; j0 += 256) {
        int64_t jn = G4 - j0 < 256 ? G4 - j0 : 256;
        for (int64_t j = 0; j < jn; j++) acc[j] = 0;
        for (int64_t r = 0; r < rows; r++) {
          const float *dP = ws->G + r * ldG + hc * G4 + j0;
          for (int64_t j = 0; j < jn; j++) acc[j] += dP[j];
        }
        for (int64_t j = 0; j < jn; j++) {
          if (g->b_ih[d]) g->b_ih[d][h * G4 + j0 + j] += (float)acc[j];
          if (g->b_hh[d]) g->b_hh[d][h * G4 + j0 + j] += (float)acc[j];
        }
      }
    }
  }
  /* 5. dx_h += dP W_ih (both directions) */
  if (dx) {
    float *dxc = ws->dense ? dx : xc_buf;
    if (!ws->dense) memset(xc_buf, 0, xc_bytes);
    for (int64_t h = 0; h < H; h++)
      for (int d = 0; d < 2; d++)
        al_sgemm(0, 0, rows, hd, G4, 1.0f, ws->G + (h * 2 + d) * G4, ldG,
                 p->w_ih[d] + h * G4 * hd, hd, 1.0f, dxc + h * hd, C);
    if (!ws->dense) {
      #pragma omp parallel for num_threads(nt) schedule(static) if (rows * C > AL_PAR_MIN_WORK)
      for (int64_t b = 0; b < B; b++)
        for (int64_t q = 0; q < ws->len[b]; q++) {
          float *o = dx + (b * T + ws->pos[b * tk + q]) * C;
          const float *s = xc_buf + (b * tk + q) * C;
          for (int64_t j = 0; j < C; j++) o[j] += s[j];
        }
    }
  }
  al_free(scr, scr_bytes);
  al_free(xc_buf, xc_bytes);
  return AL_OK;
}
