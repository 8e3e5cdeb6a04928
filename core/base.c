/* core/base.c -- error messages and counted allocation (see include/attnlab/base.h).
 * Pure C11. The byte counter lets the Lua binding pace its garbage collector by the
 * tensor memory that is really alive, which Lua cannot see on its own. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/base.h"

static _Thread_local char errbuf[1024];
static size_t mem_live, mem_peak;   /* single Lua state per process: no atomics needed */

al_status al_seterr(al_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(errbuf, sizeof errbuf, fmt, ap);
  va_end(ap);
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

void *al_malloc(size_t nbytes) {
  size_t rounded = (nbytes + 63) & ~(size_t)63;
  void *p = aligned_alloc(64, rounded ? rounded : 64);
  if (p) {
    #pragma omp atomic
    mem_live += nbytes;
    if (mem_live > mem_peak) mem_peak = mem_live;
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
  #pragma omp atomic
  mem_live -= nbytes;
  free(p);
}

size_t al_mem_live(void) { return mem_live; }
size_t al_mem_peak(void) { return mem_peak; }
