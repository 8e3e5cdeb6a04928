/* core/tensor/block_cache.c -- large freed blocks kept for the next allocation of about
 * their size (see block_cache.h; the public side is al_mem_cached, al_mem_empty_cache and
 * al_mem_set_cache_limit in include/attnlab/base.h). C11 atomics and POSIX sched_yield.
 *
 * Why: glibc serves a block of 32 MB or more (the highest its mmap threshold goes), and
 * often smaller ones, with a fresh mmap and unmaps it at free, so the next block of that size
 * is faulted in and zeroed by the kernel again, 4 KB at a time. Attention at N = 2304
 * (batch 8, 3 heads) allocates its weights P (8, 3, 2304, 2304), 509 MB, and their gradient
 * every step: before this cache a forward+backward took about 145,000 page faults, and about
 * a third of the process's CPU time was the kernel's. BiMamba's workspace at that size made single forwards 1x to 3x
 * their warm time depending on whether glibc had given the memory back. Blocks below
 * AL_CACHE_MIN_BYTES (4 MB, block_cache.h says why) are left to glibc.
 *
 * What it changes: only where a block's bytes live. A block taken from the cache holds the
 * last owner's data instead of the kernel's zeros; al_malloc never promised either, and
 * al_calloc clears what it returns. Sanitizer builds keep no blocks, so ASan sees every free;
 * under valgrind, memcheck is told that a kept block is inaccessible and a taken one
 * undefined, so a use after free or a read of old data is still reported.
 *
 * Policy: at most AL_CACHE_SLOTS blocks and `limit` bytes (al_mem_set_cache_limit; 2 GiB
 * by default). A request takes the smallest kept block that holds it and wastes at most an
 * eighth of it, of equal ones the last kept (the most likely to be still in cache, as glibc's
 * own reuse is); a free that would pass the limit drops the oldest blocks first. A lock
 * (an atomic flag: the sections are a few dozen instructions, and only blocks of 4 MB or
 * more come here) makes it safe from any thread. */
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "attnlab/base.h"
#include "block_cache.h"

#if defined(__SANITIZE_ADDRESS__)
#define AL_CACHE_ENABLED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define AL_CACHE_ENABLED 0
#endif
#endif
#ifndef AL_CACHE_ENABLED
#define AL_CACHE_ENABLED 1
#endif

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define AL_VG_NOACCESS(p, n) VALGRIND_MAKE_MEM_NOACCESS(p, n)
#define AL_VG_UNDEFINED(p, n) VALGRIND_MAKE_MEM_UNDEFINED(p, n)
#endif
#endif
#ifndef AL_VG_NOACCESS
#define AL_VG_NOACCESS(p, n) ((void)(p), (void)(n))
#define AL_VG_UNDEFINED(p, n) ((void)(p), (void)(n))
#endif

#define AL_CACHE_SLOTS 32

typedef struct {
  void *raw;        /* malloc's pointer; NULL for an empty slot */
  size_t cap;       /* the bytes malloc gave it */
  uint64_t stamp;   /* when it was kept: the smallest is the oldest */
} cache_slot;

static cache_slot slots[AL_CACHE_SLOTS];
/* changed only under the lock; atomic so that al_mem_cached and take's early test can read it
 * without one */
static atomic_size_t cached_bytes;
static size_t limit = AL_CACHE_ENABLED ? (size_t)2 << 30 : 0;
static uint64_t clock_;
static atomic_flag busy = ATOMIC_FLAG_INIT;

/* yield while another thread holds it: with more threads than cores the holder may be the
 * one waiting for the core */
static void lock(void) { while (atomic_flag_test_and_set_explicit(&busy, memory_order_acquire)) sched_yield(); }
static void unlock(void) { atomic_flag_clear_explicit(&busy, memory_order_release); }
static size_t cached(void) { return atomic_load_explicit(&cached_bytes, memory_order_relaxed); }
static void set_cached(size_t n) { atomic_store_explicit(&cached_bytes, n, memory_order_relaxed); }

/* The slot of the oldest kept block, or -1 when none is kept (under the lock). */
static int oldest_slot(void) {
  int oldest = -1;
  for (int i = 0; i < AL_CACHE_SLOTS; i++)
    if (slots[i].raw && (oldest < 0 || slots[i].stamp < slots[oldest].stamp)) oldest = i;
  return oldest;
}

/* An empty slot, or -1 (under the lock). */
static int empty_slot(void) {
  for (int i = 0; i < AL_CACHE_SLOTS; i++)
    if (!slots[i].raw) return i;
  return -1;
}

/* Empties slot i and returns its block (to be freed after unlocking: free can take a while). */
static void *drop_slot(int i) {
  void *raw = slots[i].raw;
  set_cached(cached() - slots[i].cap);
  slots[i].raw = NULL;
  return raw;
}

void *al_block_cache_take(size_t need, size_t *cap) {
  if (need < AL_CACHE_MIN_BYTES || cached() == 0) return NULL;
  void *raw = NULL;
  lock();
  int best = -1;
  for (int i = 0; i < AL_CACHE_SLOTS; i++) {
    if (slots[i].raw && slots[i].cap >= need && slots[i].cap - need <= need / 8 &&
        (best < 0 || slots[i].cap < slots[best].cap ||
         (slots[i].cap == slots[best].cap && slots[i].stamp > slots[best].stamp)))
      best = i;
  }
  if (best >= 0) {
    *cap = slots[best].cap;
    raw = drop_slot(best);
  }
  unlock();
  if (raw) AL_VG_UNDEFINED(raw, *cap);
  return raw;
}

int al_block_cache_keep(void *raw, size_t cap) {
  if (cap < AL_CACHE_MIN_BYTES) return 0;
  /* before another thread can take it; a block that is not kept is freed, which reads nothing */
  AL_VG_NOACCESS(raw, cap);
  void *evicted[AL_CACHE_SLOTS];
  int nevicted = 0, kept = 0;
  lock();
  if (cap <= limit) {
    /* make room, the oldest first: once all are gone the bytes and a slot allow this one */
    while (cached() + cap > limit || empty_slot() < 0) evicted[nevicted++] = drop_slot(oldest_slot());
    slots[empty_slot()] = (cache_slot){raw, cap, ++clock_};
    set_cached(cached() + cap);
    kept = 1;
  }
  unlock();
  for (int i = 0; i < nevicted; i++) free(evicted[i]);
  return kept;
}

/* Drops kept blocks, the oldest first, until at most `keep` bytes stay (0: all of them). */
static void trim_to(size_t keep) {
  for (;;) {
    void *raw = NULL;
    lock();
    if (cached() > keep) raw = drop_slot(oldest_slot());
    unlock();
    if (!raw) return;
    free(raw);
  }
}

void al_mem_empty_cache(void) { trim_to(0); }

size_t al_mem_cached(void) { return cached(); }

size_t al_mem_cache_limit(void) {
  lock();
  size_t l = limit;
  unlock();
  return l;
}

size_t al_mem_set_cache_limit(size_t bytes) {
  lock();
  size_t old = limit;
  limit = AL_CACHE_ENABLED ? bytes : 0;
  unlock();
  trim_to(bytes);
  return old;
}
