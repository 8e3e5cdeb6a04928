/* core/ops/unary.c -- unary math (exp, tanh, GELU, ...), the scalar ops affine, pow and
 * clamp, and dtype conversion; each with its backward. Broadcasting two-operand ops are in
 * core/ops/binary.c.
 *
 * Outputs are contiguous; large ones split into contiguous chunks across OpenMP threads,
 * and an element's arithmetic does not depend on the split. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/ops.h"
#include "attnlab/threads.h"
#include "../simd/fastmath.h"
#include "internal.h"

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
      float xj = xb[j], e = al_fexp_le0(sb[j]);   /* sb: finite, <= ~0 (ax is clamped, NaN to 20) */
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
       * there). The exponent -hi/2 is <= 0, so al_fexp_le0 (al_fexp bit for bit there,
       * without its overflow and NaN lanes; a NaN x gets exponent 0 instead, and its NaN cdf
       * carries to gi). At |x| >= 20 the pdf is 0 in float, and it is set so: where x^2
       * overflows (|x| > 1.8e19) lo is -inf and e * lo was NaN. */
      for (int64_t i = 0; i < n; i++) {
        float xi = x[i], q = y[i] / xi;
        float cdf = xi == 0.0f ? 0.5f : q;
        float hi = xi * xi, lo = fmaf(xi, xi, -hi), ex = -0.5f * hi;
        float e = al_fexp_le0(ex == ex ? ex : 0.0f);
        float pdf = hi < 400.0f ? 0.3989422804014327f * (e - e * (0.5f * lo)) : 0.0f;
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

/* The end of an op o = f(x) whose backward reads x (its contiguous copy xc) and o: node (NULL
 * when no gradient is recorded) saves both and becomes o's grad_fn, and o goes to *out. st is
 * al_node_new's status: on failure o is released. The reference to xc is dropped either way. */
static al_status finish_saving_x_y(al_tensor **out, al_tensor *o, al_tensor *xc, al_node *node,
                                   al_status st) {
  if (st) { al_tensor_release(o); al_tensor_release(xc); return st; }
  if (node) {
    al_node_save(node, xc);
    al_node_save(node, o);
    al_node_attach(node, o);
  }
  al_tensor_release(xc);
  *out = o;
  return AL_OK;
}

/* Two chunks for large n (one per core), one otherwise; never 0: an OpenMP loop
 * with a zero step divides by zero computing its trip count (numel 0 tensors). */
static int64_t par_chunk(int64_t n) {
  int64_t c = n < AL_PAR_MIN_WORK ? n : (n + 1) / 2;
  return c > 0 ? c : 1;
}

al_status al_unary(al_tensor **out, al_unop op, al_tensor *x) {
  AL_NEED(out, "unary", "out"); AL_NEED(x, "unary", "x");
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
  if (node) node->k[0] = op;
  return finish_saving_x_y(out, o, xc, node, st);
}

/* ---- scalar ops -------------------------------------------------------------- */
static al_status affine_bwd(al_node *n, al_tensor *g, al_tensor **gin) {
  return al_affine(&gin[0], g, n->d[0], 0.0);
}

al_status al_affine(al_tensor **out, al_tensor *x, double scale, double shift) {
  AL_NEED(out, "affine", "out"); AL_NEED(x, "affine", "x");
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
  if (n->k[0] == 0 && p == 0) {
    /* x^0 is 1 everywhere: 0 * 0^-1 made the gradient at x = 0 NaN (PyTorch's is 0) */
    for (int64_t i = 0; i < cnt; i++) pt[i] = 0.0f;
  } else if (n->k[0] == 0) {
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
  AL_NEED(out, "pow", "out"); AL_NEED(x, "pow", "x");
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
  if (node) { node->d[0] = p; node->k[0] = rpow; }
  return finish_saving_x_y(out, o, xc, node, st);
}

/* int64 x ^ a whole p >= 0: int64 out, exactly (wrapping on overflow, as PyTorch's integer pow
 * and al_mul). Through float32 a value above 2^24 was rounded (x ^ 1 changed 16777217). */
static al_status pow_i64(al_tensor **out, al_tensor *x, uint64_t p) {
  al_tensor *xc = NULL;
  AL_TRY(al_contiguous_ref(&xc, x));
  al_tensor *o = al_tensor_new(AL_I64, x->ndim, x->shape);
  if (!o) { al_tensor_release(xc); return AL_ENOMEM; }
  const int64_t *px = al_i64(xc);
  int64_t *po = al_i64(o), n = al_numel(o);
  for (int64_t i = 0; i < n; i++) {   /* square and multiply, in unsigned arithmetic (no UB) */
    uint64_t b = (uint64_t)px[i], r = 1;
    for (uint64_t e = p; e; e >>= 1, b *= b) if (e & 1) r *= b;
    po[i] = (int64_t)r;
  }
  al_tensor_release(xc);
  *out = o;
  return AL_OK;
}

al_status al_pow_scalar(al_tensor **out, al_tensor *x, double p) {
  if (x && out && x->dtype == AL_I64 && p >= 0 && p == floor(p) && p < 18446744073709551616.0)
    return pow_i64(out, x, (uint64_t)p);
  return pow_common(out, x, p, 0);
}
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

/* int64 clamp for whole-number bounds (or none: +-inf is whole too, floor(inf) = inf): int64
 * out, exactly, as in PyTorch. Through float32 a label or id above 2^24 was rounded and the
 * result was float32. A bound beyond int64's range clamps nothing on its side. */
static al_status clamp_i64(al_tensor **out, al_tensor *x, double lo, double hi) {
  al_tensor *xc = NULL;
  al_status st = al_contiguous_ref(&xc, x);
  if (st) return st;
  al_tensor *o = al_tensor_new(AL_I64, x->ndim, x->shape);
  if (!o) { al_tensor_release(xc); return AL_ENOMEM; }
  const int64_t l = al_i64_saturating_(lo), h = al_i64_saturating_(hi), *px = al_i64(xc);
  int64_t *po = al_i64(o), n = al_numel(o);
  for (int64_t i = 0; i < n; i++) { int64_t v = px[i]; po[i] = v < l ? l : (v > h ? h : v); }
  al_tensor_release(xc);
  *out = o;
  return AL_OK;
}

al_status al_clamp(al_tensor **out, al_tensor *x, double lo, double hi) {
  AL_NEED(out, "clamp", "out"); AL_NEED(x, "clamp", "x");
  if (lo != lo || hi != hi) return al_seterr(AL_EINVAL, "clamp: a bound is NaN (min %g, max %g)", lo, hi);
  if (lo > hi) return al_seterr(AL_EINVAL, "clamp: min %g is greater than max %g", lo, hi);
  if (x->dtype == AL_I64 && lo == floor(lo) && hi == floor(hi)) return clamp_i64(out, x, lo, hi);
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

al_status al_to_dtype(al_tensor **out, al_tensor *x, al_dtype dt) {
  AL_NEED(out, "to_dtype", "out"); AL_NEED(x, "to_dtype", "x");
  if (dt != AL_F32 && dt != AL_I64) return al_seterr(AL_EINVAL, "to_dtype: unknown dtype %d", (int)dt);
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
