/* core/norm/entmax15.c -- 1.5-entmax over rows, exact: p = [z/2 - tau]_+^2 with sum p = 1
 * (Peters, Niculae & Martins 2019, alg. 2).
 *
 * Pure C11 + GNU vector extensions + OpenMP, no Lua. entmax15 is the exact alpha = 1.5 case of
 * alpha-entmax (core/norm/entmax_bisect.c explains the iteration on a norm). On a fixed support S
 * of size k the condition sum_S (t_j - delta)^2 = 1 is a quadratic with the closed-form root used
 * by the sort-based algorithm (tau = mean - sqrt((1 - k var)/k)); we reach the support with the
 * same safe Newton steps on H = ||[u + s]_+||_2 and stop as soon as the closed form is
 * consistent (every element of S stays positive), which makes tau exact.
 *
 * Rows run in batches phase by phase (see entmax15_batch), which lets the CPU overlap the rows'
 * chains of reductions; the per-row scalar decisions (start bounds, Newton steps, stop tests) run
 * rows-in-lanes, one vector lane per row of the batch, with results bitwise those of the one-row
 * arithmetic; the decisions are branch-free where the way a row goes is data.
 * The file opens with the scalar reference in double (the tests' oracle). */
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/normalizers.h"
#include "attnlab/threads.h"
#include "entmax_common.h"

/* ---- scalar reference (double) ----
 * out (n) = [u - tau]_+^2, u = (x - max)/2 over the kept finite entries, by the sort-based
 * closed form: sorted descending, for each prefix of k entries tau_k = mean - sqrt((1 - k var)/k)
 * (k var = sum u^2 - k mean^2), and tau is the last tau_k <= u_(k). */
void al_entmax15_ref_fwd(double *out, const float *x, const uint8_t *kr, int64_t n, double param) {
  al_norm_ref_entry *v = malloc(sizeof *v * (size_t)(n > 0 ? n : 1));
  for (int64_t j = 0; j < n; j++) out[j] = 0.0;
  const int64_t m = v ? al_norm_ref_sorted_(v, x, kr, n) : 0;
  const double mx = m ? v[0].v : 0.0;
  double s1 = 0, s2 = 0, tau = 0;
  for (int64_t i = 0; i < m; i++) {
    const double u = (v[i].v - mx) / 2;
    s1 += u;
    s2 += u * u;
    const double k = (double)(i + 1), mean = s1 / k, ss = s2 - k * mean * mean;   /* k * var */
    const double t = mean - sqrt(fmax((1.0 - ss) / k, 0.0));
    if (t <= u) tau = t;
  }
  for (int64_t i = 0; i < m; i++) {
    const double d = fmax((v[i].v - mx) / 2 - tau, 0.0);
    out[v[i].i] = d * d;
  }
  free(v);
}
/* out = [u - tau]_+^2: with w = sqrt(out), gin = w gout - w <w, gout>/sum(w). */
void al_entmax15_ref_bwd(double *gin, double *galpha, const double *gout, const double *out,
                         int64_t n, double param) {
  double sw = 0, swg = 0;
  for (int64_t j = 0; j < n; j++) {
    const double w = sqrt(out[j]);
    sw += w;
    swg += w * gout[j];
  }
  for (int64_t j = 0; j < n; j++) {
    const double w = sqrt(out[j]);
    gin[j] = sw > 0 ? w * gout[j] - w * swg / sw : 0.0;
  }
}

/* ---- forward ---- */

/* One pass at s over a row's blocks of u = (x - max)/2: k = |S|, min_S t and, in double,
 * s1 = sum_S t and s2 = sum_S t^2, S = {t = u + s > 0}. */
