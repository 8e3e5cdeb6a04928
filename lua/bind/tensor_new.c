/* lua/bind/tensor_new.c -- making tensors from Lua values: al.tensor (nested tables,
 * numbers, other tensors), zeros, ones, empty, full, arange, and l_checktensorish, which
 * lets every op take a number or a table where it wants a tensor. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bind.h"

static void table_shape(lua_State *L, int idx, int depth, int *ndim, int64_t *shape, const char *fname) {
  if (depth >= AL_MAXDIM) luaL_error(L, "attnlab.%s: nested deeper than %d", fname, AL_MAXDIM);
  lua_Integer n = luaL_len(L, idx);
  shape[depth] = n;
  *ndim = depth + 1;
  if (n > 0) {
    lua_geti(L, idx, 1);
    if (lua_istable(L, -1)) table_shape(L, lua_gettop(L), depth + 1, ndim, shape, fname);
    lua_pop(L, 1);
  }
}

/* A table of data holds its entries at the keys 1..n (n = its length) and nothing else: any
 * other key -- al.tensor{1, 2, x = 3}, or {1, 2, [4] = 4}, whose length is 2 -- would be
 * dropped without a word, so it is refused, by name. */
static void check_only_entries(lua_State *L, int idx, lua_Integer n, int depth, const char *fname) {
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (lua_isinteger(L, -1)) {
      lua_Integer k = lua_tointeger(L, -1);
      if (k >= 1 && k <= n) continue;
    }
    const char *key = lua_type(L, -1) == LUA_TSTRING ? lua_pushfstring(L, "'%s'", lua_tostring(L, -1))
                      : lua_isinteger(L, -1) ? lua_pushfstring(L, "%I", (LUAI_UACINT)lua_tointeger(L, -1))
                      : lua_type(L, -1) == LUA_TNUMBER ? l_numstr(L, lua_tonumber(L, -1))
                      : lua_pushfstring(L, "of type %s", luaL_typename(L, -1));
    const char *entries = n == 0 ? "and no entries" : n == 1 ? "beside its entry 1"
                          : lua_pushfstring(L, "beside its entries 1..%I", (LUAI_UACINT)n);
    luaL_error(L, "attnlab.%s: the table at depth %d has a key %s %s: data is a list of numbers "
               "(or of lists), and that key would be dropped", fname, depth + 1, key, entries);
  }
}

static void table_fill(lua_State *L, int idx, int depth, int ndim, const int64_t *shape, al_tensor *t, int64_t *pos,
                       const char *fname) {
  lua_Integer n = luaL_len(L, idx);
  if (n != shape[depth]) luaL_error(L, "attnlab.%s: ragged nested table (dim %d has %d and %d entries)", fname, depth + 1, (int)shape[depth], (int)n);
  check_only_entries(L, idx, n, depth, fname);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, idx, i);
    if (depth + 1 < ndim) {
      if (!lua_istable(L, -1)) luaL_error(L, "attnlab.%s: ragged nested table (expected a table at depth %d)", fname, depth + 2);
      table_fill(L, lua_gettop(L), depth + 1, ndim, shape, t, pos, fname);
    } else {
      /* numbers only: Lua would also convert strings such as "3", silently */
      int isnum = lua_type(L, -1) == LUA_TNUMBER;
      if (t->dtype == AL_I64) {
        lua_Integer v = isnum ? lua_tointegerx(L, -1, &isnum) : 0;
        if (!isnum && lua_type(L, -1) == LUA_TNUMBER)
          luaL_error(L, "attnlab.%s: int64 tensor needs integers, got %s at position %d", fname, l_numstr(L, lua_tonumber(L, -1)), (int)*pos + 1);
        if (!isnum) luaL_error(L, "attnlab.%s: int64 tensor needs integers, got a %s at position %d", fname, luaL_typename(L, -1), (int)*pos + 1);
        al_i64(t)[(*pos)++] = v;
      } else {
        if (!isnum) luaL_error(L, "attnlab.%s: expected numbers, got a %s at position %d", fname, luaL_typename(L, -1), (int)*pos + 1);
        al_f32(t)[(*pos)++] = (float)lua_tonumber(L, -1);
      }
    }
    lua_pop(L, 1);
  }
}

