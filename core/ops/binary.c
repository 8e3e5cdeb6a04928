/* core/ops/binary.c -- broadcasting binary ops (arithmetic, maximum/minimum, comparisons)
 * and where, each with its backward; the broadcast rule the other ops share
 * (al_broadcast_shape_, core/ops/internal.h). One-operand math is in core/ops/unary.c.
 *
 * Iteration: the output is contiguous; operand strides are laid onto its shape
 * (0 along broadcast dims), adjacent dims that are contiguous in every operand are
 * merged, and the innermost dim runs a tight loop specialised for strides 1/0 so
 * GCC vectorizes it. Outer rows split across OpenMP threads for large outputs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/ops.h"
#include "attnlab/threads.h"
#include "internal.h"

/* ---- broadcast geometry ---------------------------------------------------- */
typedef struct {
  int ndim;                    /* after merging */
  int64_t shape[AL_MAXDIM];
  int64_t st[3][AL_MAXDIM];    /* out, a, b strides (elements) */
} bgeom;

al_status al_broadcast_shape_(int *ndim, int64_t *shape, const al_tensor *a, const al_tensor *b, const char *op) {
  int n = a->ndim > b->ndim ? a->ndim : b->ndim;
  for (int i = 0; i < n; i++) {
    int ia = i - (n - a->ndim), ib = i - (n - b->ndim);
    int64_t sa = ia >= 0 ? a->shape[ia] : 1, sb = ib >= 0 ? b->shape[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      char x[128], y[128];
      return al_seterr(AL_EINVAL, "%s: shapes %s and %s do not broadcast (dim %d: %lld vs %lld)", op,
                       al_shape_str(a, x, sizeof x), al_shape_str(b, y, sizeof y), i + 1, (long long)sa, (long long)sb);
    }
    shape[i] = sa == 1 ? sb : sa;
  }
  *ndim = n;
  return AL_OK;
}

static void lay_strides(int64_t *st, const al_tensor *t, int ndim, const int64_t *shape) {
  for (int i = 0; i < ndim; i++) {
    int it = i - (ndim - t->ndim);
    st[i] = (it >= 0 && t->shape[it] == shape[i] && shape[i] != 1) ? t->stride[it] : 0;
  }
}

/* Merge dims i, i+1 when every operand walks them as one run. */
static void bgeom_build(bgeom *g, int nops, const al_tensor *out, const al_tensor *a, const al_tensor *b) {
  int nd = out->ndim;
  int64_t st[3][AL_MAXDIM];
  lay_strides(st[0], out, nd, out->shape);
  if (a) lay_strides(st[1], a, nd, out->shape);
  if (b) lay_strides(st[2], b, nd, out->shape);
  int m = 0;
  for (int i = 0; i < nd; i++) {
    if (out->shape[i] == 1) continue;    /* size-1 dims vanish */
    if (m > 0) {
      int ok = 1;
      for (int o = 0; o < nops; o++)
        if (g->st[o][m - 1] != st[o][i] * out->shape[i]) ok = 0;
      if (ok) {
        g->shape[m - 1] *= out->shape[i];
        for (int o = 0; o < nops; o++) g->st[o][m - 1] = st[o][i];
        continue;
      }
    }
    g->shape[m] = out->shape[i];
    for (int o = 0; o < nops; o++) g->st[o][m] = st[o][i];
    m++;
  }
  if (m == 0) {   /* a one-element output: one row of length 1 (output stride 1, so the
                     * specialised inner loops apply) */
    g->shape[0] = 1;
    for (int o = 0; o < 3; o++) g->st[o][0] = 0;
    g->st[0][0] = 1;
    m = 1;
  }
  g->ndim = m;
}

/* Offsets of the start of outer row r (all dims but the last). */
static void row_offsets(const bgeom *g, int nops, int64_t r, int64_t *off) {
  for (int o = 0; o < nops; o++) off[o] = 0;
  for (int d = g->ndim - 2; d >= 0; d--) {
    int64_t i = r % g->shape[d];
    r /= g->shape[d];
    for (int o = 0; o < nops; o++) off[o] += i * g->st[o][d];
  }
}