typedef struct { al_vi cnt; al_vf mn; al_dacc s1, s2; } e15_acc;
AL_VI void e15_acc_init(e15_acc *a) {
  a->cnt = (al_vi){0};
  a->mn = al_vsplat(INFINITY);
  al_dacc_init(&a->s1);
  al_dacc_init(&a->s2);
}
AL_VI void e15_acc_add(e15_acc *a, al_vf t, int64_t b) {
  const al_vm in = al_vm_gt(t, al_vsplat(0.0f));
  const al_vf tc = al_vzero(t, in);
  a->cnt = al_vinc(a->cnt, in);
  a->mn = al_vmin(a->mn, al_vsel(in, t, al_vsplat(INFINITY)));
  a->s1.f += tc;
  a->s2.f = al_vfma(tc, tc, a->s2.f);
  if (AL_DACC_DUE(b)) { al_dacc_flush(&a->s1); al_dacc_flush(&a->s2); }
}
/* The decisions after a pass at s, for the rows of a batch at once (one lane per row; per row
 * and pass the scalar chain -- a square root, a division, the consistency test, the float Newton
 * step -- cost about as much as the pass itself). For each row: done when the closed form on S
 * is consistent (S is the support), with tau set; else s moved by a safe Newton step on
 * H(s) = sqrt(s2) = 1 (convex, approached from the right: never overshoots). The closed form on S,
 *   k delta^2 - 2 s1 delta + (s2 - 1) = 0,  delta = (s2 - 1) / (s1 + sqrt(s1^2 - k (s2 - 1)))
 * (the smaller root, written without cancellation), is consistent iff delta <= 0 or every
 * member of S stays positive, min_S t > delta; the test avoids the square root and division:
 *   mn (s1 + sqrt(disc)) > s2 - 1  <=>  q := s2 - 1 - mn s1 < 0  or  mn^2 disc > q^2.
 * Both ways are computed for every lane and selected (which way a row goes is data). The step
 * needs no double: s only has to stay right of s* (the closed form, not s, makes the result
 * exact). In: k, s1, s2, mn of each row's pass, s; tau and s updated for the live rows; returns
 * the rows done, as bits. */
typedef struct {
  double k[AL_NORM_BATCH], s1[AL_NORM_BATCH], s2[AL_NORM_BATCH], mn[AL_NORM_BATCH];
  double tau[AL_NORM_BATCH];
  float s[AL_NORM_BATCH];
} e15_lanes;
AL_VI al_vd e15_vdsqrt(al_vd x) {
#if defined(__AVX512F__)
  return (al_vd)_mm512_sqrt_pd((__m512d)x);
#else
  for (int l = 0; l < 8; l++) x[l] = al_dsqrt(x[l]);
  return x;
#endif
}
static inline uint32_t e15_decide_lanes(e15_lanes *E, int64_t nr, uint32_t live) {
  uint32_t done = 0;
  float s2f[AL_V], s1f[AL_V];
  for (int l = 0; l < AL_V; l++) { s2f[l] = (float)E->s2[l]; s1f[l] = (float)E->s1[l]; }
  const al_vf S = al_vld(E->s), S2 = al_vld(s2f);
  const al_vf sn = S - (S2 - al_vsqrt(S2)) / al_vld(s1f);   /* the Newton step, in float */
  for (int q = 0; q < nr; q += 8) {
    const al_vd k = bis_dld(E->k + q), s1 = bis_dld(E->s1 + q), s2 = bis_dld(E->s2 + q);
    const al_vd mn = bis_dld(E->mn + q);
    const al_vd disc = s1 * s1 - k * (s2 - 1.0), qq = s2 - 1.0 - mn * s1;
    const bis_vl exact = (disc >= 0.0) & ((s2 <= 1.0) | (qq < 0.0) | (mn * mn * disc > qq * qq));
    const al_vd sd = e15_vdsqrt(bis_dsel(disc > 0.0, disc, (al_vd){0}));
    al_vd sq;
    for (int l = 0; l < 8; l++) sq[l] = (double)E->s[q + l];
    const al_vd t = (s2 - 1.0) / (s1 + sd) - sq;
    bis_dst(E->tau + q, bis_dsel(exact, t, bis_dld(E->tau + q)));
    for (int l = 0; l < 8; l++) done |= (uint32_t)(exact[l] & 1) << (q + l);
  }
  done &= live;
  for (int l = 0; l < AL_V; l++) E->s[l] = (live >> l & 1) && !(done >> l & 1) ? sn[l] : E->s[l];
  return done;
}

