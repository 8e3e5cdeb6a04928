/* core/gemm/blas.c -- sgemm through OpenBLAS loaded at run time, with CPU-aware kernel
 * selection and a self-check; a portable C sgemm when that is impossible.
 *
 * Why dlopen and not -lopenblas: OpenBLAS chooses its kernels in a constructor that
 * runs when the library is loaded, from OPENBLAS_CORETYPE or its own CPUID table.
 * Debian 12's 0.3.21 table stops before recent Xeons, so they get SSE3 "Prescott"
 * kernels, far slower than the AVX-512 ones. Linking would load it before any of our code
 * runs; loading it ourselves lets us set the core type first.
 *
 * Procedure (al_blas_init, once):
 *   1. If the user set OPENBLAS_CORETYPE, respect it (source "user").
 *   2. Else ask a child process what OpenBLAS picks on its own. If that is a weak
 *      core while CPUID (and the OS, via XGETBV) supports AVX-512 or AVX2+FMA,
 *      test the better core type in a second child: load with it and compare sgemm
 *      against a plain loop on odd shapes. A crash or a wrong result there only
 *      kills the child. If it passes, set OPENBLAS_CORETYPE (source "attnlab").
 *   3. Load OpenBLAS in this process and run the same self-check; if OpenBLAS is
 *      missing or wrong, use the builtin C sgemm (and say so in al_blas_info).
 *
 * Which kernel: attnlab's own sgemm (core/gemm/gemm.c) for the model's shapes, OpenBLAS (or
 * the builtin loop) beyond a crossover measured in experiments/core/RESULTS.md; see
 * use_own(). The own kernel gives every output element one fixed FMA chain over k.
 *
 * Threads: OpenBLAS always runs one thread per call; al_sgemm itself splits a large GEMM
 * into row (or column) panels over the OpenMP team. Why: with OpenBLAS's own pthread
 * pool next to our OpenMP team, two pools took turns on the same 2 cores -- after each
 * GEMM the OpenBLAS master spin-yields waiting for its worker, and our OpenMP worker
 * woke again for the next elementwise loop, so a 2-thread step cost much more CPU than a
 * 1-thread step and ran barely faster. One team serves both now.
 *
 * Determinism across thread counts: the panels are PANEL rows (or columns) whatever the
 * thread count, and the cut depends on the shape alone, so every output element is
 * computed by an OpenBLAS call of the same shape at 1, 2 or 64 threads. That matters:
 * OpenBLAS's Haswell kernels treat M and N tails with other code than full blocks, so
 * one 2176-row call and two 1088-row calls differ in the last bits. The own kernel does
 * not care how it is cut (gemm.h); it runs whole at 1 thread, in any panels otherwise. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <omp.h>

#include "attnlab/blas.h"
#include "attnlab/gemm.h"
#include "internal.h"

typedef void (*sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a,
                         int lda, const float *b, int ldb, float beta, float *c, int ldc);
enum { ROWMAJOR = 101, NOTRANS = 111, TRANS = 112 };

static sgemm_fn p_sgemm;
static void (*p_set_threads)(int);
static char *(*p_get_corename)(void);
static char *(*p_get_config)(void);
static al_blas_info_t info = {"builtin", "none", "", "openblas", "", 1, "", ""};
/* set (release) once blas_init_once has finished: until then p_sgemm and the crossover are not
 * known, and a GEMM must wait for them rather than read them half-written */
static atomic_int inited;
static char note_buf[512], core_buf[64], config_buf[256];
static int want_threads = 0;
static int force_path = AL_SGEMM_AUTO;   /* al_sgemm_force_path: tests and benchmarks */
static int env_path = AL_SGEMM_AUTO;     /* ATTNLAB_SGEMM, read once by al_blas_init */
static char rule_buf[160];

/* The crossover (experiments/core/RESULTS.md, "attnlab's own sgemm"): the own kernel
 * unless N is large, or N and K both are. It reads row-major B in place, so at N >= 1024 a
 * K x 16 (32) panel of B has rows 4 KB or more apart, which share a few L1 sets; and when
 * B (K x N) is far past L2 OpenBLAS's packed AVX-512 kernels are ahead. One rule for every
 * ISA level and core type, from the shape alone (never the thread count). */
