/* core/io/tar.c -- streaming tar / tar.gz reader (ustar, GNU and pax headers).
 *
 * Pure C11. Follows POSIX.1-2001 "pax" (ustar header layout, the pax extended header
 * records "<len> <key>=<value>\n") and GNU tar's extensions ('L' long names, base-256
 * numbers). Each regular file is read whole into one reused buffer and handed to the
 * callback. Sizes are checked against what the stream can still hold before the buffer
 * grows, so a corrupt size field is an error, not a giant allocation. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/io.h"
#include "../util/need.h"

#define BLOCK 512
#define MAX_META (16u << 20)   /* a GNU long name or a pax header larger than this is corrupt */

typedef struct {
  al_gz *f;
  const char *nm;
  int64_t entry;           /* index of the header being read (counting every header) */
  char prev[128];          /* name of the previous regular file, for messages */
  uint8_t *buf;            /* data of the current member (+1 for a NUL) */
  size_t cap;
  char *longname;          /* from a GNU 'L' entry, for the next entry */
  char *paxpath;           /* from a pax 'x' entry, for the next entry */
  int64_t paxsize;         /* -1: none */
} tar_state;

/* Octal number in a header field (leading spaces allowed, ends at space/NUL or the end
 * of the field), or GNU base-256 when the top bit of the first byte is set. */
static int parse_num(const uint8_t *p, int len, uint64_t *v) {
  uint64_t x = 0;
  if (p[0] & 0x80) {
    if (p[0] == 0xff) return 0;    /* negative */
    x = p[0] & 0x7f;
    for (int i = 1; i < len; i++) {
      if (x > (UINT64_MAX >> 8)) return 0;
      x = x << 8 | p[i];
    }
    *v = x;
    return 1;
  }
  int i = 0;
  while (i < len && p[i] == ' ') i++;
  for (; i < len && p[i] >= '0' && p[i] <= '7'; i++) {
    if (x > (UINT64_MAX >> 3)) return 0;
    x = x << 3 | (uint64_t)(p[i] - '0');
  }
  for (; i < len; i++)   /* the rest may only be terminators */
    if (p[i] != ' ' && p[i] != 0) return 0;
  *v = x;   /* no digits at all (a blank field) reads as 0 */
  return 1;
}

static void field_str(char *dst, const uint8_t *src, size_t len) {
  size_t n = 0;
  while (n < len && src[n]) n++;
  memcpy(dst, src, n);
  dst[n] = 0;
}

static void set_prev(tar_state *t, const char *name) {
  size_t n = strlen(name);
  if (n < sizeof t->prev) memcpy(t->prev, name, n + 1);
  else snprintf(t->prev, sizeof t->prev, "...%s", name + n - (sizeof t->prev - 4));
}

static void clear_ext(tar_state *t) {
  free(t->longname);
  free(t->paxpath);
  t->longname = t->paxpath = NULL;
  t->paxsize = -1;
}

/* Grow the data buffer to hold n bytes + NUL; refuses sizes the stream cannot hold. */
static al_status ensure(tar_state *t, uint64_t n, const char *ename) {
  uint64_t bound = al_gz_max_remaining(t->f);
  if (n > bound || n >= SIZE_MAX / 2) {
    uint64_t have = 0;
    al_status st = al_gz_skip(t->f, UINT64_MAX, &have);
    if (st) return st;
    return al_seterr(AL_EIO, "%s: truncated: entry %" PRId64 " '%s' says %" PRIu64 " bytes, "
                     "the archive ends after %" PRIu64 " of them", t->nm, t->entry, ename, n, have);
  }
  if (n + 1 <= t->cap) return AL_OK;
  size_t ncap = t->cap ? t->cap : 65536;
  while (ncap < n + 1) ncap *= 2;
  if (bound != UINT64_MAX && ncap > bound + 1) ncap = (size_t)n + 1;
  uint8_t *b = al_malloc(ncap);
  if (!b) return al_seterr(AL_ENOMEM, "%s: out of memory for entry '%s' (%" PRIu64 " bytes)",
                           t->nm, ename, n);
  al_free(t->buf, t->cap);
  t->buf = b;
  t->cap = ncap;
  return AL_OK;
}

/* Read n data bytes into t->buf (NUL-terminated) and skip the block padding. */
static al_status read_member(tar_state *t, uint64_t n, const char *ename) {
  al_status st = ensure(t, n, ename);
  if (st) return st;
  size_t got;
  st = al_gz_read(t->f, t->buf, (size_t)n, &got);
  if (st) return st;
  if (got < n)
    return al_seterr(AL_EIO, "%s: truncated: entry %" PRId64 " '%s' says %" PRIu64 " bytes, "
                     "the archive ends after %zu of them", t->nm, t->entry, ename, n, got);
  t->buf[n] = 0;
  uint64_t pad = (BLOCK - n % BLOCK) % BLOCK, skipped;
  st = al_gz_skip(t->f, pad, &skipped);
  if (st) return st;
  if (skipped < pad)
    return al_seterr(AL_EIO, "%s: truncated: the archive ends inside the padding of entry "
                     "%" PRId64 " '%s'", t->nm, t->entry, ename);
  return AL_OK;
}

