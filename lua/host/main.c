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
 *    there is no checkout around it but an installed tree (`make install`: <prefix>/bin/attnlab
 *    and <prefix>/share/lua/5.4/attnlab/), it starts with <prefix>/share/lua/5.4/?.lua;...;
 *  - a relative script path that does not exist from the current folder is looked up in the
 *    checkout, or in <prefix>/share/attnlab (the installed scripts/ and experiments/), so
 *    `attnlab scripts/demo.lua` runs from anywhere;
 *  - --version (the same line as -v);
 *  - package.preload["attnlab.core"] = the statically linked luaopen_attnlab_core;
 *  - the global `al` = require "attnlab" (REPL, -e and scripts alike; see --help);
 *  - REPL: readline with tab completion of globals and of fields after `.`/`:` (walking
 *    tables and metatable __index tables), history in ~/.attnlab_history (capped), a banner
 *    with the BLAS configuration, Ctrl-C at the prompt discards the line, tensors printed
 *    with attnlab.format (PyTorch style).
 * readline is used only when stdin is a terminal; otherwise lines are read with getline(),
 * prompts written to stdout, as lua.c does without readline, so tests can pipe input.
 *
 * POSIX + Lua 5.4 + GNU readline; of attnlab only the header-only attnlab/version.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "attnlab/version.h"

#define ATTNLAB_VERSION ATTNLAB_VERSION_STRING

#define HOST_NAME "attnlab"
#define HISTORY_CAP 1000 /* entries kept in memory and in the history file */
#define PROMPT1 "> "
#define PROMPT2 ">> "
#define EOF_MARK "<eof>" /* end of a syntax error message for an unfinished statement */
#define INIT_VAR "LUA_INIT"
#define INIT_VAR_VERSIONED "LUA_INIT_" LUA_VERSION_MAJOR "_" LUA_VERSION_MINOR
#define IGNORE_MARK "-" /* -l mod-1.2 sets the global mod (LUA_IGMARK of loadlib.c) */

/* Provided by lua/bind/ (linked in by the Makefile). */
int luaopen_attnlab_core(lua_State *L);

/* Prefix of error messages: "attnlab" outside the REPL, none inside (as lua.c). */
static const char *g_progname = HOST_NAME;

/* ------------------------------------------------------------------------------------------
 * Messages and protected calls */

static void print_message(const char *prefix, const char *msg) {
  if (prefix) fprintf(stderr, "%s: ", prefix);
  fprintf(stderr, "%s\n", msg);
  fflush(stderr);
}

/* Prints the error on top of the stack (if st is an error) and pops it. */
static int report(lua_State *L, int st) {
  if (st != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    print_message(g_progname, msg ? msg : "(error object is not a string)");
    lua_pop(L, 1);
  }
  return st;
}

