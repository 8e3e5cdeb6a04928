/* scripts/bench/bench_gemm.c -- attnlab's own sgemm against OpenBLAS, one thread, same run:
 * the crossover al_sgemm uses (experiments/core/RESULTS.md).
 *
 *   build/release/bench/bench_gemm [reps=9] [model | stream | attention | threads]
 *
 * Each figure is the best of `reps` samples (one call, or enough calls of a tiny product
 * for 2e7 multiply-adds) timed in thread CPU time
 * (CLOCK_THREAD_CPUTIME_ID): on a shared machine a call that loses the core for a while
 * does not count that time, so the figure is the kernel's speed, not the load's. The two
 * kernels alternate call by call. "model" times the compact classifier's shapes instead of
 * the larger ones; "stream" times them at N = 65 (8,320 rows) with every cache flushed before
 * each call (64 MB written, not timed), so operands and output come from memory as in a
 * training step, where a product's inputs and output are 2-9 MB each; "attention" times the six products al_attention makes per (example, head)
 * (core/ops/attention.c), with its operands' real strides, at N = 17 and 65 tokens: each
 * sample is one sweep over a batch of 128 examples x 4 heads, the figure ns per call;
 * "threads" times al_sgemm itself (the own kernel, cut into panels over the OpenMP team) on the
 * N = 65 shapes at 1 and at 2 threads, alternating, in wall time (a 2-thread call's CPU time
 * counts both threads), operands in cache: the figure is what the second thread adds. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnlab/base.h"
#include "attnlab/blas.h"
#include "attnlab/threads.h"

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The compact classifier's attention core, D = 64, H = 4 (head width 16), batch 128: qkv rows
 * of 3D floats, scores (H, N, N) per example, output and its gradient rows of D floats. */
#define ATT_B 128
#define ATT_D 64
#define ATT_H 4
static void bench_attention(int reps) {
  static const char *const names[6] = {"S = Q K^T", "O = P V", "dP = dO V^T", "dV = P^T dO", "dQ = dS K", "dK = dS^T Q"};
  static const char *const ops[6] = {"NT", "NN", "NT", "TN", "NN", "TN"};
  const int dh = ATT_D / ATT_H, L3 = 3 * ATT_D;
  printf("| N | product | op | attnlab ns/call | GFLOP/s | OpenBLAS ns/call | attnlab/OpenBLAS |\n|---|---|---|---|---|---|---|\n");
  static const int tokens[2] = {17, 65};   /* patch 8 and patch 4 on a 32 x 32 image, + the class token */
  for (int ti = 0; ti < 2; ti++) {
    const int N = tokens[ti];
    size_t nx = (size_t)ATT_B * N * L3, ns = (size_t)ATT_B * ATT_H * N * N, ny = (size_t)ATT_B * N * ATT_D;
    float *X = malloc(sizeof(float) * nx), *S = malloc(sizeof(float) * ns), *Y = malloc(sizeof(float) * ny),
          *G = malloc(sizeof(float) * ny), *GX = malloc(sizeof(float) * nx);
    if (!X || !S || !Y || !G || !GX) exit(1);
    for (size_t i = 0; i < nx; i++) X[i] = (float)((int)(i % 7) - 3) * 0.1f;
    for (size_t i = 0; i < ns; i++) S[i] = (float)((int)(i % 5) - 2) * 0.1f;
    for (size_t i = 0; i < ny; i++) G[i] = (float)((int)(i % 3) - 1) * 0.1f;
    for (int w = 0; w < 6; w++) {
      double best[2] = {1e30, 1e30};
      for (int r = 0; r < reps + 1; r++)
        for (int p = 0; p < 2; p++) {
          al_sgemm_force_path(p ? AL_SGEMM_BLAS : AL_SGEMM_OWN);
          double t0 = cpu_s();
          for (int b = 0; b < ATT_B; b++)
            for (int h = 0; h < ATT_H; h++) {
              const float *Xb = X + (size_t)b * N * L3, *Gb = G + (size_t)b * N * ATT_D;
              float *Sh = S + ((size_t)b * ATT_H + h) * N * N, *GXb = GX + (size_t)b * N * L3;
              const float *Q = Xb + h * dh, *K = Xb + ATT_D + h * dh, *V = Xb + 2 * ATT_D + h * dh;
              switch (w) {   /* the calls of al_attention and attention_bwd, operand for operand */
                case 0: al_sgemm(0, 1, N, N, dh, 0.25f, Q, L3, K, L3, 0.0f, Sh, N); break;
                case 1: al_sgemm(0, 0, N, dh, N, 1.0f, Sh, N, V, L3, 0.0f, Y + (size_t)b * N * ATT_D + h * dh, ATT_D); break;
                case 2: al_sgemm(0, 1, N, N, dh, 1.0f, Gb + h * dh, ATT_D, V, L3, 0.0f, Sh, N); break;
                case 3: al_sgemm(1, 0, N, dh, N, 1.0f, Sh, N, Gb + h * dh, ATT_D, 0.0f, GXb + 2 * ATT_D + h * dh, L3); break;
                case 4: al_sgemm(0, 0, N, dh, N, 0.25f, Sh, N, K, L3, 0.0f, GXb + h * dh, L3); break;
                default: al_sgemm(1, 0, N, dh, N, 0.25f, Sh, N, Q, L3, 0.0f, GXb + ATT_D + h * dh, L3); break;
              }
            }
          double t = (cpu_s() - t0) / (ATT_B * ATT_H);
          if (r > 0 && t < best[p]) best[p] = t;   /* r = 0: warm-up */
        }
      al_sgemm_force_path(AL_SGEMM_AUTO);
      printf("| %d | %s | %s | %.0f | %.0f | %.0f | %.2f |\n", N, names[w], ops[w], best[0] * 1e9,
             2.0 * N * N * dh / best[0] / 1e9, best[1] * 1e9, best[1] / best[0]);
      fflush(stdout);
    }
    free(X); free(S); free(Y); free(G); free(GX);
  }
}

