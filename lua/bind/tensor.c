/* lua/bind/tensor.c -- the Tensor userdata: checking and pushing it, pacing Lua's collector
 * by the tensor bytes it cannot see, the metatable (__gc/__close, __tostring, indexing,
 * fields, arithmetic) and its registration. The methods are in tensor_methods.c and
 * tensor_data.c, the constructors in tensor_new.c. */
#include <string.h>

#include "attnlab/autograd.h"
#include "bind.h"

/* Registry key of the iterator ipairs returns (Lua's ipairsaux): ipairs(t) walks t[1], t[2],
 * ... until one is nil, so it asks for t[#t + 1], which indexing raises as out of range. */
#define IPAIRS_ITER "attnlab.Tensor.ipairs_iter"

/* ---- lifetime: pacing the collector, checking and pushing ------------------------ */
/* Per OS thread, so states on different threads never race on them. The live byte count
 * they are compared with is process-wide (al_mem_live): with several states each one also
 * sees the others' tensors, which only makes collections a little more frequent. */
static _Thread_local size_t gc_threshold = (size_t)32 << 20;   /* a full collection above this */
static _Thread_local size_t gc_young_at = (size_t)8 << 20;     /* a young collection above this */
static _Thread_local long gc_young_runs, gc_full_runs;          /* collections run here (al.mem()) */

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
  /* When the live bytes fall to less than half of where the next young collection waits (a
   * phase with large buffers ended), the wait comes down with them: otherwise the smaller
   * phase that follows piled up the old phase's quarter in garbage before its first
   * collection (BiMamba after attention at N = 2304: five forwards, 490 MB of freed but
   * uncollected outputs, each call's buffers freshly faulted). A smaller fall is the ebb of
   * every training step (the backward frees the forward's activations): following it down
   * ran two young collections a step instead of one, each freeing less (the cost measured:
   * experiments/classifier/THROUGHPUT.md). A wait left where it is stays at most
   * 2 (live + step), so the garbage alive before a young collection stays below
   * live + 2 step: about 1.5x the live bytes, or 16 MB over them for small live sets. */
  size_t young_wait = live + gc_young_step(live);
  if (young_wait < gc_young_at / 2) gc_young_at = young_wait;
  if (live > gc_threshold) {
    lua_gc(L, LUA_GCCOLLECT);
    gc_full_runs++;
    live = al_mem_live();
    size_t floor = (size_t)32 << 20;
    gc_threshold = live * 2 > floor ? live * 2 : floor;
    gc_young_at = live + gc_young_step(live);
  } else if (live > gc_young_at) {
    lua_gc(L, LUA_GCSTEP, 0);
    gc_young_runs++;
    live = al_mem_live();
    gc_young_at = live + gc_young_step(live);
  }
}

