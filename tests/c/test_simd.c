/* tests/c/test_simd.c -- the edge behaviour of core/simd/fastmath.h, line by line of the table
 * at the top of that header: NaN in -> NaN out, underflow to 0 (or the documented subnormals),
 * overflow to +inf, the infinities, and the values at the clamp points. Accuracy on normal
 * inputs is checked elsewhere (test_norm_math.c, test_core.c, test_mixers.c). The test is
 * compiled for each CPU level by make test-levels, so the table holds for every level. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "../../core/simd/fastmath.h"

/* The values pass through a volatile, so the compiler evaluates the functions at run time with
 * the level's code, not by constant folding. */
static volatile float vin;
static float in(float x) { vin = x; return vin; }

static int same(float a, float b) {   /* bitwise, but any NaN equals any NaN */
  if (a != a || b != b) return a != a && b != b;
  return memcmp(&a, &b, sizeof a) == 0;
}

typedef float (*fn1)(float);
typedef struct { const char *what; float x, want; } edge;

static void check_edges(const char *name, fn1 f, const edge *e, int n) {
  for (int i = 0; i < n; i++) {
    char nm[160];
    const float got = f(in(e[i].x));
    snprintf(nm, sizeof nm, "%s(%s) = %g", name, e[i].what, (double)e[i].want);
    CHECK(nm, same(got, e[i].want), "got %a (%g)", (double)got, (double)got);
  }
}

/* Wrappers: the header's functions are static inline; these give them addresses. */
static float f_expf(float x) { return al_expf(x); }
static float f_expf_le0(float x) { return al_expf_le0(x); }
static float f_fexp(float x) { return al_fexp(x); }
static float f_fexp_le0(float x) { return al_fexp_le0(x); }
static float f_fsigmoid(float x) { return al_fsigmoid(x); }
static float f_mx_exp(float x) { return mx_exp(x); }
static float f_mx_exp_le0(float x) { return mx_exp_le0(x); }
static float f_mx_expm1(float x) { return mx_expm1(x); }
static float f_mx_sigmoid(float x) { return mx_sigmoid(x); }
static float f_mx_silu(float x) { return mx_silu(x); }
static float f_mx_softplus(float x) { return mx_softplus(x); }
static float f_mx_tanh(float x) { return mx_tanh(x); }