#define OWN_MAX_N 768
#define OWN_MAX_K_WIDE 768   /* K limit when 512 < N <= OWN_MAX_N */
#define OWN_RULE "N <= 512, or N <= 768 and K <= 768 (else OpenBLAS)"
static int use_own(int64_t M, int64_t N, int64_t K) {
  int path = force_path != AL_SGEMM_AUTO ? force_path : env_path;
  if (path != AL_SGEMM_AUTO) return path == AL_SGEMM_OWN;
  return N <= 512 || (N <= OWN_MAX_N && K <= OWN_MAX_K_WIDE);
}

/* ATTNLAB_SGEMM=auto|attnlab|openblas: the user's override of the crossover, for the whole
 * process. Why: to measure what the own kernel saves on a real run (the same tree, the same
 * command, one variable), and to rule it out when a result looks wrong. With "openblas",
 * results are no longer bitwise the same across machines and core types (the own kernel's
 * fixed chains are what makes them so), so al.config().gemm_rule and every training
 * record's machine say it is set. A value that is not a path cannot be an error here (the
 * first al_sgemm may run deep inside a model), so it is named on stderr once and ignored,
 * as ATTNLAB_CPU is. */
static void read_sgemm_env(void) {
  const char *v = getenv("ATTNLAB_SGEMM");
  snprintf(rule_buf, sizeof rule_buf, "%s", OWN_RULE);
  if (!v || !*v || strcmp(v, "auto") == 0) return;
  if (strcmp(v, "attnlab") == 0) {
    env_path = AL_SGEMM_OWN;
    snprintf(rule_buf, sizeof rule_buf, "every shape (ATTNLAB_SGEMM=attnlab)");
  } else if (strcmp(v, "openblas") == 0) {
    env_path = AL_SGEMM_BLAS;
    snprintf(rule_buf, sizeof rule_buf, "no shape: OpenBLAS for every product (ATTNLAB_SGEMM=openblas)");
  } else {
    fprintf(stderr, "attnlab: ATTNLAB_SGEMM=%s is not a path (auto, attnlab or openblas); using auto\n", v);
    snprintf(rule_buf, sizeof rule_buf, "%s; ATTNLAB_SGEMM=%.24s is not a path: ignored", OWN_RULE, v);
  }
}

/* ---- builtin sgemm (correct, cache-blocked enough to be tolerable) ---------- */
static void builtin_sgemm(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                          int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  for (int64_t i = 0; i < M; i++) {
    float *c = C + i * ldc;
    if (beta == 0) for (int64_t j = 0; j < N; j++) c[j] = 0;
    else if (beta != 1) for (int64_t j = 0; j < N; j++) c[j] *= beta;
    for (int64_t k = 0; k < K; k++) {
      float a = alpha * (ta ? A[k * lda + i] : A[i * lda + k]);
      if (a == 0) continue;
      if (!tb) { const float *b = B + k * ldb; for (int64_t j = 0; j < N; j++) c[j] += a * b[j]; }
      else for (int64_t j = 0; j < N; j++) c[j] += a * B[j * ldb + k];
    }
  }
}

