/* tests/c/test_mixers.c -- the token-mixer cores (core/mix/bilstm.c, core/mix/bimamba.c).
 *
 * What is checked, and against what:
 *  - BiLSTM == torch.nn.LSTM(bidirectional) per head, values and every gradient, from
 *    tests/ref/bilstm.json (made once by tests/ref/make_mixer_refs.py, float64 torch).
 *  - BiMamba == a torch float64 re-derivation (cross-checked there against the anchor
 *    torch_ref.py) from tests/ref/bimamba.json, values and every gradient.
 *  - BiMamba == a plain sequential double-precision reference loop written here
 *    (conv, projections, softplus, scan with exp(), both directions), on a size with
 *    full 16-channel blocks, tail blocks and several scan chunks, with and without a
 *    keep mask; its gradients against central differences of that double reference.
 *  - Central-difference gradient checks through the float32 kernels themselves (loss
 *    in double) of every parameter element and every input element, small sizes, with
 *    and without keep masks.
 *  - Keep-mask semantics: output at kept tokens == the mixer run on the sequence with
 *    the dropped tokens removed; dropped tokens get output 0 and gradient 0; parameter
 *    gradients == sum over the compacted sequences.
 *  - 1 thread vs 2 threads: bitwise identical outputs and gradients.
 *  - The kernels' vectorisable exp/expm1/sigmoid/tanh/softplus/log1p (core/simd/fastmath.h)
 *    within 4 ulp of double-precision libm over their ranges.
 *  - Errors (bad dims, double backward), workspace size formula, no leaks.
 * Needs the working directory to be the repository root (tests/run.sh does that), or
 * ATTNLAB_REF_DIR pointing at tests/ref. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/mix/internal.h"   /* with core/simd/fastmath.h: the kernels' exp/tanh/softplus */
#include "attnlab/base.h"
#include "attnlab/blas.h"
#include "attnlab/mixers.h"
#include "attnlab/threads.h"
#include "check.h"

/* ---------------------------------------------------------------- utilities ---- */
static uint64_t rng_s = 0x9E3779B97F4A7C15ull;
static double urand(void) {
  rng_s ^= rng_s << 13;
  rng_s ^= rng_s >> 7;
  rng_s ^= rng_s << 17;
  return (double)(rng_s >> 11) * (1.0 / 9007199254740992.0);
}
static float nrand(void) {
  double u1 = urand(), u2 = urand();
  if (u1 < 1e-300) u1 = 1e-300;
  return (float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2));
}
static float *fvec(int64_t n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(float)); }
static void fill_n(float *a, int64_t n, float scale, float offset) {
  for (int64_t i = 0; i < n; i++) a[i] = offset + scale * nrand();
}
static void fill_u(float *a, int64_t n, float r) {
  for (int64_t i = 0; i < n; i++) a[i] = (float)((2 * urand() - 1) * r);
}
static double maxabs_diff(const float *a, const float *b, int64_t n) {
  double m = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)a[i] - b[i]);
    if (d > m || isnan(d)) m = d;
  }
  return m;
}
static double maxabs(const float *a, int64_t n) {
  double m = 0;
  for (int64_t i = 0; i < n; i++) m = fabs(a[i]) > m ? fabs(a[i]) : m;
  return m;
}

/* close: max |a-b|/(atol + rtol|b|) <= 1; prints the first values and the max diff */
static void check_vec(const char *name, const float *got, const float *want, int64_t n,
                      double atol, double rtol) {
  long worst = 0;
  double r = check_close_ratio(got, want, n, atol, rtol, &worst);
  printf("  %-44s n=%-5lld got[0..2]=% .7f % .7f % .7f want % .7f % .7f % .7f max|diff|=%.2e ratio=%.3f\n",
         name, (long long)n, n > 0 ? got[0] : 0, n > 1 ? got[1] : 0, n > 2 ? got[2] : 0,
         n > 0 ? want[0] : 0, n > 1 ? want[1] : 0, n > 2 ? want[2] : 0,
         maxabs_diff(got, want, n), r);
  CHECK(name, r <= 1.0, "worst at %ld: got %.9g want %.9g (atol %.1e rtol %.1e)", worst,
        n ? got[worst] : 0, n ? want[worst] : 0, atol, rtol);
}

static char *ref_path(char *buf, size_t n, const char *file) {
  const char *dir = getenv("ATTNLAB_REF_DIR");
  snprintf(buf, n, "%s/%s", dir ? dir : "tests/ref", file);
  return buf;
}
static cJSON *load_json(const char *file) {
  char path[512];
  ref_path(path, sizeof path, file);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  size_t got = fread(s, 1, (size_t)n, f);
  fclose(f);
  s[got] = 0;
  cJSON *j = cJSON_Parse(s);
  free(s);
  return j;
}
/* JSON number array -> new float array of exactly n values (NULL if missing or wrong) */
static float *jfloats(const cJSON *arr, int64_t n) {
  if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) != n) return NULL;
  float *v = fvec(n);
  int64_t i = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, arr) v[i++] = (float)e->valuedouble;
  return v;
}
static int64_t jint(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : -1;
}

