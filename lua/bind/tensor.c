/* lua/bind/tensor.c -- the Tensor userdata: lifetime, metatable, creation,
 * geometry methods, autograd fields, in-place data updates (used by optimizers
 * under no_grad), and conversion to and from Lua tables. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/autograd.h"
#include "attnlab/rng.h"
#include "bind.h"

/* ---- core glue -------------------------------------------------------------- */
/* Per OS thread, so states on different threads never race on them. The live byte count
 * they are compared with is process-wide (al_mem_live): with several states each one also
 * sees the others' tensors, which only makes collections a little more frequent. */
static _Thread_local size_t gc_threshold = (size_t)32 << 20;   /* a full collection above this */
static _Thread_local size_t gc_young_at = (size_t)8 << 20;     /* a young collection above this */

/* Tensor bytes to allocate between two young collections: a quarter of the live bytes, at
 * least 8 MB. */
static size_t gc_young_step(size_t live) {
  size_t floor = (size_t)8 << 20;
  return live / 4 > floor ? live / 4 : floor;
}

/* Lua's collector does not see tensor bytes (they are malloc'ed in the core), so pace it by
 * them. A full collection when the live tensor bytes double since the last one keeps a long
 * training loop flat at about twice its true working set. In between, a young collection
 * (generational mode; an incremental step otherwise) after every quarter of the live bytes:
 * the temporaries of the last step are young, so their buffers go back to malloc while they are
 * still in cache, and the next step's tensors reuse them instead of cold memory. */
void l_gc_pace(lua_State *L) {
  size_t live = al_mem_live();
  if (live > gc_threshold) {
    lua_gc(L, LUA_GCCOLLECT);
    live = al_mem_live();
    size_t floor = (size_t)32 << 20;
    gc_threshold = live * 2 > floor ? live * 2 : floor;
    gc_young_at = live + gc_young_step(live);
  } else if (live > gc_young_at) {
    lua_gc(L, LUA_GCSTEP, 0);
    live = al_mem_live();
    gc_young_at = live + gc_young_step(live);
  }
}

int l_raise(lua_State *L, const char *name) {
  const char *msg = al_errmsg();
  size_t n = strlen(name);
  /* core messages start with the op's name already; avoid "matmul: matmul: ..." */
  if (!strncmp(msg, name, n) && msg[n] == ':') return luaL_error(L, "attnlab.%s", msg);
  return luaL_error(L, "attnlab.%s: %s", name, msg);
}

al_tensor *l_totensor(lua_State *L, int idx) {
  l_tensor *u = luaL_testudata(L, idx, TENSOR_MT);
  if (u && !u->t) luaL_error(L, "attnlab: argument #%d is a tensor that was released (closed)", idx);
  return u ? u->t : NULL;
}

al_tensor *l_checktensor(lua_State *L, int idx) {
  l_tensor *u = luaL_testudata(L, idx, TENSOR_MT);
  if (!u) {
    luaL_typeerror(L, idx, "attnlab tensor");
    return NULL;
  }
  if (!u->t) luaL_argerror(L, idx, "tensor was released (closed); it cannot be used any more");
  return u->t;
}

