/* core/ops/elementwise.c -- broadcasting binary ops, unary math, scalar affine,
 * pow, clamp, where, dtype conversion; each with its backward.
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
#include "../simd/fastmath.h"

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
        /* gradient goes to the selected operand; ties go to a */
        al_binop sel = (op == AL_MAXIMUM) ? (i == 0 ? AL_GE : AL_LT) : (i == 0 ? AL_LE : AL_GT);
        st = al_binary(&t2, sel, a, b);
        if (!st) st = al_mul(&t, g, t2);
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
    #pragma omp parallel for if (rows * inner >= AL_PAR_MIN_WORK && rows > 1) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
      int64_t off[3];
      row_offsets(&g, 3, r, off);
      bin_inner(op, po + off[0], g.st[0][g.ndim - 1], pa + off[1], g.st[1][g.ndim - 1], pb + off[2],
                g.st[2][g.ndim - 1], inner);
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

/* ---- unary ------------------------------------------------------------------ */
static const char *unop_names[AL_UNARY_COUNT] = {
  "neg", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "gelu", "silu", "softplus", "abs", "sin",
  "cos", "rsqrt", "log1p", "sign", "floor", "round", "erf"};
const char *al_unop_name(al_unop op) { return op < AL_UNARY_COUNT ? unop_names[op] : "?"; }

static inline float softplusf_(float x) { return x > 20.0f ? x : log1pf(expf(x)); }

/* The exact GELU x Phi(x) in float only. Phi(x) = erfc(-x/sqrt2)/2 through simd/fastmath.h's
 * erfc fit, erfc(a) = t exp(c - a^2), t = 1/(1 + a/2), c = t P(t) - 1.26551223, a = |x|/sqrt2:
 * erfc/2 for x < 0 (no cancellation in the left tail), 1 - erfc/2 beyond. al_fphi forms
 * c - a^2 in double because a^2 (up to ~200) rounded to float would put a 1e-5 relative
 * error into the exponential; that halves the SIMD width and made GELU the costliest
 * elementwise pass of the ViT. Here a^2 = x^2/2 is split exactly with an fma (hi + lo) and
 * c - hi is a TwoSum (s + err, exact), so exp(c - a^2) = exp(s) (1 + err - lo) to float
 * precision with one float exp. |x| is clamped at 20, where Phi is 0 or 1 in float.
 * Relative error of Phi within the fit's 1.2e-7 plus a few ulp (test_ops_grad.lua checks
 * against a double reference). NaN propagates; -ffp-contract is off in C11 mode, so the
 * TwoSum is not contracted away.
 *
 * It runs in three passes over blocks of GELU_BLOCK elements (the division;
 * the erfc polynomial and the exact exponent split; exp and the result). One element is a
 * chain of ~60 dependent operations: as one loop, the vectorized body filled the
 * out-of-order window and ran latency-bound. Split, each pass is short and its vector
 * iterations are independent, so they overlap (faster, with the same arithmetic and results).
 * tests/lua/test_ops_grad.lua checks it against a double reference. */
#define GELU_BLOCK 128
static void gelu_fwd_array(float *o, const float *x, int64_t n) {
  float tb[GELU_BLOCK], sb[GELU_BLOCK], cb[GELU_BLOCK];
  for (int64_t i0 = 0; i0 < n; i0 += GELU_BLOCK) {
    int m = n - i0 < GELU_BLOCK ? (int)(n - i0) : GELU_BLOCK;
    const float *xb = x + i0;
    for (int j = 0; j < m; j++) {
      float ax = fabsf(xb[j]);
      ax = ax < 20.0f ? ax : 20.0f;
      tb[j] = 1.0f / (1.0f + 0.5f * (ax * 0.70710678118654752f));
    }
    for (int j = 0; j < m; j++) {
      float ax = fabsf(xb[j]);
      ax = ax < 20.0f ? ax : 20.0f;
      float c = al_erfcc_poly(tb[j]);
      float hi = ax * ax, lo = fmaf(ax, ax, -hi);
      float h2 = 0.5f * hi, l2 = 0.5f * lo;
      float s = c - h2, bb = s - c;
      float err = (c - (s - bb)) + (-h2 - bb);
      sb[j] = s;
      cb[j] = err - l2;
    }
    for (int j = 0; j < m; j++) {
      float xj = xb[j], e = al_fexp(sb[j]);
      float half_ec = 0.5f * tb[j] * (e + e * cb[j]);
      float one_minus = 1.0f - half_ec;
      float phi = xj < 0 ? half_ec : one_minus;
      float y = xj * phi;
      o[i0 + j] = xj != xj ? xj : y;
    }
  }
}

