/* lua/bind/ops.c -- Lua functions for the differentiable ops (module functions,
 * and the same functions as tensor methods where that reads naturally). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/rng.h"
#include "bind.h"

/* ---- unary ------------------------------------------------------------------------ */
#define UNARY(fname, op)                                           \
  static int u_##fname(lua_State *L) {                             \
    al_tensor *x = l_checktensor(L, 1), *o = NULL;                 \
    L_TRY(L, #fname, al_unary(&o, op, x));                         \
    return l_pushtensor(L, o);                                     \
  }
UNARY(neg, AL_NEG) UNARY(exp, AL_EXP) UNARY(log, AL_LOG) UNARY(sqrt, AL_SQRT) UNARY(tanh, AL_TANH)
UNARY(sigmoid, AL_SIGMOID) UNARY(relu, AL_RELU) UNARY(gelu, AL_GELU) UNARY(silu, AL_SILU)
UNARY(softplus, AL_SOFTPLUS) UNARY(abs, AL_ABS) UNARY(sin, AL_SIN) UNARY(cos, AL_COS)
UNARY(rsqrt, AL_RSQRT) UNARY(log1p, AL_LOG1P) UNARY(sign, AL_SIGN) UNARY(floor, AL_FLOOR)
UNARY(round, AL_ROUND) UNARY(erf, AL_ERF)

/* ---- binary ----------------------------------------------------------------------- */
static int binary(lua_State *L, al_binop op, const char *name) {
  al_tensor *a = l_operand(L, 1, 2), *b = l_operand(L, 2, 1), *o = NULL;   /* borrowed */
  L_TRY(L, name, al_binary(&o, op, a, b));
  return l_pushtensor(L, o);
}
#define BINARY(fname, op) static int l_##fname(lua_State *L) { return binary(L, op, #fname); }
BINARY(add, AL_ADD) BINARY(sub, AL_SUB) BINARY(mul, AL_MUL) BINARY(div, AL_DIV)
BINARY(maximum, AL_MAXIMUM) BINARY(minimum, AL_MINIMUM) BINARY(gt, AL_GT) BINARY(ge, AL_GE)
BINARY(lt, AL_LT) BINARY(le, AL_LE) BINARY(eq, AL_EQ) BINARY(ne, AL_NE)

static int l_pow(lua_State *L) {
  al_tensor *x = l_checktensor(L, 1), *o = NULL;
  L_TRY(L, "pow", al_pow_scalar(&o, x, luaL_checknumber(L, 2)));
  return l_pushtensor(L, o);
}

static int l_clamp(lua_State *L) {
  al_tensor *x = l_checktensor(L, 1), *o = NULL;
  double lo = luaL_opt(L, luaL_checknumber, 2, -INFINITY), hi = luaL_opt(L, luaL_checknumber, 3, INFINITY);
  L_TRY(L, "clamp", al_clamp(&o, x, lo, hi));
  return l_pushtensor(L, o);
}

static int l_where(lua_State *L) {
  al_tensor *c = l_checktensor(L, 1), *a = l_operand(L, 2, 3), *b = l_operand(L, 3, 2), *o = NULL;
  L_TRY(L, "where", al_where(&o, c, a, b));
  return l_pushtensor(L, o);
}

static int l_masked_fill(lua_State *L) {
  al_tensor *x = l_checktensor(L, 1), *m = l_checktensor(L, 2), *o = NULL;
  /* the value reaches the op as a double, which holds integers exactly up to 2^53 only */
  if (x->dtype == AL_I64 && lua_isinteger(L, 3)) {
    lua_Integer v = lua_tointeger(L, 3), lim = (lua_Integer)1 << 53;
    if (v > lim || v < -lim)
      return luaL_error(L, "attnlab.masked_fill: %I is beyond 2^53, which masked_fill cannot write into int64 exactly: "
                        "al.where(m, al.full(x:shape(), v, {dtype = \"int64\"}), x) can", (LUAI_UACINT)v);
  }
  L_TRY(L, "masked_fill", al_masked_fill(&o, x, m, luaL_checknumber(L, 3)));
  return l_pushtensor(L, o);
}

/* ---- reductions: f(t) over all, f(t, dim [, keepdim]) ----------------------------------- */
/* Pushes o, the reduction of x over all its elements (0-d); with keepdim, as PyTorch's
 * sum(x, dim=None, keepdim=True), reshaped to x's number of dims, all of size 1. keepdim was
 * ignored without a dim: a 0-d result where (1,1) was asked for. Takes o's reference. */
static int push_all(lua_State *L, al_tensor *o, const al_tensor *x, int keep, const char *name) {
  if (keep && x->ndim > 0) {
    int64_t ones[AL_MAXDIM];
    for (int i = 0; i < x->ndim; i++) ones[i] = 1;
    al_tensor *r = NULL;
    al_status st = al_reshape(&r, o, x->ndim, ones);
    al_tensor_release(o);
    if (st) return l_raise(L, name);
    o = r;
  }
  return l_pushtensor(L, o);
}

