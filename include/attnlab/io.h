/* attnlab/io.h -- file decoders: gzip streams, IDX, CIFAR-10 binary, tar(.gz), safetensors,
 * and atomic file writes.
 *
 * Pure C11 + zlib + cJSON; nothing here knows about Lua. Every function returns an
 * al_status; on failure al_errmsg() holds a message that starts with the file name (the
 * path as given, or the `name` passed to a *_memory variant) and says what is wrong, e.g.
 *   "t10k-images-idx3-ubyte.gz: truncated: header says 10000 x 28 x 28 (7840000 data
 *    bytes after the 16-byte header), the file has only 1234"
 * Files are untrusted input: no header field is used before it is checked against what
 * the file can hold, so a corrupt file gives an error, never a crash or a huge allocation.
 * Every decoder has a *_memory variant over a byte buffer (the fuzz targets call those);
 * the file variants are the same code reading from a file stream.
 *
 * gzip is transparent everywhere except safetensors: a file or buffer that starts with the
 * gzip magic (1f 8b 08) is inflated, anything else is read as is. Concatenated gzip
 * members are read as one stream; bytes after the last member that are not another
 * member are an error ("trailing garbage"), as are bad CRCs and truncated members.
 *
 * Memory: buffers handed to the caller are allocated with al_malloc and released by the
 * matching *_free / *_close function (or al_free with the size stated in the comment).
 * Pointer arguments: out slots, streams and handles are required (NULL is AL_EINVAL naming
 * it); data may be NULL only with size 0; the comments name the other optional ones. */
#ifndef ATTNLAB_IO_H
#define ATTNLAB_IO_H

#include <stddef.h>
#include <stdint.h>

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
 * gzip-or-plain input stream (core/io/gz.c) */

typedef struct al_gz al_gz;

/* Open `path` for reading; inflates if it starts with the gzip magic. Only a regular file (or a
 * symbolic link to one): a FIFO, a device or a directory is refused, naming it, without
 * blocking (al_read_file, and every reader built on these, likewise). */
al_status al_gz_open(const char *path, al_gz **out);
/* The same over `size` bytes at `data` (not copied: must outlive the stream). `name` is
 * used in error messages (NULL: "<memory>"). */
al_status al_gz_open_memory(const void *data, size_t size, const char *name, al_gz **out);
/* Read up to n bytes. *got < n only at the end of the stream (then *got may be 0); got may be
 * NULL. Errors (corrupt/truncated gzip, read errors, trailing garbage) are sticky. */
al_status al_gz_read(al_gz *f, void *buf, size_t n, size_t *got);
/* Skip up to n bytes (UINT64_MAX: to the end); *skipped < n only at the end (skipped may be NULL). */
al_status al_gz_skip(al_gz *f, uint64_t n, uint64_t *skipped);
/* Decompressed bytes delivered (read or skipped) so far. */
uint64_t al_gz_tell(const al_gz *f);
/* An upper bound on the decompressed bytes still to come: exact for plain input, and
 * 1032 x the compressed bytes left for gzip (deflate's maximum ratio); UINT64_MAX when
 * unknown (a pipe). Decoders use it to refuse allocations the file cannot fill. */
uint64_t al_gz_max_remaining(const al_gz *f);
/* A likely total decompressed size: exact for plain input, the gzip trailer's ISIZE for
 * gzip (correct for a single member under 4 GiB), capped by the bound above. */
uint64_t al_gz_size_hint(const al_gz *f);
int al_gz_is_gzip(const al_gz *f);              /* 1 if the input is gzip-compressed */
const char *al_gz_name(const al_gz *f);
void al_gz_close(al_gz *f);                     /* NULL is fine */

/* Whole file into one al_malloc'ed buffer (gunzipped if gunzip != 0 and the file is
 * gzip). Free with al_free(*data, *size). An empty file gives a 0-byte buffer. */
al_status al_read_file(const char *path, int gunzip, void **data, size_t *size);

/* ---------------------------------------------------------------------------------------
 * Atomic writes (core/io/atomic.c): a temporary file "<path>.tmp.XXXXXX" in the same folder,
 * written, fsync'ed, renamed over `path`, then the folder is fsync'ed. Readers see the old
 * file or the new one, never a partial one; a crash leaves at most the temporary file.
 * Permissions are 0666 minus the umask, as fopen would give. A `path` that is a symbolic link is
 * followed: the temporary goes next to the file it resolves to and replaces that file, and the
 * link stays (a dangling link gets its target created). */

al_status al_write_file_atomic(const char *path, const void *data, size_t size);

/* Whether `path` may be replaced that way: AL_OK when nothing is there yet or it is a regular
 * file (a symbolic link counts as what it points to); else AL_EINVAL naming what is there (a
 * folder, a character device such as /dev/null, a FIFO, ...), since the rename would put a
 * regular file in its place -- and a FIFO opened to test it would block. al_afile_open and
 * al_write_file_atomic check this first. */
