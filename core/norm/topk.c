/* core/norm/topk.c -- top-k softmax over rows: softmax over the k largest entries, exact zeros
 * elsewhere, k = max(1, ceil(ratio * n_kept)); ties at the boundary go to the LOWER index.
 *
 * Pure C11 + GNU vector extensions + OpenMP, no Lua. Selection without sorting the row. What is
 * sought is v*, the k-th largest kept value; the selection is then {x > v*} plus the copies of
 * v* up to column jlim (all of them, unless equal values straddle the boundary: then the
 * lowest-index ones). Attention scores are roughly bell-shaped, so v* is first looked for in a
 * band of values around the normal quantile of (k - 1/2)/n_kept for the row's mean and standard
 * deviation, wide enough to hold the k-th value about 997 times in 1000 for N(0,1) rows:
 *   one pass counts the entries above the band and gathers those inside it (typically 10-14,
 *   at most 32); if the k-th value is inside, ranking the band members names it: for up to 16
 *   rows of a batch at once, their members transposed into lanes and sorted by a network; for
 *   the rest, one broadcast-compare per member;
 *   otherwise a counting search on the float keys finds it (interpolation between element
 *   values, bisection when that stalls; every pass moves an end of the bracket onto an element).
 * The softmax over the selection then fuses the exp with the selection test in one pass.
 * The backward is softmax's (core/norm/softmax.c): the selection is locally constant.
 * The file opens with the scalar reference in double (the tests' oracle). */
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/normalizers.h"
#include "attnlab/threads.h"
#include "internal.h"
#include "../util/numfmt.h"

/* ---- scalar reference (double) ----
 * out (n) = softmax over the k = al_topk_count(ratio, kept) largest kept finite entries (sorted
 * by value, ties to the lower column), 0 elsewhere; param = ratio. */
void al_topk_softmax_ref_fwd(double *out, const float *x, const uint8_t *kr, int64_t n, double param) {
  al_norm_ref_entry *v = malloc(sizeof *v * (size_t)(n > 0 ? n : 1));
  for (int64_t j = 0; j < n; j++) out[j] = 0.0;
  const int64_t m = v ? al_norm_ref_sorted_(v, x, kr, n) : 0;
  const int64_t k = al_topk_count(param, m);
  double s = 0;
  for (int64_t i = 0; i < k; i++) s += exp(v[i].v - v[0].v);
  for (int64_t i = 0; i < k; i++) out[v[i].i] = exp(v[i].v - v[0].v) / s;
  free(v);
}
/* On the selection it is softmax: gin = out * (gout - <out, gout>), 0 off the selection. */
void al_topk_softmax_ref_bwd(double *gin, double *galpha, const double *gout, const double *out,
                             int64_t n, double param) {
  double c = 0;
  for (int64_t j = 0; j < n; j++) c += out[j] * gout[j];
  for (int64_t j = 0; j < n; j++) gin[j] = out[j] * (gout[j] - c);
}

/* ---- forward ---- */

int64_t al_topk_count(double ratio, int64_t n_kept) {
  if (n_kept <= 0) return 0;
  /* a NaN ratio would reach the int64 conversion below (undefined); the callers refuse it, so
   * any k in range would do: keep everything, as for a ratio above 1 */
  if (isnan(ratio)) return n_kept;
  double v = ratio * (double)n_kept;
  /* ratio*n is often a hair above an integer (0.07*100 = 7.000000000000001): forgive 1e-9. */
  double c = ceil(v - 1e-9 * (v > 1.0 ? v : 1.0));
  int64_t k = c < 1.0 ? 1 : (c > (double)n_kept ? n_kept : (int64_t)c);
  return k;
}

/* z with P(N(0,1) > z) = q, 0 < q < 1, |error| < 5e-4 (Hastings' rational approximation, as in
 * Abramowitz & Stegun 26.2.23): only a guess for the threshold, so float math is fine. */
static double normal_upper_quantile(double q) {
  int lower = q > 0.5;
  double qq = lower ? 1.0 - q : q;
  double t = (double)al_sqrtf((float)(-2.0 * (double)al_logf((float)qq)));
  double z = t - (2.515517 + t * (0.802853 + t * 0.010328)) /
                     (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308)));
  return lower ? -z : z;
}

