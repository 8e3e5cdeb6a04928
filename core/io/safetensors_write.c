/* core/io/safetensors_write.c -- safetensors writer, to a file (atomically) or to memory.
 *
 * It reproduces the reference serializer's layout (dtype-descending then name order,
 * compact JSON, space padding to a multiple of 8), so files are byte-identical to what the
 * Python library writes, except that metadata keys are sorted (the reference emits them in
 * hash order). Entries are validated as the reader would validate the result
 * (core/io/safetensors_read.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/io.h"
#include "internal.h"
#include "../util/need.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "core/io/safetensors_write.c assumes a little-endian host (safetensors data are little-endian)"
#endif

/* ---------------------------------------------------------------------------------------
 * Writer. */

typedef struct { char *p; size_t len, cap; int oom; } sbuf;

static void sb_put(sbuf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->len + n > b->cap) {
    size_t nc = b->cap ? b->cap : 1024;
    while (nc < b->len + n) nc *= 2;
    char *q = realloc(b->p, nc);
    if (!q) { b->oom = 1; return; }
    b->p = q;
    b->cap = nc;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
}
static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

/* A JSON string as serde_json writes it: \" \\ \b \f \n \r \t, other controls \u00xx. */
static void sb_json(sbuf *b, const char *s) {
  sb_put(b, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    char esc[8];
    switch (*p) {
      case '"': sb_put(b, "\\\"", 2); break;
      case '\\': sb_put(b, "\\\\", 2); break;
      case '\b': sb_put(b, "\\b", 2); break;
      case '\f': sb_put(b, "\\f", 2); break;
      case '\n': sb_put(b, "\\n", 2); break;
      case '\r': sb_put(b, "\\r", 2); break;
      case '\t': sb_put(b, "\\t", 2); break;
      default:
        if (*p < 0x20) { snprintf(esc, sizeof esc, "\\u%04x", *p); sb_put(b, esc, 6); }
        else sb_put(b, (const char *)p, 1);
    }
  }
  sb_put(b, "\"", 1);
}

/* Layout order: decreasing dtype, then name (bytewise), as the reference serializer. */
static int cmp_layout(const void *a, const void *b) {
  const al_st_entry *x = *(const al_st_entry *const *)a, *y = *(const al_st_entry *const *)b;
  if (x->dtype != y->dtype) return x->dtype > y->dtype ? -1 : 1;
  return strcmp(x->name, y->name);
}
static int cmp_ent_name(const void *a, const void *b) {
  return strcmp((*(const al_st_entry *const *)a)->name, (*(const al_st_entry *const *)b)->name);
}
static int cmp_meta_key(const void *a, const void *b) {
  return strcmp((*(const al_st_meta *const *)a)->key, (*(const al_st_meta *const *)b)->key);
}

