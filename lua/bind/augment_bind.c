/* lua/bind/augment_bind.c -- al.crop_flip and al.random_crop_flip (attnlab/augment.h).
 *
 *   al.crop_flip(x, pad, top, left [, flip]) -> y   x float32 (B,C,H,W); top, left: lists of B
 *       integers in [0, 2*pad] (the crop's corner in the zero-padded image); flip: list of B
 *       booleans (or 0/1). Explicit draws, for tests and for callers with their own RNG.
 *   al.random_crop_flip(x, {pad =, hflip =, generator =}) -> y, draws
 *       draws from the generator (default: this state's), B tops, B lefts, B flips in that
 *       order; draws = {top =, left =, flip =} (1-based lists) so a caller can log them. */

#include "attnlab/augment.h"
#include "bind.h"

static int64_t *int_list(lua_State *L, int idx, int64_t B, const char *what) {
  int64_t *v = lua_newuserdatauv(L, (size_t)(B > 0 ? B : 1) * sizeof *v, 0);   /* freed by the GC */
  if (lua_isnoneornil(L, idx)) {
    for (int64_t b = 0; b < B; b++) v[b] = 0;
    return v;
  }
  luaL_checktype(L, idx, LUA_TTABLE);
  if ((int64_t)lua_rawlen(L, idx) != B)
    luaL_error(L, "attnlab.crop_flip: %s has %d entries for a batch of %d images", what, (int)lua_rawlen(L, idx), (int)B);
  for (int64_t b = 0; b < B; b++) {
    lua_rawgeti(L, idx, b + 1);
    if (lua_isboolean(L, -1)) v[b] = lua_toboolean(L, -1);
    else if (lua_isinteger(L, -1)) v[b] = lua_tointeger(L, -1);
    else luaL_error(L, "attnlab.crop_flip: %s[%d] is not an integer", what, (int)b + 1);
    lua_pop(L, 1);
  }
  return v;
}

static void check_batch(lua_State *L, al_tensor *x, const char *fname) {
  if (x->ndim != 4) luaL_error(L, "attnlab.%s: expected a (B, C, H, W) tensor, got %d dims", fname, x->ndim);
}

static int l_crop_flip(lua_State *L) {
  lua_settop(L, 5);   /* the draw buffers go above the arguments */
  al_tensor *x = l_checktensor(L, 1);
  check_batch(L, x, "crop_flip");
  lua_Integer pad = luaL_checkinteger(L, 2);
  int64_t B = x->shape[0];
  int64_t *top = int_list(L, 3, B, "top"), *left = int_list(L, 4, B, "left"), *flip = int_list(L, 5, B, "flip");
  al_tensor *y;
  L_TRY(L, "crop_flip", al_crop_flip(&y, x, pad, top, left, flip));
  return l_pushtensor(L, y);
}

static void push_list(lua_State *L, const int64_t *v, int64_t B, int as_bool) {
  lua_createtable(L, (int)B, 0);
  for (int64_t b = 0; b < B; b++) {
    if (as_bool) lua_pushboolean(L, v[b] != 0); else lua_pushinteger(L, (lua_Integer)v[b]);
    lua_rawseti(L, -2, b + 1);
  }
}

static int l_random_crop_flip(lua_State *L) {
  lua_settop(L, 2);
  al_tensor *x = l_checktensor(L, 1);
  check_batch(L, x, "random_crop_flip");
  luaL_checktype(L, 2, LUA_TTABLE);
  /* a misspelt key ({hlfip = true}) ran without flips, silently; hflip = "no" flipped */
  static const char *const keys[] = {"pad", "hflip", "generator", NULL};
  l_check_keys(L, 2, "random_crop_flip", keys);
  int hflip = l_optbool_field(L, 2, "hflip", 0, "random_crop_flip");
  lua_getfield(L, 2, "pad");
  lua_Integer pad = lua_isnil(L, -1) ? 0 : luaL_checkinteger(L, -1);
  lua_pop(L, 1);
  if (pad < 0) return luaL_error(L, "attnlab.random_crop_flip: pad must be >= 0, got %d", (int)pad);
  al_rng *g = l_optrng(L, 2);
  int64_t B = x->shape[0];
  size_t n = (size_t)(B > 0 ? B : 1);
  int64_t *top = lua_newuserdatauv(L, 3 * n * sizeof *top, 0), *left = top + n, *flip = left + n;
  L_TRY(L, "random_crop_flip", al_crop_flip_draw(g, B, pad, hflip, top, left, flip));
  al_tensor *y;
  L_TRY(L, "random_crop_flip", al_crop_flip(&y, x, pad, top, left, flip));
  l_pushtensor(L, y);
  lua_createtable(L, 0, 3);
  push_list(L, top, B, 0);
  lua_setfield(L, -2, "top");
  push_list(L, left, B, 0);
  lua_setfield(L, -2, "left");
  push_list(L, flip, B, 1);
  lua_setfield(L, -2, "flip");
  return 2;
}

void l_open_augment(lua_State *L) {
  static const luaL_Reg fns[] = {{"crop_flip", l_crop_flip}, {"random_crop_flip", l_random_crop_flip}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
