/* core/io/safetensors_read.c -- safetensors reader: header parsing and validation,
 * the dtype table, lookup, and the converters to float32 and int64. The writer is
 * core/io/safetensors_write.c.
 *
 * Pure C11 + cJSON. Format: huggingface/safetensors README ("Format") and the rules its
 * reference reader enforces: u64 LE header size N <= 100,000,000; the header is UTF-8 JSON
 * starting with '{'; tensors {"dtype","shape","data_offsets"}; sorted by offset the
 * ranges tile the byte buffer exactly, each range's size is prod(shape) * dtype size,
 * and the buffer ends at the end of the file.
 *
 * cJSON reads numbers as doubles: offsets and dims are accepted only when they are
 * integers no larger than 2^53, which covers every file that can exist. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "attnlab/io.h"
#include "internal.h"
#include "../util/need.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "core/io/safetensors_read.c assumes a little-endian host (safetensors data are little-endian)"
#endif

static const char *const DT_NAME[AL_ST_NDTYPE] = {
  "BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "F16", "BF16", "I32", "U32",
  "F32", "F64", "I64", "U64"};
static const unsigned char DT_SIZE[AL_ST_NDTYPE] = {1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 8, 8, 8};

size_t al_st_dtype_size(al_st_dtype dt) {
  return (unsigned)dt < AL_ST_NDTYPE ? DT_SIZE[dt] : 0;
}
const char *al_st_dtype_name(al_st_dtype dt) {
  return (unsigned)dt < AL_ST_NDTYPE ? DT_NAME[dt] : "?";
}
int al_st_dtype_from_name(const char *s) {
  for (int i = 0; s && i < AL_ST_NDTYPE; i++)
    if (strcmp(s, DT_NAME[i]) == 0) return i;
  return -1;
}

int64_t al_st_numel(const al_st_entry *e) {
  int64_t n = 1;
  for (int i = 0; i < e->ndim; i++) n *= e->shape[i];
  return n;
}

/* The writer checks every entry with it, and the conversions an entry made by hand
 * (core/io/internal.h). The element count is bounded by INT64_MAX / element size, so that both
 * the count (int64) and the byte count (size_t) fit. */
al_status al_st_entry_check_(const char *file, const char *what, const al_st_entry *e, int64_t *numel) {
  size_t es = al_st_dtype_size(e->dtype);
  if (!es) return al_seterr(AL_EINVAL, "%s: %stensor '%s' has invalid dtype %d", file, what, e->name, (int)e->dtype);
  if (e->ndim < 0 || e->ndim > AL_ST_MAXDIM)
    return al_seterr(AL_EINVAL, "%s: %stensor '%s' has ndim %d (0..%d)", file, what, e->name, e->ndim, AL_ST_MAXDIM);
  uint64_t n = 1;
  for (int d = 0; d < e->ndim; d++) {
    if (e->shape[d] < 0)
      return al_seterr(AL_EINVAL, "%s: %stensor '%s' has shape[%d] = %" PRId64, file, what, e->name, d, e->shape[d]);
    uint64_t v = (uint64_t)e->shape[d];
    if (v && n > (uint64_t)INT64_MAX / es / v)
      return al_seterr(AL_EINVAL, "%s: %stensor '%s': shape overflows", file, what, e->name);
    n *= v;
  }
  if (n * es != e->nbytes) {
    char sh[200];
    al_st_shape_str_(sh, sizeof sh, e->ndim, e->shape);
    return al_seterr(AL_EINVAL, "%s: %stensor '%s': %zu bytes given, %s x shape %s needs %" PRIu64, file, what,
                     e->name, e->nbytes, al_st_dtype_name(e->dtype), sh, n * es);
  }
  if (e->nbytes && !e->data) return al_seterr(AL_EINVAL, "%s: %stensor '%s' has no data", file, what, e->name);
  *numel = (int64_t)n;
  return AL_OK;
}

