/* core/gemm/gemm.c -- attnlab's own single-threaded sgemm (include/attnlab/gemm.h).
 *
 * Why not OpenBLAS for everything: on the model's shapes (M = batch x tokens in the
 * thousands, K and N 64..256) a machine whose OPENBLAS_CORETYPE pins the Haswell kernels
 * runs well below the speed its core has, and those kernels' results depend on how al_sgemm cuts
 * the product into panels. This file gives every output element one fixed FMA chain over
 * k = 0..K-1 (see gemm.h), so results depend on nothing but the inputs.
 *
 * One file, three code paths chosen by the preprocessor, so that the build may compile it
 * at several -march levels and pick one at run time (no target attributes, no mutable
 * globals here):
 *   __AVX512F__          14 x 32 register tile: 28 zmm accumulators, 2 zmm of B a step,
 *                        a[i,k] broadcast from memory
 *   __AVX2__ && __FMA__  6 x 16 tile: 12 ymm accumulators, 2 ymm of B
 *   otherwise            plain C, one row at a time, a*b then +acc (no FMA in the target)
 * Rows past the last whole tile are spread over tiles as even as can be (tile_rows); column
 * tails use masked loads and stores. None of that changes any element's chain.
 *
 * Layouts: op(A) is read where it lies -- a[i,k] is A[i*lda+k] or, transposed, A[k*lda+i]
 * (the tile's rows are then adjacent). Row-major B is read where it lies, a K x 32 (16)
 * column panel at a time. Only B^T (stored N x K, the x W^T of every linear layer) is
 * copied, once per call, into K x 32 (16) column panels.
 *
 * Cache blocking keeps the chain: up to K = 512 (the model's products but the weight
 * gradients) K is not blocked; beyond, blocks of 128 k, and a tile parks its accumulators
 * in a float buffer between blocks (an exact store and reload), so every chain still runs
 * k = 0..K-1 in order. M is cut into blocks of ~64K floats of A, so a block of A stays in L2
 * while every 32-column panel of B passes over it; a K x 32 panel of B is 8 KB at K = 64
 * and 32 KB at K = 256 (L1). Across K blocks the next block's lines of op(A) and row-major B
 * are prefetched while the current one computes (the weight gradients read both from memory
 * once). A^T B with B's rows further apart than A^T's is computed as (B^T A)^T (gemm() says
 * why): the same chains, bit for bit. */
#include <string.h>

#include "attnlab/gemm.h"
#include "internal.h"

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

#define GEMM_INLINE static inline __attribute__((always_inline))

/* K blocking (see the top): none up to KC_MAX, blocks of KC beyond */
#define KC_MAX 512
#define KC 128

/* Every path ends a chain the same way: t = alpha*acc, then t = t + beta*C_old when
 * beta != 0 (separate product, product and sum, never fused), so that step is bitwise equal
 * on all three paths. C_old is read from ci with row stride ldci: C itself, or the bias row
 * with stride 0 (al_gemm_f32_bias). */

#if defined(__AVX512F__)
/* ===================================== AVX-512 ===================================== */
#define GEMM_LEVEL "avx512"
#define MR 14
#define NR 32

/* C[0..mr, 0..16*nv) of one tile; mr, nv and ta are constants at every call site, so the
 * accumulator arrays live in registers. m0/m1 mask the columns of a tail panel. */
