/* core/norm/entmax_bisect_bwd.c -- alpha-entmax's backward row kernels (core/norm/entmax_bisect.c
 * describes the method and holds the scalar reference and the entry points).
 *
 * Pure C11 + GNU vector extensions, no Lua.
 *
 * Backward of p = [(alpha-1)z - tau]_+^(1/(alpha-1)) with sum p = 1.
 * Implicit differentiation (Peters et al. 2019, Prop. 2; Correia et al. 2019, eq. 10-12):
 *   w = p^(2-alpha) on the support, dL/dz = w*g - w <w, g>/sum(w);
 *   dp/dalpha = (p - w~)/(alpha-1)^2 - (S - w~ H)/(alpha-1),  S = p log p, H = sum S,
 *   w~ = w / sum(w), so dL/dalpha = (<g,p> - <g,w~>)/(alpha-1)^2 - (<g,S> - <g,w~> H)/(alpha-1)
 *   = sum_j t_j - <g,w~> (1/(alpha-1)^2 - H/(alpha-1)),  t_j = g_j (p_j/(alpha-1) - S_j)/(alpha-1).
 * The two terms cancel to O(1) as alpha -> 1: galpha carries a relative error of roughly
 * 1e-7/(alpha-1)^2 (4e-5 at alpha = 1.05) from the float w and p alone, so for alpha < 1.25 the
 * sums take exact double products; above, float runs of four terms into double (al_dacc) add
 * less than that. Rows four at a time (in lockstep: one row alone is latency-bound); rows up to
 * BIS_TR_MAX_N 16 at a time in lanes instead (bisect_bwd_lanes: faster in cache, less so where
 * memory bounds it, no gain where the support is the whole row). Rows with alpha > 2 go alone,
 * in double (bisect_bwd_big_row: the float form cancels there). */
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/normalizers.h"
#include "attnlab/threads.h"
#include "entmax_bisect.h"

/* Only the support matters (w = S = 0 off it), and for alpha well above 1 it is a small part of
 * the row (~15 of 65 scores ~ N(0,1) at alpha = 1.5): p and g on the support are compacted
 * first (in column order: the full blocks, then the new lanes of the last block), the log, exp
 * and sums run on those blocks only, and w is expanded back to the columns for gin. Per row:
 * pc, gc, w, log p -- nb + 1 vectors each (a compress store may write 15 lanes past the end). */
AL_VI int64_t bis_bwd_per_row(int64_t nb) { return 4 * (nb + 1); }
/* Row p's support (p > 0, not NaN) compacted into pc, and g there into gc, in column order: the
 * full blocks, then the new lanes of the last block (its repeated lanes are not in it); returns
 * the support's size. pf: a gin row to prefetch for writing alongside (see al_norm_prefetch_),
 * or NULL; pn, gn: a p row and a g row to prefetch for reading, one line per block and the
 * row's last (every line of the row), or NULL. */
AL_VI int64_t bis_support_compact(float *pc, float *gc, const float *p, const float *gr,
                                  const al_rowgeo *g, const float *pf, const float *pn,
                                  const float *gn) {
  const al_vf zero = al_vsplat(0.0f);
  int64_t q = 0;
  for (int64_t b = 0; b < g->nbf; b++) {
    if (pf) __builtin_prefetch(pf + b * AL_V, 1, 3);
    if (pn) {
      __builtin_prefetch(pn + b * AL_V, 0, 3);
      __builtin_prefetch(gn + b * AL_V, 0, 3);
    }
    const al_vf pv = al_vld(p + b * AL_V);
    const al_vm in = al_vm_gt(pv, zero);
    al_vst_compress(pc + q, pv, in);
    al_vst_compress(gc + q, al_vld(gr + b * AL_V), in);
    q += al_vm_count(in);
  }
  if (pn) {
    __builtin_prefetch(pn + g->jt + AL_V - 1, 0, 3);
    __builtin_prefetch(gn + g->jt + AL_V - 1, 0, 3);
  }
  if (g->rem) {
    const al_vf pv = al_vld(p + g->jt);
    const al_vm in = al_vm_gt(pv, zero) & g->tm;
    al_vst_compress(pc + q, pv, in);
    al_vst_compress(gc + q, al_vld(gr + g->jt), in);
    q += al_vm_count(in);
  }
  return q;
}
/* gin = w (g - c) (+ gin if ACC) over row p, w given compacted (wc, k entries, as
 * bis_support_compact lays them out; 0 off the support). The last block first: its repeated
 * lanes get w = 0 and are rewritten by the full blocks. */
