/* core/runtime/cpu.c -- CPU level detection and the choice of kernel variant (include/attnlab/cpu.h).
 *
 * The trampolines and the per-level tables are generated at build time (mk/gen_dispatch.sh
 * writes build/.../isa/dispatch.c from the kernel objects' symbols); that file calls
 * al_cpu_startup_level_() from a constructor and reports what it installed through
 * al_cpu_installed_(). A build without run-time dispatch (the fuzzers compile every core file
 * directly) has no such file: then the kernels are the ones its -march compiled, and this
 * file reports that level. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/cpu.h"

/* Defined by the generated dispatch file; absent (NULL) in a single-level build. */
extern int al_kdisp_install_(int level) __attribute__((weak));
extern const char *const al_kdisp_levels_built_ __attribute__((weak));

static int active = -1;
static char note[160];

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
static unsigned long long read_xcr0(void) {
  unsigned int lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((unsigned long long)hi << 32) | lo;
}

/* x86-64-v3 and -v4 as GCC's -march defines them, plus the OS saving the registers. */
static al_cpu_level detect(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return AL_CPU_GENERIC;
  int fma = (c >> 12) & 1, movbe = (c >> 22) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1,
      f16c = (c >> 29) & 1;
  if (!osxsave || !avx) return AL_CPU_GENERIC;
  unsigned long long xcr0 = read_xcr0();
  if ((xcr0 & 0x6) != 0x6) return AL_CPU_GENERIC;   /* XMM and YMM state */
  unsigned a7 = 0, b7 = 0, c7 = 0, d7 = 0;
  __cpuid_count(7, 0, a7, b7, c7, d7);
  unsigned ae = 0, be = 0, ce = 0, de = 0;
  __get_cpuid(0x80000001, &ae, &be, &ce, &de);
  int bmi1 = (b7 >> 3) & 1, avx2 = (b7 >> 5) & 1, bmi2 = (b7 >> 8) & 1, lzcnt = (ce >> 5) & 1;
  if (!(fma && movbe && f16c && bmi1 && avx2 && bmi2 && lzcnt)) return AL_CPU_GENERIC;
  int f = (b7 >> 16) & 1, dq = (b7 >> 17) & 1, cd = (b7 >> 28) & 1, bw = (b7 >> 30) & 1,
      vl = (b7 >> 31) & 1;
  if (f && dq && cd && bw && vl && (xcr0 & 0xe6) == 0xe6) return AL_CPU_AVX512;  /* + opmask, ZMM */
  return AL_CPU_AVX2;
}
#else
static al_cpu_level detect(void) { return AL_CPU_GENERIC; }
#endif

al_cpu_level al_cpu_detect(void) {
  static int cached = -1;
  if (cached < 0) cached = (int)detect();
  return (al_cpu_level)cached;
}

const char *al_cpu_level_name(al_cpu_level level) {
  switch (level) {
    case AL_CPU_GENERIC: return "generic";
    case AL_CPU_AVX2: return "avx2";
    case AL_CPU_AVX512: return "avx512";
  }
  return NULL;
}

static int parse_level(const char *s) {
  for (int l = AL_CPU_GENERIC; l <= AL_CPU_AVX512; l++)
    if (strcmp(s, al_cpu_level_name((al_cpu_level)l)) == 0) return l;
  return -1;
}

/* The level compiled by this file's own -march: what a single-level build runs. */
static al_cpu_level compiled_level(void) {
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
  return AL_CPU_AVX512;
#elif defined(__AVX2__) && defined(__FMA__)
  return AL_CPU_AVX2;
#else
  return AL_CPU_GENERIC;
#endif
}

const char *al_cpu_levels_built(void) {
  if (&al_kdisp_levels_built_ && al_kdisp_install_) return al_kdisp_levels_built_;
  return al_cpu_level_name(compiled_level());
}

/* Called once by the generated dispatch file's constructor: the level to install. A bad
 * ATTNLAB_CPU cannot be returned as an error from a constructor, so it is named on stderr
 * (once) and ignored; the note says so too. */
int al_cpu_startup_level_(void) {
  int best = (int)al_cpu_detect();
  const char *want = getenv("ATTNLAB_CPU");
  if (!want || !*want) {
    snprintf(note, sizeof note, "the best level this CPU supports");
    return best;
  }
  int w = parse_level(want);
  if (w < 0) {
    fprintf(stderr, "attnlab: ATTNLAB_CPU=%s is not a level (avx512, avx2 or generic); using %s\n", want,
            al_cpu_level_name((al_cpu_level)best));
    snprintf(note, sizeof note, "ATTNLAB_CPU=%.40s is not a level: ignored", want);
    return best;
  }
  if (w > best) {
    snprintf(note, sizeof note, "ATTNLAB_CPU=%s, but this CPU supports only %s", want,
             al_cpu_level_name((al_cpu_level)best));
    return best;
  }
  snprintf(note, sizeof note, "capped by ATTNLAB_CPU=%s (the CPU supports %s)", want,
           al_cpu_level_name((al_cpu_level)best));
  return w;
}

/* Called by the dispatch file after it installed a table (the best built level <= asked). */
void al_cpu_installed_(int level) { active = level; }

al_cpu_level al_cpu_active(void) {
  if (active >= 0) return (al_cpu_level)active;
  return compiled_level();   /* single-level build, or the dispatcher has not run */
}

const char *al_cpu_note(void) {
  if (!al_kdisp_install_) return "single-level build: the kernels are those its -march compiled";
  return note;
}

al_status al_cpu_set_level(const char *name) {
  int w = name ? parse_level(name) : -1;
  if (w < 0) return al_seterr(AL_EINVAL, "cpu level '%s': expected avx512, avx2 or generic", name ? name : "(null)");
  if (w > (int)al_cpu_detect())
    return al_seterr(AL_EINVAL, "cpu level %s: this CPU supports only %s", name,
                     al_cpu_level_name(al_cpu_detect()));
  if (!al_kdisp_install_) {
    if (w == (int)compiled_level()) return AL_OK;
    return al_seterr(AL_EINVAL, "cpu level %s: this build has only %s (no run-time dispatch)", name,
                     al_cpu_level_name(compiled_level()));
  }
  if (!strstr(al_kdisp_levels_built_, name))
    return al_seterr(AL_EINVAL, "cpu level %s: not built (this build has: %s)", name, al_kdisp_levels_built_);
  active = al_kdisp_install_(w);
  snprintf(note, sizeof note, "set to %s by al_cpu_set_level", name);
  return AL_OK;
}