static int reduce(lua_State *L, int mean, const char *name) {
  al_tensor *x = l_checktensor(L, 1), *o = NULL;
  if (lua_isnoneornil(L, 2)) {
    int keep = l_optbool_arg(L, 3, 0, name, "keepdim");
    L_TRY(L, name, mean ? al_mean_all(&o, x) : al_sum_all(&o, x));
    return push_all(L, o, x, keep, name);
  }
  else {
    int d = l_checkdim(L, 2, name), keep = l_optbool_arg(L, 3, 0, name, "keepdim");
    L_TRY(L, name, mean ? al_mean_dim(&o, x, d, keep) : al_sum_dim(&o, x, d, keep));
  }
  return l_pushtensor(L, o);
}
static int l_sum(lua_State *L) { return reduce(L, 0, "sum"); }
static int l_mean(lua_State *L) { return reduce(L, 1, "mean"); }

/* max(t) -> value tensor; max(t, dim [, keepdim]) -> values, indices (1-based);
 * max(a, b) with a tensor b -> al.maximum(a, b), as PyTorch's torch.max(input, other) (it said
 * "bad argument #2 (number expected, got attnlab.Tensor)"). */
static int extreme(lua_State *L, int is_min, const char *name) {
  al_tensor *x = l_checktensor(L, 1), *v = NULL, *i = NULL;
  al_tensor *other = l_totensor(L, 2);
  if (other) {
    if (!lua_isnone(L, 3))
      return luaL_error(L, "attnlab.%s: %s(a, b) of two tensors is elementwise and takes no keepdim", name, name);
    L_TRY(L, name, al_binary(&v, is_min ? AL_MINIMUM : AL_MAXIMUM, x, other));
    return l_pushtensor(L, v);
  }
  if (lua_isnoneornil(L, 2)) {
    int keep = l_optbool_arg(L, 3, 0, name, "keepdim");
    L_TRY(L, name, is_min ? al_min_all(&v, x) : al_max_all(&v, x));
    return push_all(L, v, x, keep, name);
  }
  int d = l_checkdim(L, 2, name), keep = l_optbool_arg(L, 3, 0, name, "keepdim");
  L_TRY(L, name, is_min ? al_min_dim(&v, &i, x, d, keep) : al_max_dim(&v, &i, x, d, keep));
  l_pushtensor(L, v);
  al_tensor *i1 = NULL;
  al_status st = al_affine(&i1, i, 1, 1);
  al_tensor_release(i);
  if (st) return l_raise(L, name);
  l_pushtensor(L, i1);
  return 2;
}
static int l_max(lua_State *L) { return extreme(L, 0, "max"); }
static int l_min(lua_State *L) { return extreme(L, 1, "min"); }

static int l_argmax(lua_State *L) {
  al_tensor *x = l_checktensor(L, 1), *i = NULL, *i1 = NULL;
  int d = l_optdim(L, 2, -1, "argmax"), keep = l_optbool_arg(L, 3, 0, "argmax", "keepdim");
  if (lua_isnoneornil(L, 2) && x->ndim != 1) {   /* flat argmax over all elements */
    al_tensor *f = NULL;
    int64_t n = al_numel(x);
    L_TRY(L, "argmax", al_reshape(&f, x, 1, &n));
    al_status st = al_max_dim(NULL, &i, f, 0, 0);
    al_tensor_release(f);
    if (st) return l_raise(L, "argmax");
  } else {
    L_TRY(L, "argmax", al_max_dim(NULL, &i, x, d, keep));
  }
  al_status st = al_affine(&i1, i, 1, 1);
  al_tensor_release(i);
  if (st) return l_raise(L, "argmax");
  if (lua_isnoneornil(L, 2)) return push_all(L, i1, x, keep, "argmax");
  return l_pushtensor(L, i1);
}

/* var(t [, dim [, keepdim]] [, {unbiased=true}]) -- the options table may follow any of
 * the positional arguments (std passes it fourth, var(t, {unbiased=false}) second). */
static int l_var(lua_State *L) {
  al_tensor *x = l_checktensor(L, 1), *o = NULL;
  int unbiased = 1, keep = 0, has_dim = 0, d = 0;
  int top = lua_gettop(L);
  for (int i = 2; i <= top && i <= 4; i++) {
    if (lua_istable(L, i)) {   /* {unbaised = false} was ignored: the unbiased variance */
      static const char *const keys[] = {"unbiased", NULL};
      l_check_keys(L, i, "var", keys);
      unbiased = l_optbool_field(L, i, "unbiased", unbiased, "var");
    } else if (i == 2 && !lua_isnil(L, 2)) {
      d = l_checkdim(L, 2, "var");
      has_dim = 1;
    } else if (i == 3 && !lua_isnil(L, 3)) {
      keep = l_optbool_arg(L, 3, 0, "var", "keepdim");
    }
  }
  if (!has_dim) {
    al_tensor *f = NULL;
    int64_t n = al_numel(x);
    L_TRY(L, "var", al_reshape(&f, x, 1, &n));
    al_status st = al_var_dim(&o, f, 0, 0, unbiased);
    al_tensor_release(f);
    if (st) return l_raise(L, "var");
    return push_all(L, o, x, keep, "var");
  }
  L_TRY(L, "var", al_var_dim(&o, x, d, keep, unbiased));
  return l_pushtensor(L, o);
}