AL_VI void bis_grad_expand(float *gi, const float *wc, int64_t k, const float *p, const float *gr,
                           float c, const al_rowgeo *g, const int ACC) {
  const al_vf zero = al_vsplat(0.0f), cv = al_vsplat(c);
  if (g->rem) {
    const al_vm in = al_vm_gt(al_vld(p + g->jt), zero) & g->tm;
    const al_vf wv = bis_expand(wc + k - al_vm_count(in), al_vm_bits(in));
    al_vst(gi + g->jt, al_vfma(wv, al_vld(gr + g->jt) - cv, ACC ? al_vld(gi + g->jt) : zero));
  }
  int64_t off = 0;
  for (int64_t b = 0; b < g->nbf; b++) {
    const int64_t j = b * AL_V;
    const uint32_t bits = al_vm_bits(al_vm_gt(al_vld(p + j), zero));
    const al_vf wv = bis_expand(wc + off, bits);
    al_vst(gi + j, al_vfma(wv, al_vld(gr + j) - cv, ACC ? al_vld(gi + j) : zero));
    off += __builtin_popcount(bits);
  }
}
static inline __attribute__((always_inline)) void bisect_bwd_rows(
    float *gin, float *galpha, const float *gout, const float *out, const float *alpha,
    int64_t n, int64_t r0, const int R, al_vf *ws, const int ACC, int64_t rows) {
  const al_rowgeo g = al_rowgeo_(n);
  const int64_t nb = g.nb, per = bis_bwd_per_row(nb);
  const al_vf zero = al_vsplat(0.0f);
  al_dacc sw[BIS_R], sg[BIS_R], st[BIS_R], sh[BIS_R];
  const float *p[BIS_R], *gr[BIS_R];
  float *pc[BIS_R], *gc[BIS_R];
  al_vf *w[BIS_R], *lpv[BIS_R], tma[BIS_R], ia[BIS_R];
  int exact[BIS_R];
  int64_t k[BIS_R], kc = 0;
  for (int i = 0; i < R; i++) {
    p[i] = out + (r0 + i) * n;
    gr[i] = gout + (r0 + i) * n;
    pc[i] = (float *)(ws + i * per);
    gc[i] = (float *)(ws + i * per + (nb + 1));
    w[i] = ws + i * per + 2 * (nb + 1);
    lpv[i] = w[i] + (nb + 1);
    tma[i] = al_vsplat(2.0f - alpha[r0 + i]);
    ia[i] = al_vsplat((float)(1.0 / ((double)alpha[r0 + i] - 1.0)));
    exact[i] = alpha[r0 + i] < 1.25f;
    al_dacc_init(&sw[i]);
    al_dacc_init(&sg[i]);
    al_dacc_init(&st[i]);
    al_dacc_init(&sh[i]);
    const int64_t q = bis_support_compact(pc[i], gc[i], p[i], gr[i], &g,
                                          !ACC && gin && r0 + R + i < rows ? gin + (r0 + R + i) * n : NULL,
                                          NULL, NULL);
    k[i] = q;
    kc = (q + AL_V - 1) / AL_V > kc ? (q + AL_V - 1) / AL_V : kc;
  }
  for (int i = 0; i < R; i++)   /* zeros past the support, up to kc whole blocks */
    for (int64_t q = k[i]; q < kc * AL_V; q += AL_V) {
      al_vst(pc[i] + q, zero);
      al_vst(gc[i] + q, zero);
    }
  /* log p (its own loop: see bis_eval), then w, S and the four sums */
  for (int64_t b = 0; b < kc; b++)
    for (int i = 0; i < R; i++) lpv[i][b] = al_vlog(al_vld(pc[i] + b * AL_V));
  for (int64_t b = 0; b < kc; b++)
    for (int i = 0; i < R; i++) {
      const al_vf pv = al_vld(pc[i] + b * AL_V), gv = al_vld(gc[i] + b * AL_V), lp = lpv[i][b];
      const al_vm in = al_vm_gt(pv, zero);
      /* alpha <= 2 here (bisect_bwd_big_row takes the rest): (2-alpha) log p is <= 0 */
      const al_vf wv = al_vzero(al_vexp_le0(tma[i] * lp), in);
      const al_vf sv = al_vzero(pv * lp, in);
      w[i][b] = wv;
      if (galpha && exact[i]) {   /* products formed in double (see above) */
        const al_vd gl = al_vlo(gv), gh = al_vhi(gv), wl = al_vlo(wv), wh = al_vhi(wv);
        const al_vd sl = al_vlo(sv), shh = al_vhi(sv), dia = (al_vd){0} + 1.0 / ((double)alpha[r0 + i] - 1.0);
        sw[i].lo += wl;
        sw[i].hi += wh;
        sg[i].lo += wl * gl;
        sg[i].hi += wh * gh;
        st[i].lo += gl * ((al_vlo(pv) * dia - sl) * dia);
        st[i].hi += gh * ((al_vhi(pv) * dia - shh) * dia);
        sh[i].lo += sl;
        sh[i].hi += shh;
        continue;
      }
      sw[i].f += wv;
      sg[i].f = al_vfma(wv, gv, sg[i].f);
      if (galpha) {
        st[i].f = al_vfma(gv, al_vfma(pv, ia[i], -sv) * ia[i], st[i].f);
        sh[i].f += sv;
      }
      if (AL_DACC_DUE(b)) {
        al_dacc_flush(&sw[i]);
        al_dacc_flush(&sg[i]);
        al_dacc_flush(&st[i]);
        al_dacc_flush(&sh[i]);
      }
    }
  for (int i = 0; i < R; i++) {
    const double wsum = al_dacc_total(&sw[i]);
    if (!(wsum > 0.0)) {   /* all-masked row: no gradient; NaN row: NaN gradients */
      if (al_norm_nan_row_grad_(gin ? gin + (r0 + i) * n : NULL, p[i], n)) {
        if (galpha) galpha[r0 + i] = NAN;
        continue;
      }
      if (!ACC && gin) al_norm_fill_(gin + (r0 + i) * n, n, 0.0f);
      if (!ACC && galpha) galpha[r0 + i] = 0.0f;
      continue;
    }
    const double gw = al_dacc_total(&sg[i]) / wsum;   /* <g, w~> */
    if (gin) bis_grad_expand(gin + (r0 + i) * n, (const float *)w[i], k[i], p[i], gr[i], (float)gw, &g, ACC);
    if (galpha) {
      const double am1 = (double)alpha[r0 + i] - 1.0;
      const double t = al_dacc_total(&st[i]), H = al_dacc_total(&sh[i]);
      const float ga = (float)(t - gw * (1.0 / (am1 * am1) - H / am1));
      galpha[r0 + i] = ACC ? galpha[r0 + i] + ga : ga + 0.0f;   /* (+0: as accumulated into 0) */
    }
  }
}

