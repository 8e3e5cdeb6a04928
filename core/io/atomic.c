/* core/io/atomic.c -- atomic file replacement: write a temporary file in the target's
 * folder, fsync it, rename() it over the target, fsync the folder.
 *
 * POSIX (mkstemp, fsync, rename). rename() within one file system is atomic, which is why
 * the temporary lives next to the target rather than in /tmp. The folder fsync makes the
 * rename itself durable, so a sweep killed by a power cut finds each JSON record either
 * complete or absent.
 *
 * A destination that is a symbolic link is followed: the temporary goes next to the file the
 * link resolves to and is renamed over that file, so the link stays and its target is updated
 * (renaming over the link itself replaced it with a regular file, and `--out /dev/stdout` run
 * as root replaced the system's /dev/stdout). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnlab/io.h"
#include "internal.h"
#include "../util/need.h"

struct al_afile {
  char *path;
  char *tmp;
  int fd;
  al_status err;      /* first write failure, reported again by commit */
  char errmsg[512];
};

/* 0666 minus the umask. Linux reports the umask in /proc/self/status, which reads it
 * without changing it (umask() itself must set it, racing other threads' file creation),
 * so that is tried first. */
static mode_t default_mode(void) {
  FILE *fp = fopen("/proc/self/status", "r");
  if (fp) {
    char line[256];
    unsigned um;
    while (fgets(line, sizeof line, fp))
      if (sscanf(line, "Umask: %o", &um) == 1) { fclose(fp); return (mode_t)(0666 & ~um); }
    fclose(fp);
  }
  mode_t um = umask(022);
  umask(um);
  return (mode_t)(0666 & ~um);
}

/* The file a write to `path` must replace: `path` itself unless its last component is a
 * symbolic link, else what the chain of links ends at -- realpath() when that exists, else
 * (a dangling link: the file is to be created) the last link's target, relative links taken
 * from the folder of the link. *out is malloc'ed; *is_link tells whether a link was followed. */
static al_status resolve_target(const char *path, char **out, int *is_link) {
  *out = NULL;
  *is_link = 0;
  size_t n = strlen(path);
  char *cur = malloc(n + 1);
  if (!cur) return al_seterr(AL_ENOMEM, "%s: out of memory", path);
  memcpy(cur, path, n + 1);
  for (int hops = 0;; hops++) {
    struct stat lb;
    if (lstat(cur, &lb) != 0 || !S_ISLNK(lb.st_mode)) break;   /* absent, or not a link */
    if (hops >= 40) {
      free(cur);
      return al_seterr(AL_EINVAL, "%s: too many levels of symbolic links", path);
    }
    *is_link = 1;
    char *real = realpath(cur, NULL);
    if (real) { free(cur); cur = real; break; }
    char link[4096];
    ssize_t k = readlink(cur, link, sizeof link - 1);
    if (k <= 0) {
      al_status st = al_seterr(AL_EIO, "%s: cannot read the symbolic link %s: %s", path, cur,
                               k < 0 ? strerror(errno) : "empty");
      free(cur);
      return st;
    }
    link[k] = 0;
    const char *slash = strrchr(cur, '/');
    size_t dlen = (link[0] == '/' || !slash) ? 0 : (size_t)(slash - cur) + 1;
    char *next = malloc(dlen + (size_t)k + 1);
    if (!next) { free(cur); return al_seterr(AL_ENOMEM, "%s: out of memory", path); }
    memcpy(next, cur, dlen);
    memcpy(next + dlen, link, (size_t)k + 1);
    free(cur);
    cur = next;
  }
  *out = cur;
  return AL_OK;
}

al_status al_atomic_replaceable(const char *path) {
  if (!path || !path[0]) return al_seterr(AL_EINVAL, "empty path");
  struct stat sb;
  if (stat(path, &sb) != 0) return AL_OK;   /* nothing there (or unreachable: open will say) */
  if (S_ISREG(sb.st_mode)) return AL_OK;
  /* name what the link leads to as well (best effort: /proc/self/fd links to a pipe do not
   * resolve to a path) */
  char via[4200] = "";
  struct stat lb;
  if (lstat(path, &lb) == 0 && S_ISLNK(lb.st_mode)) {
    char *real = realpath(path, NULL);
    if (real && strcmp(real, path) != 0) snprintf(via, sizeof via, " (a symbolic link to %s)", real);
    else snprintf(via, sizeof via, " (a symbolic link)");
    free(real);
  }
  if (S_ISDIR(sb.st_mode)) return al_seterr(AL_EINVAL, "%s%s is a folder, not a file", path, via);
  return al_seterr(AL_EINVAL,
                   "%s%s is %s, not a regular file: results are written to a temporary file renamed "
                   "over the target, which would replace it",
                   path, via, al_io_kind_(sb.st_mode));
}