/* The first s: an upper bound on s* (so that Newton starts right of the root), tighter than 1
 * (H(1) >= 1: the max alone has t = 1). For any set T of j entries, H(s) >= ||[u_T + s]_+||_2
 * >= sum_T (u + s) / sqrt(j) (Cauchy-Schwarz), so H(s_T) >= 1 at s_T = (sqrt(j) - sum_T u)/j
 * and s* <= s_T; T = {u > c} for three thresholds c (each holds the max: j >= 1). In float (this
 * runs once per row; with double sums it measured slower): each lane of the sums adds
 * <= nb terms of |u| <= 1, so sum_T u is off by < (nb + 4) 2^-24 j and s_T by < (nb + 4) 2^-24;
 * the margin covers that and the roundings of sqrt and / (and keeps the start strictly right of
 * s* where the bound is tight, e.g. on all-equal rows). From ~2.9 passes per row to ~1.7. */
/* (One lane per row: the three square roots and divisions of a batch's rows as vectors, the same
 * operations lane by lane as one row at a time.) */
AL_VI al_vf e15_start(int64_t nb, al_vf f1, al_vf s1, al_vf f2, al_vf s2, al_vf f4, al_vf s4) {
  const al_vf b1 = (al_vsqrt(f1) - s1) / f1, b2 = (al_vsqrt(f2) - s2) / f2, b4 = (al_vsqrt(f4) - s4) / f4;
  al_vf b = al_vsel(al_vm_lt(b1, b2), b1, b2);
  b = al_vsel(al_vm_lt(b, b4), b, b4);
  b = b * (1.0f + 1e-4f) + (float)(nb + 4) * 0x1p-23f;
  return al_vsel(al_vm_lt(b, al_vsplat(1.0f)), b, al_vsplat(1.0f));
}

typedef struct {
  float m, s;
  int state;   /* 0 = NaN row, 1 = nothing kept, 2 = solved, 3 = iterating */
  double tau;
} e15_row;

/* A batch of rows r0 .. r0+nr-1 (nr <= AL_NORM_BATCH), n >= 16, phase by phase: each phase runs
 * over all rows of the batch before the next starts, so the rows' independent chains (sums,
 * square roots, divisions, the exit test) overlap in the CPU -- one row alone is latency-bound.
 * Results do not depend on the batching. ws: 2 nb + 1 vectors per row of room for 16 rows, then
 * e15_tr_vectors.
 *   1. load: max, NaN/+inf test;
 *   2. the candidates u = (x - max)/2 > -1 (the support for any tau >= -1) compacted: ~25 of a
 *      row of 65 scores ~ N(0,1); with them the sums for the start s0 >= s* (e15_start), and
 *      the candidates compacted again to u > -s0 (~12 left);
 *   3. passes over the candidates, then decisions, for the rows not done, from s0, until the
 *      closed form is consistent (1.7 passes per row on such rows, 2.9 from s = 1); the Newton
 *      iterates stay right of s*, so the candidates stay a superset of the support. Rows up to
 *      E15_TR_MAX_N in lanes (e15_tr_pass: faster than row by row at n = 16
 *      .. 256), longer ones row by row;
 *   4. p = [u - tau]_+^2 over the row. */


/* Rows in lanes (n <= E15_TR_MAX_N): the candidate lists of the iterating rows transposed, T[c]
 * lane i = candidate c of row i (-inf past its count and in other rows' lanes), so that one pass
 * over c serves the whole batch and leaves each row's k, min, s1, s2 in its lane: no per-row
 * reductions (four per row and pass in row layout, which cost more than the pass). s1 and s2
 * are summed straight into double (t^2 of a float is exact in double). A row that is done is
 * passed over again at its unchanged s, to the same sums, until the batch's last row is done. */