/* central difference of loss() w.r.t. every element of v (or `stride`-spaced ones),
 * compared to the analytic gradient an; ratio = |fd - an| / (atol + rtol |fd|). */
typedef double (*loss_fn)(void *ctx);
static double fd_check(const char *name, float *v, int64_t n, const float *an, loss_fn loss,
                       void *ctx, double eps, double atol, double rtol, int64_t stride) {
  double worst = 0, wfd = 0, wan = 0;
  int64_t wi = -1;
  for (int64_t i = 0; i < n; i += stride) {
    float v0 = v[i];
    float vp = v0 + (float)(eps * (1 + fabs(v0))), vm = v0 - (float)(eps * (1 + fabs(v0)));
    v[i] = vp;
    double lp = loss(ctx);
    v[i] = vm;
    double lm = loss(ctx);
    v[i] = v0;
    double fd = (lp - lm) / ((double)vp - (double)vm);   /* the step actually taken */
    double r = fabs(fd - an[i]) / (atol + rtol * fabs(fd));
    if (r > worst || isnan(r)) { worst = r; wi = i; wfd = fd; wan = an[i]; }
  }
  printf("  %-44s n=%-5lld worst ratio %.3f at %lld (fd % .6e analytic % .6e)\n", name,
         (long long)n, worst, (long long)wi, wfd, wan);
  CHECK(name, worst <= 1.0, "element %lld: finite difference %.7g, analytic %.7g (eps %.0e, "
        "atol %.0e, rtol %.0e)", (long long)wi, wfd, wan, eps, atol, rtol);
  return worst;
}

static uint8_t *make_keep(int64_t B, int64_t T, double p_keep) {
  uint8_t *k = malloc((size_t)(B * T > 0 ? B * T : 1));
  for (int64_t i = 0; i < B * T; i++) k[i] = urand() < p_keep;
  return k;
}

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

/* =============================================================== BiLSTM ======== */
enum { LW_IH, LW_HH, LB_IH, LB_HH, LNP };
static const char *lstm_pname[LNP] = {"w_ih", "w_hh", "b_ih", "b_hh"};

typedef struct {
  al_bilstm_dims d;
  float *w[2][LNP];
} lstm_model;

static int64_t lstm_psize(const al_bilstm_dims *d, int i) {
  int64_t hd = d->C / d->H;
  return i <= LW_HH ? d->H * 4 * hd * hd : d->H * 4 * hd;
}
static void lstm_init(lstm_model *m, al_bilstm_dims d, float scale) {
  m->d = d;
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < LNP; i++) {
      m->w[k][i] = fvec(lstm_psize(&d, i));
      fill_u(m->w[k][i], lstm_psize(&d, i), scale);
    }
}
static void lstm_zeros(lstm_model *m, al_bilstm_dims d) {
  m->d = d;
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < LNP; i++) m->w[k][i] = fvec(lstm_psize(&d, i));
}
static void lstm_free(lstm_model *m) {
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < LNP; i++) free(m->w[k][i]);
}
static al_bilstm_params lstm_p(const lstm_model *m) {
  al_bilstm_params p;
  for (int k = 0; k < 2; k++) {
    p.w_ih[k] = m->w[k][LW_IH];
    p.w_hh[k] = m->w[k][LW_HH];
    p.b_ih[k] = m->w[k][LB_IH];
    p.b_hh[k] = m->w[k][LB_HH];
  }
  return p;
}
static al_bilstm_grads lstm_g(lstm_model *g) {
  al_bilstm_grads q;
  for (int k = 0; k < 2; k++) {
    q.w_ih[k] = g->w[k][LW_IH];
    q.w_hh[k] = g->w[k][LW_HH];
    q.b_ih[k] = g->w[k][LB_IH];
    q.b_hh[k] = g->w[k][LB_HH];
  }
  return q;
}
/* forward (+ backward when dx/g given): y = mixer(x), dL/d* for L = sum(y * gy) */
static al_status lstm_run(const lstm_model *m, const float *x, const uint8_t *keep, float *y,
                          const float *gy, float *dx, lstm_model *g) {
  al_bilstm_params p = lstm_p(m);
  al_bilstm_ws *ws = NULL;
  al_status st = al_bilstm_fwd(y, gy ? &ws : NULL, x, keep, &p, &m->d);
  if (st || !gy) return st;
  al_bilstm_grads q = lstm_g(g);
  st = al_bilstm_bwd(dx, &q, gy, ws, x, &p);
  al_bilstm_ws_free(ws);
  return st;
}

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
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(c, lstm_pname[i]);
        m.w[k][i] = jfloats(cJSON_GetArrayItem(a, k), lstm_psize(&d, i));
        ok &= m.w[k][i] != NULL;
      }
    float *x = jfloats(cJSON_GetObjectItemCaseSensitive(c, "x"), nx);
    float *gy = jfloats(cJSON_GetObjectItemCaseSensitive(c, "gy"), ny);
    float *yref = jfloats(cJSON_GetObjectItemCaseSensitive(c, "y"), ny);
    float *dxref = jfloats(cJSON_GetObjectItemCaseSensitive(c, "dx"), nx);
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
    for (int k = 0; k < 2; k++)
      for (int i = 0; i < LNP; i++) {
        char key[32];
        snprintf(key, sizeof key, "g_%s", lstm_pname[i]);
        float *gref = jfloats(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, key), k),
                              lstm_psize(&d, i));
        snprintf(name, sizeof name, "lstm_torch_%s_d%s[%d]", nm, lstm_pname[i], k);
        if (!gref) { CHECK(name, 0, "missing %s in bilstm.json", key); continue; }
        check_vec(name, g.w[k][i], gref, lstm_psize(&d, i), 2e-6, 2e-5);
        free(gref);
      }
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

