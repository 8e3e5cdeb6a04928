/* lua/bind/tensor_methods.c -- the Tensor methods that read it or make views of it:
 * geometry (shape, size, stride, dim, numel, dtype), conversion to Lua values (totable,
 * item), views and copies (reshape, transpose, permute, narrow, select, squeeze, unsqueeze,
 * expand, contiguous, clone, detach, float, long) and autograd (requires_grad_, backward).
 * Dims and positions are 1-based, as everywhere in the Lua API. */
#include <string.h>

#include "attnlab/autograd.h"
#include "bind.h"

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
  /* al_wrap_dim takes a 0-dim tensor as 1-dim (sum(x, 1) reduces a scalar), and its size(1)
   * read shape[0], which a 0-dim tensor does not have: 0, as if it were empty */
  if (t->ndim == 0) return luaL_error(L, "attnlab.size: a 0-dim tensor has no dims (size() is {})");
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

/* t:reshape(...) and t:expand(...): a view of the shape given as a table or as numbers. */
typedef al_status (*shape_op)(al_tensor **out, al_tensor *x, int ndim, const int64_t *shape);

static int to_shape(lua_State *L, const char *name, shape_op op) {
  al_tensor *t = l_checktensor(L, 1), *o = NULL;
  int64_t shape[AL_MAXDIM];
  int nd = l_checkshape(L, 2, shape, name);
  L_TRY(L, name, op(&o, t, nd, shape));
  return l_pushtensor(L, o);
}

static int m_reshape(lua_State *L) { return to_shape(L, "reshape", al_reshape); }

/* t:view(...): reshape that never copies. reshape copies a non-contiguous tensor (a transpose,
 * a narrow), and a "view" that is a copy loses every write made through it, silently (as in
 * PyTorch, view refuses instead; this refuses every non-contiguous tensor, a few views PyTorch
 * would allow included). A layout check only, once per call. */
static int m_view(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1);
  if (!al_is_contiguous(t)) {
    char b[128];
    return luaL_error(L, "attnlab.view: %s is not contiguous (a transpose, permute, narrow or expand of another "
                         "tensor), and a view cannot reshape it; use reshape (which copies) or contiguous():view",
                      al_shape_str(t, b, sizeof b));
  }
  return to_shape(L, "view", al_reshape);
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
    if (v == 0 || v > nd || v < -nd) return luaL_error(L, "attnlab.permute: dim %I out of range (1-based)", (LUAI_UACINT)v);
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
  /* before the cast to int: 2^40 became dim 0, a silent unsqueeze at the front */
  if (d > AL_MAXDIM + 1 || d < -(AL_MAXDIM + 1))
    return luaL_error(L, "attnlab.unsqueeze: dim %I out of range (tensors have at most %d dims)", (LUAI_UACINT)d, AL_MAXDIM);
  L_TRY(L, "unsqueeze", al_unsqueeze(&o, t, d > 0 ? (int)d - 1 : (int)d));
  return l_pushtensor(L, o);
}

static int m_expand(lua_State *L) { return to_shape(L, "expand", al_expand); }

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

int l_tensor_requires_grad_(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1);
  /* t.requires_grad = "no" turned it on: only true, false (or nothing: true) */
  if (!lua_isnone(L, 2) && !lua_isboolean(L, 2))
    return luaL_error(L, "attnlab.requires_grad_: expects true or false, got %s", luaL_typename(L, 2));
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
  if (opts) {   /* {retain=true} was ignored: the graph was freed, and the next backward failed */
    static const char *const keys[] = {"retain_graph", NULL};
    l_check_keys(L, opts, "backward", keys);
    retain = l_optbool_field(L, opts, "retain_graph", 0, "backward");
  }
  if (g && g->dtype != AL_F32) {
    char b[128];
    return luaL_error(L, "attnlab.backward: the gradient must be float32, got %s", al_shape_str(g, b, sizeof b));
  }
  L_TRY(L, "backward", al_backward(t, g, retain));
  return 0;
}

const luaL_Reg l_tensor_view_methods[] = {
  {"shape", m_shape}, {"size", m_size}, {"stride", m_stride}, {"dim", m_dim}, {"numel", m_numel},
  {"dtype", m_dtype}, {"is_contiguous", m_is_contiguous}, {"totable", m_totable}, {"item", m_item},
  {"reshape", m_reshape}, {"view", m_view}, {"transpose", m_transpose}, {"permute", m_permute},
  {"narrow", m_narrow}, {"select", m_select}, {"squeeze", m_squeeze}, {"unsqueeze", m_unsqueeze},
  {"expand", m_expand}, {"contiguous", m_contiguous}, {"clone", m_clone}, {"detach", m_detach},
  {"float", m_float}, {"long", m_long}, {"requires_grad_", l_tensor_requires_grad_}, {"backward", m_backward},
  {NULL, NULL}};