/* The band for (n_kept, k), in standard deviations: [zlo, zhi] around the (k - 1/2)/n_kept
 * quantile, half-width 1.5 sd of a binomial count plus one entry. Cached per thread: consecutive
 * rows nearly always share n_kept. */
typedef struct { int64_t nk, K; float zlo, zhi; } topk_band;
static void band_for(topk_band *b, int64_t nk, int64_t K) {
  if (b->nk == nk && b->K == K) return;
  const double w = 1.5 * sqrt((double)K * (1.0 - (double)K / (double)nk)) + 1.0;
  double qlo = ((double)K - 0.5 + w) / (double)nk, qhi = ((double)K - 0.5 - w) / (double)nk;
  qlo = qlo < 0.999 ? qlo : 0.999;
  qhi = qhi > 0.001 ? qhi : 0.001;
  b->nk = nk;
  b->K = K;
  b->zlo = (float)normal_upper_quantile(qlo);
  b->zhi = (float)normal_upper_quantile(qhi);
}

/* Per-row state between the phases of a batch. */
typedef struct {
  float m;          /* row max */
  float vs;         /* v*, the k-th largest kept value */
  int32_t jlim;     /* copies of v* are selected up to this column */
  int32_t state;    /* 0 = NaN row, 1 = nothing kept, 2 = select all kept, 3 = select */
  int64_t nk;
} topk_row;

/* #{x >= t} over a row's blocks, with the smallest element key >= t and the largest < t (-inf
 * lanes never count). */
static int64_t count_ge(const al_vf *w, int64_t nb, float t, uint32_t *amin, uint32_t *bmax) {
  al_vi c = {0};
  al_vu a = (al_vu){0} + 0xFFFFFFFFu, bb = {0};
  const al_vf tv = al_vsplat(t);
  for (int64_t b = 0; b < nb; b++) {
    const al_vf v = w[b];
    const al_vm ge = al_vm_ge(v, tv), lt = al_vm_lt(v, tv) & al_vm_gt(v, al_vsplat(-INFINITY));
    const al_vu k = al_vkey(v);
    c = al_vinc(c, ge);
    a = al_vminu(a, (al_vu)al_vseli(ge, (al_vi)k, al_vspliti(-1)));
    bb = al_vmaxu(bb, (al_vu)al_vseli(lt, (al_vi)k, al_vspliti(0)));
  }
  *amin = al_vhminu(a);
  *bmax = al_vhmaxu(bb);
  return al_vhsumi(c);
}

/* Fallback: v* by a counting search over element keys. Invariant: L is an element key with
 * #{>= L} >= K, H a key with #{>= H} < K, L < H; each pass moves one end onto an element (or
 * just past one), so the search ends. Returns v*; *all_copies = 1 when every copy of v* is
 * selected (a pass found exactly K at or above some threshold), else *c_gt = #{> v*}. */
static float topk_search(const al_vf *w, int64_t nb, int64_t K, float lo, float hi,
                         int64_t *c_gt, int *all_copies) {
  uint32_t L = al_fkey_(lo), H = al_fkey_(hi) + 1;   /* lo: min finite kept, hi: max */
  int64_t cH = 0;
  for (int it = 0; H - L > 1; it++) {
    /* interpolate in value, every third pass bisect the keys (guaranteed progress) */
    uint32_t T;
    if (it % 3 == 2) {
      T = L + (H - L) / 2;
    } else {
      T = al_fkey_(0.5f * al_fkey_inv_(L) + 0.5f * al_fkey_inv_(H - 1));
      if (T <= L) T = L + 1;
      if (T >= H) T = H - 1;
    }
    uint32_t amin, bmax;
    const int64_t c = count_ge(w, nb, al_fkey_inv_(T), &amin, &bmax);
    if (c == K) {   /* the K largest are exactly those >= T: v* is their minimum */
      *all_copies = 1;
      *c_gt = 0;
      return al_fkey_inv_(amin);
    }
    if (c > K) L = amin;
    else { H = bmax + 1; cH = c; }
  }
  *all_copies = 0;
  *c_gt = cH;   /* #{>= H} = #{> v*}: no element key lies strictly between L and H */
  return al_fkey_inv_(L);
}

