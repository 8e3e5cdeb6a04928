/* attnlab/norm_registry.h -- the one table of attention normalizers.
 *
 * Pure C11, no Lua. Every caller that handles "any normalizer" -- the autograd op
 * (al_normalize), the fused attention core (al_attention), the Lua binding (al.softmax ...,
 * al.attention's names and error text, al.normalizers()), the C tests and the benchmarks --
 * iterates over this table or looks a row up in it; none of them switches over the kinds.
 *
 *     const al_norm_desc *d = al_norm_find("topk_softmax");        // or al_norm_get(kind)
 *     al_norm_params p = { .ratio = 0.25 };
 *     d->fwd(out, x, keep, mrows, rows, n, &p);                     // out = f(x), (rows, n)
 *     d->bwd_write(gin, NULL, gout, out, rows, n, &p);              // gin = dL/dx
 *
 * One vocabulary. A row's `name` is the op's name everywhere: the C kernels al_<name>_fwd,
 * the Lua function al.<name>, al.attention{normalizer=<name>} and error messages. The model
 * spec that nn.Normalizer parses is `<spec>` for a row without a parameter and
 * `<spec>:<value>` for one with a fixed parameter ("entmax:1.7", "topk:0.25"); `learned`, when
 * not NULL, names the variant whose parameter is learned per head ("hae": entmax_bisect with
 * alpha_h = 1.05 + 0.9 sigmoid(a_h)). So AL_NORM_ENTMAX_BISECT, entmax_bisect, entmax:<alpha>
 * and hae are the same row.
 *
 * Adding a normalizer: its own file in core/norm/ (a scalar reference forward and backward, then
 * the kernels fwd, bwd, bwd_write with the contract of normalizers.h), one al_norm_kind value
 * before AL_NORM_COUNT, one row in core/norm/registry.c, and its reference cases in
 * tests/c/test_norm_reference.c (closed forms, identities, edge cases). */
#ifndef ATTNLAB_NORM_REGISTRY_H
#define ATTNLAB_NORM_REGISTRY_H

#include "normalizers.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  AL_NORM_SOFTMAX,
  AL_NORM_SPARSEMAX,
  AL_NORM_ENTMAX15,
  AL_NORM_ENTMAX_BISECT,   /* alpha-entmax, alpha per row; "entmax:<alpha>", "hae" */
  AL_NORM_TOPK_SOFTMAX,    /* softmax over the top ceil(ratio*n); "topk:<ratio>" */
  AL_NORM_COUNT
} al_norm_kind;

/* The one parameter a normalizer may take. */
typedef enum {
  AL_NORM_P_NONE,
  AL_NORM_P_ALPHA,   /* al_norm_params.alpha: one per row, finite, >= AL_ENTMAX_ALPHA_MIN */
  AL_NORM_P_RATIO    /* al_norm_params.ratio: in (0, 1] */
} al_norm_param;

/* Parameters behind one pointer; each kernel reads only the fields of its al_norm_param. */
typedef struct {
  double ratio;        /* AL_NORM_P_RATIO */
  const float *alpha;  /* AL_NORM_P_ALPHA: rows floats */
  int max_iter;        /* AL_NORM_P_ALPHA: evaluations per row, >= 1 */
  int *iters_used;     /* AL_NORM_P_ALPHA: max evaluations used over rows, or NULL */
} al_norm_params;

/* out (rows, n) = f(x (rows, n)); keep NULL or (mrows, n) as in normalizers.h. */
typedef al_status (*al_norm_fwd_fn)(float *out, const float *x, const uint8_t *keep, int64_t mrows,
                                    int64_t rows, int64_t n, const al_norm_params *p);
/* gin (rows, n) += dL/dx (bwd) or = dL/dx (bwd_write) from gout and the saved out (rows, n);
 * galpha (rows) likewise for AL_NORM_P_ALPHA rows (may be NULL; ignored by the others). */
typedef al_status (*al_norm_bwd_fn)(float *gin, float *galpha, const float *gout, const float *out,
                                    int64_t rows, int64_t n, const al_norm_params *p);

/* The scalar references of normalizers.h (double, one row): the tests' oracles. */
typedef void (*al_norm_ref_fwd_fn)(double *out, const float *x, const uint8_t *kr, int64_t n, double param);
typedef void (*al_norm_ref_bwd_fn)(double *gin, double *galpha, const double *gout, const double *out,
                                   int64_t n, double param);

typedef struct {
  al_norm_kind kind;
  const char *name;        /* op name: al_<name>_fwd, al.<name>, errors */
  const char *spec;        /* nn.Normalizer spec: "<spec>" or "<spec>:<param value>" */
  const char *learned;     /* spec of the per-head learned-parameter variant, or NULL */
  al_norm_param param;
  const char *param_name;  /* "alpha", "ratio" or NULL */
  double param_default;    /* the parameter when the caller gives none (alpha: 1.5) */
  al_norm_fwd_fn fwd;
  al_norm_bwd_fn bwd, bwd_write;
  al_norm_ref_fwd_fn ref_fwd;   /* param: alpha or ratio as a double */
  al_norm_ref_bwd_fn ref_bwd;
} al_norm_desc;

/* The row of kind k, or NULL when k is not a kind. */
const al_norm_desc *al_norm_get(al_norm_kind k);
/* The row named name (a row's `name`), or NULL. */
const al_norm_desc *al_norm_find(const char *name);
/* "softmax, sparsemax, ...": every row's name, for error messages, into buf (truncated to
 * size bytes with its NUL); returns buf. */
char *al_norm_names(char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