/* ---- CPU features ------------------------------------------------------------- */
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
static unsigned long long xgetbv0(void) {
  unsigned int lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((unsigned long long)hi << 32) | lo;
}
/* The best OpenBLAS 0.3.21 core name this CPU and OS can run, or NULL. */
static const char *cpu_best_core(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return NULL;
  int osxsave = (c >> 27) & 1, fma = (c >> 12) & 1, avx = (c >> 28) & 1;
  if (!osxsave || !avx) return NULL;
  unsigned long long xcr0 = xgetbv0();
  int os_avx = (xcr0 & 0x6) == 0x6, os_avx512 = (xcr0 & 0xe6) == 0xe6;
  if (!os_avx) return NULL;
  unsigned a7 = 0, b7 = 0, c7 = 0, d7 = 0, a71 = 0, b71 = 0, c71 = 0, d71 = 0;
  __cpuid_count(7, 0, a7, b7, c7, d7);
  __cpuid_count(7, 1, a71, b71, c71, d71);
  int avx2 = (b7 >> 5) & 1, avx512f = (b7 >> 16) & 1, avx512dq = (b7 >> 17) & 1, avx512bw = (b7 >> 30) & 1,
      avx512vl = (b7 >> 31) & 1, avx512cd = (b7 >> 28) & 1, bf16 = (a71 >> 5) & 1;
  if (os_avx512 && avx512f && avx512dq && avx512bw && avx512vl && avx512cd) return bf16 ? "Cooperlake" : "SkylakeX";
  if (avx2 && fma) return "Haswell";
  return NULL;
}
#else
static const char *cpu_best_core(void) { return NULL; }
#endif

static int is_strong_core(const char *name) {
  static const char *strong[] = {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids", "Neoverse", "ARMV8SVE", NULL};
  for (int i = 0; strong[i]; i++) if (name && strstr(name, strong[i])) return 1;
  return 0;
}

/* ---- loading and self-check ---------------------------------------------------- */
static const char *lib_candidates[] = {"libopenblas.so.0", "libopenblas.so", NULL};

static void *load_openblas(void) {
  const char *user = getenv("ATTNLAB_BLAS_LIB");
  if (user && *user) return dlopen(user, RTLD_NOW | RTLD_LOCAL);
  for (int i = 0; lib_candidates[i]; i++) {
    void *h = dlopen(lib_candidates[i], RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
  }
  return NULL;
}

/* Compare fn against the builtin loop on shapes that exercise edge handling and
 * the main kernels (odd sizes, all transpose cases). Inputs are small integers so
 * every product and sum is exact in float32 up to K*max^2 < 2^24. */
static int self_check(sgemm_fn fn) {
  static const int shapes[][3] = {{67, 45, 39}, {256, 192, 64}, {1, 17, 5}, {33, 1, 70}};
  int ok = 1;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0] && ok; s++) {
    int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
    float *A = malloc(sizeof(float) * (size_t)M * K), *B = malloc(sizeof(float) * (size_t)K * N);
    float *C1 = malloc(sizeof(float) * (size_t)M * N), *C2 = malloc(sizeof(float) * (size_t)M * N);
    if (!A || !B || !C1 || !C2) { free(A); free(B); free(C1); free(C2); return 0; }
    for (int i = 0; i < M * K; i++) A[i] = (float)((i * 7 + 3) % 11 - 5);
    for (int i = 0; i < K * N; i++) B[i] = (float)((i * 5 + 1) % 9 - 4);
    for (int t = 0; t < 4 && ok; t++) {
      int ta = t & 1, tb = t >> 1;
      int lda = ta ? M : K, ldb = tb ? K : N;
      for (int i = 0; i < M * N; i++) C1[i] = C2[i] = (float)(i % 3);
      fn(ROWMAJOR, ta ? TRANS : NOTRANS, tb ? TRANS : NOTRANS, M, N, K, 1.0f, A, lda, B, ldb, 1.0f, C1, N);
      builtin_sgemm(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, 1.0f, C2, N);
      for (int i = 0; i < M * N; i++) if (C1[i] != C2[i]) { ok = 0; break; }
    }
    free(A); free(B); free(C1); free(C2);
  }
  return ok;
}

/* Run in a child: load OpenBLAS with the given core type (NULL = its own choice),
 * self-check, and report the core name through a pipe. Returns 1 if it passed. */