/* Rows up to BIS_TR_MAX_N, 16 at a time in lanes: each row's support compacted as above, then
 * transposed (lane i = row i), so the log, exp and sums run once per candidate position for all
 * rows and the four sums of each row come out in its lane (no horizontal reductions, which
 * above cost about as much as the rest); w transposed back and expanded as above. The sums take
 * double products for every alpha (above, only for alpha < 1.25): each lane is one row, so the
 * terms arrive one at a time anyway. Rows r0 .. r0+R-1, R <= 16. Workspace: per row pc, gc, w
 * (nb + 1 vectors each, of room for 16 rows), then the transposed P, G, L (log p, then w): 16
 * (nb + 1) vectors each. */
AL_VI int64_t bis_bwd_lanes_vectors(int64_t nb) { return (3 * AL_NORM_BATCH + 3 * AL_V) * (nb + 1); }
static inline __attribute__((always_inline)) void bisect_bwd_lanes(
    float *gin, float *galpha, const float *gout, const float *out, const float *alpha,
    int64_t n, int64_t r0, const int R, al_vf *ws, const int ACC, int64_t rows) {
  const al_rowgeo g = al_rowgeo_(n);
  const int64_t nb = g.nb, per = 3 * (nb + 1);
  al_vf *Pt = ws + AL_NORM_BATCH * per, *Gt = Pt + AL_V * (nb + 1), *Lt = Gt + AL_V * (nb + 1);
  const al_vf zero = al_vsplat(0.0f);
  int64_t k[AL_NORM_BATCH] = {0}, kc = 0, km = 0;
  float tma_l[AL_V];
  double dia_l[AL_V];
  for (int i = 0; i < AL_V; i++) {
    const double a = i < R ? (double)alpha[r0 + i] : 1.5;
    tma_l[i] = (float)(2.0 - a);   /* (2.0f - alpha as a float: the same value) */
    dia_l[i] = 1.0 / (a - 1.0);
  }
  /* the support p > 0 (not NaN), compacted, per row; alongside, the same row of the next group
   * (BISECT_BWD_LANES steps AL_NORM_BATCH rows) is prefetched, p and g for reading and gin for
   * writing, one line per block. A group loads in one burst and then computes without touching
   * memory, so the hardware prefetcher alone left these loads waiting: out of cache ({128,4,65,65},
   * scores ~ N(0, 0.1^2)), 28% of the kernel's samples sat on them; with the prefetches its time
   * went 3.9 -> 3.3 ms (KERNELS.md, "Flat rows"). */
  for (int i = 0; i < R; i++) {
    const int64_t rn = r0 + AL_NORM_BATCH + i;
    const int next = rn < rows;
    k[i] = bis_support_compact((float *)(ws + i * per), (float *)(ws + i * per + (nb + 1)),
                               out + (r0 + i) * n, gout + (r0 + i) * n, &g,
                               next && !ACC && gin ? gin + rn * n : NULL, next ? out + rn * n : NULL,
                               next ? gout + rn * n : NULL);
    km = k[i] > km ? k[i] : km;
  }
  kc = (km + AL_V - 1) / AL_V;
  for (int64_t cb = 0; cb < kc; cb++) {   /* transposed, zeros past each row's support */
    al_vf tp[AL_V], tg[AL_V];
    for (int i = 0; i < AL_V; i++) {
      const al_vm live = al_vm_ilt(al_vlane(), al_vspliti((int32_t)(k[i] - cb * AL_V)));
      tp[i] = i < R ? al_vzero(al_vld((float *)(ws + i * per) + cb * AL_V), live) : zero;
      tg[i] = i < R ? al_vzero(al_vld((float *)(ws + i * per + (nb + 1)) + cb * AL_V), live) : zero;
    }
    al_vtranspose16(tp);
    al_vtranspose16(tg);
    for (int j = 0; j < AL_V; j++) {
      Pt[cb * AL_V + j] = tp[j];
      Gt[cb * AL_V + j] = tg[j];
    }
  }
  /* log p (its own loop: see bis_eval), then w, S and the four sums, in double, per lane */
  for (int64_t c = 0; c < km; c++) Lt[c] = al_vlog(Pt[c]);
  const al_vf tma = al_vld(tma_l);
  const al_vd dial = bis_dld(dia_l), diah = bis_dld(dia_l + 8);
  al_vd swl = {0}, swh = {0}, sgl = {0}, sgh = {0}, stl = {0}, sth = {0}, shl = {0}, shh = {0};
  for (int64_t c = 0; c < km; c++) {
    const al_vf pv = Pt[c], gv = Gt[c], lp = Lt[c];
    const al_vm in = al_vm_gt(pv, zero);
    /* alpha <= 2 in every lane (bisect_bwd_big_row takes the rest): (2-alpha) log p <= 0 */
    const al_vf wv = al_vzero(al_vexp_le0(tma * lp), in);
    const al_vf sv = al_vzero(pv * lp, in);
    Lt[c] = wv;
    const al_vd gl = al_vlo(gv), gh = al_vhi(gv), wl = al_vlo(wv), wh = al_vhi(wv);
    const al_vd sl = al_vlo(sv), sh = al_vhi(sv);
    swl += wl;
    swh += wh;
    sgl += wl * gl;
    sgh += wh * gh;
    stl += gl * ((al_vlo(pv) * dial - sl) * dial);
    sth += gh * ((al_vhi(pv) * diah - sh) * diah);
    shl += sl;
    shh += sh;
  }
  double wsum[AL_V], sgw[AL_V], stt[AL_V], shs[AL_V];
  bis_dst(wsum, swl); bis_dst(wsum + 8, swh);
  bis_dst(sgw, sgl); bis_dst(sgw + 8, sgh);
  bis_dst(stt, stl); bis_dst(stt + 8, sth);
  bis_dst(shs, shl); bis_dst(shs + 8, shh);
  if (gin)   /* w back to rows, into each row's w (compacted order) */
    for (int64_t cb = 0; cb < kc; cb++) {
      al_vf t[AL_V];
      for (int j = 0; j < AL_V; j++) t[j] = Lt[cb * AL_V + j];
      al_vtranspose16(t);
      for (int i = 0; i < R; i++) ws[i * per + 2 * (nb + 1) + cb] = t[i];
    }
  for (int i = 0; i < R; i++) {
    const float *p = out + (r0 + i) * n, *gr = gout + (r0 + i) * n;
    if (!(wsum[i] > 0.0)) {   /* all-masked row: no gradient; NaN row: NaN gradients */
      if (al_norm_nan_row_grad_(gin ? gin + (r0 + i) * n : NULL, p, n)) {
        if (galpha) galpha[r0 + i] = NAN;
        continue;
      }
      if (!ACC && gin) al_norm_fill_(gin + (r0 + i) * n, n, 0.0f);
      if (!ACC && galpha) galpha[r0 + i] = 0.0f;
      continue;
    }
    const double gw = sgw[i] / wsum[i];   /* <g, w~> */
    if (gin)
      bis_grad_expand(gin + (r0 + i) * n, (const float *)(ws + i * per + 2 * (nb + 1)), k[i], p, gr,
                      (float)gw, &g, ACC);
    if (galpha) {
      const double am1 = (double)alpha[r0 + i] - 1.0;
      const float ga = (float)(stt[i] - gw * (1.0 / (am1 * am1) - shs[i] / am1));
      galpha[r0 + i] = ACC ? galpha[r0 + i] + ga : ga + 0.0f;   /* (+0: as accumulated into 0) */
    }
  }
}