/* Message handler: turns any error value into a string and appends a traceback. */
static int traceback_handler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
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
static int call_armed(lua_State *L, int narg, int nres, int traceback) {
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

static int docall(lua_State *L, int narg, int nres) { return call_armed(L, narg, nres, 1); }

static int dochunk(lua_State *L, int st) {
  if (st == LUA_OK) st = docall(L, 0, 0);
  return report(L, st);
}

static int dofile(lua_State *L, const char *name) {
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
  st = docall(L, 1, 1);
  if (st == LUA_OK) {
    lua_pushlstring(L, spec, glen);
    lua_insert(L, -2);
    lua_setglobal(L, lua_tostring(L, -2));
    lua_pop(L, 1);
  }
  return report(L, st);
}

/* ------------------------------------------------------------------------------------------
 * Command line (same grammar as lua.c) */

enum { OPT_E_IGNORE_ENV = 1, OPT_INTERACTIVE = 2, OPT_VERSION = 4, OPT_EXEC = 8 };

typedef struct {
  int flags;
  int script; /* argv index of the script, or argc when there is none */
  int bad;    /* argv index of a bad option, or 0 */
  int help;   /* --help / -h */
} cmdline;

/* Options stop at the first non-option, at "--" (script is the next word) or at "-"
 * (the script is stdin). -e and -l take the rest of their word or the next word, which may
 * not start with '-'. */
static int parse_cmdline(int argc, char **argv, cmdline *cl) {
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

static void print_usage(FILE *f) {
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

static void usage_error(char **argv, int bad) {
  const char *opt = argv[bad];
  if ((opt[1] == 'e' || opt[1] == 'l') && opt[2] == '\0')
    fprintf(stderr, "%s: '%s' needs argument\n", HOST_NAME, opt);
  else
    fprintf(stderr, "%s: unrecognized option '%s'\n", HOST_NAME, opt);
  print_usage(stderr);
}

/* arg[0] = script, arg[1..] = its arguments, arg[-1..] = options and interpreter. Without a
 * script, arg[0] is the interpreter and the options are arg[1..]. */
static void create_arg_table(lua_State *L, int argc, char **argv, int script) {
  int i;
  if (script == argc) script = 0;
  lua_createtable(L, argc - script - 1 > 0 ? argc - script - 1 : 0, script + 1);
  for (i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

/* Runs -e, -l and -W in command-line order. Returns 0 on the first failure. */
static int run_options(lua_State *L, char **argv, int limit) {
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

static int run_lua_init(lua_State *L) {
  const char *name = "=" INIT_VAR_VERSIONED;
  const char *init = getenv(name + 1);
  if (init == NULL) {
    name = "=" INIT_VAR;
    init = getenv(name + 1);
  }
  if (init == NULL) return LUA_OK;
  if (init[0] == '@') return dofile(L, init + 1);
  return dostring(L, init, name);
}

/* Where relative script paths are looked up when they do not exist from the current folder:
 * the checkout, or <prefix>/share/attnlab in an installed tree ("" = nowhere). Set by
 * setup_package. */
static char g_script_root[PATH_MAX + 128];

/* fname, or <g_script_root>/fname when fname is a relative path that does not exist but
 * that one does (then arg[0] becomes it too, so the script can find its siblings). */
static const char *resolve_script(lua_State *L, const char *fname) {
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

static int run_script(lua_State *L, char **argv, int script) {
  const char *fname = argv[script];
  int st;
  if (strcmp(fname, "-") == 0 && strcmp(argv[script - 1], "--") != 0) fname = NULL; /* stdin */
  fname = resolve_script(L, fname);
  st = luaL_loadfile(L, fname);
  if (st == LUA_OK) {
    lua_Integer i, n;
    if (lua_getglobal(L, "arg") != LUA_TTABLE) luaL_error(L, "'arg' is not a table");
    n = luaL_len(L, -1);
    luaL_checkstack(L, (int)n + 3, "too many arguments to script");
    for (i = 1; i <= n; i++) lua_rawgeti(L, -(int)i, i);
    lua_remove(L, -(int)i);
    st = docall(L, (int)n, LUA_MULTRET);
  }
  return report(L, st);
}

/* ------------------------------------------------------------------------------------------
 * Package setup: where the checkout's lua/ folder is, and the built-in C module */

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

static void setup_package(lua_State *L) {
  char root[PATH_MAX + 64], prefix[PATH_MAX + 64], probe[PATH_MAX + 128];
  int checkout = find_root(root, sizeof root, prefix, sizeof prefix);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "path");
  snprintf(probe, sizeof probe, "%s" INSTALLED_LMOD "/attnlab", prefix);
  if (!checkout && is_dir(probe)) {
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

/* Helpers written in Lua: the REPL's printer, tab completion and the banner. */
static const char HOST_LUA[] =
  "local H = {}\n"
  "local getmt, rawget, type, pcall, select = debug.getmetatable, rawget, type, pcall, select\n"
  "local unpack = table.unpack\n"
  "local format\n"
  "local function is_tensor(v)\n"
  "  local mt = getmt(v)\n"
  "  if type(mt) == 'table' and rawget(mt, '__name') == 'attnlab.Tensor' then return true end\n"
  "  local al = package.loaded['attnlab']\n"
  "  if type(v) == 'userdata' and type(al) == 'table' and type(rawget(al, 'is_tensor')) == 'function' then\n"
  "    local ok, r = pcall(al.is_tensor, v)\n"
  "    return ok and r == true\n"
  "  end\n"
  "  return false\n"
  "end\n"
  /* the REPL's printer: tensors through attnlab.format, then the global print */
  "function H.print(...)\n"
  "  local n, args = select('#', ...), { ... }\n"
  "  for i = 1, n do\n"
  "    if is_tensor(args[i]) then\n"
  "      if format == nil then\n"
  "        local ok, f = pcall(require, 'attnlab.format')\n"
  "        format = ok and f or false\n"
  "      end\n"
  "      if format then\n"
  "        local ok, s = pcall(format, args[i])\n"
  "        if ok then args[i] = s end\n"
  "      end\n"
  "    end\n"
  "  end\n"
  "  return print(unpack(args, 1, n))\n"
  "end\n"
  "local KEYWORDS = {}\n"
  "for w in ('and break do else elseif end false for function goto if in local nil not or '\n"
  "    .. 'repeat return then true until while'):gmatch('%a+') do KEYWORDS[w] = true end\n"
  /* completions of `text`: 'pri' (globals, keywords), 'al.nn.Li', 't:sha' */
  "function H.complete(text)\n"
  "  local out, seen = {}, {}\n"
  "  local head, sep, part = text:match('^(.-)([.:])([%w_]*)$')\n"
  "  if not head then part = text end\n"
  "  local function add(s)\n"
  "    if not seen[s] then seen[s] = true; out[#out + 1] = s end\n"
  "  end\n"
  "  local function wanted(k)\n"
  "    return type(k) == 'string' and k:sub(1, #part) == part and k:match('^[%a_][%w_]*$')\n"
  "       and not KEYWORDS[k] and (part:sub(1, 1) == '_' or k:sub(1, 2) ~= '__')\n"
  "  end\n"
  /* fields of tables, then of metatable __index tables (classes, string methods); when
   * __index is a function (a userdata with properties), the metatable's `methods` or
   * `__methods` table and its `__fields` list of property names, if it has them */
  "  local function collect(v, prefix, methods)\n"
  "    local visited = {}\n"
  "    local function walk(x, depth)\n"
  "      if depth > 10 or x == nil or visited[x] then return end\n"
  "      visited[x] = true\n"
  "      if type(x) == 'table' then\n"
  "        for k, val in next, x do\n"
  "          if wanted(k) and (not methods or type(val) == 'function') then\n"
  "            add(prefix .. k .. (type(val) == 'function' and '(' or ''))\n"
  "          end\n"
  "        end\n"
  "      end\n"
  "      local mt = getmt(x)\n"
  "      if type(mt) ~= 'table' then return end\n"
  "      local idx = rawget(mt, '__index')\n"
  "      if type(idx) == 'table' then walk(idx, depth + 1); return end\n"
  "      if idx == nil then return end\n"
  "      local m = rawget(mt, 'methods') or rawget(mt, '__methods')\n"
  "      walk(type(m) == 'table' and m or mt, depth + 1)\n"
  "      local f = rawget(mt, '__fields')\n"
  "      if not methods and type(f) == 'table' then\n"
  "        for _, k in ipairs(f) do if wanted(k) then add(prefix .. k) end end\n"
  "      end\n"
  "    end\n"
  "    walk(v, 0)\n"
  "  end\n"
  "  if head then\n"
  "    local v = _G\n"
  "    for name in (head .. '.'):gmatch('([^.]*)%.') do\n"
  "      if not name:match('^[%a_][%w_]*$') then return out end\n"
  "      local t = type(v)\n"
  "      if t ~= 'table' and t ~= 'userdata' and t ~= 'string' then return out end\n"
  "      local ok, nv = pcall(function() return v[name] end)\n"
  "      if not ok or nv == nil then return out end\n"
  "      v = nv\n"
  "    end\n"
  "    collect(v, head .. sep, sep == ':')\n"
  "  else\n"
  "    for w in pairs(KEYWORDS) do\n"
  "      if w:sub(1, #part) == part then add(w) end\n"
  "    end\n"
  "    collect(_G, '', false)\n"
  "  end\n"
  "  table.sort(out)\n"
  "  return out\n"
  "end\n"
  /* the version: al.VERSION, al.version or al.config().version, else the compiled default */
  "local function config()\n"
  "  local al = package.loaded['attnlab']\n"
  "  if type(al) == 'table' and type(rawget(al, 'config')) == 'function' then\n"
  "    local ok, c = pcall(al.config)\n"
  "    if ok and type(c) == 'table' then return c end\n"
  "  end\n"
  "end\n"
  "function H.version(default)\n"
  "  local al = package.loaded['attnlab']\n"
  "  if type(al) == 'table' then\n"
  "    local v = rawget(al, 'VERSION') or rawget(al, 'version')\n"
  "    if type(v) == 'string' then return v end\n"
  "  end\n"
  "  local c = config()\n"
  "  if c and type(c.version) == 'string' then return c.version end\n"
  "  return default\n"
  "end\n"
  /* banner: "attnlab V (Lua 5.4.x) -- BLAS: <backend> <core> <n> threads" + the hint line;
   * reads al.config() fields blas_backend, blas (a core name, or {name=, core=}), blas_core,
   * threads -- whichever are there */
  "function H.banner(version, lua_release)\n"
  "  local s = ('attnlab %s (%s)'):format(version, lua_release)\n"
  "  local c = config()\n"
  "  if c then\n"
  "    local parts = {}\n"
  "    local function add(v) if type(v) == 'string' and v ~= '' then parts[#parts + 1] = v end end\n"
  "    add(c.blas_backend)\n"
  "    if type(c.blas) == 'table' then add(c.blas.name); add(c.blas.core) else add(c.blas) end\n"
  "    add(c.blas_core)\n"
  "    local th = c.threads or c.num_threads\n"
  "    s = s .. ' -- BLAS: ' .. (#parts > 0 and table.concat(parts, ' ') or 'unknown')\n"
  "    if th ~= nil then s = s .. ', ' .. tostring(th) .. ' threads' end\n"
  "  end\n"
  "  return s .. '\\nal.<tab> completes; help: al.help()'\n"
  "end\n"
  "return H\n";

static const char *HOST_KEY = "attnlab.host"; /* registry field holding the helper table */

static void load_host_helpers(lua_State *L) {
  if (luaL_loadbuffer(L, HOST_LUA, sizeof HOST_LUA - 1, "=attnlab.host") == LUA_OK &&
      lua_pcall(L, 0, 1, 0) == LUA_OK) {
    lua_setfield(L, LUA_REGISTRYINDEX, HOST_KEY);
  } else {
    print_message(HOST_NAME, lua_tostring(L, -1)); /* cannot happen unless out of memory */
    lua_pop(L, 1);
  }
}

/* Pushes the helper `name` (a function) or returns 0 with nothing pushed. */
static int push_helper(lua_State *L, const char *name) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, HOST_KEY) != LUA_TTABLE) { lua_pop(L, 1); return 0; }
  if (lua_getfield(L, -1, name) != LUA_TFUNCTION) { lua_pop(L, 2); return 0; }
  lua_remove(L, -2);
  return 1;
}

/* al = require "attnlab". A missing or broken package is a warning, not an error: the
 * interpreter stays usable (and a script's own require reports the failure in full). */
static void load_attnlab(lua_State *L) {
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

/* The version shown by -v and the banner (see H.version). Pushes values: the caller
 * restores the stack top once it is done with the string. */
static const char *version_string(lua_State *L) {
  if (push_helper(L, "version")) {
    lua_pushliteral(L, ATTNLAB_VERSION);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING)
      return lua_tostring(L, -1);
  }
  return ATTNLAB_VERSION;
}

static void print_version(lua_State *L) {
  int top = lua_gettop(L);
  printf("%s %s (%s)\n", HOST_NAME, version_string(L), LUA_RELEASE);
  fflush(stdout);
  lua_settop(L, top);
}

static void print_banner(lua_State *L) {
  int top = lua_gettop(L);
  const char *version = version_string(L);
  if (push_helper(L, "banner")) {
    lua_pushstring(L, version);
    lua_pushstring(L, LUA_RELEASE);
    if (lua_pcall(L, 2, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING) {
      printf("%s\n", lua_tostring(L, -1));
      fflush(stdout);
      lua_settop(L, top);
      return;
    }
  }
  lua_settop(L, top);
  print_version(L);
}

/* ------------------------------------------------------------------------------------------
 * Line input: readline on a terminal, getline() otherwise */

static int g_use_readline;
static lua_State *g_repl_L; /* for the completion callback */
static char g_history_path[PATH_MAX];

enum { LINE_EOF = 0, LINE_OK = 1, LINE_CANCELLED = -1 };

static volatile sig_atomic_t g_prompt_sigint, g_prompt_winch;
static char *g_rl_line;
static int g_rl_done;

static void on_sigint_prompt(int sig) { (void)sig; g_prompt_sigint = 1; }
static void on_sigwinch_prompt(int sig) { (void)sig; g_prompt_winch = 1; }

static void line_handler(char *line) {
  g_rl_line = line;
  g_rl_done = 1;
  rl_callback_handler_remove();
}

/* readline through its callback interface, so that Ctrl-C can abandon the line: SIGINT and
 * SIGWINCH are blocked except inside pselect(), whose EINTR we act on (no race between
 * testing the flag and sleeping). */
static int read_line_readline(const char *prompt, char **out) {
  struct sigaction sa, old_int, old_winch;
  sigset_t block, oldmask;
  int fd = fileno(rl_instream);
  int rc = LINE_OK;

  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGWINCH);
  sigprocmask(SIG_BLOCK, &block, &oldmask);
  g_prompt_sigint = g_prompt_winch = 0;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_sigint_prompt; /* no SA_RESTART: pselect() must return */
  sigaction(SIGINT, &sa, &old_int);
  sa.sa_handler = on_sigwinch_prompt;
  sigaction(SIGWINCH, &sa, &old_winch);

  g_rl_done = 0;
  g_rl_line = NULL;
  rl_reset_screen_size();
  rl_callback_handler_install(prompt, line_handler);
  while (!g_rl_done) {
    fd_set fds;
    int r;
    if (g_prompt_sigint) break;
    if (g_prompt_winch) {
      g_prompt_winch = 0;
      rl_resize_terminal();
    }
    FD_ZERO(&fds);
    FD_SET(fd, &fds);
    r = pselect(fd + 1, &fds, NULL, NULL, NULL, &oldmask);
    if (r < 0) {
      if (errno == EINTR) continue;
      break; /* input error: treat as end of input */
    }
    rl_callback_read_char();
  }
  if (g_rl_done) {
    rc = g_rl_line ? LINE_OK : LINE_EOF;
    *out = g_rl_line;
  } else if (g_prompt_sigint) {
    rl_point = rl_end; /* "^C" goes after the text, not over it */
    rl_redisplay();
    fputs("^C", rl_outstream);
    fflush(rl_outstream);
    rl_free_line_state();
    rl_callback_sigcleanup();
    rl_callback_handler_remove();
    fputs("\n", rl_outstream);
    fflush(rl_outstream);
    rc = LINE_CANCELLED;
  } else {
    rl_callback_handler_remove();
    rc = LINE_EOF;
  }
  sigprocmask(SIG_SETMASK, &oldmask, NULL);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGWINCH, &old_winch, NULL);
  return rc;
}

/* As lua.c without readline: prompt on stdout, one line from stdin (any length). */
static int read_line_plain(const char *prompt, char **out) {
  char *buf = NULL;
  size_t cap = 0;
  ssize_t n;
  fputs(prompt, stdout);
  fflush(stdout);
  n = getline(&buf, &cap, stdin);
  if (n < 0) {
    free(buf);
    return LINE_EOF;
  }
  *out = buf;
  return LINE_OK;
}

/* The prompt: _PROMPT / _PROMPT2 when set (any value, through tostring), else the default.
 * Leaves the prompt string on the stack (it must live while the line is read). */
static int tostring_for_prompt(lua_State *L) {
  luaL_tolstring(L, 1, NULL);
  return 1;
}

static const char *push_prompt(lua_State *L, int first) {
  if (lua_getglobal(L, first ? "_PROMPT" : "_PROMPT2") != LUA_TNIL) {
    lua_pushcfunction(L, tostring_for_prompt);
    lua_insert(L, -2);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING)
      return lua_tostring(L, -1);
  }
  lua_pop(L, 1);
  return lua_pushstring(L, first ? PROMPT1 : PROMPT2);
}

/* Reads one line and pushes it (without its newline; a leading '=' of a first line becomes
 * "return "). Returns LINE_OK, LINE_EOF or LINE_CANCELLED (nothing pushed for the last two). */
static int push_line(lua_State *L, int first) {
  char *line = NULL;
  const char *prompt = push_prompt(L, first);
  int rc = g_use_readline ? read_line_readline(prompt, &line) : read_line_plain(prompt, &line);
  size_t len;
  lua_pop(L, 1); /* prompt */
  if (rc != LINE_OK) return rc;
  len = strlen(line);
  if (len > 0 && line[len - 1] == '\n') line[--len] = '\0';
  if (first && line[0] == '=')
    lua_pushfstring(L, "return %s", line + 1);
  else
    lua_pushlstring(L, line, len);
  free(line);
  return LINE_OK;
}

static void save_history_line(const char *line) {
  HIST_ENTRY *last;
  if (!g_use_readline || line[0] == '\0') return;
  last = history_get(history_base + history_length - 1);
  if (last && strcmp(last->line, line) == 0) return; /* no consecutive duplicates */
  add_history(line);
  if (g_history_path[0]) append_history(1, g_history_path);
}

/* Completion: the Lua helper lists the candidates, readline takes them one by one. */
static char **g_matches;
static size_t g_nmatches;

static void free_matches(void) {
  size_t i;
  for (i = 0; i < g_nmatches; i++) free(g_matches[i]);
  free(g_matches);
  g_matches = NULL;
  g_nmatches = 0;
}

static char *match_generator(const char *text, int state) {
  static size_t next;
  (void)text;
  if (state == 0) next = 0;
  if (next < g_nmatches) return strdup(g_matches[next++]);
  return NULL;
}

static char **complete(const char *text, int start, int end) {
  lua_State *L = g_repl_L;
  int top = lua_gettop(L);
  char **result = NULL;
  (void)start; (void)end;
  rl_attempted_completion_over = 1;     /* never fall back to file names */
  rl_completion_append_character = '\0'; /* "al." must not become "al. " */
  free_matches();
  if (lua_checkstack(L, 8) && push_helper(L, "complete")) {
    lua_pushstring(L, text);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TTABLE) {
      lua_Integer i, n = luaL_len(L, -1);
      g_matches = calloc((size_t)n + 1, sizeof *g_matches);
      for (i = 1; g_matches && i <= n; i++) {
        if (lua_rawgeti(L, -1, i) == LUA_TSTRING) {
          char *s = strdup(lua_tostring(L, -1));
          if (s) g_matches[g_nmatches++] = s;
        }
        lua_pop(L, 1);
      }
    }
  }
  lua_settop(L, top);
  if (g_nmatches > 0) result = rl_completion_matches(text, match_generator);
  return result;
}

static void setup_readline(lua_State *L) {
  const char *env = getenv("ATTNLAB_HISTORY"), *home = getenv("HOME");
  g_repl_L = L;
  rl_readline_name = "attnlab"; /* for $if attnlab in ~/.inputrc */
  rl_instream = stdin;          /* set before rl_reset_screen_size() looks at them */
  rl_outstream = stdout;
  rl_attempted_completion_function = complete;
  /* '.' and ':' are not word breaks: "al.nn.Li" is one word to complete */
  rl_basic_word_break_characters = " \t\n\"\\'`@$><=;|&{(,+-*/%^~#[]}";
  rl_completer_word_break_characters = rl_basic_word_break_characters;
  rl_catch_signals = 0; /* SIGINT/SIGWINCH are ours, see read_line_readline */
  rl_catch_sigwinch = 0;
  stifle_history(HISTORY_CAP);
  g_history_path[0] = '\0';
  if (env != NULL)
    snprintf(g_history_path, sizeof g_history_path, "%s", env);
  else if (home != NULL && home[0] != '\0')
    snprintf(g_history_path, sizeof g_history_path, "%s/.attnlab_history", home);
  if (g_history_path[0]) {
    int fd = open(g_history_path, O_WRONLY | O_CREAT | O_APPEND, 0600); /* append_history needs it */
    if (fd < 0) {
      g_history_path[0] = '\0';
    } else {
      close(fd);
      history_truncate_file(g_history_path, HISTORY_CAP);
      read_history(g_history_path);
    }
  }
}

/* ------------------------------------------------------------------------------------------
 * The REPL */

/* The line on top of the stack, as an expression: "return <line>;". On success the chunk
 * replaces the line. */
static int try_expression(lua_State *L) {
  const char *line = lua_tostring(L, -1);
  const char *ret = lua_pushfstring(L, "return %s;", line);
  int st = luaL_loadbuffer(L, ret, strlen(ret), "=stdin");
  if (st == LUA_OK) {
    lua_remove(L, -2); /* "return ...;" */
    save_history_line(line);
    lua_remove(L, -2); /* the line */
  } else {
    lua_pop(L, 2); /* error message and "return ...;" */
  }
  return st;
}

static int is_incomplete(lua_State *L, int st) {
  size_t len, mlen = sizeof EOF_MARK - 1;
  const char *msg;
  if (st != LUA_ERRSYNTAX) return 0;
  msg = lua_tolstring(L, -1, &len);
  return msg && len >= mlen && strcmp(msg + len - mlen, EOF_MARK) == 0;
}

/* The line on top of the stack as a statement, reading continuation lines while it is
 * incomplete. Leaves the chunk or an error message in place of the line, or nothing when
 * the user pressed Ctrl-C. */
static int read_statement(lua_State *L) {
  int base = lua_gettop(L); /* the text so far */
  for (;;) {
    size_t len;
    const char *text = lua_tolstring(L, base, &len);
    int st = luaL_loadbuffer(L, text, len, "=stdin"), rc;
    if (!is_incomplete(L, st)) {
      save_history_line(text);
      lua_remove(L, base);
      return st;
    }
    rc = push_line(L, 0);
    if (rc == LINE_EOF) { /* input ended inside the statement: report why it is incomplete */
      save_history_line(text);
      lua_remove(L, base);
      return st;
    }
    if (rc == LINE_CANCELLED) {
      lua_settop(L, base - 1);
      return LINE_CANCELLED;
    }
    lua_remove(L, -2); /* the "<eof>" message */
    lua_pushliteral(L, "\n");
    lua_insert(L, -2);
    lua_concat(L, 3);
  }
}

enum { STMT_EOF = -100, STMT_CANCELLED = -101 };

/* Reads a statement; pushes a chunk (LUA_OK) or an error message, or returns STMT_EOF /
 * STMT_CANCELLED with nothing pushed. */
static int read_chunk(lua_State *L) {
  int rc, st;
  lua_settop(L, 0);
  rc = push_line(L, 1);
  if (rc == LINE_EOF) return STMT_EOF;
  if (rc == LINE_CANCELLED) return STMT_CANCELLED;
  st = try_expression(L);
  if (st != LUA_OK) {
    st = read_statement(L);
    if (st == LINE_CANCELLED) return STMT_CANCELLED;
  }
  return st;
}

/* Prints the values on the stack with the helper printer (tensors formatted) or print. */
static void print_results(lua_State *L) {
  int n = lua_gettop(L), st;
  if (n == 0) return;
  luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
  if (!push_helper(L, "print")) lua_getglobal(L, "print");
  lua_insert(L, 1);
  st = call_armed(L, n, 0, 0); /* no traceback in this message, as lua.c */
  if (st != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    print_message(g_progname, lua_pushfstring(L, "error calling 'print' (%s)",
                                              msg ? msg : "(error object is not a string)"));
    lua_settop(L, 0);
  }
}

static void run_repl(lua_State *L) {
  const char *saved = g_progname;
  int st;
  g_progname = NULL;
  g_use_readline = isatty(STDIN_FILENO);
  if (g_use_readline) setup_readline(L);
  while ((st = read_chunk(L)) != STMT_EOF) {
    if (st == STMT_CANCELLED) continue;
    if (st == LUA_OK) st = docall(L, 0, LUA_MULTRET);
    if (st == LUA_OK)
      print_results(L);
    else
      report(L, st);
  }
  lua_settop(L, 0);
  fputs("\n", stdout);
  fflush(stdout);
  if (g_use_readline) free_matches();
  g_progname = saved;
}

/* ------------------------------------------------------------------------------------------
 * main */

static int host_main(lua_State *L) {
  int argc = (int)lua_tointeger(L, 1);
  char **argv = (char **)lua_touserdata(L, 2);
  int stdin_tty = isatty(STDIN_FILENO), repl, banner;
  cmdline cl;

  luaL_checkversion(L);
  if (parse_cmdline(argc, argv, &cl) != 0) {
    usage_error(argv, cl.bad);
    return 0;
  }
  if (cl.help) {
    print_usage(stdout);
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
  setup_package(L);
  load_host_helpers(L);
  create_arg_table(L, argc, argv, cl.script);
  lua_gc(L, LUA_GCRESTART);
  lua_gc(L, LUA_GCGEN, 0, 0);
  load_attnlab(L);
  if (banner)
    print_banner(L);
  else if (cl.flags & OPT_VERSION)
    print_version(L);
  if (!(cl.flags & OPT_E_IGNORE_ENV) && run_lua_init(L) != LUA_OK) return 0;
  if (!run_options(L, argv, cl.script)) return 0;
  if (cl.script < argc && run_script(L, argv, cl.script) != LUA_OK) return 0;
  if (repl)
    run_repl(L);
  else if (cl.script == argc && !(cl.flags & (OPT_EXEC | OPT_VERSION)))
    dofile(L, NULL); /* stdin is not a terminal: run it as a script */
  lua_pushboolean(L, 1);
  return 1;
}

int main(int argc, char **argv) {
  int st, ok;
  /* No OpenMP wait policy is forced: libgomp's default (spin ~300k pauses, then sleep)
   * keeps the second thread hot across the hundreds of short parallel regions of a
   * training step. Forcing OMP_WAIT_POLICY=passive (as an earlier version did, when
   * OpenBLAS ran its own threads that fought ours) made every region pay a futex wake-up:
   * 2-thread training at N = 17 tokens ran at 5,500 img/s instead of 7,800
   * (experiments/classifier/THROUGHPUT.md). OpenBLAS now runs one thread per call and
   * al_sgemm splits panels over the OpenMP team, so there is nothing to fight. */
  lua_State *L = luaL_newstate();
  if (L == NULL) {
    print_message(HOST_NAME, "cannot create state: not enough memory");
    return EXIT_FAILURE;
  }
  lua_gc(L, LUA_GCSTOP); /* no collection while the state is being built */
  lua_pushcfunction(L, host_main);
  lua_pushinteger(L, argc);
  lua_pushlightuserdata(L, argv);
  st = lua_pcall(L, 2, 1, 0);
  ok = lua_toboolean(L, -1);
  report(L, st);
  lua_close(L);
  return (ok && st == LUA_OK) ? EXIT_SUCCESS : EXIT_FAILURE;
}