/* ---- binary ----------------------------------------------------------------- */
/* elements per piece when al_binary cuts a long row (a multiple of every vector width) */
#define BIN_PIECE 8192
#define BIN_INNER(EXPR)                                                              \
  do {                                                                               \
    if (sa == 1 && sb == 1) { for (int64_t i = 0; i < n; i++) { float x = pa[i], y = pb[i]; po[i] = (EXPR); } } \
    else if (sa == 1 && sb == 0) { float y = pb[0]; for (int64_t i = 0; i < n; i++) { float x = pa[i]; po[i] = (EXPR); } } \
    else if (sa == 0 && sb == 1) { float x = pa[0]; for (int64_t i = 0; i < n; i++) { float y = pb[i]; po[i] = (EXPR); } } \
    else { for (int64_t i = 0; i < n; i++) { float x = pa[i * sa], y = pb[i * sb]; po[i * so] = (EXPR); } } \
  } while (0)

static inline float binop_apply(al_binop op, float x, float y) {
  switch (op) {
    case AL_ADD: return x + y;
    case AL_SUB: return x - y;
    case AL_MUL: return x * y;
    case AL_DIV: return x / y;
    case AL_MAXIMUM: return (x != x || y != y) ? NAN : (x > y ? x : y);
    case AL_MINIMUM: return (x != x || y != y) ? NAN : (x < y ? x : y);
    case AL_GT: return x > y ? 1.0f : 0.0f;
    case AL_GE: return x >= y ? 1.0f : 0.0f;
    case AL_LT: return x < y ? 1.0f : 0.0f;
    case AL_LE: return x <= y ? 1.0f : 0.0f;
    case AL_EQ: return x == y ? 1.0f : 0.0f;
    case AL_NE: return x != y ? 1.0f : 0.0f;
  }
  return NAN;
}

static void bin_inner(al_binop op, float *po, int64_t so, const float *pa, int64_t sa, const float *pb,
                      int64_t sb, int64_t n) {
  if (so != 1) {   /* generic strided output (the output is contiguous: not reached today) */
    for (int64_t i = 0; i < n; i++) po[i * so] = binop_apply(op, pa[i * sa], pb[i * sb]);
    return;
  }
  switch (op) {
    case AL_ADD: BIN_INNER(x + y); break;
    case AL_SUB: BIN_INNER(x - y); break;
    case AL_MUL: BIN_INNER(x * y); break;
    case AL_DIV: BIN_INNER(x / y); break;
    case AL_MAXIMUM: BIN_INNER((x != x || y != y) ? NAN : (x > y ? x : y)); break;
    case AL_MINIMUM: BIN_INNER((x != x || y != y) ? NAN : (x < y ? x : y)); break;
    case AL_GT: BIN_INNER(x > y ? 1.0f : 0.0f); break;
    case AL_GE: BIN_INNER(x >= y ? 1.0f : 0.0f); break;
    case AL_LT: BIN_INNER(x < y ? 1.0f : 0.0f); break;
    case AL_LE: BIN_INNER(x <= y ? 1.0f : 0.0f); break;
    case AL_EQ: BIN_INNER(x == y ? 1.0f : 0.0f); break;
    case AL_NE: BIN_INNER(x != y ? 1.0f : 0.0f); break;
  }
}

/* int64 binary ops (labels, ids): exact integer arithmetic for + - * maximum minimum;
 * comparisons give float 0/1. Division is true division (as PyTorch): see al_binary. */
static al_status binary_i64(al_tensor **out, al_binop op, al_tensor *a, al_tensor *b, int ndim, const int64_t *shape) {
  int cmp = op >= AL_GT;
  al_tensor *o = al_tensor_new(cmp ? AL_F32 : AL_I64, ndim, shape);
  if (!o) return AL_ENOMEM;
  int64_t sa[AL_MAXDIM], sb[AL_MAXDIM], idx[AL_MAXDIM] = {0};
  lay_strides(sa, a, ndim, shape);
  lay_strides(sb, b, ndim, shape);
  int64_t n = al_numel(o);
  const int64_t *pa = al_i64(a), *pb = al_i64(b);
  for (int64_t k = 0; k < n; k++) {
    int64_t oa = 0, ob = 0;
    for (int d = 0; d < ndim; d++) { oa += idx[d] * sa[d]; ob += idx[d] * sb[d]; }
    int64_t x = pa[oa], y = pb[ob], r = 0;
    switch (op) {
      /* wrap around on overflow like PyTorch (unsigned arithmetic: no UB) */
      case AL_ADD: r = (int64_t)((uint64_t)x + (uint64_t)y); break;
      case AL_SUB: r = (int64_t)((uint64_t)x - (uint64_t)y); break;
      case AL_MUL: r = (int64_t)((uint64_t)x * (uint64_t)y); break;
      case AL_DIV: break;   /* never here: int64 / int64 is true division in float32 */
      case AL_MAXIMUM: r = x > y ? x : y; break; case AL_MINIMUM: r = x < y ? x : y; break;
      case AL_GT: r = x > y; break; case AL_GE: r = x >= y; break; case AL_LT: r = x < y; break;
      case AL_LE: r = x <= y; break; case AL_EQ: r = x == y; break; case AL_NE: r = x != y; break;
    }
    if (cmp) al_f32(o)[k] = (float)r; else al_i64(o)[k] = r;
    for (int d = ndim - 1; d >= 0; d--) { if (++idx[d] < shape[d]) break; idx[d] = 0; }
  }
  *out = o;
  return AL_OK;
}

