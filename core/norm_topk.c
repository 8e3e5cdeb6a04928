/* core/norm_topk.c -- top-k softmax over rows: softmax over the k largest entries, exact zeros
 * elsewhere, k = max(1, ceil(ratio * n_kept)); ties at the boundary go to the LOWER index.
 *
 * Pure C11 + OpenMP, no Lua. Selection without sorting: floats are mapped to order-preserving
 * uint32 keys, and a threshold T with #{key >= T} == k is searched by counting passes (one
 * vectorized compare-and-count over the row each). The bracket [lo, hi] always holds element
 * keys with #{key >= lo} > k and #{key > hi} < k; each pass tries a T interpolated in value
 * between them (regula falsi, with a bisection step when one side repeats) and moves lo up to
 * the smallest key >= T or hi down to the largest key < T, so every pass removes at least one
 * element and the search ends in at most n passes -- typically 3-4 for rows of 65, since a
 * count of k +- 1 already finishes (the single boundary element is then known). When equal
 * values straddle the boundary no such T exists; the tie is then resolved by index. */
#include <inttypes.h>
#include <math.h>

#include "attnlab/normalizers.h"
#include "attnlab/threads.h"

int64_t al_topk_count(double ratio, int64_t n_kept) {
  if (n_kept <= 0) return 0;
  double v = ratio * (double)n_kept;
  /* ratio*n is often a hair above an integer (0.3*10 = 3.0000000000000004): forgive 1e-9. */
  double c = ceil(v - 1e-9 * (v > 1.0 ? v : 1.0));
  int64_t k = c < 1.0 ? 1 : (c > (double)n_kept ? n_kept : (int64_t)c);
  return k;
}

/* key of x[j], or key(-inf) when masked: masked entries then behave exactly like -inf. */
static inline uint32_t keyat(const float *x, const uint8_t *kr, int64_t j) {
  return kr ? al_fkey_kept_(x[j], kr[j]) : al_fkey_(x[j]);
}

/* One counting pass at threshold key t over the keys cached in kb (as float bit patterns, see
 * topk_pass0): returns #{key >= t}; *amin = smallest key >= t, *bmax = largest key < t. */
static inline int64_t count_pass(const float *kb, int64_t n, uint32_t t, uint32_t *amin,
                                 uint32_t *bmax) {
  int32_t c = 0;
  uint32_t a = 0xFFFFFFFFu, b = 0;
  for (int64_t j = 0; j < n; j++) {
    uint32_t k = al_f2u_(kb[j]);
    int ge = k >= t;
    uint32_t msk = (uint32_t)ge - 1u;   /* 0 if ge, all ones if not */
    c += ge;
    uint32_t ka = k | msk, kc = k & msk;
    a = ka < a ? ka : a;
    b = kc > b ? kc : b;
  }
  *amin = a;
  *bmax = b;
  return c;
}

/* #{key >= t} over the keys cached in kb. */
static inline int64_t count_cached(const float *kb, int64_t n, uint32_t t) {
  int32_t c = 0;
  for (int64_t j = 0; j < n; j++) c += al_f2u_(kb[j]) >= t;
  return c;
}

/* z with P(N(0,1) > z) = q, 0 < q < 1, |error| < 5e-4 (Hastings' rational approximation, as in
 * Abramowitz & Stegun 26.2.23): only a first guess for the threshold, so float math is fine. */
static double normal_upper_quantile(double q) {
  int lower = q > 0.5;
  double qq = lower ? 1.0 - q : q;
  double t = (double)al_sqrtf((float)(-2.0 * (double)al_logf((float)qq)));
  double z = t - (2.515517 + t * (0.802853 + t * 0.010328)) /
                     (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308)));
  return lower ? -z : z;
}

/* Pass 0 of one row: max and min key among kept finite entries, their count, the NaN/+inf
 * flag, and sum / sum of squares (float: only for the first threshold guess). 16-lane blocks.
 * The keys (masked -> key(-inf)) are cached in o as float bit patterns (memcpy: no aliasing
 * issue) for the counting passes, which then cost one load per entry. */
