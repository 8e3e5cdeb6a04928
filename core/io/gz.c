/* core/io/gz.c -- a gzip-or-plain input stream over a file or a memory buffer.
 *
 * Pure C11 + zlib (inflate directly, not gzread, so that memory buffers -- the fuzz
 * targets' input -- and files run through the same code). Gzip is detected by its magic
 * (1f 8b 08), not by the file name. Concatenated members are one stream; anything after
 * the last member is an error, and so are a bad CRC/ISIZE and a member cut short.
 * Every error message starts with the stream's name. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "attnlab/io.h"
#include "internal.h"
#include "../util/need.h"

#define IN_CAP (256u << 10)    /* compressed input buffer (file sources) */
#define OUT_CAP (256u << 10)   /* inflated output buffer: small reads come from here */
#define MEM_CHUNK (1u << 30)   /* z_stream counts are 32-bit: feed memory in 1 GiB pieces */
#define DEFLATE_MAX_RATIO 1032u

struct al_gz {
  char *name;
  FILE *fp;                    /* file source, or NULL for memory */
  const uint8_t *mem;          /* memory source */
  uint64_t src_size;           /* source bytes in total (UINT64_MAX: unknown) */
  uint64_t src_fed;            /* source bytes handed to zlib or to the caller */
  int src_eof;
  int gz;
  z_stream zs;
  int zinit;
  int member_done;             /* inflate said Z_STREAM_END; next member or the end? */
  uint8_t *in;                 /* file sources: compressed input buffer */
  uint8_t *out;                /* gzip: inflated bytes not yet delivered ... */
  size_t out_pos, out_len;     /* ... are out[out_pos .. out_len) */
  uint64_t pos;                /* decompressed bytes delivered (updated as al_gz_read returns) */
  uint64_t inflated;           /* decompressed bytes inflate has produced, for messages: pos lags
                                  it within a read (a truncated file said "0 bytes decompressed"
                                  after a first read had inflated megabytes) */
  uint32_t isize;              /* gzip trailer of the last member (a hint) */
  int eof;
  al_status err;               /* sticky */
  char errmsg[512];
};

static al_status fail(al_gz *f, al_status st, const char *fmt, const char *detail) {
  /* Keep a copy so a later call on the broken stream reports the same message. */
  snprintf(f->errmsg, sizeof f->errmsg, fmt, f->name, detail ? detail : "");
  f->err = st;
  return al_seterr(st, "%s", f->errmsg);
}

static al_status sticky(al_gz *f) { return al_seterr(f->err, "%s", f->errmsg); }

static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

/* Bytes of source not yet handed on (0 when unknown and at EOF). */
static uint64_t src_left(const al_gz *f) {
  if (f->src_size == UINT64_MAX) return UINT64_MAX;
  return f->src_size > f->src_fed ? f->src_size - f->src_fed : 0;
}

/* Make zs.avail_in >= k (k small) unless the source ends first. For memory sources the
 * pending input is contiguous with what follows, so it is extended in place. */
static al_status need_input(al_gz *f, unsigned k) {
  z_stream *zs = &f->zs;
  while (zs->avail_in < k && !f->src_eof) {
    if (f->mem) {
      uint64_t left = src_left(f);
      if (left == 0) { f->src_eof = 1; break; }
      if (zs->avail_in == 0) zs->next_in = (Bytef *)(f->mem + f->src_fed);
      uint64_t room = (uint64_t)MEM_CHUNK - zs->avail_in;
      uint64_t take = left < room ? left : room;
      zs->avail_in += (uInt)take;
      f->src_fed += take;
    } else {
      if (zs->avail_in > 0 && zs->next_in != f->in) memmove(f->in, zs->next_in, zs->avail_in);
      zs->next_in = f->in;
      size_t got = fread(f->in + zs->avail_in, 1, IN_CAP - zs->avail_in, f->fp);
      if (got == 0) {
        if (ferror(f->fp)) return fail(f, AL_EIO, "%s: read error: %s", strerror(errno));
        f->src_eof = 1;
      }
      zs->avail_in += (uInt)got;
      f->src_fed += got;
    }
  }
  return AL_OK;
}

static void fmt_u64(char *buf, size_t cap, const char *fmt, uint64_t a, uint64_t b) {
  snprintf(buf, cap, fmt, (unsigned long long)a, (unsigned long long)b);
}

