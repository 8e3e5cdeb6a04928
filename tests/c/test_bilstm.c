/* tests/c/test_bilstm.c -- the BiLSTM token mixer (core/mix/bilstm.c).
 *  - == torch.nn.LSTM(bidirectional) per head, values and every gradient, from
 *    tests/ref/bilstm.json (made once by tests/ref/make_mixer_refs.py, float64 torch).
 *  - Central-difference gradient checks through the float32 kernel itself (loss in double)
 *    of every parameter element and every input element, small sizes, with and without a
 *    keep mask.
 *  - Keep-mask semantics: output at kept tokens == the mixer run on the sequence with the
 *    dropped tokens removed; dropped tokens get output 0 and gradient 0; parameter
 *    gradients == sum over the compacted sequences.
 * Needs the working directory to be the repository root (tests/run.sh does that), or
 * ATTNLAB_REF_DIR pointing at tests/ref. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/threads.h"
#include "mixer_fixtures.h"

typedef struct {
  lstm_model *m;
  float *x, *y;
  const float *gy;
  const uint8_t *keep;
} lstm_ctx;
static double lstm_loss(void *vc) {
  lstm_ctx *c = vc;
  lstm_run(c->m, c->x, c->keep, c->y, NULL, NULL, NULL);
  int64_t n = c->m->d.B * c->m->d.T * 2 * c->m->d.C;
  double L = 0;
  for (int64_t i = 0; i < n; i++) L += (double)c->y[i] * c->gy[i];
  return L;
}

static void test_lstm_torch(void) {
  cJSON *root = load_json("bilstm.json");
  if (!root) {
    CHECK("lstm_torch_refs_load", 0, "cannot read tests/ref/bilstm.json (run from the repo root)");
    return;
  }
  const cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(root, "cases")) {
    const char *nm = cJSON_GetObjectItemCaseSensitive(c, "name")->valuestring;
    al_bilstm_dims d = {jint(c, "B"), jint(c, "T"), jint(c, "C"), jint(c, "H")};
    int64_t nx = d.B * d.T * d.C, ny = 2 * nx;
    printf("# bilstm vs torch.nn.LSTM case %s: B=%lld T=%lld C=%lld H=%lld\n", nm,
           (long long)d.B, (long long)d.T, (long long)d.C, (long long)d.H);
    lstm_model m, g;
    m.d = d;
    int ok = 1;
    for (int k = 0; k < 2; k++)
      for (int i = 0; i < LNP; i++) {
        m.w[k][i] = case_dir_floats(c, lstm_pname[i], k, lstm_psize(&d, i));
        ok &= m.w[k][i] != NULL;
      }
    float *x = case_floats(c, "x", nx);
    float *gy = case_floats(c, "gy", ny);
    float *yref = case_floats(c, "y", ny);
    float *dxref = case_floats(c, "dx", nx);
    char name[128];
    snprintf(name, sizeof name, "lstm_torch_%s_load", nm);
    CHECK(name, ok && x && gy && yref && dxref, "malformed case in bilstm.json");
    if (!(ok && x && gy && yref && dxref)) continue;
    lstm_zeros(&g, d);
    float *y = fvec(ny), *dx = fvec(nx);
    al_status st = lstm_run(&m, x, NULL, y, gy, dx, &g);
    snprintf(name, sizeof name, "lstm_torch_%s_run", nm);
    CHECK(name, st == AL_OK, "%s", al_errmsg());
    snprintf(name, sizeof name, "lstm_torch_%s_y", nm);
    check_vec(name, y, yref, ny, 1e-6, 1e-5);
    snprintf(name, sizeof name, "lstm_torch_%s_dx", nm);
    check_vec(name, dx, dxref, nx, 2e-6, 2e-5);
    snprintf(name, sizeof name, "lstm_torch_%s", nm);
    for (int k = 0; k < 2; k++)
      for (int i = 0; i < LNP; i++)
        check_case_grad(name, c, "bilstm.json", lstm_pname[i], k, g.w[k][i], lstm_psize(&d, i),
                        2e-6, 2e-5);
    lstm_free(&m);
    lstm_free(&g);
    free(x); free(gy); free(yref); free(dxref); free(y); free(dx);
  }
  cJSON_Delete(root);
}

static void test_lstm_fd(int masked) {
  al_bilstm_dims d = {2, 5, 4, 2};
  int64_t nx = d.B * d.T * d.C, ny = 2 * nx;
  lstm_model m, g;
  lstm_init(&m, d, 0.9f);
  lstm_zeros(&g, d);
  float *x = fvec(nx), *gy = fvec(ny), *y = fvec(ny), *dx = fvec(nx);
  fill_n(x, nx, 1.0f, 0.0f);
  fill_n(gy, ny, 1.0f, 0.0f);
  uint8_t keep[10] = {1, 0, 1, 1, 0, 0, 1, 1, 0, 1};
  const uint8_t *kp = masked ? keep : NULL;
  printf("# bilstm finite differences through the float32 kernel (%s), B=2 T=5 C=4 H=2\n",
         masked ? "keep mask 10110/00111" : "no mask");
  al_status st = lstm_run(&m, x, kp, y, gy, dx, &g);
  CHECK(masked ? "lstm_fd_mask_run" : "lstm_fd_run", st == AL_OK, "%s", al_errmsg());
  lstm_ctx ctx = {&m, x, y, gy, kp};
  /* float32 forward: loss noise ~1e-7 relative; eps 1e-2 makes truncation ~1e-5 and
   * the noise in the quotient ~1e-5; a wrong term is off by O(|grad|) >> 1e-3. */
  const double eps = 1e-2, atol = 2e-4, rtol = 2e-3;
  char name[96];
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < LNP; i++) {
      snprintf(name, sizeof name, "lstm_fd%s_d%s[%d]", masked ? "_mask" : "", lstm_pname[i], k);
      fd_check(name, m.w[k][i], lstm_psize(&d, i), g.w[k][i], lstm_loss, &ctx, eps, atol, rtol, 1);
    }
  snprintf(name, sizeof name, "lstm_fd%s_dx", masked ? "_mask" : "");
  fd_check(name, x, nx, dx, lstm_loss, &ctx, eps, atol, rtol, 1);
  if (masked) {
    int zero = 1;
    for (int64_t b = 0; b < d.B; b++)
      for (int64_t t = 0; t < d.T; t++)
        for (int64_t c = 0; c < (keep[b * d.T + t] ? 0 : 2 * d.C); c++) zero &= y[(b * d.T + t) * 2 * d.C + c] == 0;
    CHECK("lstm_fd_mask_dropped_output_zero", zero, "a dropped token has non-zero output");
  }
  lstm_free(&m);
  lstm_free(&g);
  free(x); free(gy); free(y); free(dx);
}