static void unary_fwd(al_unop op, float *o, const float *x, int64_t n) {
  switch (op) {
    case AL_NEG: for (int64_t i = 0; i < n; i++) o[i] = -x[i]; break;
    case AL_EXP: for (int64_t i = 0; i < n; i++) o[i] = al_fexp(x[i]); break;
    case AL_LOG: for (int64_t i = 0; i < n; i++) o[i] = logf(x[i]); break;
    case AL_SQRT: for (int64_t i = 0; i < n; i++) o[i] = sqrtf(x[i]); break;
    case AL_TANH: for (int64_t i = 0; i < n; i++) o[i] = tanhf(x[i]); break;
    case AL_SIGMOID: for (int64_t i = 0; i < n; i++) o[i] = al_fsigmoid(x[i]); break;
    case AL_RELU: for (int64_t i = 0; i < n; i++) o[i] = x[i] > 0 ? x[i] : (x[i] != x[i] ? x[i] : 0.0f); break;
    case AL_GELU: gelu_fwd_array(o, x, n); break;   /* exact (erf) GELU */
    case AL_SILU: for (int64_t i = 0; i < n; i++) o[i] = x[i] * al_fsigmoid(x[i]); break;
    case AL_SOFTPLUS: for (int64_t i = 0; i < n; i++) o[i] = softplusf_(x[i]); break;
    case AL_ABS: for (int64_t i = 0; i < n; i++) o[i] = fabsf(x[i]); break;
    case AL_SIN: for (int64_t i = 0; i < n; i++) o[i] = sinf(x[i]); break;
    case AL_COS: for (int64_t i = 0; i < n; i++) o[i] = cosf(x[i]); break;
    case AL_RSQRT: for (int64_t i = 0; i < n; i++) o[i] = 1.0f / sqrtf(x[i]); break;
    case AL_LOG1P: for (int64_t i = 0; i < n; i++) o[i] = log1pf(x[i]); break;
    case AL_SIGN: for (int64_t i = 0; i < n; i++) o[i] = x[i] > 0 ? 1.0f : (x[i] < 0 ? -1.0f : x[i]); break;
    case AL_FLOOR: for (int64_t i = 0; i < n; i++) o[i] = floorf(x[i]); break;
    case AL_ROUND: for (int64_t i = 0; i < n; i++) o[i] = nearbyintf(x[i]); break;
    case AL_ERF: for (int64_t i = 0; i < n; i++) o[i] = erff(x[i]); break;   /* libm: ~1 ulp */
    default: break;
  }
}

