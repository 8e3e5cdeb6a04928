/* tests/c/test_mixers.c -- what the two token mixers (core/mix/bilstm.c, core/mix/bimamba.c)
 * share, checked here; each mixer's own values and gradients are in test_bilstm.c and
 * test_bimamba.c.
 *  - The kernels' vectorisable exp/expm1/sigmoid/tanh/softplus/log1p (core/simd/fastmath.h)
 *    within 4 ulp of double-precision libm over their ranges.
 *  - 1 thread vs 2 threads: bitwise identical outputs and gradients, both mixers.
 *  - Errors (bad dims, double backward), workspace size formula, no leaks.
 * Needs the working directory to be the repository root (tests/run.sh does that), or
 * ATTNLAB_REF_DIR pointing at tests/ref. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/mix/internal.h"   /* with core/simd/fastmath.h: the kernels' exp/tanh/softplus */
#include "attnlab/blas.h"
#include "attnlab/threads.h"
#include "mixer_fixtures.h"

/* ============================================================ math helpers ==== */
static double ulp_err(float got, double want) {
  float w = (float)want;
  double ulp = fabs((double)nextafterf(w, INFINITY) - w);
  if (ulp == 0 || w == 0) return got == w ? 0 : INFINITY;
  return fabs((double)got - want) / ulp;
}
static void test_math(void) {
  double e[7] = {0};
  for (double x = -87.0; x <= 87.0; x += 1.37e-4) {
    float f = (float)x;
    double xd = f;
    double v[7] = {exp(xd), xd <= 0 ? exp(xd) : 1, expm1(xd), 1 / (1 + exp(-xd)), tanh(xd),
                   xd > 30 ? xd : log1p(exp(xd)), 0};
    float g[7] = {mx_exp(f), f <= 0 ? mx_exp_le0(f) : 1, mx_expm1(f), mx_sigmoid(f), mx_tanh(f),
                  mx_softplus(f), 0};
    for (int i = 0; i < 6; i++) {
      if (v[i] < 1.2e-38 || v[i] > 1.7e38) continue;   /* outside the documented range */
      double u = ulp_err(g[i], v[i]);
      if (i == 4 && fabs(v[i]) < 1e-30) continue;
      e[i] = u > e[i] ? u : e[i];
    }
  }
  for (double y = 1e-8; y <= 1.0; y *= 1.0001) {
    double u = ulp_err(mx_log1p01((float)y), log1p((double)(float)y));
    e[6] = u > e[6] ? u : e[6];
  }
  const char *nm[7] = {"exp", "exp_le0", "expm1", "sigmoid", "tanh", "softplus", "log1p"};
  printf("  max ulp error vs double libm:");
  for (int i = 0; i < 7; i++) printf(" %s %.2f", nm[i], e[i]);
  printf("\n");
  int ok = 1;
  for (int i = 0; i < 7; i++) ok &= e[i] <= 4.0;
  CHECK("mix_math_helpers_within_4ulp", ok, "see the line above");
  CHECK("mix_math_helpers_extremes", mx_exp(-1000.0f) >= 0 && mx_exp(1000.0f) < INFINITY &&
        mx_sigmoid(-1000.0f) >= 0 && mx_sigmoid(1000.0f) == 1.0f && mx_tanh(-50.0f) == -1.0f &&
        mx_tanh(1e-20f) == 1e-20f && mx_softplus(100.0f) == 100.0f && mx_softplus(-200.0f) >= 0,
        "exp(-1000)=%g exp(1000)=%g sigmoid(1000)=%g tanh(-50)=%g tanh(1e-20)=%g softplus(100)=%g",
        mx_exp(-1000.0f), mx_exp(1000.0f), mx_sigmoid(1000.0f), mx_tanh(-50.0f), mx_tanh(1e-20f),
        mx_softplus(100.0f));
}

