/* lua/host/host.h -- what the files of bin/attnlab share (main.c describes the program).
 *
 *   main.c      main(): the order of the steps, from the command line to the exit status
 *   cmdline.c   the options (lua.c's grammar), --help and the `arg` table
 *   run.c       protected calls (traceback, Ctrl-C), error messages, -e/-l/-W, LUA_INIT,
 *               the script
 *   package.c   where the Lua modules and relative script paths are found; al = require
 *   helpers.c   the helpers written in Lua: REPL printer, completion, version, banner
 *   lineedit.c  reading a line: readline on a terminal (history, Tab), getline() otherwise
 *   repl.c      the read-eval-print loop
 *
 * Every name here starts with host_: the executable is linked with -Wl,-E (C modules find
 * Lua's API in it), so its global names are visible to every library it loads. */
#ifndef ATTNLAB_HOST_H
#define ATTNLAB_HOST_H

#include <stdio.h>

#include <lua.h>

#define HOST_NAME "attnlab"
#define HISTORY_CAP 1000 /* entries kept in memory and in the history file */

/* ---- run.c */
/* Prefix of error messages: "attnlab" outside the REPL, none inside (as lua.c). */
extern const char *host_progname;
void host_message(const char *prefix, const char *msg);
/* Prints the error on top of the stack (if st is an error) and pops it. */
int host_report(lua_State *L, int st);
/* Calls the function under `narg` arguments with Ctrl-C armed and, when `traceback`, the
 * traceback handler. */
int host_call(lua_State *L, int narg, int nres, int traceback);
int host_docall(lua_State *L, int narg, int nres);
/* Runs the file (NULL: stdin) and reports an error; returns the status. */
int host_dofile(lua_State *L, const char *name);
/* Runs -e, -l and -W in command-line order. Returns 0 on the first failure. */
int host_run_options(lua_State *L, char **argv, int limit);
int host_run_lua_init(lua_State *L);
int host_run_script(lua_State *L, char **argv, int script);

/* ---- cmdline.c */
enum { OPT_E_IGNORE_ENV = 1, OPT_INTERACTIVE = 2, OPT_VERSION = 4, OPT_EXEC = 8 };

typedef struct {
  int flags;
  int script; /* argv index of the script, or argc when there is none */
  int bad;    /* argv index of a bad option, or 0 */
  int help;   /* --help / -h */
} host_cmdline;

int host_parse_cmdline(int argc, char **argv, host_cmdline *cl);
void host_print_usage(FILE *f);
void host_usage_error(char **argv, int bad);
void host_create_arg_table(lua_State *L, int argc, char **argv, int script);

/* ---- package.c */
void host_setup_package(lua_State *L);
const char *host_resolve_script(lua_State *L, const char *fname);
void host_load_attnlab(lua_State *L);

/* ---- helpers.c */
void host_load_helpers(lua_State *L);
/* Pushes the helper `name` (a function) or returns 0 with nothing pushed. */
int host_push_helper(lua_State *L, const char *name);
void host_print_version(lua_State *L);
void host_print_banner(lua_State *L);

/* ---- lineedit.c */
enum { LINE_EOF = 0, LINE_OK = 1, LINE_CANCELLED = -1 };

/* readline (history, completion) when stdin is a terminal, else plain getline(). */
void host_line_open(lua_State *L);
void host_line_close(void);
/* Reads one line and pushes it (without its newline; a leading '=' of a first line becomes
 * "return "). Returns LINE_OK, LINE_EOF or LINE_CANCELLED (nothing pushed for the last two). */
int host_push_line(lua_State *L, int first);
void host_save_history(const char *line);

/* ---- repl.c */
void host_run_repl(lua_State *L);

#endif
