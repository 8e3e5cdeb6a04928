/* core/norm/entmax_bisect.h -- what the files of alpha-entmax (core/norm/entmax_bisect*.c; the
 * method is described in entmax_bisect.c) share, private to them: the per-row state of a
 * forward batch, the decisions between its passes (entmax_bisect_step.c), the row kernels the
 * entry points run (entmax_bisect_fwd.c, entmax_bisect_bwd.c) and their workspace sizes. */
#ifndef ATTNLAB_NORM_ENTMAX_BISECT_H
#define ATTNLAB_NORM_ENTMAX_BISECT_H

#include "entmax_common.h"

/* alpha: rows values, each finite and > 1; else sets the message (naming who) and returns
 * AL_EINVAL. */
al_status al_bisect_check_alpha_(const char *who, const float *alpha, int64_t rows);

/* Per-row state of alpha-entmax between the phases of a batch. */
typedef struct {
  float m, fam1, finv, finvm1;   /* max; alpha-1, 1/(alpha-1), 1/(alpha-1) - 1 as floats */
  double am1, inv;
  int32_t state;   /* 0 NaN row, 1 nothing kept, 2 done, 3 Newton (alpha <= 2) */
  int32_t k, kb;   /* candidates; their blocks */
  float lim;   /* the candidates are y > lim */
} bis_row;
enum { BIS_NAN, BIS_EMPTY, BIS_DONE, BIS_NEWTON };

typedef struct {
  double s[AL_NORM_BATCH], lo[AL_NORM_BATCH], hi[AL_NORM_BATCH];
  double it[AL_NORM_BATCH];
  double corr[AL_NORM_BATCH], corr2[AL_NORM_BATCH];
  double am1[AL_NORM_BATCH], inv[AL_NORM_BATCH];
  double h[AL_NORM_BATCH], D[AL_NORM_BATCH], D2[AL_NORM_BATCH], dm[AL_NORM_BATCH];
  int64_t live[AL_NORM_BATCH];
  int64_t more[AL_NORM_BATCH];
} bis_lanes;

/* The decisions after an evaluation (entmax_bisect_step.c): the Newton rows' lanes 0 .. nr-1
 * (nr <= 16) marked live (al_bisect_step_newton_, alpha <= 2). A row with alpha > 2 is solved
 * whole, in double, by al_bisect_solve_big_: its k candidates' x c (the max among them), am1 =
 * alpha - 1, scratch for 2k floats; o gets p for each candidate (zero padded to whole blocks);
 * returns the evaluations used. */
void al_bisect_step_newton_(bis_lanes *L, int nr, int max_iter);
int al_bisect_solve_big_(float *o, const float *c, int64_t k, double am1, float *scratch);

/* Rows up to BIS_TR_MAX_N columns run with rows in lanes, forward and backward. */
#define BIS_TR_MAX_N 256
AL_VI int bis_tr_ok(int64_t n) { return n <= BIS_TR_MAX_N; }

/* Lanes of bits filled in order from p[0..popcount), zeros elsewhere. */
AL_VI al_vf bis_expand(const float *p, uint32_t bits) {
#if defined(__AVX512F__)
  return (al_vf)_mm512_maskz_expandloadu_ps((__mmask16)bits, p);
#else
  al_vf v = al_vsplat(0.0f);
  for (int64_t q = 0; bits; bits &= bits - 1) v[__builtin_ctz(bits)] = p[q++];
  return v;
#endif
}

/* The forward's batch (al_norm_fwd_kernel) and its workspace vectors per thread for rows of n. */
int al_bisect_fwd_batch_(const al_norm_fwd_rows *a, int64_t r0, int64_t nr, al_vf *ws, void *state);
int64_t al_bisect_fwd_vectors_(int64_t n);

/* The backward's rows (al_norm_bwd_kernel): BIS_R rows in lockstep (al_bisect_bwd_rows_), or
 * up to 16 rows in lanes (al_bisect_bwd_lanes_, for 16 <= n <= BIS_TR_MAX_N); the workspace
 * vectors per thread of either. */
#define BIS_R 4
void al_bisect_bwd_rows_(const al_norm_bwd_rows *a, int64_t r0, int R, al_vf *ws);
void al_bisect_bwd_lanes_(const al_norm_bwd_rows *a, int64_t r0, int R, al_vf *ws);
int64_t al_bisect_bwd_vectors_(int64_t n, int lanes);

#endif
