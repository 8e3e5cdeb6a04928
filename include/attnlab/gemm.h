/* attnlab/gemm.h -- attnlab's own single-threaded sgemm for the model's shapes.
 *
 * The products of a compact ViT are tall and thin: M = batch x tokens (thousands), K and
 * N between 64 and a few hundred, e.g. x W^T at 2176x192x64 or gy^T x at 64x192x2176.
 * al_sgemm (blas.h) sends such shapes here and larger ones to OpenBLAS.
 *
 * Accumulation order, fixed by construction: every output element is
 *
 *     acc = 0;  for k = 0 .. K-1:  acc = fma(op(A)[i,k], op(B)[k,j], acc)
 *     C[i,j] = alpha*acc                      (beta == 0: C is not read)
 *     C[i,j] = alpha*acc + beta*C_old         (beta != 0; a product, a product, a sum)
 *
 * one sequential chain over k whatever the register tile, the cache blocking, the edge
 * handling or the row/column panel a caller hands in. So results are bitwise the same
 * for any split of M and N (hence any thread count) and between the AVX-512 and AVX2+FMA
 * builds of this file. The generic C build (no FMA in the target) rounds a*b before the
 * add: it is deterministic too, but not bitwise equal to the FMA builds.
 * alpha == 0 skips A and B (C = beta*C_old, or 0), as BLAS does.
 *
 * Example: y (rows, out) = x (rows, in) W^T with W stored (out, in):
 *     al_gemm_f32(0, 1, rows, out, in, 1.0f, x, in, W, in, 0.0f, y, out);
 */
#ifndef ATTNLAB_GEMM_H
#define ATTNLAB_GEMM_H
#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Row-major C[M,N] = alpha * op(A)[M,K] op(B)[K,N] + beta * C, the convention of al_sgemm:
 * op(A) = A (lda >= K) or A^T when transA (A stored K x M, lda >= M); the same for B.
 * C must not overlap A or B (nor the bias below), as in BLAS: rows of C are written while
 * other tiles still read them (C = A B into A gives wrong values from 64 x 64 on).
 * Returns AL_EINVAL (negative size, short leading dimension, NULL with work to do) or
 * AL_ENOMEM (transB needs a K x N packing buffer; K past one block needs an M-block x N
 * accumulator); C is untouched then. */
al_status al_gemm_f32(int transA, int transB, int64_t M, int64_t N, int64_t K, float alpha,
                      const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                      float *C, int64_t ldc);

/* The same product with a bias row instead of beta C: C[i,j] = alpha op(A)op(B)[i,j] + bias[j]
 * (bias: N floats), the chain ending exactly as al_gemm_f32's with beta = 1 and every row of
 * C_old holding bias -- a linear layer's x W^T + b without first writing b into every row of
 * C and reading it back. A NULL bias is no bias (al_gemm_f32 with beta = 0). AL_EINVAL as
 * al_gemm_f32. */
al_status al_gemm_f32_bias(int transA, int transB, int64_t M, int64_t N, int64_t K, float alpha,
                           const float *A, int64_t lda, const float *B, int64_t ldb,
                           const float *bias, float *C, int64_t ldc);

/* The code path this file was compiled with: "avx512", "avx2" or "generic". */
const char *al_gemm_level(void);

#ifdef __cplusplus
}
#endif

#endif