/* ---- linear algebra and nn ops -------------------------------------------------------- */
static int l_matmul(lua_State *L) {
  al_tensor *a = l_checktensor(L, 1), *b = l_checktensor(L, 2), *o = NULL;
  L_TRY(L, "matmul", al_matmul(&o, a, b));
  return l_pushtensor(L, o);
}

static int l_linear(lua_State *L) {
  al_tensor *x = l_checktensor(L, 1), *w = l_checktensor(L, 2), *b = lua_isnoneornil(L, 3) ? NULL : l_checktensor(L, 3), *o = NULL;
  L_TRY(L, "linear", al_linear(&o, x, w, b));
  return l_pushtensor(L, o);
}

/* al.layer_norm(x [, weight [, bias [, eps]]]) over the last dim. eps defaults to 1e-5, as
 * PyTorch's F.layer_norm and al.nn.LayerNorm (it was 1e-6: timm's ViT value, which nn.ViT
 * passes itself); it matters for rows of small spread. */
static int l_layer_norm(lua_State *L) {
  al_tensor *x = l_checktensor(L, 1);
  al_tensor *w = lua_isnoneornil(L, 2) ? NULL : l_checktensor(L, 2), *b = lua_isnoneornil(L, 3) ? NULL : l_checktensor(L, 3), *o = NULL;
  double eps = luaL_optnumber(L, 4, 1e-5);
  L_TRY(L, "layer_norm", al_layer_norm(&o, x, w, b, eps));
  return l_pushtensor(L, o);
}

static int l_log_softmax(lua_State *L) {
  al_tensor *x = l_checktensor(L, 1), *o = NULL;
  L_TRY(L, "log_softmax", al_log_softmax(&o, x, l_optdim(L, 2, -1, "log_softmax")));
  return l_pushtensor(L, o);
}

/* cross_entropy(logits (B,C), labels (B) int64 1-based [, {label_smoothing=, ignore_index=}]) */
static int l_cross_entropy(lua_State *L) {
  al_tensor *x = l_checktensor(L, 1), *y = l_checktensor(L, 2), *o = NULL;
  double eps = 0;
  int64_t ignore = INT64_MIN;
  if (!lua_isnoneornil(L, 3) && !lua_istable(L, 3))   /* a bare 0.1 was ignored: say where it goes */
    return luaL_argerror(L, 3, "expected an options table {label_smoothing=, ignore_index=}");
  if (lua_istable(L, 3)) {
    static const char *const keys[] = {"label_smoothing", "ignore_index", NULL};
    l_check_keys(L, 3, "cross_entropy", keys);
    /* named here: luaL_checknumber on the field said "bad argument #-1" */
    lua_getfield(L, 3, "label_smoothing");
    if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TNUMBER)
      return luaL_error(L, "attnlab.cross_entropy: option label_smoothing: number expected (in [0,1]), got a %s", luaL_typename(L, -1));
    eps = luaL_optnumber(L, -1, 0);
    lua_getfield(L, 3, "ignore_index");
    if (!lua_isnil(L, -1)) {
      if (!lua_isinteger(L, -1))
        return luaL_error(L, "attnlab.cross_entropy: ignore_index must be an integer (a 1-based label), got %s",
                          lua_type(L, -1) == LUA_TNUMBER ? l_numstr(L, lua_tonumber(L, -1)) : luaL_typename(L, -1));
      lua_Integer ii = lua_tointeger(L, -1);
      if (ii == LUA_MININTEGER)   /* ii - 1 would overflow */
        return luaL_error(L, "attnlab.cross_entropy: ignore_index %I is out of range", (LUAI_UACINT)ii);
      ignore = ii - 1;
    }
    lua_pop(L, 2);
  }
  al_tensor *y0 = l_index_to0(L, y, "cross_entropy");
  al_status st = al_cross_entropy(&o, x, y0, eps, ignore);
  al_tensor_release(y0);
  if (st) return l_raise(L, "cross_entropy");
  return l_pushtensor(L, o);
}

static int l_mse(lua_State *L) {
  al_tensor *a = l_checktensor(L, 1), *b = l_checktensor(L, 2), *o = NULL;
  L_TRY(L, "mse", al_mse(&o, a, b));
  return l_pushtensor(L, o);
}