/* #{finite lanes} over a row's blocks, exactly (for rows too long for a float count). */
static int64_t count_finite(const al_vf *w, int64_t nb) {
  int64_t c = 0;
  for (int64_t b = 0; b < nb; b++) c += al_vm_count(al_vm_gt(w[b], al_vsplat(-INFINITY)));
  return c;
}

/* The column of the need-th copy of v in the row (need >= 1, lowest columns first). */
static int32_t nth_copy(const al_vf *w, const al_rowgeo *g, float v, int64_t need) {
  for (int64_t b = 0; b < g->nb; b++) {
    uint32_t bits = al_vm_bits(al_vm_eq(w[b], al_vsplat(v)));
    const int c = __builtin_popcount(bits);
    if (c < need) { need -= c; continue; }
    while (--need > 0) bits &= bits - 1;
    return al_rowgeo_cols_(g, b)[__builtin_ctz(bits)];
  }
  return INT32_MAX;
}

/* v* among the band values bv (kb of them, 1 <= kb <= 32, the rest -inf) as the Kb-th largest
 * (1 <= Kb <= kb); *G = #{band > v*}, *E = #{band >= v*}. Lane i counts the band values above
 * it, G_i; v* is the smallest value with G_i < Kb (the Kb-th largest has fewer than Kb above it,
 * anything smaller has at least Kb). Fixed trip counts (the -inf padding counts for no finite
 * lane): the exit branch of a loop over kb would be mispredicted on most rows. */
static inline float band_kth(const float *bv, int kb, int32_t Kb, int64_t *G, int64_t *E) {
  const al_vf v0 = al_vld(bv), v1 = al_vld(bv + AL_V);
  al_vi g0 = {0}, g1 = {0};
  if (kb <= AL_V) {
    for (int j = 0; j < AL_V; j++) g0 = al_vinc(g0, al_vm_gt(al_vsplat(bv[j]), v0));
  } else {
    for (int j = 0; j < 2 * AL_V; j++) {
      const al_vf vj = al_vsplat(bv[j]);
      g0 = al_vinc(g0, al_vm_gt(vj, v0));
      g1 = al_vinc(g1, al_vm_gt(vj, v1));
    }
  }
  const al_vi K = al_vspliti(Kb);
  const al_vm h0 = al_vm_ilt(g0, K) & al_vm_first(kb), h1 = al_vm_ilt(g1, K) & al_vm_first(kb - AL_V);
  const float vs = al_vhmin(al_vmin(al_vsel(h0, v0, al_vsplat(INFINITY)), al_vsel(h1, v1, al_vsplat(INFINITY))));
  const al_vf vv = al_vsplat(vs);
  *G = al_vm_count(al_vm_gt(v0, vv)) + al_vm_count(al_vm_gt(v1, vv));
  *E = *G + al_vm_count(al_vm_eq(v0, vv)) + al_vm_count(al_vm_eq(v1, vv));
  return vs;
}

/* ---- the k-th band value of up to 16 rows at once: their members sorted rows in lanes ----
 * A row's ranking (band_kth) is ~50 vector operations, most on the one port that takes
 * compares; transposing 16 rows' members into lanes (64 permutes) and sorting them with a
 * 63-comparator network (126 min/max) costs ~12 a row. Same result, exactly: v* is the Kb-th
 * largest member, G and E count the members above it and at or above it. */
#define TOPK_SORT_MIN_ROWS 6   /* fewer taking part: band_kth per row is cheaper */

/* band_kth for the rows in `lanes` (bit i: row i, its members at bf + 64 i, -inf past them):
 * v*, G and E of row i into vs[i], G[i], E[i]; Kb[i] is its rank in the band. NaN-free: band
 * members are finite, padding -inf. */
