/* attnlab/rng.h -- counter-based random numbers (Philox4x32-10, Salmon et al. 2011).
 *
 * A generator is (key = seed, counter). al_rng_uniform and al_rng_normal draw 4 values per
 * counter: n of them use counters [counter, counter + ceil(n/4)) and advance the counter, and
 * value i depends only on (seed, counter + i/4). al_rng_uniform_f64 draws 2 per counter
 * (ceil(n/2)); al_rng_randint one per counter, plus one per (rare) rejection. So results are
 * bit-identical on every run, machine and thread count. Normals use Box-Muller on pairs of
 * uniforms in double. */
#ifndef ATTNLAB_RNG_H
#define ATTNLAB_RNG_H
#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct al_rng {
  uint64_t seed;
  uint64_t counter;
} al_rng;

void al_rng_seed(al_rng *g, uint64_t seed);
/* The seed of every default generator: al_rng_default()'s, a Lua state's, al.Generator()'s. */
#define AL_RNG_DEFAULT_SEED 0x5eed
/* The calling OS thread's generator (seed AL_RNG_DEFAULT_SEED at first use); each thread has
 * its own. */
al_rng *al_rng_default(void);
void al_rng_philox(uint32_t out[4], uint64_t seed, uint64_t counter);   /* the raw block */
/* The draws of n values: n <= 0 draws nothing and leaves the counter. */
void al_rng_uniform(al_rng *g, float *out, int64_t n, float lo, float hi);  /* [lo, hi) */
void al_rng_normal(al_rng *g, float *out, int64_t n, float mean, float std);
/* Uniform doubles in [0,1) with 53 random bits. */
void al_rng_uniform_f64(al_rng *g, double *out, int64_t n);
/* count integers in [0, n) without modulo bias (rejection); AL_EINVAL (nothing drawn) unless
 * n >= 1, count >= 0, g is set and out is (when count > 0). */
al_status al_rng_randint(al_rng *g, int64_t *out, int64_t count, int64_t n);
/* A uniformly random permutation of 0..n-1 (Fisher-Yates). */
void al_rng_permutation(al_rng *g, int64_t *out, int64_t n);

#ifdef __cplusplus
}
#endif

#endif
