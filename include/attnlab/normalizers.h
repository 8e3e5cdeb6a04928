/* attnlab/normalizers.h -- attention normalizers over contiguous rows (C kernels).
 *
 * Pure C11, no Lua. Every kernel maps rows of length n to probability rows:
 *   softmax            exp(x - max) / sum
 *   sparsemax          [x - tau]_+                      Martins & Astudillo 2016, eq. 2-4
 *   entmax15           [x/2 - tau]_+^2                  Peters, Niculae & Martins 2019, alg. 2
 *   entmax_bisect      [(alpha-1)x - tau]_+^(1/(alpha-1))   Peters et al. 2019 eq. 9;
 *                      alpha per row, gradient to alpha: Correia, Niculae & Martins 2019
 *   topk_softmax       softmax over the k largest entries, exact zeros elsewhere
 *
 * Layout: x, out, gout, gin are (rows, n) float32, contiguous.
 * keep:   NULL, or uint8 (mrows, n) with rows % mrows == 0; row r uses keep row
 *         r / (rows / mrows) (e.g. a key-padding mask (B, T) for scores (B, H, T, T) flattened
 *         to rows = B*H*T: mrows = B). With rows == 0, mrows may be 0 (an empty batch's mask).
 *         keep[j] == 0 -> out[j] = 0 exactly and x[j] never influences anything (it may be NaN
 *         or garbage). x[j] == -inf behaves exactly like keep[j] == 0, for every normalizer.
 *         A row with nothing kept (every entry masked or -inf) gives all zeros (never NaN).
 *         A kept NaN or +inf makes that whole output row NaN (as PyTorch would), so NaN guards
 *         see it instead of it being silently dropped -- a row that keeps nothing but NaN too.
 * Backward functions ACCUMULATE: gin += dL/dx. They need no mask: out is 0 where masked, and
 *         every backward gives 0 gradient where out == 0, and an all-masked row 0 gradient.
 *         Each entry of gin gets exactly one float addition gin[j] += t_j, t_j independent of
 *         gin (the tests check bitwise that two calls add twice what one adds). A backward sees
 *         only the saved output, never x: the Jacobian must be computable from out.
 *         NaN in, NaN out: a NaN output row (a kept NaN or +inf in x) gets NaN in every entry
 *         of gin (and galpha) under every normalizer, so the gradient never hides it as 0.
 *         Each has a _write twin with the same arguments that WRITES gin = dL/dx (and galpha)
 *         without reading it, bitwise equal to accumulating into zeros: a fresh gradient buffer
 *         then needs no zero fill (which moves as many bytes as the backward itself).
 * Threads: rows are split across OpenMP threads when rows*n >= AL_PAR_MIN_WORK; a row's result
 *         never depends on the other rows or on the split, so it is bitwise identical for any
 *         thread count.
 * Sums are accumulated in double (in float per lane over at most four terms first, al_dacc).
 * Errors: AL_EINVAL with a message naming the bad value or shape (al_errmsg()); nothing is
 *         written then. AL_ENOMEM if a row is too long for the stack workspace and the heap fails.
 * Implementation: one file per normalizer in core/norm/, written on the 16-lane vectors of
 *         core/norm/vec.h (private to core/ and the kernel tests); why, and how rows are
 *         blocked, is explained there. Each file opens with its scalar reference (below). */
#ifndef ATTNLAB_NORMALIZERS_H
#define ATTNLAB_NORMALIZERS_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out = softmax(x) over each row. Saves: out. */
al_status al_softmax_fwd(float *out, const float *x, const uint8_t *keep, int64_t mrows,
                         int64_t rows, int64_t n);
/* out = softmax(x): gin += out * (gout - <out, gout>). */
al_status al_softmax_bwd(float *gin, const float *gout, const float *out, int64_t rows, int64_t n);
al_status al_softmax_bwd_write(float *gin, const float *gout, const float *out, int64_t rows,
                               int64_t n);

/* out = sparsemax(x) = argmin_{p in simplex} ||p - x||^2, exact (sort-free; equals the
 * sort-based definition). Saves: out (the support is out > 0). */
al_status al_sparsemax_fwd(float *out, const float *x, const uint8_t *keep, int64_t mrows,
                           int64_t rows, int64_t n);
