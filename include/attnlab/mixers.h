/* attnlab/mixers.h -- sequential token mixers that replace attention: a multi-head
 * bidirectional LSTM and a multi-head bidirectional Mamba-1 (Vision Mamba "v2").
 *
 * Pure C11 over contiguous float32 buffers; nothing here knows about Lua or tensors.
 * Each mixer is a *core*: the Linear layers around it (BiLSTM: out_proj 2C -> C;
 * BiMamba: in_proj dim -> 2E and out_proj E -> dim) are ordinary Linears done by the
 * caller. Calling pattern (both mixers):
 *
 *     al_bimamba_ws *ws;
 *     al_bimamba_fwd(out, &ws, xin, z, keep, &params, &dims);   // ws = NULL: inference
 *     ...
 *     al_bimamba_bwd(dxin, dz, &grads, dout, ws, xin, z, &params); // ACCUMULATES
 *     al_bimamba_ws_free(ws);
 *
 * - Forward allocates the workspace (al_malloc, so al_mem_live() sees it) and returns
 *   it; pass NULL for `ws` when no backward will follow: nothing is kept.
 * - Backward takes the SAME inputs and parameters as the forward (they are not copied
 *   into the workspace) and consumes the workspace (its buffers are reused as scratch):
 *   a second backward on one workspace returns AL_ESTATE. The workspace is freed only
 *   by *_ws_free (also after a failed or skipped backward); *_ws_free(NULL) is a no-op.
 * - Backward ACCUMULATES into every non-NULL gradient pointer (dx, dz, each parameter
 *   gradient); NULL gradient pointers are skipped (frozen parameters, no input grad).
 * - Threads: OpenMP over independent recurrences with al_get_num_threads() threads,
 *   OpenBLAS (al_sgemm) for the projections. Results are bitwise identical for any
 *   thread count: every reduction has a fixed order (per-sequence partials summed in
 *   sequence order), the scans are split across threads only along independent
 *   (sequence, channel) chains, and OpenBLAS splits GEMMs along M/N, never K
 *   (tests/c/test_mixers.c checks 1 vs 2 threads bit for bit).
 * - Errors: AL_EINVAL (bad dims or NULL required pointer, message names the shapes),
 *   AL_ENOMEM, AL_ESTATE. Nothing aborts.
 *
 * Keep masks (both mixers): keep is NULL (all tokens present) or uint8 (B, T), nonzero =
 * kept. Semantics: a dropped token is ABSENT. Each sequence is compacted to its kept
 * tokens in order; the mixer runs on that shorter sequence (recurrences, the BiMamba
 * conv window, the reverse direction which starts at the last kept token); results
 * are written back to the kept positions, and dropped positions get output 0 and
 * receive gradient 0. So out[b, kept t] equals running the mixer on x[b] with the
 * dropped tokens removed (tests/c/test_bilstm.c and test_bimamba.c check exactly that).
 * A sequence with no kept token gives all zeros. Padding is the special case of a suffix
 * of drops.
 */