/* =============================================================== BiMamba ======= */
enum { MCW, MCB, MXP, MDTW, MDTB, MAL, MD, MNP };
static const char *mamba_pname[MNP] = {"conv_w", "conv_b", "x_proj", "dt_w", "dt_b", "A_log", "D"};

typedef struct {
  al_bimamba_dims d;
  float *w[2][MNP];
} mamba_model;

static int64_t mamba_psize(const al_bimamba_dims *d, int i) {
  int64_t E = d->E, P = d->R + 2 * d->N;
  switch (i) {
    case MCW: return E * d->K;
    case MXP: return P * E;   /* H * P * (E/H) */
    case MDTW: return E * d->R;
    case MAL: return E * d->N;
    default: return E;
  }
}
static void mamba_init(mamba_model *m, al_bimamba_dims d) {
  m->d = d;
  int64_t E = d.E, N = d.N, Eh = E / d.H;
  for (int k = 0; k < 2; k++) {
    for (int i = 0; i < MNP; i++) m->w[k][i] = fvec(mamba_psize(&d, i));
    fill_n(m->w[k][MCW], E * d.K, 0.5f, 0.0f);
    fill_n(m->w[k][MCB], E, 0.2f, 0.0f);
    fill_n(m->w[k][MXP], mamba_psize(&d, MXP), 1.0f / sqrtf((float)Eh), 0.0f);
    fill_n(m->w[k][MDTW], E * d.R, 1.0f / sqrtf((float)d.R), 0.0f);
    fill_n(m->w[k][MDTB], E, 0.5f, -1.0f);
    for (int64_t e = 0; e < E; e++)
      for (int64_t n = 0; n < N; n++) m->w[k][MAL][e * N + n] = logf((float)(n + 1)) + 0.1f * nrand();
    fill_n(m->w[k][MD], E, 0.5f, 1.0f);
  }
}
static void mamba_zeros(mamba_model *m, al_bimamba_dims d) {
  m->d = d;
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < MNP; i++) m->w[k][i] = fvec(mamba_psize(&d, i));
}
static void mamba_free(mamba_model *m) {
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < MNP; i++) free(m->w[k][i]);
}
static al_bimamba_params mamba_p(const mamba_model *m) {
  al_bimamba_params p;
  for (int k = 0; k < 2; k++) {
    p.conv_w[k] = m->w[k][MCW]; p.conv_b[k] = m->w[k][MCB]; p.x_proj[k] = m->w[k][MXP];
    p.dt_w[k] = m->w[k][MDTW]; p.dt_b[k] = m->w[k][MDTB]; p.A_log[k] = m->w[k][MAL];
    p.D[k] = m->w[k][MD];
  }
  return p;
}
static al_bimamba_grads mamba_g(mamba_model *g) {
  al_bimamba_grads q;
  for (int k = 0; k < 2; k++) {
    q.conv_w[k] = g->w[k][MCW]; q.conv_b[k] = g->w[k][MCB]; q.x_proj[k] = g->w[k][MXP];
    q.dt_w[k] = g->w[k][MDTW]; q.dt_b[k] = g->w[k][MDTB]; q.A_log[k] = g->w[k][MAL];
    q.D[k] = g->w[k][MD];
  }
  return q;
}
static al_status mamba_run(const mamba_model *m, const float *x, const float *z,
                           const uint8_t *keep, float *out, const float *gout, float *dx,
                           float *dz, mamba_model *g) {
  al_bimamba_params p = mamba_p(m);
  al_bimamba_ws *ws = NULL;
  al_status st = al_bimamba_fwd(out, gout ? &ws : NULL, x, z, keep, &p, &m->d);
  if (st || !gout) return st;
  al_bimamba_grads q = mamba_g(g);
  st = al_bimamba_bwd(dx, dz, &q, gout, ws, x, z, &p);
  al_bimamba_ws_free(ws);
  return st;
}

