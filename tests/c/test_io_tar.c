/* tests/c/test_io_tar.c -- the tar reader: the archives in tests/ref/io_ref.json (written by
 * tests/ref/gen_io_ref.py with Python's tarfile: names, sizes and SHA-256 of every member)
 * and hand-made headers (GNU long names, pax, base-256 sizes, bad checksums, truncation).
 * Run from the repository root. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "attnlab/io.h"

#include "io_fixtures.h"

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
  if (!raw) { check_report(0, "tar: tests/fuzz/corpus/tar/ustar_prefix.tar", "missing (the corrupt-archive checks need it)"); return; }
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

/* A tar of one pax header holding `record` (then an empty file "f" when with_file) is refused,
 * its message naming the archive and holding `want`. */
static void expect_pax_refused(const char *what, const char *record, int with_file, const char *archive,
                               const char *want) {
  static uint8_t buf[8 * 512];
  size_t at = 0;
  tar_list t;
  size_t n = strnlen(record, 512);   /* one block: records here are short */
  memset(buf, 0, sizeof buf);
  put_member(buf, &at, "x", 'x', n, record, n);
  if (with_file) put_member(buf, &at, "f", '0', 0, "", 0);
  memset(&t, 0, sizeof t);
  expect_err(what, al_tar_foreach_memory(buf, at + 1024, archive, list_cb, &t), archive, want, NULL);
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
  expect_pax_refused("tar: bad pax size", "11 size=-5\n", 1, "px.tar", "bad pax size");
  expect_pax_refused("tar: pax record longer than its header", "99 path=a\n", 0, "px2.tar", "malformed pax record");
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

/* The header checksum again after a field was edited: the unsigned byte sum with the checksum
 * field read as 8 spaces (POSIX), or (old tars) the sum of signed chars. */
static void resum(uint8_t *h, int signed_sum) {
  memset(h + 148, ' ', 8);
  int sum = 0;
  for (int i = 0; i < 512; i++) sum += signed_sum ? (int)(int8_t)h[i] : (int)h[i];
  snprintf((char *)h + 148, 8, "%06o", (unsigned)sum);
}

/* Numeric fields as other writers fill them, and corrupt ones: a size right-aligned with
 * leading spaces (old tars) reads as its value; a digit 8 in it is corrupt, not a shorter
 * number; a base-256 size of 2^62 is refused as truncated before anything is allocated. */
static void test_tar_numeric_fields(void) {
  static uint8_t buf[8 * 512];
  size_t at = 0;
  tar_list t;
  memset(buf, 0, sizeof buf);
  put_member(buf, &at, "spaced", '0', 11, "hello world", 11);
  snprintf((char *)buf + 124, 12, "%11o", 11u);   /* "         13" + NUL */
  resum(buf, 0);
  memset(&t, 0, sizeof t);
  al_status st = al_tar_foreach_memory(buf, at + 1024, "spaced.tar", list_cb, &t);
  CHECK("tar: a size field padded with leading spaces reads as its octal value",
        st == AL_OK && t.n == 1 && t.sizes[0] == 11 && !strcmp(t.names[0], "spaced"), "st=%d n=%" PRId64 " %s",
        st, t.n, st ? al_errmsg() : "");
  memcpy(buf + 124, "00000000018", 12);   /* octal 1 then a '8': corrupt */
  resum(buf, 0);
  memset(&t, 0, sizeof t);
  expect_err("tar: a size field with the digit 8 is a bad size field, not 1",
             al_tar_foreach_memory(buf, at + 1024, "digit8.tar", list_cb, &t), "digit8.tar", "bad size field", NULL);
  CHECK("tar: ... and no file was handed over", t.n == 0, "n=%" PRId64, t.n);
  /* 2^62 in GNU base-256 (12 bytes big-endian, top bit of the first byte the flag): bit 62 is
   * in byte 135 - 7 = 128 */
  memset(buf + 124, 0, 12);
  buf[124] = 0x80;
  buf[128] = 0x40;
  resum(buf, 0);
  memset(&t, 0, sizeof t);
  size_t peak0 = al_mem_peak();
  expect_err("tar: a 2^62-byte member in a small archive is truncated, not out of memory",
             al_tar_foreach_memory(buf, at + 1024, "huge.tar", list_cb, &t), "huge.tar", "truncated",
             "says 4611686018427387904 bytes", NULL);
  CHECK("tar: ... and the reader allocated nothing for it", al_mem_peak() - peak0 < (1u << 20), "peak grew by %zu",
        al_mem_peak() - peak0);
}

/* Headers that old or other writers produce: a checksum summed over signed chars (a UTF-8
 * name has bytes >= 0x80, so it differs from the unsigned sum by 512 per such byte), the
 * contiguous-file type '7' (a regular file), a pax "size=0" overriding a nonzero ustar size
 * field, and a pax header padded with NULs. */
static void test_tar_other_writers(void) {
  static uint8_t buf[16 * 512];
  size_t at = 0;
  tar_list t;
  memset(buf, 0, sizeof buf);
  put_member(buf, &at, "caf\xc3\xa9.txt", '0', 4, "menu", 4);
  resum(buf, 1);
  put_member(buf, &at, "contig", '7', 5, "12345", 5);
  const char *x = "10 size=0\n";
  put_member(buf, &at, "PaxHeaders/empty", 'x', strlen(x), x, strlen(x));
  put_member(buf, &at, "empty", '0', 0, "", 0);
  mk_hdr(buf + at - 512, "empty", '0', 700);   /* the ustar field says 700; pax says 0, no data block */
  static const char padded[] = "16 path=nul.txt\n\0\0\0\0\0\0";
  put_member(buf, &at, "PaxHeaders/nul", 'x', sizeof padded - 1, padded, sizeof padded - 1);
  put_member(buf, &at, "short", '0', 3, "xyz", 3);
  memset(&t, 0, sizeof t);
  al_status st = al_tar_foreach_memory(buf, at + 1024, "writers.tar", list_cb, &t);
  CHECK("tar: signed-char checksum, type '7', pax size=0 over a ustar size, NUL-padded pax header",
        st == AL_OK && t.n == 4 && !strcmp(t.names[0], "caf\xc3\xa9.txt") && t.sizes[0] == 4 &&
        !strcmp(t.names[1], "contig") && t.sizes[1] == 5 && !strcmp(t.names[2], "empty") && t.sizes[2] == 0 &&
        !strcmp(t.names[3], "nul.txt") && t.sizes[3] == 3,
        "st=%d n=%" PRId64 " names '%s' '%s' '%s' '%s' %s", st, t.n, t.names[0], t.names[1], t.names[2], t.names[3],
        st ? al_errmsg() : "");
  /* malformed pax records: the record's last byte is not '\n'; a size with trailing text */
  expect_pax_refused("tar: a pax record not ending in a newline", "13 path=abcdX", 1, "nl.tar",
                     "malformed pax record at byte 0");
  expect_pax_refused("tar: a pax size with trailing text", "13 size=12ab\n", 1, "ps.tar", "bad pax size '12ab'");
}

/* Truncation the plain-memory tests cannot reach: the reader bounds a member by what the stream
 * can still hold, which for gzip is 1032 x the compressed bytes left, so a big tar.gz cut inside
 * a member gets past that bound and must be caught by the read itself (nothing handed to the
 * callback); an archive cut inside a member's padding or inside a skipped member says so. */
static void test_tar_truncation(void) {
  size_t n;
  uint8_t *raw = slurp("tests/fuzz/corpus/tar/ustar_prefix.tar", &n);
  if (!raw) { check_report(0, "tar: tests/fuzz/corpus/tar/ustar_prefix.tar", "missing"); return; }
  tar_list t;
  /* a member saying 2,000,000 bytes over 1,000,000 incompressible ones, then the end of the
   * stream: when its header is read only the first 256 KiB are inflated, and the compressed
   * bytes left could hold far more than 2,000,000 */
  enum { HAVE = 1000000 };
  uint8_t *cut = malloc(512 + HAVE);
  mk_hdr(cut, "cut.bin", '0', 2000000);
  uint32_t s = 12345;
  for (int i = 0; i < HAVE; i++) { s = s * 1664525u + 1013904223u; cut[512 + i] = (uint8_t)(s >> 24); }
  const char *p = tmppath("cut-inside.tar.gz");
  int made = write_gz(p, cut, 512 + HAVE);
  free(cut);
  memset(&t, 0, sizeof t);
  expect_err("tar: a tar.gz cut inside a file (complete gzip stream, past the size bound)",
             made ? al_tar_foreach(p, list_cb, &t) : AL_EIO, "cut-inside.tar.gz", "truncated: entry 0 'cut.bin'",
             "says 2000000 bytes", "after 1000000 of them", NULL);
  CHECK("tar: ... and the cut file was not handed to the callback", t.n == 0, "n=%" PRId64, t.n);
  memset(&t, 0, sizeof t);
  expect_err("tar: an archive cut inside a file's padding",
             al_tar_foreach_memory(raw, 3 * 512 + 55 + 10, "cutpad.tar", list_cb, &t), "cutpad.tar",
             "inside the padding of entry 2", NULL);
  free(raw);
  static uint8_t buf[8 * 512];
  memset(buf, 0, sizeof buf);
  mk_hdr(buf, "pax_global_header", 'g', 1000);
  memcpy(buf + 512, "9 a=bcd\n", 8);
  memset(&t, 0, sizeof t);
  expect_err("tar: an archive cut inside a skipped member (pax global header)",
             al_tar_foreach_memory(buf, 512 + 100, "cutg.tar", list_cb, &t), "cutg.tar", "truncated: entry 0",
             "says 1000 bytes", "after 100 of them", NULL);
}

/* The gzip trailer (CRC-32 and length) is only read once inflate gets past the deflate data:
 * the reader must read on after the end-of-archive block, or a tar.gz whose tar part ends
 * before the last 256 KiB of output is never checked. A tar written with 1 MiB records
 * (tar -b 2048) pads the end with zeros; its CRC or ISIZE corrupted must be an error. */
static void test_tar_gzip_trailer(void) {
  enum { REC = 1 << 20 };
  uint8_t *tarb = calloc(REC, 1);
  size_t at = 0;
  put_member(tarb, &at, "a.txt", '0', 11, "hello world", 11);
  const char *p = tmppath("rec1m.tar.gz");
  size_t gn;
  uint8_t *gz = write_gz(p, tarb, REC) ? slurp(p, &gn) : NULL;
  if (!gz) { check_report(0, "tar: a 1 MiB-record tar.gz was written", ""); free(tarb); return; }
  tar_list t;
  memset(&t, 0, sizeof t);
  al_status st = al_tar_foreach_memory(gz, gn, "rec1m.tar.gz", list_cb, &t);
  CHECK("tar: a tar.gz with 1 MiB records reads", st == AL_OK && t.n == 1 && t.sizes[0] == 11,
        "st=%d n=%" PRId64 " %s", st, t.n, st ? al_errmsg() : "");
  gz[gn - 8] ^= 1;   /* CRC-32, little-endian, first of the 8 trailer bytes */
  memset(&t, 0, sizeof t);
  expect_err("tar: ... with its gzip CRC corrupted is an error", al_tar_foreach_memory(gz, gn, "crc.tar.gz", list_cb, &t),
             "crc.tar.gz", "corrupt gzip data", "incorrect data check", NULL);
  gz[gn - 8] ^= 1;
  gz[gn - 1] ^= 1;   /* ISIZE's top byte */
  memset(&t, 0, sizeof t);
  expect_err("tar: ... with its gzip length corrupted is an error", al_tar_foreach_memory(gz, gn, "isize.tar.gz", list_cb, &t),
             "isize.tar.gz", "corrupt gzip data", "incorrect length check", NULL);
  free(gz);
  free(tarb);
}

int main(void) {
  if (!io_begin("test_io_tar")) return 1;
  test_tar_fixtures();
  test_tar_handmade();
  test_tar_numeric_fields();
  test_tar_other_writers();
  test_tar_truncation();
  test_tar_gzip_trailer();
  io_end(0);
  CHECK_EXIT();
}
