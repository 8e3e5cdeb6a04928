/* tests/embed/host.c -- a C program that hosts attnlab in its own lua_State.
 *
 * Builds against an installed attnlab (see README, "Embedding attnlab"):
 *   cc -std=c11 -O2 -o host tests/embed/host.c $(pkg-config --cflags --libs attnlab lua5.4)
 * and finds the Lua package on Lua's search path: Debian's default one for PREFIX=/usr/local
 * or /usr; for another PREFIX export LUA_PATH / LUA_CPATH as the README says.
 *
 * It creates a state, opens the standard libraries, requires "attnlab" (which loads the
 * installed attnlab/core.so), gives the Lua side one C function (host.report), runs a small
 * experiment written in Lua from a string, and reads numbers back into C: the final training
 * loss and the share of exact zeros in the entmax15 attention weights. Exit status 1 on any
 * failure. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <attnlab/version.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

/* The experiment: a one-layer attention classifier on random tokens, trained for `steps`
 * AdamW steps; returns the first loss, the last loss and the share of zero weights. */
static const char EXPERIMENT[] =
  "local al = require 'attnlab'\n"
  "local seed, steps = ...\n"
  "al.manual_seed(seed)\n"
  "local B, T, D, C = 16, 8, 16, 3\n"
  "local x, y = al.randn({B, T, D}), al.randint(1, C, {B})\n"
  "local attn = al.nn.MultiHeadAttention{dim = D, heads = 2, normalizer = 'entmax15'}\n"
  "local head = al.nn.Linear(D, C)\n"
  "local params = attn:parameters()\n"
  "for _, p in ipairs(head:parameters()) do params[#params + 1] = p end\n"
  "local opt = al.optim.AdamW(params, {lr = 1e-2})\n"
  "local first, loss\n"
  "for step = 1, steps do\n"
  "  opt:zero_grad()\n"
  "  loss = al.cross_entropy(head(attn(x):mean(2)), y)\n"
  "  loss:backward()\n"
  "  opt:step()\n"
  "  first = first or loss:item()\n"
  "  if step % 10 == 0 then host.report(step, loss:item()) end\n"
  "end\n"
  "local scores = al.randn({4, 8, 8}) * 3\n"
  "local zeros = al.sum(al.entmax15(scores, -1):eq(0)):item() / scores:numel()\n"
  "return first, loss:item(), zeros\n";

/* host.report(step, loss): a C function the experiment calls back. */
static int l_report(lua_State *L) {
  lua_Integer step = luaL_checkinteger(L, 1);
  double loss = luaL_checknumber(L, 2);
  printf("  step %3lld  loss %.6f\n", (long long)step, loss);
  return 0;
}

static int fail(lua_State *L, const char *what) {
  fprintf(stderr, "host: FAIL: %s: %s\n", what, lua_tostring(L, -1));
  lua_close(L);
  return 1;
}

int main(void) {
  lua_State *L = luaL_newstate();
  if (L == NULL) return 1;
  luaL_openlibs(L);

  /* al = require "attnlab" */
  lua_getglobal(L, "require");
  lua_pushliteral(L, "attnlab");
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) return fail(L, "require \"attnlab\"");
  lua_getfield(L, -1, "version");
  printf("attnlab %s in this lua_State, headers %s\n", lua_tostring(L, -1), ATTNLAB_VERSION_STRING);
  int same_version = strcmp(lua_tostring(L, -1), ATTNLAB_VERSION_STRING) == 0;
  lua_pop(L, 1);
  lua_setglobal(L, "al");

  /* the host's own table of C functions */
  lua_newtable(L);
  lua_pushcfunction(L, l_report);
  lua_setfield(L, -2, "report");
  lua_setglobal(L, "host");

  /* run the experiment from a string with (seed, steps), three results back */
  if (luaL_loadbuffer(L, EXPERIMENT, sizeof EXPERIMENT - 1, "=experiment") != LUA_OK)
    return fail(L, "loading the experiment");
  lua_pushinteger(L, 7);
  lua_pushinteger(L, 40);
  if (lua_pcall(L, 2, 3, 0) != LUA_OK) return fail(L, "running the experiment");
  int ok1 = lua_isnumber(L, -3), ok2 = lua_isnumber(L, -2), ok3 = lua_isnumber(L, -1);
  double first = lua_tonumber(L, -3), last = lua_tonumber(L, -2), zeros = lua_tonumber(L, -1);
  lua_pop(L, 3);

  /* a Lua error comes back as a status and a message, the state stays usable */
  int err = luaL_dostring(L, "return al.entmax15(al.zeros{2, 3}, 3)");
  printf("an error, caught: %s\n", err ? lua_tostring(L, -1) : "(none)");
  lua_settop(L, 0);
  lua_close(L);

  printf("read back into C: first loss %.6f, last loss %.6f, zero attention weights %.1f%%\n",
         first, last, 100 * zeros);
  int ok = same_version && ok1 && ok2 && ok3 && isfinite(last) && last < first && zeros > 0 && err;
  printf("%s\n", ok ? "host: ok" : "host: FAILED");
  return ok ? 0 : 1;
}
