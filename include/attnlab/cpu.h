/* attnlab/cpu.h -- which instruction-set level the hot kernels run at.
 *
 * One build runs on every x86-64. The kernel files (the normalizers, the mixers, the
 * elementwise/nn/matmul ops, the optimizers, the small GEMM) are compiled three times:
 *   avx512    -march=x86-64-v4  (AVX-512 F/BW/CD/DQ/VL)
 *   avx2      -march=x86-64-v3  (AVX2, FMA, BMI2)
 *   generic   -march=x86-64     (SSE2: any x86-64)
 * and every public kernel function is a one-jump trampoline into the variant chosen once,
 * when the library loads: the best level this CPU and OS support (cpuid, xgetbv), capped by
 * the environment variable ATTNLAB_CPU=avx512|avx2|generic. The rest of the library is
 * built for the baseline. Nothing here needs to be called to get the right kernels.
 *
 * Results: each level is checked against the same float64/PyTorch references by the test
 * suite (CI runs the kernel tests at every level). The normalizers' vector math repeats the
 * scalar functions operation by operation, so most outputs agree bitwise across levels;
 * where a level fuses a multiply-add (FMA) they may differ in the last bit. Within one level,
 * results never depend on the thread count. */
#ifndef ATTNLAB_CPU_H
#define ATTNLAB_CPU_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { AL_CPU_GENERIC = 0, AL_CPU_AVX2 = 1, AL_CPU_AVX512 = 2 } al_cpu_level;

/* The best level this CPU and its OS can run (independent of ATTNLAB_CPU and of the build). */
al_cpu_level al_cpu_detect(void);
/* The level whose kernels are in use now. */
al_cpu_level al_cpu_active(void);
/* "avx512", "avx2", "generic"; NULL for an out-of-range value. */
const char *al_cpu_level_name(al_cpu_level level);
/* The levels compiled into this build, best first, space-separated: "avx512 avx2 generic"
 * (a build with ISA_LEVELS=... or without run-time dispatch lists fewer). */
const char *al_cpu_levels_built(void);
/* How the active level was chosen, one line: "best the CPU supports", "capped by
 * ATTNLAB_CPU=avx2", or why a requested level was not possible. */
const char *al_cpu_note(void);

/* Switch every kernel to `name` ("avx512", "avx2", "generic") for the rest of the process.
 * For tests and experiments that compare levels in one process; not thread-safe against
 * kernels running at the same time. AL_EINVAL (with a message) for an unknown name, a level
 * this CPU cannot run, or one this build does not contain; nothing changes then. */
al_status al_cpu_set_level(const char *name);

#ifdef __cplusplus
}
#endif

#endif
