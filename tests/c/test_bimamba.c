/* tests/c/test_bimamba.c -- the BiMamba token mixer (core/mix/bimamba.c).
 *  - == a torch float64 re-derivation (cross-checked there against the anchor torch_ref.py)
 *    from tests/ref/bimamba.json, values and every gradient.
 *  - == a plain sequential double-precision reference loop written here (conv, projections,
 *    softplus, scan with exp(), both directions), on a size with full 16-channel blocks,
 *    tail blocks and several scan chunks, with and without a keep mask; its gradients
 *    against central differences of that double reference.
 *  - Central-difference gradient checks through the float32 kernel itself (loss in double)
 *    of every parameter element and every input element, small sizes, with and without a
 *    keep mask.
 *  - Keep-mask semantics: output at kept tokens == the mixer run on the sequence with the
 *    dropped tokens removed; dropped tokens get output 0 and gradient 0; parameter
 *    gradients == sum over the compacted sequences.
 *  - x and z as the two halves of one in_proj output (row stride 2E) == contiguous inputs.
 * Needs the working directory to be the repository root (tests/run.sh does that), or
 * ATTNLAB_REF_DIR pointing at tests/ref. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/threads.h"
#include "mixer_fixtures.h"

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
  double *st = malloc(sizeof(double) * N), *A = malloc(sizeof(double) * N);
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
        /* A = -exp(A_log) once per channel, not once per step: the same doubles, and the
         * finite differences below evaluate this loop ~800 times (most of the test's time) */
        for (int64_t n = 0; n < N; n++) { st[n] = 0; A[n] = -exp(w[dir][MAL][e * N + n]); }
        for (int64_t s = 0; s < L; s++) {
          const double *Bs = xd + (s * H + h) * P + R, *Cs = Bs + N;
          double y = w[dir][MD][e] * u[s * E + e];
          for (int64_t n = 0; n < N; n++) {
            st[n] = exp(dt[s * E + e] * A[n]) * st[n] + dt[s * E + e] * u[s * E + e] * Bs[n];
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
  free(idx); free(ysum); free(u); free(xd); free(dt); free(st); free(A);
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
        m.w[k][i] = case_dir_floats(c, mamba_pname[i], k, mamba_psize(&d, i));
        ok &= m.w[k][i] != NULL;
      }
    float *x = case_floats(c, "xin", n);
    float *z = case_floats(c, "z", n);
    float *gout = case_floats(c, "gout", n);
    float *oref = case_floats(c, "out", n);
    float *dxref = case_floats(c, "dxin", n);
    float *dzref = case_floats(c, "dz", n);
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
    snprintf(name, sizeof name, "mamba_torch_%s", nm);
    for (int k = 0; k < 2; k++)
      for (int i = 0; i < MNP; i++)
        check_case_grad(name, c, "bimamba.json", mamba_pname[i], k, g.w[k][i], mamba_psize(&d, i),
                        5e-6, 3e-5);
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
  /* Under valgrind (tests/valgrind.sh sets ATTNLAB_VALGRIND) 2 of the 10 samples per tensor
   * are evaluated: the samples run only this file's double reference, never the library, and
   * the other runs (make test, asan, every CPU level) take all 10. All 10 are still drawn, so
   * the tests after this one see the same random numbers. */
  const int64_t per = under_valgrind() ? 2 : 10;
  for (int j = 0; j < nt; j++) {
    int64_t cnt = t[j].n < 10 ? t[j].n : 10;
    double worst = 0, wfd = 0, wan = 0;
    double amax = maxabs(t[j].an, t[j].n);
    for (int64_t q = 0; q < cnt; q++) {
      int64_t i = (int64_t)(urand() * t[j].n);
      if (q >= per) continue;
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

int main(void) {
  mixer_seed("test_bimamba");
  (void)check_skip;   /* nothing here is skipped: a missing reference file is a FAIL */
  al_set_num_threads(1);
  test_mamba_torch();
  test_mamba_reference(0);
  test_mamba_reference(1);
  test_mamba_fd(0);
  test_mamba_fd(1);
  test_mamba_mask();
  test_mamba_stride();
  CHECK_EXIT();
}
