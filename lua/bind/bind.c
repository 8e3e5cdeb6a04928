/* lua/bind/bind.c -- the argument helpers every file of the binding uses (bind.h): core
 * errors raised as Lua errors, 1-based dims, shapes, and 1-based index tensors. */
#include <math.h>
#include <string.h>

#include "bind.h"

int l_raise(lua_State *L, const char *name) {
  const char *msg = al_errmsg();
  size_t n = strlen(name);
  /* core messages start with the op's name already; avoid "matmul: matmul: ..." */
  if (!strncmp(msg, name, n) && msg[n] == ':') return luaL_error(L, "attnlab.%s", msg);
  return luaL_error(L, "attnlab.%s: %s", name, msg);
}

void l_check_writable(lua_State *L, const al_tensor *t, const char *fname) {
  /* no elements, nothing shared: a fresh (2,0,3) has stride 0 in its dim of 2 and was refused
   * as an expand (al.nn.Linear(0, 3)'s weight (3,0) could not be initialised or stepped) */
  if (al_numel(t) == 0) return;
  for (int d = 0; d < t->ndim; d++)
    if (t->stride[d] == 0 && t->shape[d] > 1) {
      char b[128];
      luaL_error(L, "attnlab.%s: cannot write into %s, a view whose elements share memory (an expand); "
                    "write into a clone() or into the tensor it was expanded from", fname, al_shape_str(t, b, sizeof b));
    }
}

void l_check_inplace_grad(lua_State *L, const al_tensor *t, const al_tensor *src, const char *fname) {
  if (!al_grad_enabled()) return;
  if (t->grad_fn)
    luaL_error(L, "attnlab.%s: the tensor is the result of an op autograd recorded (grad_fn=<%s>), and in-place "
                  "changes are not recorded, so its backward would not see this one: write the change as an op "
                  "(y = y * s, y = al.where(m, v, y)) to keep the gradients right, or make it under al.no_grad "
                  "if the backward should ignore it",
               fname, t->grad_fn->name);
  if (src && (src->requires_grad || src->grad_fn))
    luaL_error(L, "attnlab.%s: the source requires grad, and in-place changes are not recorded, so its gradient "
                  "would be lost: write t = t + s (or al.cat/al.where) to keep it, or pass s:detach()", fname);
}

void l_check_keys(lua_State *L, int idx, const char *fname, const char *const *known) {
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);   /* the value; the key stays for lua_next */
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "attnlab.%s: option keys are names, got a %s key", fname, luaL_typename(L, -1));
    const char *k = lua_tostring(L, -1);
    int ok = 0;
    for (int i = 0; known[i] && !ok; i++) ok = !strcmp(k, known[i]);
    if (!ok) {
      luaL_Buffer b;
      luaL_buffinit(L, &b);
      for (int i = 0; known[i]; i++) {
        if (i) luaL_addstring(&b, ", ");
        luaL_addstring(&b, known[i]);
      }
      luaL_pushresult(&b);
      luaL_error(L, "attnlab.%s: unknown option '%s' (known: %s)", fname, k, lua_tostring(L, -1));
    }
  }
}

int l_optbool_field(lua_State *L, int opts, const char *key, int def, const char *fname) {
  lua_getfield(L, opts, key);
  int t = lua_type(L, -1), v = t == LUA_TBOOLEAN ? lua_toboolean(L, -1) : def;
  if (t != LUA_TNIL && t != LUA_TBOOLEAN)
    luaL_error(L, "attnlab.%s: option %s must be true or false, got a %s", fname, key, luaL_typename(L, -1));
  lua_pop(L, 1);
  return v;
}

/* an argument's value for an error message: 5, 2.5, the string 'x', a table */
static const char *arg_text(lua_State *L, int i) {
  if (lua_isinteger(L, i)) return lua_pushfstring(L, "%I", (LUAI_UACINT)lua_tointeger(L, i));
  if (lua_type(L, i) == LUA_TNUMBER) return l_numstr(L, lua_tonumber(L, i));
  if (lua_type(L, i) == LUA_TSTRING) return lua_pushfstring(L, "the string '%s'", lua_tostring(L, i));
  if (lua_type(L, i) == LUA_TBOOLEAN) return lua_toboolean(L, i) ? "true" : "false";
  return lua_pushfstring(L, "a %s", luaL_typename(L, i));
}

int l_optbool_arg(lua_State *L, int idx, int def, const char *fname, const char *what) {
  if (lua_isnoneornil(L, idx)) return def;
  /* any truthy value was "on": sum(x, 1, "no") kept the dim, dropout(x, p, "no") dropped */
  if (!lua_isboolean(L, idx))
    luaL_error(L, "attnlab.%s: %s (argument #%d) must be true or false, got %s", fname, what, idx, arg_text(L, idx));
  return lua_toboolean(L, idx);
}

int l_unexpected_arg(lua_State *L, int i, int shift, const char *fname, const char *expected) {
  return luaL_error(L, "attnlab.%s: unexpected argument #%d (%s): %s", fname, i + shift, arg_text(L, i), expected);
}

