/* tests/c/test_norm_identities.c -- identities and edge cases of the normalizers:
 *   bisect(1.5) == entmax15, bisect(2) == sparsemax, bisect(1.001) ~ softmax, shift invariance,
 *   topk(1) == softmax, masked == truncated, masked == -inf (bitwise), all-masked rows -> 0, NaN
 *   handling, ties (top-k lower index wins), thread-count independence (bitwise), backward
 *   accumulation, argument errors; top-k's rows ranked in lanes == the same rows alone
 *   (bitwise), rows holding both -0 and +0, and alpha-entmax's rows in lanes == the same rows
 *   alone (bitwise).
 * Every check prints PASS/FAIL/SKIP (tests/c/check.h). Single-threaded unless stated. */
#include "norm_check.h"

/* ---------------------------------------------------------------- 6. identities */
static void test_identities(void) {
  const long rows = 40, n = 65;
  float *x = falloc(rows * n), *a = falloc(rows * n), *b = falloc(rows * n), alpha[40];
  fill_randn(x, rows * n, 1.5);
  double ma;
  /* bisect(alpha = 1.5) == entmax15, bisect(2) == sparsemax */
  for (long r = 0; r < rows; r++) alpha[r] = 1.5f;
  al_entmax_bisect_fwd(a, x, alpha, NULL, 1, rows, n, 100, NULL);
  al_entmax15_fwd(b, x, NULL, 1, rows, n);
  ma = check_close_ratio(a, b, rows * n, 1e-6, 0, NULL) * 1e-6;
  CHECK("identity: entmax_bisect(alpha=1.5) == entmax15", ma <= 1e-6, "max diff %.2e", ma);
  printf("  entmax_bisect(1.5) vs entmax15: max diff %.2e\n", ma);
  for (long r = 0; r < rows; r++) alpha[r] = 2.0f;
  al_entmax_bisect_fwd(a, x, alpha, NULL, 1, rows, n, 100, NULL);
  al_sparsemax_fwd(b, x, NULL, 1, rows, n);
  ma = check_close_ratio(a, b, rows * n, 1e-6, 0, NULL) * 1e-6;
  CHECK("identity: entmax_bisect(alpha=2) == sparsemax", ma <= 1e-6, "max diff %.2e", ma);
  printf("  entmax_bisect(2) vs sparsemax: max diff %.2e\n", ma);
  /* alpha -> 1 approaches softmax: the gap shrinks roughly linearly in alpha - 1 */
  al_softmax_fwd(b, x, NULL, 1, rows, n);
  double gap[3];
  const float al1[3] = {1.1f, 1.01f, 1.001f};
  for (int k = 0; k < 3; k++) {
    for (long r = 0; r < rows; r++) alpha[r] = al1[k];
    al_entmax_bisect_fwd(a, x, alpha, NULL, 1, rows, n, 100, NULL);
    gap[k] = check_close_ratio(a, b, rows * n, 1, 0, NULL);
  }
  printf("  max |entmax_bisect(alpha) - softmax| at alpha = 1.1, 1.01, 1.001: %.2e %.2e %.2e\n",
         gap[0], gap[1], gap[2]);
  CHECK("identity: entmax_bisect(alpha=1.001) ~ softmax (gap < 2e-3, shrinking with alpha-1)",
        gap[2] < 2e-3 && gap[1] < gap[0] * 0.3 && gap[2] < gap[1] * 0.3, "gaps %.2e %.2e %.2e",
        gap[0], gap[1], gap[2]);
  /* top-k with ratio 1 is softmax */
  al_topk_softmax_fwd(a, x, 1.0, NULL, 1, rows, n);
  ma = check_close_ratio(a, b, rows * n, 1e-7, 0, NULL) * 1e-7;
  CHECK("identity: topk_softmax(ratio=1) == softmax", ma <= 1e-7, "max diff %.2e", ma);
  /* shift invariance: f(x + c) == f(x) */
  float *xs = falloc(rows * n);
  for (long i = 0; i < rows * n; i++) xs[i] = x[i] + 3.25f;
  for (long r = 0; r < rows; r++) alpha[r] = (float)op_alpha_list[r % 6];
  for (int op = 0; op < NOPS; op++) {
    op_fwd(op, a, x, NULL, 1, rows, n, alpha, 0.25);
    op_fwd(op, b, xs, NULL, 1, rows, n, alpha, 0.25);
    ma = check_close_ratio(a, b, rows * n, 2e-6, 0, NULL) * 2e-6;
    char name[100];
    snprintf(name, sizeof name, "identity: %s(x + 3.25) == %s(x)", op_name(op), op_name(op));
    CHECK(name, ma <= 2e-6, "max diff %.2e", ma);
  }
  /* all-equal rows: uniform for all but top-k; top-k gives the first k 1/k each */
  for (long i = 0; i < n; i++) xs[i] = 0.75f;
  for (int op = 0; op < NOPS; op++) {
    op_fwd(op, a, xs, NULL, 1, 1, n, alpha, 0.25);
    long k = op == TOPK ? al_topk_count(0.25, n) : n;
    double md = 0;
    for (long j = 0; j < n; j++) md = fmax(md, fabs(a[j] - (j < k ? 1.0 / k : 0.0)));
    char name[100];
    snprintf(name, sizeof name, "ties: %s of an all-equal row (n=65)%s", op_name(op),
             op == TOPK ? ": first k=17 get 1/17" : " is uniform");
    CHECK(name, md < 1e-7, "max diff %.2e, out[0]=%.8f out[64]=%.8f", md, a[0], a[n - 1]);
  }
  free(x); free(a); free(b); free(xs);
}

