/* lua/bind/mixers.c -- al.bilstm and al.bimamba: the fused mixer cores (mixer_ops.h).
 *   al.bilstm(x, params, keep_or_nil, heads)            params: list of 8 (false = no bias)
 *   al.bimamba(xz, params, keep_or_nil, heads, d_state, dt_rank, d_conv)   params: list of 14
 * The nn modules (lua/attnlab/nn/mixers.lua) hold the parameters and call these. */
#include "attnlab/mixer_ops.h"
#include "bind.h"

static void param_list(lua_State *L, int idx, int n, al_tensor **out, const char *fname) {
  luaL_checktype(L, idx, LUA_TTABLE);
  for (int i = 0; i < n; i++) {
    lua_geti(L, idx, i + 1);
    if (lua_isnil(L, -1) || (lua_isboolean(L, -1) && !lua_toboolean(L, -1))) out[i] = NULL;
    else {
      out[i] = l_totensor(L, -1);
      if (!out[i]) luaL_error(L, "attnlab.%s: parameter %d is a %s, not a tensor", fname, i + 1, luaL_typename(L, -1));
    }
    lua_pop(L, 1);
  }
}

static int l_bilstm(lua_State *L) {
  al_tensor *x = l_checktensor(L, 1), *p[8], *o = NULL;
  param_list(L, 2, 8, p, "bilstm");
  al_tensor *keep = lua_isnoneornil(L, 3) ? NULL : l_checktensor(L, 3);
  lua_Integer heads = luaL_checkinteger(L, 4);
  L_TRY(L, "bilstm", al_bilstm_op(&o, x, p, keep, heads));
  return l_pushtensor(L, o);
}

static int l_bimamba(lua_State *L) {
  al_tensor *xz = l_checktensor(L, 1), *p[14], *o = NULL;
  param_list(L, 2, 14, p, "bimamba");
  al_tensor *keep = lua_isnoneornil(L, 3) ? NULL : l_checktensor(L, 3);
  lua_Integer heads = luaL_checkinteger(L, 4), n = luaL_checkinteger(L, 5), r = luaL_checkinteger(L, 6), k = luaL_checkinteger(L, 7);
  L_TRY(L, "bimamba", al_bimamba_op(&o, xz, p, keep, heads, n, r, k));
  return l_pushtensor(L, o);
}

void l_open_mixers(lua_State *L) {
  static const luaL_Reg fns[] = {{"bilstm", l_bilstm}, {"bimamba", l_bimamba}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