/* ====================================================== threads, errors, memory == */
static void test_threads(void) {
  int ok_l = 1, ok_m = 1;
  { /* BiLSTM */
    al_bilstm_dims d = {5, 37, 48, 2};
    int64_t nx = d.B * d.T * d.C, ny = 2 * nx;
    lstm_model m, g[2];
    lstm_init(&m, d, 0.3f);
    float *x = fvec(nx), *gy = fvec(ny), *y[2] = {fvec(ny), fvec(ny)}, *dx[2] = {fvec(nx), fvec(nx)};
    fill_n(x, nx, 1.0f, 0.0f);
    fill_n(gy, ny, 1.0f, 0.0f);
    uint8_t *keep = make_keep(d.B, d.T, 0.75);
    for (int r = 0; r < 2; r++) {
      /* our OpenMP partitioning must not change a bit; OpenBLAS's own thread count may
       * pick other kernels (other rounding, e.g. its Haswell path), so it stays at 1 */
      al_set_num_threads(r + 1);
      al_blas_set_threads(1);
      lstm_zeros(&g[r], d);
      ok_l &= lstm_run(&m, x, keep, y[r], gy, dx[r], &g[r]) == AL_OK;
    }
    ok_l &= memcmp(y[0], y[1], sizeof(float) * ny) == 0 && memcmp(dx[0], dx[1], sizeof(float) * nx) == 0;
    for (int k = 0; k < 2; k++)
      for (int i = 0; i < LNP; i++)
        ok_l &= memcmp(g[0].w[k][i], g[1].w[k][i], sizeof(float) * lstm_psize(&d, i)) == 0;
    lstm_free(&m); lstm_free(&g[0]); lstm_free(&g[1]);
    free(x); free(gy); free(y[0]); free(y[1]); free(dx[0]); free(dx[1]); free(keep);
  }
  { /* BiMamba */
    al_bimamba_dims d = {3, 70, 48, 3, 8, 3, 4, 0};
    int64_t n = d.B * d.T * d.E;
    mamba_model m, g[2];
    mamba_init(&m, d);
    float *x = fvec(n), *z = fvec(n), *gout = fvec(n), *o[2] = {fvec(n), fvec(n)};
    float *dx[2] = {fvec(n), fvec(n)}, *dz[2] = {fvec(n), fvec(n)};
    fill_n(x, n, 1.0f, 0.0f);
    fill_n(z, n, 1.0f, 0.0f);
    fill_n(gout, n, 1.0f, 0.0f);
    uint8_t *keep = make_keep(d.B, d.T, 0.75);
    for (int r = 0; r < 2; r++) {
      al_set_num_threads(r + 1);
      al_blas_set_threads(1);
      mamba_zeros(&g[r], d);
      ok_m &= mamba_run(&m, x, z, keep, o[r], gout, dx[r], dz[r], &g[r]) == AL_OK;
    }
    ok_m &= memcmp(o[0], o[1], sizeof(float) * n) == 0 && memcmp(dx[0], dx[1], sizeof(float) * n) == 0 &&
            memcmp(dz[0], dz[1], sizeof(float) * n) == 0;
    for (int k = 0; k < 2; k++)
      for (int i = 0; i < MNP; i++)
        ok_m &= memcmp(g[0].w[k][i], g[1].w[k][i], sizeof(float) * mamba_psize(&d, i)) == 0;
    mamba_free(&m); mamba_free(&g[0]); mamba_free(&g[1]);
    free(x); free(z); free(gout); free(o[0]); free(o[1]); free(dx[0]); free(dx[1]);
    free(dz[0]); free(dz[1]); free(keep);
  }
  al_set_num_threads(1);
  CHECK("lstm_threads_1_vs_2_bitwise_identical", ok_l, "outputs or gradients differ");
  CHECK("mamba_threads_1_vs_2_bitwise_identical", ok_m, "outputs or gradients differ");
}

