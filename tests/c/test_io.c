/* tests/c/test_io.c -- the I/O layer under the decoders: the gzip reader (plain and gzip,
 * multi-member, truncated and corrupt streams), atomic file writes, and SHA-256
 * (core/util/sha256.c) against FIPS 180-4 vectors and the independent implementation in
 * io_fixtures.h, and NULL arguments of every reader and writer (AL_EINVAL naming them). The
 * decoders: test_io_datasets.c, test_io_tar.c, test_io_safetensors.c.
 * Files are written to a fresh folder under /tmp. Run from the repository root. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnlab/io.h"
#include "attnlab/sha256.h"

#include "io_fixtures.h"

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
    /* "bytes decompressed" is what inflate produced: it said 0, the count delivered when
     * al_gz_read returns, for an error within the read */
    {"trunc_trailer.gz", "gzip without its trailer", n1 - 4, -1, "truncated gzip data: the compressed stream ends after "},
    {"badcrc.gz", "gzip with a wrong CRC", n1, (int)n1 - 6, "corrupt gzip data"},
    {"garbage.gz", "gzip + trailing garbage", n1 + 5, -1, "5 bytes of trailing garbage after the gzip data (1000 bytes decompressed)"},
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
    expect_err(nm, st, bad[i].file, bad[i].want, i == 1 ? "(1000 bytes decompressed)" : NULL, NULL);
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
  /* Not a regular file: the rename would put one in its place (as root, --out /dev/null used to
   * replace /dev/null), and a FIFO opened to test it would block. A symbolic link to /dev/null
   * stands in for it here: if the check failed, only the link would be replaced. */
  const char *null_link = tmppath("devnull-link"), *fifo = tmppath("fifo"), *folder = tmppath("afolder");
  const int made = symlink("/dev/null", null_link) == 0 && mkfifo(fifo, 0600) == 0 && mkdir(folder, 0700) == 0;
  expect_err("atomic: a path to a character device (/dev/null through a link) is refused, named",
             al_write_file_atomic(null_link, "x", 1), null_link, "character device", NULL);
  struct stat lb;
  CHECK("atomic: ... and the link still points to /dev/null", made && lstat(null_link, &lb) == 0 &&
        S_ISLNK(lb.st_mode) && stat(null_link, &sb) == 0 && S_ISCHR(sb.st_mode), "made=%d", made);
  expect_err("atomic: a FIFO is refused without opening it (would block)", al_write_file_atomic(fifo, "x", 1),
             fifo, "FIFO", NULL);
  CHECK("atomic: ... and stays a FIFO", stat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode), "");
  expect_err("atomic: a folder is refused, named", al_write_file_atomic(folder, "x", 1), folder, "folder", NULL);
  expect_err("atomic: al_afile_open refuses them too", al_afile_open(fifo, &a), fifo, "FIFO", NULL);
  CHECK("atomic: al_atomic_replaceable: a regular file or nothing is fine, the others are not",
        al_atomic_replaceable(p) == AL_OK && al_atomic_replaceable(tmppath("not-there.json")) == AL_OK &&
        al_atomic_replaceable(null_link) == AL_EINVAL && al_atomic_replaceable(fifo) == AL_EINVAL &&
        al_atomic_replaceable(folder) == AL_EINVAL && al_atomic_replaceable("") == AL_EINVAL, "");
  unlink(null_link);
  unlink(fifo);
  rmdir(folder);
}

/* A destination that is a symbolic link: the write goes to what the link resolves to, and the
 * link stays (renaming over the link itself turned it into a regular file, leaving its target
 * untouched; `--out /dev/stdout` as root replaced /dev/stdout). Relative links, chains, and a
 * dangling link (the target is created); a link to a FIFO is refused and left alone. */