static int l_dropout(lua_State *L) {
  al_tensor *x = l_checktensor(L, 1), *o = NULL;
  double p = luaL_checknumber(L, 2);
  int training = l_optbool_arg(L, 3, 1, "dropout", "training");
  /* the core checks p when it drops; in eval mode a NaN p passed unnoticed (said as the core says it) */
  if (!(p >= 0 && p < 1)) {
    al_seterr(AL_EINVAL, "dropout: p must be in [0, 1), got %g", p);
    return l_raise(L, "dropout");
  }
  if (!training) { lua_settop(L, 1); return 1; }
  L_TRY(L, "dropout", al_dropout(&o, x, p, l_optrng(L, 4)));
  return l_pushtensor(L, o);
}

/* ---- shape ops taking lists ----------------------------------------------------------- */
static al_tensor **tensor_list(lua_State *L, int idx, int *n, const char *name) {
  luaL_checktype(L, idx, LUA_TTABLE);
  *n = (int)luaL_len(L, idx);
  if (*n < 1) { luaL_error(L, "attnlab.%s: needs a non-empty list of tensors", name); return NULL; }
  al_tensor **xs = lua_newuserdatauv(L, sizeof(al_tensor *) * (size_t)*n, 0);   /* freed by GC */
  for (int i = 1; i <= *n; i++) {
    lua_geti(L, idx, i);
    l_tensor *u = luaL_testudata(L, -1, TENSOR_MT);
    if (!u) { luaL_error(L, "attnlab.%s: element %d of the list is a %s, not a tensor", name, i, luaL_typename(L, -1)); return NULL; }
    if (!u->t) { luaL_error(L, "attnlab.%s: element %d of the list is a tensor that was released (closed)", name, i); return NULL; }
    al_tensor *t = u->t;
    xs[i - 1] = t;
    lua_pop(L, 1);
  }
  return xs;
}

/* cat(list [, dim = 1]) -- the dim is read before tensor_list pushes its array. */
static int l_cat(lua_State *L) {
  int n, d = l_optdim(L, 2, 0, "cat");
  al_tensor **xs = tensor_list(L, 1, &n, "cat"), *o = NULL;
  L_TRY(L, "cat", al_cat(&o, xs, n, d));
  return l_pushtensor(L, o);
}

static int l_stack(lua_State *L) {
  int n, d = 0;
  if (!lua_isnoneornil(L, 2)) {
    lua_Integer v = luaL_checkinteger(L, 2);
    if (v == 0) return luaL_argerror(L, 2, "dim 0 is invalid: dims are 1-based");
    /* before the cast to int: 2^40 became dim 0, a silent stack along dim 1 */
    if (v > AL_MAXDIM || v < -AL_MAXDIM)
      return luaL_error(L, "attnlab.stack: dim %I out of range (tensors have at most %d dims)", (LUAI_UACINT)v, AL_MAXDIM);
    d = v > 0 ? (int)v - 1 : (int)v;
  }
  al_tensor **xs = tensor_list(L, 1, &n, "stack"), *o = NULL;
  L_TRY(L, "stack", al_stack(&o, xs, n, d));
  return l_pushtensor(L, o);
}

/* name(x, dim, index): an op that picks entries of x along dim by 1-based int64 indices. */
typedef al_status (*index_op_fn)(al_tensor **out, al_tensor *x, int dim, al_tensor *index0);
static int indexed_op(lua_State *L, const char *name, index_op_fn op) {
  al_tensor *x = l_checktensor(L, 1), *o = NULL;
  int d = l_checkdim(L, 2, name);
  al_tensor *i0 = l_index_to0(L, l_checktensor(L, 3), name);
  al_status st = op(&o, x, d, i0);
  al_tensor_release(i0);
  if (st) return l_raise(L, name);
  return l_pushtensor(L, o);
}

static int l_index_select(lua_State *L) { return indexed_op(L, "index_select", al_index_select); }
static int l_gather(lua_State *L) { return indexed_op(L, "gather", al_gather); }

/* embedding(weight (V,D), ids int64 1-based) */
static int l_embedding(lua_State *L) {
  al_tensor *w = l_checktensor(L, 1), *o = NULL;
  al_tensor *i0 = l_index_to0(L, l_checktensor(L, 2), "embedding");
  al_status st = al_embedding(&o, w, i0);
  al_tensor_release(i0);
  if (st) return l_raise(L, "embedding");
  return l_pushtensor(L, o);
}

/* ---- normalizers ---------------------------------------------------------------------
 * f(x [, dim] [, opts]) with opts = {dim=, mask=, iters=}; mask broadcastable to x, nonzero
 * keep; iters only for the rows that iterate (the alpha ones, bisection). Errors name the op
 * and the option: the stack index of a field ("bad argument #3") is no argument the caller
 * passed. */