/* Plain sequential double-precision reference of the BiMamba core, written from the
 * equations in mixers.h without any of the kernel's tricks (no compaction buffers,
 * no channel blocks, no checkpoints, libm exp/log1p). x, z rows are E apart. */
static void ref_bimamba(double *out, const double *x, const double *z, const uint8_t *keep,
                        double *const w[2][MNP], const al_bimamba_dims *d) {
  const int64_t B = d->B, T = d->T, E = d->E, H = d->H, N = d->N, R = d->R, K = d->K;
  const int64_t Eh = E / H, P = R + 2 * N;
  int64_t *idx = malloc(sizeof(int64_t) * T);
  double *ysum = malloc(sizeof(double) * T * E), *u = malloc(sizeof(double) * T * E);
  double *xd = malloc(sizeof(double) * T * H * P), *dt = malloc(sizeof(double) * T * E);
  double *st = malloc(sizeof(double) * N);
  for (int64_t b = 0; b < B; b++) {
    int64_t L = 0;
    for (int64_t t = 0; t < T; t++) if (!keep || keep[b * T + t]) idx[L++] = t;
    for (int64_t i = 0; i < L * E; i++) ysum[i] = 0;
    for (int dir = 0; dir < 2; dir++) {
      /* token of step s */
#define TOK(s) (idx[dir == 0 ? (s) : L - 1 - (s)])
      for (int64_t s = 0; s < L; s++)
        for (int64_t e = 0; e < E; e++) {
          double v = w[dir][MCB][e];
          for (int64_t k = 0; k < K; k++) {
            int64_t s2 = s - (K - 1) + k;
            if (s2 >= 0) v += w[dir][MCW][e * K + k] * x[(b * T + TOK(s2)) * E + e];
          }
          u[s * E + e] = v / (1 + exp(-v));
        }
      for (int64_t s = 0; s < L; s++)
        for (int64_t h = 0; h < H; h++) {
          for (int64_t j = 0; j < P; j++) {
            double a = 0;
            for (int64_t c = 0; c < Eh; c++) a += w[dir][MXP][(h * P + j) * Eh + c] * u[s * E + h * Eh + c];
            xd[(s * H + h) * P + j] = a;
          }
          for (int64_t c = 0; c < Eh; c++) {
            int64_t e = h * Eh + c;
            double pre = w[dir][MDTB][e];
            for (int64_t r = 0; r < R; r++) pre += w[dir][MDTW][e * R + r] * xd[(s * H + h) * P + r];
            dt[s * E + e] = pre > 30 ? pre : log1p(exp(pre));
          }
        }
      for (int64_t e = 0; e < E; e++) {
        int64_t h = e / Eh;
        for (int64_t n = 0; n < N; n++) st[n] = 0;
        for (int64_t s = 0; s < L; s++) {
          const double *Bs = xd + (s * H + h) * P + R, *Cs = Bs + N;
          double y = w[dir][MD][e] * u[s * E + e];
          for (int64_t n = 0; n < N; n++) {
            double A = -exp(w[dir][MAL][e * N + n]);
            st[n] = exp(dt[s * E + e] * A) * st[n] + dt[s * E + e] * u[s * E + e] * Bs[n];
            y += Cs[n] * st[n];
          }
          int64_t q = dir == 0 ? s : L - 1 - s;
          ysum[q * E + e] += y;
        }
      }
#undef TOK
    }
    for (int64_t t = 0; t < T; t++)
      for (int64_t e = 0; e < E; e++) out[(b * T + t) * E + e] = 0;
    for (int64_t q = 0; q < L; q++)
      for (int64_t e = 0; e < E; e++) {
        double zz = z[(b * T + idx[q]) * E + e];
        out[(b * T + idx[q]) * E + e] = 0.5 * ysum[q * E + e] * zz / (1 + exp(-zz));
      }
  }
  free(idx); free(ysum); free(u); free(xd); free(dt); free(st);
}

