/* core/norm/entmax_bisect_fwd.c -- alpha-entmax's forward row kernels (core/norm/entmax_bisect.c
 * describes the method and holds the scalar reference and the entry points): a row's
 * evaluation at s, the evaluations of a batch's rows as (row, block) items or rows in lanes,
 * the start bound s0, and the batch, phase by phase.
 *
 * Pure C11 + GNU vector extensions, no Lua. */
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/normalizers.h"
#include "attnlab/threads.h"
#include "entmax_bisect.h"

/* One evaluation at s over a row's candidates c (kbe blocks, padded with -inf; y = (alpha-1)(x -
 * max), alpha <= 2): o = d^inv and pc = d^(inv-1) where d = y + s > 0, 0 elsewhere. Returns
 * h = sum o; *D = sum pc (dh/ds = inv D); *dmin = min d over the support. */
static inline __attribute__((always_inline)) double bis_eval(const al_vf *c, al_vf *o, al_vf *pc,
                                                             al_vf *pc2, const bis_row *r, double s,
                                                             int64_t kbe,
                                                             double *D, double *D2, float *dmin) {
  al_dacc ah, ad, ad2;
  al_dacc_init(&ah);
  al_dacc_init(&ad);
  al_dacc_init(&ad2);
  al_vf mn = al_vsplat(INFINITY);
  const al_vf fs = al_vsplat((float)s), finv = al_vsplat(r->finv), fim1 = al_vsplat(r->finvm1);
  const al_vf zero = al_vsplat(0.0f);
  /* two loops (the log, then the rest): one loop's dependency chain per block is long enough
   * to fill the scheduler with two or three blocks, the split ones overlap more */
  for (int64_t b = 0; b < kbe; b++) pc[b] = fim1 * al_vlog(c[b] + fs);
  for (int64_t b = 0; b < kbe; b++) {
    const al_vf y = c[b], d = y + fs;
    const al_vf e = y - (d - fs);   /* Fast2Sum (|s| >= |y| on the support): d + e = y + s */
    const al_vm in = al_vm_gt(d, zero);
    const al_vf q = al_vzero(al_vexp_le0(pc[b]), in);   /* d^(inv-1) <= 1 */
    const al_vf pv = al_vzero(q * al_vfma(finv, e, d), in);   /* d^inv, to first order in e */
    o[b] = pv;
    pc[b] = q;
    ah.f += pv;
    ad.f += q;
    const al_vf q2 = al_vzero(q * al_vrcp_approx(d), in);   /* d^(inv-2), to ~14 bits */
    pc2[b] = q2;
    ad2.f += q2;
    mn = al_vmin(mn, al_vsel(in, d, al_vsplat(INFINITY)));
    if (AL_DACC_DUE(b)) { al_dacc_flush(&ah); al_dacc_flush(&ad); al_dacc_flush(&ad2); }
  }
  *dmin = al_vhmin(mn);
  *D = al_dacc_total(&ad);
  *D2 = al_dacc_total(&ad2);
  return al_dacc_total(&ah);   /* >= the max's term (d = s): > 0 */
}

/* One evaluation (bis_eval) of each row in act, at its s: the rows' blocks as (row, block) items
 * in counted loops (see bisect_batch, phase 3), or row by row. Sets L->h, L->D, L->D2, L->dm.
 * kbm: the largest block count. */
