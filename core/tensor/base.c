/* core/tensor/base.c -- error messages, counted allocation and the version (see
 * include/attnlab/base.h, version.h). Pure C11. The byte counter lets the Lua binding pace
 * its garbage collector by the tensor memory that is really alive, which Lua cannot see on
 * its own. Thread safety: the error message is per thread; the byte counters are
 * process-wide atomics (every thread's and every Lua state's tensors together). */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/base.h"
#include "attnlab/version.h"
#include "block_cache.h"
#include "huge_pages.h"

static _Thread_local char errbuf[1024];
static atomic_size_t mem_live, mem_peak;   /* relaxed: they order nothing else */

const char *al_version(void) { return ATTNLAB_VERSION_STRING; }
int al_version_number(void) { return ATTNLAB_VERSION_NUMBER; }

al_status al_seterr(al_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(errbuf, sizeof errbuf, fmt, ap);
  va_end(ap);
  /* printf spells a NaN with its sign bit set "-nan" (0/0 on x86 makes one); a sign on NaN
   * means nothing to a reader, so every message says "nan" */
  for (char *p = strstr(errbuf, "-nan"); p; p = strstr(p, "-nan")) memmove(p, p + 1, strlen(p + 1) + 1);
  return st;
}

const char *al_errmsg(void) { return errbuf[0] ? errbuf : "unknown error"; }

const char *al_status_name(al_status st) {
  switch (st) {
    case AL_OK: return "ok";
    case AL_EINVAL: return "invalid argument";
    case AL_ENOMEM: return "out of memory";
    case AL_EIO: return "I/O error";
    case AL_EFORMAT: return "bad file format";
    case AL_ESTATE: return "invalid state";
    case AL_ENUM: return "numerical error";
  }
  return "unknown status";
}

/* 64-byte alignment by hand: malloc(size + 64 + 16), the block starting at the first 64-byte
 * boundary at least 16 bytes in, with malloc's pointer and the size it was given kept in the
 * 16 bytes before it (the size lets a block taken from the large-block cache, which may be a
 * little larger than asked, go back to it whole). Why not aligned_alloc: glibc serves it by
 * asking for size + alignment + a header and splitting off both ends, so a freed tensor
 * buffer is exactly its size and too small for the next request of that same size; released
 * promptly (t:release(), <close>) in a training loop, every step's buffers went to fresh
 * heap (+8.6 MB of RSS a step, a page fault per 4 KB). A plain malloc of the same size
 * reuses the freed block exactly. Blocks of 4 MB and more go through block_cache.c. */
#define AL_ALIGN 64
typedef struct {
  char *raw;     /* malloc's pointer */
  size_t cap;    /* the bytes behind it */
} block_header;

void *al_malloc(size_t nbytes) {
  size_t rounded = (nbytes + AL_ALIGN - 1) & ~(size_t)(AL_ALIGN - 1);
  if (rounded < nbytes || rounded > SIZE_MAX - 2 * AL_ALIGN) return NULL;
  if (rounded == 0) rounded = AL_ALIGN;
  block_header h = {NULL, rounded + AL_ALIGN + sizeof h};
  h.raw = al_block_cache_take(h.cap, &h.cap);
  int taken = h.raw != NULL;
  if (!h.raw) h.raw = malloc(h.cap);
  if (!h.raw && h.cap >= AL_CACHE_MIN_BYTES && al_mem_cached() > 0) {
    al_mem_empty_cache();   /* kept blocks of other sizes may be what the system is missing */
    h.raw = malloc(h.cap);
  }
  if (!h.raw) return NULL;
  if (!taken) al_huge_pages_advise(h.raw, h.cap);   /* before the header below touches the block */
  /* p is at most sizeof h + 63 bytes in, whatever malloc's own alignment: inside */
  char *p = (char *)(((uintptr_t)h.raw + sizeof h + AL_ALIGN - 1) & ~(uintptr_t)(AL_ALIGN - 1));
  memcpy(p - sizeof h, &h, sizeof h);
  size_t live = atomic_fetch_add_explicit(&mem_live, nbytes, memory_order_relaxed) + nbytes;
  size_t peak = atomic_load_explicit(&mem_peak, memory_order_relaxed);
  while (live > peak &&
         !atomic_compare_exchange_weak_explicit(&mem_peak, &peak, live, memory_order_relaxed,
                                                memory_order_relaxed)) {
  }
  return p;
}

void *al_calloc(size_t nbytes) {
  void *p = al_malloc(nbytes);
  if (p) memset(p, 0, nbytes);
  return p;
}

void al_free(void *p, size_t nbytes) {
  if (!p) return;
  atomic_fetch_sub_explicit(&mem_live, nbytes, memory_order_relaxed);
  block_header h;
  memcpy(&h, (char *)p - sizeof h, sizeof h);
  if (!al_block_cache_keep(h.raw, h.cap)) free(h.raw);
}

size_t al_mem_live(void) { return atomic_load_explicit(&mem_live, memory_order_relaxed); }
size_t al_mem_peak(void) { return atomic_load_explicit(&mem_peak, memory_order_relaxed); }
