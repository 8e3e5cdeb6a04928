/* tests/c/test_io_safetensors.c -- safetensors: the files and float32/int64 conversions in
 * tests/ref/io_ref.json (written by tests/ref/gen_io_ref.py with an independent Python writer
 * and torch) must parse, convert bit-exactly and be reproduced byte for byte by
 * al_st_write; malformed headers and data, and bad entries made by hand, are refused with
 * messages that say why. Run from the repository root. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "attnlab/io.h"

#include "io_fixtures.h"

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
  /* 0 bytes, but the tensor's strides would overflow int64 (undefined behaviour in
   * al_tensor_new): the nonzero sizes are capped as the tensor's are */
  st_bad("an empty shape whose nonzero sizes multiply past 2^60",
         "{\"a\":{\"dtype\":\"F32\",\"shape\":[0,1099511627776,1099511627776],\"data_offsets\":[0,0]}}", NULL, 0, -1,
         "tensor 'a': shape [0, 1099511627776, 1099511627776] is too large (its nonzero sizes multiply past 2^60");
  {
    const char *hj = "{\"a\":{\"dtype\":\"F32\",\"shape\":[9007199254740992,0],\"data_offsets\":[0,0]}}";
    size_t hl = strlen(hj);
    uint8_t *b = calloc(8 + hl, 1);
    b[0] = (uint8_t)hl;
    memcpy(b + 8, hj, hl);
    st = al_st_open_memory(b, 8 + hl, "empty.st", &f);
    CHECK("safetensors: an empty shape within the cap ([2^53, 0]) is read", st == AL_OK && f->n == 1 &&
          f->entries[0].nbytes == 0, "%s", st ? al_errmsg() : "");
    if (st == AL_OK) al_st_close(f);
    free(b);
  }

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
  {
    /* a conversion's error names the file, as the parser's do (they began "safetensors:"); F8
     * is said to be unsupported */
    const char *hj = "{\"w\":{\"dtype\":\"F8_E4M3\",\"shape\":[3],\"data_offsets\":[0,3]},"
                     "\"u\":{\"dtype\":\"U64\",\"shape\":[1],\"data_offsets\":[3,11]}}";
    size_t hl = strlen(hj);
    uint8_t *b = calloc(8 + hl + 11, 1);
    b[0] = (uint8_t)hl;
    memcpy(b + 8, hj, hl);
    memset(b + 8 + hl + 3, 0xff, 8);
    st = al_st_open_memory(b, 8 + hl + 11, "conv.st", &f);
    CHECK("safetensors: an F8 and a U64 tensor parse", st == AL_OK, "%s", st ? al_errmsg() : "");
    if (st == AL_OK) {
      float fo[3];
      int64_t io[1];
      expect_err("safetensors: F8 to float32 is not supported, the file and dtype named",
                 al_st_to_f32(al_st_find(f, "w"), fo), "conv.st: tensor 'w' has dtype F8_E4M3, which is not supported",
                 NULL);
      expect_err("safetensors: a U64 value >= 2^63 names the file", al_st_to_i64(al_st_find(f, "u"), io),
                 "conv.st: tensor 'u': U64 element 0 = 18446744073709551615 does not fit", NULL);
      expect_err("safetensors: F8 to int64 names the file", al_st_to_i64(al_st_find(f, "w"), io),
                 "conv.st: tensor 'w' has dtype F8_E4M3: cannot convert to int64", NULL);
      al_st_close(f);
    }
    free(b);
  }
  expect_err("safetensors: write to a missing folder names the path",
             al_st_write("/nonexistent-dir/x.safetensors", two, 1, NULL, 0), "/nonexistent-dir/x.safetensors",
             NULL);
  expect_err("safetensors: open of a missing file", al_st_open(tmppath("missing.safetensors"), &f),
             "missing.safetensors", "cannot open", NULL);
}

/* Entries made by hand (not by the reader) handed to the conversions: checked as the writer
 * checks them. A bad dtype was reported as a byte-count mismatch; a shape whose product wraps
 * to 0 (2^62 x 4) with 0 bytes converted nothing and returned AL_OK; 9 dims read past shape[]. */
static void test_st_hand_entries(void) {
  static const float two[2] = {1, 2};
  float out[2];
  int64_t iout[2];
  al_st_entry e = {"w", AL_ST_F32, 1, {2}, two, 8, "hand"};
  CHECK("safetensors: a valid hand-made entry converts", al_st_to_f32(&e, out) == AL_OK && out[1] == 2, "%s", al_errmsg());
  al_st_entry bad = e;
  bad.dtype = (al_st_dtype)99;
  expect_err("safetensors: a hand-made entry with dtype 99 is named as such", al_st_to_f32(&bad, out), "hand", "invalid dtype 99", NULL);
  bad = e;
  bad.ndim = 2; bad.shape[0] = (int64_t)1 << 62; bad.shape[1] = 4; bad.nbytes = 0;
  expect_err("safetensors: a shape whose element count wraps to 0 is refused", al_st_to_f32(&bad, out), "overflow", NULL);
  expect_err("safetensors: ... by the int64 conversion too", al_st_to_i64(&bad, iout), "overflow", NULL);
  bad = e;
  bad.ndim = 9;
  expect_err("safetensors: 9 dims are refused (shape[] holds 8)", al_st_to_f32(&bad, out), "ndim 9", NULL);
  bad = e;
  bad.data = NULL;
  expect_err("safetensors: NULL data for 2 values is refused", al_st_to_f32(&bad, out), "no data", NULL);
}

