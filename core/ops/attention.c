/* core/ops/attention.c -- the fused multi-head attention core with a hand-written
 * backward: qkv (B, N, 3D) -> scores -> any attention normalizer -> P V -> (B, N, D).
 *
 * Why fused: as a chain of generic ops the core of a small ViT spends more time moving
 * data than multiplying (permute copies to split heads, a scaled copy of the scores, the
 * merge-heads copy, and in the backward a zero-filled gradient for each of q, k, v that
 * select() scatters into, then sums). Here each (batch, head) reads its q, k, v straight
 * out of the qkv rows through strides, and writes its output columns straight into the
 * (B, N, D) result: no copies, one node (the weights, when the caller takes them, have their own:
 * attention_weights_bwd). The batch elements are independent, so they are
 * split across threads with one-thread GEMMs -- the per-head GEMMs (N x N x D/H) are too
 * small to split -- and each one's H*N score rows go to the normalizer kernel in a single
 * call (the kernels work on batches of 16 rows; per head, N = 17 or 65 rows would leave a
 * batch of one row each time).
 *
 * Numbers: every batch element is computed by the same calls whatever the thread count, so the
 * results are bitwise identical for any count. They equal the unfused chain
 * (matmul, * scale, normalizer, matmul) up to float rounding; with a power-of-two scale
 * (head_dim 16, 64, ...) the forward is the same arithmetic. The alpha gradient (hae) is
 * summed per (b, h) over rows in double, then over b in order.
 * Pure C11 + OpenMP, GEMMs through al_sgemm, the normalizer a row of attnlab/norm_registry.h. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/blas.h"
#include "attnlab/norm_registry.h"
#include "attnlab/threads.h"
#include "internal.h"
#include "../util/numfmt.h"

/* Split the batch across threads when there are at least two threads and two items;
 * inside the region every al_sgemm call runs on one thread. */
static int use_threads(int64_t items) { return al_get_num_threads() > 1 && items >= 2; }

/* Per-thread scratch: nt blocks of `each` floats. */
static float *scratch_new(int nt, int64_t each) { return al_malloc(sizeof(float) * (size_t)(nt * (each > 0 ? each : 1))); }
static void scratch_free(float *p, int nt, int64_t each) { al_free(p, sizeof(float) * (size_t)(nt * (each > 0 ? each : 1))); }

/* Prefetch share i of n of the floats p[0..len): the 64-byte lines of that part. The
 * attention loops over examples call it once per head for the next example's blocks (its
 * rows of qkv, its weights P, its rows of the output or its gradient, each contiguous): the
 * per-head products read the rows of qkv and of the output 64 bytes of every 256-768, and
 * those lines, like P's, came from memory one at a time (the products ran at half their
 * rate with the same operands in cache; experiments/classifier/THROUGHPUT.md, "Huge pages").
 * Touches no result. */
static void prefetch_share(const float *p, int64_t len, int64_t i, int64_t n) {
  int64_t a = len * i / n, e = len * (i + 1) / n;
  for (int64_t q = a; q < e; q += 16) __builtin_prefetch(p + q, 0, 3);
}

/* The nodes' constants (both nodes, below): k = {B, N, H, D, kind}, d = {scale, alpha_value, ratio};
 * saved = {qkv (B,N,3D) contiguous, P (B,H,N,N)[, alpha (H)]}. */

/* The scores' part of a backward, one batch element: from dP (H,N,N), dS = f'(S)^T dP by the
 * kernel, all heads' rows in one call (fewer short row batches in the kernels; the _write kernels
 * fill dS and the per-row alpha gradients without a zero fill first); gah (H doubles, or NULL):
 * head h's alpha gradient summed over its rows in double; GXb (N, 3D) rows of qkv's gradient, or
 * NULL: dQ = scale dS K and dK = scale dS^T Q into its q and k columns (the v columns untouched).
 * pa: alpha per head or NULL (then d[1]). dS (H,N,N), ar and gar (H*N): the caller's scratch. */
