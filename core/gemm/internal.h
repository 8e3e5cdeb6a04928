/* core/gemm/internal.h -- what core/gemm/'s two files (gemm.c, the kernels; blas.c, al_sgemm)
 * share, private to them. */
#ifndef ATTNLAB_GEMM_INTERNAL_H
#define ATTNLAB_GEMM_INTERNAL_H

#include <stdint.h>

/* The last step of a product whose chains were summed transposed: C[i,j] = alpha t[j*M + i]
 * (+ beta ci[i*ldci + j] when beta != 0), i < M, j < N, where t (N x M) holds each chain's
 * exact sum (a product made with alpha = 1 and beta = 0). It rounds as the kernel's own last
 * step does (include/attnlab/gemm.h), so (B^T A)^T formed this way has the bits al_gemm_f32
 * gives A^T B: gemm.c takes that way for A^T B whose B rows lie further apart, and al_sgemm at
 * 2 threads before cutting such a product into panels. ci may be C (ldci = ldc). The callers
 * have checked the arguments. */
/* Whether A^T B (M x N) is computed as (B^T A)^T: B's rows lie further apart than A^T's and
 * the product is wider than tall, so every tile would re-read a panel of far-apart B rows
 * (gemm.c says why). The rule gemm.c applies to a whole product and al_sgemm applies before
 * cutting one into panels, which must agree. */
static inline int al_gemm_tn_swaps_(int transA, int transB, int64_t M, int64_t N, int64_t lda, int64_t ldb) {
  return transA && !transB && ldb > lda && N > M;
}

void al_gemm_f32_finish_transposed_(int64_t M, int64_t N, float alpha, const float *t, float beta,
                                    const float *ci, int64_t ldci, float *C, int64_t ldc);

#endif
