/* attnlab/blas.h -- single-precision GEMM through OpenBLAS, loaded at run time.
 *
 * Why run-time loading: OpenBLAS picks its kernels once, when the library loads,
 * from OPENBLAS_CORETYPE or its own CPU detection. Debian 12's 0.3.21 does not know
 * recent Xeons and falls back to SSE3 kernels (5x slower). attnlab reads CPUID,
 * tests a better core type in a child process (a quick sgemm self-check against a
 * plain loop) and only then loads OpenBLAS with it -- never overriding a value the
 * user set. If OpenBLAS is missing or fails the check, a portable C sgemm is used.
 * The model's small shapes go to attnlab's own kernel instead (gemm.h), whose results do
 * not depend on the thread count; al_sgemm's panel split keeps OpenBLAS's results
 * independent of it too.
 * al_blas_info() says what is in use. */
#ifndef ATTNLAB_BLAS_H
#define ATTNLAB_BLAS_H
#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Row-major C[M,N] = alpha * op(A)[M,K] op(B)[K,N] + beta * C.
 * op(A) = A (lda >= K) or A^T when transA (A stored K x M, lda >= M); same for B. C must not
 * overlap A, B or the bias (as in BLAS). No checks and no status, as BLAS: a caller that wants
 * bad sizes refused uses al_gemm_f32 (gemm.h). */
void al_sgemm(int transA, int transB, int64_t M, int64_t N, int64_t K, float alpha,
              const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
              float *C, int64_t ldc);

/* C[i,j] = alpha * op(A)op(B)[i,j] + bias[j] (bias: N floats, the same in every row): a
 * linear layer's x W^T + b. Bitwise what filling every row of C with bias and calling al_sgemm
 * with beta = 1 gives, without writing C twice. A NULL bias is no bias (al_sgemm with beta = 0). */
void al_sgemm_bias(int transA, int transB, int64_t M, int64_t N, int64_t K, float alpha,
                   const float *A, int64_t lda, const float *B, int64_t ldb, const float *bias,
                   float *C, int64_t ldc);

typedef struct {
  const char *backend;      /* "openblas" or "builtin" */
  const char *core;         /* OpenBLAS core name in use, e.g. "Cooperlake" */
  const char *config;       /* openblas_get_config() */
  const char *coretype_source; /* "user" (OPENBLAS_CORETYPE set), "attnlab" (chosen from CPUID), "openblas" (its own detection) */
  const char *note;         /* why a choice was made or refused */
  int threads;
  const char *gemm;         /* attnlab's own small-GEMM kernel compiled in: "avx512", "avx2", "generic" */
  const char *gemm_rule;    /* the crossover: which shapes al_sgemm gives it (the rest: OpenBLAS) */
} al_blas_info_t;

void al_blas_init(void);    /* idempotent and thread-safe (once per process); every al_sgemm calls it */
const al_blas_info_t *al_blas_info(void);
void al_blas_set_threads(int n);

/* Which kernel al_sgemm uses: AL_SGEMM_AUTO (the default: the crossover, or what the
 * environment's ATTNLAB_SGEMM=auto|attnlab|openblas asks for the whole process), or always
 * attnlab's own (AL_SGEMM_OWN) or always OpenBLAS / the builtin loop (AL_SGEMM_BLAS). For
 * tests and benchmarks that compare the two; not thread-safe against running GEMMs.
 * Returns the path forced before, to restore. */
enum { AL_SGEMM_AUTO = 0, AL_SGEMM_OWN = 1, AL_SGEMM_BLAS = 2 };
int al_sgemm_force_path(int path);
int al_sgemm_path(int64_t M, int64_t N, int64_t K);   /* the kernel al_sgemm uses for a shape */

#ifdef __cplusplus
}
#endif

#endif