static al_status scores_bwd(const al_node *n, const al_norm_desc *d, const float *dP, const float *Pb,
                            const float *Xb, float *GXb, double *gah, const float *pa, float *dS, float *ar,
                            float *gar) {
  int64_t N = n->k[1], H = n->k[2], D = n->k[3];
  int64_t dh = D / H, L3 = 3 * D, NN = N * N, HN = H * N;
  double scale = n->d[0], alpha_value = n->d[1];
  al_norm_params prm = {.ratio = n->d[2]};
  if (d->param == AL_NORM_P_ALPHA) {   /* one alpha per row: head h's for its N rows */
    for (int64_t h = 0; h < H; h++) {
      float a = pa ? pa[h] : (float)alpha_value;
      for (int64_t r = 0; r < N; r++) ar[h * N + r] = a;
    }
    prm.alpha = ar;
  }
  al_status s = d->bwd_write(dS, gah ? gar : NULL, dP, Pb, HN, N, &prm);
  if (s) return s;
  if (gah)
    for (int64_t h = 0; h < H; h++) {
      double acc = 0;
      for (int64_t r = 0; r < N; r++) acc += gar[h * N + r];
      gah[h] = acc;
    }
  if (GXb)
    for (int64_t h = 0; h < H; h++) {
      const float *Q = Xb + h * dh, *K = Xb + D + h * dh, *dSh = dS + h * NN;
      al_sgemm(0, 0, N, dh, N, (float)scale, dSh, N, K, L3, 0.0f, GXb + h * dh, L3);      /* dQ = scale dS K */
      al_sgemm(1, 0, N, dh, N, (float)scale, dSh, N, Q, L3, 0.0f, GXb + D + h * dh, L3);  /* dK = scale dS^T Q */
    }
  return AL_OK;
}

/* alpha's gradient (gin[1], alpha's own shape, H elements) from gah (B, H) doubles: summed over b
 * in order. Frees gah; gah NULL: alpha needs none. */
static al_status alpha_grad_finish(al_node *n, double *gah, al_tensor **gin) {
  if (!gah) return AL_OK;
  int64_t B = n->k[0], H = n->k[2];
  al_tensor *ga = al_tensor_new(AL_F32, n->in[1].ndim, n->in[1].shape);
  if (!ga) { free(gah); return AL_ENOMEM; }
  for (int64_t h = 0; h < H; h++) {
    double s = 0;
    for (int64_t b = 0; b < B; b++) s += gah[b * H + h];
    al_f32(ga)[h] = (float)s;
  }
  gin[1] = ga;
  free(gah);
  return AL_OK;
}

/* Backward of either node. Forward relations per (b, h), with Q, K, V (N, dh) views of qkv:
 *   S = scale Q K^T,  P = f(S) rowwise,  O = P V.
 * Inverted: dP = dO V^T, dV = P^T dO, dS = f'(S)^T dP (the kernels' bwd), dQ = scale dS K,
 * dK = scale dS^T Q, dalpha_h = sum over (b, rows) of the kernel's per-row alpha grad.
 * of_weights = 0: out's node, g = dO (B,N,D). of_weights = 1: the weights' node (a loss on P: an
 * entropy or sparsity term, attention distillation), g = dP (B,H,N,N) itself; v's columns of
 * qkv's gradient are 0. It is a second node over the same inputs, saving what the first one
 * saved (aliases, no copies), so that a loss on out alone never reaches it: the first node's
 * arithmetic, and its cost, are as without it. Masked keys have P = 0, where every kernel's
 * backward gives dS = 0 (as al_normalize's, the unfused path). */
