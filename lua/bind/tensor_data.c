/* lua/bind/tensor_data.c -- the Tensor methods that work on its data without autograd, for
 * optimizers, initialisers and loading: in-place updates (copy_, fill_, zero_, add_, mul_,
 * normal_, uniform_) and the reads they need (sumsq, has_nonfinite, storage_id, sha256). */
#include <math.h>
#include <string.h>

#include "attnlab/rng.h"
#include "attnlab/sha256.h"
#include "bind.h"

static int m_copy_(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1), *s = l_checktensor(L, 2);
  l_check_writable(L, t, "copy_");
  l_check_inplace_grad(L, t, s, "copy_");
  al_tensor *src = l_write_source(L, s, t->dtype, "copy_");   /* float32 into int64: as :long() */
  if (al_same_shape(t, s)) {
    L_TRY(L, "copy_", al_copy_into(t, src));
  } else {
    /* PyTorch's rule: the source broadcasts to the destination's shape. Copying in flat order
     * between shapes of one count -- an (in, out) weight into an (out, in) one -- was
     * garbage without a word. */
    al_tensor *e = NULL;
    if (al_expand(&e, src, t->ndim, t->shape) != AL_OK) {
      char a[128], b[128];
      return luaL_error(L, "attnlab.copy_: shapes differ: the source %s does not broadcast to the destination %s "
                        "(copy_ broadcasts, as in PyTorch; for a copy in flat order, reshape the source first)",
                        al_shape_str(s, b, sizeof b), al_shape_str(t, a, sizeof a));
    }
    al_status st = al_copy_into(t, e);
    al_tensor_release(e);
    L_TRY(L, "copy_", st);
  }
  al_tensor_mark_modified(t);
  lua_settop(L, 1);
  return 1;
}

static int m_fill_(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1);
  l_check_inplace_grad(L, t, NULL, "fill_");
  l_fill_number(L, t, 2, "fill_");
  al_tensor_mark_modified(t);
  lua_settop(L, 1);
  return 1;
}

static int m_zero_(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1);
  l_check_inplace_grad(L, t, NULL, "zero_");
  al_fill(t, 0);
  al_tensor_mark_modified(t);
  lua_settop(L, 1);
  return 1;
}

/* t += alpha * s (s broadcast to t). */
static int m_add_(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1);
  double alpha = luaL_optnumber(L, 3, 1.0);
  if (t->dtype != AL_F32) return luaL_error(L, "attnlab.add_: float32 tensors only");
  l_check_writable(L, t, "add_");
  al_tensor *s = l_checktensorish(L, 2), *sf = NULL, *sc = NULL, *e = NULL;
  l_check_inplace_grad(L, t, s, "add_");
  int was = al_grad_enabled();
  al_set_grad_enabled(0);
  al_status st = al_to_dtype(&sf, s, AL_F32);   /* int64 sources too: the sum is float */
  if (!st) st = al_affine(&sc, sf, alpha, 0);
  if (!st) {
    st = al_expand(&e, sc, t->ndim, t->shape);
    if (st) {
      char a[128], b[128];
      st = al_seterr(AL_EINVAL, "add_: %s does not broadcast to the tensor %s", al_shape_str(s, a, sizeof a), al_shape_str(t, b, sizeof b));
    }
  }
  if (!st) st = al_accumulate(t, e);
  if (!st) al_tensor_mark_modified(t);
  al_set_grad_enabled(was);
  al_tensor_release(sf); al_tensor_release(sc); al_tensor_release(e);
  if (st) return l_raise(L, "add_");
  lua_settop(L, 1);
  return 1;
}

static int m_mul_(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1), *o = NULL;
  double s = luaL_checknumber(L, 2);
  l_check_store_value(L, s, t->dtype, "mul_");   /* an int64 tensor by an integer only */
  l_check_inplace_grad(L, t, NULL, "mul_");
  /* an int64 tensor times an integer: int64 arithmetic, exact (affine goes through a double,
   * which rounded 3 * (2^53 + 1) to 3 * 2^53), as t * n does; made before grad mode is
   * switched, since making it may raise */
  al_tensor *si = t->dtype == AL_I64 ? l_operand(L, 2, 1) : NULL;
  int was = al_grad_enabled();
  al_set_grad_enabled(0);
  al_status st = si ? al_binary(&o, AL_MUL, t, si) : al_affine(&o, t, s, 0);
  if (!st) st = al_copy_into(t, o);
  if (!st) al_tensor_mark_modified(t);
  al_set_grad_enabled(was);
  al_tensor_release(o);
  if (st) return l_raise(L, "mul_");
  lua_settop(L, 1);
  return 1;
}

