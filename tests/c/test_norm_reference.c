/* tests/c/test_norm_reference.c -- every normalizer (the registry's rows) against references:
 *   - closed forms derived by hand on tiny inputs;
 *   - the scalar reference of each normalizer's file (sort-based sparsemax and entmax15,
 *     200-step bisection, stable-sort top-k, in double) on many shapes and scales, incl.
 *     1000*randn, masks, n = 1 and n = 4096, every row length 1..48 (the kernels' 16-lane blocks:
 *     padded rows, whole blocks, an overlapped last block) and skewed/bimodal rows (top-k's band
 *     guess misses, the search takes over); every backward against the reference backward;
 *   - reference vectors tests/ref/normalizers.json (made once from the shared PyTorch
 *     definitions by tests/ref/make_normalizer_refs.py), forward, backward and d/dalpha.
 * Every check prints PASS/FAIL/SKIP (tests/c/check.h). Single-threaded. */
#include "norm_check.h"

/* ---------------------------------------------------------------- 2. closed forms */
/* How many hand-derived cases each kind has: a kind added to the table needs its own (the
 * kernels and the scalar reference could otherwise share one mistake, unseen). */
static int closed_cases[NOPS];

static void check_vec(const char *name, int op, const float *x, long n, const double *want,
                      double alpha, double ratio, double atol) {
  closed_cases[op]++;
  float *o = falloc(n), a = (float)alpha;
  al_status st = op_fwd(op, o, x, NULL, 1, 1, n, &a, ratio);
  double md;
  double r = cmp_ref(o, want, n, atol, 0, &md);
  CHECK(name, st == AL_OK && r <= 1, "got {%.7g, %.7g, %.7g...} want {%.7g, %.7g, %.7g...} max diff %.2e",
        o[0], n > 1 ? o[1] : 0, n > 2 ? o[2] : 0, want[0], n > 1 ? want[1] : 0, n > 2 ? want[2] : 0, md);
  free(o);
}

