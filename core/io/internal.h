/* core/io/internal.h -- what the safetensors reader and writer share (not public API). */
#ifndef ATTNLAB_CORE_IO_INTERNAL_H
#define ATTNLAB_CORE_IO_INTERNAL_H
#include <stddef.h>
#include <stdint.h>

/* Byte offset of the first invalid UTF-8 sequence in s[0..n), or n if it is valid
 * (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF). */
size_t al_st_utf8_check_(const uint8_t *s, size_t n);

/* "[d0, d1, ...]" into buf (truncated to cap bytes), for messages. */
void al_st_shape_str_(char *buf, size_t cap, int ndim, const int64_t *s);

#endif
