/* tests/c/test_block_cache.c -- the large-block cache behind al_malloc/al_free
 * (core/tensor/block_cache.c): a freed block of 4 MB or more is kept and handed to the next
 * request of about its size, the limit and the eviction of the oldest hold, al_calloc still
 * clears, the live-byte counter never sees kept blocks, and threads can share it. Builds
 * with AddressSanitizer keep nothing, so ASan sees every free: there the test checks that.
 * Every check prints PASS/FAIL/SKIP (tests/c/check.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "attnlab/base.h"
#include "check.h"

#define MB ((size_t)1 << 20)

static void test_sanitized(void) {
  void *p = al_malloc(6 * MB);
  al_free(p, 6 * MB);
  CHECK("ASan build: a freed 6 MB block is not kept", al_mem_cached() == 0, "%zu bytes kept", al_mem_cached());
  al_mem_set_cache_limit(1 << 30);
  CHECK("ASan build: the limit stays 0", al_mem_cache_limit() == 0, "limit %zu", al_mem_cache_limit());
}

static void test_reuse(void) {
  size_t live0 = al_mem_live();
  CHECK("the default limit is 2 GiB", al_mem_cache_limit() == ((size_t)2 << 30), "limit %zu", al_mem_cache_limit());

  unsigned char *a = al_malloc(6 * MB);
  CHECK("a 6 MB block is 64-byte aligned", a && (uintptr_t)a % 64 == 0, "%p", (void *)a);
  memset(a, 0xAB, 6 * MB);
  al_free(a, 6 * MB);
  size_t kept = al_mem_cached();
  CHECK("a freed 6 MB block is kept, and not counted as live",
        kept >= 6 * MB && kept < 6 * MB + 4096 && al_mem_live() == live0, "kept %zu, live %zu vs %zu", kept,
        al_mem_live(), live0);

  unsigned char *b = al_malloc(6 * MB);
  CHECK("the next 6 MB request gets the kept block back", b == a && al_mem_cached() == 0,
        "%p vs %p, %zu still kept", (void *)b, (void *)a, al_mem_cached());
  al_free(b, 6 * MB);

  /* a kept block much larger than the request is not handed out: at most an eighth wasted */
  unsigned char *c = al_malloc(5 * MB);
  CHECK("a 5 MB request does not take a 6 MB block", c != a && al_mem_cached() == kept,
        "%p, %zu kept", (void *)c, al_mem_cached());
  al_free(c, 5 * MB);
  CHECK("both blocks are kept", al_mem_cached() > 11 * MB, "%zu kept", al_mem_cached());

  /* a slightly smaller request may take it: the block goes back whole at its free */
  unsigned char *d = al_malloc(6 * MB - 100 * 1024);
  CHECK("a request within an eighth of a kept block takes it", d == a, "%p vs %p", (void *)d, (void *)a);
  al_free(d, 6 * MB - 100 * 1024);
  CHECK("it goes back whole", al_mem_cached() > 11 * MB && al_mem_live() == live0, "%zu kept, live %zu",
        al_mem_cached(), al_mem_live());

  float *z = al_calloc(6 * MB);
  int zero = z != NULL;
  for (size_t i = 0; zero && i < 6 * MB / sizeof *z; i++) zero = z[i] == 0.0f;
  CHECK("al_calloc clears a kept block that held other data", zero && (void *)z == (void *)a, "%p", (void *)z);
  al_free(z, 6 * MB);

  void *small = al_malloc(3 * MB);
  size_t before = al_mem_cached();
  al_free(small, 3 * MB);
  CHECK("a 3 MB block is left to malloc", al_mem_cached() == before, "%zu -> %zu", before, al_mem_cached());

  al_mem_empty_cache();
  CHECK("al_mem_empty_cache gives every block back", al_mem_cached() == 0 && al_mem_live() == live0,
        "%zu kept", al_mem_cached());
}

