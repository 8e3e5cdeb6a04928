/* core/io/file.c -- what the readers and the atomic writer share about the files they touch:
 * the kind of a non-regular file, in words, and opening a file for reading only when it is a
 * regular one (a symbolic link counts as its target).
 *
 * A FIFO named like a dataset file made the loaders hang forever in fopen (opening a FIFO for
 * reading waits for a writer) and a character device gave an endless or empty stream: the
 * decoders read regular files only. POSIX (stat, open with O_NONBLOCK, fstat, fcntl, fdopen). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnlab/io.h"
#include "internal.h"

const char *al_io_kind_(unsigned mode) {
  mode_t m = (mode_t)mode;
  return S_ISREG(m)    ? "a regular file"
         : S_ISDIR(m)  ? "a directory"
         : S_ISCHR(m)  ? "a character device"
         : S_ISBLK(m)  ? "a block device"
         : S_ISFIFO(m) ? "a FIFO"
         : S_ISSOCK(m) ? "a socket"
         : S_ISLNK(m)  ? "a symbolic link"
                       : "not a regular file";
}

const char *al_file_kind(const char *path) {
  struct stat sb;
  if (!path || stat(path, &sb) != 0 || S_ISREG(sb.st_mode)) return NULL;
  return al_io_kind_(sb.st_mode);
}

al_status al_io_open_regular_(const char *path, FILE **out, uint64_t *size) {
  *out = NULL;
  if (size) *size = 0;
  if (!path || !path[0]) return al_seterr(AL_EINVAL, "empty path");
  /* stat first, so that a device is never opened (opening some has effects); then open
   * without blocking (a FIFO swapped in meanwhile) and check the file actually opened. */
  struct stat sb;
  if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
    return al_seterr(AL_EIO, "%s: is %s, not a regular file", path, al_io_kind_(sb.st_mode));
  int fd;
  do fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return al_seterr(AL_EIO, "%s: cannot open: %s", path, strerror(errno));
  if (fstat(fd, &sb) != 0) {
    int e = errno;
    close(fd);
    return al_seterr(AL_EIO, "%s: cannot stat: %s", path, strerror(e));
  }
  if (!S_ISREG(sb.st_mode)) {
    close(fd);
    return al_seterr(AL_EIO, "%s: is %s, not a regular file", path, al_io_kind_(sb.st_mode));
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl != -1) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  FILE *fp = fdopen(fd, "rb");
  if (!fp) {
    int e = errno;
    close(fd);
    return al_seterr(AL_EIO, "%s: cannot open: %s", path, strerror(e));
  }
  if (size) *size = (uint64_t)sb.st_size;
  *out = fp;
  return AL_OK;
}
