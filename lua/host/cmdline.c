/* lua/host/cmdline.c -- the command line, with lua.c's grammar: options, usage and --help,
 * and the `arg` table. */
#include <stdio.h>
#include <string.h>

#include <lua.h>

#include "host.h"

/* Options stop at the first non-option, at "--" (script is the next word) or at "-"
 * (the script is stdin). -e and -l take the rest of their word or the next word, which may
 * not start with '-'. */
int host_parse_cmdline(int argc, char **argv, host_cmdline *cl) {
  int i;
  memset(cl, 0, sizeof *cl);
  cl->script = argc;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-') { cl->script = i; return 0; }
    switch (a[1]) {
      case '\0': cl->script = i; return 0;                 /* "-": stdin */
      case '-':
        if (a[2] == '\0') { cl->script = i + 1; return 0; } /* "--" */
        if (strcmp(a, "--help") == 0) { cl->help = 1; break; }
        if (strcmp(a, "--version") == 0) { cl->flags |= OPT_VERSION; break; }
        cl->bad = i; return -1;
      case 'h':
        if (a[2] != '\0') { cl->bad = i; return -1; }
        cl->help = 1; break;
      case 'E': case 'W': case 'i': case 'v':
        if (a[2] != '\0') { cl->bad = i; return -1; }
        if (a[1] == 'E') cl->flags |= OPT_E_IGNORE_ENV;
        if (a[1] == 'i') cl->flags |= OPT_INTERACTIVE | OPT_VERSION; /* -i implies -v */
        if (a[1] == 'v') cl->flags |= OPT_VERSION;
        break;
      case 'e': case 'l':
        if (a[1] == 'e') cl->flags |= OPT_EXEC;
        if (a[2] == '\0') {
          if (i + 1 >= argc || argv[i + 1][0] == '-') { cl->bad = i; return -1; }
          i++;
        }
        break;
      default: cl->bad = i; return -1;
    }
  }
  return 0;
}

void host_print_usage(FILE *f) {
  fprintf(f,
    "usage: " HOST_NAME " [options] [script [args]]\n"
    "Available options are:\n"
    "  -e stat   execute string 'stat'\n"
    "  -i        enter interactive mode after executing 'script'\n"
    "  -l mod    require library 'mod' into global 'mod'\n"
    "  -l g=mod  require library 'mod' into global 'g'\n"
    "  -v        show version information\n"
    "  -E        ignore environment variables\n"
    "  -W        turn warnings on\n"
    "  --        stop handling options\n"
    "  -         stop handling options and execute stdin\n"
    "  --help    show this help\n"
    "  --version the same as -v\n");
  if (f != stdout) return;
  fprintf(f,
    "\n"
    "With no arguments: a REPL when stdin is a terminal, else stdin runs as a script.\n"
    "Everything else is as in lua5.4: arg[0] is the script, arg[1..] its arguments (also\n"
    "its '...'), arg[-1..] the interpreter and options; LUA_INIT_5_4 or LUA_INIT runs first.\n"
    "\n"
    "attnlab additions:\n"
    "  * package.path starts with this checkout's lua/ folder (installed: <prefix>/share/lua/5.4),\n"
    "    and \"attnlab.core\" is built in, so require \"attnlab\" always finds the matching C core.\n"
    "  * A relative script path missing from the current folder is looked up in the checkout\n"
    "    (installed: <prefix>/share/attnlab), e.g. attnlab scripts/distill.lua --help.\n"
    "  * The global 'al' holds require \"attnlab\" everywhere: REPL, -e and scripts. Scripts\n"
    "    should still say  local al = require \"attnlab\"  (the same table) so that they also\n"
    "    run under a stock lua5.4 with lib/ on package.cpath.\n"
    "  * REPL: expressions print their values (tensors in PyTorch style); Tab completes\n"
    "    globals and fields after '.' or ':' (al.<Tab>, t:<Tab>); Ctrl-C interrupts a\n"
    "    running statement or discards the line being typed; Ctrl-D exits.\n"
    "    History: ~/.attnlab_history (last %d entries); ATTNLAB_HISTORY=path overrides,\n"
    "    ATTNLAB_HISTORY= (empty) disables it. help: al.help()\n",
    HISTORY_CAP);
}

void host_usage_error(char **argv, int bad) {
  const char *opt = argv[bad];
  if ((opt[1] == 'e' || opt[1] == 'l') && opt[2] == '\0')
    fprintf(stderr, "%s: '%s' needs argument\n", HOST_NAME, opt);
  else
    fprintf(stderr, "%s: unrecognized option '%s'\n", HOST_NAME, opt);
  host_print_usage(stderr);
}

/* arg[0] = script, arg[1..] = its arguments, arg[-1..] = options and interpreter. Without a
 * script, arg[0] is the interpreter and the options are arg[1..]. */
void host_create_arg_table(lua_State *L, int argc, char **argv, int script) {
  int i;
  if (script == argc) script = 0;
  lua_createtable(L, argc - script - 1 > 0 ? argc - script - 1 : 0, script + 1);
  for (i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}