#define E15_TR_MAX_N 256
AL_VI int e15_tr_ok(int64_t n) { return n <= E15_TR_MAX_N; }
AL_VI int64_t e15_tr_vectors(int64_t n) { return e15_tr_ok(n) ? AL_V * (n / AL_V + 1) : 0; }
static inline __attribute__((always_inline)) void e15_tr_pass(const al_vf *T, int64_t kc, e15_lanes *E) {
  const al_vf s = al_vld(E->s);
  al_vi cnt = (al_vi){0};
  al_vf mn = al_vsplat(INFINITY);
  al_vd s1lo = {0}, s1hi = {0}, s2lo = {0}, s2hi = {0};
  for (int64_t c = 0; c < kc; c++) {
    const al_vf t = T[c] + s;
    const al_vm in = al_vm_gt(t, al_vsplat(0.0f));
    const al_vf tc = al_vzero(t, in);
    cnt = al_vinc(cnt, in);
    mn = al_vmin(mn, al_vsel(in, t, al_vsplat(INFINITY)));
    const al_vd lo = al_vlo(tc), hi = al_vhi(tc);
    s1lo += lo;
    s1hi += hi;
    s2lo += lo * lo;
    s2hi += hi * hi;
  }
  const al_vf cf = __builtin_convertvector(cnt, al_vf);   /* (exact: counts <= 256) */
  bis_dst(E->k, al_vlo(cf));
  bis_dst(E->k + 8, al_vhi(cf));
  bis_dst(E->s1, s1lo);
  bis_dst(E->s1 + 8, s1hi);
  bis_dst(E->s2, s2lo);
  bis_dst(E->s2 + 8, s2hi);
  bis_dst(E->mn, al_vlo(mn));
  bis_dst(E->mn + 8, al_vhi(mn));
}

