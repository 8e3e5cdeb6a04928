/* core/runtime/threads.c -- one thread count for OpenMP loops and OpenBLAS. */
#include <omp.h>
#include "attnlab/blas.h"
#include "attnlab/threads.h"

/* Per OS thread, like OpenMP's own nthreads-var (omp_set_num_threads affects the calling
 * thread only): two hosts' threads may each pick their count. 0 = not set on this thread. */
static _Thread_local int nthreads = 0;

void al_set_num_threads(int n) {
  if (n < 1) n = 1;
  if (n > AL_MAX_THREADS) n = AL_MAX_THREADS;
  nthreads = n;
  omp_set_num_threads(n);
  al_blas_set_threads(n);
}

int al_get_num_threads(void) {
  if (nthreads == 0) nthreads = omp_get_max_threads();
  return nthreads;
}
