/* core/ops/mixers.c -- autograd nodes around the BiLSTM and BiMamba cores. */
#include <stdlib.h>
#include <string.h>

#include "attnlab/mixer_ops.h"
#include "attnlab/mixers.h"
#include "internal.h"

typedef struct {
  void *ws;
  int is_mamba;
  int n;
  al_tensor *t[16];     /* contiguous inputs and parameters the backward needs */
  int64_t dims[8];
} mix_extra;

static void mix_free(void *p) {
  mix_extra *e = p;
  if (e->ws) {
    if (e->is_mamba) al_bimamba_ws_free(e->ws); else al_bilstm_ws_free(e->ws);
  }
  for (int i = 0; i < e->n; i++) al_tensor_release(e->t[i]);
  free(e);
}

static al_status keep_bytes(uint8_t **out, al_tensor *keep, int64_t B, int64_t T, const char *op) {
  *out = NULL;
  if (!keep) return AL_OK;
  char s[128];
  if (keep->ndim != 2 || keep->shape[0] != B || keep->shape[1] != T)
    return al_seterr(AL_EINVAL, "%s: keep mask must be (%lld,%lld), got %s", op, (long long)B, (long long)T, al_shape_str(keep, s, sizeof s));
  al_tensor *f = NULL;
  AL_TRY(al_to_dtype(&f, keep, AL_F32));
  uint8_t *k = malloc((size_t)(B * T > 0 ? B * T : 1));
  if (!k) { al_tensor_release(f); return al_seterr(AL_ENOMEM, "%s: out of memory", op); }
  for (int64_t i = 0; i < B * T; i++) k[i] = al_f32(f)[i] != 0;
  al_tensor_release(f);
  *out = k;
  return AL_OK;
}

static al_status check_param(al_tensor *t, int ndim, const int64_t *shape, const char *op, const char *what) {
  char s[128], w[128];
  if (!t) return AL_OK;
  if (t->dtype != AL_F32 || t->ndim != ndim || memcmp(t->shape, shape, sizeof(int64_t) * (size_t)ndim))
    return al_seterr(AL_EINVAL, "%s: %s is %s, want float32 %s", op, what, al_shape_str(t, s, sizeof s), al_dims_str(ndim, shape, w, sizeof w));
  return AL_OK;
}

/* The backward's gradient buffers: a zeroed tensor in gin[i] for each of the first count inputs
 * that needs a gradient; AL_ENOMEM when one cannot be allocated. */
static al_status zero_grads(al_node *n, al_tensor **gin, int count) {
  al_status st = AL_OK;
  for (int i = 0; i < count && !st; i++) {
    if (!n->in[i].needs) continue;
    gin[i] = al_tensor_zeros(AL_F32, n->in[i].ndim, n->in[i].shape);
    if (!gin[i]) st = AL_ENOMEM;
  }
  return st;
}

/* The end of a mixer op after its forward ran with status st: on success o goes to *out, and the
 * node n (NULL when no input needs a gradient) keeps e for its backward; on failure all of n, e
 * and o are released. e's tensors are also saved in n, only for the version check before any
 * backward runs (autograd.h): they are the input's and the parameters' own storages when those
 * were contiguous, so an in-place change between forward and backward (x:add_(1), a parameter
 * updated) would otherwise make the backward use the new values, silently. */
static al_status finish_op(al_tensor **out, al_tensor *o, al_node *n, mix_extra *e, al_status st) {
  for (int i = 0; i < e->n && n && !st; i++)
    if (e->t[i]) st = al_node_save(n, e->t[i]);
  if (st) { if (n) al_node_release(n); mix_free(e); al_tensor_release(o); return st; }
  if (n) { n->extra = e; n->free_extra = mix_free; al_node_attach(n, o); }
  else mix_free(e);
  *out = o;
  return AL_OK;
}