static void test_atomic_symlinks(void) {
  const char *target = tmppath("sl-target.json"), *link = tmppath("sl-link.json");
  write_bytes(target, "old\n", 4);
  int made = symlink("sl-target.json", link) == 0;   /* relative, as ln -s writes them */
  al_status st = al_write_file_atomic(link, "new\n", 4);
  size_t n = 0;
  uint8_t *b = slurp(target, &n);
  struct stat lb, sb;
  CHECK("atomic symlink: the target of a (relative) link is updated", made && st == AL_OK && b && n == 4 &&
        memcmp(b, "new\n", 4) == 0, "st=%d n=%zu %s", st, n, st ? al_errmsg() : "");
  free(b);
  CHECK("atomic symlink: ... and the link is still a link to it", lstat(link, &lb) == 0 && S_ISLNK(lb.st_mode), "");
  /* a chain: link2 -> link -> target, through the streaming API */
  const char *link2 = tmppath("sl-link2.json");
  made = symlink(link, link2) == 0;
  al_afile *a = NULL;
  st = al_afile_open(link2, &a);
  if (st == AL_OK) st = al_afile_write(a, "chain\n", 6);
  if (st == AL_OK) st = al_afile_commit(a);
  else al_afile_abort(a);
  b = slurp(target, &n);
  CHECK("atomic symlink: a chain of links updates the final target", made && st == AL_OK && b && n == 6 &&
        memcmp(b, "chain\n", 6) == 0 && lstat(link2, &lb) == 0 && S_ISLNK(lb.st_mode) &&
        lstat(link, &lb) == 0 && S_ISLNK(lb.st_mode), "st=%d %s", st, st ? al_errmsg() : "");
  free(b);
  /* dangling: the file the link names is created */
  const char *dang = tmppath("sl-dangling.json"), *created = tmppath("sl-created.json");
  made = symlink("sl-created.json", dang) == 0;
  st = al_write_file_atomic(dang, "c\n", 2);
  b = slurp(created, &n);
  CHECK("atomic symlink: a dangling link gets its target created", made && st == AL_OK && b && n == 2 &&
        lstat(dang, &lb) == 0 && S_ISLNK(lb.st_mode), "st=%d %s", st, st ? al_errmsg() : "");
  free(b);
  /* a link to a FIFO: refused in one line naming both, and left as it was */
  const char *fifo = tmppath("sl-fifo"), *flink = tmppath("sl-fifo-link");
  made = mkfifo(fifo, 0600) == 0 && symlink(fifo, flink) == 0;
  st = al_write_file_atomic(flink, "x", 1);
  expect_err("atomic symlink: a link to a FIFO is refused, naming the link and what it points to", st, flink,
             fifo, "FIFO", NULL);
  CHECK("atomic symlink: ... in one line", st != AL_OK && !strchr(al_errmsg(), '\n'), "");
  CHECK("atomic symlink: ... and both stay as they were", made && lstat(flink, &lb) == 0 && S_ISLNK(lb.st_mode) &&
        stat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode), "");
  DIR *d = opendir(tmpdir);
  int leftovers = 0;
  struct dirent *de;
  while (d && (de = readdir(d))) if (strstr(de->d_name, ".tmp.")) leftovers++;
  if (d) closedir(d);
  CHECK("atomic symlink: no temporary files left behind", leftovers == 0, "%d left", leftovers);
  unlink(link2); unlink(link); unlink(target); unlink(dang); unlink(created); unlink(flink); unlink(fifo);
}

/* ------------------------------------------------------------------ non-regular inputs */

/* A FIFO named like a dataset file made the loaders wait forever in fopen; a character device
 * gave an endless or empty stream. Every reader refuses them in one line naming the file. A
 * hang fails the test (SIGALRM) instead of blocking the suite. */
