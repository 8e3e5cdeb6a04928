/* attnlab/base.h -- status codes, error messages, memory accounting.
 *
 * Pure C11; nothing here knows about Lua. Every fallible core function returns an
 * al_status and, on failure, leaves a message in a thread-local buffer that
 * al_errmsg() returns (the Lua binding turns it into a Lua error). The core never
 * calls abort(), exit() or lua_error(). */
#ifndef ATTNLAB_BASE_H
#define ATTNLAB_BASE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  AL_OK = 0,
  AL_EINVAL = 1,   /* bad argument: shape, dtype, dim, value */
  AL_ENOMEM = 2,   /* allocation failed */
  AL_EIO = 3,      /* file missing, unreadable, truncated */
  AL_EFORMAT = 4,  /* file present but malformed (bad magic, corrupt header) */
  AL_ESTATE = 5,   /* wrong state: backward twice, grad of a non-scalar, ... */
  AL_ENUM = 6      /* numerical failure: NaN/Inf where it must not be */
} al_status;

/* printf-style; returns `st` so callers can write `return al_seterr(AL_EINVAL, ...)`. */
al_status al_seterr(al_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
const char *al_errmsg(void);      /* message of the last failure on this thread */
const char *al_status_name(al_status st);

/* Allocation through these is counted, so a binding can tell its garbage collector
 * how many bytes of tensor storage are alive (Lua's GC does not see malloc). */
void *al_malloc(size_t nbytes);   /* 64-byte aligned; NULL on failure (no message) */
void *al_calloc(size_t nbytes);
void al_free(void *p, size_t nbytes);
size_t al_mem_live(void);         /* bytes currently allocated through al_malloc */
size_t al_mem_peak(void);

/* Freed blocks of 4 MB and more are kept (not counted as live) and given to the next
 * allocation of about their size, instead of being unmapped and faulted in again: a step at
 * many tokens allocates the same large buffers every time (attention's weights at N = 2304,
 * 509 MB). At most the limit's bytes are kept, 2 GiB by default; the oldest go first.
 * Results never depend on it: a kept block's old contents are as undefined as fresh memory.
 * Builds with AddressSanitizer keep nothing (the limit is 0 and cannot be raised). */
size_t al_mem_cached(void);                   /* bytes kept now */
void al_mem_empty_cache(void);                /* give every kept block back to the system */
size_t al_mem_set_cache_limit(size_t bytes);  /* 0 keeps nothing; returns the old limit */
size_t al_mem_cache_limit(void);

/* Transparent huge pages (2 MB) under the heap that holds the large tensor buffers
 * (core/tensor/huge_pages.c says why and how; ATTNLAB_HUGE_PAGES=0 turns it off). Where
 * bytes live, never what is computed. al_huge_pages says what holds on this machine, e.g.
 * "madvise (attnlab advises its heap)" or "never (the kernel's setting)"; al_huge_pages_advised
 * gives the bytes of heap advised so far. */
const char *al_huge_pages(void);
size_t al_huge_pages_advised(void);

#define AL_MAXDIM 8
/* The most elements a tensor's shape may span: the product of its nonzero sizes (its numel
 * unless it is empty), so that numel, every stride and the byte count of 8-byte elements fit
 * an int64. A shape beyond it is refused when a tensor is made or read from a file. */
#define AL_MAX_SPAN (INT64_MAX / 8)

#ifdef __cplusplus
}
#endif

#endif