/* ---- BiLSTM ---------------------------------------------------------------------- */
static al_status bilstm_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  mix_extra *e = n->extra;
  al_tensor *gc = NULL;
  AL_TRY(al_contiguous_ref(&gc, g));
  al_tensor *x = e->t[0];
  al_bilstm_params p;
  al_bilstm_grads gr;
  memset(&gr, 0, sizeof gr);
  for (int d = 0; d < 2; d++) {
    p.w_ih[d] = al_f32(e->t[1 + 4 * d]); p.w_hh[d] = al_f32(e->t[2 + 4 * d]);
    p.b_ih[d] = e->t[3 + 4 * d] ? al_f32(e->t[3 + 4 * d]) : NULL;
    p.b_hh[d] = e->t[4 + 4 * d] ? al_f32(e->t[4 + 4 * d]) : NULL;
  }
  al_status st = zero_grads(n, gin, 9);
  if (!st) {
    for (int d = 0; d < 2; d++) {
      gr.w_ih[d] = gin[1 + 4 * d] ? al_f32(gin[1 + 4 * d]) : NULL;
      gr.w_hh[d] = gin[2 + 4 * d] ? al_f32(gin[2 + 4 * d]) : NULL;
      gr.b_ih[d] = gin[3 + 4 * d] ? al_f32(gin[3 + 4 * d]) : NULL;
      gr.b_hh[d] = gin[4 + 4 * d] ? al_f32(gin[4 + 4 * d]) : NULL;
    }
    st = al_bilstm_bwd(gin[0] ? al_f32(gin[0]) : NULL, &gr, al_f32(gc), e->ws, al_f32(x), &p);
  }
  al_tensor_release(gc);
  return st;
}

al_status al_bilstm_op(al_tensor **out, al_tensor *x, al_tensor *const *params, al_tensor *keep, int64_t H) {
  AL_NEED(out, "bilstm", "out"); AL_NEED(x, "bilstm", "x"); AL_NEED(params, "bilstm", "params");
  const char *op = "bilstm";
  char s[128];
  if (x->dtype != AL_F32 || x->ndim != 3) return al_seterr(AL_EINVAL, "%s: x must be float32 (B,T,C), got %s", op, al_shape_str(x, s, sizeof s));
  int64_t B = x->shape[0], T = x->shape[1], C = x->shape[2];
  if (H < 1 || C % H) return al_seterr(AL_EINVAL, "%s: channels %lld not divisible by heads %lld", op, (long long)C, (long long)H);
  int64_t hd = C / H, wsh[3] = {H, 4 * hd, hd}, bsh[2] = {H, 4 * hd};
  static const char *names[4] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
  for (int i = 0; i < 8; i++) {
    if (!params[i] && (i % 4) < 2) return al_seterr(AL_EINVAL, "%s: %s is required", op, names[i % 4]);
    AL_TRY(check_param(params[i], (i % 4) < 2 ? 3 : 2, (i % 4) < 2 ? wsh : bsh, op, names[i % 4]));
  }
  mix_extra *e = calloc(1, sizeof *e);
  if (!e) return al_seterr(AL_ENOMEM, "%s: out of memory", op);
  al_status st = al_contiguous_ref(&e->t[0], x);
  for (int i = 0; i < 8 && !st; i++) if (params[i]) st = al_contiguous_ref(&e->t[1 + i], params[i]);
  e->n = 9;
  uint8_t *k = NULL;
  if (!st) st = keep_bytes(&k, keep, B, T, op);
  int64_t osh[3] = {B, T, 2 * C};
  al_tensor *o = st ? NULL : al_tensor_new(AL_F32, 3, osh);
  if (!st && !o) st = AL_ENOMEM;
  al_tensor *ins[9] = {x, params[0], params[1], params[2], params[3], params[4], params[5], params[6], params[7]};
  al_node *n = NULL;
  if (!st) n = al_node_new(op, bilstm_bwd, 9, ins, &st);
  if (!st) {
    al_bilstm_params p;
    for (int d = 0; d < 2; d++) {
      p.w_ih[d] = al_f32(e->t[1 + 4 * d]); p.w_hh[d] = al_f32(e->t[2 + 4 * d]);
      p.b_ih[d] = e->t[3 + 4 * d] ? al_f32(e->t[3 + 4 * d]) : NULL;
      p.b_hh[d] = e->t[4 + 4 * d] ? al_f32(e->t[4 + 4 * d]) : NULL;
    }
    al_bilstm_dims dims = {B, T, C, H};
    al_bilstm_ws *ws = NULL;
    st = al_bilstm_fwd(al_f32(o), n ? &ws : NULL, al_f32(e->t[0]), k, &p, &dims);
    e->ws = ws;
  }
  free(k);
  return finish_op(out, o, n, e, st);
}

/* ---- BiMamba --------------------------------------------------------------------- */
static void mamba_params(al_bimamba_params *p, al_tensor *const *t) {
  for (int d = 0; d < 2; d++) {
    al_tensor *const *q = t + 7 * d;
    p->conv_w[d] = al_f32(q[0]); p->conv_b[d] = q[1] ? al_f32(q[1]) : NULL; p->x_proj[d] = al_f32(q[2]);
    p->dt_w[d] = al_f32(q[3]); p->dt_b[d] = al_f32(q[4]); p->A_log[d] = al_f32(q[5]); p->D[d] = al_f32(q[6]);
  }
}