#ifndef ATTNLAB_MIXERS_H
#define ATTNLAB_MIXERS_H
#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------
 * Multi-head bidirectional LSTM core.
 *
 * x (B, T, C) is split into H heads of hd = C/H channels. For each head h and direction
 * d (0 = forward in time, 1 = reverse) an LSTM with input size hd and hidden size hd
 * runs over x[..., h*hd:(h+1)*hd] (Hochreiter & Schmidhuber 1997, with forget gate;
 * exactly torch.nn.LSTM's equations and gate order i, f, g, o):
 *     [i f g o] = x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh
 *     i, f, o = sigmoid(.), g = tanh(.),  c_t = f*c_{t-1} + i*g,  h_t = o*tanh(c_t)
 * with h_0 = c_0 = 0 at the first (kept) token of each direction.
 *
 * Output y (B, T, 2C), channel order: head-major, then direction, then unit:
 *     y[b, t, h*2*hd + d*hd + j] = h_t of head h, direction d, unit j.
 * With H = 1 this is torch.nn.LSTM(C, C, bidirectional=True, batch_first=True):
 * y = [forward C | reverse C], and w_ih[0] = weight_ih_l0, w_ih[1] = weight_ih_l0_reverse,
 * and so on. (The caller's Linear 2C -> C follows.)
 *
 * Parameters, per direction d (pointer index), each head's block contiguous:
 *     w_ih[d], w_hh[d]: (H, 4hd, hd)     rows [i; f; g; o] as in torch
 *     b_ih[d], b_hh[d]: (H, 4hd)          may be NULL (= no bias, like bias=False)
 * Standard init (done in Lua): every entry U(-1/sqrt(hd), 1/sqrt(hd)), as torch.
 *
 * Workspace: the gate activations, cell states and hidden states of every step are
 * STORED, not recomputed: recomputing them would re-run the whole sequential
 * recurrence (the entire cost of the forward). With Tk = the longest kept length
 * (T without a mask), its size is
 *     bytes = 4*B*Tk*(8C + 2C + 2C) + 4*B*Tk + 8*B + O(1)        (48*B*Tk*C + ...)
 * e.g. B=8, T=196, C=192: 14.5 MB.  al_bilstm_ws_bytes() returns the exact figure.
 * ---------------------------------------------------------------------------------- */
typedef struct {
  int64_t B, T, C;   /* batch, tokens, channels (model dim) */
  int64_t H;         /* heads, C % H == 0; hd = C / H is each LSTM's hidden size */
} al_bilstm_dims;

typedef struct {
  const float *w_ih[2], *w_hh[2];  /* [dir] (H, 4hd, hd) */
  const float *b_ih[2], *b_hh[2];  /* [dir] (H, 4hd) or NULL */
} al_bilstm_params;

typedef struct {
  float *w_ih[2], *w_hh[2];        /* [dir] (H, 4hd, hd), accumulated; NULL = skip */
  float *b_ih[2], *b_hh[2];        /* [dir] (H, 4hd), accumulated; NULL = skip */
} al_bilstm_grads;

typedef struct al_bilstm_ws al_bilstm_ws;

/* y (B, T, 2C) <- BiLSTM(x (B, T, C)); keep NULL or (B, T). ws NULL or receives the
 * workspace for al_bilstm_bwd. */
al_status al_bilstm_fwd(float *y, al_bilstm_ws **ws, const float *x, const uint8_t *keep,
                        const al_bilstm_params *p, const al_bilstm_dims *dims);

/* dx (B, T, C) += dL/dx and grads += dL/dparams, given dy (B, T, 2C) = dL/dy.
 * x, p must be those of the forward. dx may be NULL. Consumes ws. */
al_status al_bilstm_bwd(float *dx, const al_bilstm_grads *g, const float *dy,
                        al_bilstm_ws *ws, const float *x, const al_bilstm_params *p);

size_t al_bilstm_ws_bytes(const al_bilstm_ws *ws);
void al_bilstm_ws_free(al_bilstm_ws *ws);

/* ------------------------------------------------------------------------------------
 * Multi-head bidirectional Mamba-1 core (Gu & Dao 2023, Alg. 2 "S6"; bidirectional as
 * Vision Mamba, Zhu et al. 2024, bimamba_type "v2" with if_devide_out=True).
 *
 * Inputs: xin, z (B, T, E) -- the two halves of the caller's in_proj dim -> 2E
 * (E = expand*dim; the letter E is used instead of STYLE.md's D because D is Mamba's
 * skip parameter). Rows of xin and z (and dxin, dz) are `ld` floats apart (ld = 0
 * means E), so xin = xz and z = xz + E with ld = 2E read one in_proj output in place.
 *
 * For each direction d (0: forward; 1: runs on the time-reversed sequence, output
 * reversed back), with its own parameters, and the E channels split into H heads of
 * Eh = E/H channels (head h owns channels [h*Eh, (h+1)*Eh)):
 *   v_t   = conv_b + sum_k conv_w[:, k] * x_{t-K+1+k}     causal depthwise conv, zero
 *                                                        left padding (torch Conv1d
 *                                                        padding=K-1, first T outputs)
 *   u_t   = silu(v_t)                                    (E)
 *   [dt_low | B_t | C_t] = u_t[head h] x_proj[h]^T        (R | N | N) per head
 *   dt_t  = softplus(dt_low dt_w[head h rows]^T + dt_b)   (Eh per head)  "delta"
 *   A     = -exp(A_log)                                  (E, N)
 *   s_t   = exp(dt_t * A) * s_{t-1} + (dt_t * u_t) B_t    (E, N) state, s_{-1} = 0
 *   y_t   = s_t C_t + D * u_t                            (E)  (zero-order hold on A,
 *                                                        Euler on B, as Mamba)
 * and out = 0.5 * (y_fwd + y_bwd) * silu(z)   (B, T, E); the caller's out_proj follows.
 *
 * Per head (H > 1): x_proj, dt_proj (so dt_low, B_t, C_t, dt are computed per head
 * from that head's channels only). Per channel, hence trivially per head: conv_w,
 * conv_b, dt_b, A_log, D. Shared by the heads: nothing. With H = 1 this is plain
 * Vision Mamba v2 and the arrays are Vim's tensors: conv_w[0] = conv1d.weight viewed
 * (E, K), conv_w[1] = conv1d_b.weight, x_proj[0] = x_proj.weight (R+2N, E),
 * dt_w[0] = dt_proj.weight (E, R), dt_b[0] = dt_proj.bias, A_log[1] = A_b_log,
 * D[1] = D_b, and so on.
 *
 * Parameters, per direction d (pointer index):
 *   conv_w[d] (E, K)   conv_b[d] (E) or NULL     x_proj[d] (H, R+2N, Eh)
 *   dt_w[d] (E, R)  (rows of head h: [h*Eh, (h+1)*Eh), its input: head h's dt_low)
 *   dt_b[d] (E)     A_log[d] (E, N)     D[d] (E)
 * Standard init (done in Lua; Mamba's reference initialisation):
 *   A_log[e, n] = log(n + 1) (S4D-real: A = -(1..N)),  D = 1,  conv: torch Conv1d default
 *   U(+-1/sqrt(K)), x_proj: Linear default U(+-1/sqrt(Eh)), dt_w ~ U(+-R^-0.5),
 *   dt_b = softplus^-1(dt) = dt + log(-expm1(-dt)) with dt = exp(U(log 1e-3, log 1e-1))
 *   clamped below at 1e-4 (so softplus(dt_b) starts log-uniform in [1e-3, 1e-1]).
 *
 * Workspace: per direction u (silu output), dt, [dt_low|B|C] for every kept token, and
 * the scan state every AL_SCAN_CHUNK steps; plus y_fwd + y_bwd (for dz). The full state
 * history s_t (B*T*E*N floats, 16x the activations) is NOT stored: the backward
 * recomputes each chunk of AL_SCAN_CHUNK steps from its checkpoint into a per-thread
 * buffer that stays in cache, which costs one extra scan but keeps memory linear in E.
 * With Tk = the longest kept length (T without a mask), P = R + 2N,
 * ck = ceil(Tk / AL_SCAN_CHUNK):
 *     bytes = 4*B*Tk*(5E + 2HP) + 4*2*B*ck*N*E + 4*B*Tk + 8*B + O(1)
 * e.g. B=8, T=196, E=384, H=1, N=16, R=12: 15.4 MB.  al_bimamba_ws_bytes() is exact.
 * ---------------------------------------------------------------------------------- */
#define AL_SCAN_CHUNK 32       /* steps between stored scan states */
#define AL_BIMAMBA_MAX_N 256   /* d_state limit (per-thread scan buffers) */

typedef struct {
  int64_t B, T, E;   /* batch, tokens, inner channels */
  int64_t H;         /* heads, E % H == 0 */
  int64_t N;         /* d_state, 1..AL_BIMAMBA_MAX_N */
  int64_t R;         /* dt_rank (per head), >= 1 */
  int64_t K;         /* d_conv (conv width), >= 1 */
  int64_t ld;        /* row stride of xin, z, dxin, dz in floats; 0 = E */
} al_bimamba_dims;

typedef struct {
  const float *conv_w[2], *conv_b[2];   /* [dir] (E, K), (E) or NULL */
  const float *x_proj[2];               /* [dir] (H, R+2N, E/H) */
  const float *dt_w[2], *dt_b[2];       /* [dir] (E, R), (E) */
  const float *A_log[2], *D[2];         /* [dir] (E, N), (E) */
} al_bimamba_params;

typedef struct {                        /* same shapes; accumulated; NULL = skip */
  float *conv_w[2], *conv_b[2], *x_proj[2], *dt_w[2], *dt_b[2], *A_log[2], *D[2];
} al_bimamba_grads;

typedef struct al_bimamba_ws al_bimamba_ws;

/* out (B, T, E) <- BiMamba core(xin, z); keep NULL or (B, T). */
al_status al_bimamba_fwd(float *out, al_bimamba_ws **ws, const float *xin, const float *z,
                         const uint8_t *keep, const al_bimamba_params *p,
                         const al_bimamba_dims *dims);

/* dxin, dz (rows `ld` apart) += dL/dxin, dL/dz; grads += dL/dparams, given dout (B, T, E).
 * xin, z, p must be those of the forward. dxin, dz may be NULL. Consumes ws. */
al_status al_bimamba_bwd(float *dxin, float *dz, const al_bimamba_grads *g,
                         const float *dout, al_bimamba_ws *ws, const float *xin,
                         const float *z, const al_bimamba_params *p);

size_t al_bimamba_ws_bytes(const al_bimamba_ws *ws);
void al_bimamba_ws_free(al_bimamba_ws *ws);

#ifdef __cplusplus
}
#endif

#endif
