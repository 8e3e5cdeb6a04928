/* core/ops/matmul.c -- matmul (batched, broadcasting) and the fused linear layer,
 * both on al_sgemm. Transposed operands (a view from transpose()) are passed to
 * sgemm as transposed, not copied. */
#include <stdlib.h>
#include <string.h>

#include "attnlab/blas.h"
#include "attnlab/threads.h"
#include "internal.h"

/* A matrix operand's layout for sgemm: row-major (trans=0, ld = row stride) or
 * column-major (trans=1, ld = column stride). 0 if neither (needs a copy). */
static int mat_layout(const al_tensor *t, int *trans, int64_t *ld) {
  int nd = t->ndim;
  int64_t r = t->shape[nd - 2], c = t->shape[nd - 1], sr = t->stride[nd - 2], sc = t->stride[nd - 1];
  if ((sc == 1 || c == 1) && sr >= (c > 1 ? c : 1)) { *trans = 0; *ld = sr > 0 ? sr : 1; if (r == 1) *ld = c > 1 ? c : 1; return 1; }
  if ((sr == 1 || r == 1) && sc >= (r > 1 ? r : 1)) { *trans = 1; *ld = sc > 0 ? sc : 1; if (c == 1) *ld = r > 1 ? r : 1; return 1; }
  return 0;
}

/* Reduce over broadcast batch dims to the (possibly unsqueezed) operand's shape,
 * then back to the user's operand shape (1-D operands were unsqueezed). */
static al_status sum_then_reshape(al_tensor **out, al_tensor *t, const al_tensor *op, int ndim, const int64_t *shape) {
  al_tensor *s = NULL;
  AL_TRY(al_sum_to_shape(&s, t, op->ndim, op->shape));
  al_status st = al_reshape(out, s, ndim, shape);
  al_tensor_release(s);
  return st;
}

static al_status matmul_bwd(al_node *n, al_tensor *g0, al_tensor **gin) {
  al_tensor *a = n->saved[0], *b = n->saved[1], *g = NULL;
  int drop_m = (int)n->k[0], drop_n = (int)n->k[1];
  al_status st = AL_OK;
  if (drop_m || drop_n) {   /* give g back the size-1 dims of the 1-D operands: (..., M, N) */
    int64_t sh[AL_MAXDIM];
    int nb = g0->ndim - !drop_m - !drop_n, k = 0;
    for (int i = 0; i < nb; i++) sh[k++] = g0->shape[i];
    sh[k++] = drop_m ? 1 : g0->shape[nb];
    sh[k++] = drop_n ? 1 : g0->shape[g0->ndim - 1];
    AL_TRY(al_reshape(&g, g0, k, sh));
  } else g = al_tensor_retain(g0);
  if (n->in[0].needs) {   /* ga = g @ b^T, summed over broadcast batch dims */
    al_tensor *bt = NULL, *t = NULL;
    st = al_transpose(&bt, b, -1, -2);
    if (!st) st = al_matmul(&t, g, bt);
    if (!st) st = sum_then_reshape(&gin[0], t, a, n->in[0].ndim, n->in[0].shape);
    al_tensor_release(bt); al_tensor_release(t);
  }
  if (!st && n->in[1].needs) {   /* gb = a^T @ g */
    al_tensor *t = NULL;
    if (b->ndim == 2 && a->ndim > 2) {   /* fold the batch: (R,K)^T @ (R,N) */
      al_tensor *a2 = NULL, *g2 = NULL, *a2t = NULL;
      /* R = the rows of a (..., M, K), which g (..., M, N) has too: -1 could not be inferred
       * when K or N is 0 ("cannot view (2,1,0) as (-1,0)" from the backward of a valid product) */
      int64_t R = 1;
      for (int i = 0; i < a->ndim - 1; i++) R *= a->shape[i];
      int64_t sa[2] = {R, a->shape[a->ndim - 1]}, sg[2] = {R, g->shape[g->ndim - 1]};
      st = al_reshape(&a2, a, 2, sa);
      if (!st) st = al_reshape(&g2, g, 2, sg);
      if (!st) st = al_transpose(&a2t, a2, 0, 1);
      if (!st) st = al_matmul(&t, a2t, g2);
      al_tensor_release(a2); al_tensor_release(g2); al_tensor_release(a2t);
    } else {
      al_tensor *at = NULL;
      st = al_transpose(&at, a, -1, -2);
      if (!st) st = al_matmul(&t, at, g);
      al_tensor_release(at);
    }
    if (!st) st = sum_then_reshape(&gin[1], t, b, n->in[1].ndim, n->in[1].shape);
    al_tensor_release(t);
  }
  al_tensor_release(g);
  return st;
}