static void test_nonregular_reads(void) {
  const char *fifo = tmppath("t10k-images-idx3-ubyte.gz"), *flink = tmppath("fifo-link.gz");
  int made = mkfifo(fifo, 0600) == 0 && symlink(fifo, flink) == 0;
  CHECK("nonregular: fixtures made", made, "");
  alarm(20);
  void *d = NULL;
  size_t n = 0;
  al_gz *g = NULL;
  al_idx idx;
  al_cifar cif;
  al_st_file *sf = NULL;
  memset(&idx, 0, sizeof idx);
  memset(&cif, 0, sizeof cif);
  expect_err("nonregular: al_read_file (gunzip) refuses a FIFO", al_read_file(fifo, 1, &d, &n), fifo, "is a FIFO",
             "not a regular file", NULL);
  expect_err("nonregular: al_read_file (raw) refuses a FIFO", al_read_file(fifo, 0, &d, &n), fifo, "is a FIFO", NULL);
  expect_err("nonregular: al_gz_open refuses a link to a FIFO", al_gz_open(flink, &g), flink, "is a FIFO", NULL);
  expect_err("nonregular: al_idx_read refuses a FIFO", al_idx_read(fifo, &idx), fifo, "FIFO", NULL);
  expect_err("nonregular: al_cifar_read refuses a FIFO", al_cifar_read(fifo, &cif), fifo, "FIFO", NULL);
  expect_err("nonregular: al_st_open refuses a FIFO", al_st_open(fifo, &sf), fifo, "FIFO", NULL);
  expect_err("nonregular: al_read_file refuses a character device", al_read_file("/dev/zero", 1, &d, &n), "/dev/zero",
             "is a character device", NULL);
  CHECK("nonregular: ... each in one line", !strchr(al_errmsg(), '\n'), "%s", al_errmsg());
  alarm(0);
  struct stat sb;
  CHECK("nonregular: the FIFO is left as it was", stat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode), "");
  unlink(flink);
  unlink(fifo);
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
  /* no bytes at a NULL pointer: the empty digest (memcpy(NULL, 0) was undefined: UBSan stopped) */
  al_sha256(NULL, 0, d);
  al_sha256_hex(d, hex);
  CHECK("sha256: 0 bytes at NULL is the empty digest", !strcmp(hex, V[0].hex), "got %s", hex);
  const char *p = tmppath("sha.bin");
  uint64_t size = 0;
  al_status st = write_bytes(p, "abc", 3) ? al_sha256_file(p, hex, &size) : AL_EIO;
  CHECK("sha256: al_sha256_file gives digest and size", st == AL_OK && size == 3 &&
        !strcmp(hex, V[1].hex), "st=%d size=%llu %s", st, (unsigned long long)size, hex);
  expect_err("sha256: a missing file is an error naming it", al_sha256_file("/nonexistent/x.bin", hex, NULL),
             "/nonexistent/x.bin", NULL);
  /* a plain fopen waited forever on a FIFO (no writer) and hashed /dev/zero forever: a regular
   * file only, refused without opening (a hang here is the failure) */
  const char *fifo = tmppath("sha.fifo");
  int made = mkfifo(fifo, 0600) == 0;
  CHECK("sha256: a FIFO was made for the next check", made, "");
  expect_err("sha256: a FIFO is refused, named, without blocking", al_sha256_file(fifo, hex, NULL), fifo, "FIFO", NULL);
  expect_err("sha256: a device (/dev/zero) is refused, not hashed forever", al_sha256_file("/dev/zero", hex, NULL),
             "/dev/zero", "character device", NULL);
  unlink(fifo);
}

/* A NULL out slot, stream, handle or buffer with bytes to move: AL_EINVAL naming the function and
 * the argument, as the NULL path and NULL data of the *_memory readers already were. They were
 * dereferenced (or handed to write(2), which said "Bad address" as an I/O error). */