static double wall_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* al_sgemm at 1 and 2 threads on the shapes sh[0..ns) (M, N, K, transposes as in main) */
static void bench_threads(int reps, const int (*sh)[4], int ns) {
  printf("| M x N x K | op | 1 thread GFLOP/s | 2 threads GFLOP/s | 2 threads / 1 |\n|---|---|---|---|---|\n");
  for (int s = 0; s < ns; s++) {
    int M = sh[s][0], N = sh[s][1], K = sh[s][2], ta = sh[s][3] & 1, tb = sh[s][3] >> 1;
    size_t na = sizeof(float) * (size_t)M * K, nb = sizeof(float) * (size_t)K * N, nc = sizeof(float) * (size_t)M * N;
    float *A = al_malloc(na), *B = al_malloc(nb), *C = al_malloc(nc);
    if (!A || !B || !C) exit(1);
    for (size_t i = 0; i < (size_t)M * K; i++) A[i] = (float)((int)(i % 7) - 3) * 0.1f;
    for (size_t i = 0; i < (size_t)K * N; i++) B[i] = (float)((int)(i % 5) - 2) * 0.1f;
    double best[2] = {1e30, 1e30};
    long inner = 1 + 500000000L / ((long)M * N * K);   /* several calls a sample: the first wakes the team */
    for (int r = 0; r < reps + 1; r++)
      for (int t = 0; t < 2; t++) {
        al_set_num_threads(t + 1);
        double t0 = wall_s();
        for (long q = 0; q < inner; q++) al_sgemm(ta, tb, M, N, K, 1.0f, A, ta ? M : K, B, tb ? K : N, 0.0f, C, N);
        double dt = (wall_s() - t0) / (double)inner;
        if (r > 0 && dt < best[t]) best[t] = dt;   /* r = 0: warm-up */
      }
    al_set_num_threads(1);
    double f = 2.0 * M * N * K / 1e9;
    printf("| %d x %d x %d | %c%c | %.0f | %.0f | %.2f |\n", M, N, K, ta ? 'T' : 'N', tb ? 'T' : 'N', f / best[0],
           f / best[1], best[0] / best[1]);
    fflush(stdout);
    al_free(A, na); al_free(B, nb); al_free(C, nc);
  }
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 9;
  int model = argc > 2 && strcmp(argv[2], "model") == 0, stream = argc > 2 && strcmp(argv[2], "stream") == 0;
  if (argc > 2 && strcmp(argv[2], "attention") == 0) {
    al_set_num_threads(1);
    const al_blas_info_t *bi = al_blas_info();
    printf("OpenBLAS core %s (%s), attnlab kernel %s; one thread\n", bi->core, bi->coretype_source, bi->gemm);
    bench_attention(reps);
    return 0;
  }
  int threads = argc > 2 && strcmp(argv[2], "threads") == 0;
  if (argc > 2 && !model && !stream && !threads) {
    fprintf(stderr, "bench_gemm: unknown mode '%s' (model, stream, attention or threads)\n", argv[2]);
    return 2;
  }
  static const int big[][4] = {   /* M, N, K, transposes (bit 0: A, bit 1: B) */
    {512, 512, 512, 0}, {1024, 1024, 1024, 0}, {1024, 1024, 1024, 2}, {1024, 1024, 1024, 1},
    {4096, 512, 512, 0}, {4096, 512, 512, 2}, {4096, 768, 768, 0}, {4096, 768, 768, 2},
    {4096, 1024, 256, 0}, {4096, 1024, 256, 2}, {4096, 2048, 256, 0}, {4096, 256, 2048, 0},
    {4096, 256, 2048, 2}, {4096, 1024, 1024, 0}, {4096, 1024, 1024, 2}, {768, 768, 4096, 1},
    {256, 1024, 4096, 1}, {2048, 2048, 2048, 0}};
  static const int small[][4] = {
    {2176, 192, 64, 2}, {2176, 64, 64, 2}, {2176, 256, 64, 2}, {2176, 64, 256, 2}, {2176, 64, 192, 0},
    {2176, 64, 256, 0}, {2176, 256, 64, 0}, {192, 64, 2176, 1}, {64, 192, 2176, 1}, {256, 64, 2176, 1},
    {64, 256, 2176, 1}, {17, 17, 16, 2}, {17, 16, 17, 0}};
  static const int streamed[][4] = {   /* N = 65: 128 x 65 = 8320 rows */
    {8320, 192, 64, 2}, {8320, 64, 64, 2}, {8320, 256, 64, 2}, {8320, 64, 256, 2}, {8320, 64, 192, 0},
    {8320, 64, 64, 0}, {8320, 64, 256, 0}, {8320, 256, 64, 0}, {192, 64, 8320, 1}, {64, 64, 8320, 1},
    {256, 64, 8320, 1}, {64, 256, 8320, 1}};
  if (threads) {
    al_set_num_threads(1);
    const al_blas_info_t *bi = al_blas_info();
    printf("attnlab kernel %s; al_sgemm at 1 and 2 threads, the N = 65 shapes, operands in cache\n", bi->gemm);
    bench_threads(reps, streamed, (int)(sizeof streamed / sizeof streamed[0]));
    return 0;
  }
  if (stream) {   /* the Lua binding's heap (lua/bind/module.c), so the operands get its huge pages */
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    mallopt(M_TOP_PAD, 64 << 20);
  }
  size_t nflush = stream ? (size_t)16 << 20 : 0;   /* floats: 64 MB */
  float *flush = nflush ? malloc(sizeof(float) * nflush) : NULL;
  if (nflush && !flush) return 1;
  if (flush) memset(flush, 0, sizeof(float) * nflush);
  const int (*sh)[4] = stream ? streamed : model ? small : big;
  int ns = stream ? (int)(sizeof streamed / sizeof streamed[0])
           : model ? (int)(sizeof small / sizeof small[0]) : (int)(sizeof big / sizeof big[0]);
  al_set_num_threads(1);
  const al_blas_info_t *bi = al_blas_info();
  printf("OpenBLAS core %s (%s), attnlab kernel %s; al_sgemm: attnlab when %s\n", bi->core, bi->coretype_source, bi->gemm,
         bi->gemm_rule);
  if (stream) printf("caches flushed before every call; huge pages: %s\n", al_huge_pages());
  printf("| M x N x K | op | attnlab GFLOP/s | OpenBLAS GFLOP/s | attnlab/OpenBLAS | al_sgemm uses |\n|---|---|---|---|---|---|\n");
  for (int s = 0; s < ns; s++) {
    int M = sh[s][0], N = sh[s][1], K = sh[s][2], ta = sh[s][3] & 1, tb = sh[s][3] >> 1;
    size_t na = sizeof(float) * (size_t)M * K, nb = sizeof(float) * (size_t)K * N, nc = sizeof(float) * (size_t)M * N;
    float *A = al_malloc(na), *B = al_malloc(nb), *C = al_malloc(nc);
    if (!A || !B || !C) return 1;
    for (size_t i = 0; i < (size_t)M * K; i++) A[i] = (float)((int)(i % 7) - 3) * 0.1f;
    for (size_t i = 0; i < (size_t)K * N; i++) B[i] = (float)((int)(i % 5) - 2) * 0.1f;
    double best[2] = {1e30, 1e30};
    long inner = 1 + 20000000L / ((long)M * N * K);   /* tiny products: many calls per sample */
    for (int r = 0; r < reps + 1; r++)
      for (int p = 0; p < 2; p++) {
        al_sgemm_force_path(p ? AL_SGEMM_BLAS : AL_SGEMM_OWN);
        for (size_t f = 0; f < nflush; f += 16) flush[f] += 1.0f;   /* one write per line */
        double t0 = cpu_s();
        for (long q = 0; q < inner; q++) al_sgemm(ta, tb, M, N, K, 1.0f, A, ta ? M : K, B, tb ? K : N, 0.0f, C, N);
        double t = (cpu_s() - t0) / (double)inner;
        if (r > 0 && t < best[p]) best[p] = t;   /* r = 0: warm-up */
      }
    al_sgemm_force_path(AL_SGEMM_AUTO);
    double f = 2.0 * M * N * K / 1e9;
    printf("| %d x %d x %d | %c%c | %.0f | %.0f | %.2f | %s |\n", M, N, K, ta ? 'T' : 'N', tb ? 'T' : 'N', f / best[0],
           f / best[1], best[1] / best[0], al_sgemm_path(M, N, K) == AL_SGEMM_OWN ? "attnlab" : "OpenBLAS");
    fflush(stdout);
    al_free(A, na); al_free(B, nb); al_free(C, nc);
  }
  free(flush);
  return 0;
}