#define BIS_ITEMS (AL_NORM_BATCH * 16)
static inline __attribute__((always_inline)) void bis_items(al_vf *ws, int64_t per, int64_t nb,
                                                            const bis_row *st, bis_lanes *L,
                                                            const int32_t *act, int64_t na,
                                                            int64_t kbm) {
  int32_t item[BIS_ITEMS + AL_NORM_BATCH * 16];
  int64_t nt = 0, nn = 0;
  for (int64_t j = 0; j < na; j++) {   /* the Newton rows' blocks, and how many rows */
    const int newton = st[act[j]].state == BIS_NEWTON;
    nt += newton ? st[act[j]].kb : 0;
    nn += newton;
  }
  /* Items for short candidate lists (<= 2 blocks, most rows at alpha >~ 1.2), else only where
   * padding would waste >= 30% of the blocks: on rows of several blocks an item costs more
   * than a block of a row's own loop (accumulators in memory, per-item addressing), e.g. at
   * alpha ~1.05 every row has all n candidates and nothing is padded (items: slower).
   * Long rows go row by row (the loop exits matter less there). */
  const int listed = kbm <= 16 && (kbm <= 2 || 10 * nt <= 7 * nn * kbm);
  nt = 0;
  for (int64_t j = 0; j < na; j++) {
    const int64_t i = act[j];
    const int newton = listed && st[i].state == BIS_NEWTON;
    if (listed)   /* kbm items written, kb kept: no exit that depends on the row */
      for (int64_t b = 0; b < kbm; b++) item[nt + b] = (int32_t)(i << 16 | b);
    nt += newton ? st[i].kb : 0;
    if (!newton) {
      al_vf *A = ws + i * per + nb;
      float dm;
      L->h[i] = bis_eval(A, A + nb, A + 2 * nb, A + 3 * nb, &st[i], L->s[i], kbm, &L->D[i], &L->D2[i], &dm);
      L->dm[i] = dm;
    }
  }
  if (nt == 0) return;
  al_dacc ah[AL_NORM_BATCH], ad[AL_NORM_BATCH], ad2[AL_NORM_BATCH];
  al_vf mn[AL_NORM_BATCH], fs[AL_NORM_BATCH];
  for (int64_t j = 0; j < na; j++) {
    const int64_t i = act[j];
    al_dacc_init(&ah[i]);
    al_dacc_init(&ad[i]);
    al_dacc_init(&ad2[i]);
    mn[i] = al_vsplat(INFINITY);
    fs[i] = al_vsplat((float)L->s[i]);
  }
  const al_vf zero = al_vsplat(0.0f);
  /* two loops (the log, then the rest): see bis_eval */
  for (int64_t t = 0; t < nt; t++) {
    const int64_t i = item[t] >> 16, b = item[t] & 0xFFFF;
    al_vf *A = ws + i * per + nb;
    A[2 * nb + b] = al_vsplat(st[i].finvm1) * al_vlog(A[b] + fs[i]);
  }
  for (int64_t t = 0; t < nt; t++) {
    const int64_t i = item[t] >> 16, b = item[t] & 0xFFFF;
    al_vf *A = ws + i * per + nb;
    const al_vf y = A[b], d = y + fs[i];
    const al_vf e = y - (d - fs[i]);   /* Fast2Sum (|s| >= |y| on the support): d + e = y + s */
    const al_vm in = al_vm_gt(d, zero);
    const al_vf q = al_vzero(al_vexp_le0(A[2 * nb + b]), in);   /* d^(inv-1) <= 1 */
    const al_vf pv = al_vzero(q * al_vfma(al_vsplat(st[i].finv), e, d), in);   /* d^inv */
    const al_vf q2 = al_vzero(q * al_vrcp_approx(d), in);   /* d^(inv-2), to ~14 bits */
    A[nb + b] = pv;
    A[2 * nb + b] = q;
    A[3 * nb + b] = q2;
    ah[i].f += pv;
    ad[i].f += q;
    ad2[i].f += q2;
    mn[i] = al_vmin(mn[i], al_vsel(in, d, al_vsplat(INFINITY)));
    if (AL_DACC_DUE(b)) { al_dacc_flush(&ah[i]); al_dacc_flush(&ad[i]); al_dacc_flush(&ad2[i]); }
  }
  for (int64_t j = 0; j < na; j++) {
    const int64_t i = act[j];
    if (st[i].state != BIS_NEWTON) continue;
    L->dm[i] = al_vhmin(mn[i]);
    L->D[i] = al_dacc_total(&ad[i]);
    L->D2[i] = al_dacc_total(&ad2[i]);
    L->h[i] = al_dacc_total(&ah[i]);
  }
}

