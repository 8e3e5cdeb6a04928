/* lua/host/repl.c -- the read-eval-print loop, with lua.c's rules: try "return <line>;"
 * first, continue an incomplete statement with the `>>` prompt, print results
 * tab-separated (tensors formatted), and an error with a traceback keeps the loop alive. */
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "host.h"

#define EOF_MARK "<eof>" /* end of a syntax error message for an unfinished statement */

/* The line on top of the stack, as an expression: "return <line>;". On success the chunk
 * replaces the line. */
static int try_expression(lua_State *L) {
  const char *line = lua_tostring(L, -1);
  const char *ret = lua_pushfstring(L, "return %s;", line);
  int st = luaL_loadbuffer(L, ret, strlen(ret), "=stdin");
  if (st == LUA_OK) {
    lua_remove(L, -2); /* "return ...;" */
    host_save_history(line);
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
      host_save_history(text);
      lua_remove(L, base);
      return st;
    }
    rc = host_push_line(L, 0);
    if (rc == LINE_EOF) { /* input ended inside the statement: report why it is incomplete */
      host_save_history(text);
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
  rc = host_push_line(L, 1);
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
  /* lua.c raises here (luaL_checkstack), which ended the whole session:
   * table.unpack(t, 1, 999985) at the prompt quit the REPL. Said, and the loop goes on. */
  if (!lua_checkstack(L, LUA_MINSTACK)) {
    lua_settop(L, 0);
    host_message(host_progname, lua_pushfstring(L, "too many results to print (%d)", n));
    lua_settop(L, 0);
    return;
  }
  if (!host_push_helper(L, "print")) lua_getglobal(L, "print");
  lua_insert(L, 1);
  st = host_call(L, n, 0, 0); /* no traceback in this message, as lua.c */
  if (st != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    host_message(host_progname, lua_pushfstring(L, "error calling 'print' (%s)",
                                                 msg ? msg : "(error object is not a string)"));
    lua_settop(L, 0);
  }
}

void host_run_repl(lua_State *L) {
  const char *saved = host_progname;
  int st;
  host_progname = NULL;
  host_line_open(L);
  while ((st = read_chunk(L)) != STMT_EOF) {
    if (st == STMT_CANCELLED) continue;
    if (st == LUA_OK) st = host_docall(L, 0, LUA_MULTRET);
    if (st == LUA_OK)
      print_results(L);
    else
      host_report(L, st);
  }
  lua_settop(L, 0);
  fputs("\n", stdout);
  fflush(stdout);
  host_line_close();
  host_progname = saved;
}