static void test_null_arguments(void) {
  const char *p = tmppath("null.bin");
  CHECK("null: a file to read was written", write_bytes(p, "abc", 3), "");
  al_gz *gz = NULL;
  void *data = NULL;
  size_t size = 0, got = 0;
  al_idx idx;
  al_cifar cf;
  al_afile *af = NULL;
  char hex[AL_SHA256_HEX];
  expect_err("null: al_gz_open out", al_gz_open(p, NULL), "al_gz_open: out is NULL", NULL);
  expect_err("null: al_gz_open_memory out", al_gz_open_memory("abc", 3, NULL, NULL), "al_gz_open_memory: out is NULL", NULL);
  expect_err("null: al_gz_read stream", al_gz_read(NULL, hex, 3, &got), "al_gz_read: the stream is NULL", NULL);
  expect_err("null: al_gz_skip stream", al_gz_skip(NULL, 3, NULL), "al_gz_skip: the stream is NULL", NULL);
  if (al_gz_open_memory("abc", 3, "mem", &gz) == AL_OK) {
    expect_err("null: al_gz_read buf with bytes to read", al_gz_read(gz, NULL, 3, &got), "mem", "buf is NULL", NULL);
    CHECK("null: al_gz_read of 0 bytes into NULL is fine", al_gz_read(gz, NULL, 0, &got) == AL_OK && got == 0, "%s", al_errmsg());
    al_gz_close(gz);
  }
  expect_err("null: al_read_file data", al_read_file(p, 0, NULL, &size), "al_read_file: data is NULL", NULL);
  expect_err("null: al_read_file size", al_read_file(p, 0, &data, NULL), "al_read_file: size is NULL", NULL);
  expect_err("null: al_idx_read out", al_idx_read(p, NULL), "al_idx_read: out is NULL", NULL);
  expect_err("null: al_idx_read_memory out", al_idx_read_memory("abc", 3, "m", NULL), "out is NULL", NULL);
  expect_err("null: al_idx_read_gz stream", al_idx_read_gz(NULL, &idx), "the stream is NULL", NULL);
  expect_err("null: al_cifar_read out", al_cifar_read(p, NULL), "al_cifar_read: out is NULL", NULL);
  expect_err("null: al_cifar_read_gz stream", al_cifar_read_gz(NULL, &cf), "the stream is NULL", NULL);
  expect_err("null: al_tar_foreach_gz stream", al_tar_foreach_gz(NULL, NULL, NULL), "the stream is NULL", NULL);
  expect_err("null: al_st_open out", al_st_open(p, NULL), "al_st_open: out is NULL", NULL);
  expect_err("null: al_st_open_memory out", al_st_open_memory("abc", 3, "m", NULL), "out is NULL", NULL);
  al_st_entry e = {"w", AL_ST_F32, 1, {2}, "\0\0\0\0\0\0\0\0", 8, NULL};
  float f2[2];
  expect_err("null: al_st_to_f32 entry", al_st_to_f32(NULL, f2), "al_st_to_f32: the entry is NULL", NULL);
  expect_err("null: al_st_to_f32 out", al_st_to_f32(&e, NULL), "al_st_to_f32: out is NULL", NULL);
  expect_err("null: al_st_to_i64 entry", al_st_to_i64(NULL, NULL), "al_st_to_i64: the entry is NULL", NULL);
  expect_err("null: al_st_write_memory data", al_st_write_memory(&e, 1, NULL, 0, NULL, &size), "data is NULL", NULL);
  expect_err("null: al_afile_open out", al_afile_open(p, NULL), "al_afile_open: out is NULL", NULL);
  expect_err("null: al_afile_write handle", al_afile_write(NULL, "a", 1), "al_afile_write: the file is NULL", NULL);
  expect_err("null: al_afile_commit handle", al_afile_commit(NULL), "al_afile_commit: the file is NULL", NULL);
  expect_err("null: al_write_file_atomic data with a size", al_write_file_atomic(p, NULL, 3), p, "data is NULL with size 3", NULL);
  size_t nb = 0;
  uint8_t *back = slurp(p, &nb);
  CHECK("null: a refused al_write_file_atomic left the file as it was", back && nb == 3 && !memcmp(back, "abc", 3), "");
  free(back);
  if (al_afile_open(p, &af) == AL_OK) {
    expect_err("null: al_afile_write data with a size is AL_EINVAL", al_afile_write(af, NULL, 3), "data is NULL with size 3", NULL);
    expect_err("null: ... and sticky: commit refuses and keeps the old file", al_afile_commit(af), "data is NULL", NULL);
    back = slurp(p, &nb);
    CHECK("null: the old file is still there", back && nb == 3 && !memcmp(back, "abc", 3), "");
    free(back);
  }
  expect_err("null: al_sha256_file hex", al_sha256_file(p, NULL, NULL), p, "hex is NULL", NULL);
}

/* The size hint is the trailer's ISIZE read little-endian (a 17,000,000-byte member, 0x01036640,
 * sets all four of its bytes), for a file and a memory buffer, and exact for a plain file. */