/* Rows in lanes (n <= BIS_TR_MAX_N): the Newton rows' candidate lists transposed, T[c] lane i =
 * candidate c of row i (-inf past its count, and in the lanes of other rows), so that one pass
 * over c evaluates every row at once: the sums come out per lane, with no per-row reduction and
 * no per-row loop exit (the (row, block) items of bis_items pay for both). A row that has stopped
 * is evaluated again at its unchanged s, to the same values, until the batch's last row stops.
 * O, P, P2: d^inv, d^(inv-1), d^(inv-2) per candidate (see bis_eval), kc vectors each. */
/* Their workspace: T, O, P, P2. */
AL_VI int64_t bis_tr_vectors(int64_t n) { return bis_tr_ok(n) ? 4 * AL_V * (n / AL_V + 1) : 0; }
static inline __attribute__((always_inline)) void bis_tr_eval(const al_vf *T, al_vf *O, al_vf *P,
                                                              al_vf *P2, int64_t kc, al_vf fs,
                                                              al_vf finv, al_vf fim1,
                                                              bis_lanes *L) {
  /* h straight into double: its rounding is what bounds the final s (the root of h = 1); D and
   * D2 only set the step's length, float runs of AL_DACC_RUN terms are plenty there (as in
   * bis_eval, where a row of one or two blocks puts one or two terms in a lane's run) */
  al_vd hlo = {0}, hhi = {0};
  al_dacc ad, ad2;
  al_dacc_init(&ad);
  al_dacc_init(&ad2);
  al_vf mn = al_vsplat(INFINITY);
  const al_vf zero = al_vsplat(0.0f);
  for (int64_t c = 0; c < kc; c++) P[c] = fim1 * al_vlog(T[c] + fs);   /* (see bis_eval) */
  for (int64_t c = 0; c < kc; c++) {
    const al_vf y = T[c], d = y + fs;
    const al_vf e = y - (d - fs);   /* Fast2Sum: d + e = y + s */
    const al_vm in = al_vm_gt(d, zero);
    const al_vf q = al_vzero(al_vexp_le0(P[c]), in);
    const al_vf pv = al_vzero(q * al_vfma(finv, e, d), in);
    const al_vf q2 = al_vzero(q * al_vrcp_approx(d), in);
    O[c] = pv;
    P[c] = q;
    P2[c] = q2;
    hlo += al_vlo(pv);
    hhi += al_vhi(pv);
    ad.f += q;
    ad2.f += q2;
    mn = al_vmin(mn, al_vsel(in, d, al_vsplat(INFINITY)));
    if (AL_DACC_DUE(c)) { al_dacc_flush(&ad); al_dacc_flush(&ad2); }
  }
  al_dacc_flush(&ad);
  al_dacc_flush(&ad2);
  bis_dst(L->h, hlo);
  bis_dst(L->h + 8, hhi);
  bis_dst(L->D, ad.lo);
  bis_dst(L->D + 8, ad.hi);
  bis_dst(L->D2, ad2.lo);
  bis_dst(L->D2 + 8, ad2.hi);
  bis_dst(L->dm, al_vlo(mn));
  bis_dst(L->dm + 8, al_vhi(mn));
}

/* The first s of the Newton rows (alpha <= 2), one lane per row: an upper bound s0 on s*, so
 * that Newton starts right of the root, and much tighter than 1 (H(1) >= 1: the max alone has
 * d = 1). For any set T of j entries, with q = 1/(alpha-1) >= 1 and the power-mean inequality
 * ||v||_q >= j^(1/q-1) ||v||_1 (v >= 0 in R^j):
 *   H(s) >= ||[y_T + s]_+||_q >= j^(alpha-2) sum_T (y + s),
 * so H(s_T) >= 1 at s_T = (j^(2-alpha) - sum_T y)/j, and s* <= s_T; T = {y > c} for three
 * thresholds c (each holds the max: j >= 1). sj, ss: j and sum_T y per threshold; tma: 2-alpha.
 * In float, once per row: j^(2-alpha) = exp((2-alpha) log j) is off by ~1e-6 relative (the
 * rounding of (2-alpha) log j <= 8.4 at n = 4096), which the relative margin covers (s_T >=
 * j^(2-alpha)/j); each lane of the sums adds <= nb terms of |y| <= 1, so sum_T y is off by
 * < (nb + 4) 2^-24 j and s_T by < (nb + 4) 2^-24 absolute, which the absolute margin covers
 * (as in e15_start). From 3.3 passes per row to 2.6 at n = 65 (per-head alphas in
 * (1.05, 1.95)). */
