/* tests/fuzz/fuzz_idx.c -- libFuzzer target: the IDX decoder (and the gzip layer under it)
 * on arbitrary bytes, through al_idx_read_memory.
 * Build: make fuzz (clang -fsanitize=fuzzer,address,undefined). Seeds: corpus/idx/.
 * al_fuzz_idx() is also called by tests/c/test_fuzz_regressions.c (which defines
 * AL_FUZZ_NO_MAIN) on every seed and every saved crasher. Returns 0 (decoded), 1 (clean
 * error) or -1 (an invariant broke: the fuzzer aborts on it). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/io.h"

int al_fuzz_idx(const uint8_t *data, size_t size) {
  size_t live0 = al_mem_live();
  al_idx x;
  al_status st = al_idx_read_memory(data, size, "fuzz.idx", &x);
  int rc = 1;
  if (st == AL_OK) {
    uint64_t prod = 1;
    for (int i = 0; i < x.ndim; i++) prod *= (uint64_t)x.dims[i];
    unsigned sum = 0;
    for (size_t i = 0; i < x.size; i++) sum += x.data[i];   /* ASan: every byte readable */
    rc = (x.type == 8 && x.ndim >= 1 && x.ndim <= 4 && prod == x.size) ? 0 : -1;
    (void)sum;
    al_idx_free(&x);
  } else if (strncmp(al_errmsg(), "fuzz.idx: ", 10) != 0 || x.data || x.size) {
    rc = -1;   /* every message names the file; nothing handed out on failure */
  }
  if (al_mem_live() != live0) rc = -1;
  return rc;
}

#ifndef AL_FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (al_fuzz_idx(data, size) < 0) abort();
  return 0;
}
#endif
