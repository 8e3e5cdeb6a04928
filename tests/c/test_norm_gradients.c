/* tests/c/test_norm_gradients.c -- the normalizers' backwards:
 *   - central finite differences of every backward (loss in double), incl. the alpha gradient,
 *     skipping points where the support changes within eps; and a self-test that the check
 *     rejects a gradient that is 2% off;
 *   - the _write backward twins == accumulation into zeros (bitwise), never reading gin;
 *   - NaN rows give NaN gradients; alpha-entmax's backward at every length.
 * Every check prints PASS/FAIL/SKIP (tests/c/check.h). Single-threaded unless stated. */
#include "norm_check.h"

/* ---------------------------------------------------------------- 5. finite differences */
/* L(x, alpha) = sum_j w_j out_j in double. */
static double loss(int op, const float *x, const uint8_t *keep, long rows, long n,
                   const float *alpha, double ratio, const double *w, float *scratch,
                   uint8_t *support) {
  op_fwd(op, scratch, x, keep, keep ? rows : 1, rows, n, alpha, ratio);
  double L = 0;
  for (long i = 0; i < rows * n; i++) {
    L += w[i] * scratch[i];
    if (support) support[i] = scratch[i] > 0;
  }
  return L;
}

/* Returns the worst ratio |fd - an| / (atol + rtol |an|) over checked coordinates; counts (an
 * alpha whose +-eps moves the support is not checked: alpha_checked says how many were). */
static double gradcheck(int op, long rows, long n, double scale, int masked, double ratio,
                        double eps, double atol, double rtol, double perturb, long *checked,
                        long *skipped, double *worst_abs, double *alpha_ratio, long *alpha_checked) {
  float *x = falloc(rows * n), *o = falloc(rows * n), *gi = falloc(rows * n), *ga = falloc(rows);
  float *tmp = falloc(rows * n), alpha[16];
  double *w = dalloc(rows * n);
  float *g = falloc(rows * n);
  uint8_t *keep = masked ? malloc(rows * n) : NULL, *s1 = malloc(rows * n), *s2 = malloc(rows * n);
  fill_randn(x, rows * n, scale);
  for (long i = 0; i < rows * n; i++) { w[i] = rng_normal(); g[i] = (float)w[i]; }
  if (keep) {
    for (long i = 0; i < rows * n; i++) keep[i] = rng_unif() > 0.3;
    for (long r = 0; r < rows; r++) keep[r * n] = 1;
  }
  for (long r = 0; r < rows; r++) alpha[r] = (float)(1.1 + 1.5 * rng_unif());   /* incl. > 2 */
  op_fwd(op, o, x, keep, keep ? rows : 1, rows, n, alpha, ratio);
  op_bwd(op, gi, ga, g, o, rows, n, alpha);
  double worst = 0, wabs = 0;
  *checked = *skipped = 0;
  for (long i = 0; i < rows * n; i++) {
    if (keep && !keep[i]) continue;
    float x0 = x[i];
    x[i] = x0 + (float)eps;
    float xp = x[i];
    double Lp = loss(op, x, keep, rows, n, alpha, ratio, w, tmp, s1);
    x[i] = x0 - (float)eps;
    float xm = x[i];
    double Lm = loss(op, x, keep, rows, n, alpha, ratio, w, tmp, s2);
    x[i] = x0;
    if (memcmp(s1, s2, rows * n)) { (*skipped)++; continue; }   /* support changes */
    double fd = (Lp - Lm) / ((double)xp - (double)xm);
    double an = gi[i] * perturb;
    double d = fabs(fd - an), q = d / (atol + rtol * fabs(an));
    if (q > worst) worst = q;
    if (d > wabs) wabs = d;
    (*checked)++;
  }
  double aw = 0;
  *alpha_checked = 0;
  if (op == BISECT) {
    for (long r = 0; r < rows; r++) {
      float a0 = alpha[r];
      alpha[r] = a0 + (float)eps;
      float ap = alpha[r];
      double Lp = loss(op, x, keep, rows, n, alpha, ratio, w, tmp, s1);
      alpha[r] = a0 - (float)eps;
      float am = alpha[r];
      double Lm = loss(op, x, keep, rows, n, alpha, ratio, w, tmp, s2);
      alpha[r] = a0;
      if (memcmp(s1, s2, rows * n)) continue;
      double fd = (Lp - Lm) / ((double)ap - (double)am);
      double an = ga[r] * perturb;
      double q = fabs(fd - an) / (atol + rtol * fabs(an));
      if (q > aw) aw = q;
      (*alpha_checked)++;
    }
  }
  *alpha_ratio = aw;
  *worst_abs = wabs;
  free(x); free(o); free(gi); free(ga); free(tmp); free(w); free(g); free(keep); free(s1); free(s2);
  return worst;
}