static const char *binop_name(al_binop op) {
  static const char *names[] = {"add", "sub", "mul", "div", "maximum", "minimum", "gt", "ge", "lt", "le", "eq", "ne"};
  return names[op];
}

static al_status binary_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  al_binop op = (al_binop)n->k[0];
  al_tensor *a = n->saved[0], *b = n->saved[1];
  al_status st = AL_OK;
  for (int i = 0; i < 2 && !st; i++) {
    if (!n->in[i].needs) continue;
    al_tensor *t = NULL, *t2 = NULL;
    switch (op) {
      case AL_ADD: t = al_tensor_retain(g); break;
      case AL_SUB: if (i == 0) t = al_tensor_retain(g); else st = al_affine(&t, g, -1, 0); break;
      case AL_MUL: st = al_mul(&t, g, i == 0 ? b : a); break;
      case AL_DIV:
        if (i == 0) st = al_div(&t, g, b);
        else {  /* d(a/b)/db = -a/b^2 */
          st = al_mul(&t2, g, a);
          if (!st) { al_tensor *b2 = NULL; st = al_mul(&b2, b, b); if (!st) st = al_div(&t, t2, b2); al_tensor_release(b2); }
          if (!st) { al_tensor *t3 = NULL; st = al_affine(&t3, t, -1, 0); al_tensor_release(t); t = t3; }
        }
        break;
      case AL_MAXIMUM: case AL_MINIMUM: {
        /* As PyTorch: the selected operand takes g, a tie (a == b) gives each operand g/2, and
         * where a or b is NaN both take g. The operand that lost gets an exact 0 (a select, not
         * g * 0, which is NaN where g is inf or NaN). */
        al_binop lost = (op == AL_MAXIMUM) ? (i == 0 ? AL_LT : AL_GT) : (i == 0 ? AL_GT : AL_LT);
        al_tensor *l = NULL, *e = NULL, *w = NULL, *gw = NULL;
        al_tensor *zero = al_tensor_zeros(AL_F32, 0, NULL);
        st = zero ? al_binary(&l, lost, a, b) : AL_ENOMEM;
        if (!st) st = al_binary(&e, AL_EQ, a, b);
        if (!st) st = al_affine(&w, e, -0.5, 1);       /* 0.5 at a tie, else 1 */
        if (!st) st = al_mul(&gw, g, w);
        if (!st) st = al_where(&t, l, zero, gw);
        al_tensor_release(l); al_tensor_release(e); al_tensor_release(w); al_tensor_release(gw);
        al_tensor_release(zero);
        break;
      }
      default: break;
    }
    al_tensor_release(t2);
    if (!st && t) st = al_sum_to_shape(&gin[i], t, n->in[i].ndim, n->in[i].shape);
    al_tensor_release(t);
  }
  return st;
}

