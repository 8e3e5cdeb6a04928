/* lua/bind/json.c -- al.json.encode / al.json.decode (RFC 8259), written for exact
 * round trips of experiment records rather than on top of cJSON:
 *   - integers stay integers, all 64 bits (cJSON keeps numbers as doubles), and floats
 *     stay floats: 1.0 encodes as "1.0", and decodes back to a float;
 *   - floats print with the fewest of 15/16/17 significant digits that read back
 *     bit-identically; NaN and +-inf encode as null (JSON has no spelling for them);
 *   - object keys are sorted (byte order), so files are deterministic and diffable;
 *   - tables with keys exactly 1..n (n >= 1) are arrays, other tables objects; an
 *     empty table is an object unless marked with al.json.array(t) -- decode marks the
 *     empty arrays it reads, so "[]" survives a round trip;
 *   - al.json.null stands for null, in both directions (a Lua nil cannot sit in a table);
 *   - strings must be valid UTF-8; \uXXXX escapes (with surrogate pairs) decode to UTF-8;
 *   - decode refuses a repeated object key and a number beyond the double range (1e999),
 *     naming them: either would lose a value without a word;
 *   - both directions refuse more than MAX_DEPTH nested objects and arrays;
 *   - decode errors name the line and column (1-based, columns count bytes).
 * encode(v [, pretty]) -- pretty: two-space indentation. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bind.h"

static char null_sentinel;
#define ARRAY_MT "attnlab.json.array"
#define MAX_DEPTH 500   /* nesting limit: objects and arrays, the same in both directions (C recursion) */
#define AL_STR_(x) #x
#define AL_STR(x) AL_STR_(x)

/* ---- UTF-8 ----------------------------------------------------------------------- */
/* Length of the valid UTF-8 sequence at s (n bytes left), or 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  if (c < 0x80) return 1;
  size_t len;
  unsigned min;
  if (c >= 0xC2 && c <= 0xDF) { len = 2; min = 0x80; }
  else if ((c & 0xF0) == 0xE0) { len = 3; min = 0x800; }
  else if (c >= 0xF0 && c <= 0xF4) { len = 4; min = 0x10000; }
  else return 0;
  if (n < len) return 0;
  unsigned cp = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

static size_t utf8_put(char *o, unsigned cp) {
  if (cp < 0x80) { o[0] = (char)cp; return 1; }
  if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
  if (cp < 0x10000) {
    o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* ---- encode ---------------------------------------------------------------------- */
/* The output grows in a Lua buffer kept at a fixed stack slot below everything the
 * encoder pushes (luaL_Buffer's rule: balanced pushes between its calls). To keep
 * that rule with recursion we build into a growable userdata instead. */
typedef struct { char *p; size_t n, cap; } sbuf;

static int sbuf_gc(lua_State *L) {
  sbuf *b = lua_touserdata(L, 1);
  free(b->p);
  b->p = NULL;
  return 0;
}

static void sb_add(lua_State *L, sbuf *b, const char *s, size_t n) {
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) luaL_error(L, "attnlab.json.encode: out of memory");
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
}
#define SB_LIT(L, b, s) sb_add(L, b, s, sizeof(s) - 1)

static void enc_string(lua_State *L, sbuf *b, const char *s, size_t n) {
  SB_LIT(L, b, "\"");
  size_t run = 0;   /* bytes copied verbatim */
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)s[i];
    const char *esc = NULL;
    char u[8];
    if (c == '"') esc = "\\\"";
    else if (c == '\\') esc = "\\\\";
    else if (c == '\n') esc = "\\n";
    else if (c == '\r') esc = "\\r";
    else if (c == '\t') esc = "\\t";
    else if (c == '\b') esc = "\\b";
    else if (c == '\f') esc = "\\f";
    else if (c < 0x20) { snprintf(u, sizeof u, "\\u%04x", c); esc = u; }
    if (esc) {
      sb_add(L, b, s + i - run, run);
      run = 0;
      sb_add(L, b, esc, strlen(esc));
      i++;
      continue;
    }
    size_t len = utf8_len((const unsigned char *)s + i, n - i);
    if (!len) luaL_error(L, "attnlab.json.encode: string is not valid UTF-8 (byte %d)", (int)i + 1);
    run += len;
    i += len;
  }
  sb_add(L, b, s + n - run, run);
  SB_LIT(L, b, "\"");
}