static void test_gradients(void) {
  for (int op = 0; op < NOPS; op++) {
    for (int masked = 0; masked < 2; masked++) {
      long checked, skipped, alpha_checked;
      double wabs, aw;
      double ratio = 0.4, eps = 1e-3, atol = 5e-4, rtol = 5e-3;
      double q = gradcheck(op, 4, 11, 1.5, masked, ratio, eps, atol, rtol, 1.0, &checked, &skipped,
                           &wabs, &aw, &alpha_checked);
      char name[120];
      snprintf(name, sizeof name, "gradcheck: %s%s d/dx%s vs central differences (eps 1e-3)",
               op_name(op), masked ? " masked" : "", op == BISECT ? " and d/dalpha" : "");
      printf("  %s: %ld coords checked, %ld skipped (support change), max |fd-an| %.2e, dalpha ratio %.2f "
             "over %ld alphas\n", name, checked, skipped, wabs, aw, alpha_checked);
      CHECK(name, q <= 1 && aw <= 1 && checked >= 20 && (op != BISECT || alpha_checked >= 2),
            "worst ratio %.2f (max |fd-an| %.2e, atol %.0e rtol %.0e), alpha ratio %.2f, %ld checked, %ld alphas",
            q, wabs, atol, rtol, aw, checked, alpha_checked);
      if (!masked) {
        /* The same check must reject a gradient that is 2% off. */
        double q2 = gradcheck(op, 4, 11, 1.5, 0, ratio, eps, atol, rtol, 1.02, &checked, &skipped,
                              &wabs, &aw, &alpha_checked);
        snprintf(name, sizeof name, "gradcheck: %s rejects a gradient scaled by 1.02", op_name(op));
        CHECK(name, q2 > 1 && (op != BISECT || aw > 1), "worst ratio %.2f alpha ratio %.2f", q2, aw);
      }
    }
  }
}

/* The _write backward == the accumulating one run on zeros, bitwise (the sign of zero too), and
 * it never reads gin/galpha: they start as NaN. Rows: random, masked, all-masked (gradient 0),
 * NaN (forward NaN); every block geometry; 1 and 2 threads (rows*n above AL_PAR_MIN_WORK). */
static void test_write_mode(void) {
  const long lens[] = {1, 5, 15, 16, 17, 31, 33, 48, 65, 100, 257};
  int ok[NOPS];   /* one per row of the table, however many there are */
  for (int op = 0; op < NOPS; op++) ok[op] = 1;
  for (int t = 1; t <= 2; t++) {
    al_set_num_threads(t);
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
      const long n = lens[li], rows = t == 1 ? 40 : 1 + AL_PAR_MIN_WORK / n;
      float *x = falloc(rows * n), *g = falloc(rows * n), *o = falloc(rows * n);
      float *ga = falloc(rows * n), *gw = falloc(rows * n), *aa = falloc(rows), *aw = falloc(rows);
      float *alpha = falloc(rows);
      uint8_t *keep = malloc(rows * n);
      fill_randn(x, rows * n, 1.5);
      fill_randn(g, rows * n, 1.0);
      for (long i = 0; i < rows * n; i++) keep[i] = rng_unif() > 0.3;
      for (long r = 0; r < rows; r++) alpha[r] = (float)(1.05 + 0.9 * rng_unif());
      memset(keep + 3 * n, 0, n);               /* row 3: all masked */
      x[5 * n + (n - 1) / 2] = NAN;             /* row 5: NaN when kept */
      keep[5 * n + (n - 1) / 2] = 1;
      for (int op = 0; op < NOPS; op++) {
        op_fwd(op, o, x, keep, rows, rows, n, alpha, 0.3);
        memset(ga, 0, rows * n * 4); memset(aa, 0, rows * 4);
        for (long i = 0; i < rows * n; i++) gw[i] = NAN;
        for (long r = 0; r < rows; r++) aw[r] = NAN;
        al_status s1 = op_bwd(op, ga, aa, g, o, rows, n, alpha);
        al_status s2 = op_bwd_write(op, gw, aw, g, o, rows, n, alpha);
        ok[op] &= s1 == AL_OK && s2 == AL_OK && !memcmp(ga, gw, rows * n * 4);
        if (op == BISECT) {
          ok[op] &= !memcmp(aa, aw, rows * 4);
          /* gin only (for alpha < 1.25 its sums are then formed differently), and galpha only */
          memset(ga, 0, rows * n * 4);
          for (long i = 0; i < rows * n; i++) gw[i] = NAN;
          ok[op] &= al_entmax_bisect_bwd(ga, NULL, g, o, alpha, rows, n) == AL_OK &&
                    al_entmax_bisect_bwd_write(gw, NULL, g, o, alpha, rows, n) == AL_OK &&
                    !memcmp(ga, gw, rows * n * 4);
          for (long r = 0; r < rows; r++) aw[r] = NAN;
          ok[op] &= al_entmax_bisect_bwd_write(NULL, aw, g, o, alpha, rows, n) == AL_OK &&
                    !memcmp(aa, aw, rows * 4);
        }
      }
      free(x); free(g); free(o); free(ga); free(gw); free(aa); free(aw); free(alpha); free(keep);
    }
  }
  al_set_num_threads(1);
  for (int op = 0; op < NOPS; op++) {
    char name[120];
    snprintf(name, sizeof name,
             "backward: %s_bwd_write == accumulate into zeros (bitwise), never reads gin", op_name(op));
    CHECK(name, ok[op], "mismatch");
  }
}