/* Write "<u64 N><header><data>" into a malloc'ed buffer. */
static uint8_t *st_file(const char *header, const void *data, size_t dn, size_t *n) {
  size_t hn = strlen(header);
  uint8_t *b = malloc(8 + hn + dn + 1);
  for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)hn >> (8 * i));
  memcpy(b + 8, header, hn);
  if (dn) memcpy(b + 8 + hn, data, dn);
  *n = 8 + hn + dn;
  return b;
}

/* The integer dtypes the torch fixtures lack (BOOL, I8, I16, U16, U32), each with the values
 * where sign extension and width show: a file written by hand, values worked out by hand. */
static void test_st_int_dtypes(void) {
  const char *hj = "{\"b\":{\"dtype\":\"BOOL\",\"shape\":[2],\"data_offsets\":[0,2]},"
                   "\"i8\":{\"dtype\":\"I8\",\"shape\":[2],\"data_offsets\":[2,4]},"
                   "\"i16\":{\"dtype\":\"I16\",\"shape\":[2],\"data_offsets\":[4,8]},"
                   "\"u16\":{\"dtype\":\"U16\",\"shape\":[2],\"data_offsets\":[8,12]},"
                   "\"u32\":{\"dtype\":\"U32\",\"shape\":[2],\"data_offsets\":[12,20]}}";
  static const uint8_t data[20] = {1, 0,  0xff, 0x80,  0xfe, 0xff, 0x00, 0x80,  0xfe, 0xff, 0x00, 0x80,
                                   0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x80};
  static const struct { const char *name; int64_t v[2]; } want[] = {
    {"b", {1, 0}}, {"i8", {-1, -128}}, {"i16", {-2, -32768}}, {"u16", {65534, 32768}},
    {"u32", {4294967295LL, 2147483648LL}}};
  size_t n;
  uint8_t *b = st_file(hj, data, sizeof data, &n);
  al_st_file *f;
  al_status st = al_st_open_memory(b, n, "ints.st", &f);
  CHECK("safetensors: a hand-written file of BOOL/I8/I16/U16/U32 tensors parses", st == AL_OK && f->n == 5, "%s",
        st ? al_errmsg() : "");
  if (st == AL_OK) {
    int ok = 1;
    char why[200] = "";
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
      const al_st_entry *e = al_st_find(f, want[i].name);
      int64_t out[2] = {7, 7};
      al_status s2 = e ? al_st_to_i64(e, out) : AL_EINVAL;
      if (s2 || e->nbytes != (i == 0 || i == 1 ? 2u : i == 4 ? 8u : 4u) || out[0] != want[i].v[0] ||
          out[1] != want[i].v[1]) {
        ok = 0;
        snprintf(why, sizeof why, "'%s': %" PRId64 ", %" PRId64 " (st=%d)", want[i].name, out[0], out[1], s2);
      }
    }
    CHECK("safetensors: ... and they convert to int64 with their signs and widths", ok, "%s", why);
    al_st_close(f);
  }
  free(b);
}

/* UTF-8 the header must refuse (RFC 3629): an overlong 2-byte form, a surrogate, a code point
 * past U+10FFFF, and a lead byte at the very end of the header (the data after it looks like a
 * continuation byte, which must not be read as one). */
static void test_st_utf8(void) {
  static const struct { const char *what, *hdr; size_t at; } bad[] = {
    {"an overlong encoding (C0 80)", "{\"\xc0\x80\":{}}", 2},
    {"a UTF-16 surrogate (ED A0 80)", "{\"\xed\xa0\x80\":{}}", 2},
    {"a code point past U+10FFFF (F4 90 80 80)", "{\"\xf4\x90\x80\x80\":{}}", 2},
    {"a lead byte cut off by the end of the header", "{}     \xc3", 7},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    size_t n;
    static const uint8_t cont[2] = {0xa9, 0xa9};
    uint8_t *b = st_file(bad[i].hdr, cont, sizeof cont, &n);
    al_st_file *f;
    char nm[160], at[40];
    snprintf(nm, sizeof nm, "safetensors: header UTF-8: rejects %s", bad[i].what);
    snprintf(at, sizeof at, "not valid UTF-8 (byte %zu)", bad[i].at);
    expect_err(nm, al_st_open_memory(b, n, "utf8.st", &f), "utf8.st", at, NULL);
    free(b);
  }
  /* a valid 4-byte character (U+1F600) and 8 dims, the most a shape may have */
  const char *hj = "{\"\xf0\x9f\x98\x80\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,2],\"data_offsets\":[0,2]}}";
  size_t n;
  uint8_t *b = st_file(hj, "ab", 2, &n);
  al_st_file *f;
  al_status st = al_st_open_memory(b, n, "ok8.st", &f);
  CHECK("safetensors: a 4-byte UTF-8 name and a shape of 8 dims are read",
        st == AL_OK && f->n == 1 && f->entries[0].ndim == 8 && f->entries[0].shape[7] == 2 &&
        !strcmp(f->entries[0].name, "\xf0\x9f\x98\x80"), "%s", st ? al_errmsg() : "");
  if (st == AL_OK) al_st_close(f);
  free(b);
}