int l_pushtensor(lua_State *L, al_tensor *t) {
  if (!t) return luaL_error(L, "attnlab: %s", al_errmsg());
  l_tensor *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->t = t;
  luaL_setmetatable(L, TENSOR_MT);
  l_gc_pace(L);
  return 1;
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

/* ---- tensor from nested tables ------------------------------------------------- */
static void table_shape(lua_State *L, int idx, int depth, int *ndim, int64_t *shape) {
  if (depth >= AL_MAXDIM) luaL_error(L, "attnlab.tensor: nested deeper than %d", AL_MAXDIM);
  lua_Integer n = luaL_len(L, idx);
  shape[depth] = n;
  *ndim = depth + 1;
  if (n > 0) {
    lua_geti(L, idx, 1);
    if (lua_istable(L, -1)) table_shape(L, lua_gettop(L), depth + 1, ndim, shape);
    lua_pop(L, 1);
  }
}

static void table_fill(lua_State *L, int idx, int depth, int ndim, const int64_t *shape, al_tensor *t, int64_t *pos) {
  lua_Integer n = luaL_len(L, idx);
  if (n != shape[depth]) luaL_error(L, "attnlab.tensor: ragged nested table (dim %d has %d and %d entries)", depth + 1, (int)shape[depth], (int)n);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, idx, i);
    if (depth + 1 < ndim) {
      if (!lua_istable(L, -1)) luaL_error(L, "attnlab.tensor: ragged nested table (expected a table at depth %d)", depth + 2);
      table_fill(L, lua_gettop(L), depth + 1, ndim, shape, t, pos);
    } else {
      /* numbers only: Lua would also convert strings such as "3", silently */
      int isnum = lua_type(L, -1) == LUA_TNUMBER;
      if (t->dtype == AL_I64) {
        lua_Integer v = isnum ? lua_tointegerx(L, -1, &isnum) : 0;
        if (!isnum && lua_type(L, -1) == LUA_TNUMBER)
          luaL_error(L, "attnlab.tensor: int64 tensor needs integers, got %f at position %d", lua_tonumber(L, -1), (int)*pos + 1);
        if (!isnum) luaL_error(L, "attnlab.tensor: int64 tensor needs integers, got a %s at position %d", luaL_typename(L, -1), (int)*pos + 1);
        al_i64(t)[(*pos)++] = v;
      } else {
        if (!isnum) luaL_error(L, "attnlab.tensor: expected numbers, got a %s at position %d", luaL_typename(L, -1), (int)*pos + 1);
        al_f32(t)[(*pos)++] = (float)lua_tonumber(L, -1);
      }
    }
    lua_pop(L, 1);
  }
}

static al_dtype opt_dtype(lua_State *L, int opts, al_dtype def) {
  if (!lua_istable(L, opts)) return def;
  lua_getfield(L, opts, "dtype");
  al_dtype dt = def;
  if (!lua_isnil(L, -1)) {
    const char *s = luaL_checkstring(L, -1);
    if (!strcmp(s, "float32") || !strcmp(s, "float")) dt = AL_F32;
    else if (!strcmp(s, "int64") || !strcmp(s, "long")) dt = AL_I64;
    else luaL_error(L, "attnlab: unknown dtype '%s' (float32 or int64)", s);
  }
  lua_pop(L, 1);
  return dt;
}

static void opt_requires_grad(lua_State *L, int opts, al_tensor *t) {
  if (!lua_istable(L, opts)) return;
  lua_getfield(L, opts, "requires_grad");
  if (lua_toboolean(L, -1)) {
    if (t->dtype != AL_F32) luaL_error(L, "attnlab: only float32 tensors can require grad");
    t->requires_grad = 1;
  }
  lua_pop(L, 1);
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
  if (lua_istable(L, idx)) {
    int nd = 0;
    int64_t shape[AL_MAXDIM];
    table_shape(L, idx, 0, &nd, shape);
    t = al_tensor_new(AL_F32, nd, shape);
    if (!t) l_raise(L, "tensor");
    l_pushtensor(L, t);   /* anchored before filling can raise */
    int64_t pos = 0;
    table_fill(L, idx, 0, nd, shape, t, &pos);
    return t;
  }
  luaL_typeerror(L, idx, "tensor, number or table");
  return NULL;
}

static int l_tensor_new(lua_State *L) {
  al_dtype dt = opt_dtype(L, 2, AL_F32);
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
    int nd = 0;
    int64_t shape[AL_MAXDIM];
    table_shape(L, 1, 0, &nd, shape);
    t = al_tensor_new(dt, nd, shape);
    if (!t) return l_raise(L, "tensor");
    l_pushtensor(L, t);    /* anchor it before filling can raise */
    int64_t pos = 0;
    table_fill(L, 1, 0, nd, shape, t, &pos);
    opt_requires_grad(L, 2, t);
    return 1;
  } else if (l_totensor(L, 1)) {
    al_tensor *src = l_totensor(L, 1);
    if (al_to_dtype(&t, src, dt)) return l_raise(L, "tensor");
    if (t == src) { al_tensor_release(t); t = al_tensor_new_like(src); if (!t) return l_raise(L, "tensor"); al_copy_into(t, src); }
  } else {
    return luaL_typeerror(L, 1, "nested table of numbers, number or tensor");
  }
  l_pushtensor(L, t);
  opt_requires_grad(L, 2, t);
  return 1;
}