/* NaN in, NaN gradient out: a row with a kept NaN or +inf has a NaN forward row, and its
 * backward gives NaN for every entry of gin (and galpha) under every normalizer, accumulating
 * or writing; the other rows (finite, all-masked) are unaffected, bitwise. Every block geometry
 * (n < 16 padded, rows in lanes, per-row paths). */
static void test_nan_grad(void) {
  const long lens[] = {3, 16, 17, 65, 300};
  int ok[NOPS];   /* one per row of the table, however many there are */
  for (int op = 0; op < NOPS; op++) ok[op] = 1;
  for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
    const long n = lens[li], rows = 20;
    float *x = falloc(rows * n), *xc = falloc(rows * n), *g = falloc(rows * n), *o = falloc(rows * n);
    float *oc = falloc(rows * n), *gi = falloc(rows * n), *gc = falloc(rows * n), *alpha = falloc(rows);
    float ga[20], gac[20];
    uint8_t *keep = malloc(rows * n);
    fill_randn(x, rows * n, 1.5);
    fill_randn(g, rows * n, 1.0);
    for (long i = 0; i < rows * n; i++) keep[i] = 1;
    memset(keep + 3 * n, 0, n);                             /* row 3: all masked */
    for (long r = 0; r < rows; r++) alpha[r] = (float)(1.05 + 0.9 * rng_unif());
    memcpy(xc, x, rows * n * 4);
    x[5 * n + n / 2] = NAN;                                 /* row 5: NaN */
    x[11 * n + n - 1] = INFINITY;                           /* row 11: +inf */
    for (int op = 0; op < NOPS; op++)
      for (int acc = 0; acc < 2; acc++) {
        op_fwd(op, o, x, keep, rows, rows, n, alpha, 0.3);
        op_fwd(op, oc, xc, keep, rows, rows, n, alpha, 0.3);
        for (long i = 0; i < rows * n; i++) gi[i] = gc[i] = acc ? 0.5f : NAN;
        for (long r = 0; r < rows; r++) ga[r] = gac[r] = acc ? 0.25f : NAN;
        if (acc) { op_bwd(op, gi, ga, g, o, rows, n, alpha); op_bwd(op, gc, gac, g, oc, rows, n, alpha); }
        else { op_bwd_write(op, gi, ga, g, o, rows, n, alpha); op_bwd_write(op, gc, gac, g, oc, rows, n, alpha); }
        for (long r = 0; r < rows; r++) {
          const int bad = r == 5 || r == 11;
          for (long j = 0; j < n; j++) {
            if (bad) ok[op] &= isnan(gi[r * n + j]);
            else ok[op] &= !memcmp(gi + r * n + j, gc + r * n + j, 4);
          }
          if (op == BISECT) ok[op] &= bad ? isnan(ga[r]) : !memcmp(ga + r, gac + r, 4);
        }
      }
    free(x); free(xc); free(g); free(o); free(oc); free(gi); free(gc); free(alpha); free(keep);
  }
  for (int op = 0; op < NOPS; op++) {
    char name[120];
    snprintf(name, sizeof name, "NaN: %s backward of a NaN/+inf row is NaN (other rows unchanged)", op_name(op));
    CHECK(name, ok[op], "a NaN row got a non-NaN gradient, or another row changed");
  }
}