/* Inflate into dst (up to cap bytes); *got is 0 only at the end of the stream. */
static al_status inflate_some(al_gz *f, uint8_t *dst, size_t cap, size_t *got) {
  z_stream *zs = &f->zs;
  char detail[200];
  *got = 0;
  if (cap > UINT_MAX) cap = UINT_MAX;
  while (*got == 0) {
    if (f->member_done) {
      al_status st = need_input(f, 3);
      if (st) return st;
      if (zs->avail_in == 0) { f->eof = 1; return AL_OK; }
      if (zs->avail_in >= 3 && zs->next_in[0] == 0x1f && zs->next_in[1] == 0x8b &&
          zs->next_in[2] == 8) {
        if (inflateReset(zs) != Z_OK) return fail(f, AL_EFORMAT, "%s: inflateReset failed%s", "");
        f->member_done = 0;
        continue;
      }
      uint64_t left = src_left(f);
      uint64_t trailing = left == UINT64_MAX ? 0 : left + zs->avail_in;
      fmt_u64(detail, sizeof detail, "%llu bytes of trailing garbage after the gzip data "
              "(%llu bytes decompressed)", trailing, f->inflated);
      return fail(f, AL_EFORMAT, "%s: %s", detail);
    }
    if (zs->avail_in == 0) {
      al_status st = need_input(f, 1);
      if (st) return st;
      if (zs->avail_in == 0) {
        fmt_u64(detail, sizeof detail, "truncated gzip data: the compressed stream ends "
                "after %llu bytes (%llu bytes decompressed)", f->src_fed, f->inflated);
        return fail(f, AL_EIO, "%s: %s", detail);
      }
    }
    zs->next_out = dst;
    zs->avail_out = (uInt)cap;
    int r = inflate(zs, Z_NO_FLUSH);
    *got = cap - zs->avail_out;
    f->inflated += *got;
    switch (r) {
      case Z_OK: break;
      case Z_BUF_ERROR:   /* no progress: fine if it just needs input (the loop refills) */
        if (zs->avail_in == 0) break;
        return fail(f, AL_EFORMAT, "%s: corrupt gzip data (%s)", "inflate made no progress");
      case Z_STREAM_END: f->member_done = 1; break;
      case Z_MEM_ERROR: return fail(f, AL_ENOMEM, "%s: out of memory in inflate%s", "");
      case Z_NEED_DICT: return fail(f, AL_EFORMAT, "%s: corrupt gzip data (%s)", "needs a dictionary");
      default: {
        char m[160];
        uint64_t at = f->src_fed - zs->avail_in;
        snprintf(m, sizeof m, "%s at compressed byte %llu", zs->msg ? zs->msg : "inflate error",
                 (unsigned long long)at);
        return fail(f, AL_EFORMAT, "%s: corrupt gzip data (%s)", m);
      }
    }
  }
  return AL_OK;
}

static al_gz *gz_new(const char *name) {
  al_gz *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  f->name = dupstr(name);
  if (!f->name) { free(f); return NULL; }
  return f;
}

/* Detect gzip from the first bytes and set the stream up. */
static al_status gz_start(al_gz *f, const uint8_t *head, size_t nhead) {
  if (nhead >= 3 && head[0] == 0x1f && head[1] == 0x8b && head[2] == 8) {
    f->gz = 1;
    f->out = malloc(OUT_CAP);
    if (!f->out) return al_seterr(AL_ENOMEM, "%s: out of memory", f->name);
    if (inflateInit2(&f->zs, 16 + MAX_WBITS) != Z_OK)
      return al_seterr(AL_ENOMEM, "%s: inflateInit2 failed", f->name);
    f->zinit = 1;
  }
  return AL_OK;
}