static void test_closed_forms(void) {
  /* sparsemax {1,0,-1}: support {1}: tau = 0 -> {1,0,0}. */
  check_vec("closed form: sparsemax{1,0,-1} = {1,0,0}", SPARSEMAX, (float[]){1, 0, -1}, 3,
            (double[]){1, 0, 0}, 0, 0, 1e-7);
  /* sparsemax {0.5,0.2,0}: all three in the support, tau = (0.7-1)/3 = -0.1 -> {.6,.3,.1}. */
  check_vec("closed form: sparsemax{0.5,0.2,0} = {0.6,0.3,0.1}", SPARSEMAX, (float[]){0.5f, 0.2f, 0},
            3, (double[]){0.6, 0.3, 0.1}, 0, 0, 1e-7);
  /* sparsemax {1,0.2,0}: support {1,2}, tau = (1.2-1)/2 = 0.1 -> {0.9,0.1,0}. */
  check_vec("closed form: sparsemax{1,0.2,0} = {0.9,0.1,0}", SPARSEMAX, (float[]){1, 0.2f, 0}, 3,
            (double[]){0.9, 0.1, 0}, 0, 0, 1e-7);
  /* entmax15 of {a, b}, D = (a-b)/2 < 1: p1 = (1 + D sqrt(2 - D^2))/2, p2 = 1 - p1
   * (from (u1-tau)^2 + (u2-tau)^2 = 1); D >= 1 gives {1, 0}. */
  {
    double d = 0.5, s = sqrt(2 - d * d);
    check_vec("closed form: entmax15{1,0} = {(1+D sqrt(2-D^2))/2, ...}, D=1/2", ENTMAX15,
              (float[]){1, 0}, 2, (double[]){(1 + d * s) / 2, (1 - d * s) / 2}, 0, 0, 2e-7);
    d = 0.15; s = sqrt(2 - d * d);
    check_vec("closed form: entmax15{0.3,0} two-element formula", ENTMAX15, (float[]){0.3f, 0}, 2,
              (double[]){(1 + d * s) / 2, (1 - d * s) / 2}, 0, 0, 2e-7);
    check_vec("closed form: entmax15{2.5,0} = {1,0}", ENTMAX15, (float[]){2.5f, 0}, 2,
              (double[]){1, 0}, 0, 0, 1e-7);
    check_vec("closed form: entmax15 all equal (n=4) = 1/4", ENTMAX15, (float[]){7, 7, 7, 7}, 4,
              (double[]){.25, .25, .25, .25}, 0, 0, 1e-7);
  }
  /* alpha = 2 on two elements is sparsemax: {(1+D)/2, (1-D)/2}, D = a - b. */
  check_vec("closed form: entmax_bisect(alpha=2){0.4,0} = {0.7,0.3}", BISECT, (float[]){0.4f, 0}, 2,
            (double[]){0.7, 0.3}, 2.0, 0, 1e-6);
  /* alpha = 3, two elements: p = [2z - tau]^(1/2), so p1^2 - p2^2 = 2(a - b) and p1 + p2 = 1:
   * p1 - p2 = 2(a-b) -> p1 = (1 + 2(a-b))/2 = 0.6 for a-b = 0.1. */
  check_vec("closed form: entmax_bisect(alpha=3){0.1,0} = {0.6,0.4}", BISECT, (float[]){0.1f, 0},
            2, (double[]){0.6, 0.4}, 3.0, 0, 1e-6);
  /* softmax{0, ln2, ln3} = {1,2,3}/6 */
  check_vec("closed form: softmax{0,ln2,ln3} = {1,2,3}/6", SOFTMAX,
            (float[]){0, (float)log(2.0), (float)log(3.0)}, 3, (double[]){1 / 6.0, 2 / 6.0, 3 / 6.0},
            0, 0, 2e-7);
  /* top-k: {3,1,2,5,4}, ratio 0.4 -> k = 2: {5,4} -> {1, e^-1}/(1+e^-1) */
  {
    double e = exp(-1.0);
    check_vec("closed form: topk{3,1,2,5,4}, ratio .4 -> softmax{5,4}", TOPK, (float[]){3, 1, 2, 5, 4}, 5,
              (double[]){0, 0, 0, 1 / (1 + e), e / (1 + e)}, 0, 0.4, 2e-7);
  }
  /* ceil robustness: 0.3*10 -> 3 (not 4), 0.25*17 -> 5, 0.125*65 -> 9, ratio*n tiny -> 1 */
  CHECK("topk count: ceil(0.3*10)=3, ceil(0.25*17)=5, ceil(0.125*65)=9, min 1, 1.0*n=n",
        al_topk_count(0.3, 10) == 3 && al_topk_count(0.25, 17) == 5 && al_topk_count(0.125, 65) == 9 &&
        al_topk_count(0.01, 5) == 1 && al_topk_count(1.0, 65) == 65 && al_topk_count(0.7, 10) == 7 &&
        al_topk_count(0.5, 0) == 0,
        "got %ld %ld %ld %ld %ld %ld", (long)al_topk_count(0.3, 10), (long)al_topk_count(0.25, 17),
        (long)al_topk_count(0.125, 65), (long)al_topk_count(0.01, 5), (long)al_topk_count(1.0, 65),
        (long)al_topk_count(0.7, 10));
  CHECK("topk count: a NaN ratio gives n_kept (was a NaN cast to int64, undefined)",
        al_topk_count(NAN, 17) == 17 && al_topk_count(NAN, 0) == 0, "got %ld", (long)al_topk_count(NAN, 17));
  for (int op = 0; op < NOPS; op++) {
    char name[100];
    snprintf(name, sizeof name, "closed forms: %s has hand-derived cases", op_name(op));
    CHECK(name, closed_cases[op] > 0, "none: add check_vec cases for it above (README, Adding a normalizer, step 3)");
  }
  /* n = 1 -> 1 for every op */
  for (int op = 0; op < NOPS; op++) {
    char name[80];
    snprintf(name, sizeof name, "n=1: %s gives 1", op_name(op));
    check_vec(name, op, (float[]){-3.5f}, 1, (double[]){1}, 1.5, 0.1, 0);
  }
}

/* ---------------------------------------------------------------- 3. vs reference loops */