/* entmax_bisect backward (which compacts the support before its log/exp) against the formula
 * evaluated in double on the same forward output, for every row length 1..80 (all block
 * geometries), masked and not, rows not a multiple of the kernel's row group, several alphas. */
static void test_bisect_bwd_lengths(void) {
  const float alphas[] = {1.05f, 1.2f, 1.5f, 1.8f, 2.0f, 2.6f};
  double worst_g = 0, worst_a = 0;
  int ok = 1;
  for (long n = 1; n <= 80; n++) {
    const long rows = 7;
    float *x = falloc(rows * n), *g = falloc(rows * n), *o = falloc(rows * n), *gi = falloc(rows * n);
    float *alpha = falloc(rows), *ga = falloc(rows);
    uint8_t *keep = malloc(rows * n);
    fill_randn(x, rows * n, 1.5);
    fill_randn(g, rows * n, 1.0);
    for (long i = 0; i < rows * n; i++) keep[i] = (n & 1) ? rng_unif() > 0.3 : 1;
    for (long r = 0; r < rows; r++) alpha[r] = alphas[(r + n) % 6];
    ok &= al_entmax_bisect_fwd(o, x, alpha, keep, rows, rows, n, 100, NULL) == AL_OK;
    for (long i = 0; i < rows * n; i++) gi[i] = 0.25f;   /* accumulate onto something */
    for (long r = 0; r < rows; r++) ga[r] = -0.5f;
    ok &= al_entmax_bisect_bwd(gi, ga, g, o, alpha, rows, n) == AL_OK;
    for (long r = 0; r < rows; r++) {
      const float *pr = o + r * n, *gr = g + r * n;
      const double a = alpha[r], am1 = a - 1.0;
      double sw = 0, sg = 0, H = 0, t = 0, gmax = 0;
      for (long j = 0; j < n; j++) {
        if (!(pr[j] > 0)) continue;
        const double pj = pr[j], w = pow(pj, 2.0 - a), S = pj * log(pj);
        sw += w; sg += w * gr[j]; H += S; t += gr[j] * (pj / am1 - S) / am1;
      }
      const double gw = sw > 0 ? sg / sw : 0;
      for (long j = 0; j < n; j++) {
        const double w = pr[j] > 0 ? pow(pr[j], 2.0 - a) : 0.0;
        gmax = fmax(gmax, fabs(w * (gr[j] - gw)));
      }
      for (long j = 0; j < n; j++) {
        const double w = pr[j] > 0 ? pow(pr[j], 2.0 - a) : 0.0;
        const double ref = 0.25 + w * (gr[j] - gw);
        const double d = fabs(gi[r * n + j] - ref) / (gmax + 1e-3);
        worst_g = fmax(worst_g, d);
        if (!(d < 2e-5)) ok = 0;
      }
      const double ra = sw > 0 ? t - gw * (1.0 / (am1 * am1) - H / am1) : 0.0;
      const double da = fabs((ga[r] + 0.5) - ra) / (fabs(ra) + 1e-2);
      worst_a = fmax(worst_a, da);
      if (!(da < 1e-3)) ok = 0;
    }
    free(x); free(g); free(o); free(gi); free(alpha); free(ga); free(keep);
  }
  printf("  entmax_bisect bwd vs double formula, n = 1..80: worst gin %.2e (of the row's max), worst dalpha %.2e (relative)\n",
         worst_g, worst_a);
  CHECK("entmax_bisect: backward == double formula on its output, every n 1..80, masks, alpha 1.05..2.6", ok,
        "worst gin %.2e, dalpha %.2e", worst_g, worst_a);
}


/* entmax_bisect backward for alpha > 2, against the Jacobian product in long double summed
 * pairwise -- gin_j = (w_j / sum w) sum_i w_i (g_j - g_i), w = p^(2-alpha) -- which cancels
 * nothing, on the kernel's own forward output. The float form w_j (g_j - <g, w~>) cancels to
 * float rounding times w_j for the entry whose w dominates (a small p: w = p^(2-alpha) is
 * largest there for alpha > 2): its error reached the size of the gradient at alpha = 6 and 10^14
 * times it at alpha = 20. And galpha against the same formula in long double. Rows of every
 * path (padded n = 3, rows in lanes n = 17 and 65, rows in lockstep n = 300), alpha > 2 alone
 * and mixed with alpha <= 2 rows in one call, accumulating and writing. */