/* A new tensor of dtype dt from the nested table at idx, pushed (anchored) before filling
 * can raise. */
al_tensor *l_tensor_from_table(lua_State *L, int idx, al_dtype dt, const char *fname) {
  idx = lua_absindex(L, idx);
  int nd = 0;
  int64_t shape[AL_MAXDIM];
  table_shape(L, idx, 0, &nd, shape, fname);
  al_tensor *t = al_tensor_new(dt, nd, shape);
  if (!t) l_raise(L, fname);
  l_pushtensor(L, t);
  int64_t pos = 0;
  table_fill(L, idx, 0, nd, shape, t, &pos, fname);
  return t;
}

static const char *const NEW_KEYS[] = {"dtype", "requires_grad", NULL};

/* fname: the function whose options these are, for the messages (they said "attnlab.tensor:"
 * or "attnlab:" for al.zeros, al.arange and the *_like functions too) */
static al_dtype opt_dtype(lua_State *L, int opts, al_dtype def, const char *fname) {
  if (!lua_istable(L, opts)) return def;
  l_check_keys(L, opts, fname, NEW_KEYS);
  lua_getfield(L, opts, "dtype");
  al_dtype dt = def;
  if (!lua_isnil(L, -1)) {
    dt = l_dtype_named(L, luaL_checkstring(L, -1), fname);
  }
  lua_pop(L, 1);
  return dt;
}

static void opt_requires_grad(lua_State *L, int opts, al_tensor *t, const char *fname) {
  if (!lua_istable(L, opts)) return;
  if (l_optbool_field(L, opts, "requires_grad", 0, fname)) {
    if (t->dtype != AL_F32) luaL_error(L, "attnlab.%s: only float32 tensors can require grad, this one is %s", fname, al_dtype_name(t->dtype));
    t->requires_grad = 1;
  }
}

/* Borrowed: a tensor argument itself, or a new tensor anchored in a userdata pushed
 * on the stack -- never a reference the caller must release, so an error raised
 * between two conversions cannot leak the first one. */
al_tensor *l_checktensorish(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  al_tensor *t = l_totensor(L, idx);
  if (t) return t;
  if (lua_type(L, idx) == LUA_TNUMBER) {
    t = al_tensor_new(AL_F32, 0, NULL);
    if (!t) l_raise(L, "tensor");
    al_f32(t)[0] = (float)lua_tonumber(L, idx);
    l_pushtensor(L, t);
    return t;
  }
  if (lua_istable(L, idx)) return l_tensor_from_table(L, idx, AL_F32, "tensor");
  luaL_typeerror(L, idx, "tensor, number or table");
  return NULL;
}

static int l_tensor_new(lua_State *L) {
  /* al.tensor(t, "int64") made a float32 tensor: anything but an options table is refused */
  if (!lua_isnoneornil(L, 2) && !lua_istable(L, 2))
    return luaL_error(L, "attnlab.tensor: options must be a table {dtype =, requires_grad =}, got a %s", luaL_typename(L, 2));
  al_dtype dt = opt_dtype(L, 2, AL_F32, "tensor");
  al_tensor *t;
  if (lua_type(L, 1) == LUA_TNUMBER) {
    int isint = 0;
    lua_Integer iv = lua_tointegerx(L, 1, &isint);
    if (dt == AL_I64 && !isint) return luaL_argerror(L, 1, "int64 tensor needs an integer");
    t = al_tensor_new(dt, 0, NULL);
    if (!t) return l_raise(L, "tensor");
    if (dt == AL_I64) al_i64(t)[0] = iv;
    else al_f32(t)[0] = (float)lua_tonumber(L, 1);
  } else if (lua_istable(L, 1)) {
    opt_requires_grad(L, 2, l_tensor_from_table(L, 1, dt, "tensor"), "tensor");
    return 1;
  } else if (l_totensor(L, 1)) {
    al_tensor *src = l_totensor(L, 1);
    if (al_to_dtype(&t, src, dt)) return l_raise(L, "tensor");
    if (t == src) { al_tensor_release(t); t = al_tensor_new_like(src); if (!t) return l_raise(L, "tensor"); al_copy_into(t, src); }
  } else {
    return luaL_typeerror(L, 1, "nested table of numbers, number or tensor");
  }
  l_pushtensor(L, t);
  opt_requires_grad(L, 2, t, "tensor");
  return 1;
}