static int probe_child(const char *coretype, char *core_out, size_t n) {
  int fd[2];
  if (pipe(fd) != 0) return 0;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) { close(fd[0]); close(fd[1]); return 0; }
  if (pid == 0) {
    close(fd[0]);
    alarm(20);
    if (coretype) setenv("OPENBLAS_CORETYPE", coretype, 1);
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    void *h = load_openblas();
    if (!h) _exit(3);
    sgemm_fn fn = (sgemm_fn)dlsym(h, "cblas_sgemm");
    char *(*corename)(void) = (char *(*)(void))dlsym(h, "openblas_get_corename");
    if (!fn) _exit(4);
    const char *cn = corename ? corename() : "unknown";
    ssize_t w = write(fd[1], cn, strlen(cn));
    (void)w;
    _exit(self_check(fn) ? 0 : 5);
  }
  close(fd[1]);
  ssize_t got = read(fd[0], core_out, n - 1);
  core_out[got > 0 ? got : 0] = 0;
  close(fd[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return 0;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void blas_init_once(void) {
  const char *user = getenv("OPENBLAS_CORETYPE");
  note_buf[0] = 0;
  if (user && *user) {
    info.coretype_source = "user";
    snprintf(note_buf, sizeof note_buf, "OPENBLAS_CORETYPE=%s set by the user", user);
  } else if (!getenv("ATTNLAB_NO_CORETYPE")) {
    const char *best = cpu_best_core();
    char own[64] = "";
    int own_ok = probe_child(NULL, own, sizeof own);
    if (best && !is_strong_core(own)) {
      char tested[64] = "";
      if (probe_child(best, tested, sizeof tested)) {
        setenv("OPENBLAS_CORETYPE", best, 0);
        info.coretype_source = "attnlab";
        snprintf(note_buf, sizeof note_buf, "OpenBLAS chose %s on its own; CPU supports %s, which passed the self-check",
                 own[0] ? own : "nothing", best);
      } else {
        snprintf(note_buf, sizeof note_buf, "CPU supports %s but it failed the self-check; keeping OpenBLAS's choice %s", best, own);
      }
    } else {
      snprintf(note_buf, sizeof note_buf, "OpenBLAS's own choice %s%s", own[0] ? own : "(not loadable)",
               own_ok ? "" : " failed the self-check");
    }
  }
  /* OpenBLAS's pthread workers spin for 2^28 cycles (~0.1 s) after every GEMM and
   * then compete with our OpenMP loops for the same cores (OpenBLAS issue #3187): at 2
   * threads that made steps several times slower. Let them sleep early unless the user chose. */
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
  void *h = load_openblas();
  if (h) {
    p_sgemm = (sgemm_fn)dlsym(h, "cblas_sgemm");
    p_set_threads = (void (*)(int))dlsym(h, "openblas_set_num_threads");
    p_get_corename = (char *(*)(void))dlsym(h, "openblas_get_corename");
    p_get_config = (char *(*)(void))dlsym(h, "openblas_get_config");
  }
  if (p_sgemm && !self_check(p_sgemm)) {
    p_sgemm = NULL;
    strncat(note_buf, "; OpenBLAS failed the in-process self-check: using the builtin sgemm", sizeof note_buf - strlen(note_buf) - 1);
  }
  if (p_sgemm) {
    info.backend = "openblas";
    snprintf(core_buf, sizeof core_buf, "%s", p_get_corename ? p_get_corename() : "unknown");
    snprintf(config_buf, sizeof config_buf, "%s", p_get_config ? p_get_config() : "");
    info.core = core_buf;
    info.config = config_buf;
  } else {
    info.backend = "builtin";
    info.core = "portable C";
    if (!h) strncat(note_buf, "; libopenblas.so.0 not found: using the builtin sgemm (slow)", sizeof note_buf - strlen(note_buf) - 1);
  }
  info.note = note_buf;
  info.gemm = al_gemm_level();
  read_sgemm_env();
  info.gemm_rule = rule_buf;
  if (p_set_threads) p_set_threads(1);   /* al_sgemm splits panels itself (see top) */
  atomic_store_explicit(&inited, 1, memory_order_release);
}

/* Once per process, even when two threads make their first GEMM at the same moment: the set-up
 * probes OpenBLAS in child processes for a while, and a second caller that only saw a flag set
 * at its start ran its product on the builtin loop meanwhile (other bits than OpenBLAS's) */
void al_blas_init(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  if (!atomic_load_explicit(&inited, memory_order_acquire)) pthread_once(&once, blas_init_once);
}

const al_blas_info_t *al_blas_info(void) {
  al_blas_init();
  return &info;
}

void al_blas_set_threads(int n) {
  want_threads = n;
  info.threads = n;
  if (atomic_load_explicit(&inited, memory_order_acquire) && p_set_threads) p_set_threads(1);   /* panels are split by al_sgemm (see top) */
}

int al_sgemm_force_path(int path) {
  int was = force_path;
  force_path = path;
  return was;
}
int al_sgemm_path(int64_t M, int64_t N, int64_t K) {
  al_blas_init();   /* reads ATTNLAB_SGEMM */
  return use_own(M, N, K) ? AL_SGEMM_OWN : AL_SGEMM_BLAS;
}

static void sgemm_lib(int transA, int transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t lda,
                      const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  if (p_sgemm && M < INT32_MAX && N < INT32_MAX && K < INT32_MAX)
    p_sgemm(ROWMAJOR, transA ? TRANS : NOTRANS, transB ? TRANS : NOTRANS, (int)M, (int)N, (int)K, alpha, A,
            (int)lda, B, (int)ldb, beta, C, (int)ldc);
  else
    builtin_sgemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* bias (N floats) or NULL: with a bias, C = alpha op(A)op(B) + bias in every row, and beta is
 * not used. The own kernel adds it as it ends each chain; the library gets the rows of C
 * filled with it and beta = 1, which is the same arithmetic (alpha acc + 1 bias). */
static void sgemm_one(int own, int transA, int transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                      int64_t lda, const float *B, int64_t ldb, float beta, const float *bias, float *C, int64_t ldc) {
  /* the own kernel fails only without memory for packing B^T: then the library's result */
  if (own && (bias ? al_gemm_f32_bias(transA, transB, M, N, K, alpha, A, lda, B, ldb, bias, C, ldc)
                   : al_gemm_f32(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)) == AL_OK)
    return;
  if (bias) {
    for (int64_t i = 0; i < M; i++) memcpy(C + i * ldc, bias, sizeof(float) * (size_t)N);
    beta = 1.0f;
  }
  sgemm_lib(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* The panel of al_sgemm's product that starts at row (split_m) or column s: min(panel, len - s)
 * rows of op(A) and C, or columns of op(B) and C. */
static void sgemm_panel(int own, int split_m, int64_t s, int64_t panel, int64_t len, int transA, int transB,
                        int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t lda, const float *B,
                        int64_t ldb, float beta, const float *bias, float *C, int64_t ldc) {
  int64_t n = len - s < panel ? len - s : panel;
  if (split_m)
    sgemm_one(own, transA, transB, n, N, K, alpha, transA ? A + s : A + s * lda, lda, B, ldb, beta, bias,
              C + s * ldc, ldc);
  else
    sgemm_one(own, transA, transB, M, n, K, alpha, A, lda, transB ? B + s * ldb : B + s, ldb, beta,
              bias ? bias + s : NULL, C + s, ldc);
}

/* Below this many multiply-adds a GEMM stays on one thread: waking a sleeping OpenMP
 * worker costs about as much as such a product. Shape-only, like the panels. */
#define PAR_MIN_MACS (1 << 20)
/* rows (columns) per panel: a multiple of every kernel's tile width (16, 32) */
#define PANEL 128

static void sgemm(int transA, int transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t lda,
                  const float *B, int64_t ldb, float beta, const float *bias, float *C, int64_t ldc);

/* A^T B (M x N, K deep) whose B rows lie further apart than A^T's, on the threads: the own
 * kernel computes such a product as (B^T A)^T (core/gemm/gemm.c says why), but only when it
 * gets the whole product; cut into column panels (N > M is the cut), each panel has N < M and
 * ran the slow way (the MLP's 64 x 256 weight gradient at 2 threads, well below its 256 x 64
 * twin: experiments/core/RESULTS.md, "Two threads"). So the swap is made here, before the cut:
 * T = B^T A (N x M, alpha 1, beta 0: the chains' exact sums) over the threads, cut by rows, then
 * C = alpha T^T (+ beta C), the kernel's own last step -- the same bits as at 1 thread. Returns
 * 0 (nothing written) without memory for T. */
static int sgemm_tn_swapped(int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t lda,
                            const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  if ((uint64_t)M > SIZE_MAX / sizeof(float) / (uint64_t)N) return 0;
  size_t t_bytes = sizeof(float) * (size_t)M * (size_t)N;
  float *t = al_malloc(t_bytes);
  if (!t) return 0;
  sgemm(1, 0, N, M, K, 1.0f, B, ldb, A, lda, 0.0f, NULL, t, M);   /* (lda < ldb: no second swap) */
  al_gemm_f32_finish_transposed_(M, N, alpha, t, beta, C, ldc, C, ldc);
  al_free(t, t_bytes);
  return 1;
}

/* al_sgemm, and al_sgemm_bias when bias is set (see sgemm_one) */
static void sgemm(int transA, int transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t lda,
                  const float *B, int64_t ldb, float beta, const float *bias, float *C, int64_t ldc) {
  al_blas_init();
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {   /* C = beta*C (or the bias rows); BLAS implementations differ on K = 0 */
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++)
        C[i * ldc + j] = bias ? bias[j] : beta == 0 ? 0.0f : beta * C[i * ldc + j];
    return;
  }
  int own = use_own(M, N, K);
  int nt = want_threads > 1 ? want_threads : 1;
  int par = nt > 1 && !omp_in_parallel() && (double)M * (double)N * (double)K >= PAR_MIN_MACS;
  if (own && !par) { sgemm_one(1, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, bias, C, ldc); return; }
  if (own && par && !bias && alpha != 0 && al_gemm_tn_swaps_(transA, transB, M, N, lda, ldb) && use_own(N, M, K) &&
      sgemm_tn_swapped(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc))
    return;
  /* cut the longer of M, N (the operand every panel then reads in full is the smaller one).
   * OpenBLAS: PANEL rows, whatever the thread count (see the top). The own kernel: about
   * four panels a thread, whole 32-row tiles, so that a 192-row gy^T x splits evenly too --
   * except a weight gradient cut by rows (transA, M >= N: dW = gy^T x with K = batch x
   * tokens in the thousands): there every panel streams all of x (K x N) again, and with
   * four panels a thread that traffic held 2 threads to ~1.3x one thread; one panel a
   * thread (experiments/core/RESULTS.md) */
  int split_m = M >= N;
  int64_t len = split_m ? M : N, panel = PANEL;
  int per_thread = transA && split_m ? 1 : 4;
  if (own) panel = ((len + per_thread * nt - 1) / (per_thread * nt) + 31) / 32 * 32;
  int64_t parts = (len + panel - 1) / panel;
  if (!par || parts == 1) {
    /* no OpenMP region at all: entering one, even a 1-thread one, costs libgomp a futex
     * wake, and al_attention calls al_sgemm per (example, head) from inside its own region
     * (the cost measured: experiments/classifier/THROUGHPUT.md). The panels and their order
     * are the same. */
    for (int64_t p = 0; p < parts; p++)
      sgemm_panel(own, split_m, p * panel, panel, len, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, bias, C,
                  ldc);
    return;
  }
  #pragma omp parallel for num_threads(nt < parts ? nt : (int)parts) schedule(dynamic, 1)
  for (int64_t p = 0; p < parts; p++)
    sgemm_panel(own, split_m, p * panel, panel, len, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, bias, C,
                  ldc);
}

void al_sgemm(int transA, int transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t lda,
              const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  sgemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, NULL, C, ldc);
}

void al_sgemm_bias(int transA, int transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                   int64_t lda, const float *B, int64_t ldb, const float *bias, float *C, int64_t ldc) {
  sgemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, bias ? 1.0f : 0.0f, bias, C, ldc);   /* NULL: no bias */
}
