/* tests/c/test_tensor.c -- C-level tests of the tensor and its graph: tensor and storage
 * lifetime (reference counts, views keeping storage alive), al_copy_into over strided
 * views, broadcasting geometry of the elementwise kernels against a plain index-arithmetic
 * reference, the reverse pass (al_backward) on small graphs with closed-form gradients,
 * empty tensors, NULL and out-of-range arguments of every op (a status and a message, never a
 * crash), and al_mem_live() back at its start value after each of them (no leaks).
 * Every check prints PASS/FAIL/SKIP (tests/c/check.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/autograd.h"
#include "attnlab/mixer_ops.h"
#include "attnlab/ops.h"
#include "attnlab/rng.h"
#include "attnlab/threads.h"
#include "check.h"

/* ---------------------------------------------------------------- helpers */
static uint64_t rs = 0x243F6A8885A308D3ull;
static uint64_t rnext(void) {   /* splitmix64 */
  uint64_t z = (rs += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static double runif(void) { return (double)(rnext() >> 11) * 0x1p-53; }

static al_tensor *new_f32(int ndim, const int64_t *shape) {
  al_tensor *t = al_tensor_new(AL_F32, ndim, shape);
  float *p = al_f32(t);
  for (int64_t i = 0; i < al_numel(t); i++) p[i] = (float)(runif() * 4 - 2);
  return t;
}

/* element of t at multi-index idx (any strides), as double */
static double at(const al_tensor *t, const int64_t *idx) {
  int64_t off = t->offset;
  for (int d = 0; d < t->ndim; d++) off += idx[d] * t->stride[d];
  return t->dtype == AL_F32 ? ((float *)t->storage->data)[off] : (double)((int64_t *)t->storage->data)[off];
}

static int next_index(int64_t *idx, int nd, const int64_t *shape) {
  for (int d = nd - 1; d >= 0; d--) {
    if (++idx[d] < shape[d]) return 1;
    idx[d] = 0;
  }
  return 0;
}

/* ---------------------------------------------------------------- lifetime */
static void test_lifetime(void) {
  size_t m0 = al_mem_live();
  int64_t sh[2] = {3, 4};
  al_tensor *t = al_tensor_zeros(AL_F32, 2, sh);
  CHECK("new tensor: refcount 1, storage refcount 1, 48 bytes counted",
        t->refcount == 1 && t->storage->refcount == 1 && al_mem_live() - m0 == 48,
        "refcount %d, storage %d, bytes %zu", t->refcount, t->storage->refcount, al_mem_live() - m0);
  al_tensor_retain(t);
  CHECK("retain adds a reference", t->refcount == 2, "refcount %d", t->refcount);
  al_tensor_release(t);
  al_tensor *v = NULL, *tr = NULL;
  al_status st = al_narrow(&v, t, 1, 1, 2);
  st |= al_transpose(&tr, t, 0, 1);
  CHECK("views share the storage and count it", !st && v->storage == t->storage && tr->storage == t->storage &&
        t->storage->refcount == 3 && v->offset == 1 && v->stride[0] == 4, "storage refcount %d offset %lld",
        t->storage->refcount, (long long)v->offset);
  al_f32(t)[1 * 4 + 2] = 7.0f;
  al_tensor_release(t);   /* the base goes; the views keep the bytes alive */
  int64_t i12[2] = {1, 1};
  CHECK("views keep the storage alive after the base is released",
        v->storage->refcount == 2 && at(v, i12) == 7.0 && al_mem_live() - m0 == 48, "value %g", at(v, i12));
  al_tensor_release(v);
  int64_t i21[2] = {2, 1};
  CHECK("the last view still reads the data", at(tr, i21) == 7.0 && tr->storage->refcount == 1, "value %g", at(tr, i21));
  al_tensor_release(tr);
  CHECK("releasing the last view frees the storage", al_mem_live() == m0, "live %zu vs %zu", al_mem_live(), m0);
  al_tensor_release(NULL);
  CHECK("release(NULL) is a no-op", 1, "");

  /* a detached alias and a saved tensor of a node keep storage alive, not the graph */
  al_tensor *x = al_tensor_zeros(AL_F32, 2, sh), *y = NULL;
  x->requires_grad = 1;
  st = al_unary(&y, AL_EXP, x);
  CHECK("an op on a requires-grad leaf records a node that holds the leaf", !st && y->grad_fn && x->refcount == 2 &&
        y->requires_grad, "x refcount %d", x->refcount);
  al_tensor_release(y);
  CHECK("releasing the output frees the node and drops its reference to the leaf", x->refcount == 1, "x refcount %d", x->refcount);
  al_tensor_release(x);
  CHECK("no bytes left after the graph test", al_mem_live() == m0, "live %zu vs %zu", al_mem_live(), m0);

  /* 0-dim and empty tensors */
  al_tensor *s = al_tensor_new(AL_I64, 0, NULL);
  int64_t z[1] = {0};
  al_tensor *e = al_tensor_new(AL_F32, 1, z);
  CHECK("0-dim tensor: numel 1, contiguous; empty tensor: numel 0", s && e && al_numel(s) == 1 && al_is_contiguous(s) &&
        al_numel(e) == 0, "");
  al_tensor_release(s);
  al_tensor_release(e);
  int64_t bad[1] = {-3};
  al_tensor *n = al_tensor_new(AL_F32, 1, bad);
  CHECK("negative size is refused with a message", !n && strstr(al_errmsg(), "negative size"), "%s", al_errmsg());
  int64_t huge[2] = {INT64_MAX / 4, 8};
  n = al_tensor_new(AL_F32, 2, huge);
  CHECK("overflowing sizes are refused", !n && strstr(al_errmsg(), "too large"), "%s", al_errmsg());
  /* numel 0, but the strides of (0, 2^40, 2^40) overflowed int64 (UB; the cap tracked numel) */
  int64_t empty_huge[3] = {0, (int64_t)1 << 40, (int64_t)1 << 40};
  n = al_tensor_new(AL_F32, 3, empty_huge);
  CHECK("an empty shape whose nonzero sizes multiply past 2^60 is refused, named", !n &&
        strstr(al_errmsg(), "tensor: shape (0,1099511627776,1099511627776) is too large"), "%s", al_errmsg());
  /* the cap itself, AL_MAX_SPAN = 2^60 - 1 = 3 * 384307168202282325, is allowed */
  int64_t at_cap[3] = {0, 3, AL_MAX_SPAN / 3};
  n = al_tensor_new(AL_F32, 3, at_cap);
  CHECK("an empty shape whose nonzero sizes multiply to exactly AL_MAX_SPAN is made", n && al_numel(n) == 0 &&
        AL_MAX_SPAN % 3 == 0, "%s", n ? "" : al_errmsg());
  al_tensor_release(n);
  int64_t past_cap[3] = {0, 3, AL_MAX_SPAN / 3 + 1};
  n = al_tensor_new(AL_F32, 3, past_cap);
  CHECK("... and one step past it is refused", !n && strstr(al_errmsg(), "too large"), "%s", n ? "made" : al_errmsg());
  int64_t empty_ok[3] = {(int64_t)1 << 30, 0, (int64_t)1 << 29};
  n = al_tensor_new(AL_F32, 3, empty_ok);
  CHECK("an empty shape within the cap is made (numel 0)", n && al_numel(n) == 0, "%s", n ? "" : al_errmsg());
  al_tensor *r = NULL;
  al_status rst = n ? al_reshape(&r, n, 3, empty_huge) : AL_EINVAL;
  CHECK("reshape of an empty tensor to such a shape is refused too", rst != AL_OK && !r &&
        strstr(al_errmsg(), "reshape: shape (0,1099511627776,1099511627776) is too large"), "%s", al_errmsg());
  al_tensor_release(n);
  int64_t one[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  n = al_tensor_new(AL_F32, 9, one);
  CHECK("more than AL_MAXDIM dims is refused", !n, "");
}

/* ---------------------------------------------------------------- copy_into */
static void test_copy_into(void) {
  size_t m0 = al_mem_live();
  int64_t sh[3] = {2, 3, 4};
  al_tensor *a = new_f32(3, sh);
  /* a permuted (non-contiguous) source into a contiguous destination */
  int perm[3] = {2, 0, 1};
  al_tensor *p = NULL;
  al_permute(&p, a, perm);
  al_tensor *c = al_tensor_new(AL_F32, 3, p->shape);
  al_status st = al_copy_into(c, p);
  int64_t idx[AL_MAXDIM] = {0};
  int ok = !st;
  do { ok &= at(c, idx) == at(p, idx); } while (next_index(idx, 3, p->shape));
  CHECK("copy_into: permuted source -> contiguous", ok, "status %d", st);

  /* a contiguous source into a strided destination (a narrowed, transposed view) */
  int64_t bsh[2] = {5, 6};
  al_tensor *big = al_tensor_zeros(AL_F32, 2, bsh), *nv = NULL, *tv = NULL;
  al_narrow(&nv, big, 1, 2, 3);     /* (5,3), row stride 6 */
  al_transpose(&tv, nv, 0, 1);      /* (3,5), strides (1,6) */
  int64_t ssh[2] = {3, 5};
  al_tensor *src = new_f32(2, ssh);
  st = al_copy_into(tv, src);
  int64_t j[AL_MAXDIM] = {0};
  ok = !st;
  do { ok &= at(tv, j) == at(src, j); } while (next_index(j, 2, ssh));
  /* everything outside the view is untouched */
  for (int r = 0; r < 5; r++)
    for (int q = 0; q < 6; q++)
      if ((q < 2 || q > 4) && al_f32(big)[r * 6 + q] != 0) ok = 0;
  CHECK("copy_into: into a narrowed+transposed view, neighbours untouched", ok, "status %d", st);

  /* strided -> strided with different shapes, same numel: row-major order on both sides */
  int64_t s6[2] = {2, 3};
  al_tensor *q6 = new_f32(2, s6), *q6t = NULL;
  al_transpose(&q6t, q6, 0, 1);     /* (3,2) strided */
  int64_t d6sh[1] = {6};
  al_tensor *d6 = al_tensor_zeros(AL_F32, 1, d6sh);
  st = al_copy_into(d6, q6t);
  float want[6];
  for (int r = 0; r < 3; r++) for (int k = 0; k < 2; k++) want[r * 2 + k] = al_f32(q6)[k * 3 + r];
  CHECK("copy_into: (3,2) transposed view -> (6) in row-major order", !st && !memcmp(want, al_f32(d6), sizeof want), "");

  /* dtype conversion, both ways; float -> int64 truncates toward zero and saturates */
  int64_t s4[1] = {5};
  al_tensor *f = al_tensor_new(AL_F32, 1, s4), *i = al_tensor_new(AL_I64, 1, s4);
  float fv[5] = {2.7f, -2.7f, NAN, 1e30f, -1e30f};
  memcpy(al_f32(f), fv, sizeof fv);
  st = al_copy_into(i, f);
  int64_t *pi = al_i64(i);
  CHECK("copy_into float -> int64: truncation, NaN -> 0, saturation (no UB)",
        !st && pi[0] == 2 && pi[1] == -2 && pi[2] == 0 && pi[3] == INT64_MAX && pi[4] == INT64_MIN,
        "%lld %lld %lld %lld %lld", (long long)pi[0], (long long)pi[1], (long long)pi[2], (long long)pi[3], (long long)pi[4]);
  al_tensor *i2f = NULL;
  st = al_to_dtype(&i2f, f, AL_I64);
  CHECK("al_to_dtype refuses NaN/inf -> int64 with a message", st == AL_EINVAL && strstr(al_errmsg(), "int64"), "%s", al_errmsg());
  pi[0] = (int64_t)1 << 40;
  st = al_copy_into(f, i);
  CHECK("copy_into int64 -> float", !st && al_f32(f)[0] == 1099511627776.0f && al_f32(f)[1] == -2.0f, "%g", al_f32(f)[0]);
  st = al_copy_into(f, a);
  CHECK("copy_into refuses different numel, naming the shapes", st == AL_EINVAL && strstr(al_errmsg(), "(5)") &&
        strstr(al_errmsg(), "(2,3,4)"), "%s", al_errmsg());

  /* fill of a non-contiguous view */
  al_fill(tv, 3.5);
  ok = 1;
  for (int r = 0; r < 5; r++)
    for (int q = 0; q < 6; q++) ok &= al_f32(big)[r * 6 + q] == ((q >= 2 && q <= 4) ? 3.5f : 0.0f);
  CHECK("fill of a strided view", ok, "");

  /* contiguity: size-1 dims may have any stride */
  int64_t sh1[3] = {1, 3, 1};
  int64_t st1[3] = {99, 1, 7};
  al_tensor *odd = al_tensor_view(a, 3, sh1, st1, 0);
  CHECK("al_is_contiguous ignores the strides of size-1 dims", al_is_contiguous(odd) && !al_is_contiguous(p), "");
  /* no elements: contiguous whatever the strides (as PyTorch) */
  int64_t sh0[2] = {0, 3}, st0[2] = {1, 0};
  al_tensor *empty_t = al_tensor_view(a, 2, sh0, st0, 0);
  CHECK("al_is_contiguous: an empty view with any strides is contiguous", empty_t && al_is_contiguous(empty_t), "");
  al_tensor_release(empty_t);

  /* overlapping views of one storage that share exactly one element: u = 1..9 (9), src the
   * elements 1,3,5 (offset 0, stride 2), dst 5,7,9 (offset 4, stride 2): dst's first element is
   * src's last. Copied as if src were read first: 1 2 3 4 1 6 3 8 5 (an element-by-element copy
   * in place wrote u[5] = 1 before reading it as src's third: ... 8 1). */
  int64_t s9[1] = {9}, s3[1] = {3}, by2[1] = {2};
  al_tensor *u = al_tensor_new(AL_F32, 1, s9);
  for (int k = 0; k < 9; k++) al_f32(u)[k] = (float)(k + 1);
  al_tensor *us = al_tensor_view(u, 1, s3, by2, 0), *ud = al_tensor_view(u, 1, s3, by2, 4);
  st = al_copy_into(ud, us);
  const float uw[9] = {1, 2, 3, 4, 1, 6, 3, 8, 5};
  CHECK("copy_into: stride-2 views of one storage touching at one element read src first",
        !st && !memcmp(al_f32(u), uw, sizeof uw), "status %d: u[9] = %g", (int)st, al_f32(u)[8]);
  /* same offset and shape, other strides: a square matrix copied from its own transpose is
   * transposed (2x2 {1,2;3,4} -> {1,3;2,4}), not taken for x:copy_(x) and left as it was */
  int64_t s22[2] = {2, 2}, tr[2] = {1, 2};
  al_tensor *sq = al_tensor_new(AL_F32, 2, s22);
  for (int k = 0; k < 4; k++) al_f32(sq)[k] = (float)(k + 1);
  al_tensor *sqt = al_tensor_view(sq, 2, s22, tr, 0);
  st = al_copy_into(sq, sqt);
  const float sqw[4] = {1, 3, 2, 4};
  CHECK("copy_into: a 2x2 matrix from its own transpose (same offset, other strides) is transposed",
        !st && !memcmp(al_f32(sq), sqw, sizeof sqw), "status %d: %g %g %g %g", (int)st, al_f32(sq)[0], al_f32(sq)[1],
        al_f32(sq)[2], al_f32(sq)[3]);
  /* the general walker (dtypes or shapes differ) with 3 dims, so that the odometer wraps an
   * inner dim: int64 (2,3,2) = 0..11 into float32 (2,3,2), into float32 (3,4), and into a
   * float32 (2,3,2) view with strides (1,2,6), the reverse of the contiguous order: its element
   * [d0,d1,d2] is storage index d2*6 + d1*2 + d0 */
  int64_t s232[3] = {2, 3, 2}, s34[2] = {3, 4}, rev[3] = {1, 2, 6};
  al_tensor *iv = al_tensor_new(AL_I64, 3, s232), *f3 = al_tensor_new(AL_F32, 3, s232), *f34 = al_tensor_new(AL_F32, 2, s34);
  al_tensor *fb = al_tensor_zeros(AL_F32, 1, (int64_t[]){12}), *frev = al_tensor_view(fb, 3, s232, rev, 0);
  for (int k = 0; k < 12; k++) al_i64(iv)[k] = k;
  st = al_copy_into(f3, iv);
  al_status st2 = al_copy_into(f34, iv), st3 = al_copy_into(frev, iv);
  int okw = !st && !st2 && !st3;
  for (int k = 0; k < 12 && okw; k++) okw &= al_f32(f3)[k] == (float)k && al_f32(f34)[k] == (float)k;
  for (int d0 = 0; d0 < 2 && okw; d0++)
    for (int d1 = 0; d1 < 3; d1++)
      for (int d2 = 0; d2 < 2; d2++) okw &= al_f32(fb)[d2 * 6 + d1 * 2 + d0] == (float)(d0 * 6 + d1 * 2 + d2);
  CHECK("copy_into int64 (2,3,2) -> float32 (2,3,2), (3,4) and a stride-reversed view: element k is k",
        okw, "status %d %d %d", (int)st, (int)st2, (int)st3);
  al_tensor *rels2[] = {u, us, ud, sq, sqt, iv, f3, f34, fb, frev};
  for (size_t k = 0; k < sizeof rels2 / sizeof *rels2; k++) al_tensor_release(rels2[k]);

  al_tensor *rels[] = {a, p, c, big, nv, tv, src, q6, q6t, d6, f, i, odd};
  for (size_t k = 0; k < sizeof rels / sizeof *rels; k++) al_tensor_release(rels[k]);
  CHECK("copy tests leave no bytes", al_mem_live() == m0, "live %zu vs %zu", al_mem_live(), m0);
}

/* ---------------------------------------------------------------- broadcasting */
/* Reference: out[idx] = a[idx'] op b[idx''] with broadcast index mapping, in double. */
static double ref_op(al_binop op, double x, double y) {
  switch (op) {
    case AL_ADD: return (float)x + (float)y;
    case AL_SUB: return (float)x - (float)y;
    case AL_MUL: return (float)x * (float)y;
    case AL_DIV: return (float)x / (float)y;
    case AL_MAXIMUM: return x > y ? x : y;
    case AL_MINIMUM: return x < y ? x : y;
    case AL_GT: return x > y;
    case AL_LE: return x <= y;
    default: return NAN;
  }
}

static int check_binary(al_binop op, al_tensor *a, al_tensor *b, char *why, size_t nwhy) {
  al_tensor *o = NULL;
  if (al_binary(&o, op, a, b)) { snprintf(why, nwhy, "error: %s", al_errmsg()); return 0; }
  int nd = o->ndim;
  int64_t idx[AL_MAXDIM] = {0}, ia[AL_MAXDIM], ib[AL_MAXDIM];
  int ok = 1;
  if (al_numel(o) > 0) do {
    for (int d = 0; d < a->ndim; d++) { int od = d + nd - a->ndim; ia[d] = a->shape[d] == 1 ? 0 : idx[od]; }
    for (int d = 0; d < b->ndim; d++) { int od = d + nd - b->ndim; ib[d] = b->shape[d] == 1 ? 0 : idx[od]; }
    float want = (float)ref_op(op, at(a, ia), at(b, ib));
    float got = (float)at(o, idx);
    if (got != want && !(got != got && want != want)) {
      ok = 0;
      snprintf(why, nwhy, "element mismatch %g vs %g", got, want);
      break;
    }
  } while (next_index(idx, nd, o->shape));
  al_tensor_release(o);
  return ok;
}

/* A random view of a random tensor with the given logical shape: sometimes a permuted
 * or narrowed or expanded layout, so kernels see every stride pattern. */
static al_tensor *random_view(int nd, const int64_t *shape) {
  int kind = (int)(rnext() % 4);
  if (kind == 1 && nd >= 2) {   /* transposed storage */
    int64_t sh[AL_MAXDIM];
    memcpy(sh, shape, sizeof(int64_t) * nd);
    sh[nd - 1] = shape[nd - 2];
    sh[nd - 2] = shape[nd - 1];
    al_tensor *base = new_f32(nd, sh), *v = NULL;
    al_transpose(&v, base, nd - 2, nd - 1);
    al_tensor_release(base);
    return v;
  }
  if (kind == 2) {   /* narrowed from a wider tensor */
    int64_t sh[AL_MAXDIM];
    memcpy(sh, shape, sizeof(int64_t) * nd);
    sh[nd - 1] += 3;
    al_tensor *base = new_f32(nd, sh), *v = NULL;
    al_narrow(&v, base, nd - 1, 1, shape[nd - 1]);
    al_tensor_release(base);
    return v;
  }
  if (kind == 3) {   /* size-1 dims expanded where the shape allows: stride 0 */
    int64_t sh[AL_MAXDIM];
    for (int d = 0; d < nd; d++) sh[d] = (d % 2) ? 1 : shape[d];
    al_tensor *base = new_f32(nd, sh), *v = NULL;
    al_expand(&v, base, nd, shape);
    al_tensor_release(base);
    return v;
  }
  return new_f32(nd, shape);
}

static void test_broadcast(void) {
  size_t m0 = al_mem_live();
  int fails = 0, total = 0;
  char why[600] = "";
  for (int trial = 0; trial < 400; trial++) {
    int nd = 1 + (int)(rnext() % 5);
    int64_t out[AL_MAXDIM], sa[AL_MAXDIM], sb[AL_MAXDIM];
    for (int d = 0; d < nd; d++) out[d] = 1 + (int64_t)(rnext() % 4);
    int na = 1 + (int)(rnext() % nd), nb = 1 + (int)(rnext() % nd);
    if (rnext() % 2) na = nd; else nb = nd;
    for (int d = 0; d < na; d++) sa[d] = (rnext() % 3 == 0) ? 1 : out[d + nd - na];
    for (int d = 0; d < nb; d++) sb[d] = (rnext() % 3 == 0) ? 1 : out[d + nd - nb];
    al_tensor *a = random_view(na, sa), *b = random_view(nb, sb);
    static const al_binop ops[] = {AL_ADD, AL_SUB, AL_MUL, AL_DIV, AL_MAXIMUM, AL_MINIMUM, AL_GT, AL_LE};
    al_binop op = ops[rnext() % 8];
    total++;
    char w[256];
    if (!check_binary(op, a, b, w, sizeof w)) {
      if (!fails) {
        char s1[128], s2[128];
        snprintf(why, sizeof why, "%s %s op %d: %s", al_shape_str(a, s1, sizeof s1), al_shape_str(b, s2, sizeof s2), (int)op, w);
      }
      fails++;
    }
    al_tensor_release(a);
    al_tensor_release(b);
  }
  CHECK("binary ops on 400 random broadcast pairs of strided views match the index reference", fails == 0,
        "%d of %d failed; first: %s", fails, total, why);

  /* large outputs take the threaded path: same results */
  al_set_num_threads(2);
  int64_t s1[3] = {64, 1, 700}, s2[2] = {33, 700};
  al_tensor *a = random_view(3, s1), *b = random_view(2, s2);
  int ok = check_binary(AL_MUL, a, b, why, sizeof why) && check_binary(AL_SUB, b, a, why, sizeof why);
  al_set_num_threads(1);
  CHECK("threaded binary op (64,1,700) x (33,700) matches the reference", ok, "%s", why);
  al_tensor_release(a);
  al_tensor_release(b);

  /* shape inference and the error message */
  int64_t x1[2] = {2, 3}, x2[1] = {4};
  al_tensor *p = al_tensor_zeros(AL_F32, 2, x1), *q = al_tensor_zeros(AL_F32, 1, x2), *o = NULL;
  al_status st = al_add(&o, p, q);
  CHECK("non-broadcastable shapes: AL_EINVAL naming both shapes and the dim",
        st == AL_EINVAL && strstr(al_errmsg(), "(2,3)") && strstr(al_errmsg(), "(4)") && strstr(al_errmsg(), "dim 2"), "%s", al_errmsg());

  /* sum_to_shape: the adjoint of broadcasting */
  int64_t gs[3] = {2, 3, 4}, ts[2] = {3, 1};
  al_tensor *g = new_f32(3, gs), *r = NULL;
  st = al_sum_to_shape(&r, g, 2, ts);
  ok = !st && r->ndim == 2 && r->shape[0] == 3 && r->shape[1] == 1;
  for (int i = 0; i < 3 && ok; i++) {
    double s = 0;
    for (int b0 = 0; b0 < 2; b0++) for (int k = 0; k < 4; k++) s += al_f32(g)[b0 * 12 + i * 4 + k];
    ok &= fabs(al_f32(r)[i] - s) < 1e-5;
  }
  CHECK("sum_to_shape (2,3,4) -> (3,1) sums the broadcast dims", ok, "status %d", st);
  al_tensor_release(r);
  al_tensor *gt = NULL;
  al_transpose(&gt, g, 0, 2);   /* (4,3,2), strided */
  int64_t ts2[1] = {2};
  st = al_sum_to_shape(&r, gt, 1, ts2);
  ok = !st;
  for (int b0 = 0; b0 < 2 && ok; b0++) {
    double s = 0;
    for (int i = 0; i < 12; i++) s += al_f32(g)[b0 * 12 + i];
    ok &= fabs(al_f32(r)[b0] - s) < 1e-5;
  }
  CHECK("sum_to_shape of a strided gradient", ok, "status %d", st);
  al_tensor_release(r);
  /* the same (4,3,2) view summed over its last dim only (to (4,3,1)): that dim has stride 12
   * in g, and the one-sum-per-row path must walk it with that stride, not as contiguous */
  int64_t ts4[3] = {4, 3, 1};
  st = al_sum_to_shape(&r, gt, 3, ts4);
  ok = !st && r->ndim == 3 && r->shape[2] == 1;
  for (int k = 0; k < 4 && ok; k++)
    for (int i = 0; i < 3 && ok; i++) {
      double s = al_f32(g)[i * 4 + k] + al_f32(g)[12 + i * 4 + k];   /* g[0][i][k] + g[1][i][k] */
      ok &= fabs(al_f32(r)[k * 3 + i] - s) < 1e-5;
    }
  CHECK("sum_to_shape of a strided gradient over its last dim", ok, "status %d", st);
  al_tensor_release(r);
  int64_t ts3[1] = {5};
  st = al_sum_to_shape(&r, g, 1, ts3);
  CHECK("sum_to_shape to an incompatible shape is an error", st == AL_EINVAL, "status %d", st);
  al_tensor_release(g); al_tensor_release(gt); al_tensor_release(p); al_tensor_release(q);
  CHECK("broadcast tests leave no bytes", al_mem_live() == m0, "live %zu vs %zu", al_mem_live(), m0);
}

/* ---------------------------------------------------------------- backward */
static void test_backward(void) {
  size_t m0 = al_mem_live();
  /* L = sum(exp(a*b + a)) with b broadcast (3) over a (2,3):
   * dL/da = e*(b+1), dL/db = sum over rows of e*a, e = exp(a*b+a) */
  int64_t sa[2] = {2, 3}, sb[1] = {3};
  al_tensor *a = new_f32(2, sa), *b = new_f32(1, sb);
  a->requires_grad = b->requires_grad = 1;
  al_tensor *ab = NULL, *s = NULL, *e = NULL, *L = NULL;
  al_status st = al_mul(&ab, a, b);
  st |= al_add(&s, ab, a);
  st |= al_unary(&e, AL_EXP, s);
  st |= al_sum_all(&L, e);
  st |= al_backward(L, NULL, 0);
  int ok = !st && a->grad && b->grad;
  double gb[3] = {0};
  for (int i = 0; i < 2 && ok; i++)
    for (int j = 0; j < 3; j++) {
      double av = al_f32(a)[i * 3 + j], bv = al_f32(b)[j], ev = exp(av * bv + av);
      ok &= fabs(al_f32(a->grad)[i * 3 + j] - ev * (bv + 1)) < 1e-5 * (1 + ev);
      gb[j] += ev * av;
    }
  for (int j = 0; j < 3 && ok; j++) ok &= fabs(al_f32(b->grad)[j] - gb[j]) < 1e-5 * (1 + fabs(gb[j]));
  CHECK("al_backward: sum(exp(a*b + a)) with broadcasting, closed-form gradients", ok, "status %d: %s", st, st ? al_errmsg() : "");

  st = al_backward(L, NULL, 0);
  CHECK("a second backward without retain_graph is AL_ESTATE with a hint", st == AL_ESTATE && strstr(al_errmsg(), "retain_graph"),
        "status %d: %s", st, al_errmsg());
  st = al_backward(e, NULL, 0);
  CHECK("backward of a non-scalar without a gradient is AL_EINVAL naming the shape",
        st == AL_EINVAL && strstr(al_errmsg(), "(2,3)"), "status %d: %s", st, al_errmsg());
  al_tensor_release(ab); al_tensor_release(s); al_tensor_release(e); al_tensor_release(L);

  /* retain_graph: two passes accumulate exactly twice */
  al_tensor_release(a->grad);
  a->grad = NULL;
  al_tensor *sq = NULL, *L2 = NULL;
  st = al_mul(&sq, a, a);
  st |= al_sum_all(&L2, sq);
  st |= al_backward(L2, NULL, 1);
  st |= al_backward(L2, NULL, 0);
  ok = !st;
  for (int i = 0; i < 6 && ok; i++) ok &= al_f32(a->grad)[i] == 4 * al_f32(a)[i];
  CHECK("retain_graph: two backward passes of sum(a*a) give exactly 4a", ok, "status %d", st);
  al_tensor_release(sq); al_tensor_release(L2);

  /* a saved tensor changed in place (and marked) after its use: the pass is refused before
   * any backward runs, so no gradient moves */
  al_tensor_release(a->grad);
  a->grad = NULL;
  st = al_mul(&sq, a, a);
  st |= al_sum_all(&L2, sq);
  al_fill(a, 2.0);
  al_tensor_mark_modified(a);
  st |= al_backward(L2, NULL, 0);
  CHECK("a saved tensor marked modified after its use: al_backward is AL_ESTATE naming the op, a->grad untouched",
        st == AL_ESTATE && strstr(al_errmsg(), "backward of mul") && strstr(al_errmsg(), "changed in place") && !a->grad,
        "status %d: %s", st, al_errmsg());
  al_tensor_release(sq); al_tensor_release(L2);

  /* explicit gradient, a view used twice, grad mode off */
  al_tensor_release(a->grad);
  a->grad = NULL;
  al_tensor *row = NULL, *col = NULL, *y = NULL;
  st = al_select(&row, a, 0, 1);          /* a[2,:] */
  st |= al_narrow(&col, a, 1, 0, 1);      /* a[:,1:1] (2,1) */
  al_tensor *rs = NULL, *cs = NULL;
  st |= al_sum_all(&rs, row);
  st |= al_sum_all(&cs, col);
  st |= al_mul(&y, rs, cs);               /* (sum row2) * (sum col1) */
  al_tensor *g = al_tensor_new(AL_F32, 0, NULL);
  al_f32(g)[0] = 2.0f;
  st |= al_backward(y, g, 0);
  double R = al_f32(a)[3] + al_f32(a)[4] + al_f32(a)[5], C = al_f32(a)[0] + al_f32(a)[3];
  double want[6] = {2 * R, 0, 0, 2 * (C + R), 2 * C, 2 * C};
  ok = !st;
  for (int i = 0; i < 6 && ok; i++) ok &= fabs(al_f32(a->grad)[i] - want[i]) < 1e-5;
  CHECK("overlapping views (select and narrow) with an explicit gradient", ok, "status %d", st);
  al_tensor_release(row); al_tensor_release(col); al_tensor_release(rs); al_tensor_release(cs);
  al_tensor_release(y); al_tensor_release(g);

  al_set_grad_enabled(0);
  al_tensor *nog = NULL;
  st = al_unary(&nog, AL_TANH, a);
  CHECK("grad mode off: no node, no requires_grad", !st && !nog->grad_fn && !nog->requires_grad, "");
  al_set_grad_enabled(1);
  al_tensor_release(nog);

  /* matmul (1-D @ 2-D) and layer_norm through the engine against double loops */
  int64_t sv[1] = {4}, sm[2] = {4, 3};
  al_tensor *v = new_f32(1, sv), *m = new_f32(2, sm), *mv = NULL, *Lm = NULL;
  v->requires_grad = m->requires_grad = 1;
  st = al_matmul(&mv, v, m);
  st |= al_sum_all(&Lm, mv);
  st |= al_backward(Lm, NULL, 0);
  ok = !st && mv->ndim == 1 && mv->shape[0] == 3;
  for (int k = 0; k < 4 && ok; k++) {
    double gv = al_f32(m)[k * 3] + al_f32(m)[k * 3 + 1] + al_f32(m)[k * 3 + 2];
    ok &= fabs(al_f32(v->grad)[k] - gv) < 1e-5;
    for (int j = 0; j < 3; j++) ok &= fabs(al_f32(m->grad)[k * 3 + j] - al_f32(v)[k]) < 1e-6;
  }
  CHECK("matmul (4) @ (4,3): shape (3) and gradients", ok, "status %d", st);
  al_tensor_release(mv); al_tensor_release(Lm); al_tensor_release(v); al_tensor_release(m);

  al_tensor_release(a);
  al_tensor_release(b);
  CHECK("backward tests leave no bytes (graphs, saved tensors, grads freed)", al_mem_live() == m0,
        "live %zu vs %zu", al_mem_live(), m0);
}

/* ---------------------------------------------------------------- hand-made nodes */
/* Backward functions for nodes made with al_node_new, to reach the engine's own checks without
 * a buggy op: bw_pass hands gout on to every input that needs it (inputs of gout's shape),
 * bw_fails fails while fail_now is set and passes otherwise, bw_bad_shape answers a (2,3)
 * input with a (3,2) gradient of ones. */
static int fail_now;
static al_status bw_pass(al_node *n, al_tensor *g, al_tensor **gin) {
  for (int i = 0; i < n->ninputs; i++) if (n->in[i].needs) gin[i] = al_tensor_retain(g);
  return AL_OK;
}
static al_status bw_fails(al_node *n, al_tensor *g, al_tensor **gin) {
  if (fail_now) return al_seterr(AL_ENUM, "made to fail");
  return bw_pass(n, g, gin);
}
static al_status bw_bad_shape(al_node *n, al_tensor *g, al_tensor **gin) {
  int64_t s32[2] = {3, 2};
  gin[0] = al_tensor_new(AL_F32, 2, s32);
  if (!gin[0]) return AL_ENOMEM;
  al_fill(gin[0], 1.0);
  return AL_OK;
}
/* out = a new tensor of the given shape recorded as node `name` over ins (n of them) */
static al_tensor *hand_node(const char *name, al_backward_fn bw, int n, al_tensor **ins, int ndim, const int64_t *shape) {
  al_status st;
  al_node *nd = al_node_new(name, bw, n, ins, &st);
  al_tensor *out = al_tensor_zeros(AL_F32, ndim, shape);
  if (nd && out) al_node_attach(nd, out);
  else al_node_release(nd);
  return out;
}

static void test_hand_nodes(void) {
  size_t m0 = al_mem_live();
  /* a backward whose gradient has the input's ndim but not its shape is refused: the leaf
   * (2,3) would otherwise take a (3,2) .grad */
  int64_t s23[2] = {2, 3};
  al_tensor *x = al_tensor_zeros(AL_F32, 2, s23);
  x->requires_grad = 1;
  al_tensor *y = hand_node("bad_shape", bw_bad_shape, 1, &x, 2, s23);
  al_tensor *g = al_tensor_new(AL_F32, 2, s23);
  al_fill(g, 1.0);
  al_status st = al_backward(y, g, 0);
  CHECK("backward: a (3,2) gradient for a (2,3) input is AL_ESTATE naming both, the leaf gets no .grad",
        st == AL_ESTATE && strstr(al_errmsg(), "(3,2)") && strstr(al_errmsg(), "(2,3)") && !x->grad,
        "status %d: %s; grad %s", (int)st, al_errmsg(), x->grad ? "set" : "none");
  al_tensor_release(y); al_tensor_release(g); al_tensor_release(x);

  /* root = join(A(x), C(x)), x of shape (2): the reverse pass runs join (A and C each receive
   * the seed), then C, which fails. A's pending gradient must be dropped with the failure, or
   * the retry adds it again: dx = 1 (via A) + 1 (via C) = 2, not 3. */
  int64_t s2[1] = {2};
  al_tensor *w = al_tensor_zeros(AL_F32, 1, s2);
  w->requires_grad = 1;
  al_tensor *A = hand_node("A", bw_pass, 1, &w, 1, s2), *C = hand_node("C", bw_fails, 1, &w, 1, s2);
  al_tensor *ins[2] = {A, C};
  al_tensor *root = hand_node("join", bw_pass, 2, ins, 1, s2);
  al_tensor *seed = al_tensor_new(AL_F32, 1, s2);
  al_fill(seed, 1.0);
  fail_now = 1;
  st = al_backward(root, seed, 1);
  CHECK("backward: a failing node's error names it, and no gradient reached the leaf",
        st == AL_ENUM && strstr(al_errmsg(), "backward of C") && !w->grad, "status %d: %s", (int)st, al_errmsg());
  fail_now = 0;
  st = al_backward(root, seed, 0);
  CHECK("backward retried after a failure: dx = 2 per element (no gradient left over from the failed pass)",
        st == AL_OK && w->grad && al_f32(w->grad)[0] == 2 && al_f32(w->grad)[1] == 2, "status %d: %s; %g",
        (int)st, al_errmsg(), w->grad ? al_f32(w->grad)[0] : -1.0);
  al_tensor_release(root); al_tensor_release(A); al_tensor_release(C); al_tensor_release(seed); al_tensor_release(w);
  CHECK("hand-made node tests leave no bytes", al_mem_live() == m0, "live %zu vs %zu", al_mem_live(), m0);
}

/* ---------------------------------------------------------------- empty tensors */
static void test_empty(void) {
  size_t m0 = al_mem_live();
  int64_t z[2] = {0, 3};
  al_tensor *e = al_tensor_zeros(AL_F32, 2, z), *o = NULL, *s = NULL;
  al_set_num_threads(2);
  al_status st = al_unary(&o, AL_EXP, e);   /* the parallel loop must not step by 0 */
  st |= al_affine(&s, e, 2, 1);
  al_set_num_threads(1);
  CHECK("unary and affine of an empty tensor", !st && al_numel(o) == 0 && al_numel(s) == 0, "status %d", st);
  al_tensor_release(o); al_tensor_release(s);
  st = al_sum_dim(&o, e, 0, 0);
  CHECK("sum over the empty dim is zeros (3)", !st && o->shape[0] == 3 && al_f32(o)[0] == 0 && al_f32(o)[2] == 0, "");
  al_tensor_release(o);
  al_tensor_release(e);
  CHECK("empty tensor tests leave no bytes", al_mem_live() == m0, "live %zu vs %zu", al_mem_live(), m0);
}

/* ------------------------------ int64 clamp, where and masked_fill: int64 out, exactly */
/* 2^24 + 1 has no float32: through float32 (as both ops went before) it came back as 2^24. */
static void test_int64_select(void) {
  size_t m0 = al_mem_live();
  int64_t s4[1] = {4}, big = (1LL << 24) + 1;
  al_tensor *i = al_tensor_new(AL_I64, 1, s4), *o = NULL;
  int64_t *pi = al_i64(i);
  pi[0] = -3; pi[1] = 1; pi[2] = 2; pi[3] = big;
  al_status st = al_clamp(&o, i, 1, INFINITY);
  CHECK("clamp: int64 with whole bounds is int64, exact above 2^24",
        !st && o->dtype == AL_I64 && al_i64(o)[0] == 1 && al_i64(o)[2] == 2 && al_i64(o)[3] == big, "status %d", (int)st);
  al_tensor_release(o);
  st = al_clamp(&o, i, -1e300, 0);
  CHECK("clamp: a bound beyond int64 clamps nothing on its side",
        !st && o->dtype == AL_I64 && al_i64(o)[0] == -3 && al_i64(o)[3] == 0, "status %d", (int)st);
  al_tensor_release(o);
  st = al_clamp(&o, i, 0.5, INFINITY);
  CHECK("clamp: a fractional bound gives float32", !st && o->dtype == AL_F32 && al_f32(o)[0] == 0.5f, "status %d", (int)st);
  al_tensor_release(o);
  al_tensor *cond = al_tensor_zeros(AL_F32, 1, s4), *zero = al_tensor_zeros(AL_I64, 0, NULL);
  al_f32(cond)[3] = 1;
  al_f32(cond)[1] = 2;
  st = al_where(&o, cond, i, zero);
  CHECK("where: two int64 operands (one broadcast) give int64, exact above 2^24",
        !st && o->dtype == AL_I64 && al_i64(o)[0] == 0 && al_i64(o)[1] == 1 && al_i64(o)[2] == 0 && al_i64(o)[3] == big,
        "status %d", (int)st);
  al_tensor_release(o);
  al_tensor *fzero = al_tensor_zeros(AL_F32, 0, NULL);
  st = al_where(&o, cond, i, fzero);
  CHECK("where: an int64 and a float32 operand give float32", !st && o->dtype == AL_F32 && al_f32(o)[1] == 1.0f,
        "status %d", (int)st);
  al_tensor_release(o);
  st = al_masked_fill(&o, i, cond, -1);
  CHECK("masked_fill: an int64 x and a whole value give int64",
        !st && o->dtype == AL_I64 && al_i64(o)[0] == -3 && al_i64(o)[1] == -1 && al_i64(o)[2] == 2 && al_i64(o)[3] == -1,
        "status %d", (int)st);
  al_tensor_release(o);
  al_tensor_release(fzero); al_tensor_release(zero); al_tensor_release(cond); al_tensor_release(i);
  CHECK("int64 clamp, where and masked_fill leave no bytes", al_mem_live() == m0, "live %zu vs %zu", al_mem_live(), m0);

  /* max_dim / min_dim of int64 (4): a tied extreme gives the FIRST index, as the float32
   * path (and PyTorch) does; {3, 7, 7, 1}: max 7 at 1, {5, 2, 9, 2}: min 2 at 1 */
  al_tensor *t = al_tensor_new(AL_I64, 1, s4), *ix = NULL;
  int64_t *pt = al_i64(t);
  pt[0] = 3; pt[1] = 7; pt[2] = 7; pt[3] = 1;
  st = al_max_dim(&o, &ix, t, 0, 0);
  CHECK("max_dim of int64 with a tie: the first index", !st && al_i64(o)[0] == 7 && al_i64(ix)[0] == 1,
        "status %d, index %lld", (int)st, st ? -1LL : (long long)al_i64(ix)[0]);
  al_tensor_release(o); al_tensor_release(ix);
  pt[0] = 5; pt[1] = 2; pt[2] = 9; pt[3] = 2;
  st = al_min_dim(&o, &ix, t, 0, 0);
  CHECK("min_dim of int64 with a tie: the first index", !st && al_i64(o)[0] == 2 && al_i64(ix)[0] == 1,
        "status %d, index %lld", (int)st, st ? -1LL : (long long)al_i64(ix)[0]);
  al_tensor_release(o); al_tensor_release(ix); al_tensor_release(t);
  /* float32 (4) {NaN, 1, NaN, 2}: NaN wins and the index is that of the first NaN (0), as in
   * PyTorch; the scan stops there, a later NaN does not take over */
  al_tensor *fx = al_tensor_new(AL_F32, 1, s4);
  al_f32(fx)[0] = NAN; al_f32(fx)[1] = 1; al_f32(fx)[2] = NAN; al_f32(fx)[3] = 2;
  st = al_max_dim(&o, &ix, fx, 0, 0);
  CHECK("max_dim with NaN first and later: NaN at the first index", !st && isnan(al_f32(o)[0]) && al_i64(ix)[0] == 0,
        "status %d, index %lld", (int)st, st ? -1LL : (long long)al_i64(ix)[0]);
  al_tensor_release(o); al_tensor_release(ix);
  /* float32 (2,4), reduced over dim 1: ties give the first index too */
  int64_t s24[2] = {2, 4};
  al_tensor *f2 = al_tensor_new(AL_F32, 2, s24);
  const float v24[8] = {5, 2, 9, 2, 3, 7, 7, 1};
  memcpy(al_f32(f2), v24, sizeof v24);
  al_tensor *o2 = NULL, *ix2 = NULL;
  st = al_min_dim(&o, &ix, f2, 1, 0);
  if (!st) st = al_max_dim(&o2, &ix2, f2, -1, 1);
  CHECK("min_dim / max_dim of float32 with ties: the first index",
        !st && al_f32(o)[0] == 2 && al_i64(ix)[0] == 1 && al_f32(o)[1] == 1 && al_i64(ix)[1] == 3 &&
        o2->ndim == 2 && o2->shape[1] == 1 && al_f32(o2)[1] == 7 && al_i64(ix2)[0] == 2 && al_i64(ix2)[1] == 1,
        "status %d", (int)st);
  al_tensor_release(o); al_tensor_release(ix); al_tensor_release(o2); al_tensor_release(ix2);
  al_tensor_release(f2); al_tensor_release(fx);
  CHECK("max_dim / min_dim ties leave no bytes", al_mem_live() == m0, "live %zu vs %zu", al_mem_live(), m0);

  /* al_fill_i64: exact beyond 2^53 (al_fill's double rounds 2^53 + 1 to 2^53), into a strided
   * view too; into float32 it rounds as a float */
  int64_t s23[2] = {2, 3}, huge = (1LL << 53) + 1;
  al_tensor *m = al_tensor_zeros(AL_I64, 2, s23), *col = NULL, *f = al_tensor_zeros(AL_F32, 1, s4);
  al_fill_i64(m, huge);
  st = al_narrow(&col, m, 1, 1, 1);
  if (!st) al_fill_i64(col, -huge);
  CHECK("fill_i64: exact beyond 2^53, contiguous and strided",
        !st && al_i64(m)[0] == huge && al_i64(m)[1] == -huge && al_i64(m)[4] == -huge && al_i64(m)[5] == huge,
        "status %d, %lld %lld", (int)st, (long long)al_i64(m)[0], (long long)al_i64(m)[1]);
  al_fill_i64(f, 3);
  CHECK("fill_i64 into float32", al_f32(f)[0] == 3.0f && al_f32(f)[3] == 3.0f, "%g", al_f32(f)[0]);
  al_tensor_release(col); al_tensor_release(m); al_tensor_release(f);
  CHECK("fill_i64 leaves no bytes", al_mem_live() == m0, "live %zu vs %zu", al_mem_live(), m0);
}

/* ------------------------------------------------- bad arguments of the C API (a probe's finds) */
/* Each used to return OK with a view past its storage, write past shape[], read a float's bits
 * as an int64, divide by zero, or copy through overlapping memory; now an error naming it, or
 * (overlap) the result of a copy through a temporary. */
static void test_bad_arguments(void) {
  int64_t s12[1] = {12};
  al_tensor *x = al_tensor_new(AL_F32, 1, s12), *o = NULL;
  float *px = al_f32(x);
  for (int i = 0; i < 12; i++) px[i] = (float)i;
  int64_t wrap[2] = {(1LL << 62) + 3, 4};   /* the product wraps to 12 */
  al_status st = al_reshape(&o, x, 2, wrap);
  CHECK("reshape: a shape whose product wraps to numel is refused", st == AL_EINVAL && !o && strstr(al_errmsg(), "reshape"),
        "status %d: %s", (int)st, al_errmsg());
  st = al_narrow(&o, x, 0, INT64_MAX, 2);
  CHECK("narrow: start + length past INT64_MAX is refused", st == AL_EINVAL && !o, "status %d: %s", (int)st, al_errmsg());
  st = al_binary(&o, (al_binop)99, x, x);
  CHECK("binary: an op outside the enum is refused", st == AL_EINVAL && !o && strstr(al_errmsg(), "unknown op"),
        "status %d: %s", (int)st, al_errmsg());
  int64_t sh[9] = {1, 1, 1, 1, 1, 1, 1, 1, 12}, sd[9] = {12, 12, 12, 12, 12, 12, 12, 12, 1};
  al_tensor *v = al_tensor_view(x, 9, sh, sd, 0);
  CHECK("tensor_view: 9 dims are refused (shape[] holds 8)", v == NULL && strstr(al_errmsg(), "at most"), "%s", al_errmsg());
  CHECK("tensor_new: an unknown dtype is refused", al_tensor_new((al_dtype)5, 1, s12) == NULL, "");
  st = al_to_dtype(&o, x, (al_dtype)7);
  CHECK("to_dtype: an unknown dtype is refused", st == AL_EINVAL && !o, "status %d", (int)st);
  al_tensor *ix = al_tensor_zeros(AL_I64, 1, s12);
  st = al_accumulate(ix, x);
  CHECK("accumulate: a float32 gradient into an int64 tensor is refused", st == AL_EINVAL && strstr(al_errmsg(), "float32"),
        "status %d: %s", (int)st, al_errmsg());
  int64_t r[3] = {7, 7, 7};
  al_rng g;
  al_rng_seed(&g, 1);
  st = al_rng_randint(&g, r, 3, 0);
  CHECK("rng_randint: n = 0 is refused, nothing drawn", st == AL_EINVAL && r[0] == 7, "status %d", (int)st);
  /* overlapping views of one storage: x[2..8] = x[1..7] reads every source element first */
  int64_t s7[1] = {7}, st1[1] = {1};
  al_tensor *src = al_tensor_view(x, 1, s7, st1, 1), *dst = al_tensor_view(x, 1, s7, st1, 2);
  st = al_copy_into(dst, src);
  int ok = st == AL_OK;
  for (int i = 0; i < 12; i++) ok = ok && px[i] == (float)(i >= 2 && i <= 8 ? i - 1 : i);
  CHECK("copy_into: a slice shifted into itself copies as memmove does", ok, "status %d, x[8] = %g", (int)st, px[8]);
  st = al_copy_into(src, src);
  CHECK("copy_into: a view into itself is a no-op", st == AL_OK && px[3] == 2.0f, "status %d", (int)st);
  /* messages that name the argument at fault */
  int64_t neg[1] = {-12};
  st = al_sum_to_shape(&o, x, 1, neg);
  CHECK("sum_to_shape: a negative target size is EINVAL, named (was AL_ENOMEM)",
        st == AL_EINVAL && !o && strstr(al_errmsg(), "negative size"), "status %d: %s", (int)st, al_errmsg());
  al_tensor *s0 = al_tensor_zeros(AL_F32, 0, NULL), *pair[2] = {s0, s0};
  st = al_cat(&o, pair, 2, 0);
  CHECK("cat: 0-dim tensors are refused by cat itself (the message said narrow)",
        st == AL_EINVAL && !o && strstr(al_errmsg(), "cat: tensor 1 is 0-dim"), "status %d: %s", (int)st, al_errmsg());
  int64_t s2x12[2] = {2, 12}, s2[1] = {2};
  al_tensor *w = al_tensor_zeros(AL_F32, 2, s2x12), *ib = al_tensor_zeros(AL_I64, 1, s2);
  st = al_linear(&o, x, w, ib);
  CHECK("linear: an int64 bias is refused, and the message shows it",
        st == AL_EINVAL && !o && strstr(al_errmsg(), "bias int64"), "status %d: %s", (int)st, al_errmsg());
  al_tensor_release(w); al_tensor_release(ib); al_tensor_release(s0);
  al_tensor_release(src); al_tensor_release(dst); al_tensor_release(ix); al_tensor_release(x);
}

/* A NULL tensor, out slot or list where an op needs one: AL_EINVAL naming the op and the
 * argument (base.h's convention), before anything is touched. They all dereferenced it. */
static int refused_null(al_status st, const char *op, const char *what) {
  char want[96];
  snprintf(want, sizeof want, "%s: %s is NULL", op, what);
  return st == AL_EINVAL && strstr(al_errmsg(), want) != NULL;
}

static void test_null_arguments(void) {
  size_t m0 = al_mem_live();
  int64_t s23[2] = {2, 3}, s3[1] = {3}, s2[1] = {2}, s32[2] = {3, 2};
  al_tensor *a = al_tensor_zeros(AL_F32, 2, s23), *v = al_tensor_zeros(AL_F32, 1, s3), *lab = al_tensor_zeros(AL_I64, 1, s2);
  al_tensor *o = NULL, *o2 = NULL, *N = NULL;
  int perm[2] = {1, 0}, bad = 0;
  char first[160] = "";
#define NUL(call, op, what) do { al_status st_ = (call); \
    if (!refused_null(st_, op, what) && !bad++) snprintf(first, sizeof first, "%s -> %d: %s", #call, (int)st_, al_errmsg()); } while (0)
  NUL(al_add(NULL, a, a), "add", "out");
  NUL(al_mul(&o, N, a), "mul", "a");
  NUL(al_div(&o, a, N), "div", "b");
  NUL(al_where(&o, N, a, a), "where", "cond");
  NUL(al_where(&o, a, a, N), "where", "b");
  NUL(al_unary(&o, AL_EXP, N), "unary", "x");
  NUL(al_affine(&o, N, 2, 1), "affine", "x");
  NUL(al_pow_scalar(&o, N, 2), "pow", "x");
  NUL(al_rpow_scalar(&o, 2, N), "pow", "x");
  NUL(al_clamp(&o, N, 0, 1), "clamp", "x");
  NUL(al_to_dtype(&o, N, AL_I64), "to_dtype", "x");
  NUL(al_sum_all(NULL, a), "sum", "out");
  NUL(al_mean_all(&o, N), "mean", "x");
  NUL(al_sum_dim(&o, N, 0, 0), "sum", "x");
  NUL(al_max_dim(&o, &o2, N, 0, 0), "max", "x");
  NUL(al_min_all(NULL, a), "min", "out");
  NUL(al_var_dim(&o, N, 0, 0, 1), "var", "x");
  NUL(al_sum_to_shape(&o, N, 1, s3), "sum_to_shape", "g");
  NUL(al_sum_to_shape(&o, a, 2, NULL), "sum_to_shape", "shape");
  NUL(al_reshape(&o, N, 1, s3), "reshape", "x");
  NUL(al_reshape(&o, a, 2, NULL), "reshape", "shape");
  NUL(al_permute(&o, N, perm), "permute", "x");
  NUL(al_permute(&o, a, NULL), "permute", "perm");
  NUL(al_transpose(&o, N, 0, 1), "transpose", "x");
  NUL(al_narrow(&o, N, 0, 0, 1), "narrow", "x");
  NUL(al_select(&o, N, 0, 0), "select", "x");
  NUL(al_expand(&o, N, 2, s23), "expand", "x");
  NUL(al_expand(&o, v, 2, NULL), "expand", "shape");
  NUL(al_squeeze(&o, N, 0), "squeeze", "x");
  NUL(al_unsqueeze(&o, N, 0), "unsqueeze", "x");
  NUL(al_contiguous(&o, N), "contiguous", "x");
  NUL(al_clone(&o, N), "clone", "x");
  NUL(al_cat(&o, NULL, 2, 0), "cat", "the tensor list");
  NUL(al_cat(&o, (al_tensor *[]){a, N}, 2, 0), "cat", "tensor 2");
  NUL(al_stack(&o, (al_tensor *[]){N, a}, 2, 0), "stack", "tensor 1");
  NUL(al_index_select(&o, a, 0, N), "index_select", "idx");
  NUL(al_gather(&o, N, 0, lab), "gather", "x");
  NUL(al_embedding(&o, N, lab), "embedding", "weight");
  NUL(al_masked_fill(&o, a, N, 0), "masked_fill", "mask");
  NUL(al_matmul(&o, N, a), "matmul", "a");
  NUL(al_matmul(&o, a, N), "matmul", "b");
  NUL(al_linear(&o, a, N, NULL), "linear", "weight");
  NUL(al_layer_norm(&o, N, NULL, NULL, 1e-5), "layer_norm", "x");
  NUL(al_log_softmax(&o, N, 0), "log_softmax", "x");
  NUL(al_cross_entropy(&o, a, N, 0, -1), "cross_entropy", "labels");
  NUL(al_mse(&o, a, N), "mse", "b");
  NUL(al_dropout(&o, N, 0.5, NULL), "dropout", "x");
  NUL(al_normalize(&o, AL_NORM_SOFTMAX, N, -1, NULL, 0, NULL, 0, 0), "normalize", "x");
  al_attention_opts ao = {.heads = 1, .scale = 1, .kind = AL_NORM_SOFTMAX};
  NUL(al_attention(&o, NULL, N, &ao), "attention", "qkv");
  NUL(al_attention(&o, NULL, a, NULL), "attention", "opts");
  NUL(al_bilstm_op(&o, N, NULL, NULL, 1), "bilstm", "x");
  NUL(al_bimamba_op(&o, a, NULL, NULL, 1, 4, 1, 2), "bimamba", "params");
  NUL(al_contiguous_ref(&o, N), "contiguous", "t");
  NUL(al_copy_into(a, N), "copy", "src");
  NUL(al_copy_into(N, a), "copy", "dst");
  NUL(al_accumulate(N, a), "accumulate", "dst");
  NUL(al_backward(N, NULL, 0), "backward", "the tensor");
#undef NUL
  CHECK("ops, copies and backward refuse a NULL tensor or out slot with AL_EINVAL naming it", !bad, "%d wrong, first: %s", bad, first);
  CHECK("tensor_new: a NULL shape for 2 dims is refused", !al_tensor_new(AL_F32, 2, NULL) && strstr(al_errmsg(), "shape is NULL"),
        "%s", al_errmsg());
  CHECK("tensor_view: a NULL source is refused", !al_tensor_view(NULL, 2, s23, s32, 0) && strstr(al_errmsg(), "NULL"), "%s", al_errmsg());
  /* max_dim may be asked for the values or the indices alone */
  al_status st = al_max_dim(NULL, &o2, a, 1, 0);
  CHECK("max_dim: indices alone (values NULL) is fine", st == AL_OK && o2 && o2->dtype == AL_I64, "status %d: %s", (int)st, al_errmsg());
  al_tensor_release(o2);
  al_tensor_release(a); al_tensor_release(v); al_tensor_release(lab);
  CHECK("NULL refusals leave no bytes", al_mem_live() == m0, "live %zu vs %zu", al_mem_live(), m0);
}

/* Edges that returned garbage or wrong values without an error. */
static void test_argument_edges(void) {
  size_t m0 = al_mem_live();
  /* index_select on a 0-dim x: its result is 0-dim (one element), so there is room for exactly
   * one index. Three indices wrote two floats past the output; none returned it uninitialised. */
  al_tensor *x = al_tensor_new(AL_F32, 0, NULL), *o = NULL;
  al_f32(x)[0] = 5;
  int64_t s3[1] = {3}, s0[1] = {0};
  al_tensor *i3 = al_tensor_zeros(AL_I64, 1, s3), *i0 = al_tensor_zeros(AL_I64, 1, s0);
  al_status st = al_index_select(&o, x, 0, i3);
  CHECK("index_select: a 0-dim tensor with 3 indices is refused (wrote past its 1-element result)",
        st == AL_EINVAL && !o && strstr(al_errmsg(), "exactly one index"), "status %d: %s", (int)st, al_errmsg());
  st = al_index_select(&o, x, 0, i0);
  CHECK("index_select: a 0-dim tensor with no index is refused (returned an uninitialised value)",
        st == AL_EINVAL && !o, "status %d: %s", (int)st, al_errmsg());
  int64_t s1[1] = {1};
  al_tensor *i1 = al_tensor_zeros(AL_I64, 1, s1);
  st = al_index_select(&o, x, 0, i1);
  CHECK("index_select: a 0-dim tensor with one index gives its value", st == AL_OK && o && o->ndim == 0 && al_f32(o)[0] == 5,
        "status %d: %s", (int)st, al_errmsg());
  al_tensor_release(o); o = NULL;
  al_tensor_release(x); al_tensor_release(i3); al_tensor_release(i0); al_tensor_release(i1);

  /* backward with an int64 gradient: the hand-written backwards read gout as float32, so
   * log_softmax's gradient came out as the bits of the integers read as floats (zeros) */
  int64_t s23[2] = {2, 3};
  al_tensor *w = al_tensor_new(AL_F32, 2, s23), *gi = al_tensor_zeros(AL_I64, 2, s23), *y = NULL;
  for (int i = 0; i < 6; i++) { al_f32(w)[i] = (float)i; al_i64(gi)[i] = i % 2; }
  w->requires_grad = 1;
  st = al_log_softmax(&y, w, 1);
  if (!st) st = al_backward(y, gi, 0);
  CHECK("backward: an int64 gradient is refused (it was read as float32 bits)",
        st == AL_EINVAL && !w->grad && strstr(al_errmsg(), "float32"), "status %d: %s", (int)st, al_errmsg());
  al_tensor_release(y); al_tensor_release(gi); al_tensor_release(w);

  /* accumulate into a view that overlaps its source: dst += src as if src were read first */
  int64_t s5[1] = {5}, s4[1] = {4}, st1[1] = {1};
  al_tensor *b = al_tensor_new(AL_F32, 1, s5);
  for (int i = 0; i < 5; i++) al_f32(b)[i] = (float)(i + 1);
  al_tensor *dst = al_tensor_view(b, 1, s4, st1, 1), *src = al_tensor_view(b, 1, s4, st1, 0);
  st = al_accumulate(dst, src);
  const float *pb = al_f32(b);
  CHECK("accumulate: b[2..5] += b[1..4] on one storage gives 1 3 5 7 9 (read src in full first)",
        st == AL_OK && pb[0] == 1 && pb[1] == 3 && pb[2] == 5 && pb[3] == 7 && pb[4] == 9,
        "status %d: %g %g %g %g %g", (int)st, pb[0], pb[1], pb[2], pb[3], pb[4]);
  st = al_accumulate(b, b);
  CHECK("accumulate: a tensor into itself doubles it", st == AL_OK && pb[4] == 18, "status %d: %g", (int)st, pb[4]);
  /* into a transposed (non-contiguous) dst, element by element: dst = {{1,3},{2,4}} (storage
   * 1 2 3 4) += {{10,20},{30,40}} gives {{11,23},{32,44}}, storage 11 32 23 44 (adding in
   * storage order gave 11 22 33 44) */
  int64_t s22a[2] = {2, 2}, trs[2] = {1, 2};
  al_tensor *gb = al_tensor_new(AL_F32, 2, s22a), *gs = al_tensor_new(AL_F32, 2, s22a);
  for (int k = 0; k < 4; k++) { al_f32(gb)[k] = (float)(k + 1); al_f32(gs)[k] = (float)(10 * (k + 1)); }
  al_tensor *gt = al_tensor_view(gb, 2, s22a, trs, 0);
  st = al_accumulate(gt, gs);
  const float gw[4] = {11, 32, 23, 44};
  CHECK("accumulate: into a transposed view, by position", st == AL_OK && !memcmp(al_f32(gb), gw, sizeof gw),
        "status %d: storage %g %g %g %g", (int)st, al_f32(gb)[0], al_f32(gb)[1], al_f32(gb)[2], al_f32(gb)[3]);
  al_tensor_release(gt); al_tensor_release(gb); al_tensor_release(gs);
  al_tensor_release(dst); al_tensor_release(src); al_tensor_release(b);

  /* where and masked_fill read cond/mask: a contiguous float32 one was mapped to 0/1 in place */
  int64_t s4b[1] = {4};
  al_tensor *c = al_tensor_new(AL_F32, 1, s4b), *one = al_tensor_new(AL_F32, 0, NULL), *zero = al_tensor_zeros(AL_F32, 0, NULL);
  const float cv[4] = {0.5f, -2, 0, 3};
  memcpy(al_f32(c), cv, sizeof cv);
  al_f32(one)[0] = 1;
  st = al_where(&o, c, one, zero);
  CHECK("where: a float32 cond is left as it was", st == AL_OK && !memcmp(al_f32(c), cv, sizeof cv) &&
        al_f32(o)[0] == 1 && al_f32(o)[2] == 0, "status %d, cond %g %g %g %g", (int)st, al_f32(c)[0], al_f32(c)[1], al_f32(c)[2], al_f32(c)[3]);
  al_tensor_release(o); o = NULL;
  al_tensor *z4 = al_tensor_zeros(AL_F32, 1, s4b);
  st = al_masked_fill(&o, z4, c, 9);
  al_tensor_release(z4);
  CHECK("masked_fill: a float32 mask is left as it was", st == AL_OK && !memcmp(al_f32(c), cv, sizeof cv) && al_f32(o)[1] == 9 &&
        al_f32(o)[2] == 0, "status %d, mask %g %g", (int)st, al_f32(c)[0], al_f32(c)[1]);
  al_tensor_release(o); o = NULL;
  al_tensor_release(c); al_tensor_release(one); al_tensor_release(zero);

  /* bimamba's d_state, dt_rank, d_conv: checked before the parameter shapes are made from them
   * (R + 2N overflowed int64 for N = INT64_MAX) */
  int64_t sxz[3] = {1, 2, 8};
  al_tensor *xz = al_tensor_zeros(AL_F32, 3, sxz), *mp[14] = {0};
  st = al_bimamba_op(&o, xz, mp, NULL, 1, INT64_MAX, 1, 2);
  CHECK("bimamba: d_state = INT64_MAX is refused by name", st == AL_EINVAL && !o && strstr(al_errmsg(), "d_state"),
        "status %d: %s", (int)st, al_errmsg());
  st = al_bimamba_op(&o, xz, mp, NULL, 1, 4, 1, 0);
  CHECK("bimamba: d_conv = 0 is refused by name", st == AL_EINVAL && !o && strstr(al_errmsg(), "d_conv 0"),
        "status %d: %s", (int)st, al_errmsg());
  al_tensor_release(xz);

  /* sum_to_shape with a negative dim count: AL_EINVAL naming sum_to_shape (was AL_ENOMEM, "tensor:") */
  al_tensor *g = al_tensor_zeros(AL_F32, 2, s23);
  st = al_sum_to_shape(&o, g, -1, s23);
  CHECK("sum_to_shape: -1 dims is AL_EINVAL naming sum_to_shape", st == AL_EINVAL && !o && strstr(al_errmsg(), "sum_to_shape"),
        "status %d: %s", (int)st, al_errmsg());
  st = al_sum_to_shape(&o, g, 0, NULL);
  CHECK("sum_to_shape: to 0 dims (a NULL shape) sums everything", st == AL_OK && o && o->ndim == 0, "status %d: %s", (int)st, al_errmsg());
  al_tensor_release(o); al_tensor_release(g);
  CHECK("argument edges leave no bytes", al_mem_live() == m0, "live %zu vs %zu", al_mem_live(), m0);
}

int main(void) {
  al_set_num_threads(1);
  test_bad_arguments();
  test_null_arguments();
  test_argument_edges();
  test_lifetime();
  test_copy_into();
  test_broadcast();
  test_backward();
  test_hand_nodes();
  test_empty();
  test_int64_select();
  CHECK_EXIT();
}