static int make_filled(lua_State *L, double v, const char *fname) {
  int64_t shape[AL_MAXDIM];
  int nd = l_checkshape(L, 1, shape, fname);
  int opts = lua_gettop(L);
  if (!lua_istable(L, opts) || opts == 1) opts = lua_istable(L, 1) ? 2 : 0;
  al_dtype dt = opts ? opt_dtype(L, opts, AL_F32) : AL_F32;
  al_tensor *t = al_tensor_new(dt, nd, shape);
  if (!t) return l_raise(L, fname);
  al_fill(t, v);
  l_pushtensor(L, t);
  if (opts) opt_requires_grad(L, opts, t);
  return 1;
}

static int l_zeros(lua_State *L) { return make_filled(L, 0, "zeros"); }
static int l_ones(lua_State *L) { return make_filled(L, 1, "ones"); }
static int l_empty(lua_State *L) { return make_filled(L, 0, "empty"); }
static int l_full(lua_State *L) {
  double v = luaL_checknumber(L, 2);
  lua_remove(L, 2);
  return make_filled(L, v, "full");
}

static int l_arange(lua_State *L) {
  /* arange(n) -> 1..n as in torch7's range convention? No: PyTorch's 0..n-1 values,
   * but attnlab positions are 1-based, so arange(n) = {1, ..., n}; arange(a, b [,step]) = a..b inclusive. */
  lua_Number a, b, step = 1;
  if (lua_gettop(L) == 1 || lua_istable(L, 2)) { a = 1; b = luaL_checknumber(L, 1); }
  else { a = luaL_checknumber(L, 1); b = luaL_checknumber(L, 2); step = luaL_optnumber(L, 3, 1); }
  if (step == 0) return luaL_argerror(L, 3, "step must be nonzero");
  int64_t n = (int64_t)floor((b - a) / step + 1e-9) + 1;
  if (n < 0) n = 0;
  int allint = lua_isinteger(L, 1) && (lua_gettop(L) == 1 || lua_istable(L, 2) || (lua_isinteger(L, 2) && (lua_isnone(L, 3) || lua_isinteger(L, 3))));
  int opts = lua_istable(L, lua_gettop(L)) ? lua_gettop(L) : 0;
  al_dtype dt = opts ? opt_dtype(L, opts, allint ? AL_I64 : AL_F32) : (allint ? AL_I64 : AL_F32);
  al_tensor *t = al_tensor_new(dt, 1, &n);
  if (!t) return l_raise(L, "arange");
  for (int64_t i = 0; i < n; i++) {
    if (dt == AL_I64) al_i64(t)[i] = (int64_t)(a + i * step);
    else al_f32(t)[i] = (float)(a + i * step);
  }
  return l_pushtensor(L, t);
}

/* ---- geometry and data ------------------------------------------------------------- */
static int m_shape(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1);
  lua_createtable(L, t->ndim, 0);
  for (int i = 0; i < t->ndim; i++) { lua_pushinteger(L, t->shape[i]); lua_rawseti(L, -2, i + 1); }
  return 1;
}

static int m_size(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1);
  if (lua_isnoneornil(L, 2)) return m_shape(L);
  int d = l_checkdim(L, 2, "size");
  if (al_wrap_dim(&d, t->ndim, "size")) return l_raise(L, "size");
  lua_pushinteger(L, t->shape[d]);
  return 1;
}

static int m_stride(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1);
  lua_createtable(L, t->ndim, 0);
  for (int i = 0; i < t->ndim; i++) { lua_pushinteger(L, t->stride[i]); lua_rawseti(L, -2, i + 1); }
  return 1;
}

static int m_dim(lua_State *L) { lua_pushinteger(L, l_checktensor(L, 1)->ndim); return 1; }
static int m_numel(lua_State *L) { lua_pushinteger(L, al_numel(l_checktensor(L, 1))); return 1; }
static int m_dtype(lua_State *L) { lua_pushstring(L, al_dtype_name(l_checktensor(L, 1)->dtype)); return 1; }
static int m_is_contiguous(lua_State *L) { lua_pushboolean(L, al_is_contiguous(l_checktensor(L, 1))); return 1; }

static void push_elem(lua_State *L, const al_tensor *t, int64_t off) {
  if (t->dtype == AL_I64) lua_pushinteger(L, ((int64_t *)t->storage->data)[off]);
  else lua_pushnumber(L, ((float *)t->storage->data)[off]);
}