/* Validate and build the padded header; *order gets the data layout order. */
static al_status build_header(const char *nm, const al_st_entry *E, int n, const al_st_meta *M,
                              int nmeta, sbuf *hb, const al_st_entry ***orderp) {
  *orderp = NULL;
  if (n < 0 || nmeta < 0 || (n && !E) || (nmeta && !M))
    return al_seterr(AL_EINVAL, "%s: safetensors write: bad counts (n=%d, nmeta=%d)", nm, n, nmeta);
  for (int i = 0; i < n; i++) {
    const al_st_entry *e = &E[i];
    if (!e->name)   /* "" is a valid (if odd) name, as in the reference */
      return al_seterr(AL_EINVAL, "%s: safetensors write: entry %d has no name", nm, i);
    if (strcmp(e->name, "__metadata__") == 0)
      return al_seterr(AL_EINVAL, "%s: safetensors write: a tensor may not be named __metadata__", nm);
    if (al_st_utf8_check_((const uint8_t *)e->name, strlen(e->name)) != strlen(e->name))
      return al_seterr(AL_EINVAL, "%s: safetensors write: tensor name of entry %d is not UTF-8", nm, i);
    int64_t numel;
    al_status st = al_st_entry_check_(nm, "safetensors write: ", e, &numel);
    if (st) return st;
  }
  for (int i = 0; i < nmeta; i++) {
    if (!M[i].key || !M[i].value)
      return al_seterr(AL_EINVAL, "%s: safetensors write: metadata pair %d has a NULL key or value", nm, i);
    if (al_st_utf8_check_((const uint8_t *)M[i].key, strlen(M[i].key)) != strlen(M[i].key) ||
        al_st_utf8_check_((const uint8_t *)M[i].value, strlen(M[i].value)) != strlen(M[i].value))
      return al_seterr(AL_EINVAL, "%s: safetensors write: metadata '%s' is not UTF-8", nm, M[i].key);
  }
  const al_st_entry **order = malloc(((size_t)n + 1) * sizeof *order);
  const al_st_meta **morder = malloc(((size_t)nmeta + 1) * sizeof *morder);
  if (!order || !morder) {
    free(order);
    free(morder);
    return al_seterr(AL_ENOMEM, "%s: out of memory", nm);
  }
  for (int i = 0; i < n; i++) order[i] = &E[i];
  qsort(order, (size_t)n, sizeof *order, cmp_ent_name);
  for (int i = 1; i < n; i++)
    if (strcmp(order[i - 1]->name, order[i]->name) == 0) {
      al_status st = al_seterr(AL_EINVAL, "%s: safetensors write: duplicate tensor name '%s'",
                               nm, order[i]->name);
      free(order);
      free(morder);
      return st;
    }
  qsort(order, (size_t)n, sizeof *order, cmp_layout);
  for (int i = 0; i < nmeta; i++) morder[i] = &M[i];
  qsort(morder, (size_t)nmeta, sizeof *morder, cmp_meta_key);
  for (int i = 1; i < nmeta; i++)
    if (strcmp(morder[i - 1]->key, morder[i]->key) == 0) {
      al_status st = al_seterr(AL_EINVAL, "%s: safetensors write: duplicate metadata key '%s'",
                               nm, morder[i]->key);
      free(order);
      free(morder);
      return st;
    }
  sb_str(hb, "{");
  if (nmeta) {
    sb_str(hb, "\"__metadata__\":{");
    for (int i = 0; i < nmeta; i++) {
      if (i) sb_str(hb, ",");
      sb_json(hb, morder[i]->key);
      sb_str(hb, ":");
      sb_json(hb, morder[i]->value);
    }
    sb_str(hb, "}");
    if (n) sb_str(hb, ",");
  }
  uint64_t off = 0;
  char num[64];
  for (int i = 0; i < n; i++) {
    const al_st_entry *e = order[i];
    if (i) sb_str(hb, ",");
    sb_json(hb, e->name);
    sb_str(hb, ":{\"dtype\":\"");
    sb_str(hb, al_st_dtype_name(e->dtype));
    sb_str(hb, "\",\"shape\":[");
    for (int d = 0; d < e->ndim; d++) {
      snprintf(num, sizeof num, d ? ",%" PRId64 : "%" PRId64, e->shape[d]);
      sb_str(hb, num);
    }
    snprintf(num, sizeof num, "],\"data_offsets\":[%" PRIu64 ",%" PRIu64 "]}", off,
             off + (uint64_t)e->nbytes);
    sb_str(hb, num);
    off += e->nbytes;
  }
  sb_str(hb, "}");
  while (hb->len % 8) sb_put(hb, " ", 1);   /* 8 + N is then a multiple of 8 */
  free(morder);
  if (hb->oom) { free(order); return al_seterr(AL_ENOMEM, "%s: out of memory", nm); }
  if (hb->len > AL_ST_MAX_HEADER) {
    free(order);
    return al_seterr(AL_EINVAL, "%s: safetensors write: header of %zu bytes is over the "
                     "100,000,000-byte limit", nm, hb->len);
  }
  *orderp = order;
  return AL_OK;
}

static void put_u64le(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

al_status al_st_write(const char *path, const al_st_entry *entries, int n,
                      const al_st_meta *meta, int nmeta) {
  sbuf hb = {0};
  const al_st_entry **order;
  al_status st = build_header(path, entries, n, meta, nmeta, &hb, &order);
  if (st) { free(hb.p); return st; }
  al_afile *a;
  st = al_afile_open(path, &a);
  if (st == AL_OK) {
    uint8_t len8[8];
    put_u64le(len8, hb.len);
    st = al_afile_write(a, len8, 8);
    if (st == AL_OK) st = al_afile_write(a, hb.p, hb.len);
    for (int i = 0; i < n && st == AL_OK; i++)
      st = al_afile_write(a, order[i]->data, order[i]->nbytes);
    if (st == AL_OK) st = al_afile_commit(a);
    else al_afile_abort(a);
  }
  free(order);
  free(hb.p);
  return st;
}

al_status al_st_write_memory(const al_st_entry *entries, int n, const al_st_meta *meta,
                             int nmeta, void **data, size_t *size) {
  AL_NEED(data, "al_st_write_memory", "data"); AL_NEED(size, "al_st_write_memory", "size");
  *data = NULL;
  *size = 0;
  sbuf hb = {0};
  const al_st_entry **order;
  al_status st = build_header("<memory>", entries, n, meta, nmeta, &hb, &order);
  if (st) { free(hb.p); return st; }
  size_t total = 8 + hb.len;
  for (int i = 0; i < n; i++) total += entries[i].nbytes;
  uint8_t *out = al_malloc(total);
  if (!out) {
    free(order);
    free(hb.p);
    return al_seterr(AL_ENOMEM, "<memory>: out of memory for %zu bytes", total);
  }
  put_u64le(out, hb.len);
  memcpy(out + 8, hb.p, hb.len);
  size_t at = 8 + hb.len;
  for (int i = 0; i < n; i++) {
    const al_st_entry *e = order[i];
    if (e->nbytes) memcpy(out + at, e->data, e->nbytes);
    at += e->nbytes;
  }
  free(order);
  free(hb.p);
  *data = out;
  *size = total;
  return AL_OK;
}
