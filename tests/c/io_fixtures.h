/* tests/c/io_fixtures.h -- what the I/O tests share (tests/c/test_io*.c): an independent
 * SHA-256 to check decoded data against the digests the data README states, a fresh folder
 * under /tmp for written files, file helpers, error-message checks, and where the real
 * datasets are (absent -> SKIP with the path). Header-only, as check.h: each test is one
 * program. */
#ifndef ATTNLAB_TEST_IO_FIXTURES_H
#define ATTNLAB_TEST_IO_FIXTURES_H
#include <dirent.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "attnlab/io.h"
#include "check.h"

static inline double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* SHA-256 (FIPS 180-4), small and slow-ish; enough for ~200 MB of test data. */
typedef struct { uint32_t h[8]; uint64_t len; uint8_t buf[64]; size_t nbuf; } sha256_ctx;
static const uint32_t K256[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))
static inline void sha_block(sha256_ctx *c, const uint8_t *p) {
  uint32_t w[64], a[8];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  memcpy(a, c->h, sizeof a);
  for (int i = 0; i < 64; i++) {
    uint32_t S1 = ROR(a[4], 6) ^ ROR(a[4], 11) ^ ROR(a[4], 25);
    uint32_t ch = (a[4] & a[5]) ^ (~a[4] & a[6]);
    uint32_t t1 = a[7] + S1 + ch + K256[i] + w[i];
    uint32_t S0 = ROR(a[0], 2) ^ ROR(a[0], 13) ^ ROR(a[0], 22);
    uint32_t mj = (a[0] & a[1]) ^ (a[0] & a[2]) ^ (a[1] & a[2]);
    memmove(a + 1, a, 7 * sizeof *a);
    a[4] += t1;
    a[0] = t1 + S0 + mj;
  }
  for (int i = 0; i < 8; i++) c->h[i] += a[i];
}
static inline void sha_init(sha256_ctx *c) {
  static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(c->h, h0, sizeof h0);
  c->len = 0;
  c->nbuf = 0;
}
static inline void sha_update(sha256_ctx *c, const void *data, size_t n) {
  const uint8_t *p = data;
  c->len += n;
  while (n) {
    if (c->nbuf == 0 && n >= 64) { sha_block(c, p); p += 64; n -= 64; continue; }
    size_t t = 64 - c->nbuf < n ? 64 - c->nbuf : n;
    memcpy(c->buf + c->nbuf, p, t);
    c->nbuf += t; p += t; n -= t;
    if (c->nbuf == 64) { sha_block(c, c->buf); c->nbuf = 0; }
  }
}
static inline void sha_hex(sha256_ctx *c, char out[65]) {
  uint64_t bits = c->len * 8;
  uint8_t pad = 0x80, z = 0, lb[8];
  sha_update(c, &pad, 1);
  while (c->nbuf != 56) sha_update(c, &z, 1);
  for (int i = 0; i < 8; i++) lb[i] = (uint8_t)(bits >> (56 - 8 * i));
  sha_update(c, lb, 8);
  for (int i = 0; i < 8; i++) sprintf(out + 8 * i, "%08x", c->h[i]);
}

static char tmpdir[256];
static inline char *tmppath(const char *name) {
  static char buf[8][512];
  static int k;
  char *p = buf[k++ % 8];
  snprintf(p, 512, "%s/%s", tmpdir, name);
  return p;
}
static inline int write_bytes(const char *path, const void *data, size_t n) {
  FILE *fp = fopen(path, "wb");
  if (!fp) return 0;
  size_t w = n ? fwrite(data, 1, n, fp) : 0;
  return fclose(fp) == 0 && w == n;
}
static inline int write_gz(const char *path, const void *data, size_t n) {
  gzFile g = gzopen(path, "wb6");
  if (!g) return 0;
  int ok = n == 0 || gzwrite(g, data, (unsigned)n) == (int)n;
  return gzclose(g) == Z_OK && ok;
}
static inline uint8_t *slurp(const char *path, size_t *n) {   /* raw bytes, malloc'ed */
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  fseek(fp, 0, SEEK_END);
  long sz = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  uint8_t *b = malloc((size_t)sz + 1);
  *n = fread(b, 1, (size_t)sz, fp);
  fclose(fp);
  return b;
}

/* Failure with a message that contains every given substring (NULL-terminated list). */
static inline void expect_err(const char *name, al_status st, ...) {
  if (st == AL_OK) { check_report(0, name, "succeeded, want an error"); return; }
  const char *msg = al_errmsg();
  va_list ap;
  va_start(ap, st);
  const char *sub;
  while ((sub = va_arg(ap, const char *))) {
    if (!strstr(msg, sub)) {
      va_end(ap);
      check_report(0, name, "message lacks \"%s\": %s", sub, msg);
      return;
    }
  }
  va_end(ap);
  printf("  %s -> %s\n", name, msg);
  check_report(1, name, NULL);
}

static inline char *find_data(const char *rel, char *buf, size_t cap) {
  const char *env = getenv("ATTNLAB_DATA");
  char dirs[2048] = "";
  if (env) snprintf(dirs, sizeof dirs, "%s:", env);
  strncat(dirs, "/work/shared/data:../shared/data:/usr/share/datasets", sizeof dirs - strlen(dirs) - 1);
  for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
    snprintf(buf, cap, "%s/%s", d, rel);
    if (access(buf, R_OK) == 0) return buf;
  }
  snprintf(buf, cap, "%s (searched $ATTNLAB_DATA, /work/shared/data, ../shared/data, "
           "/usr/share/datasets)", rel);
  return NULL;
}

/* Under valgrind (under_valgrind(), check.h) the ~300 MB of real data would take minutes: the
 * biggest files are skipped there, and wall-clock limits only apply to uninstrumented builds. */
static inline int instrumented(void) { return built_with_asan() || under_valgrind(); }
#define HEAVY_SKIP(nm) do { if (under_valgrind()) { check_skip(nm, "large real-data file skipped under valgrind; make test runs it"); return; } } while (0)

static inline void rm_tmpdir(void) {
  DIR *d = opendir(tmpdir);
  struct dirent *de;
  char p[600];
  while (d && (de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    snprintf(p, sizeof p, "%s/%s", tmpdir, de->d_name);
    unlink(p);
  }
  if (d) closedir(d);
  rmdir(tmpdir);
}

static size_t io_live0;

/* The temporary folder /tmp/attnlab_<name>_XXXXXX, and the al_malloc'ed byte count to
 * come back to. Returns 0 (after a FAIL line) when the folder cannot be made. */
static inline int io_begin(const char *name) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/attnlab_%s_XXXXXX", name);
  if (!mkdtemp(tmpdir)) { printf("FAIL: io: mkdtemp (%s)\n", tmpdir); return 0; }
  io_live0 = al_mem_live();
  return 1;
}

/* Removes the folder. A test program other than test_io (which checks it as a PASS/FAIL
 * of its own) fails here if al_malloc'ed bytes are still live. */
static inline void io_end(int leak_is_a_check) {
  if (leak_is_a_check)
    CHECK("io: every al_malloc'ed byte was freed", al_mem_live() == io_live0, "%zu bytes live",
          al_mem_live() - io_live0);
  else if (al_mem_live() != io_live0)
    check_report(0, "io: every al_malloc'ed byte was freed", "%zu bytes live", al_mem_live() - io_live0);
  else
    printf("# no al_malloc'ed byte left live\n");
  rm_tmpdir();
}

#endif