static int opt_dim_field(lua_State *L, int idx, const char *fname) {
  if (!lua_isinteger(L, idx))
    luaL_error(L, "attnlab.%s: option dim must be an integer (1-based, -1 the last), got %s", fname,
               lua_type(L, idx) == LUA_TNUMBER ? l_numstr(L, lua_tonumber(L, idx)) : lua_pushfstring(L, "a %s", luaL_typename(L, idx)));
  lua_Integer v = lua_tointeger(L, idx);
  if (v == 0) luaL_error(L, "attnlab.%s: option dim 0 is invalid: dims are 1-based (-1 is the last)", fname);
  if (v > AL_MAXDIM || v < -AL_MAXDIM)
    luaL_error(L, "attnlab.%s: option dim %I out of range (tensors have at most %d dims)", fname, (LUAI_UACINT)v, AL_MAXDIM);
  return v > 0 ? (int)(v - 1) : (int)v;
}

/* The names of the table's rows that take parameter p, "a, b" (pushed), for messages. */
static const char *rows_with(lua_State *L, al_norm_param p) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int k = 0; k < AL_NORM_COUNT; k++) {
    const al_norm_desc *o = al_norm_get((al_norm_kind)k);
    if (!o || o->param != p) continue;
    if (luaL_bufflen(&b)) luaL_addstring(&b, ", ");
    luaL_addstring(&b, o->name);
  }
  luaL_pushresult(&b);
  return lua_tostring(L, -1);
}

/* A dim given a second time, as a number or an option (al.softmax(x, 1, {dim = 2})), must be the
 * same dim of x (ndim dims; -1 and 2 are one dim of a 2-D x): the last one was taken, silently. */
static void set_dim(lua_State *L, const al_norm_desc *d, int ndim, int *dim, int *given, int v) {
  if (*given && (v < 0 ? v + ndim : v) != (*dim < 0 ? *dim + ndim : *dim))
    luaL_error(L, "attnlab.%s: dim given twice, %d and %d", d->name, *dim >= 0 ? *dim + 1 : *dim, v >= 0 ? v + 1 : v);
  *dim = v;
  *given = 1;
}

static void norm_opts(lua_State *L, int first, const al_norm_desc *d, int ndim, int *dim, al_tensor **mask, int *iters) {
  int top = lua_gettop(L), given = 0;
  for (int i = first; i <= top; i++) {
    if (lua_type(L, i) == LUA_TNUMBER) set_dim(L, d, ndim, dim, &given, l_checkdim(L, i, d->name));
    else if (lua_istable(L, i)) {
      static const char *const keys[] = {"dim", "mask", "iters", NULL};
      l_check_keys(L, i, d->name, keys);
      lua_getfield(L, i, "dim");
      if (!lua_isnil(L, -1)) set_dim(L, d, ndim, dim, &given, opt_dim_field(L, lua_gettop(L), d->name));
      lua_pop(L, 1);
      lua_getfield(L, i, "mask");
      if (!lua_isnil(L, -1)) {
        *mask = l_totensor(L, -1);
        if (!*mask)
          luaL_error(L, "attnlab.%s: option mask must be a tensor broadcastable to x (nonzero = keep), got a %s", d->name,
                     luaL_typename(L, -1));
      }
      lua_pop(L, 1);   /* the tensor stays referenced by the options table */
      lua_getfield(L, i, "iters");
      if (!lua_isnil(L, -1)) {
        /* nothing in the library passes iters to a row that does not iterate (nn.Normalizer
         * gives it to the alpha rows only): there it was ignored, silently */
        if (d->param != AL_NORM_P_ALPHA)
          luaL_error(L, "attnlab.%s: option iters does not apply to %s, which does not iterate (it is for %s)", d->name,
                     d->name, rows_with(L, AL_NORM_P_ALPHA));
        /* an explicit count below 1 was taken as "the default", silently */
        if (!lua_isinteger(L, -1))
          luaL_error(L, "attnlab.%s: iters must be an integer in 1..%d, got %s", d->name, INT_MAX,
                     lua_type(L, -1) == LUA_TNUMBER ? l_numstr(L, lua_tonumber(L, -1)) : lua_pushfstring(L, "a %s", luaL_typename(L, -1)));
        lua_Integer it = lua_tointeger(L, -1);
        if (it < 1 || it > INT_MAX) luaL_error(L, "attnlab.%s: iters must be an integer in 1..%d, got %I", d->name, INT_MAX, (LUAI_UACINT)it);
        *iters = (int)it;
      }
      lua_pop(L, 1);
    } else if (!lua_isnil(L, i)) {
      luaL_argerror(L, i, "expected a dim (number) or an options table {dim=, mask=}");
    }
  }
}

/* An alpha given as a tensor (a number is read by the caller): anything else -- a string
 * "1.5" too, which Lua would coerce where a number is read -- is refused naming what alpha may
 * be, not as "attnlab tensor expected". */