/* The writer validates names and metadata with it too (core/io/internal.h). */
size_t al_st_utf8_check_(const uint8_t *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint8_t c = s[i];
    if (c < 0x80) { i++; continue; }
    size_t len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
    else return i;
    if (n - i < len) return i;
    for (size_t k = 1; k < len; k++) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
      cp = cp << 6 | (s[i + k] & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
      return i;
    i += len;
  }
  return n;
}

static const char *json_kind(const cJSON *v) {
  if (cJSON_IsString(v)) return "a string";
  if (cJSON_IsNumber(v)) return "a number";
  if (cJSON_IsObject(v)) return "an object";
  if (cJSON_IsArray(v)) return "an array";
  if (cJSON_IsBool(v)) return "a boolean";
  if (cJSON_IsNull(v)) return "null";
  return "invalid JSON";
}

/* A JSON number that is an integer in [0, 2^53]. */
static int json_u53(const cJSON *v, uint64_t *out) {
  if (!cJSON_IsNumber(v)) return 0;
  double d = v->valuedouble;
  if (!(d >= 0) || d > 9007199254740992.0 || d != floor(d)) return 0;
  *out = (uint64_t)d;
  return 1;
}

/* Why json_u53 refused v, for messages. */
static const char *u53_why(const cJSON *v) {
  if (!cJSON_IsNumber(v)) return "not a number";
  double d = v->valuedouble;
  if (d != d) return "not a number";
  if (d < 0) return "negative";
  if (d > 9007199254740992.0) return "too large (above 2^53, beyond any file this reader accepts)";
  return "not an integer";
}

typedef struct {
  const char *name;       /* in the cJSON tree while parsing */
  int dtype, ndim;
  int64_t shape[AL_ST_MAXDIM];
  uint64_t begin, end, nbytes;
} pentry;

static int cmp_pentry_name(const void *a, const void *b) {
  return strcmp(((const pentry *)a)->name, ((const pentry *)b)->name);
}
static int cmp_pentry_off(const void *a, const void *b) {
  const pentry *x = *(pentry *const *)a, *y = *(pentry *const *)b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return 0;
}
static int cmp_meta(const void *a, const void *b) {
  return strcmp(((const al_st_meta *)a)->key, ((const al_st_meta *)b)->key);
}

/* Shared with the writer (core/io/internal.h). */
void al_st_shape_str_(char *buf, size_t cap, int ndim, const int64_t *s) {
  size_t k = (size_t)snprintf(buf, cap, "[");
  for (int i = 0; i < ndim && k < cap; i++)
    k += (size_t)snprintf(buf + k, cap - k, i ? ", %" PRId64 : "%" PRId64, s[i]);
  if (k < cap) snprintf(buf + k, cap - k, "]");
}