AL_VI al_vf bis_start(int64_t nb, al_vf sj1, al_vf ss1, al_vf sj2, al_vf ss2, al_vf sj4,
                      al_vf ss4, al_vf tma) {
  const al_vf b1 = (al_vexp(tma * al_vlog(sj1)) - ss1) / sj1;
  const al_vf b2 = (al_vexp(tma * al_vlog(sj2)) - ss2) / sj2;
  const al_vf b4 = (al_vexp(tma * al_vlog(sj4)) - ss4) / sj4;
  const al_vf b = al_vmin(al_vmin(b1, b2), b4);
  const al_vf bm = b * (1.0f + 1e-4f) + (float)(nb + 4) * 0x1p-23f;
  return al_vmin(bm, al_vsplat(1.0f));
}

/* Workspace vectors per row: X (the row), A (the candidates), O, P, P2 (d^inv, d^(inv-1),
 * d^(inv-2)). */
AL_VI int64_t bis_per_row(int64_t nb) { return 5 * nb; }

/* A batch of rows r0 .. r0+nr-1, n >= 16, phase by phase (so that the rows' chains overlap).
 * L: the rows' iteration state, one lane per row (bis_lanes).
 *   1. load: max, NaN/+inf test;
 *   2. candidates y = (alpha-1)(x - max) > -1 (the support for any s <= 1, with slack for
 *      rounding), compacted: the passes run on ~k/n of the row (all of it as alpha -> 1, a
 *      block as alpha -> 2); with them the sums for the start s0 >= s* (bis_start, all rows at
 *      once), and the candidates of the Newton rows compacted again to y > -s0 (29 -> ~18 of
 *      65 scores ~ N(0,1) at per-head alphas in (1.05, 1.95));
 *      Rows with alpha > 2 are solved there and then, whole (al_bisect_solve_big_, in double);
 *   3. rounds of evaluations and decisions (bis_step_newton, eight rows a vector) over the rows
 *      still iterating, from s0: 3.3 -> 2.6 passes per row. Rows
 *      up to BIS_TR_MAX_N: the Newton rows in lanes (bis_tr_eval). Longer rows: their blocks as
 *      items (bis_items), and after the second round, the Newton iterate s' >= s* (never
 *      overshooting) bounds the support by y > -s' and the candidates are compacted again;
 *   4. p = [o - corr pc + corr2 pc2]_+ renormalised to sum 1, expanded back to the columns
 *      (the candidate test y > lim, repeated on the row, says where). */