GEMM_INLINE void ukr(const int mr, const int nv, const int ta, int64_t K, const float *a, int64_t lda,
                     const float *b, int64_t ldb, __mmask16 m0, __mmask16 m1, float alpha, float beta,
                     const float *ci, int64_t ldci, float *c, int64_t ldc, const float *win, float *wout,
                     int64_t ldw, const char *const *pfl, int64_t npf) {
  __m512 acc0[MR], acc1[MR];
#pragma GCC unroll 16
  for (int r = 0; r < mr; r++) {
    acc0[r] = win ? _mm512_maskz_loadu_ps(m0, win + r * ldw) : _mm512_setzero_ps();
    acc1[r] = win && nv > 1 ? _mm512_maskz_loadu_ps(m1, win + r * ldw + 16) : _mm512_setzero_ps();
  }
  for (int64_t k = 0; k < K; k++) {
    const float *bk = b + k * ldb;
    __m512 b0 = _mm512_maskz_loadu_ps(m0, bk);
    __m512 b1 = nv > 1 ? _mm512_maskz_loadu_ps(m1, bk + 16) : _mm512_setzero_ps();
    if (k < npf) _mm_prefetch(pfl[k], _MM_HINT_T0);
#pragma GCC unroll 16
    for (int r = 0; r < mr; r++) {
      __m512 av = _mm512_set1_ps(ta ? a[k * lda + r] : a[r * lda + k]);
      acc0[r] = _mm512_fmadd_ps(av, b0, acc0[r]);
      if (nv > 1) acc1[r] = _mm512_fmadd_ps(av, b1, acc1[r]);
    }
  }
  if (wout) {   /* K block ends before K: park the chains (exact float stores) */
#pragma GCC unroll 16
    for (int r = 0; r < mr; r++) {
      _mm512_mask_storeu_ps(wout + r * ldw, m0, acc0[r]);
      if (nv > 1) _mm512_mask_storeu_ps(wout + r * ldw + 16, m1, acc1[r]);
    }
    return;
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 16
  for (int r = 0; r < mr; r++) {
    float *cr = c + r * ldc;
    const float *cir = ci + r * ldci;
    __m512 t0 = _mm512_mul_ps(va, acc0[r]);
    if (beta != 0) t0 = _mm512_add_ps(t0, _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(m0, cir)));
    _mm512_mask_storeu_ps(cr, m0, t0);
    if (nv > 1) {
      __m512 t1 = _mm512_mul_ps(va, acc1[r]);
      if (beta != 0) t1 = _mm512_add_ps(t1, _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(m1, cir + 16)));
      _mm512_mask_storeu_ps(cr + 16, m1, t1);
    }
  }
}

/* one tile of h <= MR rows (h from tile_rows) and nr <= NR columns */
static void tile(int h, int nr, int ta, int64_t K, const float *a, int64_t lda, const float *b, int64_t ldb,
                 float alpha, float beta, const float *ci, int64_t ldci, float *c, int64_t ldc, const float *win,
                 float *wout, int64_t ldw, const char *const *pfl, int64_t npf) {
  __mmask16 m0 = nr >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nr) - 1);
  __mmask16 m1 = nr >= 32 ? (__mmask16)0xFFFF : nr > 16 ? (__mmask16)((1u << (nr - 16)) - 1) : (__mmask16)0;
  int nv = nr > 16 ? 2 : 1;
#define UK(H)                                                                                       \
  do {                                                                                              \
    if (ta) {                                                                                       \
      if (nv > 1) ukr(H, 2, 1, K, a, lda, b, ldb, m0, m1, alpha, beta, ci, ldci, c, ldc, win, wout, ldw, pfl, npf);     \
      else ukr(H, 1, 1, K, a, lda, b, ldb, m0, m1, alpha, beta, ci, ldci, c, ldc, win, wout, ldw, pfl, npf);            \
    } else {                                                                                        \
      if (nv > 1) ukr(H, 2, 0, K, a, lda, b, ldb, m0, m1, alpha, beta, ci, ldci, c, ldc, win, wout, ldw, pfl, npf);     \
      else ukr(H, 1, 0, K, a, lda, b, ldb, m0, m1, alpha, beta, ci, ldci, c, ldc, win, wout, ldw, pfl, npf);            \
    }                                                                                               \
  } while (0)
  switch (h) {
    case 14: UK(14); break;
    case 13: UK(13); break;
    case 12: UK(12); break;
    case 11: UK(11); break;
    case 10: UK(10); break;
    case 9: UK(9); break;
    case 8: UK(8); break;
    case 7: UK(7); break;
    case 6: UK(6); break;
    case 5: UK(5); break;
    case 4: UK(4); break;
    case 3: UK(3); break;
    case 2: UK(2); break;
    default: UK(1); break;
  }
