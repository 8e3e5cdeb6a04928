/* attnlab/threads.h -- one thread-count setting shared by OpenMP loops and OpenBLAS.
 * Results never depend on the count beyond float rounding of reductions that split
 * rows differently (kernels split rows, never a single reduction). */
#ifndef ATTNLAB_THREADS_H
#define ATTNLAB_THREADS_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void al_set_num_threads(int n);   /* n >= 1 */
int al_get_num_threads(void);

/* Rows below this amount of work (elements) run on one thread: forking costs ~2 us. */
#define AL_PAR_MIN_WORK 32768

#ifdef __cplusplus
}
#endif

#endif