al_status al_binary(al_tensor **out, al_binop op, al_tensor *a, al_tensor *b) {
  if ((unsigned)op > (unsigned)AL_NE) return al_seterr(AL_EINVAL, "binary: unknown op %d", (int)op);
  AL_NEED(out, binop_name(op), "out"); AL_NEED(a, binop_name(op), "a"); AL_NEED(b, binop_name(op), "b");
  int ndim;
  int64_t shape[AL_MAXDIM];
  al_status st = al_broadcast_shape_(&ndim, shape, a, b, binop_name(op));
  if (st) return st;
  if (a->dtype == AL_I64 && b->dtype == AL_I64 && op != AL_DIV) return binary_i64(out, op, a, b, ndim, shape);
  al_tensor *fa = NULL, *fb = NULL;
  if (a->dtype != AL_F32) { st = al_to_dtype(&fa, a, AL_F32); if (st) return st; a = fa; }
  if (b->dtype != AL_F32) { st = al_to_dtype(&fb, b, AL_F32); if (st) { al_tensor_release(fa); return st; } b = fb; }
  al_tensor *o = al_tensor_new(AL_F32, ndim, shape);
  if (!o) { al_tensor_release(fa); al_tensor_release(fb); return AL_ENOMEM; }
  bgeom g;
  bgeom_build(&g, 3, o, a, b);
  int64_t inner = g.shape[g.ndim - 1], rows = al_numel(o) / (inner ? inner : 1);
  float *po = al_f32(o);
  const float *pa = al_f32(a), *pb = al_f32(b);
  if (inner > 0) {
    /* Few long rows (a same-shape add, such as a residual, merges into one row) are cut into
     * pieces of BIN_PIECE elements, so they split across threads too. Elementwise: the cut
     * changes no result. */
    int64_t cuts = rows >= 8 ? 1 : (inner + BIN_PIECE - 1) / BIN_PIECE, pieces = rows * cuts;
    int64_t so = g.st[0][g.ndim - 1], sa = g.st[1][g.ndim - 1], sb = g.st[2][g.ndim - 1];
    #pragma omp parallel for if (rows * inner >= AL_PAR_MIN_WORK && pieces > 1) schedule(static)
    for (int64_t p = 0; p < pieces; p++) {
      int64_t off[3], r = p / cuts, i0 = p % cuts * BIN_PIECE;
      int64_t len = cuts == 1 ? inner : (inner - i0 < BIN_PIECE ? inner - i0 : BIN_PIECE);
      row_offsets(&g, 3, r, off);
      bin_inner(op, po + off[0] + i0 * so, so, pa + off[1] + i0 * sa, sa, pb + off[2] + i0 * sb, sb, len);
    }
  }
  if (op < AL_GT) {
    al_tensor *ins[2] = {a, b};
    al_node *n = al_node_new(binop_name(op), binary_bwd, 2, ins, &st);
    if (st) { al_tensor_release(o); al_tensor_release(fa); al_tensor_release(fb); return st; }
    if (n) {
      n->k[0] = op;
      if (op != AL_ADD && op != AL_SUB) { al_node_save(n, a); al_node_save(n, b); }
      al_node_attach(n, o);
    }
  }
  al_tensor_release(fa);
  al_tensor_release(fb);
  *out = o;
  return AL_OK;
}

al_status al_add(al_tensor **out, al_tensor *a, al_tensor *b) { return al_binary(out, AL_ADD, a, b); }
al_status al_sub(al_tensor **out, al_tensor *a, al_tensor *b) { return al_binary(out, AL_SUB, a, b); }
al_status al_mul(al_tensor **out, al_tensor *a, al_tensor *b) { return al_binary(out, AL_MUL, a, b); }
al_status al_div(al_tensor **out, al_tensor *a, al_tensor *b) { return al_binary(out, AL_DIV, a, b); }

/* ---- where ------------------------------------------------------------------ */
/* g to a where cond holds, to b elsewhere, and an exact 0 to the other (as PyTorch): g * c
 * made it NaN where g was inf or NaN, and so al.where(m, x, 0) under a sqrt, whose gradient
 * is inf at the 0, gave x a NaN gradient at every position m dropped. */
static al_status where_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  al_tensor *c = n->saved[0];   /* float 0/1 with the output's shape, contiguous */
  al_tensor *gc = NULL;
  AL_TRY(al_contiguous_ref(&gc, g));
  al_status st = AL_OK;
  const float *pc = al_f32(c), *pg = al_f32(gc);
  const int64_t cnt = al_numel(c);
  for (int i = 0; i < 2 && !st; i++) {
    if (!n->in[i + 1].needs) continue;
    al_tensor *t = al_tensor_new(AL_F32, c->ndim, c->shape);
    if (!t) { st = AL_ENOMEM; break; }
    float *pt = al_f32(t);
    const float keep = i == 0 ? 1.0f : 0.0f;   /* the value of c where this operand was taken */
    for (int64_t k = 0; k < cnt; k++) pt[k] = pc[k] == keep ? pg[k] : 0.0f;
    st = al_sum_to_shape(&gin[i + 1], t, n->in[i + 1].ndim, n->in[i + 1].shape);
    al_tensor_release(t);
  }
  al_tensor_release(gc);
  return st;
}

