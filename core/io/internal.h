/* core/io/internal.h -- what the files of core/io share (not public API). */
#ifndef ATTNLAB_CORE_IO_INTERNAL_H
#define ATTNLAB_CORE_IO_INTERNAL_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "attnlab/base.h"

/* core/io/file.c. "a FIFO", "a character device", "a directory", ... for a st_mode. */
const char *al_io_kind_(unsigned mode);

/* Open `path` for reading ("rb") when it is a regular file (a symbolic link counts as its
 * target); size: its size in bytes (may be NULL). Anything else -- a FIFO, which fopen would
 * wait on forever, a device, a directory -- is refused as "<path>: is a FIFO, not a regular
 * file" without blocking: the path is stat'ed first and opened with O_NONBLOCK. */
al_status al_io_open_regular_(const char *path, FILE **fp, uint64_t *size);

/* Byte offset of the first invalid UTF-8 sequence in s[0..n), or n if it is valid
 * (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF). */
size_t al_st_utf8_check_(const uint8_t *s, size_t n);

/* core/io/safetensors_read.c. An entry's own consistency, before its bytes are read or written:
 * a valid dtype, 0..AL_ST_MAXDIM dims, sizes >= 0 whose product fits, nbytes equal to the product
 * times the element size, data when nbytes > 0. Messages: "<file>: <what>tensor '<name>' ...";
 * *numel: the element count. (struct al_st_entry: attnlab/io.h) */
struct al_st_entry;
al_status al_st_entry_check_(const char *file, const char *what, const struct al_st_entry *e, int64_t *numel);

/* "[d0, d1, ...]" into buf (truncated to cap bytes), for messages. */
void al_st_shape_str_(char *buf, size_t cap, int ndim, const int64_t *s);

#endif
