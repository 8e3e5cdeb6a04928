/* tests/c/test_io_datasets.c -- the dataset decoders against the real data and hand-made
 * corrupt files: KMNIST and Fashion-MNIST IDX, CIFAR-10 batches, 20 Newsgroups tar.gz,
 * checked against the counts and SHA-256s that ../shared/data/README.md states (SHA-256 of
 * the decoded bytes, re-serialised). Real data absent -> SKIP with the path. Run from the
 * repository root. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/io.h"

#include "io_fixtures.h"

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

/* Header fields the real files never exercise (their dims are below 2^16): every byte of a
 * big-endian u32 dim, the second magic byte, ndim 5; and two gzip'ed files near the limits of
 * the bound the reader checks sizes against (1032 x the compressed bytes left). */
static void test_idx_header_fields(void) {
  al_idx x;
  uint8_t d2[12] = {0, 0, 8, 2, 0x01, 0x02, 0x03, 0x04, 0, 0, 0, 0};   /* 0x01020304 x 0: no data */
  al_status st = al_idx_read_memory(d2, sizeof d2, "dims.idx", &x);
  CHECK("idx: a dim with all four bytes set reads big-endian (0x01020304 = 16909060)",
        st == AL_OK && x.ndim == 2 && x.dims[0] == 16909060 && x.dims[1] == 0 && x.size == 0,
        "st=%d dims %" PRId64 " x %" PRId64 " %s", st, x.dims[0], x.dims[1], st ? al_errmsg() : "");
  al_idx_free(&x);
  uint8_t m1[9] = {0, 1, 8, 1, 0, 0, 0, 1, 5};
  expect_err("idx: a nonzero second magic byte is not an IDX file", al_idx_read_memory(m1, sizeof m1, "m1.idx", &x),
             "m1.idx", "not an IDX file: magic bytes 00 01 08 01", NULL);
  uint8_t nd5[25] = {0, 0, 8, 5, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 9};
  expect_err("idx: ndim 5 is refused (dims[] holds 4)", al_idx_read_memory(nd5, sizeof nd5, "nd5.idx", &x),
             "nd5.idx", "ndim is 5, supported 1..4", NULL);
  /* 2^31 x 2^31 x 4 = 2^64 wraps to 0 in 64 bits: an overflow, not an empty array */
  uint8_t wrap[16] = {0, 0, 8, 3, 0x80, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 4};
  expect_err("idx: dims whose product wraps to 0 in 64 bits overflow", al_idx_read_memory(wrap, sizeof wrap, "wrap.idx", &x),
             "wrap.idx", "2147483648 images of 2147483648x4", "overflows", NULL);

  if (under_valgrind()) { check_skip("idx: gzip'ed files near the size bound", "8 MB deflated: skipped under valgrind; make test runs it"); return; }
  /* 10000 all-black 28x28 images: 7.84 MB of zeros deflate at ~1024:1, just under deflate's
   * 1032:1, so the size bound must not call the file truncated */
  uint8_t hdr[16] = {0, 0, 8, 3, 0, 0, 0x27, 0x10, 0, 0, 0, 28, 0, 0, 0, 28};
  enum { NIMG = 10000 * 28 * 28 };
  uint8_t *img = calloc(16 + NIMG, 1);
  memcpy(img, hdr, 16);
  const char *p = tmppath("black-idx3-ubyte.gz");
  st = write_gz(p, img, 16 + NIMG) ? al_idx_read(p, &x) : AL_EIO;
  int zero = st == AL_OK && x.size == NIMG;
  for (size_t i = 0; zero && i < x.size; i++) zero = x.data[i] == 0;
  CHECK("idx: 10000 black images, gzip'ed at ~1024:1, decode", zero && x.dims[0] == 10000 && x.dims[2] == 28,
        "st=%d size %zu %s", st, x.size, st ? al_errmsg() : "");
  al_idx_free(&x);
  /* the same header over 1,000,000 incompressible bytes: after the first 256 KiB are inflated,
   * the compressed bytes left could still hold 7.84 MB by the bound, so the read itself must
   * find that the data ends early */
  img = realloc(img, 16 + 1000000);
  uint32_t s = 12345;
  for (int i = 0; i < 1000000; i++) { s = s * 1664525u + 1013904223u; img[16 + i] = (uint8_t)(s >> 24); }
  p = tmppath("short-idx3-ubyte.gz");
  st = write_gz(p, img, 16 + 1000000) ? al_idx_read(p, &x) : AL_EIO;
  expect_err("idx: gzip'ed images short of the header's count (past the size bound)", st,
             "short-idx3-ubyte.gz", "truncated", "7840000 data bytes", "has only 1000000", NULL);
  free(img);
}

/* A last gzip member shorter than one record: the size hint (that member's ISIZE, 73 bytes)
 * is 0 records, so the arrays start empty and must grow to what is read (4 records + 3000
 * bytes in the first member, 73 in the second: 5 records in all). */
static void test_cifar_small_last_member(void) {
  uint8_t *recs = malloc(5 * 3073);
  for (int i = 0; i < 5 * 3073; i++) recs[i] = (uint8_t)(i % 3073 ? i * 11 : 9 - i / 3073);
  const char *ga = tmppath("sa.gz"), *gb = tmppath("sb.gz");
  size_t na = 0, nb = 0;
  int made = write_gz(ga, recs, 5 * 3073 - 73) && write_gz(gb, recs + 5 * 3073 - 73, 73);
  uint8_t *a = made ? slurp(ga, &na) : NULL, *b = made ? slurp(gb, &nb) : NULL, *cat = malloc(na + nb + 1);
  if (a && b) { memcpy(cat, a, na); memcpy(cat + na, b, nb); }
  al_cifar c;
  al_status st = a && b ? al_cifar_read_memory(cat, na + nb, "small-last.bin.gz", &c) : AL_EIO;
  int ok = st == AL_OK && c.count == 5;
  for (int r = 0; ok && r < 5; r++)
    ok = c.labels[r] == 9 - r && memcmp(c.pixels + r * 3072, recs + r * 3073 + 1, 3072) == 0;
  CHECK("cifar: a last gzip member under one record (size hint 0) decodes all 5 records", ok,
        "st=%d count=%" PRId64 " %s", st, st ? 0 : c.count, st ? al_errmsg() : "");
  if (st == AL_OK) al_cifar_free(&c);
  free(a); free(b); free(cat); free(recs);
}

int main(void) {
  if (!io_begin("test_io_datasets")) return 1;
  test_idx();
  test_idx_header_fields();
  test_cifar();
  test_cifar_small_last_member();
  test_newsgroups();
  io_end(0);
  CHECK_EXIT();
}