/* double copies of a float model and inputs, for the reference */
typedef struct {
  const mamba_model *m;
  const uint8_t *keep;
  double *w[2][MNP];
  double *x, *z, *out;
  const float *gout;
  /* float-kernel FD */
  float *fx, *fz, *fout;
} mamba_ctx;
static void mctx_init(mamba_ctx *c, const mamba_model *m, const float *x, const float *z,
                      const uint8_t *keep, const float *gout) {
  const al_bimamba_dims *d = &m->d;
  int64_t n = d->B * d->T * d->E;
  c->m = m;
  c->keep = keep;
  c->gout = gout;
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < MNP; i++) {
      int64_t ps = mamba_psize(d, i);
      c->w[k][i] = malloc(sizeof(double) * ps);
      for (int64_t j = 0; j < ps; j++) c->w[k][i][j] = m->w[k][i][j];
    }
  c->x = malloc(sizeof(double) * n);
  c->z = malloc(sizeof(double) * n);
  c->out = malloc(sizeof(double) * n);
  for (int64_t j = 0; j < n; j++) { c->x[j] = x[j]; c->z[j] = z[j]; }
}
static void mctx_free(mamba_ctx *c) {
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < MNP; i++) free(c->w[k][i]);
  free(c->x); free(c->z); free(c->out);
}
static double mamba_ref_loss(mamba_ctx *c) {
  const al_bimamba_dims *d = &c->m->d;
  ref_bimamba(c->out, c->x, c->z, c->keep, c->w, d);
  double L = 0;
  for (int64_t i = 0; i < d->B * d->T * d->E; i++) L += c->out[i] * c->gout[i];
  return L;
}
static double mamba_kernel_loss(void *vc) {
  mamba_ctx *c = vc;
  const al_bimamba_dims *d = &c->m->d;
  mamba_run(c->m, c->fx, c->fz, c->keep, c->fout, NULL, NULL, NULL, NULL);
  double L = 0;
  for (int64_t i = 0; i < d->B * d->T * d->E; i++) L += (double)c->fout[i] * c->gout[i];
  return L;
}

static void test_mamba_torch(void) {
  cJSON *root = load_json("bimamba.json");
  if (!root) {
    CHECK("mamba_torch_refs_load", 0, "cannot read tests/ref/bimamba.json (run from the repo root)");
    return;
  }
  const cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(root, "cases")) {
    const char *nm = cJSON_GetObjectItemCaseSensitive(c, "name")->valuestring;
    al_bimamba_dims d = {jint(c, "B"), jint(c, "T"), jint(c, "E"), jint(c, "H"), jint(c, "N"),
                         jint(c, "R"), jint(c, "K"), 0};
    int64_t n = d.B * d.T * d.E;
    printf("# bimamba vs torch float64 case %s: B=%lld T=%lld E=%lld H=%lld N=%lld R=%lld K=%lld\n",
           nm, (long long)d.B, (long long)d.T, (long long)d.E, (long long)d.H, (long long)d.N,
           (long long)d.R, (long long)d.K);
    mamba_model m, g;
    m.d = d;
    int ok = 1;
    for (int k = 0; k < 2; k++)
      for (int i = 0; i < MNP; i++) {
        m.w[k][i] = jfloats(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, mamba_pname[i]), k),
                            mamba_psize(&d, i));
        ok &= m.w[k][i] != NULL;
      }
    float *x = jfloats(cJSON_GetObjectItemCaseSensitive(c, "xin"), n);
    float *z = jfloats(cJSON_GetObjectItemCaseSensitive(c, "z"), n);
    float *gout = jfloats(cJSON_GetObjectItemCaseSensitive(c, "gout"), n);
    float *oref = jfloats(cJSON_GetObjectItemCaseSensitive(c, "out"), n);
    float *dxref = jfloats(cJSON_GetObjectItemCaseSensitive(c, "dxin"), n);
    float *dzref = jfloats(cJSON_GetObjectItemCaseSensitive(c, "dz"), n);
    char name[128];
    snprintf(name, sizeof name, "mamba_torch_%s_load", nm);
    ok &= x && z && gout && oref && dxref && dzref;
    CHECK(name, ok, "malformed case in bimamba.json");
    if (!ok) continue;
    mamba_zeros(&g, d);
    float *out = fvec(n), *dx = fvec(n), *dz = fvec(n);
    al_status st = mamba_run(&m, x, z, NULL, out, gout, dx, dz, &g);
    snprintf(name, sizeof name, "mamba_torch_%s_run", nm);
    CHECK(name, st == AL_OK, "%s", al_errmsg());
    snprintf(name, sizeof name, "mamba_torch_%s_out", nm);
    check_vec(name, out, oref, n, 1e-6, 1e-5);
    snprintf(name, sizeof name, "mamba_torch_%s_dxin", nm);
    check_vec(name, dx, dxref, n, 2e-6, 2e-5);
    snprintf(name, sizeof name, "mamba_torch_%s_dz", nm);
    check_vec(name, dz, dzref, n, 2e-6, 2e-5);
    for (int k = 0; k < 2; k++)
      for (int i = 0; i < MNP; i++) {
        char key[32];
        snprintf(key, sizeof key, "g_%s", mamba_pname[i]);
        float *gref = jfloats(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, key), k),
                              mamba_psize(&d, i));
        snprintf(name, sizeof name, "mamba_torch_%s_d%s[%d]", nm, mamba_pname[i], k);
        if (!gref) { CHECK(name, 0, "missing %s", key); continue; }
        check_vec(name, g.w[k][i], gref, mamba_psize(&d, i), 5e-6, 3e-5);
        free(gref);
      }
    mamba_free(&m); mamba_free(&g);
    free(x); free(z); free(gout); free(oref); free(dxref); free(dzref); free(out); free(dx); free(dz);
  }
  cJSON_Delete(root);
}