/* gin = g * f'(x), from x and/or y = f(x) (both contiguous, n elements). */
static void unary_bwd_kernel(al_unop op, float *gi, const float *g, const float *x, const float *y, int64_t n) {
  switch (op) {
    case AL_NEG: for (int64_t i = 0; i < n; i++) gi[i] = -g[i]; break;
    case AL_EXP: for (int64_t i = 0; i < n; i++) gi[i] = g[i] * y[i]; break;
    case AL_LOG: for (int64_t i = 0; i < n; i++) gi[i] = g[i] / x[i]; break;
    case AL_SQRT: for (int64_t i = 0; i < n; i++) gi[i] = g[i] * 0.5f / y[i]; break;
    case AL_TANH: for (int64_t i = 0; i < n; i++) gi[i] = g[i] * (1.0f - y[i] * y[i]); break;
    case AL_SIGMOID: for (int64_t i = 0; i < n; i++) gi[i] = g[i] * y[i] * (1.0f - y[i]); break;
    case AL_RELU: for (int64_t i = 0; i < n; i++) gi[i] = y[i] > 0 ? g[i] : 0.0f; break;
    case AL_GELU:
      /* d/dx x*Phi(x) = Phi(x) + x*phi(x). Phi comes back from the saved output as
       * y/x (within an ulp of Phi: y = fl(x Phi)), 1/2 at x = 0, so only the pdf's exp is
       * evaluated here -- the erfc fit in al_fphi was half the cost of a ViT's MLP
       * backward. Where y is subnormal (x < -13) Phi loses bits, but the gradient there is
       * below 1e-37. x^2 = hi + lo exactly (an fma): exp(-x^2/2) = exp(-hi/2) (1 - lo/2)
       * keeps the pdf's relative accuracy in the tails (x*x rounded alone is 4e-6 off
       * there). */
      for (int64_t i = 0; i < n; i++) {
        float xi = x[i], q = y[i] / xi;
        float cdf = xi == 0.0f ? 0.5f : q;
        float hi = xi * xi, lo = fmaf(xi, xi, -hi), e = al_fexp(-0.5f * hi);
        float pdf = 0.3989422804014327f * (e - e * (0.5f * lo));
        gi[i] = g[i] * (cdf + xi * pdf);
      }
      break;
    case AL_SILU:
      for (int64_t i = 0; i < n; i++) { float s = al_fsigmoid(x[i]); gi[i] = g[i] * (s + x[i] * s * (1.0f - s)); }
      break;
    case AL_SOFTPLUS: for (int64_t i = 0; i < n; i++) gi[i] = g[i] * al_fsigmoid(x[i]); break;
    case AL_ABS: for (int64_t i = 0; i < n; i++) gi[i] = g[i] * (x[i] > 0 ? 1.0f : (x[i] < 0 ? -1.0f : 0.0f)); break;
    case AL_SIN: for (int64_t i = 0; i < n; i++) gi[i] = g[i] * cosf(x[i]); break;
    case AL_COS: for (int64_t i = 0; i < n; i++) gi[i] = -g[i] * sinf(x[i]); break;
    case AL_RSQRT: for (int64_t i = 0; i < n; i++) gi[i] = -0.5f * g[i] * y[i] * y[i] * y[i]; break;
    case AL_LOG1P: for (int64_t i = 0; i < n; i++) gi[i] = g[i] / (1.0f + x[i]); break;
    case AL_ERF: for (int64_t i = 0; i < n; i++) gi[i] = g[i] * 1.1283791670955126f * expf(-x[i] * x[i]); break;
    default: for (int64_t i = 0; i < n; i++) gi[i] = 0.0f; break;   /* sign, floor, round */
  }
}

static al_status unary_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  al_tensor *gc = NULL;
  al_status st = al_contiguous_ref(&gc, g);
  if (st) return st;
  al_tensor *x = n->saved[0], *y = n->saved[1];
  al_tensor *gi = al_tensor_new(AL_F32, g->ndim, g->shape);
  if (!gi) { al_tensor_release(gc); return AL_ENOMEM; }
  /* elementwise: two halves on two threads give the same numbers as one pass */
  int64_t cnt = al_numel(gi), chunk = cnt < AL_PAR_MIN_WORK ? cnt : (cnt + 1) / 2;
  if (chunk < 1) chunk = 1;
  float *pgi = al_f32(gi);
  const float *pg = al_f32(gc), *px = al_f32(x), *py = al_f32(y);
  al_unop op = (al_unop)n->k[0];
  #pragma omp parallel for if (cnt >= AL_PAR_MIN_WORK) schedule(static)
  for (int64_t c0 = 0; c0 < cnt; c0 += chunk) {
    int64_t len = cnt - c0 < chunk ? cnt - c0 : chunk;
    unary_bwd_kernel(op, pgi + c0, pg + c0, px + c0, py + c0, len);
  }
  al_tensor_release(gc);
  gin[0] = gi;
  return AL_OK;
}