static void test_vs_reference(void) {
  static const long ns[] = {1, 2, 3, 5, 7, 16, 17, 31, 64, 65, 100, 257};
  static const double scales[] = {0.1, 1.0, 3.0, 1000.0};
  static const double ratios[] = {0.125, 0.25, 0.3, 0.5, 0.9, 1.0};
  for (int op = 0; op < NOPS; op++) {
    for (int masked = 0; masked < 2; masked++) {
      double worst = 0, worst_d = 0, worst_sum = 0;
      long worst_n = 0, nrows_total = 0;
      int nonfinite = 0;
      for (size_t in = 0; in < sizeof ns / sizeof *ns; in++)
        for (size_t is = 0; is < sizeof scales / sizeof *scales; is++) {
          long n = ns[in], rows = 12, mrows = 3;
          float *x = falloc(rows * n), *o = falloc(rows * n), alpha[12];
          uint8_t *keep = malloc(mrows * n);
          double *ref = dalloc(n);
          fill_randn(x, rows * n, scales[is]);
          for (long i = 0; i < mrows * n; i++) keep[i] = rng_unif() > 0.25;
          keep[0] = 1;
          for (long i = 0; i < rows * n; i++)
            if (masked && !keep[((i / n) / (rows / mrows)) * n + i % n]) x[i] = NAN;  /* garbage */
          for (long r = 0; r < rows; r++) alpha[r] = (float)op_alpha_list[r % 6];
          double ratio = ratios[(in + is) % 6];
          al_status st = op_fwd(op, o, x, masked ? keep : NULL, mrows, rows, n, alpha, ratio);
          if (st != AL_OK) { worst = INFINITY; break; }
          for (long r = 0; r < rows; r++) {
            const uint8_t *kr = masked ? keep + (r / (rows / mrows)) * n : NULL;
            ref_row(op, ref, x + r * n, kr, n, alpha[r], ratio);
            double md, q;
            double atol = op == BISECT ? 2e-6 : 1e-6, rtol = op == BISECT ? 2e-5 : 1e-5;
            q = cmp_ref(o + r * n, ref, n, atol, rtol, &md);
            if (q > worst) { worst = q; worst_d = md; worst_n = n; }
            double s = 0, want_s = 0;
            for (long j = 0; j < n; j++) {
              s += o[r * n + j];
              want_s += ref[j];
              nonfinite |= !isfinite(o[r * n + j]);
            }
            if (fabs(s - want_s) > worst_sum) worst_sum = fabs(s - want_s);   /* 1, or 0 if all masked */
            nrows_total++;
          }
          free(x); free(o); free(keep); free(ref);
        }
      char name[120];
      snprintf(name, sizeof name, "%s%s == double reference loop (n=1..257, scale 0.1..1000)",
               op_name(op), masked ? " masked" : "");
      printf("  %s: %ld rows, max |diff| %.2e (worst ratio %.2f at n=%ld), max |sum-1| %.2e\n",
             name, nrows_total, worst_d, worst, worst_n, worst_sum);
      CHECK(name, worst <= 1 && !nonfinite && worst_sum < 2e-6,
            "worst |diff| %.2e (ratio %.2f at n=%ld), max |sum-1| %.2e, nonfinite %d", worst_d,
            worst, worst_n, worst_sum, nonfinite);
    }
  }
}

/* Every row length 1..48 (padded single block, whole blocks, an overlapped last block of every
 * width), masked and not, against the references; and top-k on rows the band guess misses. */