/* out = [x - tau]_+: gin += s * (gout - <s, gout>/|s|), s = [out > 0]. */
al_status al_sparsemax_bwd(float *gin, const float *gout, const float *out, int64_t rows,
                           int64_t n);
al_status al_sparsemax_bwd_write(float *gin, const float *gout, const float *out, int64_t rows,
                                 int64_t n);

/* out = 1.5-entmax(x) = [x/2 - tau]_+^2 with sum 1, exact (equals the sort-based closed form).
 * Saves: out. */
al_status al_entmax15_fwd(float *out, const float *x, const uint8_t *keep, int64_t mrows,
                          int64_t rows, int64_t n);
/* out = [x/2 - tau]_+^2: w = sqrt(out), gin += w*gout - w*<w, gout>/sum(w). */
al_status al_entmax15_bwd(float *gin, const float *gout, const float *out, int64_t rows, int64_t n);
al_status al_entmax15_bwd_write(float *gin, const float *gout, const float *out, int64_t rows,
                                int64_t n);

/* The smallest alpha alpha-entmax takes. Below it the float32 forward loses accuracy as
 * ~(2^-24/(alpha-1))^2: the largest error over random rows was 8e-8 (float rounding, as at any
 * other alpha) at alpha = 1.0001, 1.5e-7 at 1.00005, 3.4e-6 at 1.00001, 1e-3 at 1.000001 and 0.08
 * at 1 + 2^-23, the first float above 1. Softmax is the limit alpha -> 1 (1.7e-4 from it at
 * alpha = 1.0001 on scores ~ N(0,1), n = 65). Every entry point that takes alpha (the kernels,
 * al_normalize, al_attention) refuses a smaller one with this reason. */
#define AL_ENTMAX_ALPHA_MIN 1.0001f
#define AL_ENTMAX_ALPHA_MIN_WHY \
  "closer to 1 alpha-entmax is not float32-accurate (its error grows as 1/(alpha-1)^2); use softmax, its limit"

/* out = alpha-entmax(x) with alpha[r] for row r: [(alpha-1)x - tau]_+^(1/(alpha-1)).
 * alpha: one value per row (rows floats), each finite and >= AL_ENTMAX_ALPHA_MIN (else
 * AL_EINVAL naming the value); alpha = 2 is sparsemax, 1.5 is entmax15, alpha -> 1 tends to
 * softmax.
 * alpha <= 2: tau lies in [max-1, max-(1/n)^(alpha-1)] of (alpha-1)x (the bisection bracket)
 * and is solved to float32 precision by Halley steps (Newton from the left) on the norm
 * ||[(alpha-1)x - tau]_+||_{1/(alpha-1)} = 1, which is convex in tau, so a Newton step from the
 * right never overshoots (bisection only guards against rounding), finished on the right of the
 * root by a second-order update that is exact to float precision -- typically 3 evaluations per
 * row where bisection needs 25+; at most max_iter (>= 1) evaluations per row (fewer leave the
 * row unconverged, still summing to 1).
 * alpha > 2: not through tau at all, whose double precision cannot reach the p of an entry at
 * the support's edge for alpha above ~3 (p = d^(1/(alpha-1)) of a d = (alpha-1)x - tau below
 * tau's rounding is off by up to (2^-52)^(1/(alpha-1)): 6e-6 at alpha = 4; at alpha = 20,
 * p = 0.11 sits on d = 6e-19). The support's last value is found at
 * exact breakpoints and its p solved for itself, every p then exact to double rounding before
 * its float rounding (core/norm/entmax_bisect_step.c): float32-accurate for every finite
 * alpha > 2 (at 3e38 the ties at the max share 1). max_iter does not cap this path: it runs to
 * its end in about 2 log2(support) + 3..6 evaluations (at most 34 over random rows of up to
 * 4096 entries), fewer than the regula falsi it replaced used.
 * *iters_used (may be NULL) gets the max evaluations used over rows. The output is renormalised
 * to sum to 1 over the support. Saves: out and alpha. */
al_status al_entmax_bisect_fwd(float *out, const float *x, const float *alpha,
                               const uint8_t *keep, int64_t mrows, int64_t rows, int64_t n,
                               int max_iter, int *iters_used);
