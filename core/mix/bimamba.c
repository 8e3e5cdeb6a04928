/* core/mix/bimamba.c -- multi-head bidirectional Mamba-1 core (Vision Mamba v2); API,
 * equations and parameter layouts in include/attnlab/mixers.h. Pure C11 + OpenMP, no
 * Lua; x_proj / dt_proj through al_sgemm.
 *
 * Direction d works on "step order": step s of sequence b is compact position
 * p = s (d = 0) or p = len_b - 1 - s (d = 1), i.e. the kept tokens in order or
 * reversed. Its buffers u, dt, xdbl (rows b*Tk + s) are laid out in step order, so
 * the conv, the projections and the scan are the same code for both directions;
 * only where they read x and write y do they map s -> p -> original token.
 *
 * The selective scan (Gu & Dao 2023, Alg. 2; discretisation exp(dt A), dt B):
 *     s_t = exp(dt_t A) s_{t-1} + (dt_t u_t) B_t,   y_t = <C_t, s_t> + D u_t
 * is vectorised ACROSS CHANNELS, 16 at a time (one AVX-512 register per state index
 * n), not across the state dimension N: B_t[n] and C_t[n] are then scalars broadcast
 * to all lanes, and y_t needs no horizontal sum. Each (sequence, channel) chain is
 * independent, so threads split (sequence, head, 16-channel block) tasks.
 *
 * Backward: dL/ds is carried backward in time (gh_{t-1} = exp(dt_t A) gh_t + C_{t-1} gy).
 * The states s_{t-1} it needs are recomputed per chunk of AL_SCAN_CHUNK steps from the
 * checkpoint the forward stored at the chunk start, into a per-thread buffer that
 * stays in L1/L2. dL/dB_t and dL/dC_t sum over the channels of a head: each task owns
 * one (sequence, head), accumulates 16 lane partials per (t, n) over its channel
 * blocks and reduces the lanes once per chunk, in a fixed order. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "attnlab/blas.h"
#include "attnlab/mixers.h"
#include "attnlab/threads.h"
#include "internal.h"

#define W 16             /* channels per vector block */
#define LC AL_SCAN_CHUNK
#define CONV_EC 64       /* channels per conv-backward task */

struct al_bimamba_ws {
  al_bimamba_dims d;     /* ld resolved (never 0) */
  int64_t tk, nck;       /* longest kept length; checkpoints per sequence */
  int dense, used;
  int64_t *len;          /* (B) */
  int32_t *pos;          /* (B, Tk) original t of compact position p; -1 past len */
  float *u[2];           /* (B*Tk, E) silu(conv), step order */
  float *dt[2];          /* (B*Tk, E) softplus(dt_proj), step order; bwd: dL/d(pre-softplus) */
  float *xdbl[2];        /* (B*Tk, H, R+2N) [dt_low | B | C] per head, step order */
  float *ckpt[2];        /* (B, nck, N, E) scan state entering step k*LC */
  float *ysum;           /* (B*Tk, E) y_fwd + y_bwd, compact order */
  size_t bytes;
};

size_t al_bimamba_ws_bytes(const al_bimamba_ws *ws) { return ws ? ws->bytes : 0; }

void al_bimamba_ws_free(al_bimamba_ws *ws) {
  if (ws) al_free(ws, ws->bytes);
}