static al_tensor *l_check_alpha(lua_State *L, int idx, const char *fname) {
  al_tensor *t = l_totensor(L, idx);
  if (!t && lua_type(L, idx) == LUA_TSTRING)
    luaL_error(L, "attnlab.%s: alpha must be a number or a tensor, got the string '%s'", fname, lua_tostring(L, idx));
  if (!t) luaL_error(L, "attnlab.%s: alpha must be a number or a tensor, got a %s", fname, luaL_typename(L, idx));
  return t;
}

/* al.<name>(x [, param] [, dim | opts]) for every row of the normalizer table
 * (attnlab/norm_registry.h); upvalue 1: the row's kind. The parameter: ratio (required number)
 * or alpha (a number or a tensor broadcastable to x with size 1 along dim; default the row's,
 * also when an options table stands in its place). */
static int l_normalizer(lua_State *L) {
  const al_norm_desc *d = al_norm_get((al_norm_kind)lua_tointeger(L, lua_upvalueindex(1)));
  al_tensor *x = l_checktensor(L, 1), *mask = NULL, *o = NULL, *alpha = NULL;
  int dim = -1, iters = 0, first = 2;
  double ratio = 0, av = d->param_default;
  if (d->param == AL_NORM_P_RATIO) {
    /* a number only: luaL_checknumber took the string "0.5" as well (alpha refuses it too) */
    if (lua_type(L, 2) != LUA_TNUMBER) {
      if (lua_type(L, 2) == LUA_TSTRING)
        return luaL_error(L, "attnlab.%s: ratio must be a number in (0, 1], got the string '%s'", d->name, lua_tostring(L, 2));
      if (lua_isnone(L, 2)) return luaL_error(L, "attnlab.%s: ratio is required: a number in (0, 1]", d->name);
      return luaL_error(L, "attnlab.%s: ratio must be a number in (0, 1], got a %s", d->name, luaL_typename(L, 2));
    }
    ratio = lua_tonumber(L, 2);
    first = 3;
  }
  else if (d->param == AL_NORM_P_ALPHA) {
    /* alpha may be left out: an options table in its place is the options (al.entmax_bisect(x,
     * {mask = m}) was refused as "alpha must be a number or a tensor, got a table"); a list
     * ({1.5}, alpha as a Lua table) is still refused as an alpha */
    if (lua_istable(L, 2) && lua_rawlen(L, 2) == 0) first = 2;
    else {
      if (lua_type(L, 2) == LUA_TNUMBER) av = lua_tonumber(L, 2);
      else if (!lua_isnoneornil(L, 2)) alpha = l_check_alpha(L, 2, d->name);
      first = 3;
    }
  }
  norm_opts(L, first, d, x->ndim, &dim, &mask, &iters);
  L_TRY(L, d->name, al_normalize(&o, d->kind, x, dim, mask, ratio, alpha, av, iters));
  return l_pushtensor(L, o);
}

/* al.normalizers() -> the table's rows, in kind order: {name=, spec=, learned=, param=,
 * param_default=, fused=true}. nn.Normalizer and the tests read names from here. */
static int l_normalizers(lua_State *L) {
  lua_createtable(L, AL_NORM_COUNT, 0);
  for (int k = 0; k < AL_NORM_COUNT; k++) {
    const al_norm_desc *d = al_norm_get((al_norm_kind)k);
    if (!d) continue;
    lua_createtable(L, 0, 6);
    lua_pushstring(L, d->name); lua_setfield(L, -2, "name");
    lua_pushstring(L, d->spec); lua_setfield(L, -2, "spec");
    if (d->learned) { lua_pushstring(L, d->learned); lua_setfield(L, -2, "learned"); }
    if (d->param_name) {
      lua_pushstring(L, d->param_name); lua_setfield(L, -2, "param");
      if (d->param == AL_NORM_P_ALPHA) { lua_pushnumber(L, d->param_default); lua_setfield(L, -2, "param_default"); }
    }
    lua_pushboolean(L, 1); lua_setfield(L, -2, "fused");   /* al.attention takes every row */
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  }
  return 1;
}

/* attention(qkv (B,N,3D), {heads=, scale=, normalizer=, ratio=, alpha=, iters=, mask=,
 * weights=}) -> out (B,N,D), weights (B,H,N,N) (only out with weights = false; the weights are
 * differentiable, to qkv's q and k and to alpha, as out is: a loss may use them). normalizer: the
 * name of a row of the normalizer table (al.normalizers()); its parameter: ratio, or alpha (a
 * number or a tensor with one value per head). mask: (B,N), nonzero = a key that may be
 * attended to. scale: default (D/heads)^-0.5. */
