/* attnlab/sha256.h -- SHA-256 (FIPS 180-4) of a buffer, a stream of pieces, or a file.
 *
 * Pure C11, no dependencies. Used to fingerprint the dataset files a run read (every run
 * record lists them with size and digest), so a result can be traced to the exact bytes.
 *
 *   uint8_t d[AL_SHA256_SIZE]; char hex[AL_SHA256_HEX];
 *   al_sha256("abc", 3, d); al_sha256_hex(d, hex);   -> "ba7816bf...f20015ad"
 *   uint64_t size; al_sha256_file("data_batch_1.bin.gz", hex, &size);
 *
 * al_sha256_file hashes the file's bytes as stored (a .gz file's compressed bytes), reading
 * it in 1 MiB pieces; on failure it returns AL_EIO with al_errmsg() naming the file (AL_EINVAL
 * for a NULL or empty path, or a NULL hex). al_sha256 and al_sha256_update take NULL with 0 bytes. */
#ifndef ATTNLAB_SHA256_H
#define ATTNLAB_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AL_SHA256_SIZE 32   /* digest bytes */
#define AL_SHA256_HEX 65    /* 64 lowercase hex digits + NUL */

typedef struct {
  uint32_t h[8];
  uint64_t len;             /* bytes hashed so far */
  uint8_t buf[64];
  size_t nbuf;
} al_sha256_ctx;

void al_sha256_init(al_sha256_ctx *c);
void al_sha256_update(al_sha256_ctx *c, const void *data, size_t n);
void al_sha256_final(al_sha256_ctx *c, uint8_t out[AL_SHA256_SIZE]);
/* One call: the digest of n bytes at data. */
void al_sha256(const void *data, size_t n, uint8_t out[AL_SHA256_SIZE]);
/* Lowercase hex of a digest, NUL-terminated. */
void al_sha256_hex(const uint8_t d[AL_SHA256_SIZE], char hex[AL_SHA256_HEX]);
/* The digest (hex) and size in bytes of the file at path. size may be NULL. */
al_status al_sha256_file(const char *path, char hex[AL_SHA256_HEX], uint64_t *size);

#ifdef __cplusplus
}
#endif

#endif