void l_gc_runs(long *young, long *full) {
  *young = gc_young_runs;
  *full = gc_full_runs;
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

/* an operand arithmetic takes besides a tensor: a number, or a nested table of numbers */
static int operand_like(lua_State *L, int idx) { return lua_type(L, idx) == LUA_TNUMBER || lua_istable(L, idx); }

static int arith(lua_State *L, al_binop op, const char *name) {
  al_tensor *a = l_totensor(L, 1), *b = l_totensor(L, 2), *o = NULL;
  al_status st;
  if (a && b) st = al_binary(&o, op, a, b);
  /* an int64 tensor and a whole number: int64 arithmetic, exact (affine goes through a
   * double, which rounded integers above 2^53); as al.add/sub/mul. Anything else beside it
   * (nil, a string) goes to the message below, as beside a float32 tensor: it said "bad
   * argument #2 to 'add'" */
  else if (((a && a->dtype == AL_I64 && operand_like(L, 2)) || (b && b->dtype == AL_I64 && operand_like(L, 1))) && op != AL_DIV)
    st = al_binary(&o, op, l_operand(L, 1, 2), l_operand(L, 2, 1));
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
    /* a tensor is named with its shape ("userdata" said nothing) */
    char sa[96], sb[96];
    return luaL_error(L, "attnlab.%s: cannot apply to %s and %s", name,
                      a ? al_shape_str(a, sa, sizeof sa) : luaL_typename(L, 1),
                      b ? al_shape_str(b, sb, sizeof sb) : luaL_typename(L, 2));
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
/* pairs(t) as ipairs(t): the rows along dim 1 with their 1-based index */
static int mt_pairs(lua_State *L) {
  l_checktensor(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, IPAIRS_ITER);
  if (lua_isnil(L, -1)) return luaL_error(L, "attnlab.pairs: no ipairs in this Lua state; use for i = 1, #t do ... t[i] ... end");
  lua_pushvalue(L, 1);
  lua_pushinteger(L, 0);
  return 3;
}
static int mt_len(lua_State *L) {
  al_tensor *t = l_checktensor(L, 1);
  lua_pushinteger(L, t->ndim ? t->shape[0] : 0);
  return 1;
}

/* Whether the function that indexed t (the caller of __index) is ipairs's iterator: then the
 * index one past the end is the end of the loop, not a mistake. Ordinary t[i] (a Lua function's
 * frame) still raises. */
static int indexed_by_ipairs(lua_State *L) {
  lua_Debug ar;
  if (!lua_getstack(L, 1, &ar) || !lua_getinfo(L, "f", &ar)) return 0;
  lua_getfield(L, LUA_REGISTRYINDEX, IPAIRS_ITER);
  int yes = !lua_isnil(L, -1) && lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return yes;
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
    if (!lua_isinteger(L, 2)) return luaL_error(L, "attnlab.index: t[i] needs an integer i, got %s", l_numstr(L, lua_tonumber(L, 2)));
    lua_Integer i = luaL_checkinteger(L, 2);
    al_tensor *o = NULL;
    if (i == 0) return luaL_error(L, "attnlab: index 0 is invalid: indices are 1-based");
    /* for i, row in ipairs(t): the rows along dim 1 (PyTorch's `for row in t`), and nil after
     * the last one, which ends the loop (an empty t: no rows) */
    if (t->ndim > 0 && i == t->shape[0] + 1 && indexed_by_ipairs(L)) { lua_pushnil(L); return 1; }
    if (t->ndim == 0 && indexed_by_ipairs(L)) {   /* as PyTorch's "iteration over a 0-d tensor"; at the loop's line */
      luaL_where(L, 2);
      lua_pushliteral(L, "attnlab.ipairs: cannot iterate over a 0-dim tensor (it has no dim to walk); t:item() is its value");
      lua_concat(L, 2);
      return lua_error(L);
    }
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
    if (!lua_isinteger(L, 2)) return luaL_error(L, "attnlab.index: t[i] needs an integer i, got %s", l_numstr(L, lua_tonumber(L, 2)));
    lua_Integer i = luaL_checkinteger(L, 2);
    al_tensor *v = NULL;
    if (i == 0) return luaL_error(L, "attnlab: index 0 is invalid: indices are 1-based");
    /* else "bad argument #3 to 'newindex'", a function the user did not call */
    if (lua_type(L, 3) != LUA_TNUMBER && !lua_istable(L, 3) && !l_totensor(L, 3))
      return luaL_error(L, "attnlab.index: t[%I] = v needs a number, a tensor or a nested table, got a %s", (LUAI_UACINT)i, luaL_typename(L, 3));
    l_check_writable(L, t, "index");   /* t[1] = v on an expand would write every row */
    l_check_inplace_grad(L, t, l_totensor(L, 3), "index");
    /* checked before the select: v is not anchored yet */
    if (lua_type(L, 3) == LUA_TNUMBER) l_check_store_value(L, lua_tonumber(L, 3), t->dtype, "index");
    L_TRY(L, "index", al_select(&v, t, 0, i > 0 ? i - 1 : i));
    al_status st;
    if (lua_type(L, 3) == LUA_TNUMBER) { l_fill_number(L, v, 3, "index"); st = AL_OK; }
    else {
      al_tensor *s = NULL, *e = NULL;
      l_tensor *anchor = lua_newuserdatauv(L, sizeof *anchor, 0);   /* v must not leak if the value is bad */
      anchor->t = v;
      luaL_setmetatable(L, TENSOR_MT);
      /* into int64: a table of non-integers is refused (as al.tensor({2.5}, {dtype = "int64"})),
       * a float32 tensor converted as :long() (NaN and 1e30 went in as 0 and INT64_MAX) */
      s = v->dtype == AL_I64 && lua_istable(L, 3) ? l_tensor_from_table(L, 3, AL_I64, "index") : l_checktensorish(L, 3);
      st = al_expand(&e, l_write_source(L, s, v->dtype, "index"), v->ndim, v->shape);
      if (st) {
        char a[128], b[128];
        st = al_seterr(AL_EINVAL, "index: cannot assign %s to t[%lld], which is %s", al_shape_str(s, a, sizeof a), (long long)i, al_shape_str(v, b, sizeof b));
      }
      if (!st) st = al_copy_into(v, e);
      al_tensor_release(e);
      v = al_tensor_retain(v);   /* the anchor keeps its own reference until collected */
    }
    if (!st) al_tensor_mark_modified(t);
    al_tensor_release(v);
    if (st) return l_raise(L, "index");
    return 0;
  }
  const char *k = luaL_checkstring(L, 2);
  if (!strcmp(k, "grad")) {
    if (lua_isnil(L, 3)) { al_tensor_release(t->grad); t->grad = NULL; return 0; }
    if (!l_totensor(L, 3))   /* else "bad argument #3 to 'newindex'" */
      return luaL_error(L, "attnlab: t.grad must be a float32 tensor of the tensor's shape, or nil; got a %s", luaL_typename(L, 3));
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
    return l_tensor_requires_grad_(L);
  }
  return luaL_error(L, "attnlab: cannot set field '%s' of a tensor", k);
}

/* Methods of the userdata's lifetime; the other methods are in tensor_methods.c and
 * tensor_data.c. */
static const luaL_Reg lifetime_methods[] = {{"__close", mt_gc}, {"release", mt_gc}, {NULL, NULL}};

static const luaL_Reg metamethods[] = {
  {"__gc", mt_gc}, {"__close", mt_gc}, {"__tostring", mt_tostring}, {"__index", mt_index},
  {"__newindex", mt_newindex}, {"__add", mt_add}, {"__sub", mt_sub}, {"__mul", mt_mul},
  {"__div", mt_div}, {"__unm", mt_unm}, {"__pow", mt_pow}, {"__len", mt_len}, {"__pairs", mt_pairs},
  {NULL, NULL}};

static int count(const luaL_Reg *r) {
  int n = 0;
  while (r[n].name) n++;
  return n;
}

void l_open_tensor(lua_State *L) {
  /* ipairs's iterator, for mt_index to tell the end of an ipairs loop from t[#t + 1]
   * (ipairs({}) returns it; no base library, no ipairs: indexing raises as before). A raw
   * read: a strict-globals __index must not make loading the library fail. */
  lua_pushglobaltable(L);
  lua_pushliteral(L, "ipairs");
  int has_ipairs = lua_rawget(L, -2) == LUA_TFUNCTION;
  lua_remove(L, -2);
  if (has_ipairs) {
    lua_newtable(L);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_iscfunction(L, -1)) lua_setfield(L, LUA_REGISTRYINDEX, IPAIRS_ITER);
    else lua_pop(L, 1);
  } else {
    lua_pop(L, 1);
  }
  luaL_newmetatable(L, TENSOR_MT);
  luaL_setfuncs(L, metamethods, 0);
  luaL_checkversion(L);
  lua_createtable(L, 0, count(l_tensor_view_methods) + count(l_tensor_data_methods) + count(lifetime_methods));
  luaL_setfuncs(L, l_tensor_view_methods, 0);
  luaL_setfuncs(L, l_tensor_data_methods, 0);
  luaL_setfuncs(L, lifetime_methods, 0);
  lua_setfield(L, -2, "methods");
  /* the fields mt_index answers itself, for bin/attnlab's Tab completion (x.gr<Tab>) */
  {
    static const char *const fields[] = {"grad", "requires_grad", "is_leaf", "grad_fn"};
    int i, n = (int)(sizeof fields / sizeof fields[0]);
    lua_createtable(L, n, 0);
    for (i = 0; i < n; i++) {
      lua_pushstring(L, fields[i]);
      lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "__fields");
  }
  lua_pushliteral(L, "attnlab.Tensor");
  lua_setfield(L, -2, "__name");
  lua_pop(L, 1);
  luaL_setfuncs(L, l_tensor_functions, 0);
  /* expose the method table so Lua code can add methods (al.Tensor.foo = ...) */
  luaL_getmetatable(L, TENSOR_MT);
  lua_getfield(L, -1, "methods");
  lua_setfield(L, -3, "Tensor");
  lua_pop(L, 1);
}