/* A row with alpha > 2, alone and in double. The kernels above form gin = w (g - c) in float
 * with c = <g, w~>: for alpha > 2, w = p^(2-alpha) is largest where p is smallest, and when one
 * entry's w dominates the sum (a small p, e.g. at the support's edge), c is its g to within
 * float rounding and w (g - c) for it is that rounding times a huge w: at alpha = 6 the error
 * reached the size of the gradient, at alpha = 20 10^14 times it. Here: w~ = w / w_max (no
 * overflow), c in double, and for the dominant entry jm
 *   w_jm (g_jm - c) = sum_{i != jm} w_i (g_jm - g_i) / sum_i w~_i,
 * which cancels nothing. Another entry's g_j - c carries a double rounding of c times a w_j no
 * larger than the second largest, which is what its gradient scales with. A gradient beyond
 * float32 (alpha > 2, several support entries with p^(2-alpha) > 3.4e38) comes out +-inf, by
 * IEEE overflow: the Jacobian itself is that large there. galpha: the formula of the kernels,
 * in double, with the normalised w~ (no cancellation for alpha > 2: alpha - 1 > 1). */
static void bisect_bwd_big_row(const al_norm_bwd_rows *a, int64_t r) {
  const int64_t n = a->n;
  const float *p = a->out + r * n, *gr = a->gout + r * n;
  float *gi = a->gin ? a->gin + r * n : NULL;
  const double alpha = a->alpha[r], am1 = alpha - 1.0, am2 = alpha - 2.0;
  double lpmin = INFINITY;
  int64_t jm = -1, k = 0;
  for (int64_t j = 0; j < n; j++)
    if (p[j] > 0.0f) {
      const double lp = log((double)p[j]);
      if (lp < lpmin) { lpmin = lp; jm = j; }
      k++;
    }
  if (k == 0) {   /* all-masked row: no gradient; NaN row: NaN gradients */
    if (al_norm_nan_row_grad_(gi, p, n)) {
      if (a->galpha) a->galpha[r] = NAN;
      return;
    }
    if (!a->acc && gi) al_norm_fill_(gi, n, 0.0f);
    if (!a->acc && a->galpha) a->galpha[r] = 0.0f;
    return;
  }
  double sws = 0, swg = 0, H = 0;   /* sum w~, sum w~ g, sum p log p */
  for (int64_t j = 0; j < n; j++)
    if (p[j] > 0.0f) {
      const double lp = log((double)p[j]), wt = exp(-am2 * (lp - lpmin));
      sws += wt;
      swg += wt * gr[j];
      H += p[j] * lp;
    }
  const double c = swg / sws;   /* <g, w~> */
  if (gi) {
    double djm = 0;   /* sum_{i != jm} w_i (g_jm - g_i) */
    for (int64_t j = 0; j < n; j++)
      if (p[j] > 0.0f && j != jm) djm += exp(-am2 * log((double)p[j])) * ((double)gr[jm] - gr[j]);
    for (int64_t j = 0; j < n; j++) {
      float t = 0.0f;
      if (j == jm) t = (float)(djm / sws);
      else if (p[j] > 0.0f) t = (float)(exp(-am2 * log((double)p[j])) * ((double)gr[j] - c));
      gi[j] = a->acc ? gi[j] + t : t + 0.0f;   /* (+0: as accumulated into 0) */
    }
  }
  if (a->galpha) {
    double ga = 0;
    for (int64_t j = 0; j < n; j++)
      if (p[j] > 0.0f) {
        const double pj = p[j], lp = log(pj), wt = exp(-am2 * (lp - lpmin)) / sws, S = pj * lp;
        ga += gr[j] * ((pj - wt) / (am1 * am1) - (S - wt * H) / am1);
      }
    a->galpha[r] = a->acc ? a->galpha[r] + (float)ga : (float)ga + 0.0f;
  }
}

