/* tests/fuzz/fuzz_cifar.c -- libFuzzer target: the CIFAR-10 batch decoder (and the gzip
 * layer) on arbitrary bytes, through al_cifar_read_memory. Seeds: corpus/cifar/.
 * al_fuzz_cifar() is shared with tests/c/test_fuzz_regressions.c. Returns 0 (decoded),
 * 1 (clean error), -1 (an invariant broke). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/io.h"

int al_fuzz_cifar(const uint8_t *data, size_t size) {
  size_t live0 = al_mem_live();
  al_cifar c;
  al_status st = al_cifar_read_memory(data, size, "fuzz.bin", &c);
  int rc = 1;
  if (st == AL_OK) {
    rc = c.count > 0 ? 0 : -1;
    /* plain input: the records are the input itself */
    if (size && data[0] != 0x1f && (uint64_t)c.count * AL_CIFAR_RECORD != size) rc = -1;
    unsigned sum = 0;
    for (int64_t i = 0; i < c.count; i++) {
      if (c.labels[i] >= 10) rc = -1;
      if (data[0] != 0x1f && (c.labels[i] != data[i * AL_CIFAR_RECORD] ||
          memcmp(c.pixels + i * AL_CIFAR_PIXELS, data + i * AL_CIFAR_RECORD + 1, AL_CIFAR_PIXELS)))
        rc = -1;
      sum += c.pixels[i * AL_CIFAR_PIXELS + AL_CIFAR_PIXELS - 1];
    }
    (void)sum;
    al_cifar_free(&c);
  } else if (strncmp(al_errmsg(), "fuzz.bin: ", 10) != 0 || c.labels || c.pixels || c.count) {
    rc = -1;
  }
  if (al_mem_live() != live0) rc = -1;
  return rc;
}

#ifndef AL_FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (al_fuzz_cifar(data, size) < 0) abort();
  return 0;
}
#endif
