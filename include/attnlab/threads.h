/* attnlab/threads.h -- one thread-count setting shared by OpenMP loops and OpenBLAS.
 * Results never depend on the count beyond float rounding of reductions that split
 * rows differently (kernels split rows, never a single reduction). */
#ifndef ATTNLAB_THREADS_H
#define ATTNLAB_THREADS_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* For the calling OS thread (as omp_set_num_threads): each thread that runs attnlab picks its own
 * count for the OpenMP loops; one that never set it gets OpenMP's default. n < 1 is taken as 1,
 * n > AL_MAX_THREADS as AL_MAX_THREADS (libgomp aborts the process when it cannot create the
 * threads asked for: 100000 did).
 * Exception: al_sgemm splits its panels over the count set last by any thread (blas.h,
 * al_blas_set_threads), 1 until one is set; its results do not depend on it. */
#define AL_MAX_THREADS 256
void al_set_num_threads(int n);
int al_get_num_threads(void);

/* Rows below this amount of work (elements) run on one thread: forking costs ~2 us. */
#define AL_PAR_MIN_WORK 32768

#ifdef __cplusplus
}
#endif

#endif
