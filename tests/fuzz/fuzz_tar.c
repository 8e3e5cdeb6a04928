/* tests/fuzz/fuzz_tar.c -- libFuzzer target: the tar / tar.gz reader on arbitrary bytes,
 * through al_tar_foreach_memory; the callback reads every byte it is given (so ASan sees
 * any overrun) and checks the promised NUL after the data. Seeds: corpus/tar/.
 * al_fuzz_tar() is shared with tests/c/test_fuzz_regressions.c. Returns 0 (read to the
 * end), 1 (clean error), -1 (an invariant broke). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/io.h"

typedef struct { uint64_t files, bytes, sum; int bad; } fuzz_tar_acc;

static int fuzz_tar_cb(void *ud, const char *name, const uint8_t *d, size_t size) {
  fuzz_tar_acc *a = ud;
  a->files++;
  a->bytes += size;
  a->sum += strlen(name);
  for (size_t i = 0; i < size; i++) a->sum += d[i];
  if (d[size] != 0) a->bad = 1;
  return a->files > 100000;   /* exercise early stop on inputs with many entries */
}

int al_fuzz_tar(const uint8_t *data, size_t size) {
  size_t live0 = al_mem_live();
  fuzz_tar_acc a = {0, 0, 0, 0};
  al_status st = al_tar_foreach_memory(data, size, "fuzz.tar", fuzz_tar_cb, &a);
  int rc = st == AL_OK ? 0 : 1;
  if (st != AL_OK && strncmp(al_errmsg(), "fuzz.tar: ", 10) != 0) rc = -1;
  /* plain input: files cannot hold more bytes than the archive */
  if (size && data[0] != 0x1f && a.bytes > size) rc = -1;
  if (a.bad || al_mem_live() != live0) rc = -1;
  return rc;
}

#ifndef AL_FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (al_fuzz_tar(data, size) < 0) abort();
  return 0;
}
#endif