static void totable_rec(lua_State *L, const al_tensor *t, int d, int64_t off) {
  lua_createtable(L, (int)t->shape[d], 0);
  for (int64_t i = 0; i < t->shape[d]; i++) {
    if (d == t->ndim - 1) push_elem(L, t, off + i * t->stride[d]);
    else totable_rec(L, t, d + 1, off + i * t->stride[d]);
    lua_rawseti(L, -2, i + 1);
  }
}

static int m_totable(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1);
  if (t->ndim == 0) { push_elem(L, t, t->offset); return 1; }
  luaL_checkstack(L, t->ndim + 4, "tensor too deep");
  totable_rec(L, t, 0, t->offset);
  return 1;
}

static int m_item(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1);
  if (al_numel(t) != 1) {
    char b[128];
    return luaL_error(L, "attnlab.item: only one-element tensors can be converted to a number, got %s", al_shape_str(t, b, sizeof b));
  }
  int64_t off = t->offset;   /* all dims are 1: the element sits at the offset */
  push_elem(L, t, off);
  return 1;
}

static int m_reshape(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1), *o = NULL;
  int64_t shape[AL_MAXDIM];
  int nd = l_checkshape(L, 2, shape, "reshape");
  L_TRY(L, "reshape", al_reshape(&o, t, nd, shape));
  return l_pushtensor(L, o);
}

static int m_transpose(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1), *o = NULL;
  int d1 = lua_isnoneornil(L, 2) ? -2 : l_checkdim(L, 2, "transpose"), d2 = lua_isnoneornil(L, 3) ? -1 : l_checkdim(L, 3, "transpose");
  if (t->ndim < 2 && lua_isnoneornil(L, 2)) return luaL_error(L, "attnlab.transpose: needs 2 dims, got a %d-dim tensor", t->ndim);
  L_TRY(L, "transpose", al_transpose(&o, t, d1, d2));
  return l_pushtensor(L, o);
}

static int m_permute(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1), *o = NULL;
  int64_t p[AL_MAXDIM];
  int nd = l_checkshape(L, 2, p, "permute");
  if (nd != t->ndim) return luaL_error(L, "attnlab.permute: got %d dims for a %d-dim tensor", nd, t->ndim);
  int perm[AL_MAXDIM];
  for (int i = 0; i < nd; i++) {
    int64_t v = p[i];
    if (v == 0 || v > nd || v < -nd) return luaL_error(L, "attnlab.permute: dim %d out of range (1-based)", (int)v);
    perm[i] = v > 0 ? (int)v - 1 : (int)v + nd;
  }
  L_TRY(L, "permute", al_permute(&o, t, perm));
  return l_pushtensor(L, o);
}

static int m_narrow(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1), *o = NULL;
  int d = l_checkdim(L, 2, "narrow");
  lua_Integer start = luaL_checkinteger(L, 3), len = luaL_checkinteger(L, 4);
  if (start < 1) return luaL_argerror(L, 3, "start is 1-based (>= 1)");
  L_TRY(L, "narrow", al_narrow(&o, t, d, start - 1, len));
  return l_pushtensor(L, o);
}

static int m_select(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1), *o = NULL;
  int d = l_checkdim(L, 2, "select");
  lua_Integer i = luaL_checkinteger(L, 3);
  if (i == 0) return luaL_argerror(L, 3, "index 0 is invalid: indices are 1-based (-1 is the last)");
  L_TRY(L, "select", al_select(&o, t, d, i > 0 ? i - 1 : i));
  return l_pushtensor(L, o);
}

static int m_squeeze(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1), *o = NULL;
  int d = lua_isnoneornil(L, 2) ? -100 : l_checkdim(L, 2, "squeeze");
  L_TRY(L, "squeeze", al_squeeze(&o, t, d));
  return l_pushtensor(L, o);
}

static int m_unsqueeze(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1), *o = NULL;
  lua_Integer d = luaL_checkinteger(L, 2);
  if (d == 0) return luaL_argerror(L, 2, "dim 0 is invalid: dims are 1-based");
  L_TRY(L, "unsqueeze", al_unsqueeze(&o, t, d > 0 ? (int)d - 1 : (int)d));
  return l_pushtensor(L, o);
}