static al_status backward(al_node *n, al_tensor *g, al_tensor **gin, int of_weights) {
  al_tensor *qkv = n->saved[0], *P = n->saved[1], *alpha = n->nsaved > 2 ? n->saved[2] : NULL;
  int64_t B = n->k[0], N = n->k[1], H = n->k[2], D = n->k[3];
  const al_norm_desc *d = al_norm_get((al_norm_kind)n->k[4]);
  int64_t dh = D / H, L3 = 3 * D, NN = N * N, HN = H * N, HNN = H * NN, pairs = B * H;
  int need_x = n->in[0].needs, need_a = n->ninputs > 1 && n->in[1].needs && d->param == AL_NORM_P_ALPHA;
  const char *what = of_weights ? "backward of the weights" : "backward";
  al_tensor *gc = NULL;
  AL_TRY(al_contiguous_ref(&gc, g));
  al_tensor *gx = need_x ? al_tensor_new(AL_F32, 3, (int64_t[]){B, N, L3}) : NULL;
  double *gah = need_a ? calloc((size_t)(pairs ? pairs : 1), sizeof *gah) : NULL;
  int par = use_threads(B);
  int nt = par ? al_get_num_threads() : 1;
  /* [dP (H,N,N), out's node only,] dS (H,N,N), alpha rows, alpha grad rows (H*N) */
  int64_t own_dP = of_weights ? 0 : HNN, each = own_dP + HNN + 2 * HN;
  float *scr = scratch_new(nt, each);
  if ((need_x && !gx) || (need_a && !gah) || !scr) {
    al_tensor_release(gc); al_tensor_release(gx); free(gah); if (scr) scratch_free(scr, nt, each);
    return al_seterr(AL_ENOMEM, "attention: out of memory in %s (B=%lld, N=%lld)", what, (long long)B, (long long)N);
  }
  const float *X = al_f32(qkv), *pP = al_f32(P), *G = al_f32(gc), *pa = alpha ? al_f32(alpha) : NULL;
  float *GX = gx ? al_f32(gx) : NULL;
  al_status st = AL_OK;
  #pragma omp parallel for if (par) schedule(static)
  for (int64_t b = 0; b < B; b++) {
    float *mine = scr + (int64_t)omp_get_thread_num() * each, *dS = mine + own_dP, *ar = dS + HNN, *gar = ar + HN;
    const float *Xb = X + b * N * L3, *Pb = pP + b * HNN, *dP = mine;
    float *GXb = GX ? GX + b * N * L3 : NULL;
    if (of_weights) {
      dP = G + b * HNN;
      if (GXb)   /* v does not reach the weights */
        for (int64_t r = 0; r < N; r++) memset(GXb + r * L3 + 2 * D, 0, sizeof(float) * (size_t)D);
    } else {
      const float *Gb = G + b * N * D;
      for (int64_t h = 0; h < H; h++) {
        if (b + 1 < B) {   /* the next example's blocks, a head's share at a time */
          prefetch_share(pP + (b + 1) * HNN, HNN, h, H);
          prefetch_share(X + (b + 1) * N * L3, N * L3, h, H);
          prefetch_share(G + (b + 1) * N * D, N * D, h, H);
        }
        const float *V = Xb + 2 * D + h * dh;
        al_sgemm(0, 1, N, N, dh, 1.0f, Gb + h * dh, D, V, L3, 0.0f, mine + h * NN, N);          /* dP = dO V^T */
        if (GXb) al_sgemm(1, 0, N, dh, N, 1.0f, Pb + h * NN, N, Gb + h * dh, D, 0.0f, GXb + 2 * D + h * dh, L3);   /* dV = P^T dO */
      }
    }
    al_status s = scores_bwd(n, d, dP, Pb, Xb, GXb, gah ? gah + b * H : NULL, pa, dS, ar, gar);
    if (s) {
      #pragma omp critical(al_attention_err)
      if (!st) st = s;
    }
  }
  scratch_free(scr, nt, each);
  al_tensor_release(gc);
  if (st) {
    al_tensor_release(gx); free(gah);
    return al_seterr(st, "attention: %s %s failed on scores (%lld,%lld,%lld,%lld)", d->name, what,
                     (long long)B, (long long)H, (long long)N, (long long)N);
  }
  gin[0] = gx;
  return alpha_grad_finish(n, gah, gin);
}

static al_status attention_bwd(al_node *n, al_tensor *g, al_tensor **gin) { return backward(n, g, gin, 0); }
static al_status attention_weights_bwd(al_node *n, al_tensor *g, al_tensor **gin) { return backward(n, g, gin, 1); }