static inline __attribute__((always_inline)) void entmax15_batch(
    float *out, const float *x, const uint8_t *keep, int64_t mrows, int64_t rows, int64_t n,
    int64_t r0, int64_t nr, al_vf *ws, e15_row *st) {
  const al_rowgeo g = al_rowgeo_(n);
  const int64_t nb = g.nb;
  int64_t kb[AL_NORM_BATCH];
  for (int64_t i = 0; i < nr; i++) {   /* 1 */
    int bad;
    st[i].m = al_norm_load_row_(ws + i * (2 * nb + 1), x + (r0 + i) * n,
                                al_norm_keeprow_(keep, mrows, rows, n, r0 + i), &g, &bad);
    st[i].state = bad ? 0 : st[i].m == -INFINITY ? 1 : 3;
  }
  e15_acc acc[AL_NORM_BATCH];
  e15_lanes E;
  start_lanes SL;   /* e15_start's inputs */
  start_lanes_init(&SL);
  for (int64_t i = 0; i < nr; i++) {   /* 2: the candidates u = (x - max)/2 > -1, compacted */
    al_norm_prefetch_row_(x, out, r0 + i + nr, rows, n, nb);   /* the next batch */
    kb[i] = 0;
    if (st[i].state != 3) continue;
    const al_vf *w = ws + i * (2 * nb + 1);
    float *c = (float *)(w + nb);
    const al_vf m = al_vsplat(st[i].m);
    int64_t k = 0, k2 = 0, k4 = 0;
    al_vf a1 = al_vsplat(0.0f), a2 = a1, a4 = a1;   /* sum u over u > -1, > -1/2, > -1/4 */
    for (int64_t b = 0; b < nb; b++) {
      const al_vf u = (w[b] - m) * 0.5f;
      const al_vm m1 = al_vm_gt(u, al_vsplat(-1.0f)), m2 = al_vm_gt(u, al_vsplat(-0.5f));
      const al_vm m4 = al_vm_gt(u, al_vsplat(-0.25f));
      k = al_norm_compact_(c, k, u, m1);
      k2 += al_vm_count(m2);
      k4 += al_vm_count(m4);
      a1 += al_vzero(u, m1);
      a2 += al_vzero(u, m2);
      a4 += al_vzero(u, m4);
    }
    kb[i] = k;
    start_lanes_put(&SL, i, k, k2, k4, a1, a2, a4);
  }
  float s0[AL_V];
  al_vst(s0, e15_start(nb, al_vld(SL.cnt[0]), al_vld(SL.sum[0]), al_vld(SL.cnt[1]), al_vld(SL.sum[1]),
                       al_vld(SL.cnt[2]), al_vld(SL.sum[2])));
  for (int64_t i = 0; i < nr; i++) {
    if (st[i].state != 3) continue;
    float *c = (float *)(ws + i * (2 * nb + 1) + nb);
    const int64_t k = kb[i];
    st[i].s = s0[i];
    /* the support for any s <= s0 lies in u > -s0: compacted again, in place (block b is read
     * before the count reaches it), before the first pass */
    const al_vf lim = al_vsplat(-st[i].s * (1.0f + 1e-5f));
    int64_t kk = 0;
    for (int64_t b = 0; b * AL_V < k; b++) {
      const al_vf u = al_vld(c + b * AL_V);
      const al_vm live = al_vm_ilt(al_vlane(), al_vspliti((int32_t)(k - b * AL_V)));
      kk = al_norm_compact_(c, kk, u, al_vm_gt(u, lim) & live);
    }
    kb[i] = kk;
  }
  /* 3: passes over the rows still iterating (listed in act: no per-row branch in the vector
   * loops, and their block counts evened out), then the decisions */
  int32_t act[AL_NORM_BATCH];
  int64_t na = 0, kbm = 0;
  for (int64_t i = 0; i < nr; i++) {
    act[na] = (int32_t)i;
    na += st[i].state == 3;
    kbm = kb[i] > kbm ? kb[i] : kbm;   /* (kb holds the candidate counts here) */
  }
  kbm = (kbm + AL_V - 1) / AL_V;
  for (int64_t j = 0; j < na; j++) pad_ninf((float *)(ws + act[j] * (2 * nb + 1) + nb), kb[act[j]], kbm);
  for (int l = 0; l < AL_V; l++) {   /* every lane benign; the rows' s */
    E.k[l] = E.s1[l] = E.s2[l] = E.mn[l] = 1.0;
    E.tau[l] = 0.0;
    E.s[l] = l < nr && st[l].state == 3 ? st[l].s : 1.0f;
  }
  /* rows up to E15_TR_MAX_N: in lanes (e15_tr_pass); T after the batch's rows */
  const int tr = e15_tr_ok(n);
  al_vf *T = tr ? ws + AL_NORM_BATCH * (2 * nb + 1) : NULL;
  int64_t kcn = 0;   /* the largest candidate count */
  if (tr) {
    int32_t iter[AL_V];
    for (int64_t i = 0; i < AL_V; i++) iter[i] = i < nr && st[i].state == 3;
    for (int64_t j = 0; j < na; j++) kcn = kb[act[j]] > kcn ? kb[act[j]] : kcn;
    cand_transpose(T, ws + nb, 2 * nb + 1, kbm, iter);
  }
  for (int64_t it = 0; it < 4 * n + 64 && na > 0; it++) {
    uint32_t live = 0;
    for (int64_t j = 0; j < na; j++) live |= 1u << act[j];
    if (tr) {
      e15_tr_pass(T, kcn, &E);
    } else {
      for (int64_t j = 0; j < na; j++) {   /* (the first at s0) */
        const int64_t i = act[j];
        const al_vf *c = ws + i * (2 * nb + 1) + nb, s = al_vsplat(st[i].s);
        e15_acc_init(&acc[i]);
        for (int64_t b = 0; b < kbm; b++) e15_acc_add(&acc[i], c[b] + s, b);
      }
      for (int64_t j = 0; j < na; j++) {
        const int64_t i = act[j];
        E.k[i] = (double)al_vhsumi(acc[i].cnt);
        E.s1[i] = al_dacc_total(&acc[i].s1);
        E.s2[i] = al_dacc_total(&acc[i].s2);
        E.mn[i] = (double)al_vhmin(acc[i].mn);
      }
    }
    const uint32_t done = e15_decide_lanes(&E, nr, live);
    int64_t na2 = 0;
    for (int64_t j = 0; j < na; j++) {
      const int64_t i = act[j];
      const int d = (int)(done >> i & 1);
      st[i].state = d ? 2 : 3;
      st[i].tau = E.tau[i];
      st[i].s = E.s[i];
      act[na2] = (int32_t)i;
      na2 += !d;
    }
    na = na2;
  }
  for (int64_t i = 0; i < nr; i++) {   /* 4: p = [u - tau]_+^2 over the whole row */
    float *o = out + (r0 + i) * n;
    if (st[i].state < 2) { al_norm_fill_(o, n, st[i].state == 0 ? NAN : 0.0f); continue; }
    const al_vf *w = ws + i * (2 * nb + 1);
    const al_vf m = al_vsplat(st[i].m);
    const al_vf tf = al_vsplat(st[i].state == 2 ? (float)st[i].tau : -st[i].s);
#define E15_OUT(B) ({ const al_vf v_ = (w[B] - m) * 0.5f - tf; al_vzero(v_ * v_, al_vm_gt(v_, al_vsplat(0.0f))); })
    if (g.rem) al_vst(o + g.jt, E15_OUT(g.nbf));   /* the last block first (see al_rowgeo) */
    for (int64_t b = 0; b < g.nbf; b++) al_vst(o + b * AL_V, E15_OUT(b));
#undef E15_OUT
  }
}