void l_check_no_more_args(lua_State *L, int first, int shift, const char *fname, const char *expected) {
  for (int i = first; i <= lua_gettop(L); i++)
    if (!lua_isnil(L, i)) l_unexpected_arg(L, i, shift, fname, expected);
}

al_dtype l_dtype_named(lua_State *L, const char *s, const char *fname) {
  if (!strcmp(s, "float32") || !strcmp(s, "float")) return AL_F32;
  if (!strcmp(s, "int64") || !strcmp(s, "long")) return AL_I64;
  luaL_error(L, "attnlab.%s: unknown dtype '%s' (float32 or int64)", fname, s);
  return AL_F32;   /* not reached */
}

const char *l_numstr(lua_State *L, double v) {
  return v != v ? "NaN" : lua_pushfstring(L, "%f", v);
}

int l_whole_i64(double v) {
  return v == floor(v) && v >= -9223372036854775808.0 && v < 9223372036854775808.0;
}

void l_fill_number(lua_State *L, al_tensor *t, int idx, const char *fname) {
  double v = l_check_store_value(L, luaL_checknumber(L, idx), t->dtype, fname);
  if (t->dtype == AL_I64 && lua_isinteger(L, idx)) al_fill_i64(t, (int64_t)lua_tointeger(L, idx));
  else al_fill(t, v);
}

al_tensor *l_operand(lua_State *L, int idx, int other_idx) {
  al_tensor *other = lua_type(L, idx) == LUA_TNUMBER ? l_totensor(L, other_idx) : NULL;
  if (other && other->dtype == AL_I64 && (lua_isinteger(L, idx) || l_whole_i64(lua_tonumber(L, idx)))) {
    al_tensor *t = al_tensor_new(AL_I64, 0, NULL);
    if (!t) l_raise(L, "tensor");
    al_i64(t)[0] = lua_isinteger(L, idx) ? (int64_t)lua_tointeger(L, idx) : (int64_t)lua_tonumber(L, idx);
    l_pushtensor(L, t);
    return t;
  }
  return l_checktensorish(L, idx);
}

double l_check_store_value(lua_State *L, double v, al_dtype dt, const char *fname) {
  if (dt == AL_I64 && !l_whole_i64(v))
    luaL_error(L, "attnlab.%s: an int64 tensor holds integers, got %s", fname, l_numstr(L, v));
  return v;
}

al_tensor *l_write_source(lua_State *L, al_tensor *src, al_dtype dt, const char *fname) {
  if (dt != AL_I64 || src->dtype != AL_F32) return src;
  /* al_copy_into saturates (NaN -> 0, 1e30 -> INT64_MAX) without a word, which is its C
   * contract; a Lua write refuses those values, as t:long() does */
  al_tensor *c = NULL;
  if (al_to_dtype(&c, src, AL_I64) != AL_OK) l_raise(L, fname);
  l_pushtensor(L, c);
  return c;
}

int l_checkdim(lua_State *L, int idx, const char *fname) {
  lua_Integer d = luaL_checkinteger(L, idx);
  if (d == 0) return luaL_argerror(L, idx, "dim 0 is invalid: dims are 1-based (-1 is the last)");
  if (d > AL_MAXDIM || d < -AL_MAXDIM) return luaL_argerror(L, idx, lua_pushfstring(L, "dim %I out of range (tensors have at most %d dims)", (LUAI_UACINT)d, AL_MAXDIM));
  return d > 0 ? (int)(d - 1) : (int)d;
}

int l_optdim(lua_State *L, int idx, int def, const char *fname) {
  if (lua_isnoneornil(L, idx)) return def;
  return l_checkdim(L, idx, fname);
}

int l_checkshape(lua_State *L, int idx, int64_t *shape, const char *fname) {
  int nd = 0;
  if (lua_istable(L, idx)) {
    lua_Integer n = luaL_len(L, idx);
    if (n > AL_MAXDIM) return luaL_argerror(L, idx, "too many dims");
    for (lua_Integer i = 1; i <= n; i++) {
      lua_geti(L, idx, i);
      int isnum;
      lua_Integer v = lua_tointegerx(L, -1, &isnum);
      lua_pop(L, 1);
      if (!isnum) return luaL_argerror(L, idx, "shape entries must be integers");
      shape[nd++] = v;
    }
    return nd;
  }
  int top = lua_gettop(L);
  for (int i = idx; i <= top; i++) {
    if (lua_istable(L, i) || lua_isuserdata(L, i)) break;   /* options table or Generator after the sizes */
    if (nd >= AL_MAXDIM) return luaL_argerror(L, i, "too many dims");
    shape[nd++] = luaL_checkinteger(L, i);
  }
  return nd;
}

al_tensor *l_index_to0(lua_State *L, al_tensor *idx, const char *fname) {
  if (idx->dtype != AL_I64) {
    char b[128];
    const char *what = !strcmp(fname, "cross_entropy") ? "labels" : !strcmp(fname, "embedding") ? "ids" : "indices";
    luaL_error(L, "attnlab.%s: %s must be an int64 tensor (1-based), got %s", fname, what, al_shape_str(idx, b, sizeof b));
    return NULL;
  }
  al_tensor *o = NULL;
  if (al_affine(&o, idx, 1, -1)) { l_raise(L, fname); return NULL; }
  return o;
}