static void band_kth_lanes(const float *bf, uint32_t lanes, const int64_t *Kb, float *vs,
                           int32_t *G, int32_t *E) {
  al_vf t[AL_V];
  int32_t kb[AL_V];
  for (int i = 0; i < AL_V; i++) {
    const int use = lanes >> i & 1;
    t[i] = use ? al_vld(bf + 4 * AL_V * i) : al_vsplat(-INFINITY);
    kb[i] = use ? (int32_t)Kb[i] : 0;
  }
  al_vtranspose16(t);   /* t[m]: member m of every row */
  al_vsort16_desc(t);   /* t[m]: the (m+1)-th largest member of every row */
  al_vi K;
  memcpy(&K, kb, sizeof K);
  al_vf v = al_vsplat(-INFINITY);
  for (int m = 0; m < AL_V; m++) v = al_vsel(al_vm_ieq(K, al_vspliti(m + 1)), t[m], v);
  al_vi g = {0}, e = {0};
  for (int m = 0; m < AL_V; m++) {
    g = al_vinc(g, al_vm_gt(t[m], v));
    e = al_vinc(e, al_vm_ge(t[m], v));
  }
  al_vst(vs, v);
  memcpy(G, &g, sizeof g);
  memcpy(E, &e, sizeof e);
}

/* a*b + c where m, c elsewhere (one masked FMA on AVX-512). */
AL_VI al_vf topk_vfma_m(al_vf a, al_vf b, al_vf c, al_vm m) {
#if defined(__AVX512F__)
  return (al_vf)_mm512_mask3_fmadd_ps((__m512)a, (__m512)b, (__m512)c, m);
#else
  return al_vsel(m, al_vfma(a, b, c), c);
#endif
}