al_status al_attention(al_tensor **out, al_tensor **probs, al_tensor *qkv, const al_attention_opts *o) {
  AL_NEED(out, "attention", "out"); AL_NEED(qkv, "attention", "qkv"); AL_NEED(o, "attention", "opts");
  char s1[128], s2[128], vb[32], vbf[32];
  if (probs) *probs = NULL;
  if (qkv->dtype != AL_F32 || qkv->ndim != 3)
    return al_seterr(AL_EINVAL, "attention: qkv must be float32 (B,N,3D), got %s", al_shape_str(qkv, s1, sizeof s1));
  int64_t B = qkv->shape[0], N = qkv->shape[1], L3 = qkv->shape[2], H = o->heads;
  if (H < 1)   /* (below: "a multiple of heads 0") */
    return al_seterr(AL_EINVAL, "attention: heads must be >= 1, got %lld", (long long)H);
  if (H > L3 / 3 || L3 % (3 * H) != 0)   /* (H > L3/3 first: 3*H could overflow) */
    return al_seterr(AL_EINVAL, "attention: qkv %s: last dim must be 3*D with D a multiple of heads %lld", al_shape_str(qkv, s1, sizeof s1), (long long)H);
  int64_t D = L3 / 3, dh = D / H, NN = N * N;
  const al_norm_desc *d = al_norm_get(o->kind);
  if (!d) return al_seterr(AL_EINVAL, "attention: unknown normalizer %d", (int)o->kind);
  int has_alpha = d->param == AL_NORM_P_ALPHA;
  /* (values as given, to the digit that decides: %g printed the ratio 1.0000001 as "1") */
  if (!isfinite(o->scale)) return al_seterr(AL_EINVAL, "attention: scale must be finite, got %s", al_fmt_d_(vb, o->scale));
  /* the GEMMs take it as a float: 1e39 became inf there, every score +-inf or NaN */
  if (isinf((float)o->scale))
    return al_seterr(AL_EINVAL, "attention: scale must be finite, got %s (inf as a float32, which the kernels compute in)",
                     al_fmt_d_(vb, o->scale));
  if (d->param == AL_NORM_P_RATIO && !(o->ratio > 0 && o->ratio <= 1)) return al_seterr(AL_EINVAL, "attention: topk ratio must be in (0, 1], got %s", al_fmt_d_(vb, o->ratio));
  al_tensor *alpha = has_alpha ? o->alpha : NULL;
  if (alpha && al_numel(alpha) != H)
    return al_seterr(AL_EINVAL, "attention: alpha must have one value per head (%lld), got %s", (long long)H, al_shape_str(alpha, s1, sizeof s1));
  if (o->key_mask && (o->key_mask->ndim != 2 || o->key_mask->shape[0] != B || o->key_mask->shape[1] != N))
    return al_seterr(AL_EINVAL, "attention: key mask must be (B,N) = (%lld,%lld), got %s", (long long)B, (long long)N, al_shape_str(o->key_mask, s2, sizeof s2));
  al_tensor *xc = NULL, *ac = NULL, *mc = NULL;
  AL_TRY(al_contiguous_ref(&xc, qkv));
  al_status st = AL_OK;
  /* an int64 alpha is taken as float32, as al_normalize takes it (and the entmax package an
   * integer alpha); a float32 one as it is (al_to_dtype: a new reference when contiguous) */
  if (alpha) st = al_to_dtype(&ac, alpha, AL_F32);
  if (!st && o->key_mask) st = al_to_dtype(&mc, o->key_mask, AL_F32);
  if (!st && mc) st = al_mask_check_finite_("attention", mc);
  if (st) { al_tensor_release(xc); al_tensor_release(ac); al_tensor_release(mc); return st; }
  float av = (float)o->alpha_value;
  if (has_alpha) {   /* the kernel would say so per row; say it once, per head */
    char bm[32];
    for (int64_t h = 0; h < H && !st; h++) {
      float a = ac ? al_f32(ac)[h] : av;
      if (a >= AL_ENTMAX_ALPHA_MIN && !isinf(a)) continue;   /* (NaN fails the first test) */
      /* the value as given: a tensor's float32, or the number (and its float32 where that is
       * what fails: 1.000000001 is 1 there) */
      const char *given = ac ? al_fmt_f_(vb, a) : al_fmt_d_(vb, o->alpha_value);
      if (!(a > 1.0f) || isinf(a)) {
        if (!ac && o->alpha_value > 1.0 && isfinite(o->alpha_value))
          st = al_seterr(AL_EINVAL, "attention: alpha must be > 1 and finite, got %s (head %lld; %s as a float32, which the kernels compute in)",
                         given, (long long)(h + 1), al_fmt_f_(vbf, a));
        else
          st = al_seterr(AL_EINVAL, "attention: alpha must be > 1 and finite, got %s (head %lld)", given, (long long)(h + 1));
      } else {   /* below AL_ENTMAX_ALPHA_MIN */
        st = al_seterr(AL_EINVAL, "attention: alpha = %s (head %lld) is below %s: " AL_ENTMAX_ALPHA_MIN_WHY, given,
                       (long long)(h + 1), al_fmt_f_(bm, AL_ENTMAX_ALPHA_MIN));
      }
    }
  }
  uint8_t *keep = NULL;
  if (!st && mc) {
    keep = malloc((size_t)(B * N > 0 ? B * N : 1));
    if (!keep) st = al_seterr(AL_ENOMEM, "attention: out of memory");
    else for (int64_t i = 0; i < B * N; i++) keep[i] = al_f32(mc)[i] != 0.0f;
  }
  /* The weights live in one (B,H,N,N) tensor when the backward or the caller needs them,
   * else in per-thread scratch (inference: no 17 MB buffer per batch of 256 at N = 65). */
  int keep_p = probs || (al_grad_enabled() && (qkv->requires_grad || (alpha && alpha->requires_grad)));
  al_tensor *y = st ? NULL : al_tensor_new(AL_F32, 3, (int64_t[]){B, N, D});
  al_tensor *P = st || !keep_p ? NULL : al_tensor_new(AL_F32, 4, (int64_t[]){B, H, N, N});
  int par = use_threads(B);
  int nt = par ? al_get_num_threads() : 1;
  int64_t HN = H * N, HNN = H * NN;
  int64_t each = HNN + HN + (keep_p ? 0 : HNN);   /* scores (H,N,N), alpha rows (H*N)[, weights] */
  float *scr = st ? NULL : scratch_new(nt, each);
  if (!st && (!y || (keep_p && !P) || !scr)) st = al_seterr(AL_ENOMEM, "attention: out of memory (B=%lld, H=%lld, N=%lld)", (long long)B, (long long)H, (long long)N);
  if (!st) {
    const float *X = al_f32(xc), *pa = ac ? al_f32(ac) : NULL;
    float *Y = al_f32(y), *pP = P ? al_f32(P) : NULL;
    float sc = (float)o->scale;
    int max_iter = o->max_iter > 0 ? o->max_iter : 50;
    #pragma omp parallel for if (par) schedule(static)
    for (int64_t b = 0; b < B; b++) {
      float *S = scr + (int64_t)omp_get_thread_num() * each, *ar = S + HNN;
      float *Pb = pP ? pP + b * HNN : ar + HN;
      const float *Xb = X + b * N * L3;
      const uint8_t *kb = keep ? keep + b * N : NULL;   /* one key mask row for all H*N rows */
      for (int64_t h = 0; h < H; h++) {   /* S_h = scale Q_h K_h^T (N, N) */
        if (b + 1 < B) prefetch_share(X + (b + 1) * N * L3, N * L3, h, H);   /* the next example's rows */
        al_sgemm(0, 1, N, N, dh, sc, Xb + h * dh, L3, Xb + D + h * dh, L3, 0.0f, S + h * NN, N);
      }
      al_status s = AL_OK;
      /* all heads' rows in one call: fewer short row batches in the kernels */
      al_norm_params prm = {.ratio = o->ratio, .max_iter = max_iter};
      if (has_alpha) {   /* one alpha per row: head h's for its N rows */
        for (int64_t h = 0; h < H; h++) {
          float a = pa ? pa[h] : av;
          for (int64_t r = 0; r < N; r++) ar[h * N + r] = a;
        }
        prm.alpha = ar;
      }
      s = d->fwd(Pb, S, kb, 1, HN, N, &prm);
      if (s) {
        #pragma omp critical(al_attention_err)
        if (!st) st = s;
        continue;
      }
      for (int64_t h = 0; h < H; h++) {   /* O_h = P_h V_h into columns h*dh.. of (B, N, D) */
        if (b + 1 < B) {   /* the next example's outputs */
          if (pP) prefetch_share(pP + (b + 1) * HNN, HNN, h, H);
          prefetch_share(Y + (b + 1) * N * D, N * D, h, H);
        }
        al_sgemm(0, 0, N, dh, N, 1.0f, Pb + h * NN, N, Xb + 2 * D + h * dh, L3, 0.0f, Y + b * N * D + h * dh, D);
      }
    }
    if (st) st = al_seterr(st, "attention: %s failed on scores (%lld,%lld,%lld,%lld)", d->name, (long long)B, (long long)H, (long long)N, (long long)N);
  }
  if (scr) scratch_free(scr, nt, each);
  free(keep);
  al_tensor_release(mc);
  if (!st) {
    /* out's node; and, when the caller takes the weights, theirs (attention_weights_bwd), with
     * the same inputs, constants and saved tensors (the saved P is a detached alias: no cycle) */
    al_tensor *ins[2] = {qkv, alpha}, *outs[2] = {y, probs ? P : NULL};
    al_backward_fn fns[2] = {attention_bwd, attention_weights_bwd};
    const char *names[2] = {"attention", "attention_weights"};
    for (int i = 0; i < 2 && !st && outs[i]; i++) {
      al_node *n = al_node_new(names[i], fns[i], alpha ? 2 : 1, ins, &st);
      if (st || !n) break;
      n->k[0] = B; n->k[1] = N; n->k[2] = H; n->k[3] = D; n->k[4] = d->kind;
      n->d[0] = o->scale; n->d[1] = o->alpha_value; n->d[2] = o->ratio;
      al_node_save(n, xc);
      al_node_save(n, P);
      if (ac) al_node_save(n, ac);
      al_node_attach(n, outs[i]);
    }
  }
  al_tensor_release(xc); al_tensor_release(ac);
  if (st) { al_tensor_release(y); al_tensor_release(P); return st; }
  *out = y;
  if (probs) *probs = P;
  else al_tensor_release(P);
  return AL_OK;
}