static int m_expand(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1), *o = NULL;
  int64_t shape[AL_MAXDIM];
  int nd = l_checkshape(L, 2, shape, "expand");
  L_TRY(L, "expand", al_expand(&o, t, nd, shape));
  return l_pushtensor(L, o);
}

static int m_contiguous(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1), *o = NULL;
  L_TRY(L, "contiguous", al_contiguous(&o, t));
  return l_pushtensor(L, o);
}

static int m_clone(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1), *o = NULL;
  L_TRY(L, "clone", al_clone(&o, t));
  return l_pushtensor(L, o);
}

static int m_detach(lua_State *L) { return l_pushtensor(L, al_detach(l_checktensor(L, 1))); }

static int m_to(lua_State *L, al_dtype dt) {
  al_tensor *t = l_checktensor(L, 1), *o = NULL;
  L_TRY(L, "to", al_to_dtype(&o, t, dt));
  return l_pushtensor(L, o);
}
static int m_float(lua_State *L) { return m_to(L, AL_F32); }
static int m_long(lua_State *L) { return m_to(L, AL_I64); }

static int m_requires_grad_(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1);
  int on = lua_isnone(L, 2) ? 1 : lua_toboolean(L, 2);
  if (on && t->dtype != AL_F32) return luaL_error(L, "attnlab.requires_grad_: only float32 tensors can require grad");
  if (!on && t->grad_fn) return luaL_error(L, "attnlab.requires_grad_: cannot turn off requires_grad of a non-leaf tensor; use detach()");
  t->requires_grad = (uint8_t)on;
  lua_settop(L, 1);
  return 1;
}

/* t:backward([gradient] [, {retain_graph=}]) -- the options may come second. */
static int m_backward(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1), *g = NULL;
  int opts = 0, retain = 0;
  if (lua_istable(L, 2)) opts = 2;
  else {
    if (!lua_isnoneornil(L, 2)) g = l_checktensor(L, 2);
    if (lua_istable(L, 3)) opts = 3;
  }
  if (opts) { lua_getfield(L, opts, "retain_graph"); retain = lua_toboolean(L, -1); lua_pop(L, 1); }
  if (g && g->dtype != AL_F32) {
    char b[128];
    return luaL_error(L, "attnlab.backward: the gradient must be float32, got %s", al_shape_str(g, b, sizeof b));
  }
  L_TRY(L, "backward", al_backward(t, g, retain));
  return 0;
}

/* ---- in-place data updates (no autograd; for optimizers, init, load) ---------------- */
static int m_copy_(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1), *s = l_checktensor(L, 2);
  if (!al_same_shape(t, s) && al_numel(t) != al_numel(s)) {
    char a[128], b[128];
    return luaL_error(L, "attnlab.copy_: shapes differ: %s vs %s", al_shape_str(t, a, sizeof a), al_shape_str(s, b, sizeof b));
  }
  L_TRY(L, "copy_", al_copy_into(t, s));
  lua_settop(L, 1);
  return 1;
}

static int m_fill_(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1);
  al_fill(t, luaL_checknumber(L, 2));
  lua_settop(L, 1);
  return 1;
}

static int m_zero_(lua_State *L) {
  al_fill(l_checktensor(L, 1), 0);
  lua_settop(L, 1);
  return 1;
}

/* t += alpha * s (s broadcast to t). */
static int m_add_(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1);
  double alpha = luaL_optnumber(L, 3, 1.0);
  if (t->dtype != AL_F32) return luaL_error(L, "attnlab.add_: float32 tensors only");
  al_tensor *s = l_checktensorish(L, 2), *sf = NULL, *sc = NULL, *e = NULL;
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
  al_set_grad_enabled(was);
  al_tensor_release(sf); al_tensor_release(sc); al_tensor_release(e);
  if (st) return l_raise(L, "add_");
  lua_settop(L, 1);
  return 1;
}

static int m_mul_(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1), *o = NULL;
  double s = luaL_checknumber(L, 2);
  int was = al_grad_enabled();
  al_set_grad_enabled(0);
  al_status st = al_affine(&o, t, s, 0);
  if (!st) st = al_copy_into(t, o);
  al_set_grad_enabled(was);
  al_tensor_release(o);
  if (st) return l_raise(L, "mul_");
  lua_settop(L, 1);
  return 1;
}