al_status al_afile_open(const char *path, al_afile **out) {
  AL_NEED(out, "al_afile_open", "out");
  *out = NULL;
  if (!path || !path[0]) return al_seterr(AL_EINVAL, "al_afile_open: empty path");
  al_status chk = al_atomic_replaceable(path);
  if (chk) return chk;
  char *target;
  int is_link;
  chk = resolve_target(path, &target, &is_link);
  if (chk) return chk;
  /* the link's target, once resolved, must be a regular file or nothing (checked again:
   * a dangling chain may end somewhere stat could not reach) */
  struct stat sb;
  if (is_link && lstat(target, &sb) == 0 && !S_ISREG(sb.st_mode)) {
    al_status st = al_seterr(AL_EINVAL, "%s (a symbolic link to %s): that is %s, not a regular file", path,
                             target, al_io_kind_(sb.st_mode));
    free(target);
    return st;
  }
  size_t n = strlen(target);
  al_afile *a = calloc(1, sizeof *a);
  char *tmp = malloc(n + 16);
  if (!a || !tmp) {
    free(a); free(tmp); free(target);
    return al_seterr(AL_ENOMEM, "%s: out of memory", path);
  }
  a->path = target;
  a->tmp = tmp;
  snprintf(a->tmp, n + 16, "%s.tmp.XXXXXX", target);
  a->fd = mkstemp(a->tmp);
  if (a->fd < 0) {
    al_status st = is_link ? al_seterr(AL_EIO, "%s (a symbolic link to %s): cannot create a temporary file next to "
                                       "the target: %s", path, target, strerror(errno))
                           : al_seterr(AL_EIO, "%s: cannot create a temporary file next to it: %s", path,
                                       strerror(errno));
    free(a->path); free(a->tmp); free(a);
    return st;
  }
  fchmod(a->fd, default_mode());   /* mkstemp makes 0600; give what fopen would */
  *out = a;
  return AL_OK;
}

al_status al_afile_write(al_afile *a, const void *data, size_t size) {
  AL_NEED(a, "al_afile_write", "the file");
  if (a->err) return al_seterr(a->err, "%s", a->errmsg);
  if (!data && size) {   /* write(2) said "Bad address"; sticky like any failed write, so commit refuses */
    snprintf(a->errmsg, sizeof a->errmsg, "%s: al_afile_write: data is NULL with size %zu", a->path, size);
    a->err = AL_EINVAL;
    return al_seterr(a->err, "%s", a->errmsg);
  }
  const uint8_t *p = data;
  while (size > 0) {
    size_t chunk = size > ((size_t)1 << 30) ? ((size_t)1 << 30) : size;
    ssize_t w = write(a->fd, p, chunk);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      snprintf(a->errmsg, sizeof a->errmsg, "%s: write failed: %s", a->path,
               w < 0 ? strerror(errno) : "no progress");
      a->err = AL_EIO;
      return al_seterr(a->err, "%s", a->errmsg);
    }
    p += w;
    size -= (size_t)w;
  }
  return AL_OK;
}

static void destroy(al_afile *a) {
  free(a->path);
  free(a->tmp);
  free(a);
}

void al_afile_abort(al_afile *a) {
  if (!a) return;
  if (a->fd >= 0) close(a->fd);
  unlink(a->tmp);
  destroy(a);
}

al_status al_afile_commit(al_afile *a) {
  AL_NEED(a, "al_afile_commit", "the file");
  al_status st = AL_OK;
  if (a->err) st = al_seterr(a->err, "%s", a->errmsg);
  else if (fsync(a->fd) != 0)
    st = al_seterr(AL_EIO, "%s: fsync failed: %s", a->path, strerror(errno));
  if (close(a->fd) != 0 && st == AL_OK)
    st = al_seterr(AL_EIO, "%s: close failed: %s", a->path, strerror(errno));
  a->fd = -1;
  if (st == AL_OK && rename(a->tmp, a->path) != 0)
    st = al_seterr(AL_EIO, "%s: cannot rename the temporary file into place: %s", a->path,
                   strerror(errno));
  if (st != AL_OK) {
    unlink(a->tmp);
    destroy(a);
    return st;
  }
  /* Make the rename durable: fsync the folder (best effort: some file systems refuse). */
  char *dir = a->tmp;   /* reuse the buffer: cut at the last '/' */
  char *slash = strrchr(dir, '/');
  if (slash == dir) slash[1] = 0;
  else if (slash) *slash = 0;
  else strcpy(dir, ".");
  int dfd = open(dir, O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  destroy(a);
  return AL_OK;
}

al_status al_write_file_atomic(const char *path, const void *data, size_t size) {
  if (!data && size) return al_seterr(AL_EINVAL, "%s: data is NULL with size %zu", path ? path : "al_write_file_atomic", size);
  al_afile *a;
  al_status st = al_afile_open(path, &a);
  if (st) return st;
  st = al_afile_write(a, data, size);
  if (st) { al_afile_abort(a); return st; }
  return al_afile_commit(a);
}
