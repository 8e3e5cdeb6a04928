/* lua/bind/module.c -- luaopen_attnlab_core: the C half of `require "attnlab"`.
 * Also: configuration report, threads, grad mode, clock, memory counters. */
#include <malloc.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attnlab/blas.h"
#include "attnlab/cpu.h"
#include "attnlab/threads.h"
#include "attnlab/version.h"
#include "bind.h"

#define ATTNLAB_VERSION ATTNLAB_VERSION_STRING

/* More threads than cores only slows the row kernels and OpenBLAS down (and a typo such as
 * 1000 would start 1000 threads): the count is clamped to the core count, with a warning. */
static int cores(void) {
  long c = sysconf(_SC_NPROCESSORS_ONLN);
  return c > 0 ? (int)c : 1;
}

/* A number with an integer value, as everywhere else in the API (al.zeros{2.0}, n / 2): 2.0
 * is 2 threads. A string is refused, and said to be one ("got 2" for "2" contradicted itself). */
static int l_set_num_threads(lua_State *L) {
  int isint = 0;
  lua_Integer n = lua_type(L, 1) == LUA_TNUMBER ? lua_tointegerx(L, 1, &isint) : 0;
  if (!isint)
    return luaL_argerror(L, 1, lua_pushfstring(L, "need a positive integer number of threads, got %s%s",
                                               lua_type(L, 1) == LUA_TNUMBER || lua_type(L, 1) == LUA_TSTRING
                                                   ? luaL_tolstring(L, 1, NULL) : luaL_typename(L, 1),
                                               lua_type(L, 1) == LUA_TSTRING ? " (a string)" : ""));
  if (n < 1) return luaL_argerror(L, 1, lua_pushfstring(L, "need at least 1 thread, got %I", (LUAI_UACINT)n));
  if (n > cores()) {
    fprintf(stderr, "attnlab: set_num_threads(%lld): this machine has %d core%s; using %d\n", (long long)n, cores(),
            cores() == 1 ? "" : "s", cores());
    n = cores();
  }
  al_set_num_threads((int)n);
  return 0;
}

static int l_get_num_threads(lua_State *L) { lua_pushinteger(L, al_get_num_threads()); return 1; }

static int l_set_grad_enabled(lua_State *L) {
  int prev = al_grad_enabled();
  /* set_grad_enabled() turned recording off and ("no") on: only true or false */
  if (!lua_isboolean(L, 1)) return luaL_error(L, "attnlab.set_grad_enabled: expects true or false, got %s", luaL_typename(L, 1));
  al_set_grad_enabled(lua_toboolean(L, 1));
  lua_pushboolean(L, prev);
  return 1;
}

static int l_is_grad_enabled(lua_State *L) { lua_pushboolean(L, al_grad_enabled()); return 1; }

