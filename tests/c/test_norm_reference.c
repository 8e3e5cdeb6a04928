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



/* ---------------------------------------------------------------- alpha > 2 */
/* alpha-entmax for alpha > 2, where p = d^(1/(alpha-1)) has an infinite slope at the support's
 * edge: an entry there holds a large p on a d far below double precision of s (at alpha = 20,
 * p = 0.11 on d = 6e-19 of s = 0.11). The regula falsi this path had stopped at 1e-12 in s and
 * at max_iter evaluations: at alpha 8-10 its rows were off by 0.1-0.45, at alpha >= 20 by up to
 * 0.3 whatever max_iter (core/norm/entmax_bisect_step.c: now solved in the smallest p of the
 * support, exact to double rounding). Checked here against references that need no such
 * precision:
 *   - two entries {d, 0} (the rest -inf, masked or far below): p1 + p2 = 1 and p1^(alpha-1) -
 *     p2^(alpha-1) = (alpha-1) d, solved for p2 in double by bisection -- well conditioned in p;
 *   - random rows, by the optimality conditions in long double: with s = p_max^(alpha-1), every
 *     kept entry has p_j^(alpha-1) = s + (alpha-1)(x_j - max) where p_j > 0, and s + (alpha-1)(x_j
 *     - max) <= 0 where p_j = 0, both to float rounding of p (4 (alpha-1) 2^-24 of s), and sum 1;
 *   - the audit's rows, against 400-digit decimal bisection (Python's decimal module);
 * and the same bits whatever max_iter (the path runs to its own end), in few evaluations. */
static double two_entry_p2(double am1, double d) {   /* the smaller p of {d, 0} */
  const double c = am1 * d;
  if (c >= 1.0) return 0.0;
  double lo = 0.0, hi = 0.5;   /* f(p2) = (1-p2)^am1 - p2^am1 - c: decreasing, f(lo) > 0 > f(hi) */
  for (int it = 0; it < 200; it++) {
    const double mid = 0.5 * (lo + hi);
    const double f = exp(am1 * log1p(-mid)) - (mid > 0 ? exp(am1 * log(mid)) : 0.0) - c;
    if (f > 0) lo = mid; else hi = mid;
  }
  return 0.5 * (lo + hi);
}