#undef UK
}

#elif defined(__AVX2__) && defined(__FMA__)
/* ===================================== AVX2 + FMA ================================== */
#define GEMM_LEVEL "avx2"
#define MR 6
#define NR 16

/* lane masks: lane_mask + 8 - n enables the first n of 8 lanes */
static const int32_t lane_mask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

/* full: a whole 16-column panel, plain loads and stores. The masked form is for tails only:
 * its two mask registers leave 14 ymm for 12 accumulators, 2 of B and the broadcast, so
 * one accumulator spills. */
GEMM_INLINE void ukr(const int mr, const int nv, const int full, const int ta, int64_t K, const float *a, int64_t lda,
                     const float *b, int64_t ldb, int nr, float alpha, float beta,
                     const float *ci, int64_t ldci, float *c, int64_t ldc, const float *win, float *wout,
                     int64_t ldw, const char *const *pfl, int64_t npf) {
  /* masks made here, not by the caller: live across the full form's loop, GCC kept them
   * in two ymm and spilled an accumulator */
  __m256i m0 = _mm256_setzero_si256(), m1 = _mm256_setzero_si256();
  if (!full) {
    int n0 = nr >= 8 ? 8 : nr, n1 = nr >= 16 ? 8 : nr > 8 ? nr - 8 : 0;
    m0 = _mm256_loadu_si256((const __m256i *)(lane_mask + 8 - n0));
    m1 = _mm256_loadu_si256((const __m256i *)(lane_mask + 8 - n1));
  }
  __m256 acc0[MR], acc1[MR];
#pragma GCC unroll 8
  for (int r = 0; r < mr; r++) {
    acc0[r] = !win ? _mm256_setzero_ps() : full ? _mm256_loadu_ps(win + r * ldw) : _mm256_maskload_ps(win + r * ldw, m0);
    acc1[r] = !win || nv < 2 ? _mm256_setzero_ps()
              : full ? _mm256_loadu_ps(win + r * ldw + 8) : _mm256_maskload_ps(win + r * ldw + 8, m1);
  }
  for (int64_t k = 0; k < K; k++) {
    const float *bk = b + k * ldb;
    __m256 b0 = full ? _mm256_loadu_ps(bk) : _mm256_maskload_ps(bk, m0);
    __m256 b1 = nv < 2 ? _mm256_setzero_ps() : full ? _mm256_loadu_ps(bk + 8) : _mm256_maskload_ps(bk + 8, m1);
    if (k < npf) _mm_prefetch(pfl[k], _MM_HINT_T0);
#pragma GCC unroll 8
    for (int r = 0; r < mr; r++) {
      __m256 av = _mm256_broadcast_ss(ta ? &a[k * lda + r] : &a[r * lda + k]);
      acc0[r] = _mm256_fmadd_ps(av, b0, acc0[r]);
      if (nv > 1) acc1[r] = _mm256_fmadd_ps(av, b1, acc1[r]);
    }
  }
  if (wout) {   /* K block ends before K: park the chains (exact float stores) */
#pragma GCC unroll 8
    for (int r = 0; r < mr; r++) {
      if (full) { _mm256_storeu_ps(wout + r * ldw, acc0[r]); _mm256_storeu_ps(wout + r * ldw + 8, acc1[r]); continue; }
      _mm256_maskstore_ps(wout + r * ldw, m0, acc0[r]);
      if (nv > 1) _mm256_maskstore_ps(wout + r * ldw + 8, m1, acc1[r]);
    }
    return;
  }
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
#pragma GCC unroll 8
  for (int r = 0; r < mr; r++) {
    float *cr = c + r * ldc;
    const float *cir = ci + r * ldci;
    __m256 t0 = _mm256_mul_ps(va, acc0[r]), t1 = _mm256_mul_ps(va, acc1[r]);
    if (full) {
      if (beta != 0) {
        t0 = _mm256_add_ps(t0, _mm256_mul_ps(vb, _mm256_loadu_ps(cir)));
        t1 = _mm256_add_ps(t1, _mm256_mul_ps(vb, _mm256_loadu_ps(cir + 8)));
      }
      _mm256_storeu_ps(cr, t0);
      _mm256_storeu_ps(cr + 8, t1);
      continue;
    }
    if (beta != 0) t0 = _mm256_add_ps(t0, _mm256_mul_ps(vb, _mm256_maskload_ps(cir, m0)));
    _mm256_maskstore_ps(cr, m0, t0);
    if (nv > 1) {
      if (beta != 0) t1 = _mm256_add_ps(t1, _mm256_mul_ps(vb, _mm256_maskload_ps(cir + 8, m1)));
      _mm256_maskstore_ps(cr + 8, m1, t1);
    }
  }
}