/* gin += dL/dx (gin may be NULL); galpha[r] += dL/dalpha_r (galpha may be NULL).
 * Correia, Niculae & Martins 2019: w = p^(2-alpha) on the support, dx = w*g - w*<w,g>/sum(w);
 * dp/dalpha = (p - w~)/(alpha-1)^2 - (S - w~ H)/(alpha-1), S = p log p, H = sum S,
 * w~ = w/sum w. The two terms of dp/dalpha cancel to O(1) as alpha -> 1, so galpha carries a
 * relative error of roughly 1e-7/(alpha-1)^2 (1e-3 at alpha = 1.01, 4e-5 at 1.05).
 * For alpha > 2, w is largest where p is smallest, and w*g - w*<w,g>/sum(w) cancels to rounding
 * times that w: such rows are formed in double with the dominant entry's term summed pairwise
 * (core/norm/entmax_bisect_bwd.c), float32-accurate for any alpha. A gradient beyond float32's
 * range (several support entries with p^(2-alpha) > 3.4e38: the Jacobian is that large) comes
 * out +-inf. */
al_status al_entmax_bisect_bwd(float *gin, float *galpha, const float *gout, const float *out,
                               const float *alpha, int64_t rows, int64_t n);
al_status al_entmax_bisect_bwd_write(float *gin, float *galpha, const float *gout,
                                     const float *out, const float *alpha, int64_t rows,
                                     int64_t n);

/* out = softmax over the k largest kept entries of each row, exact zeros elsewhere, with
 * k = max(1, ceil(ratio * n_kept)) (n_kept: kept entries that are not -inf; the ceil forgives
 * a relative rounding error of 1e-9, so 0.3*10 gives 3 and 0.25*17 gives 5). Among equal values
 * at the boundary the LOWER index wins. ratio in (0, 1], else AL_EINVAL. Saves: out. */
al_status al_topk_softmax_fwd(float *out, const float *x, double ratio, const uint8_t *keep,
                              int64_t mrows, int64_t rows, int64_t n);
/* Same as softmax's: gin += out * (gout - <out, gout>) (0 where out == 0). */
al_status al_topk_softmax_bwd(float *gin, const float *gout, const float *out, int64_t rows,
                              int64_t n);
al_status al_topk_softmax_bwd_write(float *gin, const float *gout, const float *out,
                                    int64_t rows, int64_t n);
/* The k that al_topk_softmax_fwd uses for n_kept entries: ceil(ratio * n_kept) within [1, n_kept]
 * (0 when n_kept == 0; n_kept for a NaN ratio, which the normalizer refuses before it asks). */
int64_t al_topk_count(double ratio, int64_t n_kept);

/* Scalar references in double, one row at a time: the tests' oracles, written from the
 * definitions (sorting where the definition sorts), not fast. x (n) float with keep row kr
 * (NULL = all kept; -inf = not kept); param: alpha (entmax_bisect), ratio (topk_softmax), else
 * unused. ref_fwd writes out (n); ref_bwd writes gin (n) = dL/dx from gout and out (n), and
 * for entmax_bisect *galpha = dL/dalpha when galpha is not NULL. */
void al_softmax_ref_fwd(double *out, const float *x, const uint8_t *kr, int64_t n, double param);
void al_softmax_ref_bwd(double *gin, double *galpha, const double *gout, const double *out, int64_t n,
                        double param);
void al_sparsemax_ref_fwd(double *out, const float *x, const uint8_t *kr, int64_t n, double param);
void al_sparsemax_ref_bwd(double *gin, double *galpha, const double *gout, const double *out,
                          int64_t n, double param);
void al_entmax15_ref_fwd(double *out, const float *x, const uint8_t *kr, int64_t n, double param);
void al_entmax15_ref_bwd(double *gin, double *galpha, const double *gout, const double *out,
                         int64_t n, double param);
void al_entmax_bisect_ref_fwd(double *out, const float *x, const uint8_t *kr, int64_t n, double param);
void al_entmax_bisect_ref_bwd(double *gin, double *galpha, const double *gout, const double *out,
                              int64_t n, double param);
void al_topk_softmax_ref_fwd(double *out, const float *x, const uint8_t *kr, int64_t n, double param);
void al_topk_softmax_ref_bwd(double *gin, double *galpha, const double *gout, const double *out,
                             int64_t n, double param);

/* Diagnostics: count[r] = #{j : out[r, j] > 0} (support size; rows ints). */
void al_support_count(int32_t *count, const float *out, int64_t rows, int64_t n);

#ifdef __cplusplus
}
#endif

#endif