static inline __attribute__((always_inline)) void topk_batch(
    float *out, const float *x, double ratio, const uint8_t *keep, int64_t mrows, int64_t rows,
    int64_t n, int64_t r0, int64_t nr, al_vf *ws, topk_row *st, topk_band *band) {
  const al_rowgeo g = al_rowgeo_(n);
  const int64_t nb = g.nb;
  /* n % 16 == 1 (17, 65, 257 tokens): the last block holds one column, yet costs a whole block
   * in the band pass and in the exp pass. There the batch's last columns go as one vector, rows
   * in lanes (tl; its band tests before the band pass, its exp after the exp pass), and each row
   * walks its full blocks only. Nothing is reordered, so results are bitwise the generic path's:
   * a band member is appended after the full blocks' members (where the compress put it), and
   * the exp enters lane 15 of the row's float partial at the same flush point. */
  const int lane1 = g.rem == 1 && !al_topk_lane1_off_;
  const int64_t nbw = lane1 ? g.nbf : nb;   /* blocks each row walks in those two passes */
  /* Per-row scalars that later go into vectors, rows in lanes, are stored here as soon as they
   * are known, so that the vector loads come long after the scalar stores: a vector load of
   * stores still in flight cannot be forwarded from them and waits for them all to retire. The
   * lanes of rows past nr are unused; they hold harmless values. */
  float s1a[AL_V], s2a[AL_V], fnka[AL_V];   /* sum, sum of squares, count of the kept values */
  float tl[AL_V];                           /* lane1: the last column */
  float vsa[AL_V], ma[AL_V];                /* lane1: v* (-inf: all, +inf: none), the max */
  int32_t jla[AL_V];                        /* lane1: jlim (-1: none) */
  for (int64_t i = nr; i < AL_V; i++) {
    s1a[i] = s2a[i] = ma[i] = 0.0f;
    fnka[i] = 1.0f;
    tl[i] = -INFINITY;
    vsa[i] = INFINITY;
    jla[i] = -1;
  }
  /* 1. load: max, NaN/+inf test, count and moments of the finite kept entries */
  for (int64_t i = 0; i < nr; i++) {
    const float *xr = x + (r0 + i) * n;
    const uint8_t *kr = al_norm_keeprow_(keep, mrows, rows, n, r0 + i);
    al_vf *w = ws + i * nb;
    if (!kr) {
      /* No keep mask: plain sums, 3 operations a block where the masked ones below take 6. A
       * row with a NaN or an infinity (or whose squares overflow) ends with a non-finite sum
       * and is redone masked; the moments only place the band, so their rounding never shows
       * in a result. The last block's repeated lanes are -inf in w, 0 in the sums. */
      al_vf mx = al_vsplat(-INFINITY), s1 = {0}, s2 = {0};
      for (int64_t b = 0; b < nb; b++) {
        const al_vf v = al_norm_blk_(xr, NULL, &g, b);
        w[b] = v;
        mx = al_vmax(mx, v);
        const al_vf z = b == g.nbf ? al_vzero(v, g.tm) : v;
        s1 += z;
        s2 = al_vfma(z, z, s2);
      }
      float unused;
      al_vhsum3f(s1, s2, (al_vf){0}, &s1a[i], &s2a[i], &unused);
      if (isfinite(s1a[i]) && isfinite(s2a[i])) {
        st[i].m = al_vhmax(mx);
        st[i].nk = n;
        st[i].state = 3;
        fnka[i] = (float)n;
        if (lane1) tl[i] = ((const float *)(w + g.nbf))[AL_V - 1];
        continue;
      }
    }
    al_vf mx = al_vsplat(-INFINITY), s1 = {0}, s2 = {0}, cnt = {0};
    al_vm bad = al_vm_none();
    for (int64_t b = 0; b < nb; b++) {
      al_vf v;
      if (kr) {
        v = al_norm_blk_(xr, kr, &g, b);
        w[b] = v;
      } else {
        v = w[b];
      }
      mx = al_vmax(mx, v);
      bad |= al_vm_nle(v, al_vsplat(FLT_MAX));
      /* masked adds: the count is exact in float lanes below 2^24 */
      const al_vm fin = al_vm_gt(v, al_vsplat(-INFINITY));
      cnt = al_vaddm(cnt, fin, al_vsplat(1.0f));
      s1 = al_vaddm(s1, fin, v);
      s2 = topk_vfma_m(v, v, s2, fin);
    }
    st[i].m = al_vhmax(mx);
    float fnk;
    al_vhsum3f(s1, s2, cnt, &s1a[i], &s2a[i], &fnk);
    st[i].nk = n < (1 << 24) ? (int64_t)fnk : count_finite(w, nb);
    st[i].state = al_vm_any(bad) ? 0 : st[i].nk == 0 ? 1 : 3;
    fnka[i] = (float)st[i].nk;
    if (lane1) tl[i] = ((const float *)(w + g.nbf))[AL_V - 1];
  }
  /* 2. v*: from the band, else by the search. The band's thresholds (rows in lanes), the band pass
   * (vector), the ranking (vector) and the rare fallbacks (branchy) run as separate loops over
   * the batch, so that the vector work of consecutive rows overlaps. */
  float tlo[AL_NORM_BATCH], thi[AL_NORM_BATCH];
  int64_t Kr[AL_NORM_BATCH] = {0}, Kb[AL_NORM_BATCH] = {0};
  int kbr[AL_NORM_BATCH] = {0};
  _Static_assert(AL_NORM_BATCH == AL_V, "the thresholds take one lane per row of a batch");
  {
    /* k and the band's z (scalar; both cached across rows of the same n_kept), then the
     * thresholds mu + sd z of the batch's rows in the lanes of one vector: the same float
     * operations row by row (al_vsqrt is al_sqrtf lane by lane), in ~15 vector operations
     * where the scalar chain took ~35 per row. Lanes of rows not selecting are unused. The z
     * are one pair for the batch unless its rows keep different counts (masks). */
    float zlo[AL_NORM_BATCH], zhi[AL_NORM_BATCH];
    int64_t bnk = -1, bK = -1;
    int mixed = 0;
    for (int64_t i = 0; i < nr; i++) {
      if (st[i].state != 3) continue;
      const int64_t nk = st[i].nk, K = nk == band->nk ? band->K : al_topk_count(ratio, nk);
      Kr[i] = K;
      if (K == nk) { st[i].state = 2; continue; }
      band_for(band, nk, K);
      mixed |= bnk >= 0 && (nk != bnk || K != bK);
      bnk = nk;
      bK = K;
      zlo[i] = band->zlo;
      zhi[i] = band->zhi;
    }
    if (mixed)
      for (int64_t i = 0; i < AL_NORM_BATCH; i++)
        if (i >= nr || st[i].state != 3) zlo[i] = zhi[i] = 0.0f;
    const al_vf vn = al_vld(fnka), mu = al_vld(s1a) / vn, var = al_vld(s2a) / vn - mu * mu;
    const al_vf sd = al_vsqrt(al_vsel(al_vm_gt(var, al_vsplat(0.0f)), var, al_vsplat(0.0f)));
    al_vst(tlo, mu + sd * (mixed ? al_vld(zlo) : al_vsplat(band->zlo)));
    al_vst(thi, mu + sd * (mixed ? al_vld(zhi) : al_vsplat(band->zhi)));
  }
  uint32_t tup = 0, tin = 0;   /* bit i: row i's last column is above / inside its band */
  if (lane1) {
    const al_vf lv = al_vld(tl);
    const al_vm up = al_vm_ge(lv, al_vld(thi));
    tup = al_vm_bits(up);
    tin = al_vm_bits(al_vm_ge(lv, al_vld(tlo)) & ~up);
  }
  for (int64_t i = 0; i < nr; i++) {   /* the band: count above it, gather it */
    if (st[i].state != 3) continue;
    const al_vf *w = ws + i * nb;
    float *bf = (float *)(ws + nr * nb + 4 * i);   /* 64 floats */
    const al_vf lo = al_vsplat(tlo[i]), hi = al_vsplat(thi[i]);
    int64_t ch = 0;
    int kb = 0;
    /* each block's band members compressed and stored at bf + kb (a whole-vector store that the
     * next one partly overwrites): two port-5 uops a block, where appending in registers takes
     * five; kb is capped at 32 for the store address only, so bf + 48 is the furthest write */
    for (int64_t b = 0; b < nbw; b++) {
      const al_vf v = w[b];
      const al_vm up = al_vm_ge(v, hi), in = al_vm_ge(v, lo) & ~up;
      ch += al_vm_count(up);
      al_vst_compress(bf + (kb < 2 * AL_V ? kb : 2 * AL_V), v, in);
      kb += al_vm_count(in);
    }
    if (lane1) {   /* the last column: kept only if inside (the padding below overwrites it) */
      ch += tup >> i & 1;
      bf[kb < 2 * AL_V ? kb : 2 * AL_V] = tl[i];
      kb += tin >> i & 1;
    }
    if (kb <= 2 * AL_V) {   /* -inf past the members (band_kth reads 32 lanes) */
      al_vst(bf + kb, al_vsplat(-INFINITY));
      al_vst(bf + (kb < AL_V ? kb + AL_V : kb), al_vsplat(-INFINITY));
    }
    Kb[i] = Kr[i] - ch;   /* v* is the Kb-th largest of the band */
    kbr[i] = kb;
  }
  /* the k-th value inside the band: rows with at most 16 members sorted together (rows in
   * lanes), when enough rows take part to pay for the 16-lane sort; the others one by one */
  uint32_t good = 0, lanes = 0;
  for (int64_t i = 0; i < nr; i++) {   /* (tlo < thi is false for constant rows, NaN moments) */
    const int ok = st[i].state == 3 && tlo[i] < thi[i] && Kb[i] >= 1 && Kb[i] <= kbr[i] &&
                   kbr[i] <= 2 * AL_V;
    good |= (uint32_t)ok << i;
    lanes |= (uint32_t)(ok && kbr[i] <= AL_V) << i;
  }
  float vsl[AL_V];
  int32_t Gl[AL_V], El[AL_V];
  if (__builtin_popcount(lanes) >= TOPK_SORT_MIN_ROWS)
    band_kth_lanes((const float *)(ws + nr * nb), lanes, Kb, vsl, Gl, El);
  else
    lanes = 0;
  for (int64_t i = 0; i < nr; i++) {
    if (!(good >> i & 1)) { Kb[i] = -1; continue; }
    int64_t G, E;
    if (lanes >> i & 1) { st[i].vs = vsl[i]; G = Gl[i]; E = El[i]; }
    else st[i].vs = band_kth((const float *)(ws + nr * nb + 4 * i), kbr[i], (int32_t)Kb[i], &G, &E);
    /* copies of v* to take: Kb - G of the E - G in the row (all lie in the band) */
    Kb[i] -= G;
    kbr[i] = (int)(E - G);
  }
  for (int64_t i = 0; i < nr; i++) {   /* ties straddling the boundary; band misses */
    if (st[i].state != 3) continue;
    const al_vf *w = ws + i * nb;
    if (Kb[i] >= 1) {
      st[i].jlim = Kb[i] < kbr[i] ? nth_copy(w, &g, st[i].vs, Kb[i]) : INT32_MAX;
      continue;
    }
    al_vf lo = al_vsplat(INFINITY);
    for (int64_t b = 0; b < nb; b++)
      lo = al_vmin(lo, al_vsel(al_vm_gt(w[b], al_vsplat(-INFINITY)), w[b], al_vsplat(INFINITY)));
    int64_t cgt;
    int all;
    const float vs = topk_search(w, nb, Kr[i], al_vhmin(lo), st[i].m, &cgt, &all);
    st[i].vs = vs;
    st[i].jlim = all ? INT32_MAX : nth_copy(w, &g, vs, Kr[i] - cgt);
  }
  /* 3. softmax over the selection (its max is the row max): exp, selection and double partial
   * sums in one pass into the workspace for every row; the batch's sums reduced together
   * (al_vhsumd_rows); then the scaled stores */
  double tot[AL_NORM_BATCH];
  al_vd dsum[AL_NORM_BATCH];   /* each row's double partial sums, reduced for the batch at once */
  float el[AL_V];   /* lane1: the last column's exp (0 unless selected), row i in lane i */
  al_dacc part[AL_NORM_BATCH];   /* lane1: each row's sum before the last column enters it */
  for (int64_t i = 0; i < nr; i++) {
    /* the next batch's row i, x and out (for writing), one line per block: issued in this pass,
     * the longest, and not while loading (phase 1), where the whole batch's worth stalled the
     * loads on the line fill buffers (the full-size forward ran slower) */
    const int64_t rn = r0 + i + nr;
    if (st[i].state < 2) {
      al_norm_prefetch_row_(x, out, rn, rows, n, nb);
      dsum[i] = (al_vd){0};
      vsa[i] = INFINITY;
      ma[i] = 0.0f;
      jla[i] = -1;
      continue;
    }
    for (int64_t b = nbw; b < nb; b++) al_norm_prefetch_blk_(x, out, rn, rows, n, b);   /* lane1's last block */
    al_vf *w = ws + i * nb;
    const int all = st[i].state == 2;
    vsa[i] = all ? -INFINITY : st[i].vs;
    ma[i] = st[i].m;
    jla[i] = all ? INT32_MAX : st[i].jlim;
    const al_vf vs = al_vsplat(all ? -INFINITY : st[i].vs), m = al_vsplat(st[i].m);
    const al_vi jl = al_vspliti(all ? INT32_MAX : st[i].jlim);
    al_dacc sum;
    al_dacc_init(&sum);
    if (all || st[i].jlim == INT32_MAX) {   /* every copy of v* (nearly always): one compare */
      for (int64_t b = 0; b < nbw; b++) {
        al_norm_prefetch_blk_(x, out, rn, rows, n, b);
        const al_vf v = w[b];
        const al_vf e = al_vexp_le0_sel(v - m, al_vm_ge(v, vs));
        w[b] = e;
        sum.f += e;
        if (AL_DACC_DUE(b)) al_dacc_flush(&sum);
      }
    } else {
      for (int64_t b = 0; b < nbw; b++) {
        al_norm_prefetch_blk_(x, out, rn, rows, n, b);
        const al_vf v = w[b];
        const al_vm sel = al_vm_gt(v, vs) | (al_vm_eq(v, vs) & al_vm_ile(al_rowgeo_cols_(&g, b), jl));
        const al_vf e = al_vexp_le0_sel(v - m, sel);
        w[b] = e;
        sum.f += e;
        if (AL_DACC_DUE(b)) al_dacc_flush(&sum);
      }
    }
    if (lane1) {   /* the last column enters after this pass */
      part[i] = sum;
      continue;
    }
    al_dacc_flush(&sum);
    dsum[i] = sum.lo + sum.hi;
  }
  if (lane1) {   /* the last columns' exps, rows in lanes; each enters where the generic pass
                  * adds the last block: lane 15 (g.tm), at the same flush point */
    al_vi jl;
    memcpy(&jl, jla, sizeof jl);
    const al_vf lv = al_vld(tl), vs = al_vld(vsa);
    const al_vm sel = al_vm_gt(lv, vs) | (al_vm_eq(lv, vs) & al_vm_ile(al_vspliti((int32_t)(n - 1)), jl));
    al_vst(el, al_vexp_le0_sel(lv - al_vld(ma), sel));
    for (int64_t i = 0; i < nr; i++) {
      if (st[i].state < 2) continue;
      al_dacc sum = part[i];
      sum.f = al_vaddm(sum.f, g.tm, al_vsplat(el[i]));
      if (AL_DACC_DUE(g.nbf)) al_dacc_flush(&sum);
      al_dacc_flush(&sum);
      dsum[i] = sum.lo + sum.hi;
    }
  }
  al_vhsumd_rows(dsum, (int)nr, tot);   /* tot[i] = al_dacc_total of row i, bitwise */
  for (int64_t i = 0; i < nr; i++) {
    float *o = out + (r0 + i) * n;
    if (st[i].state < 2) { al_norm_fill_(o, n, st[i].state == 0 ? NAN : 0.0f); continue; }
    const al_vf *w = ws + i * nb;
    const float inv = (float)(1.0 / tot[i]);
    if (lane1) o[n - 1] = el[i] * inv;
    else if (g.rem) al_vst(o + g.jt, w[g.nbf] * inv);   /* the last block first (see al_rowgeo) */
    for (int64_t b = 0; b < g.nbf; b++) al_vst(o + b * AL_V, w[b] * inv);
  }
}