/* A batch of rows r0 .. r0+nr-1 of a (al_norm_fwd_kernel; short rows padded, 16 at a time). */
static int entmax15_fwd_batch(const al_norm_fwd_rows *a, int64_t r0, int64_t nr, al_vf *ws,
                              void *state) {
  e15_row st[AL_NORM_BATCH];
  if (a->keep) entmax15_batch(a->out, a->x, a->keep, a->mrows, a->rows, a->n, r0, nr, ws, st);
  else entmax15_batch(a->out, a->x, NULL, 1, a->rows, a->n, r0, nr, ws, st);
  return 0;
}
static const al_norm_fwd_kernel ENTMAX15_FWD = {"entmax15", entmax15_fwd_batch, 0, AL_NORM_BATCH};

/* Workspace vectors per thread for rows of n (entmax15_batch): 2 nb + 1 per row of a batch, then
 * e15_tr_vectors. */
static int64_t entmax15_vectors(int64_t n) {
  return al_norm_batch_(n) * (2 * (n / AL_V + 1) + 1) + e15_tr_vectors(n);
}

al_status al_entmax15_fwd(float *out, const float *x, const uint8_t *keep, int64_t mrows,
                          int64_t rows, int64_t n) {
  return al_norm_fwd_plain_(&ENTMAX15_FWD, entmax15_vectors, out, x, keep, mrows, rows, n);
}

/* ---- backward ---- */

/* Forward p = [z/2 - tau]_+^2. Implicit differentiation of sum p = 1 gives, with w = sqrt(p) =
 * p^(2-alpha) on the support (up to a constant factor that cancels):
 * dL/dz = w*g - w * <w, g>/sum(w). Rows r0 .. r0+R-1 (R <= E15_RB): a sweep for w (kept in the
 * workspace) and the two double sums of each row; the 2R sums reduced together
 * (al_vhsumd_rows; row by row each is a chain of dependent operations); a sweep for gin. */