/* masked rows == truncated rows; keep == 0 == -inf (bitwise); all masked -> 0; NaN */
static void test_masks(void) {
  const long rows = 12, mrows = 4, n = 37;
  float *x = falloc(rows * n), *xi = falloc(rows * n), *o = falloc(rows * n), *o2 = falloc(rows * n);
  float *t = falloc(n), *to = falloc(n), alpha[12];
  uint8_t *keep = malloc(mrows * n);
  fill_randn(x, rows * n, 2.0);
  for (long i = 0; i < mrows * n; i++) keep[i] = rng_unif() > 0.4;
  memset(keep + 3 * n, 0, n);                        /* keep row 3 -> rows 9..11 all masked */
  for (long r = 0; r < rows; r++) alpha[r] = (float)op_alpha_list[r % 6];
  for (long i = 0; i < rows * n; i++) {
    const uint8_t *kr = keep + ((i / n) / (rows / mrows)) * n;
    xi[i] = kr[i % n] ? x[i] : -INFINITY;
    if (!kr[i % n]) x[i] = (i & 1) ? NAN : 1e30f;   /* garbage where masked */
  }
  for (int op = 0; op < NOPS; op++) {
    op_fwd(op, o, x, keep, mrows, rows, n, alpha, 0.3);
    double md = 0;
    int zeros = 1;
    for (long r = 0; r < rows; r++) {
      const uint8_t *kr = keep + (r / (rows / mrows)) * n;
      long m = 0;
      for (long j = 0; j < n; j++) if (kr[j]) t[m++] = x[r * n + j];
      if (m) op_fwd(op, to, t, NULL, 1, 1, m, alpha + r, 0.3);
      m = 0;
      for (long j = 0; j < n; j++) {
        float want = kr[j] ? to[m++] : 0.0f;
        if (!kr[j] && o[r * n + j] != 0.0f) zeros = 0;
        md = fmax(md, fabs(o[r * n + j] - want));
        if (isnan(o[r * n + j])) md = INFINITY;
      }
    }
    char name[120];
    snprintf(name, sizeof name, "mask: %s masked (garbage/NaN underneath) == truncated rows", op_name(op));
    CHECK(name, md <= 1e-6 && zeros, "max diff %.2e, exact zeros %d", md, zeros);
    int allz = 1;
    for (long i = 9 * n; i < rows * n; i++) allz &= o[i] == 0.0f;
    snprintf(name, sizeof name, "mask: %s all-masked rows give exact zeros", op_name(op));
    CHECK(name, allz, "nonzero or NaN in an all-masked row");
    op_fwd(op, o2, xi, NULL, 1, rows, n, alpha, 0.3);
    snprintf(name, sizeof name, "mask: %s with -inf entries == with keep=0 (bitwise)", op_name(op));
    CHECK(name, !memcmp(o, o2, rows * n * sizeof(float)), "outputs differ");
    /* a kept NaN poisons its row (only) */
    float y[6] = {1, 2, NAN, 0, 1, 2};
    float yo[6];
    op_fwd(op, yo, y, NULL, 1, 2, 3, alpha, 0.5);
    snprintf(name, sizeof name, "NaN: %s kept NaN -> NaN row, other rows fine", op_name(op));
    CHECK(name, isnan(yo[0]) && isnan(yo[2]) && isfinite(yo[3]) && fabs(yo[3] + yo[4] + yo[5] - 1) < 1e-6,
          "row0 %g %g %g row1 %g %g %g", yo[0], yo[1], yo[2], yo[3], yo[4], yo[5]);
  }
  free(x); free(xi); free(o); free(o2); free(t); free(to); free(keep);
}

/* A row whose kept entries are all NaN (the rest -inf or masked) is a NaN row like any other
 * with a kept NaN: NaN out, and NaN gradient (accumulating and writing), for every normalizer.
 * Softmax gave zeros and a zero gradient there at most lengths: its vector max drops NaN lanes,
 * so it took the row for one with nothing kept. Lengths below, at and above one block and two;
 * several rows per call (softmax runs rows in pairs; short rows are padded in batches); a row
 * of nothing but -inf next to them still gives exact zeros and zero gradient. */