typedef struct { uint32_t kmax, kmin, bad; int32_t nk; double s1, s2; } topk_stats;
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline topk_stats topk_pass0(float *o, const float *x, const uint8_t *kr, int64_t n) {
  topk_stats st = {AL_KEY_NEGINF, 0xFFFFFFFFu, 0, 0, 0, 0};
  uint32_t kmax = AL_KEY_NEGINF, kmin = 0xFFFFFFFFu, bad = 0;
  int32_t nk = 0;
  /* native integer reductions (GCC vectorizes these with a good horizontal step) */
#define TOPK_KEYS(KEY)                                                         \
  for (int64_t j = 0; j < n; j++) {                                            \
    uint32_t k = KEY;                                                          \
    o[j] = al_u2f_(k);                                                         \
    bad |= (k >= AL_KEY_POSINF) | (k < AL_KEY_NEGINF);                         \
    int fin = (k > AL_KEY_NEGINF) & (k < AL_KEY_POSINF);                       \
    nk += fin;                                                                 \
    kmax = k > kmax ? k : kmax;                                                \
    uint32_t kf = k | ((uint32_t)fin - 1u);                                    \
    kmin = kf < kmin ? kf : kmin;                                              \
  }
  if (kr) TOPK_KEYS(al_fkey_kept_(x[j], kr[j]))
  else TOPK_KEYS(al_fkey_(x[j]))
#undef TOPK_KEYS
  st.kmax = kmax; st.kmin = kmin; st.bad = bad; st.nk = nk;
  /* float lane sums of the finite kept values, for the first guess only */
  float a1[AL_LANES] = {0}, a2[AL_LANES] = {0};
#define TOPK_STATS(J, L, V)                                                    \
  {                                                                            \
    uint32_t k = al_f2u_(o[J]);                                                \
    float xf = al_fmask_(x[J], (k > AL_KEY_NEGINF) & (k < AL_KEY_POSINF));     \
    a1[L] += xf;                                                               \
    a2[L] += xf * xf;                                                          \
  }
  AL_LANE_LOOP(n, TOPK_STATS);
#undef TOPK_STATS
  for (int l = 0; l < AL_LANES; l++) { st.s1 += a1[l]; st.s2 += a2[l]; }
  return st;
}

/* zcache: the last (n_kept, K) and its quantile, so consecutive rows skip the log/sqrt. */
typedef struct { int64_t nk, K; double z; } topk_zcache;