static al_status check_args(const al_bimamba_params *p, const al_bimamba_dims *d, const char *fn) {
  if (!d || !p) return al_seterr(AL_EINVAL, "%s: dims and params are required", fn);
  if (d->B < 0 || d->T < 0 || d->E < 1 || d->H < 1 || d->E % d->H != 0 || d->N < 1 ||
      d->N > AL_BIMAMBA_MAX_N || d->R < 1 || d->K < 1 || (d->ld != 0 && d->ld < d->E))
    return al_seterr(AL_EINVAL,
                     "%s: dims (B=%lld, T=%lld, E=%lld, H=%lld, N=%lld, R=%lld, K=%lld, "
                     "ld=%lld) invalid: want B, T >= 0, E %% H == 0, 1 <= N <= %d, R >= 1, "
                     "K >= 1, ld = 0 or ld >= E", fn, (long long)d->B, (long long)d->T,
                     (long long)d->E, (long long)d->H, (long long)d->N, (long long)d->R,
                     (long long)d->K, (long long)d->ld, AL_BIMAMBA_MAX_N);
  if (d->T > INT32_MAX)
    return al_seterr(AL_EINVAL, "%s: T=%lld exceeds 2^31-1", fn, (long long)d->T);
  /* the largest buffers: the scan's checkpoints (B, T/LC, N, E) <= B*T*N*E floats, x_proj's
   * output (B*T, H*(R+2N)), the row stride ld, conv_w (E, K) and x_proj (H, R+2N, E/H) */
  const int64_t ldmax = d->ld > d->E ? d->ld : d->E;
  if (d->R > INT32_MAX || d->K > INT32_MAX || d->ld > ((int64_t)1 << 58) ||
      !mx_count_fits(2, (int64_t[]){d->B, 8}) || !mx_count_fits(4, (int64_t[]){d->B, d->T, d->N, d->E}) ||
      !mx_count_fits(3, (int64_t[]){d->B, d->T, ldmax}) ||
      !mx_count_fits(4, (int64_t[]){d->B, d->T, d->H, d->R + 2 * d->N}) ||
      !mx_count_fits(2, (int64_t[]){d->E, d->K}) || !mx_count_fits(2, (int64_t[]){d->E, d->R + 2 * d->N}))
    return al_seterr(AL_EINVAL, "%s: dims (B=%lld, T=%lld, E=%lld, H=%lld, N=%lld, R=%lld, K=%lld, "
                     "ld=%lld) too large: the workspace size overflows", fn, (long long)d->B,
                     (long long)d->T, (long long)d->E, (long long)d->H, (long long)d->N,
                     (long long)d->R, (long long)d->K, (long long)d->ld);
  for (int k = 0; k < 2; k++) {
    const char *miss = !p->conv_w[k] ? "conv_w (E, K)" : !p->x_proj[k] ? "x_proj (H, R+2N, E/H)"
                     : !p->dt_w[k] ? "dt_w (E, R)" : !p->dt_b[k] ? "dt_b (E)"
                     : !p->A_log[k] ? "A_log (E, N)" : !p->D[k] ? "D (E)" : NULL;
    if (miss)
      return al_seterr(AL_EINVAL, "%s: parameter %s of direction %d is NULL (E=%lld, H=%lld, "
                       "N=%lld, R=%lld, K=%lld)", fn, miss, k, (long long)d->E, (long long)d->H,
                       (long long)d->N, (long long)d->R, (long long)d->K);
  }
  return AL_OK;
}

/* token row (b*T + t) of step s of sequence b in direction d */
static inline int64_t step_token(const al_bimamba_ws *ws, int d, int64_t b, int64_t s) {
  int64_t p = d == 0 ? s : ws->len[b] - 1 - s;
  return b * ws->d.T + ws->pos[b * ws->tk + p];
}

/* v[0:ne] = conv_b + sum_k wT[k] * x_{s-K+1+k} for channels [e0, e0+ne): the causal
 * depthwise conv over the kept tokens in step order (missing left taps = 0). */
static void conv_at(float *v, const al_bimamba_ws *ws, int d, int64_t b, int64_t s,
                    const float *xin, const float *wT, const float *bias, int64_t e0, int64_t ne) {
  const int64_t E = ws->d.E, K = ws->d.K, ld = ws->d.ld;
  for (int64_t e = 0; e < ne; e++) v[e] = bias ? bias[e0 + e] : 0.0f;
  for (int64_t k = 0; k < K; k++) {
    int64_t s2 = s - (K - 1) + k;
    if (s2 < 0) continue;
    const float *xr = xin + step_token(ws, d, b, s2) * ld + e0;
    const float *w = wT + k * E + e0;
    for (int64_t e = 0; e < ne; e++) v[e] = fmaf(w[e], xr[e], v[e]);
  }
}

/* dst[0:W] = src[0:nc] padded with zeros; dst[0:nc] = src[0:nc] (constant-size copies
 * for full blocks, so no memcpy call per scan step). */
static inline void load_w(float *restrict dst, const float *restrict src, int nc) {
  if (nc == W)
    for (int c = 0; c < W; c++) dst[c] = src[c];
  else
    for (int c = 0; c < W; c++) dst[c] = c < nc ? src[c] : 0.0f;
}
static inline void store_w(float *restrict dst, const float *restrict src, int nc) {
  if (nc == W)
    for (int c = 0; c < W; c++) dst[c] = src[c];
  else
    for (int c = 0; c < nc; c++) dst[c] = src[c];
}
static inline void add_w(float *restrict dst, const float *restrict src, int nc) {
  if (nc == W)
    for (int c = 0; c < W; c++) dst[c] += src[c];
  else
    for (int c = 0; c < nc; c++) dst[c] += src[c];
}