/* Shortest of %.15g/%.16g/%.17g that reads back to the same double; ".0" appended
 * when the text would read back as an integer. */
static int fmt_float(char *out, size_t cap, double v) {
  int n = 0;
  for (int prec = 15; prec <= 17; prec++) {
    n = snprintf(out, cap, "%.*g", prec, v);
    if (strtod(out, NULL) == v) break;
  }
  if (!strpbrk(out, ".eEn")) { memcpy(out + n, ".0", 3); n += 2; }
  return n;
}

static void newline(lua_State *L, sbuf *b, int pretty, int depth) {
  if (!pretty) return;
  SB_LIT(L, b, "\n");
  for (int i = 0; i < depth; i++) SB_LIT(L, b, "  ");
}

static int key_cmp(const void *x, const void *y) {
  const struct { const char *s; size_t n; } *a = x, *b = y;
  size_t m = a->n < b->n ? a->n : b->n;
  int c = memcmp(a->s, b->s, m);
  return c ? c : (a->n > b->n) - (a->n < b->n);
}

/* Stack on entry: ... value. `seen` (absolute index) maps tables being encoded to true. */
static void encode(lua_State *L, sbuf *b, int idx, int depth, int pretty, int seen) {
  idx = lua_absindex(L, idx);
  luaL_checkstack(L, 6, "json");
  switch (lua_type(L, idx)) {
    case LUA_TNIL: SB_LIT(L, b, "null"); return;
    case LUA_TBOOLEAN:
      if (lua_toboolean(L, idx)) SB_LIT(L, b, "true"); else SB_LIT(L, b, "false");
      return;
    case LUA_TNUMBER: {
      char num[64];
      int n;
      if (lua_isinteger(L, idx)) n = snprintf(num, sizeof num, LUA_INTEGER_FMT, (LUAI_UACINT)lua_tointeger(L, idx));
      else {
        double v = lua_tonumber(L, idx);
        if (!isfinite(v)) { SB_LIT(L, b, "null"); return; }
        n = fmt_float(num, sizeof num, v);
      }
      sb_add(L, b, num, (size_t)n);
      return;
    }
    case LUA_TSTRING: {
      size_t n;
      const char *s = lua_tolstring(L, idx, &n);
      enc_string(L, b, s, n);
      return;
    }
    case LUA_TLIGHTUSERDATA:
      if (lua_touserdata(L, idx) == &null_sentinel) { SB_LIT(L, b, "null"); return; }
      break;
    case LUA_TTABLE: {
      if (depth >= MAX_DEPTH) luaL_error(L, "attnlab.json.encode: nested too deep (more than %d objects and arrays)", MAX_DEPTH);
      lua_pushvalue(L, idx);
      if (lua_rawget(L, seen) != LUA_TNIL) luaL_error(L, "attnlab.json.encode: the table refers to itself (a cycle)");
      lua_pop(L, 1);
      lua_pushvalue(L, idx);
      lua_pushboolean(L, 1);
      lua_rawset(L, seen);
      /* array: keys exactly 1..n, or an (empty) table marked as an array */
      lua_Integer count = 0, maxk = 0;
      int array = 1;
      lua_pushnil(L);
      while (lua_next(L, idx)) {
        lua_pop(L, 1);
        count++;
        if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1) array = 0;
        else if (lua_tointeger(L, -1) > maxk) maxk = lua_tointeger(L, -1);
      }
      if (array && count == 0) {   /* {} is an object unless marked as an array */
        array = 0;
        if (luaL_getmetafield(L, idx, "__jsontype") != LUA_TNIL) {
          array = lua_type(L, -1) == LUA_TSTRING && !strcmp(lua_tostring(L, -1), "array");
          lua_pop(L, 1);
        }
      }
      if (array && maxk != count) array = 0;
      if (array) {
        SB_LIT(L, b, "[");
        for (lua_Integer i = 1; i <= count; i++) {
          if (i > 1) SB_LIT(L, b, ",");
          newline(L, b, pretty, depth + 1);
          lua_rawgeti(L, idx, i);
          encode(L, b, -1, depth + 1, pretty, seen);
          lua_pop(L, 1);
        }
        if (count) newline(L, b, pretty, depth);
        SB_LIT(L, b, "]");
      } else {
        /* keys as strings in a scratch table (key string -> value), then sorted */
        lua_createtable(L, 0, (int)count);
        int tmp = lua_gettop(L);
        lua_pushnil(L);
        while (lua_next(L, idx)) {
          int kt = lua_type(L, -2);
          if (kt == LUA_TSTRING) lua_pushvalue(L, -2);
          else if (kt == LUA_TNUMBER && lua_isinteger(L, -2)) lua_pushfstring(L, "%I", (LUAI_UACINT)lua_tointeger(L, -2));
          else if (kt == LUA_TNUMBER) {
            char num[64];
            double v = lua_tonumber(L, -2);
            if (!isfinite(v)) luaL_error(L, "attnlab.json.encode: object key %f has no JSON spelling", v);
            fmt_float(num, sizeof num, v);
            lua_pushstring(L, num);
          } else luaL_error(L, "attnlab.json.encode: object keys must be strings or numbers, got a %s", luaL_typename(L, -2));
          lua_pushvalue(L, -1);
          if (lua_rawget(L, tmp) != LUA_TNIL)
            luaL_error(L, "attnlab.json.encode: two keys both encode as \"%s\"", lua_tostring(L, -2));
          lua_pop(L, 1);
          lua_pushvalue(L, -2);   /* key string, value */
          lua_rawset(L, tmp);
          lua_pop(L, 1);          /* the value; the original key stays for lua_next */
        }
        struct { const char *s; size_t n; } *keys = lua_newuserdatauv(L, sizeof *keys * (size_t)(count ? count : 1), 0);
        lua_Integer nk = 0;
        lua_pushnil(L);
        while (lua_next(L, tmp)) {   /* the strings stay alive as keys of tmp */
          lua_pop(L, 1);
          keys[nk].s = lua_tolstring(L, -1, &keys[nk].n);
          nk++;
        }
        qsort(keys, (size_t)nk, sizeof *keys, key_cmp);
        SB_LIT(L, b, "{");
        for (lua_Integer i = 0; i < nk; i++) {
          if (i) SB_LIT(L, b, ",");
          newline(L, b, pretty, depth + 1);
          enc_string(L, b, keys[i].s, keys[i].n);
          if (pretty) SB_LIT(L, b, ": "); else SB_LIT(L, b, ":");
          lua_pushlstring(L, keys[i].s, keys[i].n);
          lua_rawget(L, tmp);
          encode(L, b, -1, depth + 1, pretty, seen);
          lua_pop(L, 1);
        }
        if (nk) newline(L, b, pretty, depth);
        SB_LIT(L, b, "}");
        lua_pop(L, 2);   /* keys, tmp */
      }
      lua_pushvalue(L, idx);
      lua_pushnil(L);
      lua_rawset(L, seen);
      return;
    }
    default: break;
  }
  luaL_error(L, "attnlab.json.encode: cannot encode a %s", luaL_typename(L, idx));
}