al_status al_gz_open(const char *path, al_gz **out) {
  AL_NEED(out, "al_gz_open", "out");
  *out = NULL;
  if (!path) return al_seterr(AL_EINVAL, "al_gz_open: path is NULL");
  FILE *fp;
  uint64_t fsize;
  al_status ost = al_io_open_regular_(path, &fp, &fsize);   /* never a FIFO or a device */
  if (ost) return ost;
  al_gz *f = gz_new(path);
  if (!f) { fclose(fp); return al_seterr(AL_ENOMEM, "%s: out of memory", path); }
  f->fp = fp;
  f->src_size = fsize;
  f->in = malloc(IN_CAP);
  if (!f->in) { al_gz_close(f); return al_seterr(AL_ENOMEM, "%s: out of memory", path); }
  /* Peek at the first bytes through the input buffer; plain reads consume it first. */
  f->zs.next_in = f->in;
  f->zs.avail_in = 0;
  al_status st = need_input(f, 3);
  if (st == AL_OK) st = gz_start(f, f->in, f->zs.avail_in);
  if (st == AL_OK && f->gz && f->src_size != UINT64_MAX && f->src_size >= 18) {
    unsigned char t[4];
    long long end = (long long)f->src_size;
    if (fseeko(fp, (off_t)(end - 4), SEEK_SET) == 0 && fread(t, 1, 4, fp) == 4)
      f->isize = (uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24;
    if (fseeko(fp, (off_t)f->src_fed, SEEK_SET) != 0)
      st = al_seterr(AL_EIO, "%s: cannot seek: %s", path, strerror(errno));
  }
  if (st) { al_gz_close(f); return st; }
  *out = f;
  return AL_OK;
}

al_status al_gz_open_memory(const void *data, size_t size, const char *name, al_gz **out) {
  AL_NEED(out, "al_gz_open_memory", "out");
  *out = NULL;
  if (!name) name = "<memory>";
  if (!data && size) return al_seterr(AL_EINVAL, "%s: data is NULL with size %zu", name, size);
  al_gz *f = gz_new(name);
  if (!f) return al_seterr(AL_ENOMEM, "%s: out of memory", name);
  f->mem = data ? data : (const uint8_t *)"";
  f->src_size = size;
  al_status st = gz_start(f, f->mem, size);
  if (st) { al_gz_close(f); return st; }
  if (f->gz && size >= 18) {
    const uint8_t *t = f->mem + size - 4;
    f->isize = (uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24;
  }
  *out = f;
  return AL_OK;
}

/* Plain sources: hand over pending peeked bytes first, then read directly. */
static al_status plain_read(al_gz *f, uint8_t *dst, size_t n, size_t *got) {
  size_t done = 0;
  if (f->mem) {
    uint64_t left = src_left(f);
    size_t take = left < n ? (size_t)left : n;
    if (take) memcpy(dst, f->mem + f->src_fed, take);
    f->src_fed += take;
    done = take;
  } else {
    z_stream *zs = &f->zs;
    if (zs->avail_in) {
      size_t take = zs->avail_in < n ? zs->avail_in : n;
      memcpy(dst, zs->next_in, take);
      zs->next_in += take;
      zs->avail_in -= (uInt)take;
      done = take;
    }
    while (done < n && !f->src_eof) {
      size_t r = fread(dst + done, 1, n - done, f->fp);
      if (r == 0) {
        if (ferror(f->fp)) return fail(f, AL_EIO, "%s: read error: %s", strerror(errno));
        f->src_eof = 1;
      }
      f->src_fed += r;
      done += r;
    }
  }
  if (done < n) f->eof = 1;
  *got = done;
  return AL_OK;
}

al_status al_gz_read(al_gz *f, void *buf, size_t n, size_t *got) {
  size_t dummy;
  if (!got) got = &dummy;
  *got = 0;
  AL_NEED(f, "al_gz_read", "the stream");
  if (n > 0) AL_NEED(buf, al_gz_name(f), "al_gz_read: buf");
  if (f->err) return sticky(f);
  if (n == 0) return AL_OK;
  uint8_t *dst = buf;
  size_t done = 0;
  if (!f->gz) {
    al_status st = plain_read(f, dst, n, &done);
    f->pos += done;
    *got = done;
    return st;
  }
  while (done < n) {
    if (f->out_pos < f->out_len) {
      size_t take = f->out_len - f->out_pos;
      if (take > n - done) take = n - done;
      memcpy(dst + done, f->out + f->out_pos, take);
      f->out_pos += take;
      done += take;
      continue;
    }
    if (f->eof) break;
    size_t g;
    al_status st;
    if (n - done >= OUT_CAP) {   /* big reads inflate straight into the caller's buffer */
      st = inflate_some(f, dst + done, n - done, &g);
      done += g;
    } else {
      st = inflate_some(f, f->out, OUT_CAP, &g);
      f->out_pos = 0;
      f->out_len = g;
    }
    if (st) { f->pos += done; *got = done; return st; }
  }
  f->pos += done;
  *got = done;
  return AL_OK;
}

al_status al_gz_skip(al_gz *f, uint64_t n, uint64_t *skipped) {
  uint64_t dummy;
  if (!skipped) skipped = &dummy;
  *skipped = 0;
  AL_NEED(f, "al_gz_skip", "the stream");
  if (f->err) return sticky(f);
  if (!f->gz && f->mem) {
    uint64_t left = src_left(f);
    uint64_t take = left < n ? left : n;
    f->src_fed += take;
    f->pos += take;
    *skipped = take;
    if (take < n) f->eof = 1;
    return AL_OK;
  }
  uint8_t tmp[16384];
  while (*skipped < n) {
    size_t want = n - *skipped < sizeof tmp ? (size_t)(n - *skipped) : sizeof tmp;
    size_t g;
    al_status st = al_gz_read(f, tmp, want, &g);
    *skipped += g;
    if (st) return st;
    if (g < want) break;
  }
  return AL_OK;
}

uint64_t al_gz_tell(const al_gz *f) { return f->pos; }

uint64_t al_gz_max_remaining(const al_gz *f) {
  uint64_t left = src_left(f);
  if (left == UINT64_MAX) return UINT64_MAX;
  if (!f->gz) return left + (f->mem ? 0 : f->zs.avail_in);
  left += f->zs.avail_in;
  uint64_t buffered = f->out_len - f->out_pos;
  if (left > (UINT64_MAX - buffered) / DEFLATE_MAX_RATIO) return UINT64_MAX;
  return left * DEFLATE_MAX_RATIO + buffered;
}

uint64_t al_gz_size_hint(const al_gz *f) {
  uint64_t bound = al_gz_max_remaining(f);
  uint64_t total = f->gz ? (uint64_t)f->isize : bound;
  if (bound != UINT64_MAX && total > f->pos + bound) total = f->pos + bound;
  return total;
}

int al_gz_is_gzip(const al_gz *f) { return f->gz; }
const char *al_gz_name(const al_gz *f) { return f->name; }

void al_gz_close(al_gz *f) {
  if (!f) return;
  if (f->zinit) inflateEnd(&f->zs);
  if (f->fp) fclose(f->fp);
  free(f->in);
  free(f->out);
  free(f->name);
  free(f);
}

al_status al_read_file(const char *path, int gunzip, void **data, size_t *size) {
  AL_NEED(data, "al_read_file", "data"); AL_NEED(size, "al_read_file", "size");
  *data = NULL;
  *size = 0;
  al_gz *f = NULL;
  al_status st;
  if (gunzip) {
    st = al_gz_open(path, &f);
  } else {
    /* Raw read: a plain stream that never looks for the gzip magic. */
    FILE *fp;
    uint64_t fsize;
    st = al_io_open_regular_(path, &fp, &fsize);
    if (st) return st;
    f = gz_new(path);
    if (!f) { fclose(fp); return al_seterr(AL_ENOMEM, "%s: out of memory", path); }
    f->fp = fp;
    f->src_size = fsize;
  }
  if (st) return st;
  /* Allocate the size hint (exact for plain files and single-member gzip) and fill it;
   * a 1-byte probe then confirms the end, so the common case is one allocation and no
   * copy. Longer data (multi-member gzip, a pipe) grows the buffer by doubling, and the
   * result is trimmed to the exact size. */
  uint64_t hint = al_gz_size_hint(f);
  if (hint == UINT64_MAX || hint > ((uint64_t)1 << 40)) hint = 1 << 20;
  size_t cap = (size_t)hint, len = 0;
  uint8_t *buf = al_malloc(cap);
  if (!buf) { al_gz_close(f); return al_seterr(AL_ENOMEM, "%s: out of memory (%zu bytes)", path, cap); }
  for (;;) {
    size_t g;
    st = al_gz_read(f, buf + len, cap - len, &g);
    len += g;
    if (st == AL_OK && len == cap) {   /* full: is there more? */
      uint8_t probe;
      st = al_gz_read(f, &probe, 1, &g);
      if (st == AL_OK && g == 1) {
        size_t ncap = cap ? cap * 2 : 4096;
        uint8_t *nb = ncap > cap ? al_malloc(ncap) : NULL;
        if (!nb) {
          al_free(buf, cap);
          al_gz_close(f);
          return al_seterr(AL_ENOMEM, "%s: out of memory (%zu bytes)", path, ncap);
        }
        if (len) memcpy(nb, buf, len);
        al_free(buf, cap);
        buf = nb;
        cap = ncap;
        buf[len++] = probe;
        continue;
      }
    }
    if (st) { al_free(buf, cap); al_gz_close(f); return st; }
    break;   /* a short read (or an empty probe) is the end of the stream */
  }
  al_gz_close(f);
  if (len != cap) {
    uint8_t *nb = al_malloc(len);
    if (!nb) { al_free(buf, cap); return al_seterr(AL_ENOMEM, "%s: out of memory", path); }
    if (len) memcpy(nb, buf, len);
    al_free(buf, cap);
    buf = nb;
  }
  *data = buf;
  *size = len;
  return AL_OK;
}
