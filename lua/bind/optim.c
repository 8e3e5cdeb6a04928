/* lua/bind/optim.c -- fused optimizer steps for lua/attnlab/run/optim.lua. */
#include <math.h>

#include "attnlab/optim.h"
#include "bind.h"

static float *contig_f32(lua_State *L, int idx, al_tensor *like, const char *what) {
  al_tensor *t = l_checktensor(L, idx);
  char a[128], b[128];
  if (t->dtype != AL_F32 || !al_is_contiguous(t) || (like && !al_same_shape(t, like)))
    luaL_error(L, "attnlab.optim: %s is %s, want a contiguous float32 tensor%s%s", what, al_shape_str(t, a, sizeof a),
               like ? " of shape " : "", like ? al_shape_str(like, b, sizeof b) : "");
  return al_f32(t);
}

/* The raw steps are public (al.adamw_step, al.sgd_step): a NaN or negative learning rate
 * would silently turn every parameter into garbage or climb the loss. */
static void check_hyper(lua_State *L, const char *fname, double lr, double wd) {
  if (!(lr >= 0 && isfinite(lr)) || !(wd >= 0 && isfinite(wd)))
    luaL_error(L, "attnlab.%s: needs a finite lr >= 0 and weight_decay >= 0, got lr %s, weight_decay %s", fname,
               l_numstr(L, lr), l_numstr(L, wd));
}

/* adamw_step(p, grad, m, v, lr, beta1, beta2, eps, weight_decay, step) */
static int l_adamw_step(lua_State *L) {
  al_tensor *p = l_checktensor(L, 1);
  float *pp = contig_f32(L, 1, NULL, "parameter");
  float *g = contig_f32(L, 2, p, "gradient"), *m = contig_f32(L, 3, p, "exp_avg"), *v = contig_f32(L, 4, p, "exp_avg_sq");
  lua_Integer step = luaL_checkinteger(L, 10);
  if (step < 1) return luaL_argerror(L, 10, "step must be >= 1");
  const double lr = luaL_checknumber(L, 5), beta1 = luaL_checknumber(L, 6), beta2 = luaL_checknumber(L, 7),
               eps = luaL_checknumber(L, 8), wd = luaL_checknumber(L, 9);
  check_hyper(L, "adamw_step", lr, wd);
  if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1) || !(eps > 0 && isfinite(eps)))
    return luaL_error(L, "attnlab.adamw_step: needs 0 <= beta1, beta2 < 1 and a finite eps > 0, got beta1 %s, beta2 %s, eps %s",
                      l_numstr(L, beta1), l_numstr(L, beta2), l_numstr(L, eps));
  al_adamw_update(pp, g, m, v, al_numel(p), lr, beta1, beta2, eps, wd, step);
  al_tensor_mark_modified(p);
  return 0;
}

/* sgd_step(p, grad, buf, lr, momentum, dampening, weight_decay, nesterov, first_step) */
static int l_sgd_step(lua_State *L) {
  al_tensor *p = l_checktensor(L, 1);
  float *pp = contig_f32(L, 1, NULL, "parameter");
  float *g = contig_f32(L, 2, p, "gradient"), *b = contig_f32(L, 3, p, "momentum buffer");
  const double lr = luaL_checknumber(L, 4), momentum = luaL_checknumber(L, 5), dampening = luaL_checknumber(L, 6),
               wd = luaL_checknumber(L, 7);
  check_hyper(L, "sgd_step", lr, wd);
  if (!(momentum >= 0 && isfinite(momentum)) || !isfinite(dampening))
    return luaL_error(L, "attnlab.sgd_step: needs a finite momentum >= 0 and a finite dampening, got %s, %s",
                      l_numstr(L, momentum), l_numstr(L, dampening));
  al_sgd_update(pp, g, b, al_numel(p), lr, momentum, dampening, wd, lua_toboolean(L, 8), lua_toboolean(L, 9));
  al_tensor_mark_modified(p);
  return 0;
}

void l_open_optim(lua_State *L) {
  static const luaL_Reg fns[] = {{"adamw_step", l_adamw_step}, {"sgd_step", l_sgd_step}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