static al_status skip_member(tar_state *t, uint64_t n, const char *ename) {
  uint64_t total = n + (BLOCK - n % BLOCK) % BLOCK, skipped;
  if (n > UINT64_MAX - BLOCK) total = UINT64_MAX;
  al_status st = al_gz_skip(t->f, total, &skipped);
  if (st) return st;
  if (skipped < total)
    return al_seterr(AL_EIO, "%s: truncated: entry %" PRId64 " '%s' says %" PRIu64 " bytes, "
                     "the archive ends after %" PRIu64 " of them", t->nm, t->entry, ename, n,
                     skipped < n ? skipped : n);
  return AL_OK;
}

static char *dupn(const char *s, size_t n) {
  char *p = malloc(n + 1);
  if (p) { memcpy(p, s, n); p[n] = 0; }
  return p;
}

/* pax extended header: records "<len> <key>=<value>\n", len counting the whole record. */
static al_status parse_pax(tar_state *t, const uint8_t *p, size_t n) {
  size_t pos = 0;
  while (pos < n) {
    if (p[pos] == 0) break;          /* some writers pad with NULs */
    size_t len = 0, i = pos;
    while (i < n && p[i] >= '0' && p[i] <= '9' && len < n + 1) len = len * 10 + (size_t)(p[i++] - '0');
    if (i == pos || i >= n || p[i] != ' ' || len < (i - pos) + 3 || len > n - pos ||
        p[pos + len - 1] != '\n')
      return al_seterr(AL_EFORMAT, "%s: entry %" PRId64 ": malformed pax record at byte %zu of "
                       "the extended header", t->nm, t->entry, pos);
    const uint8_t *kv = p + i + 1, *end = p + pos + len - 1;
    const uint8_t *eq = memchr(kv, '=', (size_t)(end - kv));
    if (!eq)
      return al_seterr(AL_EFORMAT, "%s: entry %" PRId64 ": pax record without '=' at byte %zu",
                       t->nm, t->entry, pos);
    size_t klen = (size_t)(eq - kv), vlen = (size_t)(end - eq - 1);
    if (klen == 4 && memcmp(kv, "path", 4) == 0) {
      free(t->paxpath);
      t->paxpath = dupn((const char *)eq + 1, vlen);
      if (!t->paxpath) return al_seterr(AL_ENOMEM, "%s: out of memory", t->nm);
    } else if (klen == 4 && memcmp(kv, "size", 4) == 0) {
      uint64_t v = 0;
      size_t k = 0;
      for (; k < vlen && eq[1 + k] >= '0' && eq[1 + k] <= '9'; k++) {
        if (v > (UINT64_MAX - 9) / 10) { k = 0; break; }
        v = v * 10 + (uint64_t)(eq[1 + k] - '0');
      }
      if (k == 0 || k != vlen || v > INT64_MAX)
        return al_seterr(AL_EFORMAT, "%s: entry %" PRId64 ": bad pax size '%.*s'", t->nm,
                         t->entry, (int)(vlen < 40 ? vlen : 40), (const char *)eq + 1);
      t->paxsize = (int64_t)v;
    }
    pos += len;
  }
  return AL_OK;
}

static int all_zero(const uint8_t *b, size_t n) {
  for (size_t i = 0; i < n; i++) if (b[i]) return 0;
  return 1;
}

