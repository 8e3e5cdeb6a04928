/* attnlab/version.h -- the version of these headers, and of the library at run time.
 *
 *   #include <attnlab/version.h>
 *   if (al_version_number() / 10000 != ATTNLAB_VERSION_MAJOR) { ...built against another major... }
 *   printf("attnlab %s\n", al_version());          -- "0.1.0"
 *
 * Semantic versioning from 1.0 on; before it, a minor release may change the C API (see
 * CHANGELOG.md). The shared library's soname is libattnlab.so.<MAJOR>. The Makefile, the
 * Lua module (al.version) and bin/attnlab --version all read the numbers from this file. */
#ifndef ATTNLAB_VERSION_H
#define ATTNLAB_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

#define ATTNLAB_VERSION_MAJOR 0
#define ATTNLAB_VERSION_MINOR 1
#define ATTNLAB_VERSION_PATCH 0

#define ATTNLAB_VERSION_STR_(x) #x
#define ATTNLAB_VERSION_STR(x) ATTNLAB_VERSION_STR_(x)
/* "0.1.0" */
#define ATTNLAB_VERSION_STRING                                                      \
  ATTNLAB_VERSION_STR(ATTNLAB_VERSION_MAJOR) "." ATTNLAB_VERSION_STR(ATTNLAB_VERSION_MINOR) "." \
  ATTNLAB_VERSION_STR(ATTNLAB_VERSION_PATCH)
/* 10000 * major + 100 * minor + patch: 100 for 0.1.0 */
#define ATTNLAB_VERSION_NUMBER \
  (10000 * ATTNLAB_VERSION_MAJOR + 100 * ATTNLAB_VERSION_MINOR + ATTNLAB_VERSION_PATCH)

/* The version of the library actually linked or loaded (may differ from the headers). */
const char *al_version(void);      /* "0.1.0" */
int al_version_number(void);       /* ATTNLAB_VERSION_NUMBER of the library */

#ifdef __cplusplus
}
#endif

#endif
