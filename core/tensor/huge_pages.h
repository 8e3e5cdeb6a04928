/* core/tensor/huge_pages.h -- the core-private side of huge_pages.c (which says why):
 * al_malloc offers every fresh block it got from malloc. */
#ifndef ATTNLAB_HUGE_PAGES_H
#define ATTNLAB_HUGE_PAGES_H

#include <stddef.h>

/* Blocks below this are not looked at: a step's large buffers are 2 MB and up, and a
 * smaller block rarely grows the heap by a whole 2 MB unit. */
#define AL_HUGE_MIN_BYTES ((size_t)1 << 20)

/* raw, cap: malloc's pointer and size, before anything is written into the block. */
void al_huge_pages_advise(void *raw, size_t cap);

#endif