static al_status run(tar_state *t, al_tar_fn fn, void *ud) {
  uint8_t h[BLOCK];
  char name[100 + 1 + 155 + 1], ename_buf[260];
  for (;; t->entry++) {
    size_t got;
    al_status st = al_gz_read(t->f, h, BLOCK, &got);
    if (st) return st;
    if (got == 0) {
      if (t->entry == 0) return al_seterr(AL_EFORMAT, "%s: empty file, not a tar archive", t->nm);
      return al_seterr(AL_EIO, "%s: truncated: the archive ends after %" PRId64 " entries "
                       "(last file '%s') without its end-of-archive block", t->nm, t->entry, t->prev);
    }
    if (got < BLOCK && t->entry == 0)
      return al_seterr(AL_EFORMAT, "%s: not a tar archive: %zu bytes, less than one 512-byte "
                       "header", t->nm, got);
    if (got < BLOCK)
      return al_seterr(AL_EIO, "%s: truncated: %zu bytes of a 512-byte header block (entry "
                       "%" PRId64 ", after '%s')", t->nm, got, t->entry, t->prev);
    if (all_zero(h, BLOCK)) {
      if (t->longname || t->paxpath || t->paxsize >= 0)
        return al_seterr(AL_EFORMAT, "%s: a long-name or pax header at the end of the archive "
                         "is not followed by a file", t->nm);
      uint64_t rest;   /* the second zero block and record padding; read for the gzip CRC */
      return al_gz_skip(t->f, UINT64_MAX, &rest);
    }
    /* checksum: the byte sum with the checksum field read as spaces; old tars summed
     * signed chars, so accept either. */
    uint64_t stored = 0;
    uint32_t usum = 0;
    int32_t ssum = 0;
    for (int i = 0; i < BLOCK; i++) {
      uint8_t c = (i >= 148 && i < 156) ? ' ' : h[i];
      usum += c;
      ssum += (int8_t)c;
    }
    if (!parse_num(h + 148, 8, &stored) || (stored != usum && (int64_t)stored != ssum)) {
      if (t->entry == 0)
        return al_seterr(AL_EFORMAT, "%s: not a tar archive: the first header's checksum does "
                         "not match (stored field '%.8s', computed %o)", t->nm,
                         (const char *)h + 148, usum);
      return al_seterr(AL_EFORMAT, "%s: corrupt header of entry %" PRId64 " (after '%s'): "
                       "checksum mismatch (stored %" PRIo64 ", computed %o)", t->nm, t->entry,
                       t->prev, stored, usum);
    }
    int posix = memcmp(h + 257, "ustar\0", 6) == 0;   /* GNU is "ustar  \0": no prefix */
    char nm100[101], prefix[156];
    field_str(nm100, h, 100);
    field_str(prefix, h + 345, 155);
    if (posix && prefix[0]) snprintf(name, sizeof name, "%s/%s", prefix, nm100);
    else memcpy(name, nm100, sizeof nm100);
    const char *ename = t->paxpath ? t->paxpath : t->longname ? t->longname : name;
    snprintf(ename_buf, sizeof ename_buf, "%s", ename);
    uint64_t size;
    if (!parse_num(h + 124, 12, &size))
      return al_seterr(AL_EFORMAT, "%s: entry %" PRId64 " '%s': bad size field (bytes %02x %02x "
                       "%02x ... %02x)", t->nm, t->entry, ename_buf, h[124], h[125], h[126], h[135]);
    if (t->paxsize >= 0) size = (uint64_t)t->paxsize;
    char type = (char)h[156];
    switch (type) {
      case 'L': case 'x': {
        if (size > MAX_META)
          return al_seterr(AL_EFORMAT, "%s: entry %" PRId64 ": %s header of %" PRIu64 " bytes "
                           "(more than %u): corrupt archive", t->nm, t->entry,
                           type == 'L' ? "GNU long-name" : "pax", size, MAX_META);
        st = read_member(t, size, type == 'L' ? "././@LongLink" : "pax header");
        if (st) return st;
        if (type == 'L') {
          free(t->longname);
          t->longname = dupn((const char *)t->buf, strnlen((const char *)t->buf, (size_t)size));
          if (!t->longname) return al_seterr(AL_ENOMEM, "%s: out of memory", t->nm);
        } else {
          st = parse_pax(t, t->buf, (size_t)size);
          if (st) return st;
        }
        continue;   /* applies to the next header */
      }
      case 'K': case 'g': case 'V':   /* long link name, pax global, volume label */
        st = skip_member(t, size, ename_buf);
        if (st) return st;
        if (type == 'K') continue;
        break;
      case 'S':
        return al_seterr(AL_EFORMAT, "%s: entry %" PRId64 " '%s' is a GNU sparse file, which is "
                         "not supported", t->nm, t->entry, ename_buf);
      case '0': case '\0': case '7': {
        st = read_member(t, size, ename_buf);
        if (st) return st;
        set_prev(t, ename);
        int stop = fn(ud, ename, t->buf, (size_t)size);
        clear_ext(t);
        if (stop) return AL_OK;
        continue;
      }
      case '1': case '2': case '3': case '4': case '5': case '6':
        break;   /* links, devices, directories, FIFOs: no data blocks */
      default:
        st = skip_member(t, size, ename_buf);   /* unknown types: skip their data */
        if (st) return st;
        break;
    }
    clear_ext(t);
  }
}

al_status al_tar_foreach_gz(al_gz *f, al_tar_fn fn, void *ud) {
  AL_NEED(f, "al_tar_foreach_gz", "the stream");
  if (!fn) return al_seterr(AL_EINVAL, "%s: al_tar_foreach: callback is NULL", al_gz_name(f));
  tar_state t;
  memset(&t, 0, sizeof t);
  t.f = f;
  t.nm = al_gz_name(f);
  t.paxsize = -1;
  strcpy(t.prev, "(none)");
  al_status st = run(&t, fn, ud);
  clear_ext(&t);
  al_free(t.buf, t.cap);
  return st;
}

al_status al_tar_foreach(const char *path, al_tar_fn fn, void *ud) {
  al_gz *f;
  al_status st = al_gz_open(path, &f);
  if (st) return st;
  st = al_tar_foreach_gz(f, fn, ud);
  al_gz_close(f);
  return st;
}

al_status al_tar_foreach_memory(const void *data, size_t size, const char *name,
                                al_tar_fn fn, void *ud) {
  al_gz *f;
  al_status st = al_gz_open_memory(data, size, name, &f);
  if (st) return st;
  st = al_tar_foreach_gz(f, fn, ud);
  al_gz_close(f);
  return st;
}