typedef struct {
  double *dv;        /* the double copy that the reference reads */
  int64_t n;
  const float *an;   /* the kernel's gradient */
  const char *nm;
  int dir;
} gtarget;

/* the kernel vs the double reference loop: values (float32 precision) and gradients
 * (central differences of the double reference on a sample of elements) */
static void test_mamba_reference(int masked) {
  /* E/H = 20 channels per head: one full 16-channel block + a tail of 4; T = 75: three
   * scan chunks of AL_SCAN_CHUNK = 32 (the last partial). */
  al_bimamba_dims d = {2, 75, 40, 2, 16, 3, 4, 0};
  const int64_t n = d.B * d.T * d.E;
  mamba_model m, g;
  mamba_init(&m, d);
  mamba_zeros(&g, d);
  float *x = fvec(n), *z = fvec(n), *gout = fvec(n), *out = fvec(n), *dx = fvec(n), *dz = fvec(n);
  fill_n(x, n, 1.0f, 0.0f);
  fill_n(z, n, 1.0f, 0.0f);
  fill_n(gout, n, 1.0f, 0.0f);
  uint8_t *keep = masked ? make_keep(d.B, d.T, 0.7) : NULL;
  printf("# bimamba vs double reference loop (%s): B=2 T=75 E=40 H=2 N=16 R=3 K=4\n",
         masked ? "random keep mask p=0.7" : "no mask");
  al_status st = mamba_run(&m, x, z, keep, out, gout, dx, dz, &g);
  CHECK(masked ? "mamba_ref_mask_run" : "mamba_ref_run", st == AL_OK, "%s", al_errmsg());
  mamba_ctx c;
  mctx_init(&c, &m, x, z, keep, gout);
  mamba_ref_loss(&c);
  float *ref = fvec(n);
  for (int64_t i = 0; i < n; i++) ref[i] = (float)c.out[i];
  double scale = maxabs(ref, n);
  char name[96];
  snprintf(name, sizeof name, "mamba_ref%s_out_float32_precision", masked ? "_mask" : "");
  check_vec(name, out, ref, n, 2e-6 * scale, 1e-5);

  /* gradients: FD of the double reference, eps 1e-6, a spread sample per tensor */
  gtarget t[2 * MNP + 2];
  int nt = 0;
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < MNP; i++)
      t[nt++] = (gtarget){c.w[k][i], mamba_psize(&d, i), g.w[k][i], mamba_pname[i], k};
  t[nt++] = (gtarget){c.x, n, dx, "xin", -1};
  t[nt++] = (gtarget){c.z, n, dz, "z", -1};
  for (int j = 0; j < nt; j++) {
    int64_t cnt = t[j].n < 10 ? t[j].n : 10;
    double worst = 0, wfd = 0, wan = 0;
    double amax = maxabs(t[j].an, t[j].n);
    for (int64_t q = 0; q < cnt; q++) {
      int64_t i = (int64_t)(urand() * t[j].n);
      double v0 = t[j].dv[i], h = 1e-6 * (1 + fabs(v0));
      t[j].dv[i] = v0 + h;
      double lp = mamba_ref_loss(&c);
      t[j].dv[i] = v0 - h;
      double lm = mamba_ref_loss(&c);
      t[j].dv[i] = v0;
      double fd = (lp - lm) / (2 * h);
      /* the float kernel's gradient sums B*Tk terms in float: ~1e-5 relative */
      double r = fabs(fd - t[j].an[i]) / (1e-5 * (1 + amax) + 1e-4 * fabs(fd));
      if (r > worst) { worst = r; wfd = fd; wan = t[j].an[i]; }
    }
    snprintf(name, sizeof name, "mamba_ref%s_grad_%s%s%s", masked ? "_mask" : "", t[j].nm,
             t[j].dir < 0 ? "" : t[j].dir ? "[1]" : "[0]", "");
    printf("  %-44s worst ratio %.3f (fd % .8e kernel % .8e)\n", name, worst, wfd, wan);
    CHECK(name, worst <= 1.0, "fd %.9g vs kernel %.9g", wfd, wan);
  }
  mctx_free(&c);
  mamba_free(&m); mamba_free(&g);
  free(x); free(z); free(gout); free(out); free(dx); free(dz); free(ref); free(keep);
}