static int l_encode(lua_State *L) {
  int pretty = lua_toboolean(L, 2);
  lua_settop(L, 1);
  sbuf *b = lua_newuserdatauv(L, sizeof *b, 0);   /* freed by its __gc even if encode raises */
  memset(b, 0, sizeof *b);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, sbuf_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_newtable(L);   /* seen */
  encode(L, b, 1, 0, pretty, lua_gettop(L));
  lua_pushlstring(L, b->p ? b->p : "", b->n);
  return 1;
}

/* ---- decode ---------------------------------------------------------------------- */
typedef struct {
  lua_State *L;
  const char *s, *p, *end;
  char *scratch;   /* string contents are unescaped here (never longer than the input) */
} dec;

static int dec_error(dec *d, const char *what) {
  int line = 1, col = 1;
  for (const char *q = d->s; q < d->p; q++) { if (*q == '\n') { line++; col = 1; } else col++; }
  char near[24] = "";
  if (d->p < d->end) {
    size_t k = 0;
    for (const char *q = d->p; q < d->end && k < 12; q++) near[k++] = (*q == '\n' || *q == '\r' || *q == '\t') ? ' ' : *q;
    near[k] = 0;
    return luaL_error(d->L, "attnlab.json.decode: %s at line %d, column %d (near '%s')", what, line, col, near);
  }
  return luaL_error(d->L, "attnlab.json.decode: %s at line %d, column %d (end of input)", what, line, col);
}

static void skip_ws(dec *d) {
  while (d->p < d->end && (*d->p == ' ' || *d->p == '\t' || *d->p == '\n' || *d->p == '\r')) d->p++;
}

