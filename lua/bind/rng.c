/* lua/bind/rng.c -- seeding, Generator objects and random tensors.
 * The default generator (al.manual_seed, al.randn without a generator, dropout) belongs to
 * the lua_State: a Generator userdata kept in the registry, so two states -- on one thread or
 * on two -- never draw from each other's stream. */
#include <string.h>

#include "attnlab/rng.h"
#include "bind.h"

#define GEN_MT "attnlab.Generator"

static const char DEFAULT_RNG_KEY = 0;   /* its address keys the registry entry */

/* This state's default generator, created by l_open_rng (kept alive by the registry). */
static al_rng *default_rng(lua_State *L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &DEFAULT_RNG_KEY);
  al_rng *g = lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (!g) luaL_error(L, "attnlab: the default generator is missing (attnlab.core not opened?)");
  return g;
}

al_rng *l_optrng(lua_State *L, int idx) {
  al_rng *g = luaL_testudata(L, idx, GEN_MT);
  if (g) return g;
  /* a seed or a string where the Generator goes fell back to the default stream, silently */
  if (!lua_isnoneornil(L, idx) && !lua_istable(L, idx))
    luaL_error(L, "attnlab: expected an al.Generator (or an options table {generator =}), got a %s", luaL_typename(L, idx));
  if (lua_istable(L, idx)) {
    lua_getfield(L, idx, "generator");
    g = luaL_testudata(L, -1, GEN_MT);
    if (!g && !lua_isnil(L, -1))   /* a seed or a typo'd object would fall back to the default */
      luaL_error(L, "attnlab: option generator must be an al.Generator, got a %s", luaL_typename(L, -1));
    lua_pop(L, 1);   /* the options table keeps the generator alive */
    if (g) return g;
  }
  return default_rng(L);
}

static uint64_t check_seed(lua_State *L, int idx) {
  lua_Integer s = luaL_checkinteger(L, idx);
  return (uint64_t)s;
}

static int l_manual_seed(lua_State *L) {
  al_rng_seed(default_rng(L), check_seed(L, 1));
  return 0;
}

static int l_generator(lua_State *L) {
  /* the seed is read before the userdata is pushed: with no argument, al.Generator() saw the
   * new userdata as its argument 1 and raised "number expected, got userdata" */
  uint64_t seed = lua_isnoneornil(L, 1) ? AL_RNG_DEFAULT_SEED : check_seed(L, 1);
  al_rng *g = lua_newuserdatauv(L, sizeof *g, 0);
  al_rng_seed(g, seed);
  luaL_setmetatable(L, GEN_MT);
  return 1;
}

static int g_seed(lua_State *L) {
  al_rng *g = luaL_checkudata(L, 1, GEN_MT);
  al_rng_seed(g, check_seed(L, 2));
  lua_settop(L, 1);
  return 1;
}

static int g_get_state(lua_State *L) {
  al_rng *g = lua_isnoneornil(L, 1) ? default_rng(L) : luaL_checkudata(L, 1, GEN_MT);
  lua_createtable(L, 0, 2);
  lua_pushinteger(L, (lua_Integer)g->seed);
  lua_setfield(L, -2, "seed");
  lua_pushinteger(L, (lua_Integer)g->counter);
  lua_setfield(L, -2, "counter");
  return 1;
}

static int g_set_state(lua_State *L) {
  int tidx = lua_istable(L, 1) ? 1 : 2;
  al_rng *g = tidx == 1 ? default_rng(L) : luaL_checkudata(L, 1, GEN_MT);
  luaL_checktype(L, tidx, LUA_TTABLE);
  lua_getfield(L, tidx, "seed");
  lua_getfield(L, tidx, "counter");
  g->seed = (uint64_t)luaL_checkinteger(L, -2);
  g->counter = (uint64_t)luaL_checkinteger(L, -1);
  return 0;
}

static int g_tostring(lua_State *L) {
  al_rng *g = luaL_checkudata(L, 1, GEN_MT);
  lua_pushfstring(L, "Generator(seed=%I, counter=%I)", (lua_Integer)g->seed, (lua_Integer)g->counter);
  return 1;
}