al_status al_matmul(al_tensor **out, al_tensor *a0, al_tensor *b0) {
  AL_NEED(out, "matmul", "out"); AL_NEED(a0, "matmul", "a"); AL_NEED(b0, "matmul", "b");
  char s1[128], s2[128];
  if (a0->dtype != AL_F32 || b0->dtype != AL_F32)
    return al_seterr(AL_EINVAL, "matmul: expected float32 tensors, got %s and %s", al_shape_str(a0, s1, sizeof s1), al_shape_str(b0, s2, sizeof s2));
  if (a0->ndim == 0 || b0->ndim == 0)
    return al_seterr(AL_EINVAL, "matmul: both arguments need at least 1 dim, got %s and %s", al_shape_str(a0, s1, sizeof s1), al_shape_str(b0, s2, sizeof s2));
  /* 1-D operands: a (K) -> (1,K), b (K) -> (K,1); the extra dim is dropped at the end */
  al_tensor *a = NULL, *b = NULL;
  int drop_m = a0->ndim == 1, drop_n = b0->ndim == 1;
  int was = al_grad_enabled();
  al_set_grad_enabled(0);
  al_status st = drop_m ? al_unsqueeze(&a, a0, 0) : (a = al_tensor_retain(a0), AL_OK);
  if (!st) st = drop_n ? al_unsqueeze(&b, b0, 1) : (b = al_tensor_retain(b0), AL_OK);
  al_set_grad_enabled(was);
  if (st) { al_tensor_release(a); return st; }
  int64_t M = a->shape[a->ndim - 2], K = a->shape[a->ndim - 1], K2 = b->shape[b->ndim - 2], N = b->shape[b->ndim - 1];
  if (K != K2) {
    st = al_seterr(AL_EINVAL, "matmul: inner sizes differ: %s @ %s (%lld vs %lld)", al_shape_str(a0, s1, sizeof s1), al_shape_str(b0, s2, sizeof s2), (long long)K, (long long)K2);
    al_tensor_release(a); al_tensor_release(b);
    return st;
  }
  /* broadcast batch dims */
  int bna = a->ndim - 2, bnb = b->ndim - 2, bn = bna > bnb ? bna : bnb;
  int64_t bshape[AL_MAXDIM], sta[AL_MAXDIM], stb[AL_MAXDIM];
  for (int i = 0; i < bn; i++) {
    int ia = i - (bn - bna), ib = i - (bn - bnb);
    int64_t xa = ia >= 0 ? a->shape[ia] : 1, xb = ib >= 0 ? b->shape[ib] : 1;
    if (xa != xb && xa != 1 && xb != 1) {
      st = al_seterr(AL_EINVAL, "matmul: batch dims of %s and %s do not broadcast", al_shape_str(a0, s1, sizeof s1), al_shape_str(b0, s2, sizeof s2));
      al_tensor_release(a); al_tensor_release(b);
      return st;
    }
    bshape[i] = xa > xb ? xa : xb;
  }
  /* operands sgemm can take as they are, else contiguous copies */
  al_tensor *ac = NULL, *bc = NULL;
  int ta, tb;
  int64_t lda, ldb;
  if (mat_layout(a, &ta, &lda)) ac = al_tensor_retain(a);
  else { st = al_contiguous_ref(&ac, a); ta = 0; lda = K; }
  if (!st) {
    if (mat_layout(b, &tb, &ldb)) bc = al_tensor_retain(b);
    else { st = al_contiguous_ref(&bc, b); tb = 0; ldb = N; }
  }
  if (st) { al_tensor_release(ac); al_tensor_release(a); al_tensor_release(b); return st; }
  for (int i = 0; i < bn; i++) {
    int ia = i - (bn - bna), ib = i - (bn - bnb);
    sta[i] = (ia >= 0 && ac->shape[ia] != 1) ? ac->stride[ia] : 0;
    stb[i] = (ib >= 0 && bc->shape[ib] != 1) ? bc->stride[ib] : 0;
  }
  int64_t oshape[AL_MAXDIM];
  memcpy(oshape, bshape, sizeof(int64_t) * (size_t)bn);
  oshape[bn] = M;
  oshape[bn + 1] = N;
  al_tensor *o = al_tensor_new(AL_F32, bn + 2, oshape);
  if (!o) { st = AL_ENOMEM; goto done; }
  int64_t nb = 1;
  for (int i = 0; i < bn; i++) nb *= bshape[i];
  const float *pa = al_f32(ac), *pb = al_f32(bc);
  float *po = al_f32(o);
  /* fold the batch into M when b is shared and a's batch rows are evenly spaced */
  int fold = nb > 1 && !ta && bn > 0;
  for (int i = 0; i < bn && fold; i++) {
    if (stb[i] != 0) fold = 0;
    int64_t inner = M * lda;
    for (int j = i + 1; j < bn; j++) inner *= bshape[j];
    if (sta[i] != inner && bshape[i] != 1) fold = 0;
  }
  if (fold) {
    al_sgemm(0, tb, nb * M, N, K, 1.0f, pa, lda, pb, ldb, 0.0f, po, N);
  } else {
    /* small per-batch GEMMs: split the batch across threads (al_sgemm stays on one
     * thread inside the region); large ones split their own panels in al_sgemm */
    int64_t flops = nb * M * N * K;
    int par = nb >= 4 && flops < (int64_t)64 * 64 * 64 * nb * 4 && al_get_num_threads() > 1;
    #pragma omp parallel for if (par) schedule(static)
    for (int64_t bi = 0; bi < nb; bi++) {
      int64_t oa = 0, ob = 0, rem = bi;
      for (int d = bn - 1; d >= 0; d--) {
        int64_t id = rem % bshape[d];
        rem /= bshape[d];
        oa += id * sta[d];
        ob += id * stb[d];
      }
      al_sgemm(ta, tb, M, N, K, 1.0f, pa + oa, lda, pb + ob, ldb, 0.0f, po + bi * M * N, N);
    }
  }
  if (drop_m || drop_n) {   /* drop the dims the 1-D operands gained (a view, not a node) */
    al_tensor *r = NULL;
    int64_t rs[AL_MAXDIM];
    int rn = 0;
    for (int i = 0; i < bn; i++) rs[rn++] = bshape[i];
    if (!drop_m) rs[rn++] = M;
    if (!drop_n) rs[rn++] = N;
    st = al_reshape(&r, o, rn, rs);   /* o records nothing yet */
    al_tensor_release(o);
    o = r;
    if (st) goto done;
  }
  {
    al_tensor *ins[2] = {a0, b0};
    al_node *n = al_node_new("matmul", matmul_bwd, 2, ins, &st);
    if (st) { al_tensor_release(o); o = NULL; goto done; }
    if (n) {
      n->k[0] = drop_m;
      n->k[1] = drop_n;
      al_node_save(n, a);
      al_node_save(n, b);
      al_node_attach(n, o);
    }
  }
done:
  al_tensor_release(ac); al_tensor_release(bc); al_tensor_release(a); al_tensor_release(b);
  if (!st) *out = o;
  return st;
}