static void tile(int h, int nr, int ta, int64_t K, const float *a, int64_t lda, const float *b, int64_t ldb,
                 float alpha, float beta, const float *ci, int64_t ldci, float *c, int64_t ldc, const float *win,
                 float *wout, int64_t ldw, const char *const *pfl, int64_t npf) {
  int nv = nr > 8 ? 2 : 1;
#define UK1(H, TA)                                                                                  \
  do {                                                                                              \
    if (nr == 16) ukr(H, 2, 1, TA, K, a, lda, b, ldb, nr, alpha, beta, ci, ldci, c, ldc, win, wout, ldw, pfl, npf); \
    else if (nv > 1) ukr(H, 2, 0, TA, K, a, lda, b, ldb, nr, alpha, beta, ci, ldci, c, ldc, win, wout, ldw, pfl, npf); \
    else ukr(H, 1, 0, TA, K, a, lda, b, ldb, nr, alpha, beta, ci, ldci, c, ldc, win, wout, ldw, pfl, npf);         \
  } while (0)
#define UK(H)                                                                                       \
  do {                                                                                              \
    if (ta) UK1(H, 1);                                                                              \
    else UK1(H, 0);                                                                                 \
  } while (0)
  switch (h) {
    case 6: UK(6); break;
    case 5: UK(5); break;
    case 4: UK(4); break;
    case 3: UK(3); break;
    case 2: UK(2); break;
    default: UK(1); break;
  }
#undef UK
#undef UK1
}

#else
/* ===================================== generic C =================================== */
/* No FMA in the target: fmaf would be a slow library call, so acc + a*b rounds the
 * product first. Same chain order as above, different rounding: not bitwise equal to
 * the FMA levels (still independent of the panel split). */
#define GEMM_LEVEL "generic"
#define MR 1
#define NR 64

static int tile_rows(int64_t left) { (void)left; return 1; }

static void tile(int h, int nr, int ta, int64_t K, const float *a, int64_t lda, const float *b, int64_t ldb,
                 float alpha, float beta, const float *ci, int64_t ldci, float *c, int64_t ldc, const float *win,
                 float *wout, int64_t ldw, const char *const *pfl, int64_t npf) {
  (void)pfl;   /* no prefetching in plain C */
  (void)npf;
  float acc[NR];
  for (int j = 0; j < nr; j++) acc[j] = win ? win[j] : 0;
  for (int64_t k = 0; k < K; k++) {
    float av = ta ? a[k * lda] : a[k];
    const float *bk = b + k * ldb;
    for (int j = 0; j < nr; j++) acc[j] = acc[j] + av * bk[j];
  }
  if (wout) { for (int j = 0; j < nr; j++) wout[j] = acc[j]; return; }
  for (int j = 0; j < nr; j++) {
    float t = alpha * acc[j];
    if (beta != 0) t = t + beta * ci[j];
    c[j] = t;
  }
}
#endif