static void test_errors_and_memory(void) {
  size_t live0 = al_mem_live();
  /* BiLSTM */
  {
    al_bilstm_dims d = {2, 3, 5, 2};   /* C % H != 0 */
    lstm_model m;
    lstm_init(&m, (al_bilstm_dims){2, 3, 4, 2}, 0.5f);
    al_bilstm_params p = lstm_p(&m);
    float y[64], x[64] = {0}, dy[64] = {0};
    al_bilstm_ws *ws = NULL;
    al_status st = al_bilstm_fwd(y, &ws, x, NULL, &p, &d);
    printf("  bad dims -> %s: %s\n", al_status_name(st), al_errmsg());
    CHECK("lstm_error_C_not_divisible_by_H", st == AL_EINVAL && ws == NULL && strstr(al_errmsg(), "C=5"),
          "status %d, message '%s'", st, al_errmsg());
    /* sizes whose workspace count overflows int64 are refused before anything is sized */
    al_bilstm_dims huge[3] = {{(int64_t)1 << 40, 1 << 30, 1 << 20, 1}, {1, 3, (int64_t)1 << 40, 1},
                              {(int64_t)1 << 62, 0, 4, 2}};
    for (int i = 0; i < 3; i++) {
      st = al_bilstm_fwd(y, &ws, x, NULL, &p, &huge[i]);
      CHECK("lstm_error_huge_dims", st == AL_EINVAL && ws == NULL && strstr(al_errmsg(), "too large"),
            "case %d: status %d, message '%s'", i, st, al_errmsg());
    }
    al_bilstm_params p2 = p;
    p2.w_hh[1] = NULL;
    st = al_bilstm_fwd(y, &ws, x, NULL, &p2, &m.d);
    CHECK("lstm_error_null_weight", st == AL_EINVAL && strstr(al_errmsg(), "w_hh[1]"), "'%s'", al_errmsg());
    st = al_bilstm_fwd(y, &ws, x, NULL, &p, &m.d);
    size_t bytes = al_bilstm_ws_bytes(ws);
    /* formula of mixers.h: 4*B*Tk*12C + 4*B*Tk + 8*B (+ struct and 64-byte rounding) */
    size_t formula = 4 * 2 * 3 * 12 * 4 + 4 * 2 * 3 + 8 * 2;
    CHECK("lstm_ws_bytes_formula", st == AL_OK && bytes >= formula && bytes <= formula + 512,
          "ws %zu bytes, formula %zu", bytes, formula);
    al_bilstm_grads gnull = {0};
    st = al_bilstm_bwd(NULL, &gnull, dy, ws, x, &p);
    al_status st2 = al_bilstm_bwd(NULL, &gnull, dy, ws, x, &p);
    printf("  second backward -> %s: %s\n", al_status_name(st2), al_errmsg());
    CHECK("lstm_error_backward_twice", st == AL_OK && st2 == AL_ESTATE, "statuses %d %d", st, st2);
    al_bilstm_ws_free(ws);
    al_bilstm_ws_free(NULL);
    CHECK("lstm_error_null_ws", al_bilstm_bwd(NULL, &gnull, dy, NULL, x, &p) == AL_EINVAL, "%s", al_errmsg());
    lstm_free(&m);
  }
  /* BiMamba */
  {
    al_bimamba_dims good = {2, 3, 8, 2, 4, 2, 4, 0};
    mamba_model m;
    mamba_init(&m, good);
    al_bimamba_params p = mamba_p(&m);
    float y[64], x[64] = {0}, z[64] = {0}, dy[64] = {0};
    al_bimamba_dims d = good;
    d.H = 3;
    al_bimamba_ws *ws = NULL;
    al_status st = al_bimamba_fwd(y, &ws, x, z, NULL, &p, &d);
    printf("  bad dims -> %s: %s\n", al_status_name(st), al_errmsg());
    CHECK("mamba_error_E_not_divisible_by_H", st == AL_EINVAL && ws == NULL && strstr(al_errmsg(), "E=8, H=3"),
          "status %d, message '%s'", st, al_errmsg());
    d = good;
    d.N = AL_BIMAMBA_MAX_N + 1;
    CHECK("mamba_error_N_too_large", al_bimamba_fwd(y, &ws, x, z, NULL, &p, &d) == AL_EINVAL, "%s", al_errmsg());
    al_bimamba_dims huge[5] = {good, good, good, good, good};
    huge[0].B = (int64_t)1 << 30; huge[0].T = 1 << 30;            /* B*T*N*E */
    huge[1].K = (int64_t)1 << 62;                                /* conv_w (E, K) */
    huge[2].R = (int64_t)1 << 40;                                /* x_proj rows R + 2N */
    huge[3].ld = INT64_MAX;                                      /* the row stride */
    huge[4].B = (int64_t)1 << 62; huge[4].T = 0;                 /* the per-sequence lengths */
    for (int i = 0; i < 5; i++) {
      st = al_bimamba_fwd(y, &ws, x, z, NULL, &p, &huge[i]);
      CHECK("mamba_error_huge_dims", st == AL_EINVAL && ws == NULL && strstr(al_errmsg(), "too large"),
            "case %d: status %d, message '%s'", i, st, al_errmsg());
    }
    al_bimamba_params p2 = p;
    p2.A_log[0] = NULL;
    st = al_bimamba_fwd(y, &ws, x, z, NULL, &p2, &good);
    CHECK("mamba_error_null_param", st == AL_EINVAL && strstr(al_errmsg(), "A_log"), "'%s'", al_errmsg());
    st = al_bimamba_fwd(y, &ws, x, z, NULL, &p, &good);
    /* formula of mixers.h: 4*B*Tk*(5E + 2HP) + 4*2*B*ck*N*E + 4*B*Tk + 8*B */
    size_t P = 2 + 2 * 4, formula = 4 * 2 * 3 * (5 * 8 + 2 * 2 * P) + 4 * 2 * 2 * 1 * 4 * 8 + 4 * 2 * 3 + 8 * 2;
    size_t bytes = al_bimamba_ws_bytes(ws);
    CHECK("mamba_ws_bytes_formula", st == AL_OK && bytes >= formula && bytes <= formula + 1024,
          "ws %zu bytes, formula %zu", bytes, formula);
    st = al_bimamba_bwd(NULL, NULL, NULL, dy, ws, x, z, &p);
    al_status st2 = al_bimamba_bwd(NULL, NULL, NULL, dy, ws, x, z, &p);
    CHECK("mamba_error_backward_twice", st == AL_OK && st2 == AL_ESTATE, "statuses %d %d", st, st2);
    al_bimamba_ws_free(ws);
    /* empty batch and all-dropped batch are fine */
    d = good;
    d.T = 0;
    st = al_bimamba_fwd(y, &ws, x, z, NULL, &p, &d);
    al_status st3 = al_bimamba_bwd(NULL, NULL, NULL, dy, ws, x, z, &p);
    al_bimamba_ws_free(ws);
    uint8_t none[6] = {0};
    for (int i = 0; i < 48; i++) y[i] = 1;
    al_status st4 = al_bimamba_fwd(y, &ws, x, z, none, &p, &good);
    int zero = 1;
    for (int i = 0; i < 48; i++) zero &= y[i] == 0;
    al_status st5 = al_bimamba_bwd(NULL, NULL, NULL, dy, ws, x, z, &p);
    al_bimamba_ws_free(ws);
    CHECK("mamba_empty_and_all_dropped", st == AL_OK && st3 == AL_OK && st4 == AL_OK && st5 == AL_OK && zero,
          "statuses %d %d %d %d, zero %d", st, st3, st4, st5, zero);
    mamba_free(&m);
  }
  CHECK("mixers_no_leak", al_mem_live() == live0, "al_mem_live %zu -> %zu", live0, al_mem_live());
}

int main(void) {
  mixer_seed("test_mixers");
  (void)check_skip;   /* nothing here is skipped: a missing reference file is a FAIL */
  al_set_num_threads(1);
  test_math();
  test_threads();
  test_errors_and_memory();
  CHECK_EXIT();
}