/* Two chunks for large n (one per core), one otherwise; never 0: an OpenMP loop
 * with a zero step divides by zero computing its trip count (numel 0 tensors). */
static int64_t par_chunk(int64_t n) {
  int64_t c = n < AL_PAR_MIN_WORK ? n : (n + 1) / 2;
  return c > 0 ? c : 1;
}

al_status al_unary(al_tensor **out, al_unop op, al_tensor *x) {
  if (op >= AL_UNARY_COUNT) return al_seterr(AL_EINVAL, "unary: unknown op %d", (int)op);
  if (x->dtype != AL_F32) {
    char b[128];
    if (op == AL_NEG || op == AL_ABS || op == AL_SIGN) {
      al_tensor *o = al_tensor_new(AL_I64, x->ndim, x->shape), *xc = NULL;
      if (!o) return AL_ENOMEM;
      al_status st = al_contiguous_ref(&xc, x);
      if (st) { al_tensor_release(o); return st; }
      int64_t n = al_numel(o), *pi = al_i64(xc), *po = al_i64(o);
      for (int64_t i = 0; i < n; i++)
        po[i] = op == AL_NEG ? (int64_t)(0 - (uint64_t)pi[i])
                : op == AL_ABS ? (pi[i] < 0 ? (int64_t)(0 - (uint64_t)pi[i]) : pi[i]) : (pi[i] > 0) - (pi[i] < 0);
      al_tensor_release(xc);
      *out = o;
      return AL_OK;
    }
    return al_seterr(AL_EINVAL, "%s: expected a float32 tensor, got %s", unop_names[op], al_shape_str(x, b, sizeof b));
  }
  al_tensor *xc = NULL;
  al_status st = al_contiguous_ref(&xc, x);
  if (st) return st;
  al_tensor *o = al_tensor_new(AL_F32, x->ndim, x->shape);
  if (!o) { al_tensor_release(xc); return AL_ENOMEM; }
  int64_t n = al_numel(o), chunk = par_chunk(n);
  float *po = al_f32(o);
  const float *px = al_f32(xc);
  #pragma omp parallel for if (n >= AL_PAR_MIN_WORK) schedule(static)
  for (int64_t c0 = 0; c0 < n; c0 += chunk)
    unary_fwd(op, po + c0, px + c0, (n - c0 < chunk ? n - c0 : chunk));
  al_node *node = al_node_new(unop_names[op], unary_bwd, 1, &x, &st);
  if (st) { al_tensor_release(o); al_tensor_release(xc); return st; }
  if (node) {
    node->k[0] = op;
    al_node_save(node, xc);
    al_node_save(node, o);
    al_node_attach(node, o);
  }
  al_tensor_release(xc);
  *out = o;
  return AL_OK;
}

/* ---- scalar ops -------------------------------------------------------------- */
static al_status affine_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  return al_affine(&gin[0], g, n->d[0], 0.0);
}