/* Rows of the next tile: whole MR-row tiles while more than MR rows are left, the rest in
 * tiles as even as can be (17 -> 9 + 8, 20 -> 10 + 10, 65 -> 5 x 13). A tile of one or two
 * rows has too few independent chains to hide the FMA latency, and the attention's
 * per-head products (17 or 65 rows) used to end in such tiles (14 + 2 + 1). Which rows
 * share a tile changes no chain. */
#if MR > 1
static int tile_rows(int64_t left) {
  if (left <= MR) return (int)left;
  int64_t tiles = (left + MR - 1) / MR;
  return (int)((left + tiles - 1) / tiles);
}
#endif

const char *al_gemm_level(void) { return GEMM_LEVEL; }

/* B^T (stored N x K, row stride ld) into panels of NR columns: panel p holds columns
 * p*NR.. as a contiguous K x NR block (row stride NR, the last one zero-padded). Why not a
 * plain K x N transpose: at N = 64 its 256-byte rows put a K x 32 panel into a quarter of
 * L1's sets, and the panel no longer stayed in L1 at K = 256. A copy: every level packs the
 * same floats, whichever way it moves them. */
#if defined(__AVX512F__)
/* r[i] = row i of a 16 x 16 block -> r[j] = its column j. Four rounds of 16 shuffles: pairs
 * of rows interleaved, then pairs of pairs (as doubles), then 128-bit lanes twice. */
GEMM_INLINE void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int p = 0; p < 8; p++) {
    t[2 * p] = _mm512_unpacklo_ps(r[2 * p], r[2 * p + 1]);
    t[2 * p + 1] = _mm512_unpackhi_ps(r[2 * p], r[2 * p + 1]);
  }
  /* u[4q + c], 128-bit lane L: column 4L + c of rows 4q..4q+3 */
  for (int q = 0; q < 4; q++) {
    __m512d a = _mm512_castps_pd(t[4 * q]), b = _mm512_castps_pd(t[4 * q + 1]);
    __m512d c = _mm512_castps_pd(t[4 * q + 2]), d = _mm512_castps_pd(t[4 * q + 3]);
    u[4 * q + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    u[4 * q + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    u[4 * q + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    u[4 * q + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  /* column 4L + c gathers lane L of u[c], u[4 + c], u[8 + c], u[12 + c] */
  for (int c = 0; c < 4; c++) {
    __m512 v0 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x44), v1 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xEE);
    __m512 v2 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x44), v3 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xEE);
    r[c] = _mm512_shuffle_f32x4(v0, v2, 0x88);
    r[4 + c] = _mm512_shuffle_f32x4(v0, v2, 0xDD);
    r[8 + c] = _mm512_shuffle_f32x4(v1, v3, 0x88);
    r[12 + c] = _mm512_shuffle_f32x4(v1, v3, 0xDD);
  }
}

/* 16 columns j0.. (nj of them real, the rest zeros) x K of B^T into the panel's 16-wide
 * half at p: 16 x 16 blocks through registers. The attention's per-head Q K^T and dO V^T
 * pack 16 x 17 on every call, and element by element the packing was a large share of such
 * a small product (experiments/classifier/THROUGHPUT.md, "Serial work out of the step"). */
static void pack_bt_half(float *p, const float *src, int64_t nj, int64_t K, int64_t ld) {
  for (int64_t k0 = 0; k0 < K; k0 += 16) {
    int64_t kk = K - k0 < 16 ? K - k0 : 16;
    __mmask16 km = (__mmask16)((1u << kk) - 1);
    __m512 r[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++) r[i] = i < nj ? _mm512_maskz_loadu_ps(km, src + i * ld + k0) : _mm512_setzero_ps();
    transpose16(r);
    for (int64_t k = 0; k < kk; k++) _mm512_storeu_ps(p + (k0 + k) * NR, r[k]);
  }
}

