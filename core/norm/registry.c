/* core/norm/registry.c -- the table of attention normalizers (attnlab/norm_registry.h).
 *
 * One row per normalizer; the adapters below give every kernel of normalizers.h the same
 * signature (parameters behind one al_norm_params pointer), so callers look a row up and never
 * switch over kinds. Built once for the baseline ISA, not per CPU level like the kernels: the
 * table is data, and its adapters reach the kernels through their dispatch trampolines. */
#include <stdio.h>
#include <string.h>

#include "attnlab/norm_registry.h"

/* ---- adapters: the kernels' own argument lists -> the registry's one signature ---- */
static al_status softmax_fwd(float *out, const float *x, const uint8_t *keep, int64_t mrows, int64_t rows,
                             int64_t n, const al_norm_params *p) {
  return al_softmax_fwd(out, x, keep, mrows, rows, n);
}
static al_status softmax_bwd(float *gin, float *galpha, const float *gout, const float *out, int64_t rows,
                             int64_t n, const al_norm_params *p) {
  return al_softmax_bwd(gin, gout, out, rows, n);
}
static al_status softmax_bwd_write(float *gin, float *galpha, const float *gout, const float *out,
                                   int64_t rows, int64_t n, const al_norm_params *p) {
  return al_softmax_bwd_write(gin, gout, out, rows, n);
}

static al_status sparsemax_fwd(float *out, const float *x, const uint8_t *keep, int64_t mrows, int64_t rows,
                               int64_t n, const al_norm_params *p) {
  return al_sparsemax_fwd(out, x, keep, mrows, rows, n);
}
static al_status sparsemax_bwd(float *gin, float *galpha, const float *gout, const float *out, int64_t rows,
                               int64_t n, const al_norm_params *p) {
  return al_sparsemax_bwd(gin, gout, out, rows, n);
}
static al_status sparsemax_bwd_write(float *gin, float *galpha, const float *gout, const float *out,
                                     int64_t rows, int64_t n, const al_norm_params *p) {
  return al_sparsemax_bwd_write(gin, gout, out, rows, n);
}

static al_status entmax15_fwd(float *out, const float *x, const uint8_t *keep, int64_t mrows, int64_t rows,
                              int64_t n, const al_norm_params *p) {
  return al_entmax15_fwd(out, x, keep, mrows, rows, n);
}
static al_status entmax15_bwd(float *gin, float *galpha, const float *gout, const float *out, int64_t rows,
                              int64_t n, const al_norm_params *p) {
  return al_entmax15_bwd(gin, gout, out, rows, n);
}
static al_status entmax15_bwd_write(float *gin, float *galpha, const float *gout, const float *out,
                                    int64_t rows, int64_t n, const al_norm_params *p) {
  return al_entmax15_bwd_write(gin, gout, out, rows, n);
}

static al_status entmax_bisect_fwd(float *out, const float *x, const uint8_t *keep, int64_t mrows,
                                   int64_t rows, int64_t n, const al_norm_params *p) {
  return al_entmax_bisect_fwd(out, x, p->alpha, keep, mrows, rows, n, p->max_iter, p->iters_used);
}
static al_status entmax_bisect_bwd(float *gin, float *galpha, const float *gout, const float *out,
                                   int64_t rows, int64_t n, const al_norm_params *p) {
  return al_entmax_bisect_bwd(gin, galpha, gout, out, p->alpha, rows, n);
}
static al_status entmax_bisect_bwd_write(float *gin, float *galpha, const float *gout, const float *out,
                                         int64_t rows, int64_t n, const al_norm_params *p) {
  return al_entmax_bisect_bwd_write(gin, galpha, gout, out, p->alpha, rows, n);
}

static al_status topk_softmax_fwd(float *out, const float *x, const uint8_t *keep, int64_t mrows,
                                  int64_t rows, int64_t n, const al_norm_params *p) {
  return al_topk_softmax_fwd(out, x, p->ratio, keep, mrows, rows, n);
}
static al_status topk_softmax_bwd(float *gin, float *galpha, const float *gout, const float *out,
                                  int64_t rows, int64_t n, const al_norm_params *p) {
  return al_topk_softmax_bwd(gin, gout, out, rows, n);
}
static al_status topk_softmax_bwd_write(float *gin, float *galpha, const float *gout, const float *out,
                                        int64_t rows, int64_t n, const al_norm_params *p) {
  return al_topk_softmax_bwd_write(gin, gout, out, rows, n);
}

/* ---- the table: indexed by al_norm_kind (checked by al_norm_get) ---- */
static const al_norm_desc AL_NORMS[AL_NORM_COUNT] = {
  /* kind                 name             spec         learned param            param_name default
   *                      forward              backward             backward, write mode
   *                      scalar reference: forward, backward */
  {AL_NORM_SOFTMAX,       "softmax",       "softmax",   NULL,   AL_NORM_P_NONE,  NULL,    0.0,
                          softmax_fwd,         softmax_bwd,         softmax_bwd_write,
                          al_softmax_ref_fwd,       al_softmax_ref_bwd},
  {AL_NORM_SPARSEMAX,     "sparsemax",     "sparsemax", NULL,   AL_NORM_P_NONE,  NULL,    0.0,
                          sparsemax_fwd,       sparsemax_bwd,       sparsemax_bwd_write,
                          al_sparsemax_ref_fwd,     al_sparsemax_ref_bwd},
  {AL_NORM_ENTMAX15,      "entmax15",      "entmax15",  NULL,   AL_NORM_P_NONE,  NULL,    0.0,
                          entmax15_fwd,        entmax15_bwd,        entmax15_bwd_write,
                          al_entmax15_ref_fwd,      al_entmax15_ref_bwd},
  {AL_NORM_ENTMAX_BISECT, "entmax_bisect", "entmax",    "hae",  AL_NORM_P_ALPHA, "alpha", 1.5,
                          entmax_bisect_fwd,   entmax_bisect_bwd,   entmax_bisect_bwd_write,
                          al_entmax_bisect_ref_fwd, al_entmax_bisect_ref_bwd},
  {AL_NORM_TOPK_SOFTMAX,  "topk_softmax",  "topk",      NULL,   AL_NORM_P_RATIO, "ratio", 0.0,
                          topk_softmax_fwd,    topk_softmax_bwd,    topk_softmax_bwd_write,
                          al_topk_softmax_ref_fwd,  al_topk_softmax_ref_bwd},
};

const al_norm_desc *al_norm_get(al_norm_kind k) {
  if ((int)k < 0 || k >= AL_NORM_COUNT) return NULL;
  const al_norm_desc *d = &AL_NORMS[k];
  return d->kind == k && d->fwd ? d : NULL;   /* a kind without its row is no kind */
}

const al_norm_desc *al_norm_find(const char *name) {
  for (int k = 0; k < AL_NORM_COUNT && name; k++)
    if (AL_NORMS[k].name && !strcmp(AL_NORMS[k].name, name)) return al_norm_get((al_norm_kind)k);
  return NULL;
}

char *al_norm_names(char *buf, size_t size) {
  size_t used = 0;
  if (size) buf[0] = 0;
  for (int k = 0; k < AL_NORM_COUNT && size; k++) {
    const al_norm_desc *d = al_norm_get((al_norm_kind)k);
    if (!d) continue;   /* a kind without its row is no kind (it printed "(null)") */
    int w = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", d->name);
    if (w < 0 || (size_t)w >= size - used) break;
    used += (size_t)w;
  }
  return buf;
}