/* Random fills, in place (initialisers): t:normal_(mean, std [, gen]), t:uniform_(a, b [, gen]). */
al_rng *l_optrng(lua_State *L, int idx);
static int m_normal_(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1);
  double mean = luaL_optnumber(L, 2, 0), std = luaL_optnumber(L, 3, 1);
  al_rng *g = l_optrng(L, 4);
  if (t->dtype != AL_F32) {
    char sb[128];
    return luaL_error(L, "attnlab.normal_: float32 tensors only, got %s", al_shape_str(t, sb, sizeof sb));
  }
  al_tensor *tmp = al_tensor_new_like(t);
  if (!tmp) return l_raise(L, "normal_");
  al_rng_normal(g, al_f32(tmp), al_numel(tmp), (float)mean, (float)std);
  al_copy_into(t, tmp);
  al_tensor_release(tmp);
  lua_settop(L, 1);
  return 1;
}

static int m_uniform_(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1);
  double a = luaL_optnumber(L, 2, 0), b = luaL_optnumber(L, 3, 1);
  al_rng *g = l_optrng(L, 4);
  if (t->dtype != AL_F32) {
    char sb[128];
    return luaL_error(L, "attnlab.uniform_: float32 tensors only, got %s", al_shape_str(t, sb, sizeof sb));
  }
  al_tensor *tmp = al_tensor_new_like(t);
  if (!tmp) return l_raise(L, "uniform_");
  al_rng_uniform(g, al_f32(tmp), al_numel(tmp), (float)a, (float)b);
  al_copy_into(t, tmp);
  al_tensor_release(tmp);
  lua_settop(L, 1);
  return 1;
}

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

static int m_storage_id(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1);
  lua_pushfstring(L, "%p", (void *)t->storage);
  return 1;
}

/* ---- metamethods ---------------------------------------------------------------- */
static int mt_gc(lua_State *L) {
  l_tensor *u = luaL_checkudata(L, 1, TENSOR_MT);
  al_tensor_release(u->t);
  u->t = NULL;
  return 0;
}

static int mt_tostring(lua_State *L) {
  l_tensor *u = luaL_checkudata(L, 1, TENSOR_MT);
  al_tensor *t = u->t;
  if (!t) { lua_pushliteral(L, "Tensor(released)"); return 1; }
  /* The pretty-printer is Lua (attnlab.format); the binding requires nothing of the Lua
   * library, so the library installs it at load as registry[TENSOR_FORMATTER]. Without one
   * (attnlab.core loaded alone), or if it fails, print a one-line summary. */
  if (lua_getfield(L, LUA_REGISTRYINDEX, TENSOR_FORMATTER) == LUA_TFUNCTION) {
    lua_pushvalue(L, 1);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_isstring(L, -1)) return 1;
  }
  char b[160];
  lua_pushfstring(L, "Tensor(%s)", al_shape_str(t, b, sizeof b));
  return 1;
}

static int arith(lua_State *L, al_binop op, const char *name) {
  al_tensor *a = l_totensor(L, 1), *b = l_totensor(L, 2), *o = NULL;
  al_status st;
  if (a && b) st = al_binary(&o, op, a, b);
  else if (a && lua_type(L, 2) == LUA_TNUMBER) {
    double v = lua_tonumber(L, 2);
    switch (op) {   /* x / v is a true division (x * (1/v) can differ in the last bit) */
      case AL_ADD: st = al_affine(&o, a, 1, v); break;
      case AL_SUB: st = al_affine(&o, a, 1, -v); break;
      case AL_MUL: st = al_affine(&o, a, v, 0); break;
      default: st = al_binary(&o, op, a, l_checktensorish(L, 2));
    }
  } else if (b && lua_type(L, 1) == LUA_TNUMBER) {
    double v = lua_tonumber(L, 1);
    switch (op) {
      case AL_ADD: st = al_affine(&o, b, 1, v); break;
      case AL_SUB: st = al_affine(&o, b, -1, v); break;
      case AL_MUL: st = al_affine(&o, b, v, 0); break;
      default: st = al_binary(&o, op, l_checktensorish(L, 1), b);
    }
  } else {
    return luaL_error(L, "attnlab.%s: cannot apply to %s and %s", name, luaL_typename(L, 1), luaL_typename(L, 2));
  }
  if (st) return l_raise(L, name);
  return l_pushtensor(L, o);
}