/* Parse one tensor description. */
static al_status parse_entry(const char *nm, const cJSON *item, pentry *e) {
  const char *tn = item->string;
  if (!cJSON_IsObject(item))
    return al_seterr(AL_EFORMAT, "%s: tensor '%s': want an object {dtype, shape, data_offsets}, "
                     "got %s", nm, tn, json_kind(item));
  /* unknown fields are ignored (as the reference does); repeated ones are an error */
  int seen[3] = {0, 0, 0};
  const cJSON *fld;
  cJSON_ArrayForEach(fld, item) {
    int k = !strcmp(fld->string, "dtype") ? 0 : !strcmp(fld->string, "shape") ? 1
          : !strcmp(fld->string, "data_offsets") ? 2 : -1;
    if (k >= 0 && seen[k]++)
      return al_seterr(AL_EFORMAT, "%s: tensor '%s': duplicate field \"%s\"", nm, tn, fld->string);
  }
  const cJSON *dt = cJSON_GetObjectItemCaseSensitive(item, "dtype");
  const cJSON *sh = cJSON_GetObjectItemCaseSensitive(item, "shape");
  const cJSON *off = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
  if (!dt || !sh || !off)
    return al_seterr(AL_EFORMAT, "%s: tensor '%s': missing \"%s\"", nm, tn,
                     !dt ? "dtype" : !sh ? "shape" : "data_offsets");
  if (!cJSON_IsString(dt))
    return al_seterr(AL_EFORMAT, "%s: tensor '%s': dtype is %s, want a string", nm, tn,
                     json_kind(dt));
  e->dtype = al_st_dtype_from_name(dt->valuestring);
  if (e->dtype < 0)
    return al_seterr(AL_EFORMAT, "%s: tensor '%s': unknown dtype \"%.32s\"", nm, tn, dt->valuestring);
  if (!cJSON_IsArray(sh))
    return al_seterr(AL_EFORMAT, "%s: tensor '%s': shape is %s, want an array", nm, tn,
                     json_kind(sh));
  int nd = cJSON_GetArraySize(sh);
  if (nd > AL_ST_MAXDIM)
    return al_seterr(AL_EFORMAT, "%s: tensor '%s': shape has %d dims, at most %d supported", nm,
                     tn, nd, AL_ST_MAXDIM);
  e->ndim = nd;
  uint64_t numel = 1, span = 1;   /* span: the product of the nonzero sizes */
  int overflow = 0, too_large = 0, i = 0;
  const cJSON *d;
  cJSON_ArrayForEach(d, sh) {
    uint64_t v;
    if (!json_u53(d, &v))
      return al_seterr(AL_EFORMAT, "%s: tensor '%s': shape[%d] is not a non-negative integer (%s)",
                       nm, tn, i, u53_why(d));
    e->shape[i++] = (int64_t)v;
    if (v && numel > UINT64_MAX / v) overflow = 1;
    else numel *= v;
    if (v && span > (uint64_t)AL_MAX_SPAN / v) too_large = 1;
    else if (v) span *= v;
  }
  uint64_t esz = DT_SIZE[e->dtype];
  if (overflow || numel > UINT64_MAX / esz) {
    char s[200];
    al_st_shape_str_(s, sizeof s, e->ndim, e->shape);
    return al_seterr(AL_EFORMAT, "%s: tensor '%s': shape %s x %s overflows the byte count", nm,
                     tn, s, DT_NAME[e->dtype]);
  }
  /* an empty tensor's other sizes too: (0, 2^40, 2^40) holds no byte, but a tensor of that
   * shape has strides past int64 (AL_MAX_SPAN); refused here, naming the file */
  if (too_large) {
    char s[200];
    al_st_shape_str_(s, sizeof s, e->ndim, e->shape);
    return al_seterr(AL_EFORMAT, "%s: tensor '%s': shape %s is too large (its nonzero sizes multiply past "
                     "2^60 elements)", nm, tn, s);
  }
  e->nbytes = numel * esz;
  if (!cJSON_IsArray(off) || cJSON_GetArraySize(off) != 2)
    return al_seterr(AL_EFORMAT, "%s: tensor '%s': data_offsets must be [begin, end] with "
                     "non-negative integers", nm, tn);
  for (int k = 0; k < 2; k++) {
    const cJSON *o = k ? off->child->next : off->child;
    if (!json_u53(o, k ? &e->end : &e->begin)) {
      char val[64] = "";
      if (cJSON_IsNumber(o)) {
        double dv = o->valuedouble;
        snprintf(val, sizeof val, dv == floor(dv) && fabs(dv) < 1e19 ? " %.0f" : " %g", dv);
      }
      return al_seterr(AL_EFORMAT, "%s: tensor '%s': data_offsets %s%s is %s", nm, tn, k ? "end" : "begin",
                       val, u53_why(o));
    }
  }
  if (e->end < e->begin)
    return al_seterr(AL_EFORMAT, "%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] end "
                     "before they begin", nm, tn, e->begin, e->end);
  if (e->end - e->begin != e->nbytes) {
    char s[200];
    al_st_shape_str_(s, sizeof s, e->ndim, e->shape);
    return al_seterr(AL_EFORMAT, "%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] hold "
                     "%" PRIu64 " bytes but %s x shape %s needs %" PRIu64, nm, tn, e->begin,
                     e->end, e->end - e->begin, DT_NAME[e->dtype], s, e->nbytes);
  }
  return AL_OK;
}