/* Random fills, in place (initialisers): t:normal_(mean, std [, gen]) and
 * t:uniform_(a, b [, gen]), both parameters defaulting to 0 and 1. */
typedef void (*random_fill_fn)(al_rng *g, float *out, int64_t n, float p1, float p2);

static int random_fill(lua_State *L, const char *name, random_fill_fn fill) {
  al_tensor *t = l_checktensor(L, 1);
  double p1 = luaL_optnumber(L, 2, 0), p2 = luaL_optnumber(L, 3, 1);
  al_rng *g = l_optrng(L, 4);
  const int is_normal = fill == al_rng_normal;
  if (!isfinite(p1) || !isfinite(p2) || (is_normal ? p2 < 0 : p1 > p2))
    return luaL_error(L, is_normal ? "attnlab.%s: needs a finite mean and a finite std >= 0, got mean %s, std %s"
                                   : "attnlab.%s: needs finite bounds a <= b, got a = %s, b = %s",
                      name, l_numstr(L, p1), l_numstr(L, p2));
  if (t->dtype != AL_F32) {
    char sb[128];
    return luaL_error(L, "attnlab.%s: float32 tensors only, got %s", name, al_shape_str(t, sb, sizeof sb));
  }
  l_check_writable(L, t, name);
  l_check_inplace_grad(L, t, NULL, name);
  al_tensor *tmp = al_tensor_new_like(t);
  if (!tmp) return l_raise(L, name);
  fill(g, al_f32(tmp), al_numel(tmp), (float)p1, (float)p2);
  al_copy_into(t, tmp);
  al_tensor_release(tmp);
  al_tensor_mark_modified(t);
  lua_settop(L, 1);
  return 1;
}

static int m_normal_(lua_State *L) { return random_fill(L, "normal_", al_rng_normal); }
static int m_uniform_(lua_State *L) { return random_fill(L, "uniform_", al_rng_uniform); }

/* Sum of squares in double (gradient clipping, norms). */
static int m_sumsq(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1), *c = NULL;
  if (t->dtype != AL_F32) return luaL_error(L, "attnlab.sumsq: float32 only");
  L_TRY(L, "sumsq", al_contiguous_ref(&c, t));
  double s = 0;
  const float *p = al_f32(c);
  int64_t n = al_numel(c);
  for (int64_t i = 0; i < n; i++) s += (double)p[i] * p[i];
  al_tensor_release(c);
  lua_pushnumber(L, s);
  return 1;
}

/* True when any element is NaN or +-inf. */
static int m_has_nonfinite(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1), *c = NULL;
  if (t->dtype != AL_F32) { lua_pushboolean(L, 0); return 1; }
  L_TRY(L, "has_nonfinite", al_contiguous_ref(&c, t));
  const float *p = al_f32(c);
  int64_t n = al_numel(c);
  int bad = 0;
  for (int64_t i = 0; i < n && !bad; i++) bad = !isfinite(p[i]);
  al_tensor_release(c);
  lua_pushboolean(L, bad);
  return 1;
}

/* SHA-256 of the elements' bytes in row-major order (as stored: float32 or int64, little-endian
 * on x86), 64 hex digits: a training checkpoint's checksum (run/fit.lua), so that a flipped bit in
 * its data is refused on resume instead of trained on. Views hash their own elements. */
static int m_sha256(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1), *c = NULL;
  L_TRY(L, "sha256", al_contiguous_ref(&c, t));
  uint8_t d[AL_SHA256_SIZE];
  char hex[AL_SHA256_HEX];
  al_sha256((const char *)c->storage->data + c->offset * (int64_t)al_dtype_size(c->dtype),
            (size_t)al_numel(c) * al_dtype_size(c->dtype), d);
  al_tensor_release(c);
  al_sha256_hex(d, hex);
  lua_pushstring(L, hex);
  return 1;
}

static int m_storage_id(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1);
  lua_pushfstring(L, "%p", (void *)t->storage);
  return 1;
}

const luaL_Reg l_tensor_data_methods[] = {
  {"copy_", m_copy_}, {"fill_", m_fill_}, {"zero_", m_zero_}, {"add_", m_add_}, {"mul_", m_mul_},
  {"normal_", m_normal_}, {"uniform_", m_uniform_}, {"sumsq", m_sumsq}, {"has_nonfinite", m_has_nonfinite},
  {"storage_id", m_storage_id}, {"sha256", m_sha256}, {NULL, NULL}};