al_status al_atomic_replaceable(const char *path);
/* What is at `path` when it is there and is not a regular file -- "a directory", "a FIFO", "a
 * character device", ... (a symbolic link counts as what it points to) -- else NULL (a regular
 * file, or nothing). stat only: never opens it (opening a FIFO blocks). */
const char *al_file_kind(const char *path);

/* Streaming form for large files: open, write pieces, then commit (rename into place) or
 * abort (delete the temporary). Both free the handle; after a failed write, commit
 * reports that failure and removes the temporary. */
typedef struct al_afile al_afile;
al_status al_afile_open(const char *path, al_afile **out);
al_status al_afile_write(al_afile *a, const void *data, size_t size);
al_status al_afile_commit(al_afile *a);
void al_afile_abort(al_afile *a);               /* NULL is fine */

/* ---------------------------------------------------------------------------------------
 * IDX (core/io/idx.c): the MNIST family format. Big-endian header: two zero bytes, a type
 * byte, ndim, then ndim u32 sizes, then the data row-major. Only type 0x08 (uint8) is
 * accepted; the other IDX types (0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E
 * float64) are rejected by name. ndim must be 1..4. Data shorter than the header's size
 * is "truncated"; data longer is an error too ("trailing bytes"), because it nearly
 * always means a header count that does not match the data. Zero-size dims are allowed. */

typedef struct al_idx {
  uint8_t type;          /* always 0x08 on success */
  int ndim;              /* 1..4 */
  int64_t dims[4];       /* dims[0] is the record count (images, labels) */
  uint8_t *data;         /* prod(dims) bytes, al_malloc'ed */
  size_t size;           /* prod(dims) */
} al_idx;

al_status al_idx_read(const char *path, al_idx *out);
al_status al_idx_read_memory(const void *data, size_t size, const char *name, al_idx *out);
al_status al_idx_read_gz(al_gz *f, al_idx *out);     /* from an open stream (to its end) */
void al_idx_free(al_idx *x);                         /* zeroes *x; safe on a zeroed struct */

/* ---------------------------------------------------------------------------------------
 * CIFAR-10 binary batches (core/io/cifar.c): records of 1 label byte (0..9) + 3072 pixel
 * bytes (1024 red, 1024 green, 1024 blue; each plane 32x32 row-major, top row first). The
 * (decompressed) size must be a non-zero multiple of 3073 and every label < 10. */

#define AL_CIFAR_RECORD 3073
#define AL_CIFAR_PIXELS 3072

typedef struct al_cifar {
  int64_t count;         /* records */
  uint8_t *labels;       /* count bytes, 0..9; al_free(labels, count) */
  uint8_t *pixels;       /* count x 3 x 32 x 32 (CHW planes as stored); al_free(.., count*3072) */
} al_cifar;

al_status al_cifar_read(const char *path, al_cifar *out);
al_status al_cifar_read_memory(const void *data, size_t size, const char *name, al_cifar *out);
al_status al_cifar_read_gz(al_gz *f, al_cifar *out);
void al_cifar_free(al_cifar *c);                     /* zeroes *c; safe on a zeroed struct */

/* ---------------------------------------------------------------------------------------
 * tar and tar.gz (core/io/tar.c): streams the regular files of a ustar / GNU / pax tar
 * archive, in archive order, to a callback. Names: a pax 'x' header's "path" wins, then a
 * GNU 'L' long name, then the ustar prefix + "/" + name. Directories, links, devices,
 * FIFOs, GNU 'K'/'V' and pax global 'g' headers are skipped; pax "size" is honoured;
 * GNU sparse files ('S') are an error. Every header checksum is verified, and an archive
 * that ends before its end-of-archive zero block (or inside a header or a file) is
 * "truncated". Data after the end-of-archive block is read and ignored (so a gzip CRC is
 * still checked). */

/* Called once per regular file. `data` (size bytes, plus a NUL after them for
 * convenience) and `name` are valid only during the call. Return 0 to go on, non-zero to
 * stop early (al_tar_foreach then returns AL_OK; report your own errors through ud). */
typedef int (*al_tar_fn)(void *ud, const char *name, const uint8_t *data, size_t size);

al_status al_tar_foreach(const char *path, al_tar_fn fn, void *ud);
al_status al_tar_foreach_memory(const void *data, size_t size, const char *name,
                                al_tar_fn fn, void *ud);
al_status al_tar_foreach_gz(al_gz *f, al_tar_fn fn, void *ud);