al_status al_affine(al_tensor **out, al_tensor *x, double scale, double shift) {
  al_tensor *xc = NULL;
  al_status st;
  /* int64 stays int64 under integer scale and shift (ids + 1, labels * 2); the range
   * test comes first because converting an out-of-range double to int64 is undefined */
  if (x->dtype == AL_I64 && fabs(scale) < 9.2e18 && fabs(shift) < 9.2e18 && scale == (double)(int64_t)scale &&
      shift == (double)(int64_t)shift) {
    st = al_contiguous_ref(&xc, x);
    if (st) return st;
    al_tensor *o = al_tensor_new(AL_I64, x->ndim, x->shape);
    if (!o) { al_tensor_release(xc); return AL_ENOMEM; }
    int64_t n = al_numel(o), s = (int64_t)scale, b = (int64_t)shift, *pi = al_i64(xc), *po = al_i64(o);
    for (int64_t i = 0; i < n; i++) po[i] = (int64_t)((uint64_t)pi[i] * (uint64_t)s + (uint64_t)b);
    al_tensor_release(xc);
    *out = o;
    return AL_OK;
  }
  if (x->dtype == AL_I64) st = al_to_dtype(&xc, x, AL_F32);
  else st = al_contiguous_ref(&xc, x);
  if (st) return st;
  al_tensor *o = al_tensor_new(AL_F32, x->ndim, x->shape);
  if (!o) { al_tensor_release(xc); return AL_ENOMEM; }
  int64_t n = al_numel(o);
  float *po = al_f32(o), s = (float)scale, b = (float)shift;
  const float *px = al_f32(xc);
  if (shift == 0) {
    #pragma omp parallel for if (n >= 4 * AL_PAR_MIN_WORK) schedule(static)
    for (int64_t i = 0; i < n; i++) po[i] = px[i] * s;
  } else {
    #pragma omp parallel for if (n >= 4 * AL_PAR_MIN_WORK) schedule(static)
    for (int64_t i = 0; i < n; i++) po[i] = px[i] * s + b;
  }
  al_tensor_release(xc);
  al_node *node = al_node_new("affine", affine_bwd, 1, &x, &st);
  if (st) { al_tensor_release(o); return st; }
  if (node) { node->d[0] = scale; al_node_attach(node, o); }
  *out = o;
  return AL_OK;
}

static al_status pow_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  /* d x^p = p x^(p-1); d b^x = b^x log b */
  al_tensor *t = NULL, *gc = NULL;
  al_status st = al_contiguous_ref(&gc, g);
  if (st) return st;
  t = al_tensor_new(AL_F32, g->ndim, g->shape);
  if (!t) { al_tensor_release(gc); return AL_ENOMEM; }
  const float *x = al_f32(n->saved[0]), *y = al_f32(n->saved[1]), *pg = al_f32(gc);
  float *pt = al_f32(t);
  int64_t cnt = al_numel(t);
  double p = n->d[0];
  if (n->k[0] == 0) {
    for (int64_t i = 0; i < cnt; i++) pt[i] = pg[i] * (float)(p * pow(x[i], p - 1));
  } else {
    float lb = (float)log(p);
    for (int64_t i = 0; i < cnt; i++) pt[i] = pg[i] * y[i] * lb;
  }
  al_tensor_release(gc);
  gin[0] = t;
  return AL_OK;
}

static al_status pow_common(al_tensor **out, al_tensor *x, double p, int rpow) {
  al_tensor *xc = NULL;
  al_status st = x->dtype == AL_F32 ? al_contiguous_ref(&xc, x) : al_to_dtype(&xc, x, AL_F32);
  if (st) return st;
  al_tensor *o = al_tensor_new(AL_F32, x->ndim, x->shape);
  if (!o) { al_tensor_release(xc); return AL_ENOMEM; }
  int64_t n = al_numel(o);
  const float *px = al_f32(xc);
  float *po = al_f32(o);
  if (rpow) for (int64_t i = 0; i < n; i++) po[i] = (float)pow(p, px[i]);
  else if (p == 2) for (int64_t i = 0; i < n; i++) po[i] = px[i] * px[i];
  else if (p == 0.5) for (int64_t i = 0; i < n; i++) po[i] = sqrtf(px[i]);
  else if (p == -1) for (int64_t i = 0; i < n; i++) po[i] = 1.0f / px[i];
  else for (int64_t i = 0; i < n; i++) po[i] = powf(px[i], (float)p);
  al_node *node = al_node_new("pow", pow_bwd, 1, &x, &st);
  if (st) { al_tensor_release(o); al_tensor_release(xc); return st; }
  if (node) {
    node->d[0] = p;
    node->k[0] = rpow;
    al_node_save(node, xc);
    al_node_save(node, o);
    al_node_attach(node, o);
  }
  al_tensor_release(xc);
  *out = o;
  return AL_OK;
}

