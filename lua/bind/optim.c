/* lua/bind/optim.c -- fused optimizer steps for lua/attnlab/run/optim.lua. */
#include "attnlab/optim.h"
#include "bind.h"

static float *contig_f32(lua_State *L, int idx, al_tensor *like, const char *what) {
  al_tensor *t = l_checktensor(L, idx);
  char a[128], b[128];
  if (t->dtype != AL_F32 || !al_is_contiguous(t) || (like && !al_same_shape(t, like)))
    luaL_error(L, "attnlab.optim: %s is %s, want contiguous float32 %s", what, al_shape_str(t, a, sizeof a), like ? al_shape_str(like, b, sizeof b) : "");
  return al_f32(t);
}

/* adamw_step(p, grad, m, v, lr, beta1, beta2, eps, weight_decay, step) */
static int l_adamw_step(lua_State *L) {
  al_tensor *p = l_checktensor(L, 1);
  float *pp = contig_f32(L, 1, NULL, "parameter");
  float *g = contig_f32(L, 2, p, "gradient"), *m = contig_f32(L, 3, p, "exp_avg"), *v = contig_f32(L, 4, p, "exp_avg_sq");
  lua_Integer step = luaL_checkinteger(L, 10);
  if (step < 1) return luaL_argerror(L, 10, "step must be >= 1");
  al_adamw_update(pp, g, m, v, al_numel(p), luaL_checknumber(L, 5), luaL_checknumber(L, 6), luaL_checknumber(L, 7),
                  luaL_checknumber(L, 8), luaL_checknumber(L, 9), step);
  return 0;
}

/* sgd_step(p, grad, buf, lr, momentum, dampening, weight_decay, nesterov, first_step) */
static int l_sgd_step(lua_State *L) {
  al_tensor *p = l_checktensor(L, 1);
  float *pp = contig_f32(L, 1, NULL, "parameter");
  float *g = contig_f32(L, 2, p, "gradient"), *b = contig_f32(L, 3, p, "momentum buffer");
  al_sgd_update(pp, g, b, al_numel(p), luaL_checknumber(L, 4), luaL_checknumber(L, 5), luaL_checknumber(L, 6),
                luaL_checknumber(L, 7), lua_toboolean(L, 8), lua_toboolean(L, 9));
  return 0;
}

void l_open_optim(lua_State *L) {
  static const luaL_Reg fns[] = {{"adamw_step", l_adamw_step}, {"sgd_step", l_sgd_step}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
