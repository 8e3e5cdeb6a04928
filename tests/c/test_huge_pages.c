/* tests/c/test_huge_pages.c -- transparent huge pages under the heap (core/tensor/huge_pages.c):
 * with the kernel in "madvise" mode, a large block al_malloc takes from the heap lies in a
 * mapping advised for huge pages (smaps' VmFlags "hg"), and so does the heap's later growth;
 * ATTNLAB_HUGE_PAGES=0 leaves the heap alone; al_huge_pages names the state. The program sets
 * glibc up as the Lua binding does (lua/bind/module.c), or a 16 MB block would be an mmap of
 * its own. Whether the kernel then backs the memory with huge pages depends on free memory,
 * so that is printed, not checked. Every check prints PASS/FAIL/SKIP (tests/c/check.h). */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attnlab/base.h"
#include "check.h"

#define MB ((size_t)1 << 20)

/* The kernel's THP mode (the bracketed word), or "" when the file is missing. */
static const char *kernel_mode(void) {
  static char mode[32];
  mode[0] = 0;
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f) return mode;
  char line[128];
  if (fgets(line, sizeof line, f)) {
    char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;
    if (a && b && (size_t)(b - a - 1) < sizeof mode) {
      memcpy(mode, a + 1, (size_t)(b - a - 1));
      mode[b - a - 1] = 0;
    }
  }
  fclose(f);
  return mode;
}

/* The mapping of /proc/self/smaps that holds address p: 1 if found, with whether its VmFlags
 * carry "hg" (advised for huge pages) and its AnonHugePages in kB. */
static int mapping_of(const void *p, int *advised, long *huge_kb) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return 0;
  char line[512];
  int inside = 0, found = 0;
  *advised = 0;
  *huge_kb = 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
      if (found) break;
      inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
      found = inside;
      continue;
    }
    if (!inside) continue;
    if (strncmp(line, "AnonHugePages:", 14) == 0) *huge_kb = strtol(line + 14, NULL, 10);
    if (strncmp(line, "VmFlags:", 8) == 0) *advised = strstr(line, " hg") != NULL;
  }
  fclose(f);
  return found;
}

/* In a child (its own heap and environment): ATTNLAB_HUGE_PAGES=0 advises nothing. Exit 0 if so. */
static int child_disabled(void) {
  setenv("ATTNLAB_HUGE_PAGES", "0", 1);
  char *p = al_malloc(16 * MB);
  if (!p) return 3;
  memset(p, 1, 16 * MB);
  int advised;
  long huge_kb;
  int ok = mapping_of(p + 8 * MB, &advised, &huge_kb) && !advised && al_huge_pages_advised() == 0 &&
           strncmp(al_huge_pages(), "off", 3) == 0;
  if (!ok) fprintf(stderr, "child: advised %d, %zu bytes advised, state '%s'\n", advised, al_huge_pages_advised(), al_huge_pages());
  al_free(p, 16 * MB);
  return ok ? 0 : 1;
}

int main(void) {
  /* the binding's settings: large blocks in the heap, which grows by 64 MB */
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  mallopt(M_TOP_PAD, 64 << 20);
  /* first of all, before this process reads ATTNLAB_HUGE_PAGES: the child sets it */
  pid_t pid = getenv("ATTNLAB_HUGE_PAGES") || built_with_asan() || under_valgrind() ? -1 : fork();
  if (pid == 0) _exit(child_disabled());
  int status = -1;
  if (pid > 0) waitpid(pid, &status, 0);
  const char *mode = kernel_mode();
  const char *state = al_huge_pages();
  printf("kernel THP mode '%s'; al_huge_pages: %s\n", mode, state);
  if (!*mode) {
    CHECK("without the kernel's THP file the state says unavailable", strncmp(state, "unavailable", 11) == 0, "'%s'", state);
    check_skip("huge pages under the heap", "this kernel has no transparent huge pages (SKIPPED LOUDLY)");
    CHECK_EXIT();
  }
  if (strcmp(mode, "madvise") != 0) {
    CHECK("the state names the kernel's own mode", strncmp(state, mode, strlen(mode)) == 0, "'%s' vs '%s'", state, mode);
    check_skip("huge pages under the heap", "the kernel's THP mode is not madvise: nothing to advise (SKIPPED LOUDLY)");
    CHECK_EXIT();
  }
  if (built_with_asan() || under_valgrind() || getenv("ATTNLAB_HUGE_PAGES")) {
    check_skip("huge pages under the heap", "AddressSanitizer, valgrind or ATTNLAB_HUGE_PAGES set: their own allocator or policy (SKIPPED LOUDLY)");
    CHECK_EXIT();
  }
  CHECK("in madvise mode the state says attnlab advises its heap", strncmp(state, "madvise", 7) == 0, "'%s'", state);

  if (pid < 0)
    check_skip("ATTNLAB_HUGE_PAGES=0 leaves the heap unadvised", "fork failed (SKIPPED LOUDLY)");
  else
    CHECK("ATTNLAB_HUGE_PAGES=0 leaves the heap unadvised and says off", WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "child status %d", status);

  char *a = al_malloc(16 * MB);
  CHECK("a 16 MB block comes from the heap (below the break)", a && (void *)(a + 16 * MB) <= sbrk(0), "%p, break %p",
        (void *)a, sbrk(0));
  int advised;
  long huge_kb;
  memset(a, 1, 16 * MB);
  CHECK("its mapping is advised for huge pages", mapping_of(a + 8 * MB, &advised, &huge_kb) && advised,
        "VmFlags hg %d", advised);
  CHECK("al_huge_pages_advised counts at least its whole 2 MB units", al_huge_pages_advised() >= 14 * MB, "%zu bytes",
        al_huge_pages_advised());
  printf("  AnonHugePages of its mapping: %ld kB (the kernel's choice, not checked)\n", huge_kb);

  /* the heap grows past what was advised: the new block is advised too */
  size_t before = al_huge_pages_advised();
  char *b = al_malloc(96 * MB);
  CHECK("a block that grows the heap is advised as well", b && mapping_of(b + 48 * MB, &advised, &huge_kb) && advised &&
        al_huge_pages_advised() >= before + 94 * MB, "hg %d, %zu -> %zu bytes", advised, before, al_huge_pages_advised());

  /* a small block does not change anything, and the contents are plain memory */
  char *c = al_malloc(1000);
  memset(c, 7, 1000);
  memset(b, 3, 96 * MB);
  CHECK("advised memory holds what is written", a[12345] == 1 && b[96 * MB - 1] == 3 && c[999] == 7, "%d %d %d",
        a[12345], b[96 * MB - 1], c[999]);
  al_free(c, 1000);
  al_free(b, 96 * MB);
  al_free(a, 16 * MB);
  CHECK_EXIT();
}