static void test_limit(void) {
  size_t old = al_mem_set_cache_limit(13 * MB);
  CHECK("al_mem_set_cache_limit returns the old limit", old == ((size_t)2 << 30), "%zu", old);
  void *p[3];
  for (int i = 0; i < 3; i++) p[i] = al_malloc(6 * MB);
  for (int i = 0; i < 3; i++) al_free(p[i], 6 * MB);
  /* 13 MB holds two: the first freed (the oldest) went when the third came */
  CHECK("the limit holds: two of three 6 MB blocks kept", al_mem_cached() > 12 * MB && al_mem_cached() <= 13 * MB,
        "%zu kept", al_mem_cached());
  void *q = al_malloc(6 * MB), *r = al_malloc(6 * MB), *s = al_malloc(6 * MB);
  CHECK("of equal blocks the last kept is handed out first; the oldest was dropped",
        q == p[2] && r == p[1] && al_mem_cached() == 0, "%p %p %p vs %p %p", q, r, s, p[2], p[1]);
  al_free(q, 6 * MB);
  al_free(r, 6 * MB);
  al_free(s, 6 * MB);

  void *big = al_malloc(20 * MB);
  size_t before = al_mem_cached();
  al_free(big, 20 * MB);
  CHECK("a block larger than the limit is freed", al_mem_cached() == before, "%zu -> %zu", before, al_mem_cached());

  al_mem_set_cache_limit(5 * MB);
  CHECK("lowering the limit drops what is over it", al_mem_cached() == 0, "%zu kept", al_mem_cached());
  al_mem_set_cache_limit(0);
  void *t = al_malloc(6 * MB);
  al_free(t, 6 * MB);
  CHECK("limit 0 keeps nothing", al_mem_cached() == 0, "%zu kept", al_mem_cached());

  /* a limit of exactly one block's size keeps that block (cached + cap == limit is within
   * it): with the cache empty there is nothing to evict first. The block's size (6 MB plus
   * al_malloc's alignment header) is read off al_mem_cached. */
  al_mem_set_cache_limit(old);
  void *u = al_malloc(6 * MB);
  al_free(u, 6 * MB);
  size_t cap = al_mem_cached();
  al_mem_set_cache_limit(cap);
  u = al_malloc(6 * MB);
  CHECK("a limit of exactly one block: the kept block is handed out", al_mem_cached() == 0 && cap > 6 * MB,
        "%zu kept, cap %zu", al_mem_cached(), cap);
  al_free(u, 6 * MB);
  CHECK("... and kept again when freed", al_mem_cached() == cap, "%zu kept, cap %zu", al_mem_cached(), cap);
  al_mem_set_cache_limit(cap - 1);
  CHECK("a limit one byte below the kept bytes drops the block", al_mem_cached() == 0, "%zu kept", al_mem_cached());
  al_mem_empty_cache();
  al_mem_set_cache_limit(old);
}

/* Threads allocating and freeing blocks of a few sizes at once: no block handed out twice
 * (each thread writes its id over its block and checks it before freeing), the counters
 * back at their start. */
static void test_threads(void) {
  size_t live0 = al_mem_live();
  int bad = 0;
  int rounds = under_valgrind() ? 20 : 400;
#pragma omp parallel num_threads(4) reduction(+ : bad)
  {
    unsigned id = 0;
#ifdef _OPENMP
    id = (unsigned)omp_get_thread_num();
#endif
    for (int r = 0; r < rounds; r++) {
      size_t n = (4 + (size_t)((r + id) % 3)) * MB;
      unsigned *p = al_malloc(n);
      if (!p) { bad++; continue; }
      size_t words = n / sizeof *p;
      for (size_t i = 0; i < words; i += 1024) p[i] = id * 100000u + (unsigned)r;
      for (size_t i = 0; i < words; i += 1024) bad += p[i] != id * 100000u + (unsigned)r;
      al_free(p, n);
    }
  }
  CHECK("4 threads sharing the cache: no block handed out twice, counters back", bad == 0 && al_mem_live() == live0,
        "%d bad words, live %zu vs %zu", bad, al_mem_live(), live0);
  al_mem_empty_cache();
}

int main(void) {
  if (built_with_asan()) {
    test_sanitized();
    check_skip("block cache reuse, limit and threads", "AddressSanitizer build keeps no blocks");
  } else {
    test_reuse();
    test_limit();
    test_threads();
  }
  CHECK_EXIT();
}
