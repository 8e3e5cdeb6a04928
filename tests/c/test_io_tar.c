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

int main(void) {
  if (!io_begin("test_io_tar")) return 1;
  test_tar_fixtures();
  test_tar_handmade();
  io_end(0);
  CHECK_EXIT();
}