static void test_nan_only_rows(void) {
  const long lens[] = {1, 2, 3, 15, 16, 17, 33};
  enum { R = 6 };   /* all NaN; NaN first + -inf; -inf + NaN last; NaN kept + masked; all -inf; finite */
  int ok[NOPS];
  for (int op = 0; op < NOPS; op++) ok[op] = 1;
  for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
    const long n = lens[li];
    float *x = falloc(R * n), *o = falloc(R * n), *g = falloc(R * n), *gi = falloc(R * n);
    float alpha[R], ga[R];
    uint8_t *keep = malloc(R * n);
    fill_randn(x, R * n, 1.0);
    fill_randn(g, R * n, 1.0);
    for (long i = 0; i < R * n; i++) keep[i] = 1;
    for (long j = 0; j < n; j++) {
      x[0 * n + j] = NAN;
      x[1 * n + j] = j == 0 ? NAN : -INFINITY;
      x[2 * n + j] = j == n - 1 ? NAN : -INFINITY;
      keep[3 * n + j] = j == n / 2;
      if (j == n / 2) x[3 * n + j] = NAN;
      x[4 * n + j] = -INFINITY;
    }
    for (long r = 0; r < R; r++) alpha[r] = (float)op_alpha_list[r % 6];
    for (int op = 0; op < NOPS; op++)
      for (int acc = 0; acc < 2; acc++) {
        ok[op] &= op_fwd(op, o, x, keep, R, R, n, alpha, 0.3) == AL_OK;
        for (long i = 0; i < R * n; i++) gi[i] = acc ? 0.5f : NAN;
        for (long r = 0; r < R; r++) ga[r] = acc ? 0.25f : NAN;
        ok[op] &= (acc ? op_bwd(op, gi, ga, g, o, R, n, alpha)
                       : op_bwd_write(op, gi, ga, g, o, R, n, alpha)) == AL_OK;
        for (long r = 0; r < 4; r++)
          for (long j = 0; j < n; j++) ok[op] &= isnan(o[r * n + j]) && isnan(gi[r * n + j]);
        for (long j = 0; j < n; j++)
          ok[op] &= o[4 * n + j] == 0.0f && gi[4 * n + j] == (acc ? 0.5f : 0.0f) && isfinite(o[5 * n + j]);
        if (op == BISECT)
          ok[op] &= isnan(ga[0]) && isnan(ga[1]) && isnan(ga[2]) && isnan(ga[3]) && ga[4] == (acc ? 0.25f : 0.0f);
      }
    free(x); free(o); free(g); free(gi); free(keep);
  }
  for (int op = 0; op < NOPS; op++) {
    char name[160];
    snprintf(name, sizeof name,
             "NaN: %s of a row keeping only NaN (rest -inf/masked) is NaN, gradient NaN; n = 1..33", op_name(op));
    CHECK(name, ok[op], "a NaN-only row came out as numbers (zeros?) or its gradient did");
  }
}

static void test_topk_ties(void) {
  float o[8];
  /* {1,2,2,2,0}, k = 2: indices 1 and 2 win (lower index), exactly 1/2 each */
  al_topk_softmax_fwd(o, (float[]){1, 2, 2, 2, 0}, 0.4, NULL, 1, 1, 5);
  CHECK("ties: topk {1,2,2,2,0} k=2 -> {0,.5,.5,0,0}",
        o[0] == 0 && o[1] == 0.5f && o[2] == 0.5f && o[3] == 0 && o[4] == 0,
        "got {%g,%g,%g,%g,%g}", o[0], o[1], o[2], o[3], o[4]);
  /* {5,3,3,3,3,1}, k = 3: 5 and the first two 3s */
  al_topk_softmax_fwd(o, (float[]){5, 3, 3, 3, 3, 1}, 0.5, NULL, 1, 1, 6);
  double e = exp(-2.0), s = 1 + 2 * e;
  CHECK("ties: topk {5,3,3,3,3,1} k=3 -> {1,e^-2,e^-2,0,0,0}/(1+2e^-2)",
        fabs(o[0] - 1 / s) < 1e-7 && fabs(o[1] - e / s) < 1e-7 && fabs(o[2] - e / s) < 1e-7 &&
        o[3] == 0 && o[4] == 0 && o[5] == 0,
        "got {%g,%g,%g,%g,%g,%g}", o[0], o[1], o[2], o[3], o[4], o[5]);
  /* ties above the boundary, tie at the max: {4,4,4,0}, k = 2 -> {.5,.5,0,0} */
  al_topk_softmax_fwd(o, (float[]){4, 4, 4, 0}, 0.5, NULL, 1, 1, 4);
  CHECK("ties: topk {4,4,4,0} k=2 -> {.5,.5,0,0}", o[0] == 0.5f && o[1] == 0.5f && o[2] == 0 && o[3] == 0,
        "got {%g,%g,%g,%g}", o[0], o[1], o[2], o[3]);
  /* random rows with many repeated values: exactly k nonzeros and the reference's choice */
  const long rows = 200, n = 40;
  float *x = falloc(rows * n), *y = falloc(rows * n);
  double *ref = dalloc(n);
  for (long i = 0; i < rows * n; i++) x[i] = (float)floor(rng_unif() * 6);
  int ok = 1;
  double ratios[] = {0.1, 0.25, 0.5, 0.75};
  for (int q = 0; q < 4; q++) {
    al_topk_softmax_fwd(y, x, ratios[q], NULL, 1, rows, n);
    for (long r = 0; r < rows; r++) {
      ref_row(TOPK, ref, x + r * n, NULL, n, 0, ratios[q]);
      long nz = 0;
      for (long j = 0; j < n; j++) {
        nz += y[r * n + j] > 0;
        if ((y[r * n + j] > 0) != (ref[j] > 0) || fabs(y[r * n + j] - ref[j]) > 1e-6) ok = 0;
      }
      if (nz != al_topk_count(ratios[q], n)) ok = 0;
    }
  }
  CHECK("ties: topk on rows of small integers (many ties): exactly k nonzeros, lower index wins", ok,
        "mismatch with the stable-sort reference");
  free(x); free(y); free(ref);
}

