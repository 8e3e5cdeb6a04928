/* tests/embed/threads.c -- two lua_States on two POSIX threads, training at the same time.
 *
 * Builds against an installed attnlab (see README, "Embedding attnlab"):
 *   cc -std=c11 -O2 -pthread -o threads tests/embed/threads.c $(pkg-config --cflags --libs attnlab lua5.4)
 *
 * Each job makes its own state, requires "attnlab", sets its thread count, seeds the state's
 * default generator and trains a tiny attention + MLP classifier (dropout on: the default
 * generator is drawn from at every step) and returns the last loss and a checksum of the
 * parameters. The jobs run at the same time on two threads (round 1: both states open
 * attnlab for the first time in the process at the same moment), then one after the other,
 * then twice more at the same time; every concurrent result must equal its sequential one
 * bit for bit.
 *
 * What makes that hold (see README, "Embedding attnlab"): each lua_State has its own default
 * generator; the grad mode, the thread count and the error message are per OS thread; the
 * one-time OpenBLAS set-up runs once (pthread_once) even when two states open attnlab at
 * the same moment. A state must be used by one thread at a time, as Lua requires anyway. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

static const char TRAIN[] =
  "local al = require 'attnlab'\n"
  "local seed, threads = ...\n"
  "al.set_num_threads(threads)\n"
  "al.manual_seed(seed)\n"
  "local B, T, D, C = 16, 8, 16, 3\n"
  "local x, y = al.randn({B, T, D}), al.randint(1, C, {B})\n"
  "local attn = al.nn.MultiHeadAttention{dim = D, heads = 2, normalizer = 'entmax15'}\n"
  "local mlp = al.nn.MLP{in_features = D, hidden_features = 32, out_features = C, drop = 0.1}\n"
  "local params = attn:parameters()\n"
  "for _, p in ipairs(mlp:parameters()) do params[#params + 1] = p end\n"
  "local opt = al.optim.AdamW(params, {lr = 1e-2})\n"
  "local loss\n"
  "for step = 1, 30 do\n"
  "  opt:zero_grad()\n"
  "  loss = al.cross_entropy(mlp(attn(x):mean(2)), y)\n"
  "  loss:backward()\n"
  "  opt:step()\n"
  "end\n"
  "local sum = 0\n"
  "for _, p in ipairs(params) do sum = sum + al.sum(al.abs(p)):item() end\n"
  "assert(al.get_num_threads() == threads, 'the thread count leaked between states')\n"
  "return loss:item(), sum\n";

typedef struct {
  int seed, threads;  /* in */
  double loss, sum;   /* out */
  char err[512];      /* out: "" when the job succeeded */
} job;

static void *run_job(void *arg) {
  job *j = arg;
  lua_State *L = luaL_newstate();
  j->err[0] = '\0';
  if (L == NULL) {
    snprintf(j->err, sizeof j->err, "cannot create a lua_State");
    return NULL;
  }
  luaL_openlibs(L);
  if (luaL_loadbuffer(L, TRAIN, sizeof TRAIN - 1, "=train") != LUA_OK) goto error;
  lua_pushinteger(L, j->seed);
  lua_pushinteger(L, j->threads);
  if (lua_pcall(L, 2, 2, 0) != LUA_OK) goto error;
  j->loss = lua_tonumber(L, -2);
  j->sum = lua_tonumber(L, -1);
  lua_close(L);
  return NULL;
error:
  snprintf(j->err, sizeof j->err, "%s", lua_tostring(L, -1));
  lua_close(L);
  return NULL;
}

/* Both jobs at the same time, one thread each. Returns 0 if a thread could not start. */
static int run_concurrently(job par[2]) {
  pthread_t th[2];
  for (int i = 0; i < 2; i++)
    if (pthread_create(&th[i], NULL, run_job, &par[i]) != 0) return 0;
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  return 1;
}

int main(void) {
  job seq[2] = {{.seed = 1, .threads = 1}, {.seed = 2, .threads = 2}};
  job rounds[3][2];
  int failures = 0;

  for (int round = 0; round < 3; round++) {
    memcpy(rounds[round], seq, sizeof seq);
    if (round == 1) /* after the first concurrent round: the reference, one after the other */
      for (int i = 0; i < 2; i++) {
        run_job(&seq[i]);
        if (seq[i].err[0]) {
          fprintf(stderr, "threads: FAIL: sequential job %d: %s\n", i + 1, seq[i].err);
          return 1;
        }
        printf("sequential job %d (seed %d, %d threads): loss %.17g, sum|w| %.17g\n", i + 1,
               seq[i].seed, seq[i].threads, seq[i].loss, seq[i].sum);
      }
    if (!run_concurrently(rounds[round])) {
      fprintf(stderr, "threads: FAIL: pthread_create\n");
      return 1;
    }
  }
  for (int round = 1; round <= 3; round++) {
    job *par = rounds[round - 1];
    for (int i = 0; i < 2; i++) {
      int same = !par[i].err[0] && memcmp(&par[i].loss, &seq[i].loss, sizeof(double)) == 0 &&
                 memcmp(&par[i].sum, &seq[i].sum, sizeof(double)) == 0;
      printf("%s: round %d, concurrent job %d: loss %.17g, sum|w| %.17g%s%s\n", same ? "PASS" : "FAIL",
             round, i + 1, par[i].loss, par[i].sum, par[i].err[0] ? " error: " : "", par[i].err);
      failures += !same;
    }
  }
  printf("%s\n", failures ? "threads: FAILED (concurrent results differ from sequential ones)"
                          : "threads: ok (concurrent == sequential, bit for bit)");
  return failures ? 1 : 0;
}