/* Rows r0 .. r0+R-1 through kernel kern (R rows at a time), except that the rows with alpha > 2
 * go through bisect_bwd_big_row: the runs of the others between them through kern, R' < R rows
 * at a time (a row's result does not depend on the rows beside it). */
static void bwd_split_big(const al_norm_bwd_rows *a, int64_t r0, int R, al_vf *ws,
                          void (*kern)(const al_norm_bwd_rows *, int64_t, int, al_vf *), int one) {
  int64_t r = r0;
  while (r < r0 + R) {
    if (a->alpha[r] > 2.0f) { bisect_bwd_big_row(a, r); r++; continue; }
    int64_t e = r;
    while (e < r0 + R && !(a->alpha[e] > 2.0f)) e++;
    if (one)   /* the rows kernel: R = BIS_R or 1 only */
      for (; r < e; r++) kern(a, r, 1, ws);
    else { kern(a, r, (int)(e - r), ws); r = e; }
  }
}

/* The kernels as al_norm_bwd_kernel runs them; R and ACC constants in each instance of the rows
 * in lockstep. */
static void bisect_bwd_rows_kern(const al_norm_bwd_rows *a, int64_t r0, int R, al_vf *ws) {
  if (a->acc) {
    if (R == BIS_R) bisect_bwd_rows(a->gin, a->galpha, a->gout, a->out, a->alpha, a->n, r0, BIS_R, ws, 1, a->rows);
    else bisect_bwd_rows(a->gin, a->galpha, a->gout, a->out, a->alpha, a->n, r0, 1, ws, 1, a->rows);
  } else {
    if (R == BIS_R) bisect_bwd_rows(a->gin, a->galpha, a->gout, a->out, a->alpha, a->n, r0, BIS_R, ws, 0, a->rows);
    else bisect_bwd_rows(a->gin, a->galpha, a->gout, a->out, a->alpha, a->n, r0, 1, ws, 0, a->rows);
  }
}
static void bisect_bwd_lanes_kern(const al_norm_bwd_rows *a, int64_t r0, int R, al_vf *ws) {
  if (a->acc) bisect_bwd_lanes(a->gin, a->galpha, a->gout, a->out, a->alpha, a->n, r0, R, ws, 1, a->rows);
  else bisect_bwd_lanes(a->gin, a->galpha, a->gout, a->out, a->alpha, a->n, r0, R, ws, 0, a->rows);
}
static int any_big(const float *alpha, int64_t r0, int R) {
  int big = 0;
  for (int i = 0; i < R; i++) big |= alpha[r0 + i] > 2.0f;
  return big;
}
void al_bisect_bwd_rows_(const al_norm_bwd_rows *a, int64_t r0, int R, al_vf *ws) {
  if (!any_big(a->alpha, r0, R)) bisect_bwd_rows_kern(a, r0, R, ws);
  else bwd_split_big(a, r0, R, ws, bisect_bwd_rows_kern, 1);
}
void al_bisect_bwd_lanes_(const al_norm_bwd_rows *a, int64_t r0, int R, al_vf *ws) {
  if (!any_big(a->alpha, r0, R)) bisect_bwd_lanes_kern(a, r0, R, ws);
  else bwd_split_big(a, r0, R, ws, bisect_bwd_lanes_kern, 0);
}
int64_t al_bisect_bwd_vectors_(int64_t n, int lanes) {
  return lanes ? bis_bwd_lanes_vectors(n / AL_V + 1) : BIS_R * bis_bwd_per_row(n / AL_V + 1);
}