static void topk_row(float *o, const float *x, const uint8_t *kr, int64_t n, double ratio,
                     topk_zcache *zc) {
  const topk_stats st0 = topk_pass0(o, x, kr, n);
  const uint32_t kmax = st0.kmax, kmin = st0.kmin;
  const int64_t nk = st0.nk;
  if (st0.bad) { al_norm_fill_(o, n, NAN); return; }
  if (nk == 0) { al_norm_fill_(o, n, 0.0f); return; }
  const int64_t K = al_topk_count(ratio, nk);

  /* Find T with #{key >= T} == K, or the tie value v and how many of its copies to take. */
  uint32_t T = kmin;             /* K == nk: everything finite */
  uint32_t tie = 0;              /* nonzero: v = tie, select keys > v and the first `need` == v */
  int64_t need = 0;
  uint32_t verify_v = 0;         /* optimistic T (count was K +- 1): check, else tie at this v */
  if (K < nk) {
    uint32_t lo = kmin, hi = kmax;
    int64_t clo = nk, chi = 1;   /* counts #{>= lo} (exact) and #{>= hi} (estimate) */
    int last = 0, rep = 0, first = 1;
    /* First guess: the (K - 1/2)/n_kept upper quantile of a normal with the row's mean and
     * standard deviation -- attention scores are roughly bell-shaped, and any guess is safe. */
    if (zc->nk != nk || zc->K != K) {
      zc->nk = nk;
      zc->K = K;
      zc->z = normal_upper_quantile(((double)K - 0.5) / (double)nk);
    }
    const double mu = st0.s1 / nk, var = st0.s2 / nk - mu * mu;
    const double guess = mu + sqrt(var > 0.0 ? var : 0.0) * zc->z;
    for (;;) {
      if (lo >= hi) { tie = lo; break; }       /* #{>= lo} > K > #{> lo}: equal values */
      double flo = al_fkey_inv_(lo), fhi = al_fkey_inv_(hi), t;
      if (first && guess > flo && guess <= fhi) t = guess;
      else if (rep >= 1) t = 0.5 * flo + 0.5 * fhi;
      else t = fhi - (fhi - flo) * ((double)(K - chi) + 0.5) / (double)(clo - chi);
      first = 0;
      uint32_t tk = al_fkey_((float)t);
      if (!(tk > lo)) tk = lo + 1;             /* T in (lo, hi] */
      if (tk > hi) tk = hi;
      uint32_t a, b;
      int64_t c = count_pass(o, n, tk, &a, &b);
      if (c == K) { T = tk; break; }
      if (c == K + 1) { T = a + 1; verify_v = a; break; }   /* drop a, if a is unique */
      if (c == K - 1) { T = b; verify_v = b; break; }       /* add b, if b is unique */
      int side = c > K ? 1 : -1;
      rep = side == last;
      last = side;
      if (c > K) { lo = a; clo = c; }
      else { hi = b; chi = c + 1; }
    }
  }

  /* An optimistic T (the count was K +- 1) selects != K entries only when the boundary value v
   * is repeated: then take the keys > v plus the first copies of v. (Counted on the keys that
   * pass 0 cached in o, before the output overwrites them.) */
  if (verify_v && count_cached(o, n, T) != K) tie = verify_v;
  if (tie) {
    T = tie + 1;
    need = K - count_cached(o, n, T);   /* >= 1 copies of v to take, lowest index first */
  }
  /* Softmax over the selection (its max is the row max): exp and sum in one lane pass. */
  const float mx = al_fkey_inv_(kmax);
  double a[AL_LANES] = {0};
  int64_t j;
#define TOPK_OUT(J, L, V)                                                      \
  {                                                                            \
    float e = al_fmask_(al_expf_le0(x[J] - mx), al_f2u_(o[J]) >= T);           \
    o[J] = e;                                                                  \
    a[L] += e;                                                                 \
  }
  AL_LANE_LOOP(n, TOPK_OUT);
#undef TOPK_OUT
  double sum = al_lanes_total_(a);
  if (need > 0) {   /* ties at the boundary: the lowest-index copies of v */
    for (j = 0; j < n && need > 0; j++)
      if (keyat(x, kr, j) == tie) {
        float e = al_expf_le0(x[j] - mx);
        o[j] = e;
        sum += e;
        need--;
      }
  }
  float sc = (float)(1.0 / sum);
  for (j = 0; j < n; j++) o[j] *= sc;
}

al_status al_topk_softmax_fwd(float *out, const float *x, double ratio, const uint8_t *keep,
                              int64_t mrows, int64_t rows, int64_t n) {
  al_status st = al_norm_check_("topk_softmax", out, x, keep, mrows, rows, n);
  if (st != AL_OK) return st;
  if (!(ratio > 0.0 && ratio <= 1.0))
    return al_seterr(AL_EINVAL, "topk_softmax: ratio = %g, want 0 < ratio <= 1", ratio);
  if (rows * n == 0) return AL_OK;
#pragma omp parallel if (rows * n >= AL_PAR_MIN_WORK)
  {
    topk_zcache zc = {-1, -1, 0.0};
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; r++)
      topk_row(out + r * n, x + r * n, al_norm_keeprow_(keep, mrows, rows, n, r), n, ratio, &zc);
  }
  return AL_OK;
}