/* Control characters other than the named escapes are written \u00xx with lowercase hex, as
 * serde_json (the reference writer) does: the header bytes written out by hand. */
static void test_st_write_escapes(void) {
  al_st_meta m = {"k\x01", "v\x1f\"\\"};
  void *w = NULL;
  size_t wn = 0;
  al_status st = al_st_write_memory(NULL, 0, &m, 1, &w, &wn);
  const char *want = "{\"__metadata__\":{\"k\\u0001\":\"v\\u001f\\\"\\\\\"}}      ";   /* 42 bytes + 6 spaces: 8 + 48 */
  size_t hl = strlen(want);
  int ok = st == AL_OK && wn == 8 + hl && ((uint8_t *)w)[0] == hl && memcmp((uint8_t *)w + 8, want, hl) == 0;
  CHECK("safetensors: writer escapes \\x01 and \\x1f as \\u0001 and \\u001f (lowercase, as serde_json)", ok,
        "st=%d size %zu: %.*s", st, wn, (int)(wn > 8 ? wn - 8 : 0), w ? (char *)w + 8 : "");
  if (w) al_free(w, wn);
}

/* Headers other writers produce: JSON whitespace (tab, CR, LF) between tokens, "__metadata__":
 * null, an escaped backslash before the text u0000 with no escaped quote earlier in the header
 * (a lexer that did not skip the escaped character would take "\u0000" for a NUL escape), and
 * F16 NaNs whose payload float32 must keep (h = 0x7E01: mantissa 0x201 -> 0x201 << 13, so
 * 0x7FC02000; signalling h = 0x7C01 -> 0x7F802000). */
static void test_st_other_writers(void) {
  const char *hj = "{\n\t\"__metadata__\": null,\r\n\t\"h\": {\"dtype\": \"F16\", \"shape\": [2], \"data_offsets\": [0, 4]},"
                   "\n\t\"m\": {\"dtype\": \"U8\", \"shape\": [0], \"data_offsets\": [4, 4], \"x\": \"\\\\u0000\"}\n}";
  static const uint8_t data[4] = {0x01, 0x7e, 0x01, 0x7c};
  size_t n;
  uint8_t *b = st_file(hj, data, sizeof data, &n);
  al_st_file *f;
  al_status st = al_st_open_memory(b, n, "pretty.st", &f);
  CHECK("safetensors: a pretty-printed header with \"__metadata__\": null and an escaped backslash parses",
        st == AL_OK && f->n == 2 && f->nmeta == 0, "%s", st ? al_errmsg() : "");
  if (st == AL_OK) {
    float out[2];
    uint32_t bits[2] = {0, 0};
    st = al_st_to_f32(al_st_find(f, "h"), out);
    memcpy(bits, out, sizeof bits);
    CHECK("safetensors: F16 NaNs keep their payload in float32 (0x7E01 -> 0x7FC02000, 0x7C01 -> 0x7F802000)",
          st == AL_OK && bits[0] == 0x7FC02000u && bits[1] == 0x7F802000u, "0x%08x 0x%08x", bits[0], bits[1]);
    al_st_close(f);
  }
  free(b);
  /* a metadata key given twice in the file (the writer refuses to write one) */
  b = st_file("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", NULL, 0, &n);
  expect_err("safetensors: rejects a metadata key given twice", al_st_open_memory(b, n, "dupmeta.st", &f), "dupmeta.st",
             "duplicate __metadata__ key 'k'", NULL);
  free(b);
  /* the writer checks metadata keys and values for UTF-8 */
  void *w = NULL;
  size_t wn;
  al_st_meta bk = {"k\xff", "v"}, bv = {"k", "v\xc3"};
  al_status st2 = al_st_write_memory(NULL, 0, &bk, 1, &w, &wn);   /* (the message quotes the bad key: not printed) */
  CHECK("safetensors: write rejects a metadata key that is not UTF-8", st2 == AL_EINVAL && strstr(al_errmsg(), "is not UTF-8"),
        "st=%d", st2);
  expect_err("safetensors: write rejects a metadata value that is not UTF-8", al_st_write_memory(NULL, 0, &bv, 1, &w, &wn),
             "metadata 'k' is not UTF-8", NULL);
}

int main(void) {
  if (!io_begin("test_io_safetensors")) return 1;
  test_st_ref();
  test_st_malformed();
  test_st_hand_entries();
  test_st_int_dtypes();
  test_st_utf8();
  test_st_write_escapes();
  test_st_other_writers();
  io_end(0);
  CHECK_EXIT();
}
