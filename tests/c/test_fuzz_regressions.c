/* tests/c/test_fuzz_regressions.c -- replay every seed (tests/fuzz/corpus/<target>/) and
 * every saved crasher (tests/fuzz/regressions/<target>/) through the very entry points the
 * libFuzzer targets call (the target files are included with AL_FUZZ_NO_MAIN). Each input
 * must decode or fail cleanly; a broken invariant is a FAIL naming the file, and a crash
 * is caught by tests/run.sh (and by the sanitizers under `make asan-test`). Run from the
 * repository root. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define AL_FUZZ_NO_MAIN
#include "../fuzz/fuzz_cifar.c"
#include "../fuzz/fuzz_idx.c"
#include "../fuzz/fuzz_json.c"
#include "../fuzz/fuzz_safetensors.c"
#include "../fuzz/fuzz_tar.c"
#include "check.h"

typedef int (*fuzz_fn)(const uint8_t *, size_t);

static void replay(const char *target, const char *kind, fuzz_fn fn) {
  char dir[256], name[160];
  snprintf(dir, sizeof dir, "tests/fuzz/%s/%s", kind, target);
  snprintf(name, sizeof name, "fuzz %s: every file in tests/fuzz/%s/%s decodes or fails cleanly",
           target, kind, target);
  DIR *d = opendir(dir);
  if (!d) {
    /* the seed corpus must exist; a target without saved crashers has no folder */
    if (strcmp(kind, "corpus") == 0) check_report(0, name, "cannot open %s (run from the repo root)", dir);
    else printf("  %s/%s: no saved crashers\n", kind, target);
    return;
  }
  int n = 0, ok = 0, err = 0;
  char bad[2048] = "";
  struct dirent *de;
  while ((de = readdir(d))) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    struct stat sb;
    if (de->d_name[0] == '.' || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
    FILE *fp = fopen(path, "rb");
    if (!fp) continue;
    uint8_t *buf = malloc((size_t)sb.st_size + 1);
    size_t len = fread(buf, 1, (size_t)sb.st_size, fp);
    fclose(fp);
    int rc = fn(buf, len);
    free(buf);
    n++;
    if (rc == 0) ok++;
    else if (rc == 1) err++;
    else if (!bad[0]) snprintf(bad, sizeof bad, "%s broke an invariant (last error: %s)", path, al_errmsg());
  }
  closedir(d);
  printf("  %s/%s: %d files, %d decoded, %d rejected cleanly\n", kind, target, n, ok, err);
  /* an emptied seed corpus would pass "every file decodes or fails cleanly" with nothing run */
  CHECK(name, !bad[0] && (n > 0 || strcmp(kind, "corpus") != 0), "%s", bad[0] ? bad : "the seed corpus is empty");
}

int main(void) {
  static const struct { const char *name; fuzz_fn fn; } T[] = {
    {"idx", al_fuzz_idx}, {"cifar", al_fuzz_cifar}, {"tar", al_fuzz_tar},
    {"safetensors", al_fuzz_safetensors}, {"json", al_fuzz_json}};
  for (size_t i = 0; i < sizeof T / sizeof *T; i++) {
    replay(T[i].name, "corpus", T[i].fn);
    replay(T[i].name, "regressions", T[i].fn);
  }
  CHECK_EXIT();
}
