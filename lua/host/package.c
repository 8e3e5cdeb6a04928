/* lua/host/package.c -- where bin/attnlab finds things: the checkout (or the installed
 * prefix) around the executable, package.path starting with its Lua folder, the statically
 * linked attnlab.core in package.preload, relative script paths, and the global `al`. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#include "host.h"

/* Provided by lua/bind/ (linked in by the Makefile). */
int luaopen_attnlab_core(lua_State *L);

/* Where relative script paths are looked up when they do not exist from the current folder:
 * the checkout, or <prefix>/share/attnlab in an installed tree ("" = nowhere). Set by
 * host_setup_package. */
static char g_script_root[PATH_MAX + 128];

static int is_dir(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* The checkout root: the nearest of <exe dir>/.., /../.., /../../.. that has lua/attnlab
 * (bin/attnlab and build/release/attnlab both work); <exe dir>/.. when none has it. Returns
 * 1 when a checkout was found. `prefix` gets the real path of <exe dir>/.. either way. */
static int find_root(char *root, size_t cap, char *prefix, size_t pcap) {
  char exe[PATH_MAX], cand[PATH_MAX + 32], probe[PATH_MAX + 64], real[PATH_MAX];
  char *slash;
  int up;
  snprintf(root, cap, "..");
  snprintf(prefix, pcap, "..");
  if (realpath("/proc/self/exe", exe) == NULL) return 0;
  slash = strrchr(exe, '/');
  if (slash == NULL) return 0;
  *slash = '\0';
  snprintf(root, cap, "%s/..", exe);
  if (realpath(root, real)) snprintf(prefix, pcap, "%s", real);
  snprintf(cand, sizeof cand, "%s", exe);
  for (up = 1; up <= 3; up++) {
    strncat(cand, "/..", sizeof cand - strlen(cand) - 1);
    snprintf(probe, sizeof probe, "%s/lua/attnlab", cand);
    if (is_dir(probe)) {
      snprintf(root, cap, "%s", realpath(cand, real) ? real : cand);
      return 1;
    }
  }
  if (realpath(root, real)) snprintf(root, cap, "%s", real);
  return 0;
}

/* The installed layout (make install, mk/install.mk): <prefix>/bin/attnlab, the Lua modules
 * in <prefix>/share/lua/5.4/attnlab/, scripts and experiments in <prefix>/share/attnlab/. */
#define INSTALLED_LMOD "/share/lua/" LUA_VERSION_MAJOR "." LUA_VERSION_MINOR
#define INSTALLED_SHARE "/share/attnlab"

void host_setup_package(lua_State *L) {
  char root[PATH_MAX + 64], prefix[PATH_MAX + 64], probe[PATH_MAX + 128];
  int checkout = find_root(root, sizeof root, prefix, sizeof prefix), installed;
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "path");
  snprintf(probe, sizeof probe, "%s" INSTALLED_LMOD "/attnlab", prefix);
  /* An installed tree beside the executable wins over a checkout found further up: with
   * `make install PREFIX=$PWD/_install` the checkout is two levels above <prefix>/bin, and
   * the installed host must run the modules installed with it (the checkout's may since
   * have changed), and find scripts in <prefix>/share/attnlab. A checkout that is itself
   * the prefix (PREFIX=$PWD) keeps its own lua/. */
  installed = is_dir(probe) && !(checkout && strcmp(root, prefix) == 0);
  if (installed) {
    lua_pushfstring(L, "%s" INSTALLED_LMOD "/?.lua;%s" INSTALLED_LMOD "/?/init.lua;%s", prefix, prefix,
                    lua_tostring(L, -1));
    snprintf(probe, sizeof probe, "%s" INSTALLED_SHARE, prefix);
    snprintf(g_script_root, sizeof g_script_root, "%s", is_dir(probe) ? probe : "");
  } else {
    lua_pushfstring(L, "%s/lua/?.lua;%s/lua/?/init.lua;%s", root, root, lua_tostring(L, -1));
    snprintf(g_script_root, sizeof g_script_root, "%s", checkout ? root : "");
  }
  lua_setfield(L, -3, "path");
  lua_pop(L, 1);
  lua_getfield(L, -1, "preload");
  lua_pushcfunction(L, luaopen_attnlab_core);
  lua_setfield(L, -2, "attnlab.core");
  lua_pop(L, 2);
}

/* fname, or <g_script_root>/fname when fname is a relative path that does not exist but
 * that one does (then arg[0] becomes it too, so the script can find its siblings). */
const char *host_resolve_script(lua_State *L, const char *fname) {
  const char *alt;
  if (fname == NULL || fname[0] == '/' || g_script_root[0] == '\0' || access(fname, F_OK) == 0)
    return fname;
  alt = lua_pushfstring(L, "%s/%s", g_script_root, fname);
  if (access(alt, R_OK) != 0) {
    lua_pop(L, 1);
    return fname;
  }
  if (lua_getglobal(L, "arg") == LUA_TTABLE) {
    lua_pushvalue(L, -2);
    lua_rawseti(L, -2, 0);
  }
  lua_pop(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, "attnlab.host.script"); /* keeps the string alive */
  lua_getfield(L, LUA_REGISTRYINDEX, "attnlab.host.script");
  alt = lua_tostring(L, -1);
  lua_pop(L, 1);
  return alt;
}

/* al = require "attnlab". A missing or broken package is a warning, not an error: the
 * interpreter stays usable (and a script's own require reports the failure in full). */
void host_load_attnlab(lua_State *L) {
  lua_getglobal(L, "require");
  lua_pushliteral(L, "attnlab");
  if (lua_pcall(L, 1, 1, 0) == LUA_OK) {
    lua_setglobal(L, "al");
  } else {
    const char *msg = lua_tostring(L, -1);
    int len;
    if (msg == NULL) msg = "(error object is not a string)";
    len = (int)strcspn(msg, "\n"); /* the first line says it; "not found" lists 16 paths */
    if (len > 0 && msg[len - 1] == ':') len--;
    fprintf(stderr, "%s: warning: global 'al' not set: require \"attnlab\" failed: %.*s\n",
            HOST_NAME, len, msg);
    fflush(stderr);
    lua_pop(L, 1);
  }
}
