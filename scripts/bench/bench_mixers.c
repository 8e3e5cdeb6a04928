/* scripts/bench/bench_mixers.c -- ms per call of the token-mixer cores at DeiT-Tiny
 * width (dim 192, batch 8), next to the PyTorch anchors of
 * ../shared/anchors/RESULTS.md section (c) "AVX512-BLAS, 2 threads" (torch 1.13, same
 * machine type). Standalone main; link with libattnlab.a (-lcjson not needed).
 *
 *   bench_mixers [threads=2] [reps=5] [maxT=2304]
 *
 * Rows:
 *   bilstm H=3     al_bilstm core, C=192, 3 heads of 64 (2 x 3 LSTMs of hidden 64);
 *                  torch: nn.LSTM(192, 96, bidirectional) -- comparable recurrent work
 *                  (6 x 256x64 vs 2 x 384x96 weights per step)
 *   bilstm H=1     al_bilstm core, one LSTM of hidden 192 per direction (4x the
 *                  recurrent work of the torch row)
 *   bimamba core   al_bimamba core, E=384, H=1, N=16, R=12, K=4 (Vim v2 at dim 192)
 *   bimamba layer  core + in_proj 192->768 + out_proj 384->192 (al_sgemm, fwd and
 *                  their backward GEMMs): the same work as torch_ref.py's BiMamba
 * Each figure is the median of `reps` timed calls after one warm-up call; fwd+bwd
 * includes the forward with workspace, the backward and freeing the workspace. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnlab/blas.h"
#include "attnlab/mixers.h"
#include "attnlab/threads.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}
static double cpu_ms(void) {   /* CPU time of the whole process (all threads) */
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}
static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static uint64_t rs = 88172645463325252ull;
static float frand(float r) {
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return r * (float)((double)(rs >> 11) / 9007199254740992.0 * 2 - 1);
}
static float *buf(int64_t n, float r) {
  float *p = malloc(sizeof(float) * (size_t)n);
  if (!p) { fprintf(stderr, "out of memory\n"); exit(1); }
  for (int64_t i = 0; i < n; i++) p[i] = frand(r);
  return p;
}

/* torch anchors, ms: RESULTS.md (c) AVX512-BLAS, 2 threads */
static const int TS[5] = {64, 196, 576, 1024, 2304};
static const double T_LSTM_FB[5] = {50.8, 125.2, 305.7, 561.1, 995.4};
static const double T_LSTM_F[5] = {12.6, 33.0, 99.0, 117.0, 264.6};
static const double T_MAMBA_FB[5] = {117.3, 496.5, 1747.8, 2666.6, 8865.0};
static const double T_MAMBA_F[5] = {31.6, 112.0, 444.9, 996.2, 1960.7};

typedef struct {
  int kind;  /* 0 lstm, 1 mamba core, 2 mamba layer */
  al_bilstm_dims ld;
  al_bimamba_dims md;
  al_bilstm_params lp;
  al_bilstm_grads lg;
  al_bimamba_params mp;
  al_bimamba_grads mg;
  float *x, *y, *dy, *dx, *z, *dz;     /* core inputs / outputs */
  float *h, *xz, *dxz, *w_in, *w_out, *dw_in, *dw_out, *o, *dh;  /* layer extras */
} job;