static void test_bisect_big_alpha(void) {
  static const double alphas[] = {2.5, 3, 4, 6, 8, 10, 15, 20, 40, 100, 1000};
  static const double cs[] = {1e-6, 1e-4, 1e-3, 0.01, 0.1, 0.3, 0.6, 0.9, 0.99, 1.5};
  double worst = 0;
  int ok = 1, cnt = 0;
  for (size_t ia = 0; ia < sizeof alphas / sizeof *alphas; ia++)
    for (size_t ic = 0; ic < sizeof cs / sizeof *cs; ic++)
      for (int shape = 0; shape < 3; shape++) {
        const float a = (float)alphas[ia];
        const double am1 = (double)a - 1.0;
        const float d = (float)(cs[ic] / am1);
        /* shape 0: {d, 0}; 1: {-inf, 0, garbage (masked), d} (n = 4); 2: d and 0 among 18 far
         * below (n = 20: two blocks) */
        float x[20];
        uint8_t keep[20];
        long n = shape == 0 ? 2 : shape == 1 ? 4 : 20, i1 = 0, i2 = 1;
        for (long j = 0; j < n; j++) { x[j] = -10.0f; keep[j] = 1; }
        if (shape == 0) { x[0] = d; x[1] = 0.0f; }
        if (shape == 1) { x[0] = -INFINITY; x[1] = 0.0f; x[2] = 1e30f; keep[2] = 0; x[3] = d; i1 = 3; i2 = 1; }
        if (shape == 2) { x[13] = d; x[6] = 0.0f; i1 = 13; i2 = 6; }
        const double p2 = two_entry_p2(am1, (double)d - 0.0), p1 = 1.0 - p2;
        for (int mi = 0; mi < 2; mi++) {
          float o[20];
          const int max_iter = mi ? 1 : 50;
          al_status st = al_entmax_bisect_fwd(o, x, &a, shape == 1 ? keep : NULL, 1, 1, n, max_iter, NULL);
          double e = fmax(fabs(o[i1] - p1), fabs(o[i2] - p2));
          if (p2 > 1e-6) e = fmax(e, fabs(o[i2] - p2) / p2 * 0.1);   /* (relative 1e-6 for p2, as 1e-7) */
          for (long j = 0; j < n; j++) if (j != i1 && j != i2 && o[j] != 0.0f) e = INFINITY;
          if (st != AL_OK || !(e <= 1.2e-7)) {
            if (ok) printf("  first failure: alpha %g, d %.9g (shape %d, max_iter %d): got {%.9g, %.9g} want {%.9g, %.9g}\n",
                           (double)a, (double)d, shape, max_iter, o[i1], o[i2], p1, p2);
            ok = 0;
          }
          worst = fmax(worst, e);
          cnt++;
        }
      }
  printf("  entmax_bisect alpha 2.5..1000, two entries {d, 0}: %d rows, worst |diff| %.2e\n", cnt, worst);
  CHECK("entmax_bisect alpha > 2: two entries == the closed form solved in p (alpha 2.5..1000, any max_iter)",
        ok, "worst |diff| %.2e", worst);

  /* random rows: the optimality conditions, and any max_iter gives the same bits */
  static const double ralphas[] = {2.0000002, 2.2, 2.5, 3, 4, 6, 8, 10, 20, 50};
  static const long ns[] = {3, 16, 17, 33, 65, 300};
  static const double scales[] = {0.01, 0.3, 3};
  double worst_r = 0, worst_s = 0;
  int same = 1, used_max = 0, bad_st = 0;
  for (size_t ia = 0; ia < sizeof ralphas / sizeof *ralphas; ia++)
    for (size_t in = 0; in < sizeof ns / sizeof *ns; in++)
      for (size_t is = 0; is < sizeof scales / sizeof *scales; is++)
        for (int masked = 0; masked < 2; masked++) {
          const long n = ns[in], rows = 8;
          float *x = falloc(rows * n), *o = falloc(rows * n), *o1 = falloc(rows * n), alpha[8];
          uint8_t *keep = malloc(rows * n);
          fill_randn(x, rows * n, scales[is]);
          if (masked)   /* (and many ties: x on a coarse grid) */
            for (long i = 0; i < rows * n; i++) x[i] = (float)(scales[is] * 0.5 * floor(x[i] / (scales[is] * 0.5)));
          for (long i = 0; i < rows * n; i++) keep[i] = !masked || rng_unif() > 0.3;
          for (long r = 0; r < rows; r++) { alpha[r] = (float)ralphas[ia]; keep[r * n] = 1; }
          int used = 0;
          bad_st |= al_entmax_bisect_fwd(o, x, alpha, keep, rows, rows, n, 50, &used) != AL_OK;
          bad_st |= al_entmax_bisect_fwd(o1, x, alpha, keep, rows, rows, n, 1, NULL) != AL_OK;
          same &= !memcmp(o, o1, rows * n * sizeof(float));
          used_max = used > used_max ? used : used_max;
          for (long r = 0; r < rows; r++) {
            const float *xr = x + r * n, *pr = o + r * n;
            const uint8_t *kr = keep + r * n;
            const long double am1 = (long double)alpha[r] - 1;
            long jm = -1;
            for (long j = 0; j < n; j++) if (kr[j] && (jm < 0 || xr[j] > xr[jm])) jm = j;
            const long double sv = powl((long double)pr[jm], am1), tol = 4 * am1 * 0x1p-24L * sv;
            double sum = 0, res = 0;
            for (long j = 0; j < n; j++) {
              if (!kr[j]) { if (pr[j] != 0.0f) res = INFINITY; continue; }
              const long double dj = sv + am1 * ((long double)xr[j] - (long double)xr[jm]);
              const long double rj = pr[j] > 0 ? fabsl(powl((long double)pr[j], am1) - dj) : (dj > 0 ? dj : 0);
              res = fmax(res, (double)(rj / tol));
              sum += pr[j];
            }
            worst_r = fmax(worst_r, res);
            worst_s = fmax(worst_s, fabs(sum - 1));
          }
          free(x); free(o); free(o1); free(keep);
        }
  printf("  entmax_bisect alpha 2+2^-22..50, random rows: worst optimality residual %.2f (of float rounding), "
         "max |sum-1| %.2e, most evaluations %d\n", worst_r, worst_s, used_max);
  CHECK("entmax_bisect alpha > 2: random rows (masks, ties) satisfy the optimality conditions to float rounding",
        !bad_st && worst_r <= 1 && worst_s < 1e-6, "residual %.2f of the bound, |sum-1| %.2e", worst_r, worst_s);
  CHECK("entmax_bisect alpha > 2: max_iter does not cap it (max_iter 1 == 50, bitwise), <= 32 evaluations",
        same && used_max <= 32, "same %d, most evaluations %d", same, used_max);

  /* the audit's rows (tmp/audit27_norm): exact values by 400-digit decimal bisection */
  {
    const float x11[11] = {0.00223740144f, -0.00394446123f, -0.00017831946f, 0.00267675333f, 0.00689694891f,
                           -0.0037452695f, -0.00204622676f, 0.00308386981f, -0.00207301066f, -0.00305744866f,
                           0.00171861181f};
    const float a10 = 10.0f;
    float o[11];
    al_status st = al_entmax_bisect_fwd(o, x11, &a10, NULL, 1, 1, 11, 50, NULL);
    CHECK("entmax_bisect alpha = 10, the audit's 11-entry row: {0.687574365, 0.312425635}",
          st == AL_OK && fabs(o[4] - 0.6875743645663328) < 1e-7 && fabs(o[7] - 0.31242563543366725) < 1e-7,
          "got p[5] %.9f p[8] %.9f", o[4], o[7]);
    const float x33[33] = {0.004412274807691574f, -0.0033087015617638826f, 0.02430771104991436f, -0.0025209214072674513f,
      0.0010960984509438276f, 0.015824811533093452f, -0.009092324413359165f, -0.00591636635363102f, 0.0018760322127491236f,
      -0.0032986996229737997f, -0.011927646584808826f, -0.0020487650763243437f, -0.003588289488106966f, 0.006034716032445431f,
      -0.016647884622216225f, -0.007001790218055248f, 0.011513910256326199f, 0.01857331022620201f, -0.015111795626580715f,
      0.006448475178331137f, -0.009806078858673573f, -0.008568531833589077f, -0.008718791417777538f, -0.00422507943585515f,
      0.009964398108422756f, 0.007124212570488453f, 0.0005914424546062946f, -0.003633108688518405f, 3.2888430723687634e-05f,
      -0.0010593044571578503f, 0.007930533029139042f, -0.006315716076642275f, -6.194908200995997e-05f};
    const float a3[3] = {20.0f, 80.0f, 100.0f};
    const double want[3][2] = {{0.8898739791636485, 0.11012602083635145}, {0.9900269731544662, 0.00997302684553383},
                               {0.9942976119932577, 0.005702388006742311}};
    for (int k = 0; k < 3; k++) {
      float o33[33];
      st = al_entmax_bisect_fwd(o33, x33, a3 + k, NULL, 1, 1, 33, 50, NULL);
      double rest = 0;
      for (int j = 0; j < 33; j++) if (j != 2 && j != 17) rest += o33[j];
      char name[120];
      snprintf(name, sizeof name, "entmax_bisect alpha = %g, the audit's 33-entry row: {%.6f, %.6f}", (double)a3[k],
               want[k][0], want[k][1]);
      CHECK(name, st == AL_OK && fabs(o33[2] - want[k][0]) < 1e-7 && fabs(o33[17] - want[k][1]) < 1e-7 && rest == 0,
            "got %.9f %.9f (rest %g)", o33[2], o33[17], rest);
    }
  }
  /* alpha large against the spread: the ties at the max share 1, exactly (the limit: argmax) */
  {
    const float x[5] = {1, 3, 3, 2.999f, -1}, al3[3] = {1e6f, 1e30f, 3e38f};
    int okt = 1;
    for (int k = 0; k < 3; k++) {
      float o[5];
      okt &= al_entmax_bisect_fwd(o, x, al3 + k, NULL, 1, 1, 5, 50, NULL) == AL_OK && o[0] == 0 && o[1] == 0.5f &&
             o[2] == 0.5f && o[3] == 0 && o[4] == 0;
    }
    CHECK("entmax_bisect alpha 1e6, 1e30, 3e38: the tied max entries get 1/2 each, exactly", okt, "mismatch");
  }
}