/* ---- linear ----------------------------------------------------------------- */
/* y (R,OUT) = x (R,IN) W^T (OUT,IN) + b. Backward: gx = g W; gW = g^T x; gb = sum_r g. */
static al_status linear_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  al_tensor *x = n->saved[0], *w = n->saved[1];
  int64_t R = n->k[0], IN = n->k[1], OUT = n->k[2];
  al_tensor *gc = NULL;
  AL_TRY(al_contiguous_ref(&gc, g));
  const float *pg = al_f32(gc);
  if (n->in[0].needs) {
    al_tensor *gx = al_tensor_new(AL_F32, n->in[0].ndim, n->in[0].shape);
    if (!gx) { al_tensor_release(gc); return AL_ENOMEM; }
    al_sgemm(0, 0, R, IN, OUT, 1.0f, pg, OUT, al_f32(w), IN, 0.0f, al_f32(gx), IN);
    gin[0] = gx;
  }
  if (n->in[1].needs) {
    al_tensor *gw = al_tensor_new(AL_F32, 2, w->shape);
    if (!gw) { al_tensor_release(gc); return AL_ENOMEM; }
    al_sgemm(1, 0, OUT, IN, R, 1.0f, pg, OUT, al_f32(x), IN, 0.0f, al_f32(gw), IN);
    gin[1] = gw;
  }
  if (n->ninputs > 2 && n->in[2].needs) {
    al_tensor *gb = al_tensor_new(AL_F32, 1, &OUT);
    if (!gb) { al_tensor_release(gc); return AL_ENOMEM; }
    float *pb = al_f32(gb);
    double *acc = calloc((size_t)OUT, sizeof *acc);
    if (!acc) { al_tensor_release(gb); al_tensor_release(gc); return al_seterr(AL_ENOMEM, "linear: out of memory"); }
    /* in double, four rows per pass over acc (a quarter of the accumulator traffic);
     * threads take column panels, so each column is summed in the same order whatever
     * the thread count */
    /* OUT = 0 (a weight (0,IN)): no panels (the division by a panel of 0 columns was SIGFPE) */
    int64_t cp = OUT >= 32 ? (OUT / 2 + 15) / 16 * 16 : OUT, ncp = cp ? (OUT + cp - 1) / cp : 0;
    #pragma omp parallel for if (R * OUT >= AL_PAR_MIN_WORK && ncp > 1) schedule(static)
    for (int64_t c = 0; c < ncp; c++) {
      int64_t j0 = c * cp, j1 = j0 + cp < OUT ? j0 + cp : OUT, r = 0;
      for (; r + 4 <= R; r += 4) {
        const float *r0 = pg + r * OUT, *r1 = r0 + OUT, *r2 = r1 + OUT, *r3 = r2 + OUT;
        for (int64_t j = j0; j < j1; j++) acc[j] += ((double)r0[j] + r1[j]) + ((double)r2[j] + r3[j]);
      }
      for (; r < R; r++) {
        const float *row = pg + r * OUT;
        for (int64_t j = j0; j < j1; j++) acc[j] += row[j];
      }
    }
    for (int64_t j = 0; j < OUT; j++) pb[j] = (float)acc[j];
    free(acc);
    gin[2] = gb;
  }
  al_tensor_release(gc);
  return AL_OK;
}