static void test_mamba_fd(int masked) {
  al_bimamba_dims d = {2, 5, 8, 2, 3, 2, 4, 0};
  const int64_t n = d.B * d.T * d.E;
  mamba_model m, g;
  mamba_init(&m, d);
  mamba_zeros(&g, d);
  float *x = fvec(n), *z = fvec(n), *gout = fvec(n), *out = fvec(n), *dx = fvec(n), *dz = fvec(n);
  fill_n(x, n, 1.0f, 0.0f);
  fill_n(z, n, 1.0f, 0.0f);
  fill_n(gout, n, 1.0f, 0.0f);
  uint8_t keep[10] = {1, 0, 1, 1, 0, 0, 1, 1, 0, 1};
  const uint8_t *kp = masked ? keep : NULL;
  printf("# bimamba finite differences through the float32 kernel (%s), B=2 T=5 E=8 H=2 N=3 R=2 K=4\n",
         masked ? "keep mask 10110/00111" : "no mask");
  al_status st = mamba_run(&m, x, z, kp, out, gout, dx, dz, &g);
  CHECK(masked ? "mamba_fd_mask_run" : "mamba_fd_run", st == AL_OK, "%s", al_errmsg());
  mamba_ctx c = {0};
  c.m = &m; c.keep = kp; c.gout = gout; c.fx = x; c.fz = z; c.fout = fvec(n);
  const double eps = 1e-2, atol = 2e-4, rtol = 2e-3;
  char name[96];
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < MNP; i++) {
      snprintf(name, sizeof name, "mamba_fd%s_d%s[%d]", masked ? "_mask" : "", mamba_pname[i], k);
      fd_check(name, m.w[k][i], mamba_psize(&d, i), g.w[k][i], mamba_kernel_loss, &c, eps, atol, rtol, 1);
    }
  snprintf(name, sizeof name, "mamba_fd%s_dxin", masked ? "_mask" : "");
  fd_check(name, x, n, dx, mamba_kernel_loss, &c, eps, atol, rtol, 1);
  snprintf(name, sizeof name, "mamba_fd%s_dz", masked ? "_mask" : "");
  fd_check(name, z, n, dz, mamba_kernel_loss, &c, eps, atol, rtol, 1);
  free(c.fout);
  mamba_free(&m); mamba_free(&g);
  free(x); free(z); free(gout); free(out); free(dx); free(dz);
}

static void test_mamba_mask(void) {
  al_bimamba_dims d = {4, 41, 24, 1, 4, 2, 4, 0};
  const int64_t B = d.B, T = d.T, E = d.E, n = B * T * E;
  mamba_model m, g, gs;
  mamba_init(&m, d);
  mamba_zeros(&g, d);
  mamba_zeros(&gs, d);
  float *x = fvec(n), *z = fvec(n), *gout = fvec(n), *out = fvec(n), *dx = fvec(n), *dz = fvec(n);
  fill_n(x, n, 1.0f, 0.0f);
  fill_n(z, n, 1.0f, 0.0f);
  fill_n(gout, n, 1.0f, 0.0f);
  uint8_t *keep = make_keep(B, T, 0.5);
  for (int64_t t = 0; t < T; t++) keep[1 * T + t] = t >= 3 && t < 39;  /* padding both ends */
  for (int64_t t = 0; t < T; t++) keep[2 * T + t] = 0;                 /* nothing kept */
  for (int64_t t = 0; t < T; t++) keep[3 * T + t] = t == 17;           /* one token */
  al_status st = mamba_run(&m, x, z, keep, out, gout, dx, dz, &g);
  CHECK("mamba_mask_run", st == AL_OK, "%s", al_errmsg());
  float *xs = fvec(n), *zs = fvec(n), *gs_out = fvec(n), *os = fvec(n), *dxs = fvec(n), *dzs = fvec(n);
  double d_out = 0, d_dx = 0, d_dz = 0;
  int zeros_ok = 1;
  for (int64_t b = 0; b < B; b++) {
    int64_t L = 0, idx[64];
    for (int64_t t = 0; t < T; t++) if (keep[b * T + t]) idx[L++] = t;
    for (int64_t t = 0; t < T; t++)
      if (!keep[b * T + t])
        for (int64_t e = 0; e < E; e++) {
          int64_t i = (b * T + t) * E + e;
          zeros_ok &= out[i] == 0 && dx[i] == 0 && dz[i] == 0;
        }
    if (L == 0) continue;
    for (int64_t q = 0; q < L; q++) {
      memcpy(xs + q * E, x + (b * T + idx[q]) * E, sizeof(float) * E);
      memcpy(zs + q * E, z + (b * T + idx[q]) * E, sizeof(float) * E);
      memcpy(gs_out + q * E, gout + (b * T + idx[q]) * E, sizeof(float) * E);
    }
    mamba_model m1 = m;
    m1.d.B = 1;
    m1.d.T = L;
    memset(dxs, 0, sizeof(float) * L * E);
    memset(dzs, 0, sizeof(float) * L * E);
    mamba_run(&m1, xs, zs, NULL, os, gs_out, dxs, dzs, &gs);
    for (int64_t q = 0; q < L; q++)
      for (int64_t e = 0; e < E; e++) {
        int64_t i = (b * T + idx[q]) * E + e, j = q * E + e;
        d_out = fmax(d_out, fabs(out[i] - os[j]));
        d_dx = fmax(d_dx, fabs(dx[i] - dxs[j]));
        d_dz = fmax(d_dz, fabs(dz[i] - dzs[j]));
      }
  }
  printf("  mask: max|out - out(removed)| = %.2e, dx %.2e, dz %.2e\n", d_out, d_dx, d_dz);
  CHECK("mamba_mask_equals_removed_tokens_out", d_out <= 1e-6, "max diff %.3e", d_out);
  CHECK("mamba_mask_equals_removed_tokens_dxin", d_dx <= 1e-5, "max diff %.3e", d_dx);
  CHECK("mamba_mask_equals_removed_tokens_dz", d_dz <= 1e-6, "max diff %.3e", d_dz);
  CHECK("mamba_mask_dropped_zero_output_and_grad", zeros_ok, "a dropped token got a value");
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < MNP; i++) {
      char name[80];
      snprintf(name, sizeof name, "mamba_mask_d%s[%d]_equals_removed", mamba_pname[i], k);
      check_vec(name, g.w[k][i], gs.w[k][i], mamba_psize(&d, i), 1e-5 * (1 + maxabs(gs.w[k][i], mamba_psize(&d, i))), 1e-5);
    }
  mamba_free(&m); mamba_free(&g); mamba_free(&gs);
  free(x); free(z); free(gout); free(out); free(dx); free(dz); free(keep);
  free(xs); free(zs); free(gs_out); free(os); free(dxs); free(dzs);
}