/* k = max(1, ceil(ratio * n_kept)), by hand: ratio * n is sometimes a hair above a whole number
 * in double (0.07 * 100 = 7.000000000000001, 0.14 * 50 and 0.55 * 100 too), and must then count
 * as that number, not the next one up; a real excess (0.0700001 * 100) still rounds up. */
static void test_topk_count(void) {
  const struct { double ratio; int64_t n, k; } c[] = {
      {0.07, 100, 7}, {0.14, 50, 7}, {0.55, 100, 55}, {0.25, 17, 5}, {0.0700001, 100, 8},
      {0.01, 10, 1}, {1.0, 65, 65}, {0.5, 0, 0}};
  int ok = 1;
  char where[80] = "";
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
    if (al_topk_count(c[i].ratio, c[i].n) != c[i].k && ok) {
      ok = 0;
      snprintf(where, sizeof where, "ratio %.9g n %lld: %lld, want %lld", c[i].ratio, (long long)c[i].n,
               (long long)al_topk_count(c[i].ratio, c[i].n), (long long)c[i].k);
    }
  /* and the kernel keeps that many: ratio 0.14 of 50 distinct scores 0..49 -> the top 7 */
  float x[50], o[50];
  for (int j = 0; j < 50; j++) x[j] = (float)((j * 17) % 50);   /* a permutation of 0..49 */
  al_topk_softmax_fwd(o, x, 0.14, NULL, 1, 1, 50);
  int nz = 0, top = 1;
  for (int j = 0; j < 50; j++) {
    nz += o[j] > 0;
    if ((o[j] > 0) != (x[j] >= 43)) top = 0;
  }
  CHECK("topk: k = ceil(ratio * n) forgives double's hair above a whole number (0.14 * 50 -> 7)",
        ok && nz == 7 && top, "%s; %d kept of 50 at ratio 0.14", where, nz);
}

/* ---------------------------------------------------------------- 7. threads, bwd, errors */
static void test_threads(void) {
  const long rows = 700, n = 65;   /* rows*n >= AL_PAR_MIN_WORK: the parallel path */
  float *x = falloc(rows * n), *g = falloc(rows * n), *o1 = falloc(rows * n), *o2 = falloc(rows * n);
  float *g1 = falloc(rows * n), *g2 = falloc(rows * n), *a1 = falloc(rows), *a2 = falloc(rows);
  float *alpha = falloc(rows);
  uint8_t *keep = malloc(7 * n);
  fill_randn(x, rows * n, 2.0);
  fill_randn(g, rows * n, 1.0);
  for (long i = 0; i < 7 * n; i++) keep[i] = rng_unif() > 0.2;
  for (long r = 0; r < rows; r++) alpha[r] = (float)(1.05 + 0.9 * rng_unif());
  for (int op = 0; op < NOPS; op++) {
    al_set_num_threads(1);
    op_fwd(op, o1, x, keep, 7, rows, n, alpha, 0.25);
    memset(g1, 0, rows * n * 4); memset(a1, 0, rows * 4);
    op_bwd(op, g1, a1, g, o1, rows, n, alpha);
    al_set_num_threads(2);
    op_fwd(op, o2, x, keep, 7, rows, n, alpha, 0.25);
    memset(g2, 0, rows * n * 4); memset(a2, 0, rows * 4);
    op_bwd(op, g2, a2, g, o2, rows, n, alpha);
    al_set_num_threads(1);
    char name[100];
    snprintf(name, sizeof name, "threads: %s fwd+bwd identical with 1 and 2 threads (bitwise)", op_name(op));
    CHECK(name, !memcmp(o1, o2, rows * n * 4) && !memcmp(g1, g2, rows * n * 4) && !memcmp(a1, a2, rows * 4),
          "results differ");
  }
  /* backward accumulates: two calls give twice one call */
  for (int op = 0; op < NOPS; op++) {
    op_fwd(op, o1, x, NULL, 1, 50, n, alpha, 0.25);
    memset(g1, 0, 50 * n * 4); memset(a1, 0, 50 * 4);
    op_bwd(op, g1, a1, g, o1, 50, n, alpha);
    memcpy(g2, g1, 50 * n * 4); memcpy(a2, a1, 50 * 4);
    op_bwd(op, g2, a2, g, o1, 50, n, alpha);
    int ok = 1;
    for (long i = 0; i < 50 * n; i++) ok &= g2[i] == 2 * g1[i];
    for (long r = 0; r < 50; r++) ok &= a2[r] == 2 * a1[r];
    char name[100];
    snprintf(name, sizeof name, "backward: %s accumulates into gin (and galpha)", op_name(op));
    CHECK(name, ok, "second call did not add the same amount");
  }
  /* support counts */
  al_sparsemax_fwd(o1, x, NULL, 1, rows, n);
  int32_t *cnt = malloc(rows * sizeof(int32_t));
  al_support_count(cnt, o1, rows, n);
  int ok = 1;
  for (long r = 0; r < rows; r++) {
    int32_t c = 0;
    for (long j = 0; j < n; j++) c += o1[r * n + j] > 0;
    ok &= c == cnt[r] && c >= 1;
  }
  CHECK("al_support_count == count of out > 0", ok, "mismatch");
  free(cnt); free(x); free(g); free(o1); free(o2); free(g1); free(g2); free(a1); free(a2);
  free(alpha); free(keep);
}