/* exact: a Lua integer for v (al.full), written exactly into an int64 tensor (through a double,
 * integers above 2^53 were rounded); NULL for a plain number. shift: arguments removed before
 * the options (al.full's value), for the argument numbers of errors. */
static int make_filled(lua_State *L, double v, const lua_Integer *exact, const char *fname, int shift) {
  int64_t shape[AL_MAXDIM];
  int nd = l_checkshape(L, 1, shape, fname);
  /* after the shape (a table, or nd numbers): the options table or nothing. Anything else --
   * al.zeros({2,3}, 5) -- was ignored: a different tensor than the caller meant, silently */
  int k = lua_istable(L, 1) ? 2 : nd + 1;
  static const char want[] = "after the shape only an options table {dtype =, requires_grad =} may follow";
  if (!lua_isnoneornil(L, k) && !lua_istable(L, k)) return l_unexpected_arg(L, k, shift, fname, want);
  l_check_no_more_args(L, k + 1, shift, fname, want);
  int opts = lua_istable(L, k) ? k : 0;
  al_dtype dt = opts ? opt_dtype(L, opts, AL_F32, fname) : AL_F32;
  l_check_store_value(L, v, dt, fname);
  al_tensor *t = al_tensor_new(dt, nd, shape);
  if (!t) return l_raise(L, fname);
  if (exact && dt == AL_I64) al_fill_i64(t, (int64_t)*exact);
  else al_fill(t, v);
  l_pushtensor(L, t);
  if (opts) opt_requires_grad(L, opts, t, fname);
  return 1;
}

static int l_zeros(lua_State *L) { return make_filled(L, 0, NULL, "zeros", 0); }
static int l_ones(lua_State *L) { return make_filled(L, 1, NULL, "ones", 0); }
static int l_empty(lua_State *L) { return make_filled(L, 0, NULL, "empty", 0); }
static int l_full(lua_State *L) {
  double v = luaL_checknumber(L, 2);
  lua_Integer iv = lua_isinteger(L, 2) ? lua_tointeger(L, 2) : 0;
  int is_int = lua_isinteger(L, 2);
  lua_remove(L, 2);
  return make_filled(L, v, is_int ? &iv : NULL, "full", 1);
}

/* arange's count and values from Lua integers, exactly: through double, bounds above 2^53
 * were rounded (arange(2^53 + 1, 2^53 + 4) gave 5 values with repeats), and near
 * math.maxinteger the cast of an out-of-range double was undefined (one wrapped value). b - a
 * may not fit in an int64 (arange(mininteger, maxinteger)), so distances are unsigned; a + i *
 * step is then taken modulo 2^64, which is exact since every value lies between a and b. */
static int64_t arange_int_count(lua_State *L, int64_t a, int64_t b, int64_t step) {
  if (step > 0 ? b < a : b > a) return 0;
  uint64_t dist = step > 0 ? (uint64_t)b - (uint64_t)a : (uint64_t)a - (uint64_t)b;
  uint64_t ustep = step > 0 ? (uint64_t)step : -(uint64_t)step;   /* -(uint64_t) holds INT64_MIN */
  uint64_t q = dist / ustep;   /* count - 1 */
  if (q >= (uint64_t)(INT64_MAX / 8)) {
    char num[32];   /* q + 1 is 2^64 for arange(mininteger, maxinteger) */
    if (q == UINT64_MAX) snprintf(num, sizeof num, "18446744073709551616");
    else snprintf(num, sizeof num, "%llu", (unsigned long long)q + 1);
    luaL_error(L, "attnlab.arange: %s elements is too many", num);
  }
  return (int64_t)q + 1;
}