static int l_attention(lua_State *L) {
  al_tensor *qkv = l_checktensor(L, 1), *o = NULL, *p = NULL;
  luaL_checktype(L, 2, LUA_TTABLE);
  static const char *const keys[] = {"heads", "scale", "normalizer", "ratio", "alpha", "iters", "mask", "weights", NULL};
  l_check_keys(L, 2, "attention", keys);
  al_attention_opts op = {0};
  lua_getfield(L, 2, "heads");
  if (!lua_isinteger(L, -1)) {   /* (as the other options: "bad argument #2 ..." named no option) */
    if (lua_isnil(L, -1)) return luaL_error(L, "attnlab.attention: option heads is required (an integer >= 1)");
    return luaL_error(L, "attnlab.attention: option heads must be an integer >= 1, got %s",
                      lua_type(L, -1) == LUA_TNUMBER ? l_numstr(L, lua_tonumber(L, -1)) : lua_pushfstring(L, "a %s", luaL_typename(L, -1)));
  }
  op.heads = lua_tointeger(L, -1);
  lua_getfield(L, 2, "scale");
  if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TNUMBER)   /* luaL_optnumber said "bad argument #-1" */
    return luaL_error(L, "attnlab.attention: scale must be a number, got a %s", luaL_typename(L, -1));
  int64_t D = qkv->ndim == 3 ? qkv->shape[2] / 3 : 0;
  op.scale = luaL_optnumber(L, -1, op.heads > 0 && D > 0 ? 1.0 / sqrt((double)D / (double)op.heads) : 1.0);
  lua_getfield(L, 2, "normalizer");
  if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING) {   /* luaL_optstring said "bad argument #-1" */
    char names[256];
    return luaL_error(L, "attnlab.attention: option normalizer must be a name (%s), got a %s", al_norm_names(names, sizeof names),
                      luaL_typename(L, -1));
  }
  const char *name = luaL_optstring(L, -1, "softmax");
  const al_norm_desc *nd = al_norm_find(name);
  if (!nd) {
    char names[256];
    return luaL_error(L, "attnlab.attention: unknown normalizer '%s' (%s)", name, al_norm_names(names, sizeof names));
  }
  op.kind = nd->kind;
  /* ratio and alpha only for the normalizers that take them: {normalizer = "softmax", ratio =
   * 0.5} ran plain softmax, silently. MultiHeadAttention passes each only where it applies;
   * iters it passes for every normalizer, so iters stays accepted (and unused) for all. */
  lua_getfield(L, 2, "ratio");
  if (!lua_isnil(L, -1)) {
    if (nd->param != AL_NORM_P_RATIO)
      return luaL_error(L, "attnlab.attention: option ratio does not apply to normalizer %s (it is for %s)", name,
                        rows_with(L, AL_NORM_P_RATIO));
    if (lua_type(L, -1) != LUA_TNUMBER)   /* luaL_optnumber said "bad argument #-1" */
      return luaL_error(L, "attnlab.attention: option ratio must be a number in (0, 1], got %s",
                        lua_type(L, -1) == LUA_TSTRING ? lua_pushfstring(L, "the string '%s'", lua_tostring(L, -1))
                                                       : lua_pushfstring(L, "a %s", luaL_typename(L, -1)));
    op.ratio = lua_tonumber(L, -1);
  } else if (nd->param == AL_NORM_P_RATIO) {   /* the core said "ratio must be in (0, 1], got 0": none was given */
    return luaL_error(L, "attnlab.attention: normalizer %s needs option ratio, a number in (0, 1]", name);
  }
  lua_getfield(L, 2, "alpha");
  if (!lua_isnil(L, -1) && nd->param != AL_NORM_P_ALPHA)
    return luaL_error(L, "attnlab.attention: option alpha does not apply to normalizer %s (it is for %s)", name,
                      rows_with(L, AL_NORM_P_ALPHA));
  op.alpha_value = nd->param == AL_NORM_P_ALPHA ? nd->param_default : 1.5;
  if (lua_type(L, -1) == LUA_TNUMBER) op.alpha_value = lua_tonumber(L, -1);
  else if (!lua_isnil(L, -1)) op.alpha = l_check_alpha(L, lua_gettop(L), "attention");
  lua_getfield(L, 2, "iters");   /* as the normalizers: a count below 1 is not "the default" */
  if (!lua_isnil(L, -1)) {
    /* named here: luaL_checkinteger said "bad argument #-1 to 'attention'" */
    if (!lua_isinteger(L, -1))
      return luaL_error(L, "attnlab.attention: iters must be an integer in 1..%d, got %s", INT_MAX,
                        lua_type(L, -1) == LUA_TNUMBER ? l_numstr(L, lua_tonumber(L, -1)) : lua_pushfstring(L, "a %s", luaL_typename(L, -1)));
    lua_Integer it = lua_tointeger(L, -1);
    if (it < 1 || it > INT_MAX) return luaL_error(L, "attnlab.attention: iters must be an integer in 1..%d, got %I", INT_MAX, it);
    op.max_iter = (int)it;
  }
  lua_getfield(L, 2, "mask");
  if (!lua_isnil(L, -1)) {
    /* named here: l_checktensor said "bad argument #9 to 'attention'", a stack slot */
    op.key_mask = l_totensor(L, lua_gettop(L));
    if (!op.key_mask)
      return luaL_error(L, "attnlab.attention: option mask must be a tensor (B,N) (nonzero = a key that may be attended to), got a %s",
                        luaL_typename(L, -1));
  }
  lua_getfield(L, 2, "weights");
  if (!lua_isnil(L, -1) && !lua_isboolean(L, -1))
    return luaL_error(L, "attnlab.attention: option weights must be true or false, got a %s", luaL_typename(L, -1));
  int want_p = lua_isnil(L, -1) || lua_toboolean(L, -1);
  lua_pop(L, 8);   /* the tensors stay referenced by the options table */
  L_TRY(L, "attention", al_attention(&o, want_p ? &p : NULL, qkv, &op));
  l_pushtensor(L, o);
  if (!want_p) return 1;
  return 1 + l_pushtensor(L, p);
}