static int l_clock(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  lua_pushnumber(L, (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec);
  return 1;
}

/* al.mem() -> {live, peak, cached, cache_limit, young_collections, full_collections}: tensor
 * bytes in use, their high-water mark, the freed large blocks kept for reuse (base.h says
 * why) with their limit, and the collections the binding has run to pace Lua's collector by
 * the tensor bytes (on this OS thread; collectgarbage() calls are not counted). */
static int l_mem(lua_State *L) {
  long young, full;
  l_gc_runs(&young, &full);
  lua_createtable(L, 0, 6);
  lua_pushinteger(L, young);
  lua_setfield(L, -2, "young_collections");
  lua_pushinteger(L, full);
  lua_setfield(L, -2, "full_collections");
  lua_pushinteger(L, (lua_Integer)al_mem_live());
  lua_setfield(L, -2, "live");
  lua_pushinteger(L, (lua_Integer)al_mem_peak());
  lua_setfield(L, -2, "peak");
  lua_pushinteger(L, (lua_Integer)al_mem_cached());
  lua_setfield(L, -2, "cached");
  lua_pushinteger(L, (lua_Integer)al_mem_cache_limit());
  lua_setfield(L, -2, "cache_limit");
  return 1;
}

/* al.empty_cache(): the kept large blocks go back to the system (torch.cuda.empty_cache). */
static int l_empty_cache(lua_State *L) {
  if (lua_gettop(L) > 0) return luaL_error(L, "attnlab.empty_cache takes no argument");
  al_mem_empty_cache();
  return 0;
}

/* al.set_cache_limit(bytes) -> the old limit; 0 keeps no freed block. */
static int l_set_cache_limit(lua_State *L) {
  int isint = 0;
  lua_Integer n = lua_tointegerx(L, 1, &isint);
  if (!isint || n < 0 || lua_gettop(L) != 1)
    return luaL_error(L, "attnlab.set_cache_limit: expects one whole number of bytes >= 0, got %s",
                      lua_gettop(L) == 1 ? luaL_tolstring(L, 1, NULL) : "other arguments");
  lua_pushinteger(L, (lua_Integer)al_mem_set_cache_limit((size_t)n));
  return 1;
}

/* bench_sgemm(M, N, K, transA, transB, reps [, path]) -> seconds per call of raw al_sgemm
 * on fresh buffers (the baseline the benchmark scripts compare ops against), and the kernel
 * that ran ("attnlab" or "openblas"). path: "auto" (default, the crossover), "attnlab" (its
 * own kernel) or "openblas" (the library, or the builtin loop without it); "auto" follows
 * ATTNLAB_SGEMM when the environment sets it. */
static int l_bench_sgemm(lua_State *L) {
  lua_Integer M = luaL_checkinteger(L, 1), N = luaL_checkinteger(L, 2), K = luaL_checkinteger(L, 3);
  int ta = lua_toboolean(L, 4), tb = lua_toboolean(L, 5);
  lua_Integer reps = luaL_optinteger(L, 6, 10);
  static const char *const paths[] = {"auto", "attnlab", "openblas", NULL};
  int path = luaL_checkoption(L, 7, "auto", paths);   /* AL_SGEMM_AUTO, _OWN, _BLAS in that order */
  if (M < 1 || N < 1 || K < 1 || reps < 1) return luaL_error(L, "attnlab.bench_sgemm: sizes and reps must be >= 1");
  float *A = al_calloc(sizeof(float) * (size_t)(M * K)), *B = al_calloc(sizeof(float) * (size_t)(K * N)), *C = al_calloc(sizeof(float) * (size_t)(M * N));
  if (!A || !B || !C) { al_free(A, sizeof(float) * (size_t)(M * K)); al_free(B, sizeof(float) * (size_t)(K * N)); al_free(C, sizeof(float) * (size_t)(M * N)); return luaL_error(L, "attnlab.bench_sgemm: out of memory"); }
  for (lua_Integer i = 0; i < M * K; i++) A[i] = (float)((i % 7) - 3) * 0.1f;
  for (lua_Integer i = 0; i < K * N; i++) B[i] = (float)((i % 5) - 2) * 0.1f;
  int was = al_sgemm_force_path(path);
  al_sgemm(ta, tb, M, N, K, 1.0f, A, ta ? M : K, B, tb ? K : N, 0.0f, C, N);   /* warm-up */
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (lua_Integer r = 0; r < reps; r++) al_sgemm(ta, tb, M, N, K, 1.0f, A, ta ? M : K, B, tb ? K : N, 0.0f, C, N);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  al_sgemm_force_path(was);
  al_free(A, sizeof(float) * (size_t)(M * K)); al_free(B, sizeof(float) * (size_t)(K * N)); al_free(C, sizeof(float) * (size_t)(M * N));
  lua_pushnumber(L, ((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec)) / (double)reps);
  lua_pushstring(L, path == AL_SGEMM_AUTO ? (al_sgemm_path(M, N, K) == AL_SGEMM_OWN ? "attnlab" : "openblas") : paths[path]);
  return 2;
}

/* t[key] = value, for the table on top of the stack. */
static void set_string(lua_State *L, const char *key, const char *value) {
  lua_pushstring(L, value);
  lua_setfield(L, -2, key);
}
static void set_integer(lua_State *L, const char *key, lua_Integer value) {
  lua_pushinteger(L, value);
  lua_setfield(L, -2, key);
}

static int l_config(lua_State *L) {
  const al_blas_info_t *b = al_blas_info();
  lua_createtable(L, 0, 10);
  set_string(L, "version", ATTNLAB_VERSION);
  set_string(L, "blas_backend", b->backend);
  set_string(L, "blas", b->core);
  set_string(L, "blas_config", b->config);
  set_string(L, "blas_coretype_source", b->coretype_source);
  set_string(L, "blas_note", b->note);
  set_string(L, "gemm", b->gemm);
  set_string(L, "gemm_rule", b->gemm_rule);
  set_integer(L, "threads", al_get_num_threads());
  set_integer(L, "cores", sysconf(_SC_NPROCESSORS_ONLN));
  set_string(L, "cpu_level", al_cpu_level_name(al_cpu_active()));
  set_string(L, "cpu_best", al_cpu_level_name(al_cpu_detect()));
  set_string(L, "cpu_levels_built", al_cpu_levels_built());
  set_string(L, "cpu_note", al_cpu_note());
  set_string(L, "huge_pages", al_huge_pages());
  luaL_setmetatable(L, "attnlab.Config");
  return 1;
}

/* print(al.config()) and the REPL show the fields, sorted, one per line. */
static int cmp_cstr(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static int l_config_tostring(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  const char *keys[64];   /* the strings stay alive: they are keys of table 1 */
  int n = 0;
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING && n < 64) keys[n++] = lua_tostring(L, -1);
  }
  qsort(keys, (size_t)n, sizeof keys[0], cmp_cstr);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "attnlab config:");
  for (int i = 0; i < n; i++) {
    lua_getfield(L, 1, keys[i]);
    luaL_tolstring(L, -1, NULL);
    lua_remove(L, -2);   /* the value; its string is on top */
    char head[64];
    snprintf(head, sizeof head, "\n  %-22s ", keys[i]);
    luaL_addstring(&b, head);   /* balanced: the string below stays put */
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  return 1;
}