static void test_gz_size_hint(void) {
  enum { N = 17000000 };
  if (under_valgrind()) { check_skip("gz: size hint of a 17,000,000-byte gzip member", "17 MB deflated: skipped under valgrind; make test runs it"); return; }
  uint8_t *src = malloc(N);
  for (int i = 0; i < N; i++) src[i] = (uint8_t)(i / 1000 % 251);
  const char *gz = tmppath("hint.bin.gz"), *plain = tmppath("hint.bin");
  int made = write_gz(gz, src, N) && write_bytes(plain, src, 1000);
  al_gz *f = NULL;
  uint64_t hf = 0, hm = 0, hp = 0;
  if (made && al_gz_open(gz, &f) == AL_OK) { hf = al_gz_size_hint(f); al_gz_close(f); }
  size_t n = 0;
  uint8_t *raw = made ? slurp(gz, &n) : NULL;
  if (raw && al_gz_open_memory(raw, n, "hint.bin.gz", &f) == AL_OK) { hm = al_gz_size_hint(f); al_gz_close(f); }
  if (made && al_gz_open(plain, &f) == AL_OK) { hp = al_gz_size_hint(f); al_gz_close(f); }
  CHECK("gz: size hint of a 17,000,000-byte gzip member is its ISIZE (file and memory), of a plain file its size",
        hf == N && hm == N && hp == 1000, "file %llu memory %llu plain %llu", (unsigned long long)hf,
        (unsigned long long)hm, (unsigned long long)hp);
  free(raw);
  free(src);
}

/* A 3-byte file that is just the gzip magic is a truncated gzip stream, not 3 bytes of data. */
static void test_gz_magic_only(void) {
  static const uint8_t magic[3] = {0x1f, 0x8b, 8};
  uint8_t b[8];
  size_t got = 0;
  al_gz *g = NULL;
  al_status st = al_gz_open_memory(magic, 3, "magic-only.gz", &g);
  int isgz = st == AL_OK && al_gz_is_gzip(g);
  if (st == AL_OK) { st = al_gz_read(g, b, sizeof b, &got); al_gz_close(g); }
  CHECK("gz: 3 bytes of gzip magic are a gzip stream", isgz, "");
  expect_err("gz: ... cut short: an error, not 3 bytes of data", st, "magic-only.gz", "truncated gzip data", NULL);
}

/* A failed commit (the target turned into a folder between open and commit, so rename fails)
 * removes its temporary file; a write after a failed one fails again with the first message. */
static void test_atomic_failures(void) {
  const char *p = tmppath("becomes-a-folder.json");
  al_afile *a = NULL;
  al_status st = al_afile_open(p, &a);
  if (st == AL_OK) st = al_afile_write(a, "{}\n", 3);
  int made = st == AL_OK && mkdir(p, 0700) == 0;
  st = made ? al_afile_commit(a) : AL_EIO;
  if (!made && a) al_afile_abort(a);
  expect_err("atomic: a commit whose rename fails is an error naming the path", st, p, "cannot rename", NULL);
  DIR *d = opendir(tmpdir);
  int leftovers = 0;
  struct dirent *de;
  while (d && (de = readdir(d))) if (strstr(de->d_name, "becomes-a-folder.json.tmp.")) leftovers++;
  if (d) closedir(d);
  CHECK("atomic: ... and leaves no temporary file", made && leftovers == 0, "made=%d, %d left", made, leftovers);
  rmdir(p);
  const char *q = tmppath("sticky.json");
  st = al_afile_open(q, &a);
  if (st == AL_OK) {
    al_afile_write(a, NULL, 5);
    st = al_afile_write(a, "fine", 4);
    expect_err("atomic: a write after a failed one fails too, with the first failure's message", st, q,
               "data is NULL with size 5", NULL);
    al_afile_abort(a);
  }
}

int main(void) {
  if (!io_begin("test_io")) return 1;
  test_gz();
  test_gz_size_hint();
  test_gz_magic_only();
  test_atomic();
  test_atomic_symlinks();
  test_atomic_failures();
  test_nonregular_reads();
  test_sha256();
  test_null_arguments();
  io_end(1);
  CHECK_EXIT();
}
