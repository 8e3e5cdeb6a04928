/* core/tensor/huge_pages.c -- transparent huge pages (2 MB) under the heap that holds the
 * large tensor buffers (include/attnlab/base.h: al_huge_pages; huge_pages.h: the advice
 * al_malloc asks for). Linux and glibc; elsewhere it reports "unavailable" and does nothing.
 *
 * Why: a training step streams activations of 2-9 MB (N = 65: 8,320 rows of 64-256 floats)
 * through GEMM, layer norm and the pointwise ops, and attnlab's own GEMM reads op(A) and
 * writes C where they lie, a tile's 14 rows at strides of 256 bytes to 1 KB. On 4 KB pages
 * such a buffer spans 500-2,200 pages; the first GEMM into a freshly reused output buffer ran
 * at a third to a half of the same call repeated at once (experiments/classifier/THROUGHPUT.md,
 * "Huge pages"). With the kernel's THP mode "madvise" (what Debian's cloud kernels ship)
 * nothing is huge unless a process asks, and glibc asks only under its tunable
 * glibc.malloc.hugetlb=1, which is read at process start-up, too late for a library.
 *
 * How: glibc serves blocks below its mmap threshold (256 MiB under the binding's mallopt)
 * from the main heap, which only grows (brk). When al_malloc gets a fresh block of at least
 * AL_HUGE_MIN_BYTES lying in the heap, the heap from the first such block up to the current
 * break, in whole 2 MB units, gets madvise(MADV_HUGEPAGE), each unit once: a later first touch
 * of an untouched unit maps one huge page. The binding pads every growth of the heap with
 * 64 MB (M_TOP_PAD), so glibc's header at the top of a new block lands in memory the advice
 * already covers rather than leaving a small page in the unit after it. Memory touched before
 * the advice keeps its small pages. A block above the break (an mmap of its own, another
 * thread's arena) is left alone.
 *
 * What it changes: where bytes live, never what is computed. A 2 MB unit the heap touches
 * anywhere becomes resident whole (the peak RSS of train_steps.lua at N = 65: 194 MB before,
 * 196 MB with it). ATTNLAB_HUGE_PAGES=0 in the environment turns it off (read once, at the
 * first large block or al_huge_pages()). */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/base.h"
#include "huge_pages.h"

#if defined(__linux__) && defined(__GLIBC__)
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
#define AL_HUGE_SUPPORTED 1
#else
#define AL_HUGE_SUPPORTED 0
#endif

#define HUGE_UNIT ((uintptr_t)2 << 20)

#if AL_HUGE_SUPPORTED
/* [lo, hi): the heap advised so far, whole units; 0, 0 before the first block. Written under
 * the mutex; hi is read without it on the fast path (the break's last whole unit is hi: the
 * heap has not grown since, nothing to do). */
static atomic_uintptr_t advised_lo, advised_hi;
static pthread_mutex_t advise_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static int disabled;   /* ATTNLAB_HUGE_PAGES=0 */
static char kernel_mode[16];   /* the kernel's THP mode, "" when it has none (read_env) */
static atomic_int advise_failed;   /* madvise said no (a kernel without THP): stop asking */

/* Once per process: the switch, and the kernel's mode (the bracketed word of
 * /sys/kernel/mm/transparent_hugepage/enabled). */
static void read_env(void) {
  const char *e = getenv("ATTNLAB_HUGE_PAGES");
  disabled = e && strcmp(e, "0") == 0;
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f) return;
  char line[128];
  if (fgets(line, sizeof line, f)) {
    char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;
    if (a && b && (size_t)(b - a - 1) < sizeof kernel_mode) memcpy(kernel_mode, a + 1, (size_t)(b - a - 1));
  }
  fclose(f);
}

void al_huge_pages_advise(void *raw, size_t cap) {
  if (cap < AL_HUGE_MIN_BYTES) return;
  pthread_once(&env_once, read_env);
  if (disabled || atomic_load_explicit(&advise_failed, memory_order_relaxed)) return;
  uintptr_t start = (uintptr_t)raw, end = start + cap;
  if (end < start) return;
  void *brk_now = sbrk(0);   /* glibc's cached break: no system call */
  uintptr_t brk_end = (uintptr_t)brk_now;
  if (brk_now == (void *)-1 || end > brk_end) return;   /* not below the break: not the heap */
  uintptr_t top = brk_end & ~(HUGE_UNIT - 1);
  if (atomic_load_explicit(&advised_hi, memory_order_relaxed) == top) return;   /* the heap has not grown */
  pthread_mutex_lock(&advise_lock);
  uintptr_t lo = atomic_load_explicit(&advised_lo, memory_order_relaxed);
  uintptr_t hi = atomic_load_explicit(&advised_hi, memory_order_relaxed);
  if (!hi) {   /* the first block: from its first whole unit on */
    lo = hi = (start + HUGE_UNIT - 1) & ~(HUGE_UNIT - 1);
    if (hi > top) lo = hi = top;
  }
  if (hi > top) hi = top;   /* the heap shrank: what grows there again is new memory */
  if (lo > hi) lo = hi;
  if (top > hi) {
    if (madvise((void *)hi, top - hi, MADV_HUGEPAGE) == 0) hi = top;
    else atomic_store_explicit(&advise_failed, 1, memory_order_relaxed);   /* no THP in this kernel (EINVAL) */
  }
  atomic_store_explicit(&advised_lo, lo, memory_order_relaxed);
  atomic_store_explicit(&advised_hi, hi, memory_order_relaxed);
  pthread_mutex_unlock(&advise_lock);
}

size_t al_huge_pages_advised(void) {
  return (size_t)(atomic_load_explicit(&advised_hi, memory_order_relaxed) -
                  atomic_load_explicit(&advised_lo, memory_order_relaxed));
}

const char *al_huge_pages(void) {
  pthread_once(&env_once, read_env);
  if (!kernel_mode[0]) return "unavailable (no transparent huge pages in this kernel)";
  if (strcmp(kernel_mode, "never") == 0) return "never (the kernel's setting)";
  if (strcmp(kernel_mode, "always") == 0) return "always (the kernel's setting)";
  if (disabled) return "off (ATTNLAB_HUGE_PAGES=0; the kernel's mode is madvise)";
  if (atomic_load_explicit(&advise_failed, memory_order_relaxed)) return "off (madvise refused MADV_HUGEPAGE)";
  return "madvise (attnlab advises its heap)";
}
#else
void al_huge_pages_advise(void *raw, size_t cap) { (void)raw; (void)cap; }
size_t al_huge_pages_advised(void) { return 0; }
const char *al_huge_pages(void) { return "unavailable (not Linux with glibc)"; }
#endif