static al_status parse(const uint8_t *data, size_t size, const char *nm, al_st_file **out,
                       cJSON **rootp, pentry **pep, pentry ***byoffp) {
  if (size < 8)
    return al_seterr(AL_EFORMAT, "%s: %zu bytes: a safetensors file starts with an 8-byte "
                     "header size", nm, size);
  uint64_t N = 0;
  for (int i = 7; i >= 0; i--) N = N << 8 | data[i];
  if (N > AL_ST_MAX_HEADER)
    return al_seterr(AL_EFORMAT, "%s: header size %" PRIu64 " is over the 100,000,000-byte "
                     "limit: not a safetensors file?", nm, N);
  if (N > size - 8)
    return al_seterr(AL_EIO, "%s: truncated: the header size says %" PRIu64 " bytes, the file "
                     "has %zu after the first 8", nm, N, size - 8);
  const uint8_t *h = data + 8;
  if (N == 0 || h[0] != '{')
    return al_seterr(AL_EFORMAT, "%s: the JSON header does not start with '{'%s", nm,
                     N == 0 ? " (it is empty)" : "");
  size_t bad = al_st_utf8_check_(h, (size_t)N);
  if (bad != N)
    return al_seterr(AL_EFORMAT, "%s: the header is not valid UTF-8 (byte %zu)", nm, bad);
  for (size_t i = 0; i < N; i++)   /* raw control characters are never valid JSON */
    if (h[i] < 0x20 && h[i] != '\t' && h[i] != '\n' && h[i] != '\r')
      return al_seterr(AL_EFORMAT, "%s: the header has a control byte 0x%02x at %zu: not valid "
                       "JSON", nm, h[i], i);
  /* cJSON decodes "\u0000" into a NUL that ends the C string early, so "a\u0000b" would
   * silently become "a": refuse U+0000 in strings up front (a lexer over the strings). */
  for (size_t i = 0, in_str = 0; i < N; i++) {
    if (!in_str) { in_str = h[i] == '"'; continue; }
    if (h[i] == '"') { in_str = 0; continue; }
    if (h[i] != '\\' || i + 1 >= N) continue;
    if (h[i + 1] == 'u' && i + 5 < N && h[i + 2] == '0' && h[i + 3] == '0' && h[i + 4] == '0' &&
        h[i + 5] == '0')
      return al_seterr(AL_EFORMAT, "%s: the header has a \\u0000 escape at byte %zu: names and "
                       "metadata containing NUL are not supported", nm, i);
    i++;   /* skip the escaped character ("\\" or "\"" must not end or start anything) */
  }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts((const char *)h, (size_t)N, &end, 0);
  *rootp = root;
  if (!root) {
    size_t at = end && end >= (const char *)h && end <= (const char *)h + N ? (size_t)(end - (const char *)h) : 0;
    size_t show = N - at < 24 ? (size_t)(N - at) : 24;
    return al_seterr(AL_EFORMAT, "%s: the header is not valid JSON (near byte %zu: \"%.*s\")",
                     nm, at, (int)show, (const char *)h + at);
  }
  for (const char *p = end; p < (const char *)h + N; p++)
    if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
      return al_seterr(AL_EFORMAT, "%s: the header has text after its JSON object (byte %zu)",
                       nm, (size_t)(p - (const char *)h));
  if (!cJSON_IsObject(root))
    return al_seterr(AL_EFORMAT, "%s: the header is JSON %s, want an object", nm, json_kind(root));

  /* Count and size everything, then one arena holds the file struct, entries, metadata
   * and copies of all strings. */
  int n = 0, nmeta = 0, nmetaobj = 0;
  size_t strbytes = strlen(nm) + 1;
  const cJSON *metaobj = NULL, *it;
  cJSON_ArrayForEach(it, root) {
    if (strcmp(it->string, "__metadata__") == 0) {
      if (nmetaobj++)
        return al_seterr(AL_EFORMAT, "%s: duplicate \"__metadata__\" in the header", nm);
      if (cJSON_IsNull(it)) continue;
      if (!cJSON_IsObject(it))
        return al_seterr(AL_EFORMAT, "%s: __metadata__ is %s, want an object of strings", nm,
                         json_kind(it));
      metaobj = it;
      const cJSON *m;
      cJSON_ArrayForEach(m, it) {
        if (!cJSON_IsString(m))
          return al_seterr(AL_EFORMAT, "%s: __metadata__ \"%.64s\" is %s, want a string", nm,
                           m->string, json_kind(m));
        strbytes += strlen(m->string) + strlen(m->valuestring) + 2;
        nmeta++;
      }
    } else {
      strbytes += strlen(it->string) + 1;
      n++;
    }
  }
  pentry *pe = calloc((size_t)n + 1, sizeof *pe);
  pentry **byoff = calloc((size_t)n + 1, sizeof *byoff);
  *pep = pe;
  *byoffp = byoff;
  if (!pe || !byoff) return al_seterr(AL_ENOMEM, "%s: out of memory", nm);
  int k = 0;
  cJSON_ArrayForEach(it, root) {
    if (strcmp(it->string, "__metadata__") == 0) continue;
    pe[k].name = it->string;
    al_status st = parse_entry(nm, it, &pe[k]);
    if (st) return st;
    k++;
  }
  qsort(pe, (size_t)n, sizeof *pe, cmp_pentry_name);
  for (int i = 1; i < n; i++)
    if (strcmp(pe[i - 1].name, pe[i].name) == 0)
      return al_seterr(AL_EFORMAT, "%s: duplicate tensor name '%s' in the header", nm, pe[i].name);
  /* The ranges, sorted by offset, must tile [0, buffer size) exactly. */
  uint64_t bufsize = size - 8 - N;
  for (int i = 0; i < n; i++) byoff[i] = &pe[i];
  qsort(byoff, (size_t)n, sizeof *byoff, cmp_pentry_off);
  uint64_t at = 0;
  for (int i = 0; i < n; i++) {
    const pentry *e = byoff[i];
    if (e->begin < at)
      return al_seterr(AL_EFORMAT, "%s: tensor '%s' data_offsets [%" PRIu64 ", %" PRIu64 "] "
                       "overlap tensor '%s' [%" PRIu64 ", %" PRIu64 "]", nm, e->name, e->begin,
                       e->end, byoff[i - 1]->name, byoff[i - 1]->begin, byoff[i - 1]->end);
    if (e->begin > at)
      return al_seterr(AL_EFORMAT, "%s: bytes [%" PRIu64 ", %" PRIu64 ") of the data buffer "
                       "belong to no tensor (a gap before '%s')", nm, at, e->begin, e->name);
    at = e->end;
  }
  if (at > bufsize)
    return al_seterr(AL_EIO, "%s: truncated: the tensors need %" PRIu64 " bytes of data after the "
                     "header, the file has %" PRIu64, nm, at, bufsize);
  if (at < bufsize)
    return al_seterr(AL_EFORMAT, "%s: %" PRIu64 " trailing bytes after the last tensor's data "
                     "(tensors end at %" PRIu64 ", the data buffer has %" PRIu64 ")", nm,
                     bufsize - at, at, bufsize);

  size_t arena = sizeof(al_st_file) + (size_t)n * sizeof(al_st_entry) +
                 (size_t)nmeta * sizeof(al_st_meta) + strbytes;
  uint8_t *mem = al_malloc(arena);
  if (!mem) return al_seterr(AL_ENOMEM, "%s: out of memory", nm);
  memset(mem, 0, arena);
  al_st_file *f = (al_st_file *)mem;
  f->entries = (al_st_entry *)(mem + sizeof *f);
  f->meta = (al_st_meta *)(f->entries + n);
  char *s = (char *)(f->meta + nmeta);
  f->arena_size_ = arena;
  f->n = n;
  f->nmeta = nmeta;
  f->header_size = N;
#define COPYSTR(dst, src) do { size_t l_ = strlen(src) + 1; memcpy(s, src, l_); dst = s; s += l_; } while (0)
  COPYSTR(f->name, nm);
  const uint8_t *buf = h + N;
  for (int i = 0; i < n; i++) {
    al_st_entry *e = &f->entries[i];
    COPYSTR(e->name, pe[i].name);
    e->dtype = (al_st_dtype)pe[i].dtype;
    e->ndim = pe[i].ndim;
    memcpy(e->shape, pe[i].shape, sizeof e->shape);
    e->data = buf + pe[i].begin;
    e->nbytes = (size_t)pe[i].nbytes;
    e->file = f->name;   /* so that a conversion's error names the file, as the parser's do */
  }
  if (metaobj) {
    int j = 0;
    cJSON_ArrayForEach(it, metaobj) {
      COPYSTR(f->meta[j].key, it->string);
      COPYSTR(f->meta[j].value, it->valuestring);
      j++;
    }
  }
#undef COPYSTR
  qsort(f->meta, (size_t)nmeta, sizeof *f->meta, cmp_meta);
  for (int i = 1; i < nmeta; i++)
    if (strcmp(f->meta[i - 1].key, f->meta[i].key) == 0) {
      al_status st = al_seterr(AL_EFORMAT, "%s: duplicate __metadata__ key '%s'", nm, f->meta[i].key);
      al_free(mem, arena);
      return st;
    }
  *out = f;
  return AL_OK;
}

