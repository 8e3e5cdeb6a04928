/* core/util/rng.c -- Philox4x32-10 counter-based generator (see attnlab/rng.h). */
#include <math.h>
#include <stdlib.h>

#include "attnlab/rng.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

void al_rng_philox(uint32_t out[4], uint64_t seed, uint64_t counter) {
  uint32_t c0 = (uint32_t)counter, c1 = (uint32_t)(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)PHILOX_M0 * c0, p1 = (uint64_t)PHILOX_M1 * c2;
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0, hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    uint32_t n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
    c0 = n0; c1 = n1; c2 = n2; c3 = n3;
    k0 += PHILOX_W0;
    k1 += PHILOX_W1;
  }
  out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

/* One default generator per OS thread (C11 _Thread_local), seeded AL_RNG_DEFAULT_SEED: C
 * programs that run attnlab on several threads get independent, reproducible streams instead
 * of a shared counter advanced in whatever order the threads happen to run. The Lua binding does not
 * use it: each lua_State has its own default generator (lua/bind/rng.c). */
static _Thread_local al_rng default_rng = {AL_RNG_DEFAULT_SEED, 0};
al_rng *al_rng_default(void) { return &default_rng; }

void al_rng_seed(al_rng *g, uint64_t seed) {
  g->seed = seed;
  g->counter = 0;
}

/* 24 random bits -> float in [0,1), exactly representable. */
static inline float u24(uint32_t x) { return (float)(x >> 8) * (1.0f / 16777216.0f); }

void al_rng_uniform(al_rng *g, float *out, int64_t n, float lo, float hi) {
  if (n <= 0) return;   /* (a negative n would move the counter back) */
  uint64_t base = g->counter;
  g->counter += (uint64_t)((n + 3) / 4);
  float span = hi - lo;
  for (int64_t i = 0; i < n; i += 4) {
    uint32_t r[4];
    al_rng_philox(r, g->seed, base + (uint64_t)(i / 4));
    for (int j = 0; j < 4 && i + j < n; j++) {
      float v = lo + span * u24(r[j]);
      out[i + j] = v < hi ? v : lo;   /* rounding of lo + span*u must not reach hi */
    }
  }
}

void al_rng_uniform_f64(al_rng *g, double *out, int64_t n) {
  if (n <= 0) return;   /* (a negative n would move the counter back) */
  uint64_t base = g->counter;
  g->counter += (uint64_t)((n + 1) / 2);
  for (int64_t i = 0; i < n; i += 2) {
    uint32_t r[4];
    al_rng_philox(r, g->seed, base + (uint64_t)(i / 2));
    for (int j = 0; j < 2 && i + j < n; j++) {
      uint64_t bits = ((uint64_t)r[2 * j] << 21) ^ (uint64_t)(r[2 * j + 1] >> 11);
      out[i + j] = (double)(bits & ((1ull << 53) - 1)) * (1.0 / 9007199254740992.0);
    }
  }
}

/* Box-Muller: each counter block gives two pairs of uniforms -> four normals. */
void al_rng_normal(al_rng *g, float *out, int64_t n, float mean, float std) {
  if (n <= 0) return;   /* (a negative n would move the counter back) */
  uint64_t base = g->counter;
  g->counter += (uint64_t)((n + 3) / 4);
  const double two_pi = 6.283185307179586476925;
  for (int64_t i = 0; i < n; i += 4) {
    uint32_t r[4];
    al_rng_philox(r, g->seed, base + (uint64_t)(i / 4));
    for (int p = 0; p < 2; p++) {
      double u1 = ((double)r[2 * p] + 1.0) * (1.0 / 4294967297.0);   /* (0,1]: log is finite */
      double u2 = (double)r[2 * p + 1] * (1.0 / 4294967296.0);
      double rad = sqrt(-2.0 * log(u1));
      double z0 = rad * cos(two_pi * u2), z1 = rad * sin(two_pi * u2);
      if (i + 2 * p < n) out[i + 2 * p] = (float)(mean + std * z0);
      if (i + 2 * p + 1 < n) out[i + 2 * p + 1] = (float)(mean + std * z1);
    }
  }
}

al_status al_rng_randint(al_rng *g, int64_t *out, int64_t count, int64_t n) {
  if (!g) return al_seterr(AL_EINVAL, "randint: the generator is NULL");
  if (count < 0) return al_seterr(AL_EINVAL, "randint: count must be >= 0, got %lld", (long long)count);
  if (count > 0 && !out) return al_seterr(AL_EINVAL, "randint: out is NULL for %lld values", (long long)count);
  if (n < 1) return al_seterr(AL_EINVAL, "randint: the range [0, n) needs n >= 1, got %lld", (long long)n);
  uint64_t un = (uint64_t)n, limit = UINT64_MAX - UINT64_MAX % un;
  for (int64_t i = 0; i < count; i++) {
    uint64_t v;
    do {
      uint32_t r[4];
      al_rng_philox(r, g->seed, g->counter++);
      v = ((uint64_t)r[0] << 32) | r[1];
    } while (v >= limit);
    out[i] = (int64_t)(v % un);
  }
  return AL_OK;
}

void al_rng_permutation(al_rng *g, int64_t *out, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = i;
  for (int64_t i = n - 1; i > 0; i--) {
    int64_t j;
    al_rng_randint(g, &j, 1, i + 1);
    int64_t t = out[i]; out[i] = out[j]; out[j] = t;
  }
}
