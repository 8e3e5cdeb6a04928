/* lua/bind/io_bind.c -- safetensors save/load, dataset decoders, atomic file writes.
 *
 * Dataset bytes stay uint8 in a "Bytes" userdata (CIFAR-10 as float32 would be
 * 614 MB); Bytes:batch(indices) makes the normalised float32 batch a step needs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/io.h"
#include "attnlab/sha256.h"
#include "bind.h"

#define BYTES_MT "attnlab.Bytes"

typedef struct {
  uint8_t *data;
  size_t size;
  int ndim;
  int64_t shape[AL_MAXDIM];
} l_bytes;

static l_bytes *push_bytes(lua_State *L, uint8_t *data, size_t size, int ndim, const int64_t *shape) {
  l_bytes *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->data = data;
  b->size = size;
  b->ndim = ndim;
  memcpy(b->shape, shape, sizeof(int64_t) * (size_t)ndim);
  luaL_setmetatable(L, BYTES_MT);
  l_gc_pace(L);
  return b;
}

static int bytes_gc(lua_State *L) {
  l_bytes *b = luaL_checkudata(L, 1, BYTES_MT);
  if (b->data) al_free(b->data, b->size);
  b->data = NULL;
  return 0;
}

/* Freed bytes (bytes_gc, also their __close) keep their size and lose their data. */
static int bytes_released(const l_bytes *b) { return !b->data && b->size; }

static l_bytes *check_bytes(lua_State *L, int idx) {
  l_bytes *b = luaL_checkudata(L, idx, BYTES_MT);
  if (bytes_released(b)) luaL_argerror(L, idx, "bytes were released");
  return b;
}

static int bytes_shape(lua_State *L) {
  l_bytes *b = check_bytes(L, 1);
  lua_createtable(L, b->ndim, 0);
  for (int i = 0; i < b->ndim; i++) { lua_pushinteger(L, b->shape[i]); lua_rawseti(L, -2, i + 1); }
  return 1;
}

static int bytes_tostring(lua_State *L) {
  l_bytes *b = check_bytes(L, 1);
  char buf[128];
  lua_pushfstring(L, "Bytes(uint8 %s)", al_dims_str(b->ndim, b->shape, buf, sizeof buf));
  return 1;
}

/* bytes:batch(idx [, {scale=, mean={..}, std={..}}]) -> float32 (B, shape[2..]).
 * idx: int64 tensor of 1-based record numbers. Value = (byte*scale - mean_c) / std_c
 * where c is dim 2 (channels) for 4-D records (N,C,H,W), else a single channel. */