/* out[b, kept t] == mixer(x[b] with dropped tokens removed); grads likewise */
static void test_lstm_mask(void) {
  al_bilstm_dims d = {4, 9, 6, 3};
  const int64_t B = d.B, T = d.T, C = d.C, nx = B * T * C, ny = 2 * nx;
  lstm_model m, g, gs;
  lstm_init(&m, d, 0.6f);
  lstm_zeros(&g, d);
  lstm_zeros(&gs, d);
  float *x = fvec(nx), *gy = fvec(ny), *y = fvec(ny), *dx = fvec(nx);
  fill_n(x, nx, 1.0f, 0.0f);
  fill_n(gy, ny, 1.0f, 0.0f);
  uint8_t *keep = make_keep(B, T, 0.6);
  for (int64_t t = 0; t < T; t++) keep[2 * T + t] = 0;           /* sequence 2: nothing kept */
  for (int64_t t = 0; t < T; t++) keep[3 * T + t] = t == 4;      /* sequence 3: one token */
  keep[0] = 0; keep[T - 1] = 0; keep[1] = 1;                      /* sequence 0 drops its ends */
  al_status st = lstm_run(&m, x, keep, y, gy, dx, &g);
  CHECK("lstm_mask_run", st == AL_OK, "%s", al_errmsg());
  double dy_max = 0, ddx_max = 0;
  int zeros_ok = 1;
  float *ys = fvec(ny), *xs = fvec(nx), *gys = fvec(ny), *dxs = fvec(nx);
  for (int64_t b = 0; b < B; b++) {
    int64_t L = 0, idx[64];
    for (int64_t t = 0; t < T; t++) if (keep[b * T + t]) idx[L++] = t;
    for (int64_t t = 0; t < T; t++)
      if (!keep[b * T + t])
        for (int64_t c = 0; c < 2 * C; c++) zeros_ok &= y[(b * T + t) * 2 * C + c] == 0;
    for (int64_t t = 0; t < T; t++)
      if (!keep[b * T + t])
        for (int64_t c = 0; c < C; c++) zeros_ok &= dx[(b * T + t) * C + c] == 0;
    if (L == 0) continue;
    for (int64_t q = 0; q < L; q++) {
      memcpy(xs + q * C, x + (b * T + idx[q]) * C, sizeof(float) * C);
      memcpy(gys + q * 2 * C, gy + (b * T + idx[q]) * 2 * C, sizeof(float) * 2 * C);
    }
    lstm_model m1 = m;
    m1.d.B = 1;
    m1.d.T = L;
    memset(dxs, 0, sizeof(float) * L * C);
    lstm_run(&m1, xs, NULL, ys, gys, dxs, &gs);   /* gs accumulates over sequences */
    for (int64_t q = 0; q < L; q++)
      for (int64_t c = 0; c < 2 * C; c++) {
        double df = fabs(ys[q * 2 * C + c] - y[(b * T + idx[q]) * 2 * C + c]);
        dy_max = df > dy_max ? df : dy_max;
      }
    for (int64_t q = 0; q < L; q++)
      for (int64_t c = 0; c < C; c++) {
        double df = fabs(dxs[q * C + c] - dx[(b * T + idx[q]) * C + c]);
        ddx_max = df > ddx_max ? df : ddx_max;
      }
  }
  printf("  mask: max|y - y(removed)| = %.2e, max|dx - dx(removed)| = %.2e\n", dy_max, ddx_max);
  CHECK("lstm_mask_equals_removed_tokens_y", dy_max <= 1e-6, "max diff %.3e", dy_max);
  CHECK("lstm_mask_equals_removed_tokens_dx", ddx_max <= 1e-5, "max diff %.3e", ddx_max);
  CHECK("lstm_mask_dropped_zero_output_and_grad", zeros_ok, "dropped token got a value");
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < LNP; i++) {
      char name[80];
      snprintf(name, sizeof name, "lstm_mask_d%s[%d]_equals_removed", lstm_pname[i], k);
      check_vec(name, g.w[k][i], gs.w[k][i], lstm_psize(&d, i), 1e-5, 1e-5);
    }
  lstm_free(&m); lstm_free(&g); lstm_free(&gs);
  free(x); free(gy); free(y); free(dx); free(ys); free(xs); free(gys); free(dxs); free(keep);
}

int main(void) {
  mixer_seed("test_bilstm");
  (void)check_skip;   /* nothing here is skipped: a missing reference file is a FAIL */
  al_set_num_threads(1);
  test_lstm_torch();
  test_lstm_fd(0);
  test_lstm_fd(1);
  test_lstm_mask();
  CHECK_EXIT();
}