static void test_every_length(void) {
  for (int op = 0; op < NOPS; op++) {
    double worst = 0, worst_d = 0;
    long worst_n = 0;
    for (long n = 1; n <= 48; n++) {
      const long rows = 6, mrows = 2;
      float *x = falloc(rows * n), *o = falloc(rows * n), alpha[6];
      uint8_t *keep = malloc(mrows * n);
      double *ref = dalloc(n);
      fill_randn(x, rows * n, n % 3 == 0 ? 0.3 : 2.0);
      for (long i = 0; i < mrows * n; i++) keep[i] = rng_unif() > 0.2;
      for (long r = 0; r < rows; r++) alpha[r] = (float)op_alpha_list[(r + n) % 6];
      for (int masked = 0; masked < 2; masked++) {
        op_fwd(op, o, x, masked ? keep : NULL, mrows, rows, n, alpha, 0.3);
        for (long r = 0; r < rows; r++) {
          ref_row(op, ref, x + r * n, masked ? keep + (r / (rows / mrows)) * n : NULL, n, alpha[r], 0.3);
          double md, q = cmp_ref(o + r * n, ref, n, 2e-6, 2e-5, &md);
          if (q > worst) { worst = q; worst_d = md; worst_n = n; }
        }
      }
      free(x); free(o); free(keep); free(ref);
    }
    char name[120];
    snprintf(name, sizeof name, "%s: every row length 1..48, masked and not, == reference", op_name(op));
    CHECK(name, worst <= 1, "worst |diff| %.2e (ratio %.2f) at n=%ld", worst_d, worst, worst_n);
  }
  /* top-k: skewed (lognormal), bimodal and one-outlier rows: the normal-quantile band misses */
  const long rows = 90, n = 65;
  float *x = falloc(rows * n), *o = falloc(rows * n);
  double *ref = dalloc(n);
  for (long r = 0; r < rows; r++)
    for (long j = 0; j < n; j++) {
      double z = rng_normal();
      x[r * n + j] = (float)(r % 3 == 0 ? exp(2.0 * z) : r % 3 == 1 ? (j % 5 ? z : 8.0 + z)
                                                                       : (j == r % n ? 1e6 : z));
    }
  double worst = 0, worst_d = 0;
  const double ratios[] = {0.05, 0.125, 0.25, 0.5, 0.9};
  for (int q = 0; q < 5; q++) {
    al_topk_softmax_fwd(o, x, ratios[q], NULL, 1, rows, n);
    for (long r = 0; r < rows; r++) {
      ref_row(TOPK, ref, x + r * n, NULL, n, 0, ratios[q]);
      double md, qq = cmp_ref(o + r * n, ref, n, 1e-6, 1e-5, &md);
      if (qq > worst) { worst = qq; worst_d = md; }
    }
  }
  CHECK("topk_softmax on skewed, bimodal and outlier rows (band misses) == reference", worst <= 1,
        "worst |diff| %.2e (ratio %.2f)", worst_d, worst);
  free(x); free(o); free(ref);
}

/* n = 4096, +-1e4 inputs and rows with -inf entries: finite, sums to 1, equals the reference. */
static void test_long_and_extreme(void) {
  const long n = 4096, rows = 4;
  float *x = falloc(rows * n), *o = falloc(rows * n), alpha[4] = {1.5f, 1.2f, 1.8f, 2.0f};
  double *ref = dalloc(n);
  for (int kind = 0; kind < 3; kind++) {
    fill_randn(x, rows * n, kind == 1 ? 1e4 : 2.0);
    if (kind == 1) for (long i = 0; i < rows * n; i += 7) x[i] = (i & 8) ? 1e4f : -1e4f;
    if (kind == 2)
      for (long r = 0; r < rows; r++)
        for (long j = 0; j < n; j += 3) x[r * n + j] = -INFINITY;
    for (int op = 0; op < NOPS; op++) {
      al_status st = op_fwd(op, o, x, NULL, 1, rows, n, alpha, 0.25);
      double worst = 0, worst_d = 0, worst_sum = 0;
      int bad = 0;
      for (long r = 0; r < rows; r++) {
        ref_row(op, ref, x + r * n, NULL, n, alpha[r], 0.25);
        double md, s = 0;
        double q = cmp_ref(o + r * n, ref, n, 2e-6, 2e-5, &md);
        if (q > worst) { worst = q; worst_d = md; }
        for (long j = 0; j < n; j++) { s += o[r * n + j]; bad |= !isfinite(o[r * n + j]) || o[r * n + j] < 0; }
        if (kind == 2) for (long j = 0; j < n; j += 3) bad |= o[r * n + j] != 0.0f;
        if (fabs(s - 1) > worst_sum) worst_sum = fabs(s - 1);
      }
      char name[120];
      snprintf(name, sizeof name, "%s n=4096 %s: finite, sums to 1, == reference", op_name(op),
               kind == 0 ? "randn*2" : kind == 1 ? "+-1e4" : "with -inf entries");
      CHECK(name, st == AL_OK && !bad && worst <= 1 && worst_sum < 4e-6,
            "max |diff| %.2e (ratio %.2f), max |sum-1| %.2e, bad %d", worst_d, worst, worst_sum, bad);
    }
  }
  free(x); free(o); free(ref);
}