static int bytes_batch(lua_State *L) {
  l_bytes *b = check_bytes(L, 1);
  al_tensor *idx = l_checktensor(L, 2), *ic = NULL;
  if (idx->dtype != AL_I64 || idx->ndim != 1) return luaL_argerror(L, 2, "expected a 1-D int64 tensor of 1-based record numbers");
  double scale = 1.0;
  double mean[64], stdv[64];
  int nch = b->ndim == 4 ? (int)b->shape[1] : 1;
  if (nch > 64) return luaL_error(L, "attnlab.batch: at most 64 channels");
  for (int c = 0; c < nch; c++) { mean[c] = 0; stdv[c] = 1; }
  if (!lua_isnoneornil(L, 3)) {
    /* a misspelt key ({mena = ...}) or a mean of the wrong type was ignored: the batch came
     * back unnormalised without a word */
    if (!lua_istable(L, 3)) return luaL_error(L, "attnlab.batch: options must be a table, got a %s", luaL_typename(L, 3));
    static const char *const keys[] = {"scale", "mean", "std", NULL};
    l_check_keys(L, 3, "batch", keys);
    lua_getfield(L, 3, "scale");
    scale = luaL_optnumber(L, -1, 1.0);
    lua_pop(L, 1);
    if (!isfinite(scale)) return luaL_error(L, "attnlab.batch: scale must be finite, got %s", l_numstr(L, scale));
    for (int k = 0; k < 2; k++) {
      const char *name = k ? "std" : "mean";
      lua_getfield(L, 3, name);
      if (lua_istable(L, -1)) {
        if (luaL_len(L, -1) != nch) return luaL_error(L, "attnlab.batch: %s has %d entries, want one per channel (%d)", name, (int)luaL_len(L, -1), nch);
        for (int c = 0; c < nch; c++) { lua_geti(L, -1, c + 1); (k ? stdv : mean)[c] = luaL_checknumber(L, -1); lua_pop(L, 1); }
      } else if (lua_isnumber(L, -1)) {
        for (int c = 0; c < nch; c++) (k ? stdv : mean)[c] = lua_tonumber(L, -1);
      } else if (!lua_isnil(L, -1)) {
        return luaL_error(L, "attnlab.batch: %s must be a number or a table of one per channel, got a %s", name, luaL_typename(L, -1));
      }
      lua_pop(L, 1);
    }
  }
  for (int c = 0; c < nch; c++) {
    if (!isfinite(mean[c])) return luaL_error(L, "attnlab.batch: mean must be finite, got %s", l_numstr(L, mean[c]));
    if (!(stdv[c] > 0)) return luaL_error(L, "attnlab.batch: std must be > 0");
    if (!isfinite(stdv[c])) return luaL_error(L, "attnlab.batch: std must be finite, got %s", l_numstr(L, stdv[c]));
  }
  if (al_contiguous_ref(&ic, idx)) return l_raise(L, "batch");
  int64_t B = idx->shape[0], N = b->shape[0], rec = N ? (int64_t)b->size / N : 0, plane = rec / nch;
  int64_t shape[AL_MAXDIM];
  shape[0] = B;
  for (int i = 1; i < b->ndim; i++) shape[i] = b->shape[i];
  al_tensor *o = al_tensor_new(AL_F32, b->ndim, shape);
  if (!o) { al_tensor_release(ic); return l_raise(L, "batch"); }
  const int64_t *pi = al_i64(ic);
  for (int64_t i = 0; i < B; i++)
    if (pi[i] < 1 || pi[i] > N) {
      lua_Integer bad = pi[i];
      al_tensor_release(ic); al_tensor_release(o);
      return luaL_error(L, "attnlab.batch: record %I out of range 1..%I", bad, (lua_Integer)N);
    }
  float *po = al_f32(o);
  float lut[64][256];   /* byte -> normalised value per channel */
  for (int c = 0; c < nch; c++)
    for (int v = 0; v < 256; v++) lut[c][v] = (float)((v * scale - mean[c]) / stdv[c]);
  for (int64_t i = 0; i < B; i++) {
    const uint8_t *src = b->data + (pi[i] - 1) * rec;
    float *dst = po + i * rec;
    for (int c = 0; c < nch; c++)
      for (int64_t j = 0; j < plane; j++) dst[c * plane + j] = lut[c][src[c * plane + j]];
  }
  al_tensor_release(ic);
  return l_pushtensor(L, o);
}

/* Per-channel mean and std of byte*scale over all records (train-split statistics). */
static int bytes_channel_stats(lua_State *L) {
  l_bytes *b = check_bytes(L, 1);
  double scale = luaL_optnumber(L, 2, 1.0);
  int nch = b->ndim == 4 ? (int)b->shape[1] : 1;
  int64_t N = b->shape[0], rec = N ? (int64_t)b->size / N : 0, plane = rec / nch;
  lua_createtable(L, nch, 0);
  lua_createtable(L, nch, 0);
  for (int c = 0; c < nch; c++) {
    uint64_t hist[256] = {0};
    for (int64_t i = 0; i < N; i++) {
      const uint8_t *p = b->data + i * rec + c * plane;
      for (int64_t j = 0; j < plane; j++) hist[p[j]]++;
    }
    double n = 0, s = 0, s2 = 0;
    for (int v = 0; v < 256; v++) { n += hist[v]; s += hist[v] * v * scale; }
    double m = n ? s / n : 0;
    for (int v = 0; v < 256; v++) { double d = v * scale - m; s2 += hist[v] * d * d; }
    lua_pushnumber(L, m);
    lua_rawseti(L, -3, c + 1);
    lua_pushnumber(L, n ? sqrt(s2 / n) : 0);
    lua_rawseti(L, -2, c + 1);
  }
  return 2;
}

/* bytes:to_tensor([dtype]) -> all records as float32 (or int64 with "int64") */
static int bytes_to_tensor(lua_State *L) {
  l_bytes *b = check_bytes(L, 1);
  al_dtype dt = l_dtype_named(L, luaL_optstring(L, 2, "float32"), "to_tensor");   /* another name raises */
  al_tensor *t = al_tensor_new(dt, b->ndim, b->shape);
  if (!t) return l_raise(L, "to_tensor");
  for (size_t i = 0; i < b->size; i++) {
    if (dt == AL_I64) al_i64(t)[i] = b->data[i]; else al_f32(t)[i] = b->data[i];
  }
  return l_pushtensor(L, t);
}

