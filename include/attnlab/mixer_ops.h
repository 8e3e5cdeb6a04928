/* attnlab/mixer_ops.h -- the sequential mixer cores (mixers.h) as differentiable ops.
 * Each is one autograd node whose backward is the kernel's hand-written backward; the
 * forward's workspace (stored or recomputed scan states, see mixers.h) lives in the
 * node until the backward consumes it. Under no_grad no workspace is kept. */
#ifndef ATTNLAB_MIXER_OPS_H
#define ATTNLAB_MIXER_OPS_H
#include "autograd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* x (B,T,C) -> y (B,T,2C). params[8] = forward direction w_ih (H,4hd,hd), w_hh (H,4hd,hd),
 * b_ih (H,4hd), b_hh (H,4hd), then the same for the reverse direction; biases may be
 * NULL. keep: NULL or (B,T), nonzero = token present. */
al_status al_bilstm_op(al_tensor **out, al_tensor *x, al_tensor *const *params, al_tensor *keep, int64_t heads);

/* xz (B,T,2E): [x | z] from the shared input projection -> out (B,T,E).
 * params[14] = for the forward then the reverse direction: conv_w (E,K), conv_b (E),
 * x_proj (H, R+2N, E/H), dt_w (E,R), dt_b (E), A_log (E,N), D (E). */
al_status al_bimamba_op(al_tensor **out, al_tensor *xz, al_tensor *const *params, al_tensor *keep, int64_t heads,
                        int64_t d_state, int64_t dt_rank, int64_t d_conv);

#ifdef __cplusplus
}
#endif

#endif