al_status al_linear(al_tensor **out, al_tensor *x, al_tensor *w, al_tensor *b) {
  AL_NEED(out, "linear", "out"); AL_NEED(x, "linear", "input"); AL_NEED(w, "linear", "weight");
  char s1[128], s2[128], s3[128];
  if (x->dtype != AL_F32 || w->dtype != AL_F32 || (b && b->dtype != AL_F32)) {
    if (b && b->dtype != AL_F32)
      return al_seterr(AL_EINVAL, "linear: expected float32 tensors, got input %s, weight %s, bias %s", al_shape_str(x, s1, sizeof s1), al_shape_str(w, s2, sizeof s2), al_shape_str(b, s3, sizeof s3));
    return al_seterr(AL_EINVAL, "linear: expected float32 tensors, got input %s, weight %s", al_shape_str(x, s1, sizeof s1), al_shape_str(w, s2, sizeof s2));
  }
  /* a weight of another rank: said "want input (..., -1)" */
  if (w->ndim != 2)
    return al_seterr(AL_EINVAL, "linear: weight must be (out, in), got %s", al_shape_str(w, s2, sizeof s2));
  if (x->ndim < 1 || x->shape[x->ndim - 1] != w->shape[1])
    return al_seterr(AL_EINVAL, "linear: input %s does not match weight %s (want input (..., %lld))", al_shape_str(x, s1, sizeof s1), al_shape_str(w, s2, sizeof s2), (long long)w->shape[1]);
  if (b && (b->ndim != 1 || b->shape[0] != w->shape[0]))
    return al_seterr(AL_EINVAL, "linear: bias %s does not match weight %s (want (%lld))", al_shape_str(b, s3, sizeof s3), al_shape_str(w, s2, sizeof s2), (long long)w->shape[0]);
  /* R: the rows, the product of x's leading dims. numel / IN took an IN of 0 for 1 and gave 0
   * rows: an (R,OUT) output of uninitialised memory instead of the bias, and a bias gradient of
   * 0 instead of R */
  int64_t IN = w->shape[1], OUT = w->shape[0], R = 1;
  for (int i = 0; i < x->ndim - 1; i++) R *= x->shape[i];
  al_tensor *xc = NULL, *wc = NULL, *bc = NULL;
  al_status st = al_contiguous_ref(&xc, x);
  if (!st) st = al_contiguous_ref(&wc, w);
  if (!st && b) st = al_contiguous_ref(&bc, b);
  if (st) { al_tensor_release(xc); al_tensor_release(wc); return st; }
  int64_t oshape[AL_MAXDIM];
  memcpy(oshape, x->shape, sizeof oshape);
  oshape[x->ndim - 1] = OUT;
  al_tensor *o = al_tensor_new(AL_F32, x->ndim, oshape);
  if (!o) { st = AL_ENOMEM; goto done; }
  float *po = al_f32(o);
  /* the bias goes in as each output element's chain ends (al_sgemm_bias), not as a first
   * pass writing it into every row for the product to read back: that pass moved as many
   * bytes as the product's output */
  al_sgemm_bias(0, 1, R, OUT, IN, 1.0f, al_f32(xc), IN, al_f32(wc), IN, bc ? al_f32(bc) : NULL, po, OUT);
  {
    al_tensor *ins[3] = {x, w, b};
    al_node *n = al_node_new("linear", linear_bwd, b ? 3 : 2, ins, &st);
    if (st) { al_tensor_release(o); goto done; }
    if (n) {
      n->k[0] = R; n->k[1] = IN; n->k[2] = OUT;
      al_node_save(n, xc);
      al_node_save(n, wc);
      al_node_attach(n, o);
    }
  }
  *out = o;
done:
  al_tensor_release(xc); al_tensor_release(wc); al_tensor_release(bc);
  return st;
}