/* bytes_cat({b1, b2, ...}) -> one Bytes with the records of all (same record shape). */
static int l_bytes_cat(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int n = (int)luaL_len(L, 1);
  if (n < 1) return luaL_argerror(L, 1, "empty list");
  size_t total = 0;
  int64_t count = 0;
  l_bytes *first = NULL;
  for (int i = 1; i <= n; i++) {
    lua_geti(L, 1, i);
    /* named by its place in the list: check_bytes would say "bad argument #-1" */
    l_bytes *b = luaL_testudata(L, -1, BYTES_MT);
    if (!b) return luaL_error(L, "attnlab.bytes_cat: part %d is a %s, not dataset bytes", i, luaL_typename(L, -1));
    if (bytes_released(b)) return luaL_error(L, "attnlab.bytes_cat: part %d was released", i);
    if (!first) first = b;
    if (b->ndim != first->ndim) return luaL_error(L, "attnlab.bytes_cat: part %d has %d dims, part 1 has %d", i, b->ndim, first->ndim);
    for (int d = 1; d < b->ndim; d++)
      if (b->shape[d] != first->shape[d]) return luaL_error(L, "attnlab.bytes_cat: part %d records differ in shape from part 1", i);
    total += b->size;
    count += b->shape[0];
    lua_pop(L, 1);
  }
  /* exactly total bytes, as bytes_gc frees them (b->size): al_malloc(1) for empty parts was
   * freed as 0, and each such concatenation left al_mem_live() one byte high for good */
  uint8_t *data = al_malloc(total);
  if (!data) return luaL_error(L, "attnlab.bytes_cat: out of memory (%I bytes)", (LUAI_UACINT)total);
  size_t off = 0;
  for (int i = 1; i <= n; i++) {
    lua_geti(L, 1, i);
    l_bytes *b = check_bytes(L, -1);
    memcpy(data + off, b->data, b->size);
    off += b->size;
    lua_pop(L, 1);
  }
  int64_t shape[AL_MAXDIM];
  memcpy(shape, first->shape, sizeof shape);
  shape[0] = count;
  push_bytes(L, data, total, first->ndim, shape);
  return 1;
}

static int l_read_idx(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  al_idx x;
  memset(&x, 0, sizeof x);
  if (al_idx_read(path, &x)) { lua_pushnil(L); lua_pushstring(L, al_errmsg()); return 2; }
  push_bytes(L, x.data, x.size, x.ndim, x.dims);
  return 1;
}

/* read_cifar(path) -> Bytes (N,3,32,32), labels int64 (N) 1-based */
static int l_read_cifar(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  al_cifar c;
  memset(&c, 0, sizeof c);
  if (al_cifar_read(path, &c)) { lua_pushnil(L); lua_pushstring(L, al_errmsg()); return 2; }
  int64_t shape[4] = {c.count, 3, 32, 32};
  push_bytes(L, c.pixels, (size_t)c.count * AL_CIFAR_PIXELS, 4, shape);
  al_tensor *lab = al_tensor_new(AL_I64, 1, &c.count);
  if (!lab) { al_free(c.labels, (size_t)c.count); return l_raise(L, "read_cifar"); }
  for (int64_t i = 0; i < c.count; i++) al_i64(lab)[i] = c.labels[i] + 1;
  al_free(c.labels, (size_t)c.count);
  l_pushtensor(L, lab);
  return 2;
}

/* tar_foreach(path, fn(name, data_string) -> stop?) */
typedef struct { lua_State *L; int fn; int err; } tar_ud;
static int tar_cb(void *ud, const char *name, const uint8_t *data, size_t size) {
  tar_ud *t = ud;
  lua_pushvalue(t->L, t->fn);
  lua_pushstring(t->L, name);
  lua_pushlstring(t->L, (const char *)data, size);
  if (lua_pcall(t->L, 2, 1, 0) != LUA_OK) { t->err = 1; return 1; }
  int stop = lua_toboolean(t->L, -1);
  lua_pop(t->L, 1);
  return stop;
}

static int l_tar_foreach(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  tar_ud ud = {L, 2, 0};
  al_status st = al_tar_foreach(path, tar_cb, &ud);
  if (ud.err) return lua_error(L);   /* the callback's error is on the stack */
  if (st) { lua_pushnil(L); lua_pushstring(L, al_errmsg()); return 2; }
  lua_pushboolean(L, 1);
  return 1;
}

/* ---- safetensors ----------------------------------------------------------------- */
/* Raises when the string at idx holds a NUL byte: names, metadata keys and values reach the
 * writer as C strings, so "a\0b" was saved as "a". JSON
 * could carry \u0000, but nothing needs it. what: "tensor name", "metadata key", ... */