/* ---------------------------------------------------------------- 4. JSON reference vectors */
static float *json_floats(cJSON *arr, long *len) {
  long n = cJSON_GetArraySize(arr);
  float *v = falloc(n);
  long i = 0;
  cJSON *e;
  cJSON_ArrayForEach(e, arr) v[i++] = (float)e->valuedouble;
  if (len) *len = n;
  return v;
}
static double *json_doubles(cJSON *arr) {
  double *v = dalloc(cJSON_GetArraySize(arr));
  long i = 0;
  cJSON *e;
  cJSON_ArrayForEach(e, arr) v[i++] = e->valuedouble;
  return v;
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long sz = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc(sz + 1);
  if (fread(buf, 1, sz, f) != (size_t)sz) { free(buf); fclose(f); return NULL; }
  buf[sz] = 0;
  fclose(f);
  return buf;
}

static void test_json_refs(void) {
  const char *paths[] = {"tests/ref/normalizers.json", "../tests/ref/normalizers.json",
                         "../../tests/ref/normalizers.json", "../../../tests/ref/normalizers.json"};
  char *text = NULL;
  const char *env = getenv("ATTNLAB_REF_DIR");
  char envpath[1024];
  if (env) {
    snprintf(envpath, sizeof envpath, "%s/normalizers.json", env);
    text = read_file(envpath);
  }
  for (size_t i = 0; !text && i < sizeof paths / sizeof *paths; i++) text = read_file(paths[i]);
  if (!text) {
    CHECK("reference vectors: tests/ref/normalizers.json readable", 0,
          "not found from the current directory (run from the repo root or set ATTNLAB_REF_DIR)");
    return;
  }
  cJSON *doc = cJSON_Parse(text);
  cJSON *cases = doc ? cJSON_GetObjectItem(doc, "cases") : NULL;
  CHECK("reference vectors: normalizers.json parses", cases && cJSON_GetArraySize(cases) > 0,
        "bad JSON");
  if (!cases) { cJSON_Delete(doc); free(text); return; }
  cJSON *c;
  cJSON_ArrayForEach(c, cases) {
    const char *name = cJSON_GetObjectItem(c, "name")->valuestring;
    const char *ops = cJSON_GetObjectItem(c, "op")->valuestring;
    int op = -1;
    for (int k = 0; k < NOPS; k++) if (!strcmp(ops, op_name(k))) op = k;
    long rows = (long)cJSON_GetObjectItem(c, "rows")->valuedouble;
    long n = (long)cJSON_GetObjectItem(c, "n")->valuedouble, len;
    float *x = json_floats(cJSON_GetObjectItem(c, "x"), &len);
    float *g = json_floats(cJSON_GetObjectItem(c, "gout"), NULL);
    double *want = json_doubles(cJSON_GetObjectItem(c, "out"));
    double *wgin = json_doubles(cJSON_GetObjectItem(c, "gin"));
    cJSON *jk = cJSON_GetObjectItem(c, "keep"), *ja = cJSON_GetObjectItem(c, "alpha");
    cJSON *jr = cJSON_GetObjectItem(c, "ratio"), *jga = cJSON_GetObjectItem(c, "galpha");
    uint8_t *keep = NULL;
    if (jk) {
      keep = malloc(rows * n);
      long i = 0;
      cJSON *e;
      cJSON_ArrayForEach(e, jk) keep[i++] = (uint8_t)e->valueint;
      for (i = 0; i < rows * n; i++) if (!keep[i]) x[i] = NAN;   /* must never be read */
    }
    float *alpha = ja ? json_floats(ja, NULL) : NULL;
    double ratio = jr ? jr->valuedouble : 0;
    float *o = falloc(rows * n), *gi = falloc(rows * n), *ga = falloc(rows);
    al_status st = op_fwd(op, o, x, keep, rows, rows, n, alpha, ratio);
    if (st == AL_OK) st = op_bwd(op, gi, ga, g, o, rows, n, alpha);
    double md_o, md_g, md_a = 0;
    int bis = op == BISECT;
    double qo = cmp_ref(o, want, rows * n, bis ? 1e-6 : 5e-7, 1e-5, &md_o);
    double qg = cmp_ref(gi, wgin, rows * n, bis ? 1e-5 : 2e-6, bis ? 1e-4 : 2e-5, &md_g);
    double qa = 0;
    if (jga) {
      double *wga = json_doubles(jga);
      qa = cmp_ref(ga, wga, rows, 1e-4, 1e-3, &md_a);
      printf("  %-22s galpha %.6f %.6f (want %.6f %.6f)\n", name, ga[0], ga[1], wga[0], wga[1]);
      free(wga);
    }
    printf("  %-22s out %.7f %.7f %.7f (want %.7f %.7f %.7f) max diff out %.1e gin %.1e galpha %.1e\n",
           name, o[0], o[1], o[2], want[0], want[1], want[2], md_o, md_g, md_a);
    char cname[120];
    snprintf(cname, sizeof cname, "reference vectors: %s (fwd, bwd%s)", name, jga ? ", dalpha" : "");
    CHECK(cname, op >= 0 && len == rows * n && st == AL_OK && qo <= 1 && qg <= 1 && qa <= 1,
          "status %d, max diff out %.2e gin %.2e galpha %.2e", st, md_o, md_g, md_a);
    free(x); free(g); free(want); free(wgin); free(keep); free(alpha); free(o); free(gi); free(ga);
  }
  cJSON_Delete(doc);
  free(text);
}