/* xin, z as the two halves of one in_proj output (rows 2E apart) */
static void test_mamba_stride(void) {
  al_bimamba_dims d = {2, 19, 16, 2, 4, 2, 3, 0};
  const int64_t n = d.B * d.T * d.E, E = d.E;
  mamba_model m, g1, g2;
  mamba_init(&m, d);
  mamba_zeros(&g1, d);
  mamba_zeros(&g2, d);
  float *x = fvec(n), *z = fvec(n), *gout = fvec(n), *o1 = fvec(n), *o2 = fvec(n);
  float *dx = fvec(n), *dz = fvec(n), *xz = fvec(2 * n), *dxz = fvec(2 * n);
  fill_n(x, n, 1.0f, 0.0f);
  fill_n(z, n, 1.0f, 0.0f);
  fill_n(gout, n, 1.0f, 0.0f);
  for (int64_t r = 0; r < d.B * d.T; r++) {
    memcpy(xz + r * 2 * E, x + r * E, sizeof(float) * E);
    memcpy(xz + r * 2 * E + E, z + r * E, sizeof(float) * E);
  }
  uint8_t *keep = make_keep(d.B, d.T, 0.8);
  mamba_run(&m, x, z, keep, o1, gout, dx, dz, &g1);
  mamba_model m2 = m;
  m2.d.ld = 2 * E;
  al_status st = mamba_run(&m2, xz, xz + E, keep, o2, gout, dxz, dxz + E, &g2);
  int same = st == AL_OK && memcmp(o1, o2, sizeof(float) * n) == 0;
  for (int64_t r = 0; r < d.B * d.T; r++) {
    same &= memcmp(dx + r * E, dxz + r * 2 * E, sizeof(float) * E) == 0;
    same &= memcmp(dz + r * E, dxz + r * 2 * E + E, sizeof(float) * E) == 0;
  }
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < MNP; i++) same &= memcmp(g1.w[k][i], g2.w[k][i], sizeof(float) * mamba_psize(&d, i)) == 0;
  CHECK("mamba_ld_2E_halves_of_xz_identical", same, "strided xin/z differ from contiguous (%s)",
        st ? al_errmsg() : "values");
  mamba_free(&m); mamba_free(&g1); mamba_free(&g2);
  free(x); free(z); free(gout); free(o1); free(o2); free(dx); free(dz); free(xz); free(dxz); free(keep);
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
  const char *seed_env = getenv("ATTNLAB_SEED");
  if (seed_env) rng_s = strtoull(seed_env, NULL, 10) | 1;
  printf("# test_mixers seed %llu, 1 thread unless stated\n", (unsigned long long)rng_s);
  (void)check_skip;   /* nothing here is skipped: a missing reference file is a FAIL */
  al_set_num_threads(1);
  test_math();
  test_lstm_torch();
  test_lstm_fd(0);
  test_lstm_fd(1);
  test_lstm_mask();
  test_mamba_torch();
  test_mamba_reference(0);
  test_mamba_reference(1);
  test_mamba_fd(0);
  test_mamba_fd(1);
  test_mamba_mask();
  test_mamba_stride();
  test_threads();
  test_errors_and_memory();
  CHECK_EXIT();
}