static int run(job *j, int bwd) {
  al_status st = AL_OK;
  if (j->kind == 0) {
    al_bilstm_ws *ws = NULL;
    st = al_bilstm_fwd(j->y, bwd ? &ws : NULL, j->x, NULL, &j->lp, &j->ld);
    if (!st && bwd) st = al_bilstm_bwd(j->dx, &j->lg, j->dy, ws, j->x, &j->lp);
    al_bilstm_ws_free(ws);
  } else {
    const int64_t rows = j->md.B * j->md.T, E = j->md.E, dim = 192;
    al_bimamba_ws *ws = NULL;
    const float *xin = j->x, *z = j->z;
    if (j->kind == 2) {   /* xz = h W_in^T (rows, 2E); core reads its halves in place */
      al_sgemm(0, 1, rows, 2 * E, dim, 1.0f, j->h, dim, j->w_in, dim, 0.0f, j->xz, 2 * E);
      xin = j->xz;
      z = j->xz + E;
    }
    st = al_bimamba_fwd(j->y, bwd ? &ws : NULL, xin, z, NULL, &j->mp, &j->md);
    if (j->kind == 2)     /* o = y W_out^T (rows, dim) */
      al_sgemm(0, 1, rows, dim, E, 1.0f, j->y, E, j->w_out, E, 0.0f, j->o, dim);
    if (!st && bwd) {
      float *dy = j->dy;
      if (j->kind == 2) { /* dy = do W_out; dW_out += do^T y */
        al_sgemm(0, 0, rows, E, dim, 1.0f, j->dh, dim, j->w_out, E, 0.0f, j->dx, E);
        al_sgemm(1, 0, dim, E, rows, 1.0f, j->dh, dim, j->y, E, 1.0f, j->dw_out, E);
        dy = j->dx;
        memset(j->dxz, 0, sizeof(float) * rows * 2 * E);
      }
      st = al_bimamba_bwd(j->kind == 2 ? j->dxz : j->dx, j->kind == 2 ? j->dxz + E : j->dz,
                          &j->mg, dy, ws, xin, z, &j->mp);
      if (j->kind == 2) { /* dh = dxz W_in; dW_in += dxz^T h */
        al_sgemm(0, 0, rows, dim, 2 * E, 1.0f, j->dxz, 2 * E, j->w_in, dim, 0.0f, j->o, dim);
        al_sgemm(1, 0, 2 * E, dim, rows, 1.0f, j->dxz, 2 * E, j->h, dim, 1.0f, j->dw_in, dim);
      }
    }
    al_bimamba_ws_free(ws);
  }
  if (st) { fprintf(stderr, "error: %s\n", al_errmsg()); return 1; }
  return 0;
}