static void pack_bt(float *dst, const float *src, int64_t N, int64_t K, int64_t ld) {
  for (int64_t j0 = 0; j0 < N; j0 += NR) {
    float *p = dst + j0 * K;   /* (j0 / NR) * K * NR */
    int64_t nr = N - j0 < NR ? N - j0 : NR;
    pack_bt_half(p, src + j0 * ld, nr < 16 ? nr : 16, K, ld);
    /* a panel of 16 or fewer columns: its second half is zeros, and src is not advanced
     * past its last row (no pointer beyond the operand is formed) */
    pack_bt_half(p + 16, nr > 16 ? src + (j0 + 16) * ld : src, nr > 16 ? nr - 16 : 0, K, ld);
  }
}
#else
static void pack_bt(float *dst, const float *src, int64_t N, int64_t K, int64_t ld) {
  for (int64_t j0 = 0; j0 < N; j0 += NR) {
    float *p = dst + j0 * K;   /* (j0 / NR) * K * NR */
    int64_t nr = N - j0 < NR ? N - j0 : NR;
    for (int64_t k0 = 0; k0 < K; k0 += 32) {
      int64_t k1 = k0 + 32 < K ? k0 + 32 : K;
      for (int64_t k = k0; k < k1; k++) {
        for (int64_t j = 0; j < nr; j++) p[k * NR + j] = src[(j0 + j) * ld + k];
        for (int64_t j = nr; j < NR; j++) p[k * NR + j] = 0;
      }
    }
  }
}
#endif

/* The 64-byte lines of `rows` rows of `cols` floats, row r at base + r*ld, into out (in
 * order); returns how many. */
static int64_t row_lines(const char **out, const float *base, int64_t rows, int64_t ld, int64_t cols) {
  int64_t n = 0;
  for (int64_t r = 0; r < rows; r++) {
    uintptr_t s = (uintptr_t)(base + r * ld) & ~(uintptr_t)63, e = (uintptr_t)(base + r * ld + cols - 1);
    for (uintptr_t q = s; q <= e; q += 64) out[n++] = (const char *)q;
  }
  return n;
}

/* Lines of one row: at most this many for `cols` floats, wherever the row starts. */
static int64_t lines_max(int64_t cols) { return (cols + 15) / 16 + 1; }

/* C = alpha op(A) op(B) + beta Cin, where Cin[i,j] = ci[i*ldci + j]: C itself (ci = C,
 * ldci = ldc) or a row broadcast to every row (ldci = 0, al_gemm_f32_bias) */