static int mt_add(lua_State *L) { return arith(L, AL_ADD, "add"); }
static int mt_sub(lua_State *L) { return arith(L, AL_SUB, "sub"); }
static int mt_mul(lua_State *L) { return arith(L, AL_MUL, "mul"); }
static int mt_div(lua_State *L) { return arith(L, AL_DIV, "div"); }
static int mt_unm(lua_State *L) {
  al_tensor *o = NULL;
  L_TRY(L, "neg", al_affine(&o, l_checktensor(L, 1), -1, 0));
  return l_pushtensor(L, o);
}
static int mt_pow(lua_State *L) {
  al_tensor *a = l_totensor(L, 1), *o = NULL;
  if (a && lua_type(L, 2) == LUA_TNUMBER) { L_TRY(L, "pow", al_pow_scalar(&o, a, lua_tonumber(L, 2))); }
  else if (!a && lua_type(L, 1) == LUA_TNUMBER) { L_TRY(L, "pow", al_rpow_scalar(&o, lua_tonumber(L, 1), l_checktensor(L, 2))); }
  else return luaL_error(L, "attnlab.pow: tensor ^ number or number ^ tensor");
  return l_pushtensor(L, o);
}
static int mt_len(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1);
  lua_pushinteger(L, t->ndim ? t->shape[0] : 0);
  return 1;
}

static int mt_index(lua_State *L) {
  l_tensor *u = luaL_checkudata(L, 1, TENSOR_MT);
  if (!u->t && lua_type(L, 2) == LUA_TSTRING) {   /* methods stay reachable: t:__close() twice */
    const char *k = lua_tostring(L, 2);
    if (strcmp(k, "grad") && strcmp(k, "requires_grad") && strcmp(k, "is_leaf") && strcmp(k, "grad_fn") && strcmp(k, "grad_fn_name")) {
      lua_getmetatable(L, 1);
      lua_getfield(L, -1, "methods");
      lua_getfield(L, -1, k);
      return 1;
    }
  }
  al_tensor *t = l_checktensor(L, 1);
  if (lua_type(L, 2) == LUA_TNUMBER) {   /* t[i] = t:select(1, i) */
    lua_Integer i = luaL_checkinteger(L, 2);
    al_tensor *o = NULL;
    if (i == 0) return luaL_error(L, "attnlab: index 0 is invalid: indices are 1-based");
    L_TRY(L, "index", al_select(&o, t, 0, i > 0 ? i - 1 : i));
    return l_pushtensor(L, o);
  }
  const char *k = luaL_checkstring(L, 2);
  if (!strcmp(k, "grad")) {
    if (t->grad) return l_pushtensor(L, al_tensor_retain(t->grad));
    lua_pushnil(L);
    return 1;
  }
  if (!strcmp(k, "requires_grad")) { lua_pushboolean(L, t->requires_grad); return 1; }
  if (!strcmp(k, "is_leaf")) { lua_pushboolean(L, t->grad_fn == NULL); return 1; }
  if (!strcmp(k, "grad_fn_name") || !strcmp(k, "grad_fn")) {
    if (t->grad_fn) lua_pushstring(L, t->grad_fn->name); else lua_pushnil(L);
    return 1;
  }
  lua_getmetatable(L, 1);
  lua_getfield(L, -1, "methods");
  lua_getfield(L, -1, k);
  return 1;
}