static int l_arange(lua_State *L) {
  /* arange(n) -> 1..n as in torch7's range convention? No: PyTorch's 0..n-1 values,
   * but attnlab positions are 1-based, so arange(n) = {1, ..., n}; arange(a, b [,step]) = a..b inclusive. */
  lua_Number a, b, step = 1;
  int one_arg = lua_gettop(L) == 1 || lua_istable(L, 2);
  if (one_arg) { a = 1; b = luaL_checknumber(L, 1); }
  else { a = luaL_checknumber(L, 1); b = luaL_checknumber(L, 2); step = luaL_optnumber(L, 3, 1); }
  if (step == 0) return luaL_argerror(L, 3, "step must be nonzero");
  /* NaN or inf bounds (arange(0/0)) made the count's conversion to int64 undefined */
  if (!isfinite(a) || !isfinite(b) || !isfinite(step)) {
    const double v = !isfinite(a) ? a : !isfinite(b) ? b : step;
    return luaL_error(L, "attnlab.arange: the %s is %s; bounds and step must be finite numbers",
                      !isfinite(a) ? "start" : !isfinite(b) ? "end" : "step", l_numstr(L, v));
  }
  int allint = lua_isinteger(L, 1) && (one_arg || (lua_isinteger(L, 2) && (lua_isnone(L, 3) || lua_isinteger(L, 3))));
  int64_t ia = 0, istep = 1, n;
  if (allint) {
    ia = one_arg ? 1 : (int64_t)lua_tointeger(L, 1);
    int64_t ib = (int64_t)lua_tointeger(L, one_arg ? 1 : 2);
    if (!one_arg && !lua_isnone(L, 3)) istep = (int64_t)lua_tointeger(L, 3);
    n = arange_int_count(L, ia, ib, istep);
  } else {
    const double count = floor((b - a) / step + 1e-9) + 1;
    if (count > (double)(INT64_MAX / 8)) return luaL_error(L, "attnlab.arange: %f elements is too many", count);
    n = count < 0 ? 0 : (int64_t)count;
  }
  int opts = lua_istable(L, lua_gettop(L)) ? lua_gettop(L) : 0;
  al_dtype dt = opts ? opt_dtype(L, opts, allint ? AL_I64 : AL_F32, "arange") : (allint ? AL_I64 : AL_F32);
  al_tensor *t = al_tensor_new(dt, 1, &n);
  if (!t) return l_raise(L, "arange");
  l_pushtensor(L, t);   /* anchored: filling an int64 tensor may raise */
  for (int64_t i = 0; i < n; i++) {
    if (allint) {
      int64_t v = (int64_t)((uint64_t)ia + (uint64_t)i * (uint64_t)istep);
      if (dt == AL_I64) al_i64(t)[i] = v;
      else al_f32(t)[i] = (float)v;
    } else if (dt == AL_I64) {
      /* arange(1, 2, 0.5, {dtype = "int64"}) was {1, 1, 2}: truncated without a word */
      al_i64(t)[i] = (int64_t)l_check_store_value(L, a + i * step, AL_I64, "arange");
    } else {
      al_f32(t)[i] = (float)(a + i * step);
    }
  }
  if (opts) opt_requires_grad(L, opts, t, "arange");
  return 1;
}

const luaL_Reg l_tensor_functions[] = {
  {"tensor", l_tensor_new}, {"zeros", l_zeros}, {"ones", l_ones}, {"empty", l_empty}, {"full", l_full},
  {"arange", l_arange}, {NULL, NULL}};