/* median wall ms per call; *cpu <- median process CPU ms per call */
static double time_ms(job *j, int bwd, int reps, double *cpu) {
  double t[64], c[64];
  if (reps > 64) reps = 64;
  if (run(j, bwd)) exit(1);
  for (int r = 0; r < reps; r++) {
    double c0 = cpu_ms(), t0 = now_ms();
    run(j, bwd);
    t[r] = now_ms() - t0;
    c[r] = cpu_ms() - c0;
  }
  qsort(t, reps, sizeof(double), cmp_d);
  qsort(c, reps, sizeof(double), cmp_d);
  *cpu = c[reps / 2];
  return t[reps / 2];
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2, reps = argc > 2 ? atoi(argv[2]) : 5;
  int maxT = argc > 3 ? atoi(argv[3]) : 2304;
  al_set_num_threads(threads);
  al_blas_init();
  const al_blas_info_t *bi = al_blas_info();
  printf("# bench_mixers: batch 8, dim 192, %d thread(s), median of %d; BLAS %s (%s)\n", threads,
         reps, bi ? bi->backend : "?", bi && bi->core ? bi->core : "?");
  printf("# torch = ../shared/anchors/RESULTS.md (c), AVX512-BLAS, 2 threads; x = torch/ours (wall)\n");
  printf("# cpu = process CPU ms per call (all threads): on a busy machine, a 1-thread run's cpu\n"
         "#       column is the better estimate of its quiet-machine wall time\n");
  printf("%-14s %5s | %9s %8s %9s %6s | %9s %8s %9s %6s\n", "mixer", "T", "fwd ms", "cpu",
         "torch", "x", "fwd+bwd", "cpu", "torch", "x");
  const int64_t B = 8, C = 192, E = 384, N = 16, R = 12, K = 4;
  for (int ti = 0; ti < 5; ti++) {
    const int64_t T = TS[ti];
    if (T > maxT) break;
    for (int kind = 0; kind < 4; kind++) {
      job j;
      memset(&j, 0, sizeof j);
      int64_t H = kind == 0 ? 3 : 1;
      j.kind = kind < 2 ? 0 : kind - 1;
      const char *label = kind == 0 ? "bilstm H=3" : kind == 1 ? "bilstm H=1"
                        : kind == 2 ? "bimamba core" : "bimamba layer";
      float *keep_free[64];
      int nf = 0;
#define KEEP(p) (keep_free[nf++] = (p))
      if (j.kind == 0) {
        int64_t hd = C / H;
        j.ld = (al_bilstm_dims){B, T, C, H};
        for (int d = 0; d < 2; d++) {
          j.lp.w_ih[d] = KEEP(buf(H * 4 * hd * hd, 0.1f));
          j.lp.w_hh[d] = KEEP(buf(H * 4 * hd * hd, 0.1f));
          j.lp.b_ih[d] = KEEP(buf(H * 4 * hd, 0.1f));
          j.lp.b_hh[d] = KEEP(buf(H * 4 * hd, 0.1f));
          j.lg.w_ih[d] = KEEP(buf(H * 4 * hd * hd, 0));
          j.lg.w_hh[d] = KEEP(buf(H * 4 * hd * hd, 0));
          j.lg.b_ih[d] = KEEP(buf(H * 4 * hd, 0));
          j.lg.b_hh[d] = KEEP(buf(H * 4 * hd, 0));
        }
        j.x = KEEP(buf(B * T * C, 1));
        j.dx = KEEP(buf(B * T * C, 0));
        j.y = KEEP(buf(B * T * 2 * C, 0));
        j.dy = KEEP(buf(B * T * 2 * C, 1));
      } else {
        j.md = (al_bimamba_dims){B, T, E, 1, N, R, K, j.kind == 2 ? 2 * E : 0};
        for (int d = 0; d < 2; d++) {
          j.mp.conv_w[d] = KEEP(buf(E * K, 0.5f));
          j.mp.conv_b[d] = KEEP(buf(E, 0.1f));
          j.mp.x_proj[d] = KEEP(buf((R + 2 * N) * E, 0.05f));
          j.mp.dt_w[d] = KEEP(buf(E * R, 0.29f));
          float *dtb = KEEP(buf(E, 1.0f)), *al = KEEP(buf(E * N, 0.0f)), *Dp = KEEP(buf(E, 0.0f));
          for (int64_t e = 0; e < E; e++) {
            dtb[e] = -4.0f + dtb[e];   /* softplus^-1 of dt in ~[1e-3, 1e-1] */
            Dp[e] = 1.0f;
            for (int64_t n = 0; n < N; n++) al[e * N + n] = logf((float)(n + 1));
          }
          j.mp.dt_b[d] = dtb;
          j.mp.A_log[d] = al;
          j.mp.D[d] = Dp;
          j.mg.conv_w[d] = KEEP(buf(E * K, 0));
          j.mg.conv_b[d] = KEEP(buf(E, 0));
          j.mg.x_proj[d] = KEEP(buf((R + 2 * N) * E, 0));
          j.mg.dt_w[d] = KEEP(buf(E * R, 0));
          j.mg.dt_b[d] = KEEP(buf(E, 0));
          j.mg.A_log[d] = KEEP(buf(E * N, 0));
          j.mg.D[d] = KEEP(buf(E, 0));
        }
        j.x = KEEP(buf(B * T * E, 1));
        j.z = KEEP(buf(B * T * E, 1));
        j.y = KEEP(buf(B * T * E, 0));
        j.dy = KEEP(buf(B * T * E, 1));
        j.dx = KEEP(buf(B * T * E, 0));
        j.dz = KEEP(buf(B * T * E, 0));
        if (j.kind == 2) {
          j.h = KEEP(buf(B * T * C, 1));
          j.dh = KEEP(buf(B * T * C, 1));
          j.o = KEEP(buf(B * T * C, 0));
          j.xz = KEEP(buf(B * T * 2 * E, 0));
          j.dxz = KEEP(buf(B * T * 2 * E, 0));
          j.w_in = KEEP(buf(2 * E * C, 0.07f));
          j.w_out = KEEP(buf(C * E, 0.05f));
          j.dw_in = KEEP(buf(2 * E * C, 0));
          j.dw_out = KEEP(buf(C * E, 0));
        }
      }
      double cf, cfb;
      double f = time_ms(&j, 0, reps, &cf), fb = time_ms(&j, 1, reps, &cfb);
      const double tf = j.kind == 0 ? T_LSTM_F[ti] : T_MAMBA_F[ti];
      const double tfb = j.kind == 0 ? T_LSTM_FB[ti] : T_MAMBA_FB[ti];
      printf("%-14s %5lld | %9.2f %8.2f %9.1f %6.1f | %9.2f %8.2f %9.1f %6.1f\n", label,
             (long long)T, f, cf, tf, tf / f, fb, cfb, tfb, tfb / fb);
      fflush(stdout);
      for (int i = 0; i < nf; i++) free(keep_free[i]);
#undef KEEP
    }
  }
  return 0;
}