/* Forward scan of channels [e0, e0+nc) (nc <= W, inside head h) of sequence b. */
static void scan_fwd_block(al_bimamba_ws *ws, int d, const float *Aneg, const float *Dp,
                           int64_t b, int64_t h, int64_t e0, int nc) {
  const int64_t E = ws->d.E, N = ws->d.N, R = ws->d.R, P = R + 2 * N, ldx = ws->d.H * P;
  const int64_t len = ws->len[b], tk = ws->tk;
  float At[AL_BIMAMBA_MAX_N * W], hs[AL_BIMAMBA_MAX_N * W], Dv[W];
  for (int64_t n = 0; n < N; n++)
    for (int c = 0; c < W; c++) At[n * W + c] = c < nc ? Aneg[(e0 + c) * N + n] : 0.0f;
  load_w(Dv, Dp + e0, nc);
  memset(hs, 0, sizeof(float) * N * W);
  for (int64_t s = 0; s < len; s++) {
    if (s % LC == 0) {
      float *ck = ws->ckpt[d] + (b * ws->nck + s / LC) * N * E + e0;
      for (int64_t n = 0; n < N; n++) store_w(ck + n * E, hs + n * W, nc);
    }
    const int64_t row = b * tk + s;
    float dl[W], uu[W], y[W], du[W];
    load_w(dl, ws->dt[d] + row * E + e0, nc);
    load_w(uu, ws->u[d] + row * E + e0, nc);
    const float *Bs = ws->xdbl[d] + row * ldx + h * P + R, *Cs = Bs + N;
    for (int c = 0; c < W; c++) {
      y[c] = Dv[c] * uu[c];
      du[c] = dl[c] * uu[c];
    }
    for (int64_t n = 0; n < N; n++) {
      const float bn = Bs[n], cn = Cs[n];
      float *hn = hs + n * W;
      const float *an = At + n * W;
      for (int c = 0; c < W; c++) {
        float st = fmaf(mx_exp_le0(dl[c] * an[c]), hn[c], du[c] * bn);   /* s_t */
        hn[c] = st;
        y[c] = fmaf(cn, st, y[c]);                                     /* y_t += C_t[n] s_t[n] */
      }
    }
    float *yo = ws->ysum + (b * tk + (d == 0 ? s : len - 1 - s)) * E + e0;
    if (d == 0) store_w(yo, y, nc);
    else add_w(yo, y, nc);
  }
}

/* Per-thread scratch of the backward scan (floats). */
static int64_t scan_bwd_scratch(int64_t Eh, int64_t N) {
  int64_t nblk = (Eh + W - 1) / W;
  return nblk * N * W + 2 * (int64_t)LC * N * W + (int64_t)LC * 2 * N * W + N * W;
}

/* One reverse step of the scan for a block of W channels (all arrays (N, W) unless
 * noted; restrict so that GCC vectorises the lane loop). Forward relations:
 *     s_t = a_t s_{t-1} + (dt u) B_t,  a_t = exp(dt A),  y_t = <C_t, s_t> + D u.
 * g: dL/ds_t from later steps on entry, dL/ds_{t-1} on return. */
static inline void bwd_step(int64_t N, float *restrict g, float *restrict pB, float *restrict pC,
                            float *restrict dAacc, const float *restrict hc,
                            const float *restrict hp, const float *restrict ac,
                            const float *restrict At, const float *restrict Bs,
                            const float *restrict Cs, const float *restrict gyv,
                            const float *restrict uu, const float *restrict dl,
                            const float *restrict Dv, float *restrict ddl, float *restrict duv,
                            float *restrict dDacc) {
  float dlu[W];
  for (int c = 0; c < W; c++) {
    ddl[c] = 0.0f;
    duv[c] = gyv[c] * Dv[c];                      /* y = ... + D u */
    dDacc[c] = fmaf(gyv[c], uu[c], dDacc[c]);
    dlu[c] = dl[c] * uu[c];
  }
  for (int64_t n = 0; n < N; n++) {
    const float bn = Bs[n], cn = Cs[n];
    const int64_t o = n * W;
    for (int c = 0; c < W; c++) {
      pC[o + c] = fmaf(gyv[c], hc[o + c], pC[o + c]);     /* dL/dC_t[n] lane partial */
      float gn = fmaf(gyv[c], cn, g[o + c]);              /* dL/ds_t */
      float ga = gn * hp[o + c] * ac[o + c];              /* dL/d(dt A) */
      ddl[c] = fmaf(ga, At[o + c], fmaf(gn * bn, uu[c], ddl[c]));
      dAacc[o + c] = fmaf(ga, dl[c], dAacc[o + c]);       /* dL/dA (before * dt sum) */
      pB[o + c] = fmaf(gn, dlu[c], pB[o + c]);            /* dL/dB_t[n] lane partial */
      duv[c] = fmaf(gn * bn, dl[c], duv[c]);
      g[o + c] = gn * ac[o + c];                          /* dL/ds_{t-1} via the decay */
    }
  }
}