static void check_no_nul(lua_State *L, int idx, const char *what) {
  size_t len;
  const char *s = lua_tolstring(L, idx, &len);   /* a string already: no conversion under lua_next */
  if (strlen(s) == len) return;
  luaL_Buffer b;   /* the string as the caller would write it, the NUL shown as \0 */
  luaL_buffinit(L, &b);
  for (size_t i = 0; i < len && i < 64; i++) {
    if (s[i]) luaL_addchar(&b, s[i]);
    else luaL_addstring(&b, "\\0");
  }
  if (len > 64) luaL_addstring(&b, "...");
  luaL_pushresult(&b);
  luaL_error(L, "attnlab.save: the %s \"%s\" contains a NUL byte (at byte %d), which the file cannot hold", what,
             lua_tostring(L, -1), (int)strlen(s) + 1);
}

/* save(path, {name = tensor, ...} [, {key = "value"}]) atomically */
static int l_save(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  if (!lua_isnoneornil(L, 3) && !lua_istable(L, 3))
    return luaL_argerror(L, 3, "expected a metadata table of strings {key = value}");
  lua_settop(L, 3);   /* slot 3: the metadata or nil; what is pushed below goes above it */
  int n = 0;
  lua_pushnil(L);
  while (lua_next(L, 2)) {
    if (lua_type(L, -2) != LUA_TSTRING) return luaL_error(L, "attnlab.save: state_dict keys must be strings");
    check_no_nul(L, -2, "tensor name");
    l_tensor *u = luaL_testudata(L, -1, TENSOR_MT);
    if (!u) return luaL_error(L, "attnlab.save: value of '%s' is a %s, not a tensor", lua_tostring(L, -2), luaL_typename(L, -1));
    if (!u->t) return luaL_error(L, "attnlab.save: value of '%s' is a tensor that was released", lua_tostring(L, -2));
    n++;
    lua_pop(L, 1);
  }
  al_st_entry *e = lua_newuserdatauv(L, sizeof *e * (size_t)(n ? n : 1), 0);
  int ent_idx = lua_gettop(L);
  lua_newtable(L);   /* keeps the contiguous copies alive */
  int keep = lua_gettop(L);
  int i = 0;
  lua_pushnil(L);
  while (lua_next(L, 2)) {
    al_tensor *t = l_totensor(L, -1), *c = NULL;
    if (al_contiguous_ref(&c, t)) return l_raise(L, "save");
    l_pushtensor(L, c);
    lua_rawseti(L, keep, i + 1);
    e[i].name = lua_tostring(L, -2);
    e[i].dtype = c->dtype == AL_I64 ? AL_ST_I64 : AL_ST_F32;
    e[i].ndim = c->ndim;
    memcpy(e[i].shape, c->shape, sizeof e[i].shape);
    e[i].data = c->dtype == AL_I64 ? (const void *)al_i64(c) : (const void *)al_f32(c);
    e[i].nbytes = (size_t)al_numel(c) * al_dtype_size(c->dtype);
    i++;
    lua_pop(L, 1);
  }
  int nmeta = 0;
  al_st_meta *meta = NULL;
  if (lua_istable(L, 3)) {
    lua_pushnil(L);
    while (lua_next(L, 3)) { nmeta++; lua_pop(L, 1); }
    meta = lua_newuserdatauv(L, sizeof *meta * (size_t)(nmeta ? nmeta : 1), 0);
    int j = 0;
    lua_pushnil(L);
    while (lua_next(L, 3)) {
      if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
        return luaL_error(L, "attnlab.save: metadata keys and values must be strings");
      check_no_nul(L, -2, "metadata key");
      check_no_nul(L, -1, "metadata value");
      meta[j].key = lua_tostring(L, -2);
      meta[j].value = lua_tostring(L, -1);
      j++;
      lua_pop(L, 1);
    }
  }
  (void)ent_idx;
  if (al_st_write(path, e, n, meta, nmeta)) return l_raise(L, "save");
  return 0;
}