al_status al_pow_scalar(al_tensor **out, al_tensor *x, double p) { return pow_common(out, x, p, 0); }
al_status al_rpow_scalar(al_tensor **out, double base, al_tensor *x) {
  if (!(base > 0)) return al_seterr(AL_EINVAL, "pow: base %g ^ tensor needs a positive base", base);
  return pow_common(out, x, base, 1);
}

static al_status clamp_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  al_tensor *gc = NULL;
  al_status st = al_contiguous_ref(&gc, g);
  if (st) return st;
  al_tensor *t = al_tensor_new(AL_F32, g->ndim, g->shape);
  if (!t) { al_tensor_release(gc); return AL_ENOMEM; }
  const float *x = al_f32(n->saved[0]), *pg = al_f32(gc);
  float *pt = al_f32(t), lo = (float)n->d[0], hi = (float)n->d[1];
  int64_t cnt = al_numel(t);
  for (int64_t i = 0; i < cnt; i++) pt[i] = (x[i] >= lo && x[i] <= hi) ? pg[i] : 0.0f;
  al_tensor_release(gc);
  gin[0] = t;
  return AL_OK;
}

al_status al_clamp(al_tensor **out, al_tensor *x, double lo, double hi) {
  if (lo > hi) return al_seterr(AL_EINVAL, "clamp: min %g is greater than max %g", lo, hi);
  al_tensor *xc = NULL;
  al_status st = x->dtype == AL_F32 ? al_contiguous_ref(&xc, x) : al_to_dtype(&xc, x, AL_F32);
  if (st) return st;
  al_tensor *o = al_tensor_new(AL_F32, x->ndim, x->shape);
  if (!o) { al_tensor_release(xc); return AL_ENOMEM; }
  int64_t n = al_numel(o);
  const float *px = al_f32(xc);
  float *po = al_f32(o), l = (float)lo, h = (float)hi;
  for (int64_t i = 0; i < n; i++) { float v = px[i]; po[i] = v < l ? l : (v > h ? h : v); }
  al_node *node = al_node_new("clamp", clamp_bwd, 1, &x, &st);
  if (st) { al_tensor_release(o); al_tensor_release(xc); return st; }
  if (node) { node->d[0] = lo; node->d[1] = hi; al_node_save(node, xc); al_node_attach(node, o); }
  al_tensor_release(xc);
  *out = o;
  return AL_OK;
}

/* ---- where ------------------------------------------------------------------ */
static al_status where_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  al_tensor *c = n->saved[0];   /* float 0/1 with the output's shape */
  al_status st = AL_OK;
  for (int i = 0; i < 2 && !st; i++) {
    if (!n->in[i + 1].needs) continue;
    al_tensor *m = NULL, *t = NULL;
    if (i == 0) st = al_mul(&t, g, c);
    else { st = al_affine(&m, c, -1, 1); if (!st) st = al_mul(&t, g, m); }
    al_tensor_release(m);
    if (!st) st = al_sum_to_shape(&gin[i + 1], t, n->in[i + 1].ndim, n->in[i + 1].shape);
    al_tensor_release(t);
  }
  return st;
}

