/* lua/host/lineedit.c -- reading the REPL's lines: readline on a terminal (Ctrl-C at the
 * prompt discards the line, history in ~/.attnlab_history, Tab completes through the Lua
 * helper), getline() otherwise, with the prompts on stdout as lua.c without readline. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "host.h"

#define PROMPT1 "> "
#define PROMPT2 ">> "

static int g_use_readline;
static lua_State *g_repl_L; /* for the completion callback */
static char g_history_path[PATH_MAX];

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
int host_push_line(lua_State *L, int first) {
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

void host_save_history(const char *line) {
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
  if (lua_checkstack(L, 8) && host_push_helper(L, "complete")) {
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

void host_line_open(lua_State *L) {
  g_use_readline = isatty(STDIN_FILENO);
  if (g_use_readline) setup_readline(L);
}

void host_line_close(void) {
  if (g_use_readline) free_matches();
}