static int random_tensor(lua_State *L, int kind) {
  int64_t shape[AL_MAXDIM];
  const char *name = kind ? "rand" : "randn";
  int nd = l_checkshape(L, 1, shape, name);
  /* after the shape (a table, or nd numbers): an options table {generator=, requires_grad=} or
   * a Generator, and nothing more (al.randn({2,3}, 5) ignored the 5) */
  int k = lua_istable(L, 1) ? 2 : nd + 1;
  static const char want[] = "after the shape only an options table {generator =, requires_grad =} or a Generator may follow";
  int opts = lua_istable(L, k) || luaL_testudata(L, k, GEN_MT) ? k : 0;
  if (!opts && !lua_isnone(L, k)) return l_unexpected_arg(L, k, 0, name, want);   /* an explicit nil too, as before */
  l_check_no_more_args(L, k + 1, 0, name, want);
  int requires_grad = 0;
  if (opts && lua_istable(L, opts)) {
    static const char *const keys[] = {"generator", "requires_grad", "dtype", NULL};
    l_check_keys(L, opts, name, keys);
    lua_getfield(L, opts, "dtype");   /* float32 only: randint makes int64 */
    if (!lua_isnil(L, -1) && !(lua_type(L, -1) == LUA_TSTRING && (!strcmp(lua_tostring(L, -1), "float32") ||
                                                                 !strcmp(lua_tostring(L, -1), "float"))))
      return luaL_error(L, "attnlab.%s: makes float32 tensors, got dtype %s (al.randint makes int64)", name,
                        luaL_tolstring(L, -1, NULL));
    lua_pop(L, 1);
    requires_grad = l_optbool_field(L, opts, "requires_grad", 0, name);
  }
  al_rng *g = opts ? l_optrng(L, opts) : default_rng(L);
  al_tensor *t = al_tensor_new(AL_F32, nd, shape);
  if (!t) return l_raise(L, name);
  if (kind == 0) al_rng_normal(g, al_f32(t), al_numel(t), 0.0f, 1.0f);
  else al_rng_uniform(g, al_f32(t), al_numel(t), 0.0f, 1.0f);
  l_pushtensor(L, t);
  t->requires_grad = (uint8_t)requires_grad;
  return 1;
}
static int l_randn(lua_State *L) { return random_tensor(L, 0); }
static int l_rand(lua_State *L) { return random_tensor(L, 1); }

/* randint(lo, hi, shape [, opts]) -> int64 uniform in [lo, hi] (inclusive, 1-based friendly). */
static int l_randint(lua_State *L) {
  lua_Integer lo = luaL_checkinteger(L, 1), hi = luaL_checkinteger(L, 2);
  if (hi < lo) return luaL_argerror(L, 2, "hi must be >= lo");
  /* hi - lo + 1 values: at most 2^63 - 1 of them (int64's whole range would wrap to 0) */
  if ((uint64_t)hi - (uint64_t)lo >= (uint64_t)INT64_MAX) return luaL_argerror(L, 2, "the range lo..hi holds more than 2^63 - 1 values");
  int64_t shape[AL_MAXDIM];
  int nd = l_checkshape(L, 3, shape, "randint");
  /* after the shape (a table, or nd numbers): the Generator or options, and nothing more
   * (al.randint(1, 3, {2}, 5) ignored the 5) */
  int k = lua_istable(L, 3) ? 4 : 3 + nd;
  static const char want[] = "after the shape only a Generator or an options table {generator =} may follow";
  if (!lua_isnoneornil(L, k) && !lua_istable(L, k) && !luaL_testudata(L, k, GEN_MT))
    return l_unexpected_arg(L, k, 0, "randint", want);
  l_check_no_more_args(L, k + 1, 0, "randint", want);
  al_rng *g = l_optrng(L, k);
  al_tensor *t = al_tensor_new(AL_I64, nd, shape);
  if (!t) return l_raise(L, "randint");
  int64_t n = al_numel(t), *p = al_i64(t);
  if (al_rng_randint(g, p, n, hi - lo + 1)) { al_tensor_release(t); return l_raise(L, "randint"); }
  for (int64_t i = 0; i < n; i++) p[i] += lo;
  return l_pushtensor(L, t);
}

/* randperm(n [, gen]) -> int64 permutation of 1..n */
static int l_randperm(lua_State *L) {
  lua_Integer n = luaL_checkinteger(L, 1);
  if (n < 0) return luaL_argerror(L, 1, "n must be >= 0");
  al_rng *g = l_optrng(L, 2);
  int64_t len = n;
  al_tensor *t = al_tensor_new(AL_I64, 1, &len);
  if (!t) return l_raise(L, "randperm");
  al_rng_permutation(g, al_i64(t), n);
  for (int64_t i = 0; i < n; i++) al_i64(t)[i] += 1;
  return l_pushtensor(L, t);
}

void l_open_rng(lua_State *L) {
  static const luaL_Reg gen_methods[] = {{"seed", g_seed}, {"get_state", g_get_state}, {"set_state", g_set_state}, {NULL, NULL}};
  luaL_newmetatable(L, GEN_MT);
  luaL_newlib(L, gen_methods);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, g_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  /* the state's default generator: seeded as al_rng_default() starts; kept if the
   * module is opened again in the same state */
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &DEFAULT_RNG_KEY) != LUA_TUSERDATA) {
    al_rng *g = lua_newuserdatauv(L, sizeof *g, 0);
    al_rng_seed(g, AL_RNG_DEFAULT_SEED);
    luaL_setmetatable(L, GEN_MT);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &DEFAULT_RNG_KEY);
  }
  lua_pop(L, 1);
  static const luaL_Reg fns[] = {{"manual_seed", l_manual_seed}, {"Generator", l_generator}, {"randn", l_randn},
                                 {"rand", l_rand}, {"randint", l_randint}, {"randperm", l_randperm},
                                 {"get_rng_state", g_get_state}, {"set_rng_state", g_set_state}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