static al_status gemm(int transA, int transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                      int64_t lda, const float *B, int64_t ldb, float beta, const float *ci, int64_t ldci,
                      float *C, int64_t ldc) {
  if (M < 0 || N < 0 || K < 0)
    return al_seterr(AL_EINVAL, "gemm: negative size M=%lld N=%lld K=%lld", (long long)M, (long long)N, (long long)K);
  if (M == 0 || N == 0) return AL_OK;
  if (!C || ldc < N) return al_seterr(AL_EINVAL, "gemm: C is %s, ldc=%lld, want ldc >= N=%lld", C ? "set" : "NULL",
                                      (long long)ldc, (long long)N);
  if (K == 0 || alpha == 0) {   /* A and B are not read: C = beta*Cin, or 0 */
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) C[i * ldc + j] = beta == 0 ? 0.0f : beta * ci[i * ldci + j];
    return AL_OK;
  }
  int64_t lda_min = transA ? M : K, ldb_min = transB ? K : N;
  if (!A || !B || lda < lda_min || ldb < ldb_min)
    return al_seterr(AL_EINVAL, "gemm: A %s lda=%lld (want >= %lld), B %s ldb=%lld (want >= %lld)", A ? "set" : "NULL",
                     (long long)lda, (long long)lda_min, B ? "set" : "NULL", (long long)ldb, (long long)ldb_min);
  /* A^T B whose rows of B lie further apart than those of A^T (the MLP's second weight
   * gradient, 64 x 256 over the batch's rows: B's rows 1 KB apart): a K x 32 panel of B is
   * read by every tile, and rows that far apart share a few L1 sets, so the panel came from
   * L2 again and again. Its transpose B^T A has the same chains (fmaf(b, a, acc) is
   * fmaf(a, b, acc), bit for bit) with the near rows in the panel: it is computed into T
   * (N x M, alpha = 1 and beta = 0, so T holds each chain's acc exactly) and C is then
   * alpha T^T (+ beta Cin), the kernel's own last step. Without memory for T, the direct way. */
  if (al_gemm_tn_swaps_(transA, transB, M, N, lda, ldb) && (uint64_t)M <= SIZE_MAX / sizeof(float) / (uint64_t)N) {
    size_t t_bytes = sizeof(float) * (size_t)M * (size_t)N;
    float *t = al_malloc(t_bytes);
    if (t) {
      al_status st = gemm(1, 0, N, M, K, 1.0f, B, ldb, A, lda, 0.0f, t, M, t, M);
      if (st == AL_OK) al_gemm_f32_finish_transposed_(M, N, alpha, t, beta, ci, ldci, C, ldc);
      al_free(t, t_bytes);
      return st;
    }
  }
  const float *b = B;
  int64_t bld = ldb;
  float *pack = NULL;
  size_t pack_bytes = 0;
  /* small B^T (the attention's per-head Q K^T, 16 x 17) is packed on the stack: those
   * products are a few thousand multiply-adds, and a malloc per call showed */
  _Alignas(64) float pack_stack[2048];
  if (transB) {
    /* N rounded up to whole tiles; N within NR of INT64_MAX would overflow the rounding */
    int64_t npad = N <= INT64_MAX - NR ? (N + NR - 1) / NR * NR : 0;
    if (!npad || (uint64_t)K > SIZE_MAX / sizeof(float) / (uint64_t)npad)
      return al_seterr(AL_ENOMEM, "gemm: B^T of %lld x %lld is too large to pack", (long long)N, (long long)K);
    pack_bytes = sizeof(float) * (size_t)K * (size_t)npad;
    pack = pack_bytes <= sizeof pack_stack ? pack_stack : al_malloc(pack_bytes);
    if (!pack) return al_seterr(AL_ENOMEM, "gemm: no memory to pack B^T (%zu bytes)", pack_bytes);
    pack_bt(pack, B, N, K, ldb);
    b = pack;
    bld = NR;
  }
  /* K up to KC_MAX runs as one block. Beyond, blocks of KC: a tile parks its chains in
   * w (M-block x N floats) between blocks and takes them up again, so each chain still runs
   * k = 0..K-1 in one float accumulator, while a KC x 32 (16) panel of B stays in L1 and
   * the strided rows of A^T span few pages. KC is 128, not 256: the weight gradient's B
   * (K x 64, 256-byte rows) maps a panel's rows to a quarter of L1's sets, and 256 of them
   * no longer fitted. */
  int64_t kc = K <= KC_MAX ? K : KC;
  int64_t mc = (65536 / kc) / MR * MR;   /* rows of A per block: ~64K floats, whole tiles */
  if (mc < MR) mc = MR;
  if (mc > M) mc = M;
  float *w = NULL;
  size_t w_bytes = 0;
  if (kc < K) {
    w_bytes = sizeof(float) * (size_t)mc * (size_t)N;
    if ((uint64_t)N > SIZE_MAX / sizeof(float) / (uint64_t)mc || !(w = al_malloc(w_bytes))) {
      if (pack && pack != pack_stack) al_free(pack, pack_bytes);
      return al_seterr(AL_ENOMEM, "gemm: no memory for the K-block accumulators (%lld x %lld)", (long long)mc, (long long)N);
    }
  }
  /* With K blocks (the weight gradients: K = the batch's rows) op(A) and B stream from memory
   * once, block by block. The next block's lines of both are listed (pfl) and shared out over
   * this block's tiles, one prefetch per k step, so that they arrive while this block computes.
   * Row-major B only: B^T was packed above and is in cache. Without memory for the list, no
   * prefetching. Touches no result. */
  const char **pfl = NULL;
  size_t pfl_bytes = 0;
  if (kc < K) {
    int64_t a_lines = transA ? kc * lines_max(mc) : mc * lines_max(kc), b_lines = transB ? 0 : kc * lines_max(N);
    pfl_bytes = sizeof *pfl * (size_t)(a_lines + b_lines);
    pfl = al_malloc(pfl_bytes);
  }
  for (int64_t i0 = 0; i0 < M; i0 += mc) {
    int64_t i1 = i0 + mc < M ? i0 + mc : M;
    int64_t tiles = 0;   /* tile calls per K block */
    for (int64_t i = i0; i < i1; i += tile_rows(i1 - i)) tiles++;
    tiles *= (N + NR - 1) / NR;
    for (int64_t k0 = 0; k0 < K; k0 += kc) {
      int64_t kb = K - k0 < kc ? K - k0 : kc;
      int first = k0 == 0, last = k0 + kb == K;
      int64_t npf = 0, t = 0;
      if (pfl && !last) {
        int64_t k1 = k0 + kb, kbn = K - k1 < kc ? K - k1 : kc;
        npf = transA ? row_lines(pfl, A + k1 * lda + i0, kbn, lda, i1 - i0) : row_lines(pfl, A + i0 * lda + k1, i1 - i0, lda, kbn);
        if (!transB) npf += row_lines(pfl + npf, B + k1 * ldb, kbn, ldb, N);
      }
      for (int64_t j0 = 0; j0 < N; j0 += NR) {
        int nr = N - j0 < NR ? (int)(N - j0) : NR;
        for (int64_t i = i0; i < i1; t++) {
          int h = tile_rows(i1 - i);
          float *wi = w ? w + (i - i0) * N + j0 : NULL;
          int64_t p0 = t * npf / tiles, p1 = (t + 1) * npf / tiles;   /* this tile's share of the list */
          tile(h, nr, transA, kb, transA ? A + k0 * lda + i : A + i * lda + k0, lda, transB ? b + j0 * K + k0 * NR : b + k0 * bld + j0, bld, alpha,
               beta, ci + i * ldci + j0, ldci, C + i * ldc + j0, ldc, first ? NULL : wi, last ? NULL : wi, N,
               pfl ? pfl + p0 : NULL, p1 - p0);
          i += h;
        }
      }
    }
  }
  if (pfl) al_free(pfl, pfl_bytes);
  if (w) al_free(w, w_bytes);
  if (pack && pack != pack_stack) al_free(pack, pack_bytes);
  return AL_OK;
}

void al_gemm_f32_finish_transposed_(int64_t M, int64_t N, float alpha, const float *t, float beta,
                                    const float *ci, int64_t ldci, float *C, int64_t ldc) {
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      float v = alpha * t[j * M + i];
      if (beta != 0) v = v + beta * ci[i * ldci + j];   /* (no fma: -std=c11 contracts nothing) */
      C[i * ldc + j] = v;
    }
}

al_status al_gemm_f32(int transA, int transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                      int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  return gemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, C, ldc);
}

al_status al_gemm_f32_bias(int transA, int transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                           int64_t lda, const float *B, int64_t ldb, const float *bias, float *C, int64_t ldc) {
  if (!bias) return gemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, 0.0f, C, ldc, C, ldc);
  return gemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, 1.0f, bias, 0, C, ldc);
}