static const luaL_Reg functions[] = {
  {"neg", u_neg}, {"exp", u_exp}, {"log", u_log}, {"sqrt", u_sqrt}, {"tanh", u_tanh},
  {"sigmoid", u_sigmoid}, {"relu", u_relu}, {"gelu", u_gelu}, {"silu", u_silu},
  {"softplus", u_softplus}, {"abs", u_abs}, {"sin", u_sin}, {"cos", u_cos}, {"rsqrt", u_rsqrt},
  {"log1p", u_log1p}, {"sign", u_sign}, {"floor", u_floor}, {"round", u_round}, {"erf", u_erf},
  {"add", l_add}, {"sub", l_sub}, {"mul", l_mul}, {"div", l_div}, {"maximum", l_maximum},
  {"minimum", l_minimum}, {"gt", l_gt}, {"ge", l_ge}, {"lt", l_lt}, {"le", l_le}, {"eq", l_eq},
  {"ne", l_ne}, {"pow", l_pow}, {"clamp", l_clamp}, {"where", l_where}, {"masked_fill", l_masked_fill},
  {"sum", l_sum}, {"mean", l_mean}, {"max", l_max}, {"min", l_min}, {"argmax", l_argmax}, {"var", l_var},
  {"matmul", l_matmul}, {"linear", l_linear}, {"layer_norm", l_layer_norm},
  {"log_softmax", l_log_softmax}, {"cross_entropy", l_cross_entropy}, {"mse", l_mse},
  {"dropout", l_dropout}, {"cat", l_cat}, {"stack", l_stack}, {"index_select", l_index_select},
  {"gather", l_gather}, {"embedding", l_embedding},
  {"attention", l_attention}, {"normalizers", l_normalizers},
  {NULL, NULL}};   /* and al.<name> for each normalizer: l_open_ops */

/* Functions that also read naturally as methods: t:exp(), t:sum(2), t:matmul(b)... */
static const char *as_methods[] = {
  "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "gelu", "silu", "softplus", "abs", "sin", "cos",
  "rsqrt", "log1p", "sign", "floor", "round", "erf", "neg", "add", "sub", "mul", "div", "maximum", "minimum",
  "gt", "ge", "lt", "le", "eq", "ne", "pow", "clamp", "masked_fill", "sum", "mean", "max", "min",
  "argmax", "var", "matmul", "log_softmax", "index_select", "gather", NULL};   /* and every normalizer */

void l_open_ops(lua_State *L) {
  luaL_setfuncs(L, functions, 0);
  luaL_getmetatable(L, TENSOR_MT);
  lua_getfield(L, -1, "methods");
  for (int i = 0; as_methods[i]; i++) {
    lua_getfield(L, -3, as_methods[i]);
    lua_setfield(L, -2, as_methods[i]);
  }
  lua_pop(L, 2);
}

/* al.<name> and x:<name>() for every row of the normalizer table (al.softmax, x:topk_softmax(0.25),
 * ...). Called after every other function of the core is in the table: a row named like one of
 * them or like a tensor method ("relu", "view") would silently replace it, so that is an error
 * naming the row. */
void l_open_normalizers(lua_State *L) {
  luaL_getmetatable(L, TENSOR_MT);
  lua_getfield(L, -1, "methods");   /* al, mt, methods */
  for (int k = 0; k < AL_NORM_COUNT; k++) {
    const al_norm_desc *d = al_norm_get((al_norm_kind)k);
    if (!d) continue;
    int taken_al = lua_getfield(L, -3, d->name) != LUA_TNIL;
    int taken_method = lua_getfield(L, -2, d->name) != LUA_TNIL;
    lua_pop(L, 2);
    if (taken_al || taken_method)
      luaL_error(L, "attnlab: the normalizer '%s' (core/norm/registry.c) has the name of %s%s; rename it",
                 d->name, taken_al ? "al." : "the tensor method x:", d->name);
    lua_pushinteger(L, k);
    lua_pushcclosure(L, l_normalizer, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, -5, d->name);
    lua_setfield(L, -2, d->name);
  }
  lua_pop(L, 2);
}