static void test_bisect_bwd_big_alpha(void) {
  static const long ns[] = {3, 17, 65, 300};
  static const double alphas[] = {2.5, 3, 4, 6, 10, 20, 100};
  double worst_g = 0, worst_a = 0;
  int ok = 1;
  for (size_t in = 0; in < sizeof ns / sizeof *ns; in++)
    for (size_t ia = 0; ia < sizeof alphas / sizeof *alphas; ia++)
      for (int mixed = 0; mixed < 2; mixed++)
        for (int acc = 0; acc < 2; acc++) {
          const long n = ns[in], rows = 12;
          float *x = falloc(rows * n), *g = falloc(rows * n), *o = falloc(rows * n), *gi = falloc(rows * n);
          float alpha[12], ga[12];
          fill_randn(x, rows * n, alphas[ia] > 8 ? 0.03 : 0.3);
          fill_randn(g, rows * n, 1.0);
          for (long r = 0; r < rows; r++) alpha[r] = mixed && r % 3 == 1 ? (float)(1.05 + 0.9 * rng_unif()) : (float)alphas[ia];
          ok &= al_entmax_bisect_fwd(o, x, alpha, NULL, 1, rows, n, 50, NULL) == AL_OK;
          for (long i = 0; i < rows * n; i++) gi[i] = acc ? 0.25f : NAN;
          for (long r = 0; r < rows; r++) ga[r] = acc ? -0.5f : NAN;
          ok &= (acc ? al_entmax_bisect_bwd(gi, ga, g, o, alpha, rows, n)
                     : al_entmax_bisect_bwd_write(gi, ga, g, o, alpha, rows, n)) == AL_OK;
          for (long r = 0; r < rows; r++) {
            if (!(alpha[r] > 2.0f)) continue;
            const float *pr = o + r * n, *gr = g + r * n;
            const long double a = alpha[r], am1 = a - 1;
            long double S = 0, H = 0, gmax = 0;
            for (long j = 0; j < n; j++)
              if (pr[j] > 0) { S += powl(pr[j], 2 - a); H += pr[j] * logl(pr[j]); }
            long double ref[300], ra = 0;
            for (long j = 0; j < n; j++) {
              ref[j] = 0;
              if (!(pr[j] > 0)) continue;
              long double t = 0;
              for (long i = 0; i < n; i++) if (pr[i] > 0) t += powl(pr[i], 2 - a) * ((long double)gr[j] - gr[i]);
              const long double wj = powl(pr[j], 2 - a), wt = wj / S;
              ref[j] = wt * t;
              ra += gr[j] * ((pr[j] - wt) / (am1 * am1) - (pr[j] * logl(pr[j]) - wt * H) / am1);
              gmax = fmaxl(gmax, fabsl(ref[j]));
            }
            /* (less the rounding of the one float addition when accumulating: 2^-24 of the sum) */
            for (long j = 0; j < n; j++) {
              const long double got = gi[r * n + j], dd = fabsl(got - (acc ? 0.25L : 0.0L) - ref[j]);
              const double d = (double)(fmaxl(0, dd - 0x1p-24L * fabsl(got)) / (gmax + 1e-30L));
              worst_g = fmax(worst_g, gmax > 0 ? d : 0);
            }
            const long double gotA = ga[r], ddA = fabsl((gotA - (acc ? -0.5L : 0.0L)) - ra);
            const double da = (double)(fmaxl(0, ddA - 0x1p-24L * fabsl(gotA)) / (fabsl(ra) + 1e-5L));
            worst_a = fmax(worst_a, da);
          }
          free(x); free(g); free(o); free(gi);
        }
  printf("  entmax_bisect bwd alpha 2.5..100 vs pairwise long double: worst gin %.2e (of the row's max), "
         "worst dalpha %.2e\n", worst_g, worst_a);
  CHECK("entmax_bisect alpha > 2: backward == the pairwise Jacobian product (long double) to float rounding, "
        "every row path, mixed with alpha <= 2 rows",
        ok && worst_g < 2e-7 && worst_a < 1e-6, "worst gin %.2e, dalpha %.2e", worst_g, worst_a);
}

int main(void) {
  al_set_num_threads(1);
  printf("seed: splitmix64 0x9E3779B97F4A7C15, 1 thread unless stated\n");
  rng_at(711744);
  test_gradients();
  rng_at(1073147);
  test_write_mode();
  rng_at(3044097);
  test_nan_grad();
  rng_at(3076277);
  test_bisect_bwd_lengths();
  rng_at(3100000);
  test_bisect_bwd_big_alpha();
  CHECK_EXIT();
}
