/* tests/fuzz/fuzz_json.c -- libFuzzer target: cJSON parsing of an experiment config and
 * a walk over it like the sweep runner's (every node visited; the known config fields
 * type-checked: name/dataset strings, seeds integer arrays, normalizer names such as
 * "entmax:1.3" or "topk:0.25" parsed), then print + re-parse (what a JSON record writer
 * does). Seeds: corpus/json/. al_fuzz_json() is shared with
 * tests/c/test_fuzz_regressions.c. Returns 0 (a valid config), 1 (rejected: bad JSON or
 * bad config), -1 (an invariant broke). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "attnlab/io.h"

typedef struct { long nodes, strings, numbers; int depth_max; } fuzz_json_stats;

static void fuzz_json_walk(const cJSON *v, int depth, fuzz_json_stats *s) {
  s->nodes++;
  if (depth > s->depth_max) s->depth_max = depth;
  if (cJSON_IsString(v)) s->strings += (long)strlen(v->valuestring) + 1;
  if (cJSON_IsNumber(v)) s->numbers += isfinite(v->valuedouble);
  if (v->string) s->strings += (long)strlen(v->string);
  for (const cJSON *c = v->child; c; c = c->next) fuzz_json_walk(c, depth + 1, s);
}

/* "softmax", "sparsemax", "entmax15", "hae", "entmax:<alpha in (1,2]>", "topk:<ratio in (0,1]>" */
static int fuzz_json_normalizer_ok(const char *s) {
  if (!strcmp(s, "softmax") || !strcmp(s, "sparsemax") || !strcmp(s, "entmax15") || !strcmp(s, "hae"))
    return 1;
  const char *arg = NULL;
  double lo = 0, hi = 0;
  if (!strncmp(s, "entmax:", 7)) { arg = s + 7; lo = 1; hi = 2; }
  else if (!strncmp(s, "topk:", 5)) { arg = s + 5; lo = 0; hi = 1; }
  if (!arg || !*arg) return 0;
  char *end;
  double x = strtod(arg, &end);
  return *end == 0 && x > lo && x <= hi;
}

static int fuzz_json_config_ok(const cJSON *root) {
  if (!cJSON_IsObject(root)) return 0;
  const cJSON *v;
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "name")) && !cJSON_IsString(v)) return 0;
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "dataset")) && !cJSON_IsString(v)) return 0;
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "seeds"))) {
    if (!cJSON_IsArray(v)) return 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, v) {
      if (!cJSON_IsNumber(x) || x->valuedouble != floor(x->valuedouble) ||
          fabs(x->valuedouble) > 9007199254740992.0)
        return 0;
    }
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "normalizers"))) {
    if (!cJSON_IsArray(v)) return 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, v) if (!cJSON_IsString(x) || !fuzz_json_normalizer_ok(x->valuestring)) return 0;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "model")) && !cJSON_IsObject(v)) return 0;
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "epochs")) &&
      !(cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 1e6))
    return 0;
  return 1;
}

int al_fuzz_json(const uint8_t *data, size_t size) {
  cJSON *root = cJSON_ParseWithLength((const char *)data, size);
  if (!root) return 1;
  fuzz_json_stats s = {0, 0, 0, 0};
  fuzz_json_walk(root, 0, &s);
  int rc = fuzz_json_config_ok(root) ? 0 : 1;
  /* a record writer prints what it parsed; the text must parse again to as many nodes */
  char *txt = cJSON_PrintUnformatted(root);
  if (txt) {
    cJSON *again = cJSON_Parse(txt);
    fuzz_json_stats s2 = {0, 0, 0, 0};
    if (!again) rc = -1;
    else {
      fuzz_json_walk(again, 0, &s2);
      if (s2.nodes != s.nodes) rc = -1;
    }
    cJSON_Delete(again);
    cJSON_free(txt);
  }
  cJSON_Delete(root);
  return rc;
}

#ifndef AL_FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (al_fuzz_json(data, size) < 0) abort();
  return 0;
}
#endif
