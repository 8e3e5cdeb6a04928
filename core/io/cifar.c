/* core/io/cifar.c -- CIFAR-10 binary batch decoder over an al_gz stream.
 *
 * Pure C11. Format (Krizhevsky 2009, "Learning Multiple Layers of Features from Tiny
 * Images", and the dataset page): records of 1 label byte then 3072 pixel bytes (R, G, B
 * planes of 32x32, row-major). Records are streamed into the label and pixel arrays,
 * which start at the size hint (exact for plain files and for single-member gzip) and
 * only grow for data that has really been read, so a lying gzip trailer cannot make us
 * allocate more than twice the real data. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/io.h"
#include "../util/need.h"

#define BLOCK_RECORDS 64

/* Resize both arrays to hold `ncap` records (count of them are kept). */
static int resize(al_cifar *c, int64_t *cap, int64_t ncap) {
  uint8_t *l = al_malloc((size_t)ncap);
  uint8_t *p = al_malloc((size_t)ncap * AL_CIFAR_PIXELS);
  if (!l || !p) {
    al_free(l, (size_t)ncap);
    al_free(p, (size_t)ncap * AL_CIFAR_PIXELS);
    return 0;
  }
  if (c->count) {
    memcpy(l, c->labels, (size_t)c->count);
    memcpy(p, c->pixels, (size_t)c->count * AL_CIFAR_PIXELS);
  }
  al_free(c->labels, (size_t)*cap);
  al_free(c->pixels, (size_t)*cap * AL_CIFAR_PIXELS);
  c->labels = l;
  c->pixels = p;
  *cap = ncap;
  return 1;
}

al_status al_cifar_read_gz(al_gz *f, al_cifar *out) {
  AL_NEED(out, "al_cifar_read_gz", "out"); AL_NEED(f, "al_cifar_read_gz", "the stream");
  memset(out, 0, sizeof *out);
  const char *nm = al_gz_name(f);
  const char *what = al_gz_is_gzip(f) ? "decompressed size" : "file size";
  uint64_t hint = al_gz_size_hint(f);
  int64_t cap = 0;
  uint64_t hint_rec = hint / AL_CIFAR_RECORD;
  if (hint_rec > ((uint64_t)1 << 36)) hint_rec = 16;     /* unknown (a pipe) */
  uint8_t *blk = malloc((size_t)BLOCK_RECORDS * AL_CIFAR_RECORD);
  if (!blk) return al_seterr(AL_ENOMEM, "%s: out of memory", nm);
  al_status st = AL_OK;
  if (hint_rec && !resize(out, &cap, (int64_t)hint_rec))
    st = al_seterr(AL_ENOMEM, "%s: out of memory for %" PRIu64 " records", nm, hint_rec);
  while (st == AL_OK) {
    size_t got;
    st = al_gz_read(f, blk, (size_t)BLOCK_RECORDS * AL_CIFAR_RECORD, &got);
    if (st) break;
    int64_t nrec = (int64_t)(got / AL_CIFAR_RECORD);
    size_t rem = got % AL_CIFAR_RECORD;
    if (out->count + nrec > cap) {
      int64_t ncap = cap * 2 > out->count + nrec ? cap * 2 : out->count + nrec + BLOCK_RECORDS;
      if (!resize(out, &cap, ncap)) {
        st = al_seterr(AL_ENOMEM, "%s: out of memory for %" PRId64 " records", nm, ncap);
        break;
      }
    }
    for (int64_t r = 0; r < nrec; r++) {
      const uint8_t *rec = blk + (size_t)r * AL_CIFAR_RECORD;
      if (rec[0] >= 10) {
        st = al_seterr(AL_EFORMAT, "%s: record %" PRId64 " (at byte %" PRId64 ") has label %d, "
                       "want 0..9: not a CIFAR-10 batch?", nm, out->count,
                       out->count * AL_CIFAR_RECORD, rec[0]);
        break;
      }
      out->labels[out->count] = rec[0];
      memcpy(out->pixels + (size_t)out->count * AL_CIFAR_PIXELS, rec + 1, AL_CIFAR_PIXELS);
      out->count++;
    }
    if (st) break;
    if (got < (size_t)BLOCK_RECORDS * AL_CIFAR_RECORD) {   /* end of stream */
      uint64_t total = (uint64_t)out->count * AL_CIFAR_RECORD + rem;
      if (rem)
        st = al_seterr(AL_EFORMAT, "%s: %s %" PRIu64 " is not a multiple of %d (1 label + 3072 "
                       "pixel bytes): %" PRId64 " whole records and %zu bytes left over; truncated?",
                       nm, what, total, AL_CIFAR_RECORD, out->count, rem);
      else if (out->count == 0)
        st = al_seterr(AL_EFORMAT, "%s: empty: no CIFAR records", nm);
      break;
    }
  }
  free(blk);
  if (st == AL_OK && cap != out->count) {   /* trim to the exact size */
    if (!resize(out, &cap, out->count))
      st = al_seterr(AL_ENOMEM, "%s: out of memory", nm);
  }
  if (st) {
    al_free(out->labels, (size_t)cap);
    al_free(out->pixels, (size_t)cap * AL_CIFAR_PIXELS);
    memset(out, 0, sizeof *out);
  }
  return st;
}

al_status al_cifar_read(const char *path, al_cifar *out) {
  AL_NEED(out, "al_cifar_read", "out");
  memset(out, 0, sizeof *out);
  al_gz *f;
  al_status st = al_gz_open(path, &f);
  if (st) return st;
  st = al_cifar_read_gz(f, out);
  al_gz_close(f);
  return st;
}

al_status al_cifar_read_memory(const void *data, size_t size, const char *name, al_cifar *out) {
  AL_NEED(out, "al_cifar_read_memory", "out");
  memset(out, 0, sizeof *out);
  al_gz *f;
  al_status st = al_gz_open_memory(data, size, name, &f);
  if (st) return st;
  st = al_cifar_read_gz(f, out);
  al_gz_close(f);
  return st;
}

void al_cifar_free(al_cifar *c) {
  if (!c) return;
  al_free(c->labels, (size_t)c->count);
  al_free(c->pixels, (size_t)c->count * AL_CIFAR_PIXELS);
  memset(c, 0, sizeof *c);
}
