/* core/tensor/block_cache.h -- the core-private side of the large-block cache
 * (block_cache.c says why it exists): al_malloc asks it before malloc, al_free offers it a
 * block before free. Blocks are malloc's own pointers and sizes, header included. */
#ifndef ATTNLAB_BLOCK_CACHE_H
#define ATTNLAB_BLOCK_CACHE_H

#include <stddef.h>

/* From 32 MB on glibc maps and unmaps every block; from 128 KB on it does so whenever its
 * moving mmap threshold is below the size, and it trims its heap's top when a collection
 * frees many blocks at once (BiMamba at N = 2304 faulted its 14 and 28 MB blocks in again
 * for five calls in a row). Below 4 MB blocks are many (87 of 2 MB in a training step at
 * N = 65) and cheap to fault in: they are left to glibc, and the slots to the large ones. */
#define AL_CACHE_MIN_BYTES ((size_t)4 << 20)

/* A kept block of at least `need` bytes (and at most need + need/8), its size in *cap; or
 * NULL: then malloc. */
void *al_block_cache_take(size_t need, size_t *cap);

/* 1 if the cache kept the block (the caller must not free it), 0 if the caller frees it. */
int al_block_cache_keep(void *raw, size_t cap);

#endif