static inline __attribute__((always_inline)) int bisect_batch(
    float *out, const float *x, const float *alpha, const uint8_t *keep, int64_t mrows,
    int64_t rows, int64_t n, int64_t r0, int64_t nr, int max_iter, al_vf *ws, bis_row *st,
    bis_lanes *L) {
  const al_rowgeo g = al_rowgeo_(n);
  const int64_t nb = g.nb, per = bis_per_row(nb);
  int used = 0;
  for (int i = 0; i < AL_NORM_BATCH; i++) {   /* every lane benign (see bis_lanes) */
    L->s[i] = L->hi[i] = L->h[i] = L->D[i] = L->dm[i] = 1.0;
    L->lo[i] = L->it[i] = L->corr[i] = L->corr2[i] = L->D2[i] = 0.0;
    L->am1[i] = 0.5;
    L->inv[i] = 2.0;
    L->live[i] = L->more[i] = 0;
  }
  for (int64_t i = 0; i < nr; i++) {   /* 1 */
    bis_row *r = &st[i];
    int bad;
    r->m = al_norm_load_row_(ws + i * per, x + (r0 + i) * n,
                             al_norm_keeprow_(keep, mrows, rows, n, r0 + i), &g, &bad);
    r->state = bad ? BIS_NAN : r->m == -INFINITY ? BIS_EMPTY : BIS_NEWTON;
  }
  start_lanes SL;   /* bis_start's inputs, with 2 - alpha per lane */
  float tma[AL_V];
  start_lanes_init(&SL);
  for (int l = 0; l < AL_V; l++) tma[l] = 0.5f;
  int32_t all2[AL_NORM_BATCH] = {0}, all4[AL_NORM_BATCH] = {0};   /* every candidate > -1/2, > -1/4 */
  for (int64_t i = 0; i < nr; i++) {   /* 2 */
    al_norm_prefetch_row_(x, out, r0 + i + nr, rows, n, nb);   /* the next batch */
    bis_row *r = &st[i];
    if (r->state != BIS_NEWTON) continue;
    const al_vf *X = ws + i * per;
    float *A = (float *)(X + nb);
    r->am1 = (double)alpha[r0 + i] - 1.0;
    r->inv = 1.0 / r->am1;
    r->fam1 = (float)r->am1;
    r->finv = (float)r->inv;
    r->finvm1 = (float)(r->inv - 1.0);
    L->am1[i] = r->am1;
    L->inv[i] = r->inv;
    const int big = r->finv < 1.0f;   /* alpha > 2: keep x (al_bisect_solve_big_ works in double) */
    const al_vf m = al_vsplat(r->m), fam1 = al_vsplat(r->fam1), lim = al_vsplat(-1.0001f);
    int64_t k = 0, k2 = 0, k4 = 0;
    al_vf a1 = al_vsplat(0.0f), a2 = a1, a4 = a1;   /* sum y over y > -1.0001, > -1/2, > -1/4 */
    for (int64_t b = 0; b < nb; b++) {
      const al_vf v = X[b], y = (v - m) * fam1;
      const al_vm m1 = al_vm_gt(y, lim), m2 = al_vm_gt(y, al_vsplat(-0.5f));
      const al_vm m4 = al_vm_gt(y, al_vsplat(-0.25f));
      k = al_norm_compact_(A, k, big ? v : y, m1);
      k2 += al_vm_count(m2);
      k4 += al_vm_count(m4);
      a1 += al_vzero(y, m1);
      a2 += al_vzero(y, m2);
      a4 += al_vzero(y, m4);
    }
    if (!big) {
      start_lanes_put(&SL, i, k, k2, k4, a1, a2, a4);
      tma[i] = (float)(1.0 - r->am1);
    }
    all2[i] = k2 == k;
    all4[i] = k4 == k;
    r->k = (int32_t)k;
    r->lim = -1.0001f;   /* (L: the bracket H(lo = 0) <= 1 <= H(hi = s = 1), corr = 0) */
    if (big) {   /* p straight into O (P as scratch); P, P2 zero: phase 4 then takes O as it is */
      r->kb = (int32_t)((k + AL_V - 1) / AL_V);
      L->it[i] = al_bisect_solve_big_((float *)(ws + i * per + 2 * nb), A, k, r->am1,
                                      (float *)(ws + i * per + 3 * nb));
      for (int64_t b = 0; b < r->kb; b++)
        ws[i * per + 3 * nb + b] = ws[i * per + 4 * nb + b] = al_vsplat(0.0f);
      r->state = BIS_DONE;
    }
  }
  {   /* the start s0 >= s* of the Newton rows (bis_start), and their candidates cut to y > -s0 */
    float s0[AL_V];
    al_vst(s0, bis_start(nb, al_vld(SL.cnt[0]), al_vld(SL.sum[0]), al_vld(SL.cnt[1]), al_vld(SL.sum[1]),
                         al_vld(SL.cnt[2]), al_vld(SL.sum[2]), al_vld(tma)));
    for (int64_t i = 0; i < nr; i++) {
      bis_row *r = &st[i];
      if (r->state != BIS_NEWTON) continue;
      L->s[i] = L->hi[i] = (double)s0[i];   /* H(s0) >= 1 */
      /* the support for any s <= s0 lies in y > -s0: compacted in place (block b is read
       * before the count reaches it) */
      float *A = (float *)(ws + i * per + nb);
      const float bound = -s0[i] * (1.0f + 1e-5f);   /* >= -1.00001 > the first cut */
      /* nothing to cut when every candidate is above it (alpha near 1: y = (alpha-1)(x - max)
       * is small, and so is the gain of s0) */
      if ((all4[i] && bound <= -0.25f) || (all2[i] && bound <= -0.5f)) continue;
      const al_vf lim = al_vsplat(bound);
      int64_t kk = 0;
      for (int64_t b = 0; b * AL_V < r->k; b++) {
        const al_vf y = al_vld(A + b * AL_V);
        const al_vm live = al_vm_ilt(al_vlane(), al_vspliti((int32_t)(r->k - b * AL_V)));
        kk = al_norm_compact_(A, kk, y, al_vm_gt(y, lim) & live);
      }
      r->k = (int32_t)kk;
      r->lim = bound;
    }
  }
  /* 3. rounds over the rows still iterating (listed in act): all their evaluations, then all
   * decisions. A loop over a row's blocks would exit at a different count on every row,
   * mispredicted; padding every row to the batch's largest count evaluated many padding
   * blocks. Rows up to BIS_TR_MAX_N go in lanes, 16 rows a vector (bis_tr_eval: faster than
   * the items below, n = 16 .. 256, alpha 1.05 .. 2; the rows' sums per lane, no
   * reductions). Longer rows: the Newton rows' blocks are listed as (row, block) items and evaluated in one counted loop
   * (bis_items). The candidates are -inf padded to the largest count (for the rows evaluated
   * row by row, and the recompaction). */
  int32_t act[AL_NORM_BATCH];
  int64_t na = 0, km = 0;
  for (int64_t i = 0; i < nr; i++) {
    act[na] = (int32_t)i;
    na += st[i].state >= BIS_NEWTON;
    km = st[i].state >= BIS_NEWTON && st[i].k > km ? st[i].k : km;
  }
  int64_t kbm = (km + AL_V - 1) / AL_V;
  for (int64_t j = 0; j < na; j++) {
    pad_ninf((float *)(ws + act[j] * per + nb), st[act[j]].k, kbm);
    st[act[j]].kb = (st[act[j]].k + AL_V - 1) / AL_V;
  }
  /* rows in lanes (bis_tr_eval) for rows up to BIS_TR_MAX_N: the Newton rows' candidates
   * transposed, block by block */
  const int tr = bis_tr_ok(n);
  al_vf *T = NULL, *TO = NULL, *TP = NULL, *TP2 = NULL;
  int64_t kcn = 0, kbn = 0;   /* the Newton rows' largest candidate count; its blocks */
  int32_t lane_newton[AL_NORM_BATCH] = {0};
  int64_t going[AL_NORM_BATCH] = {0};   /* -1 in the lanes (rows) still iterating */
  float finv_l[AL_NORM_BATCH], fim1_l[AL_NORM_BATCH];
  if (tr) {
    T = ws + AL_NORM_BATCH * per;   /* (past 16 rows: a batch has 16 rows of room here) */
    TO = T + AL_V * nb;
    TP = TO + AL_V * nb;
    TP2 = TP + AL_V * nb;
    for (int64_t i = 0; i < AL_NORM_BATCH; i++) {
      lane_newton[i] = i < nr && st[i].state == BIS_NEWTON;
      going[i] = -(int64_t)lane_newton[i];
      finv_l[i] = lane_newton[i] ? st[i].finv : 2.0f;
      fim1_l[i] = lane_newton[i] ? st[i].finvm1 : 1.0f;
      kcn = lane_newton[i] && st[i].k > kcn ? st[i].k : kcn;
    }
    kbn = (kcn + AL_V - 1) / AL_V;
    cand_transpose(T, ws + nb, per, kbn, lane_newton);
  }
  for (int64_t round = 0; round < (int64_t)max_iter + 2 && na > 0; round++) {   /* (max_iter may be INT_MAX) */
    if (tr) {   /* (every row in act is a Newton row) */
      float fsl[AL_NORM_BATCH];
      for (int64_t i = 0; i < AL_NORM_BATCH; i++) fsl[i] = (float)L->s[i];
      bis_tr_eval(T, TO, TP, TP2, kcn, al_vld(fsl), al_vld(finv_l), al_vld(fim1_l), L);
      for (int64_t i = 0; i < AL_NORM_BATCH; i++)   /* the other lanes benign */
        if (!lane_newton[i]) { L->h[i] = L->D[i] = L->dm[i] = 1.0; L->D2[i] = 0.0; }
    } else {
      bis_items(ws, per, nb, st, L, act, na, kbm);
    }
    if (tr) {   /* the lanes' rows still iterating are live, the decisions as vectors */
      memcpy(L->live, going, sizeof going);
      al_bisect_step_newton_(L, nr, max_iter);
      na = 0;
      for (int64_t i = 0; i < AL_NORM_BATCH; i++) {   /* a lane that stops keeps its last evaluation */
        going[i] = i < nr ? L->more[i] : 0;   /* (more: live and not stopped) */
        na += going[i] != 0;
      }
      continue;
    }
    for (int64_t j = 0; j < na; j++) L->live[act[j]] = -1;
    al_bisect_step_newton_(L, nr, max_iter);
    int64_t na2 = 0;
    for (int64_t j = 0; j < na; j++) {
      const int64_t i = act[j];
      const int more = L->more[i] != 0;
      L->live[i] = 0;
      st[i].state = more ? st[i].state : BIS_DONE;   /* O, P hold its last evaluation */
      act[na2] = (int32_t)i;
      na2 += more;
    }
    na = na2;
    if (round == 1) {   /* the support lies in y > -hi (H(hi) >= 1): fewer candidates */
      km = 0;
      for (int64_t j = 0; j < na; j++) {
        bis_row *r = &st[act[j]];
        float *A = (float *)(ws + act[j] * per + nb);
        const double hi = L->hi[act[j]];
        float bound = hi < 1.0 ? (float)(-hi * (1.0 + 1e-4)) : r->lim;
        bound = bound > r->lim ? bound : r->lim;   /* (never looser than the cut already made) */
        const al_vf lim = al_vsplat(bound);
        int64_t k = 0;
        for (int64_t b = 0; b < kbm; b++) {   /* in place: block b is read before k reaches it */
          const al_vf y = al_vld(A + b * AL_V);
          k = al_norm_compact_(A, k, y, al_vm_gt(y, lim));
        }
        r->k = (int32_t)k;
        r->lim = bound;   /* the candidates are now y > bound (> -1.0001) */
        km = k > km ? k : km;
      }
      kbm = (km + AL_V - 1) / AL_V;
      for (int64_t j = 0; j < na; j++) {
        pad_ninf((float *)(ws + act[j] * per + nb), st[act[j]].k, kbm);
        st[act[j]].kb = (st[act[j]].k + AL_V - 1) / AL_V;
      }
    }
  }
  if (tr && kbn > 0) {   /* the Newton rows' final values, p = [o - corr pc + corr2 pc2]_+, back to rows */
    float fc_l[AL_NORM_BATCH], fc2_l[AL_NORM_BATCH];
    for (int64_t i = 0; i < AL_NORM_BATCH; i++) {
      fc_l[i] = (float)L->corr[i];
      fc2_l[i] = (float)L->corr2[i];
    }
    const al_vf fc = al_vld(fc_l), fc2 = al_vld(fc2_l);
    for (int64_t c = 0; c < kcn; c++) {
      const al_vf v = al_vfma(fc2, TP2[c], al_vfma(-fc, TP[c], TO[c]));
      TO[c] = al_vzero(v, al_vm_gt(v, al_vsplat(0.0f)));
    }
    for (int64_t c = kcn; c < kbn * AL_V; c++) TO[c] = al_vsplat(0.0f);
    for (int64_t cb = 0; cb < kbn; cb++) {
      al_vf t[AL_V];
      for (int64_t j = 0; j < AL_V; j++) t[j] = TO[cb * AL_V + j];
      al_vtranspose16(t);
      for (int64_t i = 0; i < nr; i++)
        if (lane_newton[i]) ws[i * per + 2 * nb + cb] = t[i];
    }
  }
  for (int64_t i = 0; i < nr; i++) {   /* 4 */
    bis_row *r = &st[i];
    float *o = out + (r0 + i) * n;
    if (r->state == BIS_NAN) { al_norm_fill_(o, n, NAN); used = used > 1 ? used : 1; continue; }
    if (r->state == BIS_EMPTY) { al_norm_fill_(o, n, 0.0f); used = used > 1 ? used : 1; continue; }
    used = (int)L->it[i] > used ? (int)L->it[i] : used;
    al_vf *X = ws + i * per, *O = X + 2 * nb;
    const al_vf *P = X + 3 * nb, *P2 = X + 4 * nb;
    const al_vf fc = al_vsplat((float)L->corr[i]), fc2 = al_vsplat((float)L->corr2[i]);
    al_dacc sum;
    al_dacc_init(&sum);
    for (int64_t b = 0; b < r->kb; b++) {
      if (!lane_newton[i]) {   /* (the Newton rows' are final already, when tr) */
        const al_vf v = al_vfma(fc2, P2[b], al_vfma(-fc, P[b], O[b]));
        O[b] = al_vzero(v, al_vm_gt(v, al_vsplat(0.0f)));
      }
      sum.f += O[b];
      if (AL_DACC_DUE(b)) al_dacc_flush(&sum);
    }
    const al_vf sc = al_vsplat((float)(1.0 / al_dacc_total(&sum)));
    /* expand back: the candidates are y > lim, in column order; the last block first (its
     * values are the list's last: the k candidates are exactly the row's y > lim) */
    const al_vf m = al_vsplat(r->m), fam1 = al_vsplat(r->fam1), lim = al_vsplat(r->lim);
    const float *pv = (const float *)O;
    if (g.rem) {
      const uint32_t bits = al_vm_bits(al_vm_gt((X[g.nbf] - m) * fam1, lim));
      al_vst(o + g.jt, bis_expand(pv + r->k - __builtin_popcount(bits), bits) * sc);
    }
    int64_t off = 0;
    for (int64_t b = 0; b < g.nbf; b++) {
      const uint32_t bits = al_vm_bits(al_vm_gt((X[b] - m) * fam1, lim));
      al_vst(o + b * AL_V, bis_expand(pv + off, bits) * sc);
      off += __builtin_popcount(bits);
    }
  }
  return used;
}

/* The forward's batch (al_norm_fwd_kernel): rows r0 .. r0+nr-1 of a. Returns the most
 * evaluations a row used. */
int al_bisect_fwd_batch_(const al_norm_fwd_rows *a, int64_t r0, int64_t nr, al_vf *ws, void *state) {
  bis_row st[AL_NORM_BATCH];
  bis_lanes L;
  if (a->keep)
    return bisect_batch(a->out, a->x, a->alpha, a->keep, a->mrows, a->rows, a->n, r0, nr, a->max_iter, ws, st, &L);
  return bisect_batch(a->out, a->x, a->alpha, NULL, 1, a->rows, a->n, r0, nr, a->max_iter, ws, st, &L);
}

int64_t al_bisect_fwd_vectors_(int64_t n) {
  return al_norm_batch_(n) * bis_per_row(n / AL_V + 1) + bis_tr_vectors(n);
}