/* Backward scan of head h of sequence b. Reads gy (compact order, (B*Tk, E)); writes
 * dt[d] <- dL/d(pre-softplus dt) and du <- dL/du (scan part) in step order, dxdbl's
 * B and C columns, and adds dL/dA_log, dL/dD into the per-sequence partials pA, pD. */
static void scan_bwd_head(al_bimamba_ws *ws, int d, const float *Aneg, const float *Dp,
                          const float *gy, float *du_out, float *dxdbl, double *pA, double *pD,
                          int64_t b, int64_t h, float *scr) {
  const int64_t E = ws->d.E, N = ws->d.N, R = ws->d.R, P = R + 2 * N, ldx = ws->d.H * P;
  const int64_t Eh = E / ws->d.H, nblk = (Eh + W - 1) / W;
  const int64_t len = ws->len[b], tk = ws->tk;
  float *gcar = scr;                       /* (nblk, N, W) dL/ds carried across chunks */
  float *Hb = gcar + nblk * N * W;         /* (LC, N, W) s_t of the chunk */
  float *Ab = Hb + (int64_t)LC * N * W;    /* (LC, N, W) exp(dt_t A) of the chunk */
  float *pBC = Ab + (int64_t)LC * N * W;   /* (LC, 2N, W) lane partials of dB_t, dC_t */
  float *h0 = pBC + (int64_t)LC * 2 * N * W;  /* (N, W) checkpoint state */
  float At[AL_BIMAMBA_MAX_N * W], dAacc[AL_BIMAMBA_MAX_N * W];
  memset(gcar, 0, sizeof(float) * nblk * N * W);
  const int64_t nck_b = (len + LC - 1) / LC;
  for (int64_t k = nck_b - 1; k >= 0; k--) {
    const int64_t s0 = k * LC, s1 = s0 + LC < len ? s0 + LC : len, L = s1 - s0;
    memset(pBC, 0, sizeof(float) * L * 2 * N * W);
    for (int64_t blk = 0; blk < nblk; blk++) {
      const int64_t e0 = h * Eh + blk * W;
      const int nc = (int)(Eh - blk * W < W ? Eh - blk * W : W);
      float Dv[W], dDacc[W] = {0};
      for (int64_t n = 0; n < N; n++)
        for (int c = 0; c < W; c++) At[n * W + c] = c < nc ? Aneg[(e0 + c) * N + n] : 0.0f;
      load_w(Dv, Dp + e0, nc);
      memset(dAacc, 0, sizeof(float) * N * W);
      const float *ck = ws->ckpt[d] + (b * ws->nck + k) * N * E + e0;
      for (int64_t n = 0; n < N; n++) load_w(h0 + n * W, ck + n * E, nc);
      /* recompute s_t and exp(dt_t A) over the chunk from its checkpoint */
      for (int64_t s = s0; s < s1; s++) {
        const int64_t row = b * tk + s;
        float dl[W], du[W];
        load_w(dl, ws->dt[d] + row * E + e0, nc);
        load_w(du, ws->u[d] + row * E + e0, nc);
        for (int c = 0; c < W; c++) du[c] *= dl[c];
        const float *Bs = ws->xdbl[d] + row * ldx + h * P + R;
        const float *hp = s > s0 ? Hb + (s - s0 - 1) * N * W : h0;
        float *hc = Hb + (s - s0) * N * W, *ac = Ab + (s - s0) * N * W;
        for (int64_t n = 0; n < N; n++) {
          const float bn = Bs[n];
          for (int c = 0; c < W; c++) {
            float a = mx_exp_le0(dl[c] * At[n * W + c]);
            ac[n * W + c] = a;
            hc[n * W + c] = fmaf(a, hp[n * W + c], du[c] * bn);
          }
        }
      }
      /* reverse over the chunk */
      float *g = gcar + blk * N * W;
      for (int64_t s = s1 - 1; s >= s0; s--) {
        const int64_t row = b * tk + s, prow = b * tk + (d == 0 ? s : len - 1 - s);
        float dl[W], uu[W], gyv[W], ddl[W], duv[W];
        load_w(dl, ws->dt[d] + row * E + e0, nc);
        load_w(uu, ws->u[d] + row * E + e0, nc);
        load_w(gyv, gy + prow * E + e0, nc);
        const float *Bs = ws->xdbl[d] + row * ldx + h * P + R;
        const float *hc = Hb + (s - s0) * N * W, *ac = Ab + (s - s0) * N * W;
        const float *hp = s > s0 ? Hb + (s - s0 - 1) * N * W : h0;
        float *pB = pBC + (s - s0) * 2 * N * W;
        bwd_step(N, g, pB, pB + N * W, dAacc, hc, hp, ac, At, Bs, Bs + N, gyv, uu, dl, Dv, ddl,
                 duv, dDacc);
        /* dt = softplus(pre): d dt/d pre = sigmoid(pre) = 1 - exp(-dt) */
        for (int c = 0; c < W; c++) ddl[c] *= -mx_expm1(-dl[c]);
        store_w(ws->dt[d] + row * E + e0, ddl, nc);
        store_w(du_out + row * E + e0, duv, nc);
      }
      /* A = -exp(A_log): dL/dA_log = dL/dA * A */
      for (int64_t n = 0; n < N; n++)
        for (int c = 0; c < nc; c++)
          pA[(e0 + c) * N + n] += (double)dAacc[n * W + c] * At[n * W + c];
      for (int c = 0; c < nc; c++) pD[e0 + c] += dDacc[c];
    }
    /* lanes -> dL/dB_t[n], dL/dC_t[n] of this head */
    for (int64_t s = s0; s < s1; s++) {
      const float *pB = pBC + (s - s0) * 2 * N * W;
      float *o = dxdbl + (b * tk + s) * ldx + h * P + R;
      for (int64_t n = 0; n < 2 * N; n++) {
        double acc = 0;
        for (int c = 0; c < W; c++) acc += pB[n * W + c];
        o[n] = (float)acc;
      }
    }
  }
}