static int hex4(dec *d, const char *q, unsigned *out) {
  unsigned v = 0;
  if (d->end - q < 4) return 0;
  for (int i = 0; i < 4; i++) {
    char c = q[i];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
    else return 0;
  }
  *out = v;
  return 1;
}

static void dec_string(dec *d) {
  d->p++;   /* opening quote */
  char *o = d->scratch;
  for (;;) {
    if (d->p >= d->end) dec_error(d, "unterminated string");
    unsigned char c = (unsigned char)*d->p;
    if (c == '"') { d->p++; break; }
    if (c < 0x20) dec_error(d, "control character in a string (escape it)");
    if (c == '\\') {
      if (d->p + 1 >= d->end) dec_error(d, "unterminated string");
      char e = d->p[1];
      switch (e) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
          unsigned cp = 0, lo = 0;
          if (!hex4(d, d->p + 2, &cp)) dec_error(d, "bad \\u escape (want 4 hex digits)");
          if (cp >= 0xDC00 && cp <= 0xDFFF) dec_error(d, "unpaired low surrogate in a \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (d->p + 7 >= d->end || d->p[6] != '\\' || d->p[7] != 'u' || !hex4(d, d->p + 8, &lo) || lo < 0xDC00 || lo > 0xDFFF)
              dec_error(d, "unpaired high surrogate in a \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            d->p += 6;
          }
          o += utf8_put(o, cp);
          d->p += 4;
          break;
        }
        default: dec_error(d, "bad escape in a string");
      }
      d->p += 2;
      continue;
    }
    size_t len = utf8_len((const unsigned char *)d->p, (size_t)(d->end - d->p));
    if (!len) dec_error(d, "invalid UTF-8 in a string");
    memcpy(o, d->p, len);
    o += len;
    d->p += len;
  }
  lua_pushlstring(d->L, d->scratch, (size_t)(o - d->scratch));
}

static void dec_number(dec *d) {
  const char *q = d->p;
  int is_float = 0;
  if (q < d->end && *q == '-') q++;
  if (q >= d->end || *q < '0' || *q > '9') dec_error(d, "invalid number");
  if (*q == '0') q++;
  else while (q < d->end && *q >= '0' && *q <= '9') q++;
  if (q < d->end && *q == '.') {
    is_float = 1;
    q++;
    if (q >= d->end || *q < '0' || *q > '9') { d->p = q; dec_error(d, "invalid number (digits must follow '.')"); }
    while (q < d->end && *q >= '0' && *q <= '9') q++;
  }
  if (q < d->end && (*q == 'e' || *q == 'E')) {
    is_float = 1;
    q++;
    if (q < d->end && (*q == '+' || *q == '-')) q++;
    if (q >= d->end || *q < '0' || *q > '9') { d->p = q; dec_error(d, "invalid number (digits must follow the exponent)"); }
    while (q < d->end && *q >= '0' && *q <= '9') q++;
  }
  char num[512];
  size_t n = (size_t)(q - d->p);
  if (n >= sizeof num) dec_error(d, "number too long");
  memcpy(num, d->p, n);
  num[n] = 0;
  if (!is_float) {
    errno = 0;
    long long v = strtoll(num, NULL, 10);
    if (errno != ERANGE) { lua_pushinteger(d->L, (lua_Integer)v); d->p = q; return; }
  }
  /* integers beyond 64 bits become floats; one beyond the double range (1e999) would become
   * inf, which encode writes as null: a value silently lost, so it is refused (an underflow
   * to 0 or a subnormal is a rounding, kept) */
  double v = strtod(num, NULL);
  if (isinf(v)) {
    char what[96];
    snprintf(what, sizeof what, "number %.40s%s is out of the double range", num, n > 40 ? "..." : "");
    dec_error(d, what);
  }
  lua_pushnumber(d->L, v);
  d->p = q;
}

static void dec_value(dec *d, int depth);

static void dec_literal(dec *d, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(d->end - d->p) < n || memcmp(d->p, word, n)) dec_error(d, "unexpected character");
  d->p += n;
}