al_status al_st_open_memory(const void *data, size_t size, const char *name, al_st_file **out) {
  AL_NEED(out, "al_st_open_memory", "out");
  *out = NULL;
  if (!name) name = "<memory>";
  if (!data && size) return al_seterr(AL_EINVAL, "%s: data is NULL with size %zu", name, size);
  cJSON *root = NULL;
  pentry *pe = NULL, **byoff = NULL;
  al_status st = parse(data, size, name, out, &root, &pe, &byoff);
  cJSON_Delete(root);
  free(pe);
  free(byoff);
  if (st == AL_OK) {
    (*out)->buf_ = (void *)data;
    (*out)->size_ = size;
  }
  return st;
}

al_status al_st_open(const char *path, al_st_file **out) {
  AL_NEED(out, "al_st_open", "out");
  *out = NULL;
  void *buf;
  size_t size;
  al_status st = al_read_file(path, 0, &buf, &size);
  if (st) return st;
  st = al_st_open_memory(buf, size, path, out);
  if (st) { al_free(buf, size); return st; }
  (*out)->owns_ = 1;
  return AL_OK;
}

void al_st_close(al_st_file *f) {
  if (!f) return;
  if (f->owns_) al_free(f->buf_, f->size_);
  al_free(f, f->arena_size_);
}