static al_status bimamba_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  mix_extra *e = n->extra;
  al_tensor *gc = NULL;
  AL_TRY(al_contiguous_ref(&gc, g));
  al_tensor *xz = e->t[0];
  int64_t E = e->dims[2];
  al_bimamba_params p;
  mamba_params(&p, e->t + 1);
  al_status st = zero_grads(n, gin, 15);
  if (!st) {
    al_bimamba_grads gr;
    float **slots[7] = {gr.conv_w, gr.conv_b, gr.x_proj, gr.dt_w, gr.dt_b, gr.A_log, gr.D};
    for (int d = 0; d < 2; d++)
      for (int j = 0; j < 7; j++) slots[j][d] = gin[1 + 7 * d + j] ? al_f32(gin[1 + 7 * d + j]) : NULL;
    float *gx = gin[0] ? al_f32(gin[0]) : NULL;
    st = al_bimamba_bwd(gx, gx ? gx + E : NULL, &gr, al_f32(gc), e->ws, al_f32(xz), al_f32(xz) + E, &p);
  }
  al_tensor_release(gc);
  return st;
}

al_status al_bimamba_op(al_tensor **out, al_tensor *xz, al_tensor *const *params, al_tensor *keep, int64_t H,
                        int64_t N, int64_t R, int64_t K) {
  AL_NEED(out, "bimamba", "out"); AL_NEED(xz, "bimamba", "xz"); AL_NEED(params, "bimamba", "params");
  const char *op = "bimamba";
  char s[128];
  if (xz->dtype != AL_F32 || xz->ndim != 3 || xz->shape[2] % 2)
    return al_seterr(AL_EINVAL, "%s: xz must be float32 (B,T,2E), got %s", op, al_shape_str(xz, s, sizeof s));
  int64_t B = xz->shape[0], T = xz->shape[1], E = xz->shape[2] / 2;
  if (H < 1 || E % H) return al_seterr(AL_EINVAL, "%s: inner channels %lld not divisible by heads %lld", op, (long long)E, (long long)H);
  /* before the shapes below are made of them (R + 2N overflowed for a huge N) */
  if (N < 1 || N > AL_BIMAMBA_MAX_N || R < 1 || R > INT64_MAX / 2 || K < 1)
    return al_seterr(AL_EINVAL, "%s: d_state %lld must be in 1..%d, dt_rank %lld and d_conv %lld >= 1", op, (long long)N,
                     AL_BIMAMBA_MAX_N, (long long)R, (long long)K);
  int64_t shp[7][3] = {{E, K}, {E}, {H, R + 2 * N, E / H}, {E, R}, {E}, {E, N}, {E}};
  int nds[7] = {2, 1, 3, 2, 1, 2, 1};
  static const char *names[7] = {"conv_w", "conv_b", "x_proj", "dt_w", "dt_b", "A_log", "D"};
  for (int i = 0; i < 14; i++) {
    if (!params[i] && i % 7 != 1) return al_seterr(AL_EINVAL, "%s: %s is required", op, names[i % 7]);
    AL_TRY(check_param(params[i], nds[i % 7], shp[i % 7], op, names[i % 7]));
  }
  mix_extra *e = calloc(1, sizeof *e);
  if (!e) return al_seterr(AL_ENOMEM, "%s: out of memory", op);
  e->is_mamba = 1;
  e->dims[2] = E;
  al_status st = al_contiguous_ref(&e->t[0], xz);
  for (int i = 0; i < 14 && !st; i++) if (params[i]) st = al_contiguous_ref(&e->t[1 + i], params[i]);
  e->n = 15;
  uint8_t *k = NULL;
  if (!st) st = keep_bytes(&k, keep, B, T, op);
  int64_t osh[3] = {B, T, E};
  al_tensor *o = st ? NULL : al_tensor_new(AL_F32, 3, osh);
  if (!st && !o) st = AL_ENOMEM;
  al_tensor *ins[15];
  ins[0] = xz;
  for (int i = 0; i < 14; i++) ins[1 + i] = params[i];
  al_node *n = NULL;
  if (!st) n = al_node_new(op, bimamba_bwd, 15, ins, &st);
  if (!st) {
    al_bimamba_params p;
    mamba_params(&p, e->t + 1);
    al_bimamba_dims dims = {B, T, E, H, N, R, K, 2 * E};
    al_bimamba_ws *ws = NULL;
    st = al_bimamba_fwd(al_f32(o), n ? &ws : NULL, al_f32(e->t[0]), al_f32(e->t[0]) + E, k, &p, &dims);
    e->ws = ws;
  }
  free(k);
  return finish_op(out, o, n, e, st);
}