static void test_bisect_iters(void) {
  const long rows = 512, n = 65;
  float *x = falloc(rows * n), *o = falloc(rows * n), *alpha = falloc(rows);
  fill_randn(x, rows * n, 1.0);
  for (long r = 0; r < rows; r++) alpha[r] = (float)(1.05 + 0.9 * rng_unif());
  int used = -1;
  al_status st = al_entmax_bisect_fwd(o, x, alpha, NULL, 1, rows, n, 100, &used);
  printf("  entmax_bisect: max passes used over 512 rows (alpha in [1.05,1.95]): %d\n", used);
  CHECK("entmax_bisect: converges in few passes (<= 10) for alpha in [1.05, 1.95]",
        st == AL_OK && used >= 2 && used <= 10, "used %d", used);
  st = al_entmax_bisect_fwd(o, x, alpha, NULL, 1, rows, n, 2, &used);
  double ws = 0;
  for (long r = 0; r < rows; r++) {
    double s = 0;
    for (long j = 0; j < n; j++) s += o[r * n + j];
    ws = fmax(ws, fabs(s - 1));
  }
  CHECK("entmax_bisect: max_iter=2 is honoured and rows still sum to 1", st == AL_OK && used <= 2 && ws < 1e-6,
        "used %d, max |sum-1| %.2e", used, ws);
  free(x); free(o); free(alpha);
}

static void test_errors(void) {
  float x[6] = {0}, o[6], alpha[2] = {1.5f, 1.0f};
  uint8_t keep[6] = {1, 1, 1, 1, 1, 1};
  al_status st = al_entmax_bisect_fwd(o, x, alpha, NULL, 1, 2, 3, 50, NULL);
  CHECK("errors: alpha = 1 -> AL_EINVAL naming alpha[1] = 1",
        st == AL_EINVAL && strstr(al_errmsg(), "alpha[1] = 1"), "status %d msg '%s'", st, al_errmsg());
  alpha[1] = NAN;
  st = al_entmax_bisect_fwd(o, x, alpha, NULL, 1, 2, 3, 50, NULL);
  CHECK("errors: alpha = NaN -> AL_EINVAL", st == AL_EINVAL && strstr(al_errmsg(), "alpha[1]"),
        "status %d msg '%s'", st, al_errmsg());
  alpha[1] = 1.2f;
  st = al_entmax_bisect_bwd(o, NULL, x, x, (float[]){0.5f, 2.0f}, 2, 3);
  CHECK("errors: bisect backward checks alpha too", st == AL_EINVAL && strstr(al_errmsg(), "alpha[0] = 0.5"),
        "status %d msg '%s'", st, al_errmsg());
  st = al_entmax_bisect_fwd(o, x, alpha, NULL, 1, 2, 3, 0, NULL);
  CHECK("errors: max_iter = 0 -> AL_EINVAL", st == AL_EINVAL, "status %d", st);
  double bad_r[] = {0.0, -0.5, 1.5, NAN};
  int ok = 1;
  for (int i = 0; i < 4; i++) ok &= al_topk_softmax_fwd(o, x, bad_r[i], NULL, 1, 2, 3) == AL_EINVAL;
  CHECK("errors: topk ratio 0, -0.5, 1.5, NaN -> AL_EINVAL naming the ratio",
        ok && strstr(al_errmsg(), "ratio"), "msg '%s'", al_errmsg());
  /* the refused value to the digit that decides (%g printed it as "ratio = 1") */
  st = al_topk_softmax_fwd(o, x, 1.0000001, NULL, 1, 2, 3);
  CHECK("errors: topk ratio 1.0000001 -> the message says 1.0000001, not 1",
        st == AL_EINVAL && strstr(al_errmsg(), "ratio = 1.0000001,"), "msg '%s'", al_errmsg());
  alpha[0] = 1.5f;
  alpha[1] = 1.0000001f;
  st = al_entmax_bisect_fwd(o, x, alpha, NULL, 1, 2, 3, 50, NULL);
  CHECK("errors: alpha 1.0000001f -> refused as below 1.0001, the value shown as the float it is",
        st == AL_EINVAL && strstr(al_errmsg(), "alpha[1] = 1.0000001 is below 1.0001"), "msg '%s'", al_errmsg());
  st = al_softmax_fwd(o, x, keep, 4, 6, 1);
  CHECK("errors: rows % mrows != 0 -> AL_EINVAL with shapes", st == AL_EINVAL && strstr(al_errmsg(), "(4, 1)"),
        "status %d msg '%s'", st, al_errmsg());
  st = al_sparsemax_fwd(o, x, NULL, 1, 2, -3);
  CHECK("errors: negative n -> AL_EINVAL", st == AL_EINVAL && strstr(al_errmsg(), "n=-3"), "status %d msg '%s'",
        st, al_errmsg());
  st = al_entmax15_fwd(NULL, x, NULL, 1, 2, 3);
  CHECK("errors: NULL output -> AL_EINVAL", st == AL_EINVAL, "status %d", st);
  CHECK("errors: empty input (rows=0 or n=0) is fine",
        al_softmax_fwd(o, x, NULL, 1, 0, 3) == AL_OK && al_entmax15_fwd(o, x, NULL, 1, 3, 0) == AL_OK &&
        al_topk_softmax_fwd(o, x, 0.5, NULL, 1, 0, 0) == AL_OK,
        "nonzero status");
  /* an empty batch's key mask has no rows either: it was refused as "keep mask is (0, 3), want
   * (mrows, 3) with rows % mrows == 0" (al.softmax of a (0, 3) x with a mask failed so) */
  st = al_softmax_fwd(o, x, keep, 0, 0, 3);
  if (st == AL_OK) st = al_entmax_bisect_fwd(o, x, alpha, keep, 0, 0, 3, 50, NULL);
  if (st == AL_OK) st = al_topk_softmax_fwd(o, x, 0.5, keep, 0, 0, 0);
  CHECK("errors: empty input with a keep mask of no rows (mrows = 0) is fine", st == AL_OK, "status %d msg '%s'",
        st, al_errmsg());
  st = al_sparsemax_fwd(o, x, keep, 0, 2, 3);
  CHECK("errors: rows > 0 with mrows = 0 -> AL_EINVAL", st == AL_EINVAL && strstr(al_errmsg(), "(0, 3)"),
        "status %d msg '%s'", st, al_errmsg());
  st = al_sparsemax_fwd(o, x, keep, -1, 0, 3);
  CHECK("errors: mrows < 0 -> AL_EINVAL", st == AL_EINVAL, "status %d msg '%s'", st, al_errmsg());
}