#define E15_RB 8
static inline __attribute__((always_inline)) void entmax15_bwd_rows(
    float *gin, const float *gout, const float *out, int64_t n, int64_t r0, const int R,
    const int ACC, int64_t rows, al_vf *ws) {
  const al_rowgeo g = al_rowgeo_(n);
  const int64_t nb = g.nb;
  const al_vf zero = al_vsplat(0.0f);
  al_vd dsum[2 * E15_RB];   /* row i: sum(w) at i, <w, g> at R + i */
  double tot[2 * E15_RB];
  for (int i = 0; i < R; i++) {
    const float *p = out + (r0 + i) * n, *gr = gout + (r0 + i) * n;
    al_vf *w = ws + i * nb;
    al_dacc sw, sg;
    al_dacc_init(&sw);
    al_dacc_init(&sg);
    if (g.rem) {   /* the repeated lanes of the last block count as p = 0 */
      const al_vf w_ = al_vsqrt_fast(al_vzero(al_vld(p + g.jt), g.tm));
      w[g.nbf] = w_;
      sw.f += w_;
      sg.f = al_vfma(w_, al_vld(gr + g.jt), sg.f);
    }
    for (int64_t b = 0; b < g.nbf; b++) {
      if (!ACC) al_norm_prefetch_(gin, r0 + R + i, rows, n, b, 1);   /* see al_norm_prefetch_ */
      const al_vf w_ = al_vsqrt_fast(al_vld(p + b * AL_V));
      w[b] = w_;
      sw.f += w_;
      sg.f = al_vfma(w_, al_vld(gr + b * AL_V), sg.f);
      if (AL_DACC_DUE(b)) { al_dacc_flush(&sw); al_dacc_flush(&sg); }
    }
    al_dacc_flush(&sw);
    al_dacc_flush(&sg);
    dsum[i] = sw.lo + sw.hi;
    dsum[R + i] = sg.lo + sg.hi;
  }
  al_vhsumd_rows(dsum, 2 * R, tot);   /* al_dacc_total of each, bitwise */
  for (int i = 0; i < R; i++) {
    const float *gr = gout + (r0 + i) * n;
    float *gi = gin + (r0 + i) * n;
    const al_vf *w = ws + i * nb;
    const double wsum = tot[i];
    if (!(wsum > 0.0)) {   /* all-masked row: no gradient; NaN row: NaN gradient */
      if (!al_norm_nan_row_grad_(gi, out + (r0 + i) * n, n) && !ACC) al_norm_fill_(gi, n, 0.0f);
      continue;
    }
    const float c = (float)(tot[R + i] / wsum);
    if (g.rem)   /* the last block first; its repeated lanes have w = 0 and add nothing */
      al_vst(gi + g.jt, al_vfma(w[g.nbf], al_vld(gr + g.jt) - c, ACC ? al_vld(gi + g.jt) : zero));
    for (int64_t b = 0; b < g.nbf; b++) {
      const int64_t j = b * AL_V;
      al_vst(gi + j, al_vfma(w[b], al_vld(gr + j) - c, ACC ? al_vld(gi + j) : zero));
    }
  }
}

/* Rows r0 .. r0+R-1 (al_norm_bwd_kernel: groups of E15_RB rows while n <=
 * AL_NORM_BWD_GROUP_MAX_N, then pairs, then the last row alone), R and ACC constants in each
 * instance. */
static void entmax15_bwd_kernel(const al_norm_bwd_rows *a, int64_t r0, int R, al_vf *ws) {
  if (a->acc) {
    if (R == E15_RB) entmax15_bwd_rows(a->gin, a->gout, a->out, a->n, r0, E15_RB, 1, a->rows, ws);
    else if (R == 2) entmax15_bwd_rows(a->gin, a->gout, a->out, a->n, r0, 2, 1, a->rows, ws);
    else entmax15_bwd_rows(a->gin, a->gout, a->out, a->n, r0, 1, 1, a->rows, ws);
  } else {
    if (R == E15_RB) entmax15_bwd_rows(a->gin, a->gout, a->out, a->n, r0, E15_RB, 0, a->rows, ws);
    else if (R == 2) entmax15_bwd_rows(a->gin, a->gout, a->out, a->n, r0, 2, 0, a->rows, ws);
    else entmax15_bwd_rows(a->gin, a->gout, a->out, a->n, r0, 1, 0, a->rows, ws);
  }
}
static const al_norm_bwd_kernel ENTMAX15_BWD = {"entmax15_bwd", entmax15_bwd_kernel, E15_RB, 2, 1};

static al_status entmax15_bwd_all(float *gin, const float *gout, const float *out,
                                  int64_t rows, int64_t n, int acc) {
  al_status st = al_norm_bwd_check_("entmax15_bwd", gin, gout, out, rows, n);
  if (st != AL_OK || rows * n == 0) return st;
  /* w for a group of E15_RB rows up to AL_NORM_BWD_GROUP_MAX_N columns, else a pair */
  const al_norm_bwd_rows a = {gin, NULL, gout, out, NULL, rows, n, acc};
  return al_norm_bwd_run_(&ENTMAX15_BWD, &a, (n <= AL_NORM_BWD_GROUP_MAX_N ? E15_RB : 2) * (n / AL_V + 1));
}

al_status al_entmax15_bwd(float *gin, const float *gout, const float *out, int64_t rows,
                          int64_t n) {
  return entmax15_bwd_all(gin, gout, out, rows, n, 1);
}
al_status al_entmax15_bwd_write(float *gin, const float *gout, const float *out, int64_t rows,
                                int64_t n) {
  return entmax15_bwd_all(gin, gout, out, rows, n, 0);
}