/* Process-wide setup, once even when several threads open attnlab in their own states at
 * the same time: al_blas_init() probes and loads OpenBLAS (and sets environment
 * variables), which must not run twice concurrently. */
static void process_init(void) {
  /* Tensor buffers of a training step are freed and re-allocated every step. glibc
   * serves large blocks with fresh mmaps, so every step would page-fault its whole
   * working set again; keeping them in the heap makes the reuse free. The PyTorch side of
   * the benchmarks runs with the same two settings (lua/attnlab/torch/torch_ref_bench.py). */
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  /* The heap grows by at least 64 MB at a time, so that the transparent huge pages
   * attnlab asks for over it (core/tensor/huge_pages.c) cover a new block before glibc
   * writes its headers there. Address space, not memory: untouched pages cost nothing. */
  mallopt(M_TOP_PAD, 64 << 20);
  al_blas_init();
}

int luaopen_attnlab_core(lua_State *L) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, process_init);
  /* threads (for the calling OS thread): ATTNLAB_NUM_THREADS, else OpenMP's default (the
   * core count) */
  const char *nt = getenv("ATTNLAB_NUM_THREADS");
  int n = 0;
  if (nt && *nt) {   /* a positive integer; anything else is said, not silently replaced */
    char *end;
    long v = strtol(nt, &end, 10);
    while (*end == ' ' || *end == '\t' || *end == '\n') end++;
    if (end == nt || *end || v < 1) {
      fprintf(stderr, "attnlab: ATTNLAB_NUM_THREADS='%s' is not a positive integer; ignored (using %d thread%s)\n", nt,
              omp_get_max_threads(), omp_get_max_threads() == 1 ? "" : "s");
    } else if (v > cores()) {
      /* (the variable as given: strtol saturates a value beyond a long) */
      fprintf(stderr, "attnlab: ATTNLAB_NUM_THREADS=%s but this machine has %d core%s; using %d\n", nt, cores(),
              cores() == 1 ? "" : "s", cores());
      n = cores();
    } else {
      n = (int)v;
    }
  }
  al_set_num_threads(n > 0 ? n : al_get_num_threads());
  if (luaL_newmetatable(L, "attnlab.Config")) {
    lua_pushcfunction(L, l_config_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
  lua_newtable(L);
  l_open_tensor(L);
  l_open_ops(L);
  l_open_rng(L);
  l_open_io(L);
  l_open_json(L);
  l_open_mixers(L);
  l_open_optim(L);
  l_open_augment(L);
  static const luaL_Reg fns[] = {{"set_num_threads", l_set_num_threads}, {"get_num_threads", l_get_num_threads},
                                 {"set_grad_enabled", l_set_grad_enabled}, {"is_grad_enabled", l_is_grad_enabled},
                                 {"clock", l_clock}, {"mem", l_mem}, {"empty_cache", l_empty_cache},
                                 {"set_cache_limit", l_set_cache_limit}, {"config", l_config}, {"bench_sgemm", l_bench_sgemm}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
  lua_pushliteral(L, ATTNLAB_VERSION);
  lua_setfield(L, -2, "version");
  l_open_normalizers(L);   /* last: it refuses a normalizer named like anything above */
  return 1;
}