/* Top-k ranks the band of up to 16 rows of a batch at once (rows in lanes) and other rows one
 * by one; a row's result must not depend on its batch. Batches of 53 mixed rows against each row
 * alone (which takes the one-by-one path), bitwise: normal rows (most; so the lanes path runs),
 * 1e4-scaled, keep-masked, -inf entries, small integers (ties at the boundary), skewed rows (the
 * band misses), constant rows, a NaN row. */
static void test_topk_batches(void) {
  static const long ns[] = {17, 33, 65, 100, 257};
  static const double ratios[] = {0.125, 0.25, 0.5, 0.9};
  int same = 1, same1 = 1;
  long bad_n = 0, bad_r = 0, cases = 0, bad1_n = 0, lane1_cases = 0;
  double bad_q = 0, bad1_q = 0;
  for (size_t in = 0; in < sizeof ns / sizeof *ns; in++) {
    const long n = ns[in], rows = 53;
    float *x = falloc(rows * n), *o = falloc(rows * n), *o1 = falloc(n), *og = falloc(rows * n);
    uint8_t *keep = malloc(rows * n);
    for (long r = 0; r < rows; r++) {
      const int kind = (int)(r % 13);
      for (long q = 0; q < n; q++) {
        double v = rng_normal();
        if (kind == 7) v *= 1e4;
        if (kind == 9) v = (double)(int)(rng_unif() * 5);
        if (kind == 10) v = -log(rng_unif() + 1e-12) * (q % 7 == 0 ? 30 : 1);
        if (kind == 11) v = 0.25;
        x[r * n + q] = (float)v;
        keep[r * n + q] = kind == 12 ? 0 : rng_unif() > 0.2 || q == 0;
        if (kind == 8 && q % 3 == 1) x[r * n + q] = -INFINITY;
      }
      if (r == 25) x[r * n + n / 2] = NAN;
      if (r == 38) x[r * n + n - 1] = NAN;
      if (r % 4 == 1) x[r * n + n - 1] = x[r * n + n - 2];   /* the last column tied */
      if (r % 9 == 2) x[r * n + n - 1] = -INFINITY;
    }
    for (size_t iq = 0; iq < sizeof ratios / sizeof *ratios; iq++)
      for (int masked = 0; masked < 2; masked++) {
        const uint8_t *kp = masked ? keep : NULL;
        if (al_topk_softmax_fwd(o, x, ratios[iq], kp, masked ? rows : 1, rows, n) != AL_OK) {
          same = 0;
          continue;
        }
        /* n % 16 == 1: the last column in lanes == the generic last block */
        al_topk_lane1_off_ = 1;
        al_topk_softmax_fwd(og, x, ratios[iq], kp, masked ? rows : 1, rows, n);
        al_topk_lane1_off_ = 0;
        if (n % 16 == 1) {
          lane1_cases++;
          if (memcmp(og, o, (size_t)(rows * n) * sizeof(float)) != 0) {
            if (same1) { bad1_n = n; bad1_q = ratios[iq]; }
            same1 = 0;
          }
        }
        for (long r = 0; r < rows; r++) {
          al_topk_softmax_fwd(o1, x + r * n, ratios[iq], kp ? kp + r * n : NULL, 1, 1, n);
          cases++;
          if (memcmp(o1, o + r * n, (size_t)n * sizeof(float)) != 0) {
            if (same) { bad_n = n; bad_r = r; bad_q = ratios[iq]; }
            same = 0;
          }
        }
      }
    free(x); free(o); free(o1); free(og); free(keep);
  }
  CHECK("topk_softmax: n % 16 == 1 rows with the last column in lanes == the generic last block "
        "(n = 17, 33, 65, 257; bitwise)", same1 && lane1_cases == 32,
        "first difference at n=%ld ratio %g (%ld cases)", bad1_n, bad1_q, lane1_cases);
  CHECK("topk_softmax: a row's result does not depend on its batch (53 mixed rows, n = 17..257, "
        "ratios .125-.9, masks, ties, band misses, -inf, NaN; bitwise)",
        same, "first differing row %ld at n=%ld ratio %g (of %ld)", bad_r, bad_n, bad_q, cases);
}

