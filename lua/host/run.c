/* lua/host/run.c -- running Lua code as lua.c does: protected calls with a traceback and
 * Ctrl-C armed, "attnlab: <message>" on stderr, -e / -l / -W in command-line order,
 * LUA_INIT_5_4 or LUA_INIT, and the script with its arguments as `...`. */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "host.h"

#define INIT_VAR "LUA_INIT"
#define INIT_VAR_VERSIONED "LUA_INIT_" LUA_VERSION_MAJOR "_" LUA_VERSION_MINOR
#define IGNORE_MARK "-" /* -l mod-1.2 sets the global mod (LUA_IGMARK of loadlib.c) */

const char *host_progname = HOST_NAME;

void host_message(const char *prefix, const char *msg) {
  if (prefix) fprintf(stderr, "%s: ", prefix);
  fprintf(stderr, "%s\n", msg);
  fflush(stderr);
}

/* Prints the error on top of the stack (if st is an error) and pops it. */
int host_report(lua_State *L, int st) {
  if (st != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    host_message(host_progname, msg ? msg : "(error object is not a string)");
    lua_pop(L, 1);
  }
  return st;
}

/* Two mistakes a Python hand makes first, said on the error's own line:
 * - a method called with '.' instead of ':' (opt.step(), model.parameters()) runs with
 *   self = nil, and Lua's message names only 'self', deep in the library; a tensor's method so
 *   called (y.backward()) says only that its argument #1 is not a tensor;
 * - a function or method attnlab does not have (x:numpy(), model:cuda(), al.foo()) is "attempt
 *   to call a nil value (method 'numpy')", which does not say where the API is listed. */
static const char *with_call_hint(lua_State *L, const char *msg) {
  if (strstr(msg, "attempt to") && strstr(msg, "value (local 'self')"))
    return lua_pushfstring(L, "%s -- a method called with '.' instead of ':'? (write opt:step(), "
                              "model:parameters(), not opt.step())", msg);
  if (strstr(msg, "bad argument #1 to '") && strstr(msg, "(attnlab tensor expected, got "))   /* y.backward() */
    return lua_pushfstring(L, "%s -- a tensor method called with '.' instead of ':'? (write y:backward(), "
                              "x:reshape{...}, not y.backward())", msg);
  if (strstr(msg, "attempt to call a nil value (method '") || strstr(msg, "attempt to call a nil value (field '"))
    return lua_pushfstring(L, "%s -- no function of that name (al.help() lists attnlab's API)", msg);
  return msg;
}

/* Message handler: turns any error value into a string and appends a traceback. */
static int traceback_handler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  msg = with_call_hint(L, msg);
  luaL_traceback(L, L, msg, 1);
  return 1;
}

/* Ctrl-C while Lua code runs. A signal handler may not touch the Lua state beyond
 * lua_sethook, so it sets a hook that fires at the next call, return, line or instruction
 * and raises the error there. The handler resets SIGINT to the default first: a second
 * Ctrl-C before the hook runs (a long C kernel that never returns to Lua) ends the process,
 * as with lua.c. */
static lua_State *volatile g_running_L;

static void interrupt_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  luaL_error(L, "interrupted!");
}

static void on_sigint_running(int sig) {
  signal(sig, SIG_DFL);
  lua_sethook(g_running_L, interrupt_hook,
              LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT, 1);
}

/* Calls the function under `narg` arguments with Ctrl-C armed and, when `traceback`, the
 * traceback handler. */
int host_call(lua_State *L, int narg, int nres, int traceback) {
  int base = traceback ? lua_gettop(L) - narg : 0;
  struct sigaction sa, old;
  int st;
  if (traceback) {
    lua_pushcfunction(L, traceback_handler);
    lua_insert(L, base);
  }
  g_running_L = L;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint_running;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old);
  st = lua_pcall(L, narg, nres, base);
  sigaction(SIGINT, &old, NULL);
  if (lua_gethook(L) == interrupt_hook) /* a Ctrl-C that came too late must not linger */
    lua_sethook(L, NULL, 0, 0);
  if (traceback) lua_remove(L, base);
  return st;
}

int host_docall(lua_State *L, int narg, int nres) { return host_call(L, narg, nres, 1); }

static int dochunk(lua_State *L, int st) {
  if (st == LUA_OK) st = host_docall(L, 0, 0);
  return host_report(L, st);
}

int host_dofile(lua_State *L, const char *name) {
  return dochunk(L, luaL_loadfile(L, name));
}

static int dostring(lua_State *L, const char *s, const char *name) {
  return dochunk(L, luaL_loadbuffer(L, s, strlen(s), name));
}

/* -l [g=]mod: g = require "mod". Without "g=", the global is the module name up to a '-'
 * (IGNORE_MARK), e.g. -l foo-1.2 sets the global foo. */
static int dolibrary(lua_State *L, const char *spec) {
  const char *eq = strchr(spec, '=');
  const char *mod = eq ? eq + 1 : spec;
  size_t glen = eq ? (size_t)(eq - spec) : strcspn(spec, IGNORE_MARK);
  int st;
  lua_getglobal(L, "require");
  lua_pushstring(L, mod);
  st = host_docall(L, 1, 1);
  if (st == LUA_OK) {
    lua_pushlstring(L, spec, glen);
    lua_insert(L, -2);
    lua_setglobal(L, lua_tostring(L, -2));
    lua_pop(L, 1);
  }
  return host_report(L, st);
}