int main(void) {
  const float inf = INFINITY, nan = NAN;
  printf("# core/simd/fastmath.h edge cases\n");
  /* every exp: NaN -> NaN, -inf -> 0, exp(0) = 1, exp(-1000) = 0 */
  const edge exp_common[] = {{"NaN", nan, nan}, {"-inf", -inf, 0.0f}, {"0", 0.0f, 1.0f}, {"-1000", -1000.0f, 0.0f},
                             {"-88", -88.0f, 0.0f}};
  check_edges("al_expf", f_expf, exp_common, 5);
  check_edges("al_expf_le0", f_expf_le0, exp_common, 5);
  check_edges("mx_exp", f_mx_exp, exp_common, 5);
  check_edges("mx_exp_le0", f_mx_exp_le0, exp_common, 5);
  /* the mixers' flush starts at -87.3, not where 2^k itself reaches 0 (about -87.68): exp(-87.5)
   * = 1.0e-38 is a subnormal, and this family returns 0 for it */
  const edge mx_flush[] = {{"-87.5", -87.5f, 0.0f}, {"-87.31", -87.31f, 0.0f}};
  check_edges("mx_exp", f_mx_exp, mx_flush, 2);
  check_edges("mx_exp_le0", f_mx_exp_le0, mx_flush, 2);
  const edge fexp_low[] = {{"NaN", nan, nan}, {"-inf", -inf, 0.0f}, {"0", 0.0f, 1.0f}, {"-1000", -1000.0f, 0.0f},
                           {"-105", -105.0f, 0.0f}};
  check_edges("al_fexp", f_fexp, fexp_low, 5);
  check_edges("al_fexp_le0", f_fexp_le0, fexp_low + 1, 4);   /* no NaN lane */
  /* overflow: +inf above the top of the range (exp(1000), exp(+inf)) */
  const edge exp_over[] = {{"1000", 1000.0f, inf}, {"+inf", inf, inf}, {"89", 89.0f, inf}};
  check_edges("al_expf", f_expf, exp_over, 3);
  check_edges("al_fexp", f_fexp, exp_over, 3);
  const edge mx_over[] = {{"1000 (clamped at 88)", 1000.0f, 0}, {"+inf (clamped at 88)", inf, 0}};
  for (int i = 0; i < 2; i++) {   /* mx_exp keeps the clamp: exp(88), finite */
    char nm[160];
    snprintf(nm, sizeof nm, "mx_exp(%s) = mx_exp(88), finite", mx_over[i].what);
    CHECK(nm, same(mx_exp(in(mx_over[i].x)), mx_exp(in(88.0f))) && isfinite(mx_exp(in(mx_over[i].x))), "%g",
          (double)mx_exp(in(mx_over[i].x)));
  }
  /* inside the range the results are finite and positive near both ends */
  CHECK("al_expf(-87.3) is a normal float", isnormal(al_expf(in(-87.3f))) && al_expf(in(-87.3f)) > 0, "%g", (double)al_expf(in(-87.3f)));
  CHECK("mx_exp(-87.2) is a normal float", isnormal(mx_exp(in(-87.2f))), "%g", (double)mx_exp(in(-87.2f)));
  CHECK("mx_exp(88) is finite", isfinite(mx_exp(in(88.0f))) && mx_exp(in(88.0f)) > 1e38f, "%g", (double)mx_exp(in(88.0f)));
  CHECK("al_expf(88.7) is finite", isfinite(al_expf(in(88.7f))), "%g", (double)al_expf(in(88.7f)));
  /* al_fexp keeps subnormal results down to -104 */
  {
    const float y = al_fexp(in(-100.0f));
    CHECK("al_fexp(-100) is the subnormal exp(-100) to a subnormal step", y > 0 && fabs((double)y - exp(-100.0)) <= 2e-45, "%g", (double)y);
  }
  {
    /* al_fexp_le0 (the GELU forward's exp) promises al_fexp's bits wherever x <= 88.72284: every
     * float of [-300, 0] and of (0, 88.72284] in steps, -inf and the clamp's edges */
    long differ = 0;
    float first = 0;
    for (int i = 0; i <= 3000000; i++) {
      float x = (float)(-300.0 + 300.0 * i / 3000000.0);
      if (memcmp(&(float){al_fexp_le0(in(x))}, &(float){al_fexp(in(x))}, sizeof(float)) != 0 && differ++ == 0) first = x;
    }
    for (int i = 0; i <= 100000; i++) {
      float x = (float)(88.72284 * i / 100000.0);
      if (al_fexp_le0(in(x)) != al_fexp(in(x)) && differ++ == 0) first = x;
    }
    const float edges[] = {-INFINITY, -104.0f, nextafterf(-104.0f, 0), nextafterf(-104.0f, -200), -0.0f, 88.72284f};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
      if (memcmp(&(float){al_fexp_le0(in(edges[i]))}, &(float){al_fexp(in(edges[i]))}, sizeof(float)) != 0 && differ++ == 0) first = edges[i];
    CHECK("al_fexp_le0 gives al_fexp's bits on [-inf, 88.72284] (3.1e6 points and the edges)", differ == 0,
          "%ld differ, first at %a", differ, first);
  }
  /* the mixers' derived functions */
  const edge expm1_e[] = {{"NaN", nan, nan}, {"-inf", -inf, -1.0f}, {"-1000", -1000.0f, -1.0f}, {"0", 0.0f, 0.0f}};
  check_edges("mx_expm1", f_mx_expm1, expm1_e, 4);
  CHECK("mx_expm1(1000) is finite (mx_exp's clamp)", isfinite(mx_expm1(in(1000.0f))), "%g", (double)mx_expm1(in(1000.0f)));
  const edge sig_e[] = {{"NaN", nan, nan}, {"-inf", -inf, 0.0f}, {"-1000", -1000.0f, 0.0f}, {"+inf", inf, 1.0f},
                        {"1000", 1000.0f, 1.0f}, {"0", 0.0f, 0.5f}};
  check_edges("al_fsigmoid", f_fsigmoid, sig_e, 6);
  const edge mxsig_e[] = {{"NaN", nan, nan}, {"+inf", inf, 1.0f}, {"1000", 1000.0f, 1.0f}, {"0", 0.0f, 0.5f}};
  check_edges("mx_sigmoid", f_mx_sigmoid, mxsig_e, 4);
  CHECK("mx_sigmoid(-1000) = 1/(1 + exp(88)), in [0, 1e-38)", mx_sigmoid(in(-1000.0f)) >= 0 && mx_sigmoid(in(-1000.0f)) < 1e-38f,
        "%g", (double)mx_sigmoid(in(-1000.0f)));
  CHECK("al_fsigmoid(-100) keeps its subnormal tail (3.8e-44)", al_fsigmoid(in(-100.0f)) > 0, "%g", (double)al_fsigmoid(in(-100.0f)));
  const edge silu_e[] = {{"NaN", nan, nan}, {"+inf", inf, inf}, {"1000", 1000.0f, 1000.0f}, {"0", 0.0f, 0.0f}};
  check_edges("mx_silu", f_mx_silu, silu_e, 4);
  CHECK("mx_silu(-1000) = -1000/(1 + exp(88)), in (-1e-35, 0]", mx_silu(in(-1000.0f)) <= 0 && mx_silu(in(-1000.0f)) > -1e-35f,
        "%g", (double)mx_silu(in(-1000.0f)));
  const edge sp_e[] = {{"NaN", nan, nan}, {"-inf", -inf, 0.0f}, {"-1000", -1000.0f, 0.0f}, {"+inf", inf, inf},
                       {"1000", 1000.0f, 1000.0f}, {"30", 30.0f, 30.0f}};
  check_edges("mx_softplus", f_mx_softplus, sp_e, 6);
  const edge tanh_e[] = {{"NaN", nan, nan}, {"-inf", -inf, -1.0f}, {"-1000", -1000.0f, -1.0f}, {"+inf", inf, 1.0f},
                         {"1000", 1000.0f, 1.0f}, {"+0 (gives -0: the sign of a zero is not kept)", 0.0f, -0.0f}};
  check_edges("mx_tanh", f_mx_tanh, tanh_e, 6);
  CHECK_EXIT();
}