al_status al_bimamba_fwd(float *out, al_bimamba_ws **wsp, const float *xin, const float *z,
                         const uint8_t *keep, const al_bimamba_params *p,
                         const al_bimamba_dims *dims) {
  if (wsp) *wsp = NULL;
  al_status st = check_args(p, dims, "bimamba_fwd");
  if (st) return st;
  al_bimamba_dims dm = *dims;
  if (dm.ld == 0) dm.ld = dm.E;
  const int64_t B = dm.B, T = dm.T, E = dm.E, H = dm.H, N = dm.N, R = dm.R, K = dm.K;
  const int64_t P = R + 2 * N, Eh = E / H, ldx = H * P, ld = dm.ld;
  if (B * T > 0 && (!out || !xin || !z))
    return al_seterr(AL_EINVAL, "bimamba_fwd: out (B=%lld, T=%lld, E=%lld), xin and z (rows "
                     "%lld apart) are required", (long long)B, (long long)T, (long long)E,
                     (long long)ld);
  int dense;
  const int64_t tk = mx_keep_lengths(NULL, &dense, keep, B, T), rows = B * tk;
  const int64_t nck = (tk + LC - 1) / LC;

  size_t off = 0;
  mx_carve(NULL, &off, sizeof(al_bimamba_ws));
  mx_carve(NULL, &off, sizeof(int64_t) * B);
  mx_carve(NULL, &off, sizeof(int32_t) * rows);
  for (int d = 0; d < 2; d++) {
    mx_carve(NULL, &off, sizeof(float) * rows * E);
    mx_carve(NULL, &off, sizeof(float) * rows * E);
    mx_carve(NULL, &off, sizeof(float) * rows * ldx);
    mx_carve(NULL, &off, sizeof(float) * B * nck * N * E);
  }
  mx_carve(NULL, &off, sizeof(float) * rows * E);
  const size_t bytes = off;
  char *blk = al_malloc(bytes);
  if (!blk) return al_seterr(AL_ENOMEM, "bimamba_fwd: out of memory for the %zu-byte workspace "
                             "(B=%lld, Tk=%lld, E=%lld, N=%lld)", bytes, (long long)B,
                             (long long)tk, (long long)E, (long long)N);
  off = 0;
  al_bimamba_ws *ws = mx_carve(blk, &off, sizeof(al_bimamba_ws));
  memset(ws, 0, sizeof *ws);
  ws->d = dm;
  ws->tk = tk;
  ws->nck = nck;
  ws->dense = dense;
  ws->bytes = bytes;
  ws->len = mx_carve(blk, &off, sizeof(int64_t) * B);
  ws->pos = mx_carve(blk, &off, sizeof(int32_t) * rows);
  for (int d = 0; d < 2; d++) {
    ws->u[d] = mx_carve(blk, &off, sizeof(float) * rows * E);
    ws->dt[d] = mx_carve(blk, &off, sizeof(float) * rows * E);
    ws->xdbl[d] = mx_carve(blk, &off, sizeof(float) * rows * ldx);
    ws->ckpt[d] = mx_carve(blk, &off, sizeof(float) * B * nck * N * E);
  }
  ws->ysum = mx_carve(blk, &off, sizeof(float) * rows * E);
  mx_keep_lengths(ws->len, &dense, keep, B, T);
  mx_keep_positions(ws->pos, keep, B, T, tk);

  const int nt = al_get_num_threads();
  size_t wt_bytes = sizeof(float) * (K * E + E * N);
  float *wT = al_malloc(wt_bytes), *Aneg = wT + K * E;   /* conv_w^T (K, E); A = -exp(A_log) */
  if (!wT) {
    al_bimamba_ws_free(ws);
    return al_seterr(AL_ENOMEM, "bimamba_fwd: out of memory for temporaries");
  }
  const int64_t nblk = (Eh + W - 1) / W, nscan = B * H * nblk;
  for (int d = 0; d < 2 && rows > 0; d++) {
    for (int64_t e = 0; e < E; e++)
      for (int64_t k = 0; k < K; k++) wT[k * E + e] = p->conv_w[d][e * K + k];
    for (int64_t i = 0; i < E * N; i++) Aneg[i] = -expf(p->A_log[d][i]);
    /* u = silu(causal depthwise conv(x)) in step order; rows past len: 0 */
    #pragma omp parallel for num_threads(nt) schedule(static) if (rows * E * K > AL_PAR_MIN_WORK)
    for (int64_t r = 0; r < rows; r++) {
      float *ur = ws->u[d] + r * E;
      int64_t b = r / tk, s = r % tk;
      if (s >= ws->len[b]) { memset(ur, 0, sizeof(float) * E); continue; }
      conv_at(ur, ws, d, b, s, xin, wT, p->conv_b[d], 0, E);
      for (int64_t e = 0; e < E; e++) ur[e] = mx_silu(ur[e]);
    }
    /* [dt_low | B | C] = u_h x_proj[h]^T;  dt = softplus(dt_low dt_w[h]^T + dt_b) */
    for (int64_t h = 0; h < H; h++) {
      al_sgemm(0, 1, rows, P, Eh, 1.0f, ws->u[d] + h * Eh, E, p->x_proj[d] + h * P * Eh, Eh,
               0.0f, ws->xdbl[d] + h * P, ldx);
      al_sgemm(0, 1, rows, Eh, R, 1.0f, ws->xdbl[d] + h * P, ldx, p->dt_w[d] + h * Eh * R, R,
               0.0f, ws->dt[d] + h * Eh, E);
    }
    const float *dtb = p->dt_b[d];
    #pragma omp parallel for num_threads(nt) schedule(static) if (rows * E > AL_PAR_MIN_WORK / 4)
    for (int64_t r = 0; r < rows; r++) {
      float *dr = ws->dt[d] + r * E;
      for (int64_t e = 0; e < E; e++) dr[e] = mx_softplus(dr[e] + dtb[e]);
    }
    #pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
    for (int64_t task = 0; task < nscan; task++) {
      int64_t b = task / (H * nblk), h = (task / nblk) % H, bl = task % nblk;
      int nc = (int)(Eh - bl * W < W ? Eh - bl * W : W);
      scan_fwd_block(ws, d, Aneg, p->D[d], b, h, h * Eh + bl * W, nc);
    }
  }
  al_free(wT, wt_bytes);

  /* out = 0.5 (y_fwd + y_bwd) silu(z) at kept tokens, 0 at dropped ones */
  #pragma omp parallel for num_threads(nt) schedule(static) if (B * T * E > AL_PAR_MIN_WORK / 4)
  for (int64_t b = 0; b < B; b++) {
    int64_t q = 0;
    for (int64_t t = 0; t < T; t++) {
      float *o = out + (b * T + t) * E;
      if (keep && !keep[b * T + t]) { memset(o, 0, sizeof(float) * E); continue; }
      const float *ys = ws->ysum + (b * tk + q++) * E, *zr = z + (b * T + t) * ld;
      for (int64_t e = 0; e < E; e++) o[e] = 0.5f * ys[e] * mx_silu(zr[e]);
    }
  }
  if (wsp) *wsp = ws;
  else al_bimamba_ws_free(ws);
  return AL_OK;
}