/* A batch of rows r0 .. r0+nr-1 of a (al_norm_fwd_kernel); state: this thread's band cache
 * (zero: none yet; a row's n_kept is >= 1, so it never matches). */
static int topk_fwd_batch(const al_norm_fwd_rows *a, int64_t r0, int64_t nr, al_vf *ws, void *state) {
  _Static_assert(sizeof(topk_band) <= AL_NORM_STATE_BYTES, "the band cache is a thread's state");
  topk_band *band = state;
  topk_row st[AL_NORM_BATCH];
  if (a->keep) topk_batch(a->out, a->x, a->ratio, a->keep, a->mrows, a->rows, a->n, r0, nr, ws, st, band);
  else topk_batch(a->out, a->x, a->ratio, NULL, 1, a->rows, a->n, r0, nr, ws, st, band);
  return 0;
}
static const al_norm_fwd_kernel TOPK_FWD = {"topk_softmax", topk_fwd_batch, 0, 1};

al_status al_topk_softmax_fwd(float *out, const float *x, double ratio, const uint8_t *keep,
                              int64_t mrows, int64_t rows, int64_t n) {
  al_status st = al_norm_check_("topk_softmax", out, x, keep, mrows, rows, n);
  if (st != AL_OK) return st;
  if (!(ratio > 0.0 && ratio <= 1.0)) {   /* (every digit that decides: %g said "ratio = 1") */
    char b[32];
    return al_seterr(AL_EINVAL, "topk_softmax: ratio = %s, want 0 < ratio <= 1", al_fmt_d_(b, ratio));
  }
  if (rows * n == 0) return AL_OK;
  const al_norm_fwd_rows a = {.out = out, .x = x, .keep = keep, .mrows = mrows, .rows = rows, .n = n,
                              .ratio = ratio};
  return al_norm_fwd_run_(&TOPK_FWD, &a, al_norm_batch_(n) * (n / AL_V + 5), NULL);
}

/* ---- backward ----
 * out = softmax over the selection, 0 elsewhere: gin += out * (gout - <out, gout>) -- softmax's
 * backward, which gives 0 where out == 0 (the selection is locally constant). */
al_status al_topk_softmax_bwd(float *gin, const float *gout, const float *out, int64_t rows,
                              int64_t n) {
  return al_norm_softmax_bwd_("topk_softmax_bwd", gin, gout, out, rows, n, 1);
}
al_status al_topk_softmax_bwd_write(float *gin, const float *gout, const float *out,
                                    int64_t rows, int64_t n) {
  return al_norm_softmax_bwd_("topk_softmax_bwd", gin, gout, out, rows, n, 0);
}
