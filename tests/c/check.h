/* tests/c/check.h -- the tiny C test protocol shared by every tests/c/test_*.c.
 *
 * Each check prints one line: "PASS: name", "FAIL: name (why)" or "SKIP: name (why)".
 * tests/run.sh counts those lines across all test programs; a program that crashes
 * or exits non-zero without printing FAIL is counted as one failure. */
#ifndef ATTNLAB_TEST_CHECK_H
#define ATTNLAB_TEST_CHECK_H
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int check_failures = 0;

/* Whether the program runs under valgrind (tests/valgrind.sh sets ATTNLAB_VALGRIND): a test then
 * shrinks work that is slow under instrumentation and adds nothing to a memory check. */
static inline int under_valgrind(void) { return getenv("ATTNLAB_VALGRIND") != NULL; }

/* Whether this program was built with AddressSanitizer (CI's asan-test build). */
static inline int built_with_asan(void) {
#if defined(__SANITIZE_ADDRESS__)
  return 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return 1;
#endif
#endif
  return 0;
}

static inline void check_report(int ok, const char *name, const char *fmt, ...) {
  if (ok) {
    printf("PASS: %s\n", name);
  } else {
    char why[512] = "";
    if (fmt) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(why, sizeof why, fmt, ap);
      va_end(ap);
    }
    printf("FAIL: %s (%s)\n", name, why);
    check_failures++;
  }
  fflush(stdout);
}

static inline void check_skip(const char *name, const char *why) {
  printf("SKIP: %s (%s)\n", name, why);
  fflush(stdout);
}

/* max |a-b| / (atol + rtol*|b|) over n values; <= 1 means close. */
static inline double check_close_ratio(const float *a, const float *b, long n, double atol, double rtol,
                                long *worst) {
  double r = 0;
  for (long i = 0; i < n; i++) {
    double d = fabs((double)a[i] - (double)b[i]);
    if (isnan(a[i]) != isnan(b[i])) d = INFINITY;
    double q = d / (atol + rtol * fabs((double)b[i]));
    if (q > r || isnan(q)) { r = q; if (worst) *worst = i; }
  }
  return r;
}

#define CHECK(name, cond, ...) check_report(!!(cond), name, __VA_ARGS__)
#define CHECK_EXIT() return check_failures ? 1 : 0

#endif