/* alpha-entmax runs the Newton rows of a batch in lanes, 16 rows a vector, and a batch's last few
 * iterating rows (or a batch of few rows) one by one; a row's result must not depend on its
 * batch. Batches of 53 mixed rows against each row alone, bitwise: flat rows (scores ~ N(0,
 * 0.1^2), a fresh model's: every entry a candidate), N(0,1) rows, 1e4-scaled, keep-masked,
 * -inf entries, constant rows, a NaN row; per-row alphas in (1.05, 1.95), with some of 2.5
 * (regula falsi rows) and of 1.5 (the entmax15 value); n from 16 to 257 (above 256 rows go as
 * (row, block) items instead of lanes). */
static void test_bisect_batches(void) {
  static const long ns[] = {16, 17, 33, 65, 100, 256, 257};
  int same = 1;
  long bad_n = 0, bad_r = 0, cases = 0;
  int bad_masked = 0;
  for (size_t in = 0; in < sizeof ns / sizeof *ns; in++) {
    const long n = ns[in], rows = 53;
    float *x = falloc(rows * n), *o = falloc(rows * n), *o1 = falloc(n), *alpha = falloc(rows);
    uint8_t *keep = malloc(rows * n);
    for (long r = 0; r < rows; r++) {
      const int kind = (int)(r % 11);
      alpha[r] = r % 17 == 5 ? 2.5f : r % 13 == 3 ? 1.5f : (float)(1.05 + 0.9 * rng_unif());
      for (long q = 0; q < n; q++) {
        double v = rng_normal();
        if (kind <= 3) v *= 0.1;
        if (kind == 7) v *= 1e4;
        if (kind == 9) v = 0.25;
        x[r * n + q] = (float)v;
        keep[r * n + q] = kind == 10 ? 0 : rng_unif() > 0.2 || q == 0;
        if (kind == 8 && q % 3 == 1) x[r * n + q] = -INFINITY;
      }
      if (r == 27) x[r * n + n / 2] = NAN;
    }
    for (int masked = 0; masked < 2; masked++) {
      const uint8_t *kp = masked ? keep : NULL;
      if (al_entmax_bisect_fwd(o, x, alpha, kp, masked ? rows : 1, rows, n, 50, NULL) != AL_OK) {
        same = 0;
        continue;
      }
      for (long r = 0; r < rows; r++) {
        al_entmax_bisect_fwd(o1, x + r * n, alpha + r, kp ? kp + r * n : NULL, 1, 1, n, 50, NULL);
        cases++;
        if (memcmp(o1, o + r * n, (size_t)n * sizeof(float)) != 0) {
          if (same) { bad_n = n; bad_r = r; bad_masked = masked; }
          same = 0;
        }
      }
    }
    free(x); free(o); free(o1); free(alpha); free(keep);
  }
  CHECK("entmax_bisect: a row's result does not depend on its batch (53 mixed rows, n = 16..257, "
        "alphas 1.05-2.5, flat rows, masks, -inf, NaN; bitwise)",
        same && cases == 7 * 2 * 53, "first differing row %ld at n=%ld masked=%d (of %ld)", bad_r, bad_n,
        bad_masked, cases);
}

/* ------------------------------------------------- top-k on rows holding both -0 and +0 */
/* The counting search of top-k's forward used to key -0 and +0 apart while counting them as
 * equal, and never returned on such rows when the k-th value was 0 (found by behaviour_hash).
 * A regression would hang, so an alarm turns it into a FAIL line. */
