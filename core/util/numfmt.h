/* core/util/numfmt.h -- numbers in error messages, private to core/: the shortest text that reads
 * back as the same value. %g keeps 6 digits, so a refusal could print a value that looks allowed
 * ("ratio must be in (0, 1], got 1" for the ratio 1.0000001). */
#ifndef ATTNLAB_CORE_NUMFMT_H
#define ATTNLAB_CORE_NUMFMT_H

#include <stdio.h>
#include <stdlib.h>

/* v as the fewest significant digits (up to 17) that read back as v; "nan", "inf" as %g has
 * them. buf: 32 bytes. Returns buf. */
static inline const char *al_fmt_d_(char *buf, double v) {
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, 32, "%.*g", prec, v);
    if (v != v || strtod(buf, NULL) == v) break;
  }
  return buf;
}
/* The same for a float32 (up to 9 digits, read back through float). */
static inline const char *al_fmt_f_(char *buf, float v) {
  for (int prec = 1; prec <= 9; prec++) {
    snprintf(buf, 32, "%.*g", prec, (double)v);
    if (v != v || (float)strtod(buf, NULL) == v) break;
  }
  return buf;
}

#endif
