/* tests/c/test_io.c -- decoders against the real datasets and hand-made corrupt files.
 *
 * Real data (absent -> SKIP with the path): KMNIST and Fashion-MNIST IDX, CIFAR-10
 * batches, 20 Newsgroups tar.gz, checked against the counts and SHA-256s that
 * ../shared/data/README.md states (SHA-256 of the decoded bytes, re-serialised). Synthetic
 * and corrupt files are written to a fresh folder under /tmp. safetensors: the files and
 * float32/int64 conversions in tests/ref/io_ref.json (written by tests/ref/gen_io_ref.py
 * with an independent Python writer and torch) must parse, convert bit-exactly and be
 * reproduced byte for byte by al_st_write. Run from the repository root. */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <cjson/cJSON.h>

#include "attnlab/io.h"
#include "attnlab/sha256.h"
#include "check.h"

/* ------------------------------------------------------------------ helpers */

static double now(void) {
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
static void sha_block(sha256_ctx *c, const uint8_t *p) {
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
static void sha_init(sha256_ctx *c) {
  static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(c->h, h0, sizeof h0);
  c->len = 0;
  c->nbuf = 0;
}
static void sha_update(sha256_ctx *c, const void *data, size_t n) {
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
static void sha_hex(sha256_ctx *c, char out[65]) {
  uint64_t bits = c->len * 8;
  uint8_t pad = 0x80, z = 0, lb[8];
  sha_update(c, &pad, 1);
  while (c->nbuf != 56) sha_update(c, &z, 1);
  for (int i = 0; i < 8; i++) lb[i] = (uint8_t)(bits >> (56 - 8 * i));
  sha_update(c, lb, 8);
  for (int i = 0; i < 8; i++) sprintf(out + 8 * i, "%08x", c->h[i]);
}

static char tmpdir[256];
static char *tmppath(const char *name) {
  static char buf[8][512];
  static int k;
  char *p = buf[k++ % 8];
  snprintf(p, 512, "%s/%s", tmpdir, name);
  return p;
}
static int write_bytes(const char *path, const void *data, size_t n) {
  FILE *fp = fopen(path, "wb");
  if (!fp) return 0;
  size_t w = n ? fwrite(data, 1, n, fp) : 0;
  return fclose(fp) == 0 && w == n;
}
static int write_gz(const char *path, const void *data, size_t n) {
  gzFile g = gzopen(path, "wb6");
  if (!g) return 0;
  int ok = n == 0 || gzwrite(g, data, (unsigned)n) == (int)n;
  return gzclose(g) == Z_OK && ok;
}
static uint8_t *slurp(const char *path, size_t *n) {   /* raw bytes, malloc'ed */
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
static void expect_err(const char *name, al_status st, ...) {
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

static char *find_data(const char *rel, char *buf, size_t cap) {
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

/* Under valgrind (tests/valgrind.sh sets ATTNLAB_VALGRIND) the ~300 MB of real data would
 * take minutes: the biggest files are skipped there, and wall-clock limits only apply to
 * uninstrumented builds. */
static int under_valgrind(void) { return getenv("ATTNLAB_VALGRIND") != NULL; }
static int instrumented(void) {
#if defined(__SANITIZE_ADDRESS__)
  return 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return 1;
#endif
#endif
  return under_valgrind();
}
#define HEAVY_SKIP(nm) do { if (under_valgrind()) { check_skip(nm, "large real-data file skipped under valgrind; make test runs it"); return; } } while (0)

/* ------------------------------------------------------------------ gzip layer */

static void test_gz(void) {
  enum { N = 300000 };
  uint8_t *src = malloc(N);
  for (int i = 0; i < N; i++) src[i] = (uint8_t)((i * 2654435761u) >> 13) % 7 + 'a';
  const char *plain = tmppath("plain.bin"), *gz = tmppath("data.bin.gz");
  write_bytes(plain, src, N);
  write_gz(gz, src, N);
  for (int mode = 0; mode < 2; mode++) {
    const char *p = mode ? gz : plain;
    void *d; size_t n;
    al_status st = al_read_file(p, 1, &d, &n);
    char nm[64];
    snprintf(nm, sizeof nm, "gz: al_read_file %s", mode ? "gzip" : "plain");
    CHECK(nm, st == AL_OK && n == N && memcmp(d, src, N) == 0, "st=%d n=%zu %s", st, n, al_errmsg());
    if (st == AL_OK) al_free(d, n);
  }
  /* small reads, skips and tell through both paths */
  for (int mode = 0; mode < 2; mode++) {
    al_gz *f;
    int ok = al_gz_open(mode ? gz : plain, &f) == AL_OK && al_gz_is_gzip(f) == mode;
    size_t pos = 0, got;
    uint8_t buf[1000];
    for (int step = 1; ok && pos < N; step = step * 7 % 997 + 1) {
      if (step % 3 == 0) {
        uint64_t sk;
        ok = al_gz_skip(f, (uint64_t)step * 5, &sk) == AL_OK;
        pos += sk;
      } else {
        ok = al_gz_read(f, buf, (size_t)step, &got) == AL_OK &&
             memcmp(buf, src + pos, got) == 0 && (got == (size_t)step || pos + got == N);
        pos += got;
      }
      ok = ok && al_gz_tell(f) == pos;
    }
    CHECK(mode ? "gz: mixed small reads/skips (gzip)" : "gz: mixed small reads/skips (plain)",
          ok && pos == N && al_gz_read(f, buf, 10, &got) == AL_OK && got == 0, "pos=%zu", pos);
    al_gz_close(f);
  }
  /* two concatenated members read as one stream */
  size_t n1, n2;
  const char *g1 = tmppath("m1.gz"), *g2 = tmppath("m2.gz");
  write_gz(g1, src, 1000);
  write_gz(g2, src + 1000, 5000);
  uint8_t *b1 = slurp(g1, &n1), *b2 = slurp(g2, &n2);
  uint8_t *cat = malloc(n1 + n2 + 16);
  memcpy(cat, b1, n1);
  memcpy(cat + n1, b2, n2);
  {
    al_gz *f;
    uint8_t out[7000];
    size_t got = 0;
    al_status st = al_gz_open_memory(cat, n1 + n2, "cat.gz", &f);
    if (st == AL_OK) st = al_gz_read(f, out, sizeof out, &got);
    CHECK("gz: concatenated members", st == AL_OK && got == 6000 && memcmp(out, src, 6000) == 0,
          "st=%d got=%zu %s", st, got, al_errmsg());
    al_gz_close(f);
  }
  /* corrupt variants, each must name the file */
  struct { const char *file, *what; size_t len; int flip; const char *want; } bad[] = {
    {"trunc.gz", "truncated gzip", n1 / 2, -1, "truncated"},
    {"trunc_trailer.gz", "gzip without its trailer", n1 - 4, -1, "truncated"},
    {"badcrc.gz", "gzip with a wrong CRC", n1, (int)n1 - 6, "corrupt gzip data"},
    {"garbage.gz", "gzip + trailing garbage", n1 + 5, -1, "trailing garbage"},
  };
  {
    /* on disk: the trailer's ISIZE (5000) undercounts, so al_read_file must grow */
    const char *p = tmppath("cat.gz");
    write_bytes(p, cat, n1 + n2);
    void *d;
    size_t n;
    al_status st = al_read_file(p, 1, &d, &n);
    CHECK("gz: al_read_file of a 2-member file (size hint too small)",
          st == AL_OK && n == 6000 && memcmp(d, src, 6000) == 0, "st=%d n=%zu %s", st, n,
          st ? al_errmsg() : "");
    if (st == AL_OK) al_free(d, n);
    expect_err("gz: a directory is an error", al_read_file(tmpdir, 1, &d, &n), "is a directory", NULL);
    expect_err("gz: a directory is an error (raw read)", al_read_file(tmpdir, 0, &d, &n),
               "is a directory", NULL);
  }
  memcpy(cat + n1, "JUNK!", 5);
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    uint8_t *c = malloc(bad[i].len);
    memcpy(c, cat, bad[i].len);
    if (bad[i].flip >= 0) c[bad[i].flip] ^= 0x55;
    const char *p = tmppath(bad[i].file);
    write_bytes(p, c, bad[i].len);
    void *d; size_t n;
    char nm[96];
    snprintf(nm, sizeof nm, "gz: %s is an error naming the file", bad[i].what);
    al_status st = al_read_file(p, 1, &d, &n);
    expect_err(nm, st, bad[i].file, bad[i].want, NULL);
    if (st == AL_OK) al_free(d, n);
    free(c);
  }
  {
    void *d; size_t n;
    expect_err("gz: missing file names the path", al_read_file(tmppath("nope.gz"), 1, &d, &n),
               "nope.gz", "cannot open", NULL);
    al_status st = al_read_file(tmppath("m1.gz"), 0, &d, &n);
    CHECK("gz: al_read_file(gunzip=0) returns the raw bytes",
          st == AL_OK && n == n1 && memcmp(d, b1, n1) == 0, "n=%zu", n);
    if (st == AL_OK) al_free(d, n);
    write_bytes(tmppath("empty"), "", 0);
    st = al_read_file(tmppath("empty"), 1, &d, &n);
    CHECK("gz: empty file reads as 0 bytes", st == AL_OK && n == 0, "st=%d", st);
    if (st == AL_OK) al_free(d, n);
  }
  free(b1); free(b2); free(cat); free(src);
}

/* ------------------------------------------------------------------ IDX */

static void idx_sha(const al_idx *x, char hex[65]) {   /* of the re-serialised file */
  sha256_ctx c;
  uint8_t h[20] = {0, 0, x->type, (uint8_t)x->ndim};
  for (int i = 0; i < x->ndim; i++)
    for (int k = 0; k < 4; k++) h[4 + 4 * i + k] = (uint8_t)(x->dims[i] >> (24 - 8 * k));
  sha_init(&c);
  sha_update(&c, h, 4 + 4 * (size_t)x->ndim);
  sha_update(&c, x->data, x->size);
  sha_hex(&c, hex);
}

static void check_idx_file(const char *label, const char *rel, int ndim, int64_t count,
                           int64_t per_class, const char *sha) {
  char path[1024], nm[160];
  snprintf(nm, sizeof nm, "idx: %s", label);
  if (count == 60000 && ndim == 3) HEAVY_SKIP(nm);
  if (!find_data(rel, path, sizeof path)) { check_skip(nm, path); return; }
  al_idx x;
  double t0 = now();
  al_status st = al_idx_read(path, &x);
  double dt = now() - t0;
  if (st) { check_report(0, nm, "%s", al_errmsg()); return; }
  int ok = x.ndim == ndim && x.dims[0] == count && (ndim != 3 || (x.dims[1] == 28 && x.dims[2] == 28));
  char why[256] = "";
  if (per_class) {
    int64_t hist[256] = {0};
    for (size_t i = 0; i < x.size; i++) hist[x.data[i]]++;
    for (int c = 0; c < 10; c++) ok = ok && hist[c] == per_class;
    snprintf(why, sizeof why, "hist %" PRId64 " %" PRId64 " ... %" PRId64, hist[0], hist[1], hist[9]);
  }
  char hex[65];
  if (sha) {
    idx_sha(&x, hex);
    if (strcmp(hex, sha) != 0) { ok = 0; snprintf(why, sizeof why, "sha256 %s != %s", hex, sha); }
  }
  printf("  %s: %d dims %" PRId64 " x %" PRId64 " x %" PRId64 ", first bytes %u %u %u, %.3f s\n", rel,
         x.ndim, x.dims[0], x.ndim > 1 ? x.dims[1] : 0, x.ndim > 2 ? x.dims[2] : 0,
         x.data[0], x.data[1], x.data[2], dt);
  CHECK(nm, ok, "ndim %d dims[0] %" PRId64 " %s", x.ndim, x.dims[0], why);
  al_idx_free(&x);
}

static void test_idx(void) {
  /* seeds: exact contents */
  al_idx x;
  al_status st = al_idx_read("tests/fuzz/corpus/idx/labels.idx1", &x);
  CHECK("idx: labels.idx1 seed decodes", st == AL_OK && x.ndim == 1 && x.dims[0] == 8 &&
        memcmp(x.data, "\3\1\4\1\5\11\2\6", 8) == 0, "%s", al_errmsg());
  al_idx_free(&x);
  st = al_idx_read("tests/fuzz/corpus/idx/images.idx3.gz", &x);
  int ok = st == AL_OK && x.ndim == 3 && x.dims[0] == 3 && x.dims[1] == 4 && x.dims[2] == 5;
  for (int i = 0; ok && i < 60; i++) ok = x.data[i] == (uint8_t)(i * 37 % 256);
  CHECK("idx: images.idx3.gz seed decodes", ok, "%s", al_errmsg());
  al_idx_free(&x);
  expect_err("idx: float32 IDX is rejected by name",
             al_idx_read("tests/fuzz/corpus/idx/float.idx1", &x), "float.idx1", "0x0D (float32)",
             "only 0x08", NULL);

  check_idx_file("KMNIST t10k images", "kmnist/t10k-images-idx3-ubyte.gz", 3, 10000, 0,
                 "76fbd229ce87db80dd281af5e6670de4ad0e42fb30a7bd643972994c47c1f42e");
  check_idx_file("KMNIST t10k labels, 1000 per class", "kmnist/t10k-labels-idx1-ubyte.gz", 1,
                 10000, 1000, "a11dc742be8e781a40a92f53d6a4957e7b7d36df2faa097659131ebfd8fd60c6");
  check_idx_file("KMNIST train labels, 6000 per class", "kmnist/train-labels-idx1-ubyte.gz", 1,
                 60000, 6000, "2a16eeae62da984b8bd24fa32e31d47291f01dac3fe84d5594f304f71e7d374b");
  check_idx_file("Fashion-MNIST train images 60000", "fashion-mnist/train-images-idx3-ubyte.gz", 3,
                 60000, 0, NULL);
  check_idx_file("Fashion-MNIST train labels, 6000 per class",
                 "fashion-mnist/train-labels-idx1-ubyte.gz", 1, 60000, 6000, NULL);
  check_idx_file("Fashion-MNIST test images 10000", "fashion-mnist/t10k-images-idx3-ubyte.gz", 3,
                 10000, 0, NULL);
  check_idx_file("Fashion-MNIST test labels, 1000 per class",
                 "fashion-mnist/t10k-labels-idx1-ubyte.gz", 1, 10000, 1000, NULL);

  /* corrupt copies */
  uint8_t img[16 + 4 * 28 * 28];
  uint8_t hdr[16] = {0, 0, 8, 3, 0, 0, 0x27, 0x10, 0, 0, 0, 28, 0, 0, 0, 28};  /* 10000 x 28 x 28 */
  memcpy(img, hdr, 16);
  memset(img + 16, 7, sizeof img - 16);
  const char *p = tmppath("t10k-images-idx3-ubyte");
  write_bytes(p, img, 16 + 1234);
  expect_err("idx: truncated images name the file and the counts", al_idx_read(p, &x),
             "t10k-images-idx3-ubyte", "truncated", "10000 images of 28x28", "7840000",
             "only 1234", NULL);
  p = tmppath("t10k-images-idx3-ubyte.gz");
  write_gz(p, img, 16 + 1234);
  expect_err("idx: truncated gzip'ed images", al_idx_read(p, &x), "t10k-images-idx3-ubyte.gz",
             "truncated", "only 1234", NULL);
  uint8_t lab[8 + 12] = {0, 0, 8, 1, 0, 0, 0, 10};
  p = tmppath("labels-trailing");
  write_bytes(p, lab, sizeof lab);
  expect_err("idx: trailing bytes are an error", al_idx_read(p, &x), "labels-trailing",
             "2 trailing bytes", NULL);
  write_bytes(p, lab, 18);
  CHECK("idx: exact-size labels decode", al_idx_read(p, &x) == AL_OK && x.dims[0] == 10, "%s",
        al_errmsg());
  al_idx_free(&x);
  uint8_t badmagic[8] = {1, 0, 8, 1, 0, 0, 0, 0};
  p = tmppath("badmagic");
  write_bytes(p, badmagic, 8);
  expect_err("idx: bad magic", al_idx_read(p, &x), "badmagic", "not an IDX file", NULL);
  uint8_t nd0[4] = {0, 0, 8, 0}, nd9[4] = {0, 0, 8, 9};
  expect_err("idx: ndim 0", al_idx_read_memory(nd0, 4, "nd0.idx", &x), "nd0.idx", "ndim is 0", NULL);
  expect_err("idx: ndim 9", al_idx_read_memory(nd9, 4, "nd9.idx", &x), "ndim is 9", NULL);
  uint8_t big[20] = {0, 0, 8, 4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  expect_err("idx: dims product overflow", al_idx_read_memory(big, 20, "big.idx", &x), "big.idx",
             "overflows", NULL);
  big[3] = 2;   /* (2^32-1) x 65535 bytes: fits in 64 bits, far more than the 8 bytes present */
  big[8] = big[9] = 0;
  expect_err("idx: huge header on a tiny file allocates nothing",
             al_idx_read_memory(big, 20, "huge.idx", &x), "huge.idx", "truncated", "only 8", NULL);
  expect_err("idx: header cut short", al_idx_read_memory(hdr, 10, "short.idx", &x), "short.idx",
             "truncated in the header", NULL);
  expect_err("idx: empty file", al_idx_read_memory("", 0, "empty.idx", &x), "empty.idx", "empty",
             NULL);
  expect_err("idx: missing file", al_idx_read(tmppath("missing.idx"), &x), "missing.idx",
             "cannot open", NULL);
}

/* ------------------------------------------------------------------ CIFAR */

static void check_cifar(const char *file, const int *hist_want, const char *sha_all,
                        int64_t sha_first_n, const char *sha_first, const int *hist_first) {
  char rel[128], path[1024], nm[160];
  snprintf(rel, sizeof rel, "cifar-10-batches-bin/%s", file);
  snprintf(nm, sizeof nm, "cifar: %s", file);
  if (strncmp(file, "data_batch", 10) == 0) HEAVY_SKIP(nm);
  if (!find_data(rel, path, sizeof path)) { check_skip(nm, path); return; }
  al_cifar c;
  double t0 = now();
  al_status st = al_cifar_read(path, &c);
  double dt = now() - t0;
  if (st) { check_report(0, nm, "%s", al_errmsg()); return; }
  int hist[10] = {0}, hf[10] = {0};
  for (int64_t i = 0; i < c.count; i++) hist[c.labels[i]]++;
  for (int64_t i = 0; i < c.count && i < sha_first_n; i++) hf[c.labels[i]]++;
  int ok = c.count == 10000;
  for (int k = 0; k < 10; k++) ok = ok && hist[k] == hist_want[k];
  if (hist_first) for (int k = 0; k < 10; k++) ok = ok && hf[k] == hist_first[k];
  /* SHA-256 of the records re-interleaved: all of them, and/or the first n */
  sha256_ctx ca, cf;
  sha_init(&ca);
  sha_init(&cf);
  char hex[65], hexf[65] = "";
  for (int64_t i = 0; i < c.count; i++) {
    if (sha_all) { sha_update(&ca, c.labels + i, 1); sha_update(&ca, c.pixels + i * 3072, 3072); }
    if (i < sha_first_n) { sha_update(&cf, c.labels + i, 1); sha_update(&cf, c.pixels + i * 3072, 3072); }
  }
  if (sha_all) { sha_hex(&ca, hex); ok = ok && strcmp(hex, sha_all) == 0; }
  if (sha_first) { sha_hex(&cf, hexf); ok = ok && strcmp(hexf, sha_first) == 0; }
  printf("  %s: %" PRId64 " records in %.3f s; labels %d %d %d %d ...; pixels[0][0..3] %u %u %u; "
         "hist %d %d %d %d %d %d %d %d %d %d\n", file, c.count, dt, c.labels[0], c.labels[1],
         c.labels[2], c.labels[3], c.pixels[0], c.pixels[1], c.pixels[2], hist[0], hist[1],
         hist[2], hist[3], hist[4], hist[5], hist[6], hist[7], hist[8], hist[9]);
  CHECK(nm, ok, "count %" PRId64 " hist[0] %d sha %s first-sha %s", c.count, hist[0],
        sha_all ? hex : "-", hexf);
  al_cifar_free(&c);
}

static void test_cifar(void) {
  static const int h1[10] = {1005, 974, 1032, 1016, 999, 937, 1030, 1001, 1025, 981};
  static const int h2[10] = {984, 1007, 1010, 995, 1010, 988, 1008, 1026, 987, 985};
  static const int h3[10] = {994, 1042, 965, 997, 990, 1029, 978, 1015, 961, 1029};
  static const int h4[10] = {1003, 963, 1041, 976, 1004, 1021, 1004, 981, 1024, 983};
  static const int h5[10] = {1014, 1014, 952, 1016, 997, 1025, 980, 977, 1003, 1022};
  static const int ht[10] = {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000};
  static const int htf[10] = {103, 89, 100, 103, 90, 86, 112, 102, 106, 109};
  check_cifar("data_batch_1.bin.gz", h1, "cee916563c9f80d84e3cc88e17fdc0941787f1244f00a67874d45b261883ada5", 0, NULL, NULL);
  check_cifar("data_batch_2.bin.gz", h2, "a591ca11fa1708a91ee40f54b3da4784ccd871ecf2137de63f51ada8b3fa57ed", 0, NULL, NULL);
  check_cifar("data_batch_3.bin.gz", h3, "bbe8596564c0f86427f876058170b84dac6670ddf06d79402899d93ceea26f67", 0, NULL, NULL);
  check_cifar("data_batch_4.bin.gz", h4, "014e562d6e23c72197cc727519169a60359f5eccd8945ad5a09d710285ff4e48", 0, NULL, NULL);
  check_cifar("data_batch_5.bin.gz", h5, "755304fc0b379caeae8c14f0dac912fbc7d6cd469eb67a1029a08a39453a9add", 0, NULL, NULL);
  check_cifar("test_batch.bin.gz", ht, "3efc7abf3b64f5984236583d95a12a72462afd5a415c21b40ff40c156fed9ada",
              1000, "8314c96d7cd65618193bab23acdd5d4c4af15bf6dd00a1781d55beedf3be1ef5", htf);

  al_cifar c;
  al_status st = al_cifar_read("tests/fuzz/corpus/cifar/two_records.bin.gz", &c);
  int ok = st == AL_OK && c.count == 2 && c.labels[0] == 0 && c.labels[1] == 7 &&
           c.pixels[0] == 0 && c.pixels[3071] == 3071 % 256 && c.pixels[3072] == 3 &&
           c.pixels[2 * 3072 - 1] == (3 + 3071) % 256;
  CHECK("cifar: two_records.bin.gz seed decodes (labels, CHW pixels)", ok, "%s", al_errmsg());
  al_cifar_free(&c);

  uint8_t *rec = calloc(3 * 3073, 1);
  rec[3073] = 4;
  const char *p = tmppath("data_batch_x.bin");
  write_bytes(p, rec, 2 * 3073 + 5);
  expect_err("cifar: size not a multiple of 3073", al_cifar_read(p, &c), "data_batch_x.bin",
             "not a multiple of 3073", "2 whole records and 5 bytes left over", NULL);
  rec[3073] = 10;
  write_bytes(p, rec, 3 * 3073);
  expect_err("cifar: label 10 is rejected with its record", al_cifar_read(p, &c),
             "data_batch_x.bin", "record 1", "label 10", NULL);
  rec[3073] = 9;
  p = tmppath("data_batch_x.bin.gz");
  write_gz(p, rec, 3 * 3073 - 100);
  expect_err("cifar: truncated gzip'ed batch", al_cifar_read(p, &c), "data_batch_x.bin.gz",
             "decompressed size 9119", NULL);
  write_gz(p, rec, 3 * 3073);
  st = al_cifar_read(p, &c);
  CHECK("cifar: 3-record gzip batch decodes", st == AL_OK && c.count == 3 && c.labels[1] == 9,
        "%s", al_errmsg());
  al_cifar_free(&c);
  expect_err("cifar: empty file", al_cifar_read_memory("", 0, "empty.bin", &c), "empty.bin",
             "empty", NULL);
  {
    /* two gzip members (2 + 3 records): the trailer's ISIZE only covers the last member,
     * so the size hint is short and the arrays must grow */
    uint8_t *recs = malloc(5 * 3073);
    for (int i = 0; i < 5 * 3073; i++) recs[i] = (uint8_t)(i % 3073 ? i * 7 : i / 3073);
    const char *ga = tmppath("ga.gz"), *gb = tmppath("gb.gz");
    write_gz(ga, recs, 2 * 3073);
    write_gz(gb, recs + 2 * 3073, 3 * 3073);
    size_t na, nb;
    uint8_t *a = slurp(ga, &na), *b = slurp(gb, &nb), *cat = malloc(na + nb);
    memcpy(cat, a, na);
    memcpy(cat + na, b, nb);
    st = al_cifar_read_memory(cat, na + nb, "two-members.bin.gz", &c);
    ok = st == AL_OK && c.count == 5;
    for (int r = 0; ok && r < 5; r++)
      ok = c.labels[r] == r && memcmp(c.pixels + r * 3072, recs + r * 3073 + 1, 3072) == 0;
    CHECK("cifar: multi-member gzip (size hint too small) decodes all records", ok, "st=%d count=%" PRId64 " %s",
          st, c.count, st ? al_errmsg() : "");
    al_cifar_free(&c);
    free(a); free(b); free(cat); free(recs);
  }
  free(rec);
}

/* ------------------------------------------------------------------ tar */

typedef struct {
  int64_t n, bytes;
  char names[32][300];
  int64_t sizes[32];
  char sha[32][65];
  int stop_after;
} tar_list;

static int list_cb(void *ud, const char *name, const uint8_t *data, size_t size) {
  tar_list *t = ud;
  if (t->n < 32) {
    snprintf(t->names[t->n], sizeof t->names[0], "%s", name);
    t->sizes[t->n] = (int64_t)size;
    sha256_ctx c;
    sha_init(&c);
    sha_update(&c, data, size);
    sha_hex(&c, t->sha[t->n]);
  }
  t->n++;
  t->bytes += (int64_t)size;
  return t->stop_after && t->n >= t->stop_after;
}

static void test_tar_fixtures(void) {
  size_t n;
  uint8_t *js = slurp("tests/ref/io_ref.json", &n);
  if (!js) { check_report(0, "tar: tests/ref/io_ref.json", "missing (run from the repo root)"); return; }
  cJSON *root = cJSON_ParseWithLength((const char *)js, n);
  free(js);
  const cJSON *arc;
  cJSON_ArrayForEach(arc, cJSON_GetObjectItem(root, "tar")) {
    const char *file = cJSON_GetObjectItem(arc, "file")->valuestring;
    char path[512], nm[160];
    snprintf(path, sizeof path, "tests/fuzz/corpus/tar/%s", file);
    snprintf(nm, sizeof nm, "tar: %s lists the files tarfile wrote", file);
    tar_list t;
    memset(&t, 0, sizeof t);
    al_status st = al_tar_foreach(path, list_cb, &t);
    const cJSON *files = cJSON_GetObjectItem(arc, "files"), *fe;
    int ok = st == AL_OK && t.n == cJSON_GetArraySize(files), i = 0;
    char why[600] = "";
    if (st) snprintf(why, sizeof why, "%s", al_errmsg());
    cJSON_ArrayForEach(fe, files) {
      if (!ok || i >= t.n) break;
      const char *wn = cJSON_GetObjectItem(fe, "name")->valuestring;
      if (strcmp(t.names[i], wn) || t.sizes[i] != (int64_t)cJSON_GetObjectItem(fe, "size")->valuedouble ||
          strcmp(t.sha[i], cJSON_GetObjectItem(fe, "sha256")->valuestring)) {
        ok = 0;
        snprintf(why, sizeof why, "file %d: got '%s' (%" PRId64 " bytes), want '%s'", i, t.names[i],
                 t.sizes[i], wn);
      }
      i++;
    }
    if (ok) printf("  %s: %" PRId64 " files, last '%s'\n", file, t.n, t.names[t.n - 1]);
    CHECK(nm, ok, "n=%" PRId64 " %s", t.n, why);
  }
  cJSON_Delete(root);

  /* corrupt copies of the pax archive */
  uint8_t *raw = slurp("tests/fuzz/corpus/tar/ustar_prefix.tar", &n);
  if (!raw) return;
  tar_list t;
  uint8_t *c = malloc(n);
  memcpy(c, raw, n);
  c[2 * 512 + 10] ^= 1;   /* inside the name field of the third header (first file) */
  memset(&t, 0, sizeof t);
  expect_err("tar: flipped header byte fails the checksum",
             al_tar_foreach_memory(c, n, "flip.tar", list_cb, &t), "flip.tar", "checksum", NULL);
  memset(&t, 0, sizeof t);
  expect_err("tar: archive cut inside a file", al_tar_foreach_memory(raw, 2 * 512 + 512 + 30,
             "cut.tar", list_cb, &t), "cut.tar", "truncated", "says 55 bytes", "after 30", NULL);
  memset(&t, 0, sizeof t);
  expect_err("tar: archive cut at a header boundary (no end block)",
             al_tar_foreach_memory(raw, 4 * 512, "cut2.tar", list_cb, &t), "cut2.tar",
             "truncated", "end-of-archive", NULL);
  memset(&t, 0, sizeof t);
  expect_err("tar: archive cut inside a header",
             al_tar_foreach_memory(raw, 4 * 512 + 100, "cut3.tar", list_cb, &t), "cut3.tar",
             "100 bytes of a 512-byte header", NULL);
  memset(&t, 0, sizeof t);
  expect_err("tar: not a tar", al_tar_foreach_memory("hello world, this is not a tar file", 35,
             "text.tar", list_cb, &t), "text.tar", "not a tar archive", NULL);
  {
    /* GNU base-256 size field: the first file's size (55) re-encoded, checksum redone */
    memcpy(c, raw, n);
    uint8_t *h = c + 2 * 512;
    memset(h + 124, 0, 12);
    h[124] = 0x80;
    h[135] = 55;
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < 512; i++) sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
    memset(&t, 0, sizeof t);
    al_status st2 = al_tar_foreach_memory(c, n, "b256.tar", list_cb, &t);
    CHECK("tar: base-256 size field", st2 == AL_OK && t.n == 5 && t.sizes[0] == 55, "st=%d n=%" PRId64 " %s",
          st2, t.n, st2 ? al_errmsg() : "");
    h[124] = 0xff;   /* negative base-256 */
    memset(h + 148, ' ', 8);
    sum = 0;
    for (int i = 0; i < 512; i++) sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
    memset(&t, 0, sizeof t);
    expect_err("tar: negative base-256 size is rejected",
               al_tar_foreach_memory(c, n, "neg.tar", list_cb, &t), "neg.tar", "bad size field", NULL);
  }
  memset(&t, 0, sizeof t);
  t.stop_after = 2;
  al_status st = al_tar_foreach_memory(raw, n, "stop.tar", list_cb, &t);
  CHECK("tar: callback can stop early", st == AL_OK && t.n == 2, "st=%d n=%" PRId64, st, t.n);
  free(c);
  free(raw);
}

/* A ustar header block (POSIX magic) with a valid checksum. */
static void mk_hdr(uint8_t *h, const char *name, char type, uint64_t size) {
  memset(h, 0, 512);
  snprintf((char *)h, 100, "%s", name);
  snprintf((char *)h + 100, 8, "%07o", 0644);
  snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)size);
  h[156] = (uint8_t)type;
  memcpy(h + 257, "ustar\0" "00", 8);
  memset(h + 148, ' ', 8);
  unsigned sum = 0;
  for (int i = 0; i < 512; i++) sum += h[i];
  snprintf((char *)h + 148, 8, "%06o", sum);
}
/* Append a header and its data (padded to 512) at *at. */
static void put_member(uint8_t *buf, size_t *at, const char *name, char type, uint64_t hsize,
                       const char *data, size_t dn) {
  mk_hdr(buf + *at, name, type, hsize);
  *at += 512;
  memcpy(buf + *at, data, dn);
  *at += (dn + 511) / 512 * 512;
}

static void test_tar_handmade(void) {
  static uint8_t buf[64 * 512];
  size_t at = 0;
  memset(buf, 0, sizeof buf);
  /* pax global header (skipped), GNU 'K' long link name (skipped), volume label (skipped) */
  const char *g = "25 comment=global header\n";
  put_member(buf, &at, "pax_global_header", 'g', strlen(g), g, strlen(g));
  put_member(buf, &at, "././@LongLink", 'K', 9, "linkname", 9);
  put_member(buf, &at, "VOLUME", 'V', 0, "", 0);
  /* pax 'x' with path and size: the ustar size field (0) is overridden by "size=11" */
  const char *x = "21 path=pax/real.txt\n11 size=11\n";
  put_member(buf, &at, "PaxHeaders/x", 'x', strlen(x), x, strlen(x));
  put_member(buf, &at, "short-name", '0', 0, "hello world", 11);
  /* GNU long name, then a file, then a directory and a FIFO (no data) */
  put_member(buf, &at, "././@LongLink", 'L', 12, "gnu/long.txt", 12);
  put_member(buf, &at, "gnu/long.t", '0', 3, "abc", 3);
  put_member(buf, &at, "dir/", '5', 0, "", 0);
  put_member(buf, &at, "fifo", '6', 0, "", 0);
  put_member(buf, &at, "old-style", '\0', 2, "v7", 2);
  size_t end = at + 1024;
  tar_list t;
  memset(&t, 0, sizeof t);
  al_status st = al_tar_foreach_memory(buf, end, "hand.tar", list_cb, &t);
  CHECK("tar: pax path+size, GNU L, g/K/V/dir/fifo skipped, v7 type '\\0'",
        st == AL_OK && t.n == 3 && !strcmp(t.names[0], "pax/real.txt") && t.sizes[0] == 11 &&
        !strcmp(t.names[1], "gnu/long.txt") && t.sizes[1] == 3 && !strcmp(t.names[2], "old-style"),
        "st=%d n=%" PRId64 " first '%s' (%" PRId64 ") %s", st, t.n, t.names[0], t.sizes[0],
        st ? al_errmsg() : "");
  at = 0;
  memset(buf, 0, sizeof buf);
  put_member(buf, &at, "sparse", 'S', 4, "abcd", 4);
  memset(&t, 0, sizeof t);
  expect_err("tar: GNU sparse files are rejected", al_tar_foreach_memory(buf, at + 1024, "sp.tar",
             list_cb, &t), "sp.tar", "sparse", NULL);
  at = 0;
  memset(buf, 0, sizeof buf);
  x = "11 size=-5\n";
  put_member(buf, &at, "x", 'x', strlen(x), x, strlen(x));
  put_member(buf, &at, "f", '0', 0, "", 0);
  memset(&t, 0, sizeof t);
  expect_err("tar: bad pax size", al_tar_foreach_memory(buf, at + 1024, "px.tar", list_cb, &t),
             "px.tar", "bad pax size", NULL);
  at = 0;
  memset(buf, 0, sizeof buf);
  x = "99 path=a\n";
  put_member(buf, &at, "x", 'x', strlen(x), x, strlen(x));
  memset(&t, 0, sizeof t);
  expect_err("tar: pax record longer than its header", al_tar_foreach_memory(buf, at + 1024,
             "px2.tar", list_cb, &t), "px2.tar", "malformed pax record", NULL);
  at = 0;
  memset(buf, 0, sizeof buf);
  put_member(buf, &at, "big", '0', (1ull << 33) - 1, "", 0);   /* the largest octal size */
  memset(&t, 0, sizeof t);
  expect_err("tar: an 8 GiB member in a small archive allocates nothing",
             al_tar_foreach_memory(buf, at + 1024, "big.tar", list_cb, &t), "big.tar", "truncated",
             "says 8589934591 bytes", NULL);
  at = 0;
  memset(buf, 0, sizeof buf);
  put_member(buf, &at, "././@LongLink", 'L', 5, "dang", 5);
  memset(&t, 0, sizeof t);
  expect_err("tar: a long name with no file after it", al_tar_foreach_memory(buf, at + 1024,
             "ln.tar", list_cb, &t), "ln.tar", "not followed by a file", NULL);
}

typedef struct {
  int64_t train[20], test[20], other, bytes, n;
  char first[300], first_line[200], first_test[300];
} ng_stats;

static const char *NG_GROUPS[20] = {
  "alt.atheism", "comp.graphics", "comp.os.ms-windows.misc", "comp.sys.ibm.pc.hardware",
  "comp.sys.mac.hardware", "comp.windows.x", "misc.forsale", "rec.autos", "rec.motorcycles",
  "rec.sport.baseball", "rec.sport.hockey", "sci.crypt", "sci.electronics", "sci.med",
  "sci.space", "soc.religion.christian", "talk.politics.guns", "talk.politics.mideast",
  "talk.politics.misc", "talk.religion.misc"};
static const int NG_TRAIN[20] = {480, 584, 591, 590, 578, 593, 585, 594, 598, 597,
                                 600, 595, 591, 594, 593, 599, 546, 564, 465, 377};
static const int NG_TEST[20] = {319, 389, 394, 392, 385, 395, 390, 396, 398, 397,
                                399, 396, 393, 396, 394, 398, 364, 376, 310, 251};

static int ng_cb(void *ud, const char *name, const uint8_t *data, size_t size) {
  ng_stats *s = ud;
  const char *tr = "20news-bydate-train/", *te = "20news-bydate-test/";
  int64_t *counts = NULL;
  const char *rest = NULL;
  if (strncmp(name, tr, strlen(tr)) == 0) { counts = s->train; rest = name + strlen(tr); }
  else if (strncmp(name, te, strlen(te)) == 0) { counts = s->test; rest = name + strlen(te); }
  int g = -1;
  if (rest) {
    const char *slash = strchr(rest, '/');
    for (int i = 0; slash && i < 20; i++)
      if (strlen(NG_GROUPS[i]) == (size_t)(slash - rest) && strncmp(rest, NG_GROUPS[i], slash - rest) == 0) g = i;
  }
  if (g < 0) { s->other++; return 0; }
  if (counts == s->train && s->train[0] + s->train[1] == 0 && !s->first[0]) {
    snprintf(s->first, sizeof s->first, "%s", name);
    size_t k = 0;
    while (k < size && k < sizeof s->first_line - 1 && data[k] != '\n') k++;
    memcpy(s->first_line, data, k);
    s->first_line[k] = 0;
  }
  if (counts == s->test && !s->first_test[0]) snprintf(s->first_test, sizeof s->first_test, "%s", name);
  counts[g]++;
  s->bytes += (int64_t)size;
  s->n++;
  return 0;
}

static void test_newsgroups(void) {
  char path[1024];
  const char *nm = "tar: 20news-bydate.tar.gz has 11314 train / 7532 test docs in 20 groups";
  if (!find_data("20news-bydate.tar.gz", path, sizeof path)) { check_skip(nm, path); return; }
  ng_stats s;
  memset(&s, 0, sizeof s);
  double t0 = now();
  al_status st = al_tar_foreach(path, ng_cb, &s);
  double dt = now() - t0;
  if (st) { check_report(0, nm, "%s", al_errmsg()); return; }
  int64_t ntr = 0, nte = 0;
  int ok = s.other == 0;
  for (int g = 0; g < 20; g++) {
    ntr += s.train[g];
    nte += s.test[g];
    ok = ok && s.train[g] == NG_TRAIN[g] && s.test[g] == NG_TEST[g];
  }
  printf("  20news: %" PRId64 " docs (%" PRId64 " train, %" PRId64 " test), %" PRId64
         " document bytes, in %.3f s (%.0f MB/s of tar)\n", s.n, ntr, nte, s.bytes, dt,
         50288640 / dt / 1e6);
  printf("  first: %s: \"%s\"; first test doc %s\n", s.first, s.first_line, s.first_test);
  CHECK(nm, ok && ntr == 11314 && nte == 7532, "train %" PRId64 " test %" PRId64 " other %" PRId64,
        ntr, nte, s.other);
  CHECK("tar: 20news document bytes total 35,855,003", s.bytes == 35855003, "%" PRId64, s.bytes);
  CHECK("tar: 20news first doc is alt.atheism/49960, From: mathew",
        strcmp(s.first, "20news-bydate-train/alt.atheism/49960") == 0 &&
        strcmp(s.first_line, "From: mathew <mathew@mantis.co.uk>") == 0, "%s: %s", s.first, s.first_line);
  CHECK("tar: 20news first test doc is alt.atheism/53068",
        strcmp(s.first_test, "20news-bydate-test/alt.atheism/53068") == 0, "%s", s.first_test);
  if (instrumented()) check_skip("tar: 20news reads in under 2 s", "sanitizer/valgrind build: timing not meaningful");
  else CHECK("tar: 20news reads in under 2 s", dt < 2.0, "%.3f s", dt);
}

/* ------------------------------------------------------------------ safetensors */

static uint8_t *unhex(const char *h, size_t *n) {
  size_t len = strlen(h) / 2;
  uint8_t *b = malloc(len + 1);
  for (size_t i = 0; i < len; i++) {
    unsigned v;
    sscanf(h + 2 * i, "%2x", &v);
    b[i] = (uint8_t)v;
  }
  *n = len;
  return b;
}

static void test_st_ref(void) {
  size_t n;
  uint8_t *js = slurp("tests/ref/io_ref.json", &n);
  if (!js) { check_report(0, "safetensors: tests/ref/io_ref.json", "missing"); return; }
  cJSON *root = cJSON_ParseWithLength((const char *)js, n);
  free(js);
  const cJSON *cs;
  cJSON_ArrayForEach(cs, cJSON_GetObjectItem(root, "safetensors")) {
    const char *cname = cJSON_GetObjectItem(cs, "name")->valuestring;
    size_t fn;
    uint8_t *file = unhex(cJSON_GetObjectItem(cs, "hex")->valuestring, &fn);
    char nm[200];
    al_st_file *f;
    al_status st = al_st_open_memory(file, fn, cname, &f);
    snprintf(nm, sizeof nm, "safetensors: %s parses", cname);
    const cJSON *tens = cJSON_GetObjectItem(cs, "tensors"), *te;
    CHECK(nm, st == AL_OK && f->n == cJSON_GetArraySize(tens), "%s", al_errmsg());
    if (st) { free(file); continue; }
    /* entries: dtype, shape, bytes, conversions */
    int ok_meta = 1, ok_ent = 1, ok_conv = 1, nconv = 0;
    double maxdiff = 0;
    char why[400] = "";
    const cJSON *meta = cJSON_GetObjectItem(cs, "metadata"), *m;
    ok_meta = f->nmeta == cJSON_GetArraySize(meta);
    cJSON_ArrayForEach(m, meta) {
      const char *v = al_st_meta_get(f, m->string);
      if (!v || strcmp(v, m->valuestring)) ok_meta = 0;
    }
    al_st_entry ents[16];
    int ne = 0;
    cJSON_ArrayForEach(te, tens) {
      const char *tn = cJSON_GetObjectItem(te, "name")->valuestring;
      const al_st_entry *e = al_st_find(f, tn);
      size_t dn;
      uint8_t *data = unhex(cJSON_GetObjectItem(te, "data_hex")->valuestring, &dn);
      const cJSON *shape = cJSON_GetObjectItem(te, "shape"), *d;
      if (!e) { ok_ent = 0; snprintf(why, sizeof why, "'%s' not found", tn); free(data); continue; }
      int k = 0, sok = e->ndim == cJSON_GetArraySize(shape);
      cJSON_ArrayForEach(d, shape) sok = sok && k < e->ndim && e->shape[k++] == (int64_t)d->valuedouble;
      if (!sok || strcmp(al_st_dtype_name(e->dtype), cJSON_GetObjectItem(te, "dtype")->valuestring) ||
          e->nbytes != dn || (dn && memcmp(e->data, data, dn))) {
        ok_ent = 0;
        snprintf(why, sizeof why, "'%s' dtype/shape/bytes differ", tn);
      }
      ents[ne++] = *e;
      int64_t numel = al_st_numel(e);
      const cJSON *fb = cJSON_GetObjectItem(te, "f32_bits"), *ib = cJSON_GetObjectItem(te, "i64");
      if (fb) {
        float *out = malloc(((size_t)numel + 1) * sizeof *out);
        st = al_st_to_f32(e, out);
        int i = 0;
        const cJSON *b;
        cJSON_ArrayForEach(b, fb) {
          uint32_t want = (uint32_t)b->valuedouble, got;
          memcpy(&got, &out[i], 4);
          float wf;
          memcpy(&wf, &want, 4);
          int same = got == want || (isnan(wf) && isnan(out[i]));
          if (!same) {
            ok_conv = 0;
            snprintf(why, sizeof why, "'%s'[%d]: got %a (0x%08x), torch %a (0x%08x)", tn, i,
                     out[i], got, wf, want);
          } else if (!isnan(wf) && !isinf(wf)) {
            maxdiff = fmax(maxdiff, fabs((double)out[i] - wf));
          }
          if (i < 4 && numel > 4) printf("  %s[%d] = %a\n", tn, i, out[i]);
          i++;
        }
        ok_conv = ok_conv && st == AL_OK && i == numel;
        nconv += i;
        free(out);
      }
      if (ib) {
        int64_t *out = malloc(((size_t)numel + 1) * sizeof *out);
        st = al_st_to_i64(e, out);
        int i = 0;
        const cJSON *b;
        cJSON_ArrayForEach(b, ib) {
          long long want = strtoll(b->valuestring, NULL, 10);
          if (out[i] != want) {
            ok_conv = 0;
            snprintf(why, sizeof why, "'%s'[%d]: %" PRId64 " != %lld", tn, i, out[i], want);
          }
          i++;
        }
        ok_conv = ok_conv && st == AL_OK && i == numel;
        nconv += i;
        free(out);
      }
      free(data);
    }
    snprintf(nm, sizeof nm, "safetensors: %s entries and metadata match", cname);
    CHECK(nm, ok_ent && ok_meta, "%s", why);
    if (nconv) {
      snprintf(nm, sizeof nm, "safetensors: %s F16/BF16/F64/I32/I64/U8 conversions bit-exact vs torch", cname);
      printf("  %s: %d values converted, max |diff| %g\n", cname, nconv, maxdiff);
      CHECK(nm, ok_conv, "%s", why);
    }
    /* writer: the same entries give the same bytes */
    al_st_meta mm[8];
    int nm2 = 0;
    cJSON_ArrayForEach(m, meta) { mm[nm2].key = m->string; mm[nm2].value = m->valuestring; nm2++; }
    void *w;
    size_t wn;
    st = al_st_write_memory(ents, ne, mm, nm2, &w, &wn);
    snprintf(nm, sizeof nm, "safetensors: %s rewritten byte-identical to the reference layout", cname);
    size_t at = 0;
    if (st == AL_OK) while (at < wn && at < fn && ((uint8_t *)w)[at] == file[at]) at++;
    CHECK(nm, st == AL_OK && wn == fn && at == fn, "st=%d size %zu vs %zu, first difference at %zu %s",
          st, wn, fn, at, st ? al_errmsg() : "");
    /* file round trip through al_st_write + al_st_open */
    const char *p = tmppath("roundtrip.safetensors");
    st = al_st_write(p, ents, ne, mm, nm2);
    al_st_file *g = NULL;
    if (st == AL_OK) st = al_st_open(p, &g);
    int same = st == AL_OK && g->n == f->n && g->nmeta == f->nmeta;
    for (int i = 0; same && i < f->n; i++) {
      const al_st_entry *a = &f->entries[i], *b = &g->entries[i];
      same = strcmp(a->name, b->name) == 0 && a->dtype == b->dtype && a->ndim == b->ndim &&
             memcmp(a->shape, b->shape, sizeof a->shape) == 0 && a->nbytes == b->nbytes &&
             (a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0) &&
             (uintptr_t)b->data % al_st_dtype_size(b->dtype) == 0;   /* writer aligns */
    }
    snprintf(nm, sizeof nm, "safetensors: %s file round trip is bit-exact", cname);
    CHECK(nm, same, "st=%d %s", st, st ? al_errmsg() : "");
    if (g) {
      /* data start = 8 + N must be 8-aligned in the file */
      CHECK("safetensors: written header keeps the data 8-byte aligned", (8 + g->header_size) % 8 == 0,
            "N=%" PRIu64, g->header_size);
    }
    al_st_close(g);
    if (w) al_free(w, wn);
    al_st_close(f);
    free(file);
  }
  cJSON_Delete(root);
}

/* Build "<u64 N><header padded><data>" and expect an error mentioning `want`. */
static void st_bad_n(const char *name, const char *header, size_t hn, const void *data,
                     size_t dn, int64_t nfield, const char *want) {
  uint8_t *b = malloc(8 + hn + dn + 1);
  uint64_t N = nfield >= 0 ? (uint64_t)nfield : hn;
  for (int i = 0; i < 8; i++) b[i] = (uint8_t)(N >> (8 * i));
  memcpy(b + 8, header, hn);
  if (dn) memcpy(b + 8 + hn, data, dn);
  al_st_file *f;
  char nm[200];
  snprintf(nm, sizeof nm, "safetensors: rejects %s", name);
  expect_err(nm, al_st_open_memory(b, 8 + hn + dn, "bad.safetensors", &f), "bad.safetensors",
             want, NULL);
  free(b);
}
static void st_bad(const char *name, const char *header, const void *data, size_t dn,
                   int64_t nfield, const char *want) {
  st_bad_n(name, header, strlen(header), data, dn, nfield, want);
}

static void test_st_malformed(void) {
  static const uint8_t z[64];
  const char *ok1 = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
  al_st_file *f;
  uint8_t good[8 + 64 + 8];
  size_t hn = strlen(ok1);
  for (int i = 0; i < 8; i++) good[i] = (uint8_t)((uint64_t)hn >> (8 * i));
  memcpy(good + 8, ok1, hn);
  memset(good + 8 + hn, 0, 8);
  al_status st = al_st_open_memory(good, 8 + hn + 8, "good", &f);
  CHECK("safetensors: unpadded hand-made file parses (data need not be aligned)",
        st == AL_OK && f->n == 1 && f->entries[0].nbytes == 8, "%s", al_errmsg());
  al_st_close(f);

  {
    uint8_t b[5] = {1, 2, 3, 4, 5};
    expect_err("safetensors: rejects 5-byte file", al_st_open_memory(b, 5, "tiny.st", &f), "tiny.st",
               "5 bytes", NULL);
  }
  st_bad("a header size over the 100 MB limit", "{}", NULL, 0, 100000001, "100,000,000");
  st_bad("a header size past the end", "{}", NULL, 0, 4000, "truncated");
  st_bad("a header not starting with '{'", " {}     ", NULL, 0, -1, "does not start with '{'");
  st_bad("invalid JSON", "{\"a\":{\"dtype\":\"F32\",}", NULL, 0, -1, "not valid JSON");
  st_bad("text after the JSON object", "{}  x    ", NULL, 0, -1, "text after its JSON");
  st_bad("invalid UTF-8", "{\"\xff\xfe\":{}}", NULL, 0, -1, "not valid UTF-8");
  st_bad_n("a NUL byte in the header", "{\"a\":1}\0  ", 10, NULL, 0, -1, "control byte");
  st_bad("a \\u0000 escape in a name (C strings would cut it)",
         "{\"a\\u0000b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", z, 1, -1,
         "\\u0000 escape");
  {
    /* an escaped backslash followed by the text u0000 is not a NUL escape */
    const char *hj = "{\"a\\\"\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
                     "\"__metadata__\":{\"k\":\"\\\\u0000\"}}";
    size_t hl = strlen(hj);
    uint8_t *b = calloc(8 + hl + 1, 1);
    b[0] = (uint8_t)hl;
    memcpy(b + 8, hj, hl);
    st = al_st_open_memory(b, 8 + hl + 1, "esc.st", &f);
    const char *mv = st == AL_OK ? al_st_meta_get(f, "k") : NULL;
    CHECK("safetensors: escaped backslash + 'u0000' text is accepted verbatim",
          st == AL_OK && al_st_find(f, "a\"") && mv && strcmp(mv, "\\u0000") == 0, "%s",
          st ? al_errmsg() : mv ? mv : "(no k)");
    al_st_close(f);
    free(b);
  }
  st_bad("a repeated dtype field",
         "{\"a\":{\"dtype\":\"U8\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,1]}}", z, 1, -1,
         "duplicate field \"dtype\"");
  st_bad("a top-level array", "[1,2]   ", NULL, 0, -1, "does not start with '{'");
  st_bad("an unknown dtype", "{\"a\":{\"dtype\":\"F128\",\"shape\":[1],\"data_offsets\":[0,16]}}", z, 16, -1, "unknown dtype");
  st_bad("a missing shape", "{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", z, 4, -1, "missing \"shape\"");
  st_bad("a negative dim", "{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", z, 4, -1, "shape[0]");
  st_bad("a fractional offset", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4.5]}}", z, 4, -1, "data_offsets end 4.5 is not an integer");
  st_bad("an offset of 2^60 (too large, not negative)", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[1152921504606846976,1152921504606846980]}}",
         z, 4, -1, "data_offsets begin 1152921504606846976 is too large");
  st_bad("a negative offset", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", z, 4, -1, "data_offsets begin -4 is negative");
  st_bad("offsets with 3 numbers", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", z, 8, -1, "data_offsets must be");
  st_bad("offsets whose size mismatches dtype x shape",
         "{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,20]}}", z, 20, -1,
         "hold 20 bytes but F32 x shape [2, 3] needs 24");
  st_bad("end before begin", "{\"a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[8,4]}}", z, 8, -1, "end before");
  st_bad("overlapping tensors",
         "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", z, 12, -1, "overlap");
  st_bad("a gap between tensors",
         "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", z, 12, -1, "belong to no tensor");
  st_bad("trailing bytes after the last tensor", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
         z, 12, -1, "8 trailing bytes");
  st_bad("data cut short", "{\"a\":{\"dtype\":\"F64\",\"shape\":[4],\"data_offsets\":[0,32]}}", z, 20, -1,
         "truncated: the tensors need 32 bytes");
  st_bad("duplicate tensor names",
         "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
         "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}", z, 2, -1, "duplicate tensor name 'a'");
  st_bad("a non-string metadata value", "{\"__metadata__\":{\"epoch\":3}}", NULL, 0, -1, "\"epoch\" is a number");
  st_bad("metadata that is not an object", "{\"__metadata__\":[1]}", NULL, 0, -1, "__metadata__ is an array");
  st_bad("a shape with 9 dims",
         "{\"a\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,1]}}", z, 1, -1, "9 dims");
  st_bad("a shape whose byte count overflows",
         "{\"a\":{\"dtype\":\"F64\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}", z, 8, -1, "overflows");
  st_bad("a tensor that is not an object", "{\"a\":[1,2]}", NULL, 0, -1, "want an object");

  /* writer argument checks */
  float v[4] = {1, 2, 3, 4};
  al_st_entry e = {.name = "w", .dtype = AL_ST_F32, .ndim = 2, .shape = {2, 3}, .data = v, .nbytes = 16};
  void *w;
  size_t wn;
  expect_err("safetensors: write rejects nbytes != shape x dtype",
             al_st_write_memory(&e, 1, NULL, 0, &w, &wn), "'w'", "16 bytes given", "needs 24", NULL);
  al_st_entry two[2] = {e, e};
  two[0].shape[1] = 2;
  two[1].shape[1] = 2;
  expect_err("safetensors: write rejects duplicate names",
             al_st_write_memory(two, 2, NULL, 0, &w, &wn), "duplicate tensor name 'w'", NULL);
  al_st_entry bad = e;
  bad.shape[1] = 2;
  bad.ndim = 9;
  expect_err("safetensors: write rejects ndim 9", al_st_write_memory(&bad, 1, NULL, 0, &w, &wn),
             "ndim 9", NULL);
  bad.ndim = 2;
  bad.shape[0] = -2;
  expect_err("safetensors: write rejects a negative dim", al_st_write_memory(&bad, 1, NULL, 0, &w, &wn),
             "shape[0] = -2", NULL);
  bad.shape[0] = 2;
  bad.name = "__metadata__";
  expect_err("safetensors: write rejects a tensor named __metadata__",
             al_st_write_memory(&bad, 1, NULL, 0, &w, &wn), "__metadata__", NULL);
  bad.name = "bad\xff";
  expect_err("safetensors: write rejects a non-UTF-8 name", al_st_write_memory(&bad, 1, NULL, 0, &w, &wn),
             "not UTF-8", NULL);
  al_st_meta dm[2] = {{"k", "1"}, {"k", "2"}};
  expect_err("safetensors: write rejects duplicate metadata keys",
             al_st_write_memory(NULL, 0, dm, 2, &w, &wn), "duplicate metadata key 'k'", NULL);
  expect_err("safetensors: converting U8 to float32 is refused by name", al_st_to_f32(&(al_st_entry){
             .name = "m", .dtype = AL_ST_U8, .ndim = 1, .shape = {1}, .data = "x", .nbytes = 1},
             (float[1]){0}), "'m'", "U8", NULL);
  {
    uint64_t big = (uint64_t)INT64_MAX + 1;
    int64_t o;
    expect_err("safetensors: U64 above INT64_MAX does not convert to int64",
               al_st_to_i64(&(al_st_entry){.name = "u", .dtype = AL_ST_U64, .ndim = 0, .data = &big,
               .nbytes = 8}, &o), "'u'", "does not fit", NULL);
  }
  expect_err("safetensors: write to a missing folder names the path",
             al_st_write("/nonexistent-dir/x.safetensors", two, 1, NULL, 0), "/nonexistent-dir/x.safetensors",
             NULL);
  expect_err("safetensors: open of a missing file", al_st_open(tmppath("missing.safetensors"), &f),
             "missing.safetensors", "cannot open", NULL);
}

/* ------------------------------------------------------------------ atomic writes */

static void test_atomic(void) {
  const char *p = tmppath("record.json");
  al_status st = al_write_file_atomic(p, "{\"acc\":0.5}", 11);
  st = st ? st : al_write_file_atomic(p, "{\"acc\":0.75}\n", 13);
  size_t n = 0;
  uint8_t *b = slurp(p, &n);
  CHECK("atomic: second write replaces the first", st == AL_OK && b && n == 13 &&
        memcmp(b, "{\"acc\":0.75}\n", 13) == 0, "st=%d n=%zu %s", st, n, al_errmsg());
  free(b);
  struct stat sb;
  mode_t um = umask(022);
  umask(um);
  CHECK("atomic: mode is 0666 minus umask", stat(p, &sb) == 0 && (sb.st_mode & 0777) == (0666 & ~um),
        "mode %o", (unsigned)(sb.st_mode & 0777));
  DIR *d = opendir(tmpdir);
  int leftovers = 0;
  struct dirent *de;
  while (d && (de = readdir(d))) if (strstr(de->d_name, ".tmp.")) leftovers++;
  if (d) closedir(d);
  CHECK("atomic: no temporary files left behind", leftovers == 0, "%d left", leftovers);
  expect_err("atomic: missing folder is an error naming the path",
             al_write_file_atomic("/nonexistent-dir/r.json", "x", 1), "/nonexistent-dir/r.json",
             "temporary", NULL);
  al_afile *a;
  st = al_afile_open(p, &a);
  if (st == AL_OK) { al_afile_write(a, "partial", 7); al_afile_abort(a); }
  b = slurp(p, &n);
  CHECK("atomic: an aborted write leaves the old file", st == AL_OK && n == 13 && b &&
        memcmp(b, "{\"acc\":0.75}\n", 13) == 0, "n=%zu", n);
  free(b);
}

/* ------------------------------------------------------------------ SHA-256 (core/util/sha256.c) */

/* FIPS 180-4 / NIST CAVS vectors, plus the public code against the test's own independent
 * implementation above over pieces of every length 0..200 (block and padding boundaries). */
static void test_sha256(void) {
  static const struct { const char *msg; const char *hex; } V[] = {
    {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
    {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
     "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
  };
  int ok = 1;
  char hex[AL_SHA256_HEX], want[65];
  uint8_t d[AL_SHA256_SIZE];
  for (size_t i = 0; i < sizeof V / sizeof V[0]; i++) {
    al_sha256(V[i].msg, strlen(V[i].msg), d);
    al_sha256_hex(d, hex);
    if (strcmp(hex, V[i].hex)) { ok = 0; printf("  vector %zu: got %s want %s\n", i, hex, V[i].hex); }
  }
  CHECK("sha256: FIPS 180-4 test vectors", ok, "see above");
  /* one million 'a' fed in uneven pieces */
  static char mil[1000];
  memset(mil, 'a', sizeof mil);
  al_sha256_ctx c;
  al_sha256_init(&c);
  size_t fed = 0;
  for (size_t k = 1; fed < 1000000; k = k % 997 + 1) {
    size_t n = k < 1000000 - fed ? k : 1000000 - fed;
    al_sha256_update(&c, mil, n);
    fed += n;
  }
  al_sha256_final(&c, d);
  al_sha256_hex(d, hex);
  CHECK("sha256: 1,000,000 x 'a' in uneven pieces", !strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
        "got %s", hex);
  uint8_t buf[200];
  for (int i = 0; i < 200; i++) buf[i] = (uint8_t)(i * 37 + 11);
  ok = 1;
  for (size_t n = 0; n <= 200 && ok; n++) {
    sha256_ctx r;
    sha_init(&r);
    sha_update(&r, buf, n);
    sha_hex(&r, want);
    al_sha256_init(&c);
    al_sha256_update(&c, buf, n / 3);
    al_sha256_update(&c, buf + n / 3, n - n / 3);
    al_sha256_final(&c, d);
    al_sha256_hex(d, hex);
    if (strcmp(hex, want)) { ok = 0; printf("  n=%zu: got %s want %s\n", n, hex, want); }
  }
  CHECK("sha256: every length 0..200 matches an independent implementation", ok, "see above");
  const char *p = tmppath("sha.bin");
  uint64_t size = 0;
  al_status st = write_bytes(p, "abc", 3) ? al_sha256_file(p, hex, &size) : AL_EIO;
  CHECK("sha256: al_sha256_file gives digest and size", st == AL_OK && size == 3 &&
        !strcmp(hex, V[1].hex), "st=%d size=%llu %s", st, (unsigned long long)size, hex);
  expect_err("sha256: a missing file is an error naming it", al_sha256_file("/nonexistent/x.bin", hex, NULL),
             "/nonexistent/x.bin", NULL);
}

static void rm_tmpdir(void) {
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

int main(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/attnlab_test_io_XXXXXX");
  if (!mkdtemp(tmpdir)) { printf("FAIL: io: mkdtemp (%s)\n", tmpdir); return 1; }
  size_t live0 = al_mem_live();
  test_gz();
  test_idx();
  test_cifar();
  test_tar_fixtures();
  test_tar_handmade();
  test_newsgroups();
  test_st_ref();
  test_st_malformed();
  test_atomic();
  test_sha256();
  CHECK("io: every al_malloc'ed byte was freed", al_mem_live() == live0, "%zu bytes live",
        al_mem_live() - live0);
  rm_tmpdir();
  CHECK_EXIT();
}
