/* core/mix/internal.h -- helpers shared by the token mixers in core/mix/ (private;
 * pure C11, no Lua): keep-mask compaction and workspace carving; the mixers' branch-free
 * float32 transcendentals (mx_exp, ...) are in core/simd/fastmath.h.
 * The scan computes exp(dt*A) for every (b, t, channel, state), B*T*E*N calls per
 * direction, which is why those helpers must vectorize. */
#ifndef ATTNLAB_MIX_INTERNAL_H
#define ATTNLAB_MIX_INTERNAL_H
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../simd/fastmath.h"

/* ---- keep-mask compaction -------------------------------------------------------
 * A sequence b keeps len[b] tokens; compact position p (0 <= p < len[b]) is original
 * token pos[b*Tk + p]; Tk = max_b len[b]. Entries p >= len[b] of pos are -1. */

/* Returns Tk and fills len (B) unless len is NULL. keep NULL: every len is T.
 * *dense = 1 when every token is kept (pos is then the identity: compact rows are the
 * original rows, and Tk = T). */
static inline int64_t mx_keep_lengths(int64_t *len, int *dense, const uint8_t *keep,
                                      int64_t B, int64_t T) {
  int64_t tk = 0;
  *dense = 1;
  for (int64_t b = 0; b < B; b++) {
    int64_t n = T;
    if (keep) {
      n = 0;
      for (int64_t t = 0; t < T; t++) n += keep[b * T + t] != 0;
    }
    if (len) len[b] = n;
    if (n != T) *dense = 0;
    if (n > tk) tk = n;
  }
  return tk;
}

static inline void mx_keep_positions(int32_t *pos, const uint8_t *keep, int64_t B,
                                     int64_t T, int64_t tk) {
  for (int64_t b = 0; b < B; b++) {
    int64_t p = 0;
    for (int64_t t = 0; t < T; t++)
      if (!keep || keep[b * T + t]) pos[b * tk + p++] = (int32_t)t;
    for (; p < tk; p++) pos[b * tk + p] = -1;
  }
}

/* 1 when the product of the n factors (each >= 0) is at most 2^58, so that a buffer of that
 * many floats, and sums of a few such sizes in bytes, fit in int64 and size_t; 0 when it
 * overflows. The mixers call it on their largest workspace and parameter counts before they
 * size anything: a public caller's huge dims are refused, not wrapped into a small buffer. */
static inline int mx_count_fits(int n, const int64_t *factors) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) {
    if (factors[i] == 0) return 1;
    if (__builtin_mul_overflow(p, factors[i], &p) || p > ((int64_t)1 << 58)) {
      for (int j = i + 1; j < n; j++) if (factors[j] == 0) return 1;
      return 0;
    }
  }
  return 1;
}

/* Carve 64-byte aligned pieces out of one allocation: first call with base NULL to
 * count, then with the block. */
static inline void *mx_carve(char *base, size_t *off, size_t nbytes) {
  void *p = base ? base + *off : NULL;
  *off += (nbytes + 63) & ~(size_t)63;
  return p;
}

#endif