const al_st_entry *al_st_find(const al_st_file *f, const char *name) {
  int lo = 0, hi = f->n - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    int c = strcmp(f->entries[mid].name, name);
    if (c == 0) return &f->entries[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return NULL;
}

const char *al_st_meta_get(const al_st_file *f, const char *key) {
  for (int i = 0; i < f->nmeta; i++)
    if (strcmp(f->meta[i].key, key) == 0) return f->meta[i].value;
  return NULL;
}

/* ---------------------------------------------------------------------------------------
 * Converters. Data may be unaligned (foreign writers do not pad headers): memcpy. */

/* IEEE binary16 -> binary32, exact (subnormals normalised; Inf/NaN keep their payload). */
static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu, bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {   /* value = man * 2^-24: shift the leading 1 up to bit 10 */
      int e = -1;
      do { e++; man <<= 1; } while (!(man & 0x400u));
      bits = sign | (uint32_t)(112 - e) << 23 | (man & 0x3FFu) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7F800000u | man << 13;
  } else {
    bits = sign | (exp + 112) << 23 | man << 13;
  }
  float x;
  memcpy(&x, &bits, 4);
  return x;
}

/* The file an entry came from, for messages ("safetensors" for an entry made by hand). */
static const char *efile(const al_st_entry *e) { return e->file ? e->file : "safetensors"; }