static int mt_newindex(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1);
  if (lua_type(L, 2) == LUA_TNUMBER) {   /* t[i] = v or tensor: copy into select(1, i) */
    lua_Integer i = luaL_checkinteger(L, 2);
    al_tensor *v = NULL;
    if (i == 0) return luaL_error(L, "attnlab: index 0 is invalid: indices are 1-based");
    L_TRY(L, "index", al_select(&v, t, 0, i > 0 ? i - 1 : i));
    al_status st;
    if (lua_type(L, 3) == LUA_TNUMBER) { al_fill(v, lua_tonumber(L, 3)); st = AL_OK; }
    else {
      al_tensor *s = NULL, *e = NULL;
      l_tensor *anchor = lua_newuserdatauv(L, sizeof *anchor, 0);   /* v must not leak if the value is bad */
      anchor->t = v;
      luaL_setmetatable(L, TENSOR_MT);
      s = l_checktensorish(L, 3);
      st = al_expand(&e, s, v->ndim, v->shape);
      if (st) {
        char a[128], b[128];
        st = al_seterr(AL_EINVAL, "index: cannot assign %s to t[%lld], which is %s", al_shape_str(s, a, sizeof a), (long long)i, al_shape_str(v, b, sizeof b));
      }
      if (!st) st = al_copy_into(v, e);
      al_tensor_release(e);
      v = al_tensor_retain(v);   /* the anchor keeps its own reference until collected */
    }
    al_tensor_release(v);
    if (st) return l_raise(L, "index");
    return 0;
  }
  const char *k = luaL_checkstring(L, 2);
  if (!strcmp(k, "grad")) {
    if (lua_isnil(L, 3)) { al_tensor_release(t->grad); t->grad = NULL; return 0; }
    al_tensor *g = l_checktensor(L, 3);
    if (!al_same_shape(g, t) || g->dtype != AL_F32) {
      char a[128], b[128];
      return luaL_error(L, "attnlab: assigned grad %s does not match the tensor %s (want float32, same shape)", al_shape_str(g, a, sizeof a), al_shape_str(t, b, sizeof b));
    }
    al_tensor *c = al_tensor_new_like(g);
    if (!c) return l_raise(L, "grad");
    al_copy_into(c, g);
    al_tensor_release(t->grad);
    t->grad = c;
    return 0;
  }
  if (!strcmp(k, "requires_grad")) {
    lua_settop(L, 3);
    lua_remove(L, 2);
    return m_requires_grad_(L);
  }
  return luaL_error(L, "attnlab: cannot set field '%s' of a tensor", k);
}

static const luaL_Reg methods[] = {
  {"shape", m_shape}, {"size", m_size}, {"stride", m_stride}, {"dim", m_dim}, {"numel", m_numel},
  {"dtype", m_dtype}, {"is_contiguous", m_is_contiguous}, {"totable", m_totable}, {"item", m_item},
  {"reshape", m_reshape}, {"view", m_reshape}, {"transpose", m_transpose}, {"permute", m_permute},
  {"narrow", m_narrow}, {"select", m_select}, {"squeeze", m_squeeze}, {"unsqueeze", m_unsqueeze},
  {"expand", m_expand}, {"contiguous", m_contiguous}, {"clone", m_clone}, {"detach", m_detach},
  {"float", m_float}, {"long", m_long}, {"requires_grad_", m_requires_grad_}, {"backward", m_backward},
  {"copy_", m_copy_}, {"fill_", m_fill_}, {"zero_", m_zero_}, {"add_", m_add_}, {"mul_", m_mul_},
  {"normal_", m_normal_}, {"uniform_", m_uniform_}, {"sumsq", m_sumsq}, {"has_nonfinite", m_has_nonfinite},
  {"storage_id", m_storage_id}, {"__close", mt_gc}, {"release", mt_gc},
  {NULL, NULL}};

static const luaL_Reg metamethods[] = {
  {"__gc", mt_gc}, {"__close", mt_gc}, {"__tostring", mt_tostring}, {"__index", mt_index},
  {"__newindex", mt_newindex}, {"__add", mt_add}, {"__sub", mt_sub}, {"__mul", mt_mul},
  {"__div", mt_div}, {"__unm", mt_unm}, {"__pow", mt_pow}, {"__len", mt_len}, {NULL, NULL}};

static const luaL_Reg functions[] = {
  {"tensor", l_tensor_new}, {"zeros", l_zeros}, {"ones", l_ones}, {"empty", l_empty}, {"full", l_full},
  {"arange", l_arange}, {NULL, NULL}};

void l_open_tensor(lua_State *L) {
  luaL_newmetatable(L, TENSOR_MT);
  luaL_setfuncs(L, metamethods, 0);
  luaL_newlib(L, methods);
  lua_setfield(L, -2, "methods");
  lua_pushliteral(L, "attnlab.Tensor");
  lua_setfield(L, -2, "__name");
  lua_pop(L, 1);
  luaL_setfuncs(L, functions, 0);
  /* expose the method table so Lua code can add methods (al.Tensor.foo = ...) */
  luaL_getmetatable(L, TENSOR_MT);
  lua_getfield(L, -1, "methods");
  lua_setfield(L, -3, "Tensor");
  lua_pop(L, 1);
}
