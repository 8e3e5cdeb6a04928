/* tests/fuzz/fuzz_safetensors.c -- libFuzzer target: the safetensors reader on arbitrary
 * bytes (al_st_open_memory), then, for files it accepts: every entry converted with
 * al_st_to_f32 / al_st_to_i64 as its dtype allows, found again by name, and the whole
 * file re-serialised with al_st_write_memory and parsed back to the same entries and
 * metadata (reader and writer agree). Seeds: corpus/safetensors/.
 * al_fuzz_safetensors() is shared with tests/c/test_fuzz_regressions.c. Returns 0
 * (accepted), 1 (clean error), -1 (an invariant broke). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/io.h"

static int fuzz_st_same(const al_st_file *a, const al_st_file *b) {
  if (a->n != b->n || a->nmeta != b->nmeta) return 0;
  for (int i = 0; i < a->n; i++) {
    const al_st_entry *x = &a->entries[i], *y = &b->entries[i];
    if (strcmp(x->name, y->name) || x->dtype != y->dtype || x->ndim != y->ndim ||
        x->nbytes != y->nbytes || memcmp(x->shape, y->shape, sizeof(int64_t) * (size_t)x->ndim) ||
        (x->nbytes && memcmp(x->data, y->data, x->nbytes)))
      return 0;
  }
  for (int i = 0; i < a->nmeta; i++)
    if (strcmp(a->meta[i].key, b->meta[i].key) || strcmp(a->meta[i].value, b->meta[i].value))
      return 0;
  return 1;
}

int al_fuzz_safetensors(const uint8_t *data, size_t size) {
  size_t live0 = al_mem_live();
  al_st_file *f = NULL;
  al_status st = al_st_open_memory(data, size, "fuzz.st", &f);
  int rc = 1;
  if (st != AL_OK) {
    if (strncmp(al_errmsg(), "fuzz.st: ", 9) != 0 || f) rc = -1;
  } else {
    rc = 0;
    for (int i = 0; i < f->n && rc == 0; i++) {
      const al_st_entry *e = &f->entries[i];
      if (al_st_find(f, e->name) != e) rc = -1;
      int64_t numel = al_st_numel(e);
      if ((size_t)numel * al_st_dtype_size(e->dtype) != e->nbytes) { rc = -1; break; }
      if ((const uint8_t *)e->data < data || (const uint8_t *)e->data + e->nbytes > data + size) {
        rc = -1;
        break;
      }
      float *fo = malloc((size_t)numel * sizeof(float) + 1);
      int64_t *io = malloc((size_t)numel * sizeof(int64_t) + 1);
      if (fo && io) {
        int isf = e->dtype == AL_ST_F32 || e->dtype == AL_ST_F64 || e->dtype == AL_ST_F16 ||
                  e->dtype == AL_ST_BF16;
        if ((al_st_to_f32(e, fo) == AL_OK) != isf) rc = -1;
        (void)al_st_to_i64(e, io);   /* U64 values above INT64_MAX may fail: fine */
      }
      free(fo);
      free(io);
    }
    void *w = NULL;
    size_t wn = 0;
    if (rc == 0) {
      /* names containing "__metadata__" are impossible; everything else must round-trip */
      st = al_st_write_memory(f->entries, f->n, f->meta, f->nmeta, &w, &wn);
      if (st != AL_OK) rc = -1;
    }
    if (rc == 0) {
      al_st_file *g = NULL;
      if (al_st_open_memory(w, wn, "fuzz.st", &g) != AL_OK || !fuzz_st_same(f, g)) rc = -1;
      al_st_close(g);
    }
    if (w) al_free(w, wn);
    al_st_close(f);
  }
  if (al_mem_live() != live0) rc = -1;
  return rc;
}

#ifndef AL_FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (al_fuzz_safetensors(data, size) < 0) abort();
  return 0;
}
#endif