/* ---------------------------------------------------------------- backward vs reference */
/* Every backward (write mode) against its file's scalar reference backward in double, fed the
 * kernel's own forward output (so both see the same support), and alpha's gradient too. */
static void test_bwd_vs_reference(void) {
  static const long ns[] = {1, 5, 16, 17, 31, 65, 100};
  for (int op = 0; op < NOPS; op++) {
    const al_norm_desc *d = op_row(op);
    double worst = 0, worst_d = 0, worst_a = 0;
    for (size_t in = 0; in < sizeof ns / sizeof *ns; in++) {
      const long n = ns[in], rows = 8;
      float *x = falloc(rows * n), *o = falloc(rows * n), *g = falloc(rows * n), *gi = falloc(rows * n);
      float alpha[8], ga[8];
      double *po = dalloc(n), *pg = dalloc(n), *ref = dalloc(n);
      fill_randn(x, rows * n, 1.0);
      fill_randn(g, rows * n, 1.0);
      for (long r = 0; r < rows; r++) alpha[r] = (float)(1.2 + 0.1 * (double)r);   /* 1.2 .. 1.9 */
      al_status st = op_fwd(op, o, x, NULL, 1, rows, n, alpha, 0.3);
      if (st == AL_OK) st = op_bwd_write(op, gi, ga, g, o, rows, n, alpha);
      if (st != AL_OK) { worst = INFINITY; }
      for (long r = 0; r < rows && st == AL_OK; r++) {
        double gar = 0, md;
        for (long j = 0; j < n; j++) { po[j] = o[r * n + j]; pg[j] = g[r * n + j]; }
        d->ref_bwd(ref, &gar, pg, po, n, d->param == AL_NORM_P_ALPHA ? alpha[r] : 0.3);
        const double q = cmp_ref(gi + r * n, ref, n, 1e-6, 1e-5, &md);
        if (q > worst) { worst = q; worst_d = md; }
        if (d->param == AL_NORM_P_ALPHA) {
          const double qa = fabs((double)ga[r] - gar) / (1e-5 + 1e-4 * fabs(gar));
          if (!(qa <= worst_a)) worst_a = qa;
        }
      }
      free(x); free(o); free(g); free(gi); free(po); free(pg); free(ref);
    }
    char name[120];
    snprintf(name, sizeof name, "%s backward == its scalar reference backward (n=1..100)%s", op_name(op),
             d->param == AL_NORM_P_ALPHA ? ", and d/dalpha" : "");
    printf("  %s: max |diff| %.2e (worst ratio %.2f), alpha ratio %.2f\n", name, worst_d, worst, worst_a);
    CHECK(name, worst <= 1 && worst_a <= 1, "worst |diff| %.2e (ratio %.2f), alpha ratio %.2f", worst_d,
          worst, worst_a);
  }
}



int main(void) {
  al_set_num_threads(1);
  printf("seed: splitmix64 0x9E3779B97F4A7C15, 1 thread unless stated\n");
  rng_at(0);
  test_closed_forms();
  rng_at(0);
  test_vs_reference();
  rng_at(613440);
  test_long_and_extreme();
  rng_at(711744);
  test_json_refs();
  rng_at(979127);
  test_every_length();
  rng_at(26080349);
  test_bwd_vs_reference();
  CHECK_EXIT();
}