static void topk_zeros_alarm(int sig) {
  (void)sig;
  static const char msg[] = "FAIL: topk: rows with -0 and +0 at the k-th value (the forward did not return within 20 s)\n";
  if (write(1, msg, sizeof msg - 1) < 0) _exit(1);
  _exit(1);
}
static void test_topk_signed_zeros(void) {
  signal(SIGALRM, topk_zeros_alarm);
  alarm(20);
  /* the row that hung: 65 scores on a 0.5 grid, a keep mask of 48, ratio 0.3 (k = 15) */
  static const float row[65] = {
      0.5f, -1, -0.5f, -0.0f, -1.5f, -1, -1, 0, 2.5f, 1, 2, 0.5f, 0, 0, -0.5f, 0.5f, -0.5f, 0,
      -0.5f, -0.5f, 0.5f, -0.5f, 1, 0, 1, 0, 0, -0.5f, -0.5f, -1, 0.5f, 0.5f, 1, -0.5f, -0.5f,
      0.5f, -0.5f, -0.5f, 0.5f, -0.5f, 1, 1, 0.5f, -0.5f, 0.5f, 0, -0.0f, -1.5f, -0.5f, -0.5f,
      -0.5f, 1.5f, 0.5f, -0.5f, 1, -0.5f, -0.5f, 1, 0, 0, -0.0f, -1.5f, 0, -1.5f, 0.5f};
  static const char keep_bits[] =
      "11111110100111101101010111111110100110111011111111111000111111100";
  uint8_t keep[65];
  for (int j = 0; j < 65; j++) keep[j] = keep_bits[j] == '1';
  float y[65];
  double ref[65];
  al_topk_softmax_fwd(y, row, 0.3, keep, 1, 1, 65);
  al_topk_softmax_ref_fwd(ref, row, keep, 65, 0.3);
  long nz = 0;
  double err = 0;
  for (int j = 0; j < 65; j++) {
    nz += y[j] > 0;
    err = fmax(err, fabs(y[j] - ref[j]));
  }
  CHECK("topk: the row with -0 and +0 at the k-th value returns, = reference, k = 15 nonzeros",
        nz == 15 && err < 1e-6, "nonzeros %ld, max |y - ref| %g", nz, err);
  /* many such rows: a 0.5 grid with zeros of either sign, masks, several ratios; each output
   * equals the reference, and flipping every zero's sign changes no bit of it */
  const long rows = 400, n = 65;
  float *x = falloc(rows * n), *xp = falloc(rows * n), *a = falloc(rows * n), *b = falloc(rows * n);
  uint8_t *km = malloc((size_t)(rows * n));
  double *r1 = dalloc(n);
  uint64_t st = 0x2545F4914F6CDD1Dull;
  for (long i = 0; i < rows * n; i++) {
    st ^= st << 13; st ^= st >> 7; st ^= st << 17;
    const int v = (int)(st % 9) - 4;                   /* -2 .. 2 in steps of 0.5 */
    x[i] = v == 0 ? ((st >> 20) & 1 ? -0.0f : 0.0f) : 0.5f * (float)v;
    xp[i] = x[i] == 0 ? 0.0f : x[i];
    km[i] = ((st >> 33) % 10) < 8;
  }
  const double ratios[] = {0.125, 0.25, 0.3, 0.5, 0.75};
  int ok_ref = 1, ok_same = 1;
  for (int q = 0; q < 5; q++) {
    for (int masked = 0; masked < 2; masked++) {
      for (long r = 0; r < rows; r++) {
        const uint8_t *kr = masked ? km + r * n : NULL;
        al_topk_softmax_fwd(a + r * n, x + r * n, ratios[q], kr, 1, 1, n);
        al_topk_softmax_fwd(b + r * n, xp + r * n, ratios[q], kr, 1, 1, n);
        al_topk_softmax_ref_fwd(r1, x + r * n, kr, n, ratios[q]);
        for (long j = 0; j < n; j++)
          if ((a[r * n + j] > 0) != (r1[j] > 0) || fabs(a[r * n + j] - r1[j]) > 1e-6) ok_ref = 0;
      }
      if (memcmp(a, b, sizeof(float) * (size_t)(rows * n)) != 0) ok_same = 0;
    }
  }
  alarm(0);
  CHECK("topk: 4,000 grid rows with signed zeros (5 ratios, masked and not) return and = reference",
        ok_ref, "mismatch with the reference");
  CHECK("topk: -0 and +0 select alike (bitwise the same output)", ok_same, "outputs differ");
  free(x); free(xp); free(a); free(b); free(km); free(r1);
}


int main(void) {
  al_set_num_threads(1);
  printf("seed: splitmix64 0x9E3779B97F4A7C15, 1 thread unless stated\n");
  rng_at(714664);
  test_identities();
  rng_at(719864);
  test_masks();
  rng_at(720900);
  test_nan_only_rows();   /* (after the others' draws: their inputs stay as they were) */
  rng_at(720900);
  test_topk_ties();
  test_topk_count();
  rng_at(728900);
  test_threads();
  rng_at(912055);
  test_bisect_iters();
  rng_at(979127);
  test_errors();
  rng_at(26003413);
  test_topk_batches();
  rng_at(26117949);
  test_topk_signed_zeros();  /* its own generator */
  rng_at(26300529);
  test_bisect_batches();
  CHECK_EXIT();
}