static void dec_value(dec *d, int depth) {
  lua_State *L = d->L;
  luaL_checkstack(L, 4, "json");
  skip_ws(d);
  if (d->p >= d->end) dec_error(d, "unexpected end of input (want a value)");
  switch (*d->p) {
    case '{': {
      /* the limit counts objects and arrays as encode counts them: a text encode writes, decode
       * reads, and decode refuses what encode would refuse */
      if (depth >= MAX_DEPTH) dec_error(d, "nested too deep (more than " AL_STR(MAX_DEPTH) " objects and arrays)");
      d->p++;
      lua_newtable(L);
      skip_ws(d);
      if (d->p < d->end && *d->p == '}') { d->p++; return; }
      for (;;) {
        skip_ws(d);
        if (d->p >= d->end || *d->p != '"') dec_error(d, "expected a string key");
        const char *key_at = d->p;
        dec_string(d);
        /* a repeated key is refused, as the safetensors reader refuses a repeated tensor name:
         * keeping one of the two values silently is a guess (RFC 8259 leaves it open) */
        lua_pushvalue(L, -1);
        if (lua_rawget(L, -3) != LUA_TNIL) {
          d->p = key_at;
          size_t kn;
          const char *k = lua_tolstring(L, -2, &kn);
          char what[112];
          snprintf(what, sizeof what, "duplicate object key \"%.60s%s\"", k, kn > 60 ? "..." : "");
          dec_error(d, what);
        }
        lua_pop(L, 1);
        skip_ws(d);
        if (d->p >= d->end || *d->p != ':') dec_error(d, "expected ':' after an object key");
        d->p++;
        dec_value(d, depth + 1);
        lua_rawset(L, -3);
        skip_ws(d);
        if (d->p < d->end && *d->p == ',') { d->p++; continue; }
        if (d->p < d->end && *d->p == '}') { d->p++; return; }
        dec_error(d, "expected ',' or '}' in an object");
      }
    }
    case '[': {
      if (depth >= MAX_DEPTH) dec_error(d, "nested too deep (more than " AL_STR(MAX_DEPTH) " objects and arrays)");
      d->p++;
      lua_newtable(L);
      skip_ws(d);
      if (d->p < d->end && *d->p == ']') {   /* mark it, so it encodes as [] again */
        d->p++;
        luaL_setmetatable(L, ARRAY_MT);
        return;
      }
      for (lua_Integer i = 1;; i++) {
        dec_value(d, depth + 1);
        lua_rawseti(L, -2, i);
        skip_ws(d);
        if (d->p < d->end && *d->p == ',') { d->p++; continue; }
        if (d->p < d->end && *d->p == ']') { d->p++; return; }
        dec_error(d, "expected ',' or ']' in an array");
      }
    }
    case '"': dec_string(d); return;
    case 't': dec_literal(d, "true"); lua_pushboolean(L, 1); return;
    case 'f': dec_literal(d, "false"); lua_pushboolean(L, 0); return;
    case 'n': dec_literal(d, "null"); lua_pushlightuserdata(L, &null_sentinel); return;
    default:
      if (*d->p == '-' || (*d->p >= '0' && *d->p <= '9')) { dec_number(d); return; }
      dec_error(d, "unexpected character");
  }
}

static int l_decode(lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  dec d = {L, s, s, s + n, NULL};
  d.scratch = lua_newuserdatauv(L, n + 1, 0);
  dec_value(&d, 0);
  skip_ws(&d);
  if (d.p < d.end) dec_error(&d, "trailing characters after the JSON value");
  return 1;
}

/* al.json.array([t]) -> t marked to encode as an array even when empty. */
static int l_array(lua_State *L) {
  lua_settop(L, 1);
  if (lua_isnil(L, 1)) { lua_newtable(L); lua_replace(L, 1); }
  luaL_checktype(L, 1, LUA_TTABLE);
  if (lua_getmetatable(L, 1)) {
    luaL_getmetatable(L, ARRAY_MT);
    if (!lua_rawequal(L, -1, -2)) return luaL_argerror(L, 1, "table already has a metatable");
    lua_settop(L, 1);
    return 1;
  }
  luaL_setmetatable(L, ARRAY_MT);
  return 1;
}

void l_open_json(lua_State *L) {
  if (luaL_newmetatable(L, ARRAY_MT)) {
    lua_pushliteral(L, "array");
    lua_setfield(L, -2, "__jsontype");
  }
  lua_pop(L, 1);
  lua_createtable(L, 0, 4);
  lua_pushcfunction(L, l_encode);
  lua_setfield(L, -2, "encode");
  lua_pushcfunction(L, l_decode);
  lua_setfield(L, -2, "decode");
  lua_pushcfunction(L, l_array);
  lua_setfield(L, -2, "array");
  lua_pushlightuserdata(L, &null_sentinel);
  lua_setfield(L, -2, "null");
  lua_setfield(L, -2, "json");
}
