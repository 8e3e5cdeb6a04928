/* lua/bind/module.c -- luaopen_attnlab_core: the C half of `require "attnlab"`.
 * Also: configuration report, threads, grad mode, clock, memory counters. */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attnlab/blas.h"
#include "attnlab/threads.h"
#include "bind.h"

#define ATTNLAB_VERSION "0.1.0"

static int l_set_num_threads(lua_State *L) {
  lua_Integer n = luaL_checkinteger(L, 1);
  if (n < 1) return luaL_argerror(L, 1, "need at least 1 thread");
  al_set_num_threads((int)n);
  return 0;
}

static int l_get_num_threads(lua_State *L) { lua_pushinteger(L, al_get_num_threads()); return 1; }

static int l_set_grad_enabled(lua_State *L) {
  int prev = al_grad_enabled();
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

static int l_mem(lua_State *L) {
  lua_createtable(L, 0, 2);
  lua_pushinteger(L, (lua_Integer)al_mem_live());
  lua_setfield(L, -2, "live");
  lua_pushinteger(L, (lua_Integer)al_mem_peak());
  lua_setfield(L, -2, "peak");
  return 1;
}

/* bench_sgemm(M, N, K, transA, transB, reps [, path]) -> seconds per call of raw al_sgemm
 * on fresh buffers (the baseline the benchmark scripts compare ops against), and the kernel
 * that ran ("attnlab" or "openblas"). path: "auto" (default, the crossover), "attnlab" (its
 * own kernel) or "openblas" (the library, or the builtin loop without it). */
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
  al_sgemm_force_path(path);
  al_sgemm(ta, tb, M, N, K, 1.0f, A, ta ? M : K, B, tb ? K : N, 0.0f, C, N);   /* warm-up */
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (lua_Integer r = 0; r < reps; r++) al_sgemm(ta, tb, M, N, K, 1.0f, A, ta ? M : K, B, tb ? K : N, 0.0f, C, N);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  al_sgemm_force_path(AL_SGEMM_AUTO);
  al_free(A, sizeof(float) * (size_t)(M * K)); al_free(B, sizeof(float) * (size_t)(K * N)); al_free(C, sizeof(float) * (size_t)(M * N));
  lua_pushnumber(L, ((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec)) / (double)reps);
  lua_pushstring(L, path == AL_SGEMM_AUTO ? (al_sgemm_path(M, N, K) == AL_SGEMM_OWN ? "attnlab" : "openblas") : paths[path]);
  return 2;
}

static int l_config(lua_State *L) {
  const al_blas_info_t *b = al_blas_info();
  lua_createtable(L, 0, 10);
  lua_pushliteral(L, ATTNLAB_VERSION);
  lua_setfield(L, -2, "version");
  lua_pushstring(L, b->backend);
  lua_setfield(L, -2, "blas_backend");
  lua_pushstring(L, b->core);
  lua_setfield(L, -2, "blas");
  lua_pushstring(L, b->config);
  lua_setfield(L, -2, "blas_config");
  lua_pushstring(L, b->coretype_source);
  lua_setfield(L, -2, "blas_coretype_source");
  lua_pushstring(L, b->note);
  lua_setfield(L, -2, "blas_note");
  lua_pushstring(L, b->gemm);
  lua_setfield(L, -2, "gemm");
  lua_pushstring(L, b->gemm_rule);
  lua_setfield(L, -2, "gemm_rule");
  lua_pushinteger(L, al_get_num_threads());
  lua_setfield(L, -2, "threads");
  lua_pushinteger(L, sysconf(_SC_NPROCESSORS_ONLN));
  lua_setfield(L, -2, "cores");
  return 1;
}

int luaopen_attnlab_core(lua_State *L) {
  /* threads: ATTNLAB_NUM_THREADS, else OpenMP's default (the core count) */
  const char *nt = getenv("ATTNLAB_NUM_THREADS");
  int n = nt ? atoi(nt) : 0;
  /* Tensor buffers of a training step are freed and re-allocated every step. glibc
   * serves large blocks with fresh mmaps, so every step would page-fault its whole
   * working set again; keeping them in the heap makes the reuse free. */
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  al_blas_init();
  al_set_num_threads(n > 0 ? n : al_get_num_threads());
  lua_newtable(L);
  l_open_tensor(L);
  l_open_ops(L);
  l_open_rng(L);
  l_open_io(L);
  l_open_json(L);
  l_open_mixers(L);
  l_open_optim(L);
  static const luaL_Reg fns[] = {{"set_num_threads", l_set_num_threads}, {"get_num_threads", l_get_num_threads},
                                 {"set_grad_enabled", l_set_grad_enabled}, {"is_grad_enabled", l_is_grad_enabled},
                                 {"clock", l_clock}, {"mem", l_mem}, {"config", l_config}, {"bench_sgemm", l_bench_sgemm}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
  lua_pushliteral(L, ATTNLAB_VERSION);
  lua_setfield(L, -2, "version");
  return 1;
}