/* The bound below which alpha-entmax is refused (AL_ENTMAX_ALPHA_MIN): the kernels, forward
 * and backward, say why; at the bound the result is float32-accurate (double reference). */
static void test_bisect_alpha_min(void) {
  float x[8], o[8], g[8] = {1, 0, 0, 0, 0, 0, 0, 0}, gi[8];
  for (int j = 0; j < 8; j++) x[j] = (float)(0.5 * j - 1.0);
  const float lows[3] = {1.0f + 0x1p-23f, 1.00001f, 1.00009f};
  int ok = 1;
  for (int k = 0; k < 3; k++) {
    ok &= al_entmax_bisect_fwd(o, x, lows + k, NULL, 1, 1, 8, 50, NULL) == AL_EINVAL &&
          strstr(al_errmsg(), "is below 1.0001") && strstr(al_errmsg(), "use softmax");
    ok &= al_entmax_bisect_bwd(gi, NULL, g, x, lows + k, 1, 8) == AL_EINVAL && strstr(al_errmsg(), "is below 1.0001");
  }
  CHECK("entmax_bisect: alpha below 1.0001 refused (fwd and bwd), naming the bound and softmax", ok, "msg '%s'",
        al_errmsg());
  const float amin = AL_ENTMAX_ALPHA_MIN;
  double ref[8], md;
  al_status st = al_entmax_bisect_fwd(o, x, &amin, NULL, 1, 1, 8, 50, NULL);
  al_entmax_bisect_ref_fwd(ref, x, NULL, 8, (double)amin);
  const double q = cmp_ref(o, ref, 8, 1e-7, 1e-6, &md);
  CHECK("entmax_bisect: alpha = 1.0001 (the bound) taken and float32-accurate", st == AL_OK && q <= 1,
        "status %d, max diff %.2e", st, md);
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
  rng_at(27000000);
  test_bisect_big_alpha();
  test_bisect_alpha_min();
  CHECK_EXIT();
}
