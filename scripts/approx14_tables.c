/* scripts/approx14_tables.c -- where core/simd/approx14.h's tables come from, and the proof that
 * its emulations are AVX-512's VRCP14PS and VRSQRT14PS bit for bit. Needs a CPU with AVX-512:
 *
 *   cc -O2 -mavx512f -o /tmp/approx14 scripts/approx14_tables.c
 *   /tmp/approx14            # prints the tables, as approx14.h holds them
 *   /tmp/approx14 --check    # al_rcp14f / al_rsqrt14f against the instructions on all 2^32 floats
 *
 * How the tables are found. The instructions' results depend on few input bits: VRCP14PS's
 * mantissa on the input mantissa's top 16 bits (the low 7 never matter, except that an exact
 * power of two gets its exact reciprocal), VRSQRT14PS's on the exponent's parity and the top 15
 * bits. Within 64 (32 per parity) equal segments of those indices the 16-bit result mantissa M
 * is (A - B l) >> 9 for the offset l in the segment: for each segment the integer slopes B that
 * reproduce every M form an interval (bounded by every pair of offsets), the smallest is taken,
 * and A is then the least value it allows. Each fit is checked on all of its segment's indices
 * here, and --check compares the finished functions with the instructions on every float
 * (including zeros, subnormals, infinities and NaNs): 0 mismatches on the AMD EPYC (Zen 5) of
 * 2026-12-04, in 12-14 s. */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/simd/approx14.h"

/* the instruction on one float */
static uint32_t instruction(int rsqrt, uint32_t u) {
  const __m512 v = _mm512_set1_ps(al_u2f_(u));
  return al_f2u_(_mm512_cvtss_f32(rsqrt ? _mm512_rsqrt14_ps(v) : _mm512_rcp14_ps(v)));
}

/* Fits M = (A - B l) >> 9 on the segments of the index_bits-bit index of inputs with biased
 * exponent `exponent`; prints one "{A, B}," per segment. */
static void fit(int rsqrt, uint32_t exponent, int index_bits, int segment_bits) {
  const int unused = 23 - index_bits, segments = 1 << segment_bits, len = 1 << (index_bits - segment_bits);
  const int64_t S = 1 << AL_APPROX14_SHIFT;
  int64_t *M = malloc(sizeof *M << index_bits);
  /* the lowest mantissa bit set: the same result (those bits never matter) without the exact
   * power of two */
  for (uint32_t i = 0; i < (1u << index_bits); i++)
    M[i] = (instruction(rsqrt, exponent << 23 | i << unused | 1u) & 0x7FFFFFu) >> 7;
  for (int j = 0; j < segments; j++) {
    const int64_t *m = M + (int64_t)j * len;
    /* M(l) S <= A - B l < (M(l) + 1) S for every l; for l1 < l2 that bounds B from below by
     * ((M(l1) - M(l2)) S - (S - 1)) / (l2 - l1) */
    int64_t B = INT64_MIN;
    for (int l1 = 0; l1 < len; l1++)
      for (int l2 = l1 + 1; l2 < len; l2++) {
        const int64_t d = l2 - l1, lo = (m[l1] - m[l2]) * S - (S - 1);
        const int64_t c = lo >= 0 ? (lo + d - 1) / d : -(-lo / d);
        if (c > B) B = c;
      }
    int64_t A = INT64_MIN;
    for (int l = 0; l < len; l++) if (m[l] * S + B * l > A) A = m[l] * S + B * l;
    for (int l = 0; l < len; l++)
      if (((A - B * l) >> AL_APPROX14_SHIFT) != m[l]) {
        fprintf(stderr, "no fit: %s segment %d offset %d\n", rsqrt ? "rsqrt14" : "rcp14", j, l);
        exit(1);
      }
    printf("{%lld, %lld},%s", (long long)A, (long long)B, j % 4 == 3 ? "\n" : " ");
  }
  free(M);
}

int main(int argc, char **argv) {
  if (!__builtin_cpu_supports("avx512f")) { fprintf(stderr, "this CPU has no AVX-512\n"); return 1; }
  if (argc > 1 && strcmp(argv[1], "--check") == 0) {
    uint64_t bad[2] = {0, 0};
    for (uint64_t u = 0; u < (1ull << 32); u++) {
      bad[0] += al_f2u_(al_rcp14f(al_u2f_((uint32_t)u))) != instruction(0, (uint32_t)u);
      bad[1] += al_f2u_(al_rsqrt14f(al_u2f_((uint32_t)u))) != instruction(1, (uint32_t)u);
    }
    printf("all 2^32 floats: al_rcp14f %llu mismatches, al_rsqrt14f %llu mismatches\n",
           (unsigned long long)bad[0], (unsigned long long)bad[1]);
    return bad[0] || bad[1];
  }
  printf("/* VRCP14PS: 64 segments of the 16-bit index */\n");
  fit(0, 127, 16, 6);
  printf("/* VRSQRT14PS, even exponent (mantissa in [1, 2)): 32 segments of the 15-bit index */\n");
  fit(1, 127, 15, 5);
  printf("/* VRSQRT14PS, odd exponent ([2, 4)) */\n");
  fit(1, 128, 15, 5);
  return 0;
}