al_status al_where(al_tensor **out, al_tensor *cond, al_tensor *a, al_tensor *b) {
  int nd1, nd;
  int64_t s1[AL_MAXDIM], shape[AL_MAXDIM];
  al_status st = al_broadcast_shape_(&nd1, s1, a, b, "where");
  if (st) return st;
  al_tensor tmp = *a;   /* geometry-only stand-in for the broadcast of a and b */
  tmp.ndim = nd1;
  memcpy(tmp.shape, s1, sizeof s1);
  st = al_broadcast_shape_(&nd, shape, cond, &tmp, "where");
  if (st) return st;
  /* cond as float 0/1 expanded to the output shape */
  al_tensor *cf = NULL, *ones = NULL, *zero_a = NULL, *cb = NULL;
  st = al_to_dtype(&cf, cond, AL_F32);
  if (st) return st;
  float *pc = al_f32(cf);
  int64_t nc = al_numel(cf);
  for (int64_t i = 0; i < nc; i++) pc[i] = pc[i] != 0 ? 1.0f : 0.0f;
  ones = al_tensor_new(AL_F32, nd, shape);
  if (!ones) { al_tensor_release(cf); return AL_ENOMEM; }
  al_fill(ones, 1.0);
  st = al_mul(&cb, ones, cf);   /* materialise cond at the output shape */
  al_tensor_release(ones);
  al_tensor_release(cf);
  if (st) return st;
  /* out = b + c * (a - b) would turn inf*0 into NaN: select elementwise instead */
  al_tensor *ab = NULL, *bb = NULL;
  al_tensor *o = al_tensor_new(AL_F32, nd, shape);
  if (!o) { al_tensor_release(cb); return AL_ENOMEM; }
  int was = al_grad_enabled();
  al_set_grad_enabled(0);
  al_tensor *z = al_tensor_zeros(AL_F32, nd, shape);
  st = z ? al_add(&ab, z, a) : AL_ENOMEM;
  if (!st) st = al_add(&bb, z, b);
  al_set_grad_enabled(was);
  al_tensor_release(z);
  (void)zero_a;
  if (st) { al_tensor_release(o); al_tensor_release(cb); al_tensor_release(ab); al_tensor_release(bb); return st; }
  int64_t n = al_numel(o);
  const float *c = al_f32(cb), *pa = al_f32(ab), *pb = al_f32(bb);
  float *po = al_f32(o);
  for (int64_t i = 0; i < n; i++) po[i] = c[i] != 0 ? pa[i] : pb[i];
  al_tensor_release(ab);
  al_tensor_release(bb);
  al_tensor *ins[3] = {cond, a, b};
  al_node *node = al_node_new("where", where_bwd, 3, ins, &st);
  if (st) { al_tensor_release(o); al_tensor_release(cb); return st; }
  if (node) { al_node_save(node, cb); al_node_attach(node, o); }
  al_tensor_release(cb);
  *out = o;
  return AL_OK;
}

al_status al_to_dtype(al_tensor **out, al_tensor *x, al_dtype dt) {
  if (x->dtype == dt) return al_contiguous_ref(out, x);
  al_tensor *o = al_tensor_new(dt, x->ndim, x->shape);
  if (!o) return AL_ENOMEM;
  al_status st = al_copy_into(o, x);
  if (!st && dt == AL_I64) {   /* float -> int64 truncates; NaN, inf and |v| >= 2^63 have no value */
    al_tensor *xc = NULL;
    st = al_contiguous_ref(&xc, x);
    const float *p = st ? NULL : al_f32(xc);
    int64_t n = al_numel(o);
    for (int64_t i = 0; p && i < n; i++)
      if (!(fabsf(p[i]) < 9.2233720e18f)) {
        char b[128];
        st = al_seterr(AL_EINVAL, "to int64: element %lld of %s is %g, which has no int64 value", (long long)(i + 1),
                       al_shape_str(x, b, sizeof b), (double)p[i]);
        break;
      }
    al_tensor_release(xc);
  }
  if (st) { al_tensor_release(o); return st; }
  *out = o;
  return AL_OK;
}