/* The conversions read numel elements of the entry's dtype: its byte count must be exactly that.
 * An entry the reader made always passes; one made by hand is checked as the writer checks it
 * (a bad dtype was reported as a byte count, a shape whose product wrapped to 0 converted
 * nothing and returned AL_OK, and ndim > 8 read past shape[]). */
static al_status check_size(const al_st_entry *e, int64_t *numel) { return al_st_entry_check_(efile(e), "", e, numel); }

al_status al_st_to_f32(const al_st_entry *e, float *out) {
  AL_NEED(e, "al_st_to_f32", "the entry");
  int64_t n = 0;
  const uint8_t *p = e->data;
  al_status st = check_size(e, &n);
  if (st) return st;
  if (n > 0) AL_NEED(out, efile(e), "al_st_to_f32: out");
  switch (e->dtype) {
    case AL_ST_F32:
      if (n) memcpy(out, p, (size_t)n * 4);
      return AL_OK;
    case AL_ST_F64:
      for (int64_t i = 0; i < n; i++) { double d; memcpy(&d, p + 8 * i, 8); out[i] = (float)d; }
      return AL_OK;
    case AL_ST_F16:
      for (int64_t i = 0; i < n; i++) {
        uint16_t h; memcpy(&h, p + 2 * i, 2); out[i] = half_to_float(h);
      }
      return AL_OK;
    case AL_ST_BF16:
      for (int64_t i = 0; i < n; i++) {
        uint16_t h; memcpy(&h, p + 2 * i, 2);
        uint32_t b = (uint32_t)h << 16; memcpy(&out[i], &b, 4);
      }
      return AL_OK;
    case AL_ST_F8_E4M3: case AL_ST_F8_E5M2:
      return al_seterr(AL_EINVAL, "%s: tensor '%s' has dtype %s, which is not supported (F32, F64, "
                       "F16 and BF16 read as float32)", efile(e), e->name, al_st_dtype_name(e->dtype));
    default:
      return al_seterr(AL_EINVAL, "%s: tensor '%s' has dtype %s: cannot convert to "
                       "float32 (F32, F64, F16, BF16 can)", efile(e), e->name, al_st_dtype_name(e->dtype));
  }
}

al_status al_st_to_i64(const al_st_entry *e, int64_t *out) {
  AL_NEED(e, "al_st_to_i64", "the entry");
  int64_t n = 0;
  const uint8_t *p = e->data;
  al_status st = check_size(e, &n);
  if (st) return st;
  if (n > 0) AL_NEED(out, efile(e), "al_st_to_i64: out");
  switch (e->dtype) {
#define CONV(T, W) for (int64_t i = 0; i < n; i++) { T v; memcpy(&v, p + (W) * i, W); out[i] = (int64_t)v; } return AL_OK
    case AL_ST_I64: if (n) memcpy(out, p, (size_t)n * 8); return AL_OK;
    case AL_ST_I32: CONV(int32_t, 4);
    case AL_ST_I16: CONV(int16_t, 2);
    case AL_ST_I8: CONV(int8_t, 1);
    case AL_ST_U32: CONV(uint32_t, 4);
    case AL_ST_U16: CONV(uint16_t, 2);
    case AL_ST_U8: case AL_ST_BOOL: CONV(uint8_t, 1);
#undef CONV
    case AL_ST_U64:
      for (int64_t i = 0; i < n; i++) {
        uint64_t v; memcpy(&v, p + 8 * i, 8);
        if (v > INT64_MAX)
          return al_seterr(AL_EINVAL, "%s: tensor '%s': U64 element %" PRId64 " = %" PRIu64
                           " does not fit in int64", efile(e), e->name, i, v);
        out[i] = (int64_t)v;
      }
      return AL_OK;
    default:
      return al_seterr(AL_EINVAL, "%s: tensor '%s' has dtype %s: cannot convert to "
                       "int64 (integer dtypes can)", efile(e), e->name, al_st_dtype_name(e->dtype));
  }
}
