/* core/io/idx.c -- IDX (MNIST-family) decoder over an al_gz stream.
 *
 * Pure C11. Format (LeCun et al., "THE MNIST DATABASE", file formats section): bytes 0-1
 * zero, byte 2 the element type, byte 3 ndim, then ndim big-endian u32 sizes, then the
 * data. Only uint8 (0x08) is accepted. The data size is checked against what the stream
 * can hold before anything is allocated, so a corrupt header cannot ask for gigabytes. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "attnlab/io.h"
#include "../util/need.h"

static const char *idx_type_name(int t) {
  switch (t) {
    case 0x08: return "uint8";
    case 0x09: return "int8";
    case 0x0B: return "int16";
    case 0x0C: return "int32";
    case 0x0D: return "float32";
    case 0x0E: return "float64";
  }
  return NULL;
}

/* "10000 images of 28x28", "60000 labels", "3 x 4 x 5 x 6 array". */
static void describe(char *buf, size_t cap, int ndim, const int64_t *d) {
  if (ndim == 1) snprintf(buf, cap, "%" PRId64 " labels", d[0]);
  else if (ndim == 3) snprintf(buf, cap, "%" PRId64 " images of %" PRId64 "x%" PRId64, d[0], d[1], d[2]);
  else {
    size_t k = 0;
    for (int i = 0; i < ndim && k < cap; i++)
      k += (size_t)snprintf(buf + k, cap - k, i ? " x %" PRId64 : "%" PRId64, d[i]);
    if (k < cap) snprintf(buf + k, cap - k, " array");
  }
}

al_status al_idx_read_gz(al_gz *f, al_idx *out) {
  AL_NEED(out, "al_idx_read_gz", "out"); AL_NEED(f, "al_idx_read_gz", "the stream");
  memset(out, 0, sizeof *out);
  const char *nm = al_gz_name(f);
  const char *what = al_gz_is_gzip(f) ? "the decompressed file" : "the file";
  uint8_t h[4 + 4 * 4];
  size_t got;
  al_status st = al_gz_read(f, h, 4, &got);
  if (st) return st;
  if (got == 0) return al_seterr(AL_EFORMAT, "%s: empty file, not an IDX file", nm);
  if (got < 4)
    return al_seterr(AL_EFORMAT, "%s: truncated: %zu bytes, an IDX header needs at least 8", nm, got);
  if (h[0] != 0 || h[1] != 0)
    return al_seterr(AL_EFORMAT, "%s: not an IDX file: magic bytes %02x %02x %02x %02x "
                     "(want 00 00 <type> <ndim>, e.g. 00 00 08 03)", nm, h[0], h[1], h[2], h[3]);
  int type = h[2], ndim = h[3];
  if (type != 0x08) {
    const char *tn = idx_type_name(type);
    if (tn)
      return al_seterr(AL_EFORMAT, "%s: IDX element type 0x%02X (%s) is not supported, "
                       "only 0x08 (uint8)", nm, type, tn);
    return al_seterr(AL_EFORMAT, "%s: not an IDX file: unknown element type 0x%02X", nm, type);
  }
  if (ndim < 1 || ndim > 4)
    return al_seterr(AL_EFORMAT, "%s: IDX ndim is %d, supported 1..4", nm, ndim);
  int hbytes = 4 + 4 * ndim;
  st = al_gz_read(f, h + 4, 4 * (size_t)ndim, &got);
  if (st) return st;
  if (got < 4 * (size_t)ndim)
    return al_seterr(AL_EFORMAT, "%s: truncated in the header: ndim %d needs a %d-byte header, "
                     "%s has %zu bytes", nm, ndim, hbytes, what, 4 + got);
  uint64_t need = 1;
  int overflow = 0;
  for (int i = 0; i < ndim; i++) {
    const uint8_t *p = h + 4 + 4 * i;
    uint64_t d = (uint64_t)p[0] << 24 | (uint64_t)p[1] << 16 | (uint64_t)p[2] << 8 | p[3];
    out->dims[i] = (int64_t)d;
    if (d && need > UINT64_MAX / d) overflow = 1;
    else need *= d;
  }
  char desc[160];
  describe(desc, sizeof desc, ndim, out->dims);
  if (overflow || need > (uint64_t)SIZE_MAX / 2) {
    memset(out, 0, sizeof *out);
    return al_seterr(AL_EFORMAT, "%s: header says %s: the data size overflows", nm, desc);
  }
  uint64_t bound = al_gz_max_remaining(f);
  if (need > bound) {   /* certainly truncated: count what is there for the message */
    uint64_t have;
    st = al_gz_skip(f, UINT64_MAX, &have);
    memset(out, 0, sizeof *out);
    if (st) return st;
    return al_seterr(AL_EIO, "%s: truncated: header says %s (%" PRIu64 " data bytes after the "
                     "%d-byte header), %s has only %" PRIu64, nm, desc, need, hbytes, what, have);
  }
  uint8_t *data = al_malloc((size_t)need);
  if (!data) {
    memset(out, 0, sizeof *out);
    return al_seterr(AL_ENOMEM, "%s: out of memory for %" PRIu64 " bytes (%s)", nm, need, desc);
  }
  st = al_gz_read(f, data, (size_t)need, &got);
  if (st == AL_OK && got < need)
    st = al_seterr(AL_EIO, "%s: truncated: header says %s (%" PRIu64 " data bytes after the "
                   "%d-byte header), %s has only %zu", nm, desc, need, hbytes, what, got);
  if (st == AL_OK) {   /* the end must follow (this also makes gzip check its CRC) */
    uint8_t extra;
    st = al_gz_read(f, &extra, 1, &got);
    if (st == AL_OK && got) {
      uint64_t more = 0;
      st = al_gz_skip(f, UINT64_MAX, &more);
      if (st == AL_OK)
        st = al_seterr(AL_EFORMAT, "%s: %" PRIu64 " trailing bytes after the data: header says "
                       "%s (%" PRIu64 " bytes); wrong count in the header?", nm, more + 1, desc, need);
    }
  }
  if (st) {
    al_free(data, (size_t)need);
    memset(out, 0, sizeof *out);
    return st;
  }
  out->type = (uint8_t)type;
  out->ndim = ndim;
  out->data = data;
  out->size = (size_t)need;
  return AL_OK;
}

al_status al_idx_read(const char *path, al_idx *out) {
  AL_NEED(out, "al_idx_read", "out");
  memset(out, 0, sizeof *out);
  al_gz *f;
  al_status st = al_gz_open(path, &f);
  if (st) return st;
  st = al_idx_read_gz(f, out);
  al_gz_close(f);
  return st;
}

al_status al_idx_read_memory(const void *data, size_t size, const char *name, al_idx *out) {
  AL_NEED(out, "al_idx_read_memory", "out");
  memset(out, 0, sizeof *out);
  al_gz *f;
  al_status st = al_gz_open_memory(data, size, name, &f);
  if (st) return st;
  st = al_idx_read_gz(f, out);
  al_gz_close(f);
  return st;
}

void al_idx_free(al_idx *x) {
  if (!x) return;
  if (x->data) al_free(x->data, x->size);
  memset(x, 0, sizeof *x);
}