/* ---------------------------------------------------------------------------------------
 * safetensors (core/io/safetensors_read.c, _write.c), as specified by huggingface/safetensors:
 *   u64 LE header size N (at most 100,000,000), N bytes of UTF-8 JSON starting with '{',
 *   then the byte buffer. The JSON maps tensor names to {"dtype","shape","data_offsets":
 *   [begin,end]} (offsets relative to the buffer) plus an optional "__metadata__"
 *   string->string map. Reading checks: no duplicate names; dtypes known; shapes of
 *   non-negative integers; end-begin == prod(shape) * dtype size (with overflow checks);
 *   sorted by offset, the ranges tile the buffer exactly (each begins where the previous
 *   ended: no gaps, no overlaps) and the last ends at the end of the file. Strings with
 *   a "\u0000" escape are refused (C strings cannot hold them).
 * Writing follows the reference serializer: tensors laid out by decreasing dtype
 * (the order of al_st_dtype below) then by name, the header compact JSON with
 * "__metadata__" first (its keys sorted), padded with spaces to a multiple of 8 bytes,
 * so every tensor starts 8-byte aligned. Files are read raw (never gunzipped). */

typedef enum {   /* in the reference implementation's order (increasing alignment) */
  AL_ST_BOOL = 0, AL_ST_U8, AL_ST_I8, AL_ST_F8_E5M2, AL_ST_F8_E4M3, AL_ST_I16, AL_ST_U16,
  AL_ST_F16, AL_ST_BF16, AL_ST_I32, AL_ST_U32, AL_ST_F32, AL_ST_F64, AL_ST_I64, AL_ST_U64,
  AL_ST_NDTYPE
} al_st_dtype;

#define AL_ST_MAX_HEADER 100000000u
#define AL_ST_MAXDIM AL_MAXDIM   /* shapes with more dims are rejected */

typedef struct al_st_entry {
  const char *name;
  al_st_dtype dtype;
  int ndim;                      /* 0 = scalar */
  int64_t shape[AL_ST_MAXDIM];
  const void *data;              /* nbytes bytes, little-endian, row-major; may be unaligned */
  size_t nbytes;                 /* prod(shape) * al_st_dtype_size(dtype) */
  const char *file;              /* the file it was read from, for messages (the reader sets it;
                                    NULL: "safetensors"); the writer ignores it */
} al_st_entry;

typedef struct al_st_meta {
  const char *key;
  const char *value;
} al_st_meta;

typedef struct al_st_file {
  const char *name;              /* path or name, for messages */
  int n;                         /* tensors, sorted by name (al_st_find bisects) */
  al_st_entry *entries;
  int nmeta;                     /* __metadata__ pairs, sorted by key */
  al_st_meta *meta;
  uint64_t header_size;          /* N */
  /* private */
  void *buf_; size_t size_; int owns_; size_t arena_size_;
} al_st_file;

size_t al_st_dtype_size(al_st_dtype dt);              /* bytes per element; 0 if invalid */
const char *al_st_dtype_name(al_st_dtype dt);         /* "F32", ...; "?" if invalid */
int al_st_dtype_from_name(const char *s);             /* -1 if unknown */

al_status al_st_open(const char *path, al_st_file **out);
/* Parses `size` bytes at `data`; entries point into `data` (not copied: keep it alive
 * while the file is open). */
al_status al_st_open_memory(const void *data, size_t size, const char *name, al_st_file **out);
void al_st_close(al_st_file *f);                       /* NULL is fine */
const al_st_entry *al_st_find(const al_st_file *f, const char *name);  /* NULL if absent */
const char *al_st_meta_get(const al_st_file *f, const char *key);      /* NULL if absent */
int64_t al_st_numel(const al_st_entry *e);

/* Convert an entry to float32 (from F32, F64, F16, BF16; F64 rounds to nearest even,
 * F16/BF16 are exact, NaN/Inf kept) or to int64 (from I64, I32, I16, I8, U32, U16, U8,
 * BOOL, and U64 values that fit). `out` holds al_st_numel(e) values. An entry made by hand is
 * checked first, as al_st_write checks it (dtype, ndim, shape, nbytes, data): AL_EINVAL. */
al_status al_st_to_f32(const al_st_entry *e, float *out);
al_status al_st_to_i64(const al_st_entry *e, int64_t *out);

/* Write n tensors and nmeta metadata pairs (meta may be NULL) atomically to `path`.
 * Each entry needs name, dtype, ndim, shape, data and nbytes == prod(shape)*size. Names
 * must be distinct, valid UTF-8 and not "__metadata__"; metadata keys distinct. */
al_status al_st_write(const char *path, const al_st_entry *entries, int n,
                      const al_st_meta *meta, int nmeta);
/* The same into an al_malloc'ed buffer: al_free(*data, *size). */
al_status al_st_write_memory(const al_st_entry *entries, int n, const al_st_meta *meta,
                             int nmeta, void **data, size_t *size);

#ifdef __cplusplus
}
#endif

#endif