al_status al_where(al_tensor **out, al_tensor *cond, al_tensor *a, al_tensor *b) {
  AL_NEED(out, "where", "out"); AL_NEED(cond, "where", "cond"); AL_NEED(a, "where", "a"); AL_NEED(b, "where", "b");
  int nd1, nd;
  int64_t s1[AL_MAXDIM], shape[AL_MAXDIM];
  al_status st = al_broadcast_shape_(&nd1, s1, a, b, "where");
  if (st) return st;
  al_tensor tmp = *a;   /* geometry-only stand-in for the broadcast of a and b */
  tmp.ndim = nd1;
  memcpy(tmp.shape, s1, sizeof s1);
  st = al_broadcast_shape_(&nd, shape, cond, &tmp, "where");
  if (st) return st;
  /* cond as float 0/1 expanded to the output shape, mapped in a tensor of its own: al_to_dtype
   * hands back cond itself when it is contiguous float32, and mapping that one to 0/1 wrote
   * into the caller's tensor (al.where(c, a, b) and x:masked_fill(mask, v) changed c and mask) */
  al_tensor *cf = NULL, *ones = NULL, *cb = NULL;
  st = al_to_dtype(&cf, cond, AL_F32);
  if (st) return st;
  ones = al_tensor_new(AL_F32, nd, shape);
  if (!ones) { al_tensor_release(cf); return AL_ENOMEM; }
  al_fill(ones, 1.0);
  int was_c = al_grad_enabled();
  al_set_grad_enabled(0);
  st = al_mul(&cb, ones, cf);   /* materialise cond at the output shape: 1*v is v, exactly */
  al_set_grad_enabled(was_c);
  al_tensor_release(ones);
  al_tensor_release(cf);
  if (st) return st;
  float *pc = al_f32(cb);
  int64_t nc = al_numel(cb);
  for (int64_t i = 0; i < nc; i++) pc[i] = pc[i] != 0 ? 1.0f : 0.0f;
  /* out = b + c * (a - b) would turn inf*0 into NaN: select elementwise instead. a and b are
   * broadcast by adding them to zeros of the output's dtype: int64 when both are (exactly, as in
   * PyTorch; through float32 an id above 2^24 was rounded), else float32. */
  const al_dtype dt = a->dtype == AL_I64 && b->dtype == AL_I64 ? AL_I64 : AL_F32;
  al_tensor *ab = NULL, *bb = NULL;
  al_tensor *o = al_tensor_new(dt, nd, shape);
  if (!o) { al_tensor_release(cb); return AL_ENOMEM; }
  int was = al_grad_enabled();
  al_set_grad_enabled(0);
  al_tensor *z = al_tensor_zeros(dt, nd, shape);
  st = z ? al_add(&ab, z, a) : AL_ENOMEM;
  if (!st) st = al_add(&bb, z, b);
  al_set_grad_enabled(was);
  al_tensor_release(z);
  if (st) { al_tensor_release(o); al_tensor_release(cb); al_tensor_release(ab); al_tensor_release(bb); return st; }
  int64_t n = al_numel(o);
  const float *c = al_f32(cb);
  if (dt == AL_I64) {
    const int64_t *pa = al_i64(ab), *pb = al_i64(bb);
    int64_t *po = al_i64(o);
    for (int64_t i = 0; i < n; i++) po[i] = c[i] != 0 ? pa[i] : pb[i];
  } else {
    const float *pa = al_f32(ab), *pb = al_f32(bb);
    float *po = al_f32(o);
    for (int64_t i = 0; i < n; i++) po[i] = c[i] != 0 ? pa[i] : pb[i];
  }
  al_tensor_release(ab);
  al_tensor_release(bb);
  /* (no node for two int64 operands: none of them requires grad) */
  al_tensor *ins[3] = {cond, a, b};
  al_node *node = al_node_new("where", where_bwd, 3, ins, &st);
  if (st) { al_tensor_release(o); al_tensor_release(cb); return st; }
  if (node) { al_node_save(node, cb); al_node_attach(node, o); }
  al_tensor_release(cb);
  *out = o;
  return AL_OK;
}