/* Runs -e, -l and -W in command-line order. Returns 0 on the first failure. */
int host_run_options(lua_State *L, char **argv, int limit) {
  int i;
  for (i = 1; i < limit; i++) {
    int opt = argv[i][1];
    if (opt == 'e' || opt == 'l') {
      const char *extra = argv[i] + 2;
      int st;
      if (*extra == '\0') extra = argv[++i];
      st = opt == 'e' ? dostring(L, extra, "=(command line)") : dolibrary(L, extra);
      if (st != LUA_OK) return 0;
    } else if (opt == 'W') {
      lua_warning(L, "@on", 0);
    }
  }
  return 1;
}

int host_run_lua_init(lua_State *L) {
  const char *name = "=" INIT_VAR_VERSIONED;
  const char *init = getenv(name + 1);
  if (init == NULL) {
    name = "=" INIT_VAR;
    init = getenv(name + 1);
  }
  if (init == NULL) return LUA_OK;
  if (init[0] == '@') return host_dofile(L, init + 1);
  return dostring(L, init, name);
}

/* 1 when the table at idx has every one of the named fields (NULL-terminated). */
static int has_fields(lua_State *L, int idx, const char *const *names) {
  for (; *names; names++) {
    int present = lua_getfield(L, idx, *names) != LUA_TNIL;
    lua_pop(L, 1);
    if (!present) return 0;
  }
  return 1;
}

/* `script` (a path under scripts/) as this host would find it when run from the current
 * folder: as given when it is there, else the checkout's or installed tree's copy
 * (host_resolve_script). Pushes the path; arg[0] (which that also sets) is left as it was. */
static const char *push_script_path(lua_State *L, const char *script) {
  int has_arg = lua_getglobal(L, "arg") == LUA_TTABLE;
  if (has_arg) lua_rawgeti(L, -1, 0);
  lua_pushstring(L, host_resolve_script(L, script));
  if (has_arg) {
    lua_pushvalue(L, -2);
    lua_rawseti(L, -4, 0);
    lua_remove(L, -2);
  }
  lua_remove(L, -2);
  return lua_tostring(L, -1);
}

/* A file of experiments/ that only describes an experiment (a sweep's grid, an S2S preset)
 * returns its table and runs nothing: run as a script, it would exit 0 having done nothing,
 * which a Slurm job or a user would take for success. Such a file gets one line naming the
 * command that runs it, and exit status 1. The command works from the current folder: the
 * host by its absolute path (bin/attnlab typed in a checkout means nothing elsewhere) and the
 * script as the host resolves it. Returns LUA_OK when the result is anything else. */
static int refuse_description(lua_State *L, int first_result, const char *fname) {
  static const char *const sweep_fields[] = {"datasets", "normalizers", NULL};
  static const char *const preset_fields[] = {"teacher", "distill", NULL};
  const char *name, *file, *script, *host;
  char exe[PATH_MAX];
  int top = lua_gettop(L), sweep;
  if (top < first_result || lua_type(L, first_result) != LUA_TTABLE) return LUA_OK;
  sweep = has_fields(L, first_result, sweep_fields);
  if (!sweep && !has_fields(L, first_result, preset_fields)) return LUA_OK;
  /* copies: fname may be the registry string that resolving the script below replaces */
  name = lua_pushstring(L, fname ? fname : "the script on standard input");
  file = lua_pushstring(L, fname ? fname : "FILE");
  script = push_script_path(L, sweep ? "scripts/sweep.lua" : "scripts/s2s_strategies.lua");
  host = realpath("/proc/self/exe", exe) ? exe : host_progname;
  if (sweep)
    lua_pushfstring(L, "%s describes a sweep experiment and runs nothing by itself; "
                       "run it with: %s %s %s (--dry-run lists its runs)",
                    name, host, script, file);
  else
    lua_pushfstring(L, "%s is an S2S preset and runs nothing by itself; run it with: "
                       "%s %s EXPERIMENT --preset %s (--help lists them)",
                    name, host, script, file);
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
  return LUA_ERRRUN;
}

int host_run_script(lua_State *L, char **argv, int script) {
  const char *fname = argv[script];
  int st, first_result = lua_gettop(L) + 1;
  if (strcmp(fname, "-") == 0 && strcmp(argv[script - 1], "--") != 0) fname = NULL; /* stdin */
  fname = host_resolve_script(L, fname);
  st = luaL_loadfile(L, fname);
  if (st == LUA_OK) {
    lua_Integer i, n;
    if (lua_getglobal(L, "arg") != LUA_TTABLE) luaL_error(L, "'arg' is not a table");
    n = luaL_len(L, -1);
    luaL_checkstack(L, (int)n + 3, "too many arguments to script");
    for (i = 1; i <= n; i++) lua_rawgeti(L, -(int)i, i);
    lua_remove(L, -(int)i);
    st = host_docall(L, (int)n, LUA_MULTRET);
    if (st == LUA_OK) st = refuse_description(L, first_result, fname);
  }
  return host_report(L, st);
}