/* load(path) -> {name = tensor}, {metadata} ; float types -> float32, integers -> int64 */
static int l_load(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  al_st_file *f = NULL;
  if (al_st_open(path, &f)) return luaL_error(L, "attnlab.load: %s", al_errmsg());
  lua_createtable(L, 0, f->n);
  for (int i = 0; i < f->n; i++) {
    const al_st_entry *e = &f->entries[i];
    /* F8 counts as float so that al_st_to_f32 says it is not supported (as int64 it was "cannot convert") */
    int is_float = e->dtype == AL_ST_F32 || e->dtype == AL_ST_F64 || e->dtype == AL_ST_F16 || e->dtype == AL_ST_BF16 ||
                   e->dtype == AL_ST_F8_E4M3 || e->dtype == AL_ST_F8_E5M2;
    al_tensor *t = al_tensor_new(is_float ? AL_F32 : AL_I64, e->ndim, e->shape);
    if (!t) { al_st_close(f); return l_raise(L, "load"); }
    al_status st = is_float ? al_st_to_f32(e, al_f32(t)) : al_st_to_i64(e, al_i64(t));
    if (st) { al_tensor_release(t); al_st_close(f); return luaL_error(L, "attnlab.load: %s", al_errmsg()); }
    l_pushtensor(L, t);
    lua_setfield(L, -2, e->name);
  }
  lua_createtable(L, 0, f->nmeta);
  for (int i = 0; i < f->nmeta; i++) {
    lua_pushstring(L, f->meta[i].value);
    lua_setfield(L, -2, f->meta[i].key);
  }
  al_st_close(f);
  return 2;
}

static int l_write_atomic(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  size_t n;
  const char *s = luaL_checklstring(L, 2, &n);
  if (al_write_file_atomic(path, s, n)) { lua_pushnil(L); lua_pushstring(L, al_errmsg()); return 2; }
  lua_pushboolean(L, 1);
  return 1;
}

/* file_kind(path) -> nil (a regular file, or nothing there) | "a FIFO", "a directory", ...:
 * al_file_kind, for the dataset search (which must not io.open a FIFO). */
static int l_file_kind(lua_State *L) {
  const char *kind = al_file_kind(luaL_checkstring(L, 1));
  if (kind) lua_pushstring(L, kind); else lua_pushnil(L);
  return 1;
}

/* atomic_replaceable(path) -> true | nil, message: whether write_atomic may replace path
 * (nothing there, or a regular file; not a folder, device or FIFO). Never opens it. */
static int l_atomic_replaceable(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  if (al_atomic_replaceable(path)) { lua_pushnil(L); lua_pushstring(L, al_errmsg()); return 2; }
  lua_pushboolean(L, 1);
  return 1;
}

/* read_file(path [, gunzip]) -> string (gzip'd files transparently when gunzip) */
static int l_read_file(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int gunzip = lua_toboolean(L, 2);
  void *data = NULL;
  size_t size = 0;
  if (al_read_file(path, gunzip, &data, &size)) { lua_pushnil(L); lua_pushstring(L, al_errmsg()); return 2; }
  lua_pushlstring(L, data, size);
  al_free(data, size);
  return 1;
}

/* sha256(string) -> 64 hex digits.  sha256_file(path) -> hex, size in bytes | nil, message
 * (the bytes as stored: a .gz file's compressed bytes). */
static int l_sha256(lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  uint8_t d[AL_SHA256_SIZE];
  char hex[AL_SHA256_HEX];
  al_sha256(s, n, d);
  al_sha256_hex(d, hex);
  lua_pushstring(L, hex);
  return 1;
}

static int l_sha256_file(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  char hex[AL_SHA256_HEX];
  uint64_t size = 0;
  if (al_sha256_file(path, hex, &size) != AL_OK) {
    lua_pushnil(L);
    lua_pushstring(L, al_errmsg());
    return 2;
  }
  lua_pushstring(L, hex);
  lua_pushinteger(L, (lua_Integer)size);
  return 2;
}

void l_open_io(lua_State *L) {
  static const luaL_Reg bm[] = {{"shape", bytes_shape}, {"batch", bytes_batch}, {"channel_stats", bytes_channel_stats},
                                {"to_tensor", bytes_to_tensor}, {NULL, NULL}};
  luaL_newmetatable(L, BYTES_MT);
  luaL_newlib(L, bm);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, bytes_gc);
  lua_setfield(L, -2, "__gc");
  lua_pushcfunction(L, bytes_gc);
  lua_setfield(L, -2, "__close");
  lua_pushcfunction(L, bytes_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  static const luaL_Reg fns[] = {{"read_idx", l_read_idx}, {"bytes_cat", l_bytes_cat}, {"read_cifar", l_read_cifar}, {"tar_foreach", l_tar_foreach},
                                 {"save", l_save}, {"load", l_load}, {"write_atomic", l_write_atomic},
                                 {"atomic_replaceable", l_atomic_replaceable}, {"file_kind", l_file_kind},
                                 {"read_file", l_read_file}, {"sha256", l_sha256}, {"sha256_file", l_sha256_file},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
