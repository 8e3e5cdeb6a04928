/* core/norm/entmax_common.h -- what the two entmax kernels (core/norm/entmax15.c and
 * core/norm/entmax_bisect*.c) share, private to them: the 8-lane double helpers and the start
 * bounds' lanes of their per-row decisions, and the -inf padding and transpose of candidate
 * lists. */
#ifndef ATTNLAB_NORM_ENTMAX_COMMON_H
#define ATTNLAB_NORM_ENTMAX_COMMON_H

#include "internal.h"

/* 8-lane double helpers for the per-row decisions (rows in lanes: see e15_decide_lanes,
 * bis_lanes). Masks are 0 / -1 lanes, selections on the bits, so that every lane computes
 * exactly what the scalar expression would (no FMA contraction under -std=c11: bitwise the same
 * results as one row at a time). */
typedef int64_t bis_vl __attribute__((vector_size(64)));
typedef uint64_t bis_vu __attribute__((vector_size(64)));
AL_VI al_vd bis_dsel(bis_vl m, al_vd a, al_vd b) { return (al_vd)(((bis_vl)a & m) | ((bis_vl)b & ~m)); }
AL_VI al_vd bis_dabs(al_vd a) { return (al_vd)((bis_vl)a & 0x7FFFFFFFFFFFFFFFll); }
AL_VI al_vd bis_dld(const double *p) { al_vd v; memcpy(&v, p, sizeof v); return v; }
AL_VI void bis_dst(double *p, al_vd v) { memcpy(p, &v, sizeof v); }
AL_VI bis_vl bis_lld(const int64_t *p) { bis_vl v; memcpy(&v, p, sizeof v); return v; }

/* The start bounds' inputs (e15_start, bis_start), one lane per row of a batch: the counts
 * cnt[t] and sums sum[t] of a row's entries above the three thresholds t. Unused lanes hold
 * count 1 and sum 0, which give a finite bound that nothing reads. Arrays, not vectors: a lane
 * store into a vector variable reloads the whole vector each time. */
typedef struct {
  float cnt[3][AL_V], sum[3][AL_V];
} start_lanes;
static inline void start_lanes_init(start_lanes *S) {
  for (int l = 0; l < AL_V; l++) {
    S->cnt[0][l] = S->cnt[1][l] = S->cnt[2][l] = 1.0f;
    S->sum[0][l] = S->sum[1][l] = S->sum[2][l] = 0.0f;
  }
}
/* Row i's counts and its three partial-sum vectors, reduced, into lane i. */
static inline void start_lanes_put(start_lanes *S, int64_t i, int64_t k1, int64_t k2, int64_t k4, al_vf a1,
                                   al_vf a2, al_vf a4) {
  float s1, s2, s4;
  al_vhsum3f(a1, a2, a4, &s1, &s2, &s4);
  S->cnt[0][i] = (float)k1;
  S->cnt[1][i] = (float)k2;
  S->cnt[2][i] = (float)k4;
  S->sum[0][i] = s1;
  S->sum[1][i] = s2;
  S->sum[2][i] = s4;
}

/* -inf from entry k up to kb whole blocks (the padding adds nothing to a pass): a blend over all
 * kb blocks -- a loop from k would exit at a different point on every row, mispredicted. */
AL_VI void pad_ninf(float *c, int64_t k, int64_t kb) {
  for (int64_t b = 0; b < kb; b++)
    al_vst(c + b * AL_V, al_vsel(al_vm_ilt(al_vlane(), al_vspliti((int32_t)(k - b * AL_V))),
                                 al_vld(c + b * AL_V), al_vsplat(-INFINITY)));
}

/* The candidate lists of the rows marked in `in` (row i's list at ws + i * stride, -inf padded to
 * kb blocks) transposed into T, 16 kb vectors: T[16 cb + j] lane i = candidate 16 cb + j of row
 * i, -inf in the lanes of the other rows (a pass adds nothing for them). */
AL_VI void cand_transpose(al_vf *T, const al_vf *ws, int64_t stride, int64_t kb, const int32_t in[AL_V]) {
  for (int64_t cb = 0; cb < kb; cb++) {
    al_vf t[AL_V];
    for (int64_t i = 0; i < AL_V; i++) t[i] = in[i] ? ws[i * stride + cb] : al_vsplat(-INFINITY);
    al_vtranspose16(t);
    for (int64_t j = 0; j < AL_V; j++) T[cb * AL_V + j] = t[j];
  }
}

#endif
