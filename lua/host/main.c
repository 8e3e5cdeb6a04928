/* lua/host/main.c -- bin/attnlab: the Lua 5.4 standalone interpreter with attnlab built in.
 *
 * Behaves like Debian's lua5.4 (the Lua 5.4 manual, section 7 "Lua Standalone"): the same
 * options (-e -l -i -v -E -W -- -), the same `arg` table and `...` for scripts, LUA_INIT_5_4 /
 * LUA_INIT, exit status 1 with "attnlab: <message>" and a traceback on stderr, and the same
 * REPL rules (try "return <line>;" first, continue incomplete statements with the `>>`
 * prompt, print results tab-separated, errors with a traceback keep the REPL alive, Ctrl-C
 * interrupts a running statement through a count hook set from the signal handler).
 *
 * What it adds:
 *  - package.path starts with <checkout>/lua/?.lua;<checkout>/lua/?/init.lua, the checkout
 *    being found from the executable's real path (bin/attnlab or build/<x>/attnlab); when
 *    it is an installed tree's (`make install`: <prefix>/bin/attnlab and
 *    <prefix>/share/lua/5.4/attnlab/), even one inside a checkout, it starts with
 *    <prefix>/share/lua/5.4/?.lua;...;
 *  - a relative script path that does not exist from the current folder is looked up in the
 *    checkout, or in <prefix>/share/attnlab (the installed scripts/ and experiments/), so
 *    `attnlab scripts/demo.lua` runs from anywhere;
 *  - --version (the same line as -v);
 *  - a script piped on stdin that raises an error exits with status 1 (lua.c exits 0);
 *  - package.preload["attnlab.core"] = the statically linked luaopen_attnlab_core;
 *  - the global `al` = require "attnlab" (REPL, -e and scripts alike; see --help);
 *  - REPL: readline with tab completion of globals and of fields after `.`/`:` (walking
 *    tables and metatable __index tables), history in ~/.attnlab_history (capped), a banner
 *    with the BLAS configuration, Ctrl-C at the prompt discards the line, tensors printed
 *    with attnlab.format (PyTorch style).
 * readline is used only when stdin is a terminal; otherwise lines are read with getline(),
 * prompts written to stdout, as lua.c does without readline, so tests can pipe input.
 *
 * The files: host.h lists them (command line, running code, packages, Lua helpers, line
 * input, REPL); this one holds main() and the order of its steps.
 *
 * POSIX + Lua 5.4 + GNU readline; of attnlab only the header-only attnlab/version.h. */
#include <stdlib.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "host.h"

static int host_main(lua_State *L) {
  int argc = (int)lua_tointeger(L, 1);
  char **argv = (char **)lua_touserdata(L, 2);
  int stdin_tty = isatty(STDIN_FILENO), repl, banner;
  host_cmdline cl;

  luaL_checkversion(L);
  if (host_parse_cmdline(argc, argv, &cl) != 0) {
    host_usage_error(argv, cl.bad);
    return 0;
  }
  if (cl.help) {
    host_print_usage(stdout);
    lua_pushboolean(L, 1);
    return 1;
  }
  /* The REPL runs for -i, or with no script, no -e, no -v and a terminal on stdin. */
  repl = (cl.flags & OPT_INTERACTIVE) ||
         (cl.script == argc && !(cl.flags & (OPT_EXEC | OPT_VERSION)) && stdin_tty);
  banner = repl && stdin_tty;
  if (cl.flags & OPT_E_IGNORE_ENV) {
    lua_pushboolean(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");
  }
  luaL_openlibs(L);
  host_setup_package(L);
  host_load_helpers(L);
  host_create_arg_table(L, argc, argv, cl.script);
  lua_gc(L, LUA_GCRESTART);
  lua_gc(L, LUA_GCGEN, 0, 0);
  host_load_attnlab(L);
  if (banner)
    host_print_banner(L);
  else if (cl.flags & OPT_VERSION)
    host_print_version(L);
  if (!(cl.flags & OPT_E_IGNORE_ENV) && host_run_lua_init(L) != LUA_OK) return 0;
  if (!host_run_options(L, argv, cl.script)) return 0;
  if (cl.script < argc && host_run_script(L, argv, cl.script) != LUA_OK) return 0;
  if (repl)
    host_run_repl(L);
  else if (cl.script == argc && !(cl.flags & (OPT_EXEC | OPT_VERSION))) {
    /* stdin is not a terminal: run it as a script. Its error is a failure, exit status 1, as a
     * script file's is (lua.c exits 0 here: `attnlab < run.lua` in a batch job that failed
     * looked like a success) */
    if (host_dofile(L, NULL) != LUA_OK) return 0;
  }
  lua_pushboolean(L, 1);
  return 1;
}

int main(int argc, char **argv) {
  int st, ok;
  /* No OpenMP wait policy is forced: libgomp's default (spin a while, then sleep) keeps the
   * second thread hot across the many short parallel regions of a training step, where a
   * passive policy makes every region pay a futex wake-up (experiments/classifier/
   * THROUGHPUT.md). OpenBLAS runs one thread per call and al_sgemm splits panels over the
   * OpenMP team, so no two thread pools compete. */
  lua_State *L = luaL_newstate();
  if (L == NULL) {
    host_message(HOST_NAME, "cannot create state: not enough memory");
    return EXIT_FAILURE;
  }
  lua_gc(L, LUA_GCSTOP); /* no collection while the state is being built */
  lua_pushcfunction(L, host_main);
  lua_pushinteger(L, argc);
  lua_pushlightuserdata(L, argv);
  st = lua_pcall(L, 2, 1, 0);
  ok = lua_toboolean(L, -1);
  host_report(L, st);
  lua_close(L);
  return (ok && st == LUA_OK) ? EXIT_SUCCESS : EXIT_FAILURE;
}