al_status al_bimamba_bwd(float *dxin, float *dz, const al_bimamba_grads *g,
                         const float *dout, al_bimamba_ws *ws, const float *xin,
                         const float *z, const al_bimamba_params *p) {
  if (!ws) return al_seterr(AL_EINVAL, "bimamba_bwd: workspace is NULL (forward without ws?)");
  if (ws->used) return al_seterr(AL_ESTATE, "bimamba_bwd: backward called twice on one workspace");
  al_status st = check_args(p, &ws->d, "bimamba_bwd");
  if (st) return st;
  const int64_t B = ws->d.B, T = ws->d.T, E = ws->d.E, H = ws->d.H, N = ws->d.N, R = ws->d.R;
  const int64_t K = ws->d.K, P = R + 2 * N, Eh = E / H, ldx = H * P, ld = ws->d.ld;
  const int64_t tk = ws->tk, rows = B * tk;
  static const al_bimamba_grads nograds;
  if (!g) g = &nograds;
  if (rows > 0 && (!dout || !xin || !z))
    return al_seterr(AL_EINVAL, "bimamba_bwd: dout (B=%lld, T=%lld, E=%lld), xin and z are "
                     "required", (long long)B, (long long)T, (long long)E);
  ws->used = 1;
  if (rows == 0) return AL_OK;
  const int nt = al_get_num_threads();

  /* temporaries */
  const int64_t scr_n = scan_bwd_scratch(Eh, N);
  size_t sz[7] = {
      sizeof(float) * rows * E,                 /* gy: 0.5 dout silu(z), compact order */
      sizeof(float) * rows * E,                 /* du, step order */
      sizeof(float) * rows * ldx,               /* dxdbl, step order */
      sizeof(float) * (size_t)nt * scr_n,       /* scan scratch per thread */
      sizeof(double) * B * (E * N + E),         /* per-sequence dA_log, dD partials */
      sizeof(double) * B * E * (K + 1),         /* per-sequence conv partials */
      sizeof(float) * (K * E + E * N)};         /* conv weights transposed; A = -exp(A_log) */
  void *tmp[7];
  int oom = 0;
  for (int i = 0; i < 7; i++) oom |= !(tmp[i] = al_malloc(sz[i]));
  if (oom) {
    for (int i = 0; i < 7; i++) al_free(tmp[i], sz[i]);
    return al_seterr(AL_ENOMEM, "bimamba_bwd: out of memory for temporaries");
  }
  float *gy = tmp[0], *du = tmp[1], *dxdbl = tmp[2], *scr = tmp[3], *wT = tmp[6];
  float *Aneg = wT + K * E;
  double *pAD = tmp[4], *pconv = tmp[5];

  /* out = 0.5 ysum silu(z):  gy = dL/dysum,  dz += 0.5 dout ysum silu'(z) */
  #pragma omp parallel for num_threads(nt) schedule(static) if (B * T * E > AL_PAR_MIN_WORK / 4)
  for (int64_t b = 0; b < B; b++) {
    for (int64_t q = 0; q < tk; q++) {
      float *gr = gy + (b * tk + q) * E;
      if (q >= ws->len[b]) { memset(gr, 0, sizeof(float) * E); continue; }
      const int64_t t = ws->pos[b * tk + q];
      const float *go = dout + (b * T + t) * E, *zr = z + (b * T + t) * ld;
      const float *ys = ws->ysum + (b * tk + q) * E;
      float *dzr = dz ? dz + (b * T + t) * ld : NULL;
      for (int64_t e = 0; e < E; e++) {
        gr[e] = 0.5f * go[e] * mx_silu(zr[e]);
        if (dzr) dzr[e] += 0.5f * go[e] * ys[e] * mx_dsilu(zr[e]);
      }
    }
  }

  const int64_t ncb = (E + CONV_EC - 1) / CONV_EC;
  for (int d = 0; d < 2; d++) {
    memset(du, 0, sz[1]);
    memset(dxdbl, 0, sz[2]);
    memset(pAD, 0, sz[4]);
    memset(pconv, 0, sz[5]);
    for (int64_t i = 0; i < E * N; i++) Aneg[i] = -expf(p->A_log[d][i]);
    /* 1. scan backward per (sequence, head) */
    #pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
    for (int64_t task = 0; task < B * H; task++) {
      int64_t b = task / H, h = task % H;
      double *pA = pAD + b * (E * N + E);
      scan_bwd_head(ws, d, Aneg, p->D[d], gy, du, dxdbl, pA, pA + E * N, b, h,
                    scr + (size_t)omp_get_thread_num() * scr_n);
    }
    /* rows past a sequence's length: dt holds forward values; zero them (no gradient) */
    for (int64_t b = 0; b < B; b++)
      for (int64_t q = ws->len[b]; q < tk; q++) memset(ws->dt[d] + (b * tk + q) * E, 0, sizeof(float) * E);
    /* dA_log, dD: per-sequence partials summed in sequence order */
    if (g->A_log[d] || g->D[d]) {
      #pragma omp parallel for num_threads(nt) schedule(static)
      for (int64_t i = 0; i < E * N + E; i++) {
        double acc = 0;
        for (int64_t b = 0; b < B; b++) acc += pAD[b * (E * N + E) + i];
        if (i < E * N) { if (g->A_log[d]) g->A_log[d][i] += (float)acc; }
        else if (g->D[d]) g->D[d][i - E * N] += (float)acc;
      }
    }
    /* 2. dt_b: column sums of dL/d(pre-softplus) */
    if (g->dt_b[d]) {
      #pragma omp parallel for num_threads(nt) schedule(static)
      for (int64_t c0 = 0; c0 < E; c0 += 64) {
        double acc[64] = {0};
        int64_t cn = E - c0 < 64 ? E - c0 : 64;
        for (int64_t r = 0; r < rows; r++) {
          const float *dr = ws->dt[d] + r * E + c0;
          for (int64_t c = 0; c < cn; c++) acc[c] += dr[c];
        }
        for (int64_t c = 0; c < cn; c++) g->dt_b[d][c0 + c] += (float)acc[c];
      }
    }
    /* 3. projections, per head: pre = dt_low dt_w^T, [dt_low|B|C] = u x_proj^T */
    for (int64_t h = 0; h < H; h++) {
      const float *dpre = ws->dt[d] + h * Eh;
      if (g->dt_w[d])
        al_sgemm(1, 0, Eh, R, rows, 1.0f, dpre, E, ws->xdbl[d] + h * P, ldx, 1.0f,
                 g->dt_w[d] + h * Eh * R, R);
      al_sgemm(0, 0, rows, R, Eh, 1.0f, dpre, E, p->dt_w[d] + h * Eh * R, R, 0.0f,
               dxdbl + h * P, ldx);
      if (g->x_proj[d])
        al_sgemm(1, 0, P, Eh, rows, 1.0f, dxdbl + h * P, ldx, ws->u[d] + h * Eh, E, 1.0f,
                 g->x_proj[d] + h * P * Eh, Eh);
      al_sgemm(0, 0, rows, Eh, P, 1.0f, dxdbl + h * P, ldx, p->x_proj[d] + h * P * Eh, Eh, 1.0f,
               du + h * Eh, E);
    }
    /* 4. u = silu(v), v = conv(x): recompute v, then conv weight/bias grads and dxin */
    for (int64_t e = 0; e < E; e++)
      for (int64_t k = 0; k < K; k++) wT[k * E + e] = p->conv_w[d][e * K + k];
    #pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
    for (int64_t task = 0; task < B * ncb; task++) {
      const int64_t b = task / ncb, e0 = (task % ncb) * CONV_EC;
      const int64_t ne = E - e0 < CONV_EC ? E - e0 : CONV_EC;
      double *pc = pconv + b * E * (K + 1);   /* (K+1, E): K weight taps, then the bias */
      float v[CONV_EC];
      for (int64_t s = 0; s < ws->len[b]; s++) {
        conv_at(v, ws, d, b, s, xin, wT, p->conv_b[d], e0, ne);
        const float *dur = du + (b * tk + s) * E + e0;
        for (int64_t e = 0; e < ne; e++) {
          v[e] = dur[e] * mx_dsilu(v[e]);      /* dL/dv */
          pc[K * E + e0 + e] += v[e];
        }
        for (int64_t k = 0; k < K; k++) {
          int64_t s2 = s - (K - 1) + k;
          if (s2 < 0) continue;
          const int64_t tok = step_token(ws, d, b, s2);
          const float *xr = xin + tok * ld + e0, *w = wT + k * E + e0;
          double *pk = pc + k * E + e0;
          for (int64_t e = 0; e < ne; e++) pk[e] += (double)v[e] * xr[e];
          if (dxin) {
            float *dxr = dxin + tok * ld + e0;
            for (int64_t e = 0; e < ne; e++) dxr[e] = fmaf(w[e], v[e], dxr[e]);
          }
        }
      }
    }
    if (g->conv_w[d] || g->conv_b[d]) {
      #pragma omp parallel for num_threads(nt) schedule(static)
      for (int64_t i = 0; i < E * (K + 1); i++) {
        double acc = 0;
        for (int64_t b = 0; b < B; b++) acc += pconv[b * E * (K + 1) + i];
        int64_t k = i / E, e = i % E;
        if (k < K) { if (g->conv_w[d]) g->conv_w[d][e * K + k] += (float)acc; }
        else if (g->conv_b[d]) g->conv_b[d][e] += (float)acc;
      }
    }
  }
  for (int i = 0; i < 7; i++) al_free(tmp[i], sz[i]);
  return AL_OK;
}
