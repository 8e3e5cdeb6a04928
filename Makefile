# attnlab -- build, test and check.
#   make            bin/attnlab (REPL/script host) + lib/attnlab/core.so + lib/libattnlab.a
#   make test       install missing Debian packages (as root), build, run every test
#   make test-levels     the kernel tests again at each CPU level and OpenBLAS kernel (CI)
#   make asan-test  the same tests built with AddressSanitizer + UBSan
#   make valgrind-test   the C tests under valgrind
#   make fuzz       build the libFuzzer targets (clang)
#   make demo       the README's first command: a real normalizer comparison
# Variables: ARCH (the baseline every file but the kernels is built for), ISA_LEVELS, OPT, BUILD.
#
# One build runs on every x86-64 (include/attnlab/cpu.h): the kernel files are compiled once
# per level of ISA_LEVELS, their public functions renamed F -> F_<level> with objcopy, and a
# generated dispatch file (mk/gen_dispatch.sh) puts a trampoline F in front of them that
# jumps to the level chosen when the library loads (cpuid, capped by ATTNLAB_CPU).

CC      ?= gcc
ARCH    ?= -march=x86-64 -mtune=generic
OPT     ?= -O3
BUILD   ?= build/release
ISA_LEVELS ?= avx512 avx2 generic
# NO_TRAP_MATH below AVX-512: under the default (traps are observable) GCC will not
# if-convert a loop whose body has a float comparison or ?: unless it has mask registers, so
# at avx2 and generic the elementwise loops (GELU, the unary backwards, ...) stayed scalar
# ("control flow in loop"). Nothing here enables FP traps or reads the exception flags, and
# the flag changes no value: the same operations, done in vector lanes (behaviour_hash and
# the fixed-seed records are bitwise the same; experiments/core/RESULTS.md).
ISA_FLAGS_avx512  = -march=x86-64-v4 -mtune=generic
NO_TRAP_MATH      = -fno-trapping-math
ISA_FLAGS_avx2    = -march=x86-64-v3 -mtune=generic -Wno-psabi $(NO_TRAP_MATH)
ISA_FLAGS_generic = -march=x86-64 -mtune=generic -Wno-psabi $(NO_TRAP_MATH)
PKGS     = lua5.4 libcjson zlib
DEPS_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
DEPS_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
WARN     = -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -Wshadow=local
# everything but -march: the kernel variants add their own. -fno-math-errno: nothing here
# reads errno after a math call, and with it set GCC keeps every loop that calls sqrtf
# scalar (a branch to libm for negative inputs); sqrt is correctly rounded either way, so
# results do not change.
BASE_CFLAGS := $(CFLAGS) -std=c11 -D_GNU_SOURCE $(OPT) -g -fPIC -fopenmp -fno-math-errno $(WARN) \
           -Iinclude $(DEPS_CFLAGS) $(SAN)
CFLAGS  := $(BASE_CFLAGS) $(ARCH)
# For the kernel variants and the C tests (which inline the kernels' vector helpers): no
# variable tracking. With -g at -O1 and above GCC tracks where each local lives, for gdb only;
# it never changes the code (objdump -d of every object and of core.so is the same with and
# without it). On the kernels' long always-inline functions at the avx2 and generic levels,
# where each 16-lane vector is split into halves, it exceeds its size limit, throws the work
# away and compiles the function again ("variable tracking size limit exceeded"): under the
# sanitizers entmax_bisect_fwd.c took 58 s instead of 23 and test_norm_math.c 21 s instead of
# 6. Line tables, and so backtraces and sanitizer reports, are unaffected. Only for compilers
# that know the option (clang does not).
NO_VTA  := $(shell $(CC) -fno-var-tracking-assignments -E -x c /dev/null >/dev/null 2>&1 && echo -fno-var-tracking-assignments)
LDLIBS   = $(DEPS_LIBS) -lreadline -ldl -lm -fopenmp $(SAN)

CORE_SRC  := $(sort $(wildcard core/*.c core/*/*.c))
# the hot kernels, compiled once per CPU level (their objects under $(ISA_DIR)/<level>/ mirror
# core/'s subfolders); the rest of core/ is built for ARCH, the normalizer table too: it is
# data, and it must exist once
KERNEL_SRC := $(filter-out core/norm/registry.c,$(filter core/norm/% core/mix/% core/ops/% core/autograd/optim.c \
                core/gemm/gemm.c,$(CORE_SRC)))
PLAIN_SRC := $(filter-out $(KERNEL_SRC),$(CORE_SRC))
BIND_SRC  := $(sort $(wildcard lua/bind/*.c))
TEST_SRC  := $(sort $(wildcard tests/c/test_*.c))
ISA_DIR   := $(BUILD)/isa
KERNEL_OBJ := $(foreach l,$(ISA_LEVELS),$(KERNEL_SRC:core/%.c=$(ISA_DIR)/$(l)/%-$(l).o))
CORE_OBJ  := $(PLAIN_SRC:%.c=$(BUILD)/%.o) $(KERNEL_OBJ) $(ISA_DIR)/dispatch.o
# objects mirror core/'s folders, but ar keeps only their basenames: keep those unique
ifneq ($(words $(notdir $(CORE_OBJ))),$(words $(sort $(notdir $(CORE_OBJ)))))
$(error two files under core/ share a basename; ar would keep one of them)
endif
BIND_OBJ  := $(BIND_SRC:%.c=$(BUILD)/%.o)
HOST_SRC  := $(sort $(wildcard lua/host/*.c))
HOST_OBJ  := $(HOST_SRC:%.c=$(BUILD)/%.o)
TEST_BIN  := $(TEST_SRC:tests/c/%.c=$(BUILD)/tests/%)
HEADERS   := $(wildcard include/*.h include/attnlab/*.h lua/bind/*.h core/*.h core/*/*.h tests/c/*.h)

# What this build tree's objects were compiled and linked with: $(BUILD)/flags.txt is rewritten
# (at parse time) whenever that line changes -- make CFLAGS=..., OPT=..., ARCH=..., ISA_LEVELS=...
# -- and every object and link depends on it, so a changed flag rebuilds the tree instead of
# linking objects built with the old flags next to new ones. An unchanged line leaves the file
# (and its time stamp) alone, and so does a dry run (make -n).
BUILD_LINE := $(CC) | $(BASE_CFLAGS) $(NO_VTA) | $(ARCH) | $(ISA_LEVELS) | $(foreach l,$(ISA_LEVELS),$(ISA_FLAGS_$(l))) | $(LDLIBS)
FLAGS_STAMP := $(BUILD)/flags.txt
ifneq ($(BUILD_LINE),$(file <$(FLAGS_STAMP)))
ifeq ($(findstring n,$(firstword -$(MAKEFLAGS))),)
$(shell mkdir -p $(BUILD))
$(file >$(FLAGS_STAMP),$(BUILD_LINE))
endif
endif
BUILD_DEPS := $(HEADERS) $(FLAGS_STAMP)

.PHONY: all deps test test-levels asan-test valgrind-test fuzz demo clean bench
all: bin/attnlab lib/attnlab/core.so lib/libattnlab.a

deps:
	@sh scripts/install_deps.sh

$(BUILD)/%.o: %.c $(BUILD_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# the host's own header (lua/host/host.h) concerns only the host's files
$(HOST_OBJ): $(wildcard lua/host/*.h)

# ---- kernel variants and their dispatch ------------------------------------------------
# raw object of one level: the file as compiled for that level, public names unchanged
define isa_level_rules
$(ISA_DIR)/$(1)/%.raw.o: core/%.c $(BUILD_DEPS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(BASE_CFLAGS) $$(ISA_FLAGS_$(1)) $$(NO_VTA) -c $$< -o $$@
$(ISA_DIR)/$(1)/syms.txt: $(KERNEL_SRC:core/%.c=$(ISA_DIR)/$(1)/%.raw.o)
	@nm -g --defined-only -P $$^ | awk '$$$$2 == "T" {print $$$$1}' | sort -u > $$@
$(ISA_DIR)/$(1)/%-$(1).o: $(ISA_DIR)/$(1)/%.raw.o $(ISA_DIR)/syms.txt
	@awk '{print $$$$1, $$$$1 "_$(1)"}' $(ISA_DIR)/syms.txt > $$@.map
	objcopy --redefine-syms=$$@.map $$< $$@
endef
$(foreach l,$(ISA_LEVELS),$(eval $(call isa_level_rules,$(l))))

# the kernel symbols: every level must define the same ones
$(ISA_DIR)/syms.txt: $(foreach l,$(ISA_LEVELS),$(ISA_DIR)/$(l)/syms.txt)
	@for f in $^; do cmp -s $$f $(ISA_DIR)/generic/syms.txt || \
	  { echo "kernel levels define different functions: $$f vs $(ISA_DIR)/generic/syms.txt" >&2; exit 1; }; done
	@cmp -s $(ISA_DIR)/generic/syms.txt $@ 2>/dev/null || cp $(ISA_DIR)/generic/syms.txt $@

$(ISA_DIR)/dispatch.c: $(ISA_DIR)/syms.txt mk/gen_dispatch.sh
	sh mk/gen_dispatch.sh "$(ISA_LEVELS)" < $< > $@.tmp && mv -f $@.tmp $@
$(ISA_DIR)/dispatch.o: $(ISA_DIR)/dispatch.c $(FLAGS_STAMP)
	$(CC) $(BASE_CFLAGS) $(ARCH) -Wno-pedantic -c $< -o $@

.SECONDARY: $(foreach l,$(ISA_LEVELS),$(KERNEL_SRC:core/%.c=$(ISA_DIR)/$(l)/%.raw.o))

$(BUILD)/libattnlab.a: $(CORE_OBJ)
	@rm -f $@; ar rcs $@ $^

$(BUILD)/attnlab: $(HOST_OBJ) $(BIND_OBJ) $(BUILD)/libattnlab.a $(FLAGS_STAMP)
	$(CC) -o $@ $(HOST_OBJ) $(BIND_OBJ) $(BUILD)/libattnlab.a $(LDLIBS) -Wl,-E

$(BUILD)/core.so: $(BIND_OBJ) $(BUILD)/libattnlab.a $(FLAGS_STAMP)
	$(CC) -shared -o $@ $(BIND_OBJ) $(BUILD)/libattnlab.a $(filter-out -llua5.4,$(LDLIBS))

$(BUILD)/tests/%: tests/c/%.c $(BUILD)/libattnlab.a $(BUILD_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(NO_VTA) -Itests/c -o $@ $< $(BUILD)/libattnlab.a $(LDLIBS)

# copy then rename: a running bin/attnlab ("text file busy") is left alone
bin/attnlab: $(BUILD)/attnlab
	@mkdir -p bin; cp $< $@.tmp && mv -f $@.tmp $@
lib/attnlab/core.so: $(BUILD)/core.so
	@mkdir -p lib/attnlab; cp $< $@.tmp && mv -f $@.tmp $@
lib/libattnlab.a: $(BUILD)/libattnlab.a
	@mkdir -p lib; cp $< $@.tmp && mv -f $@.tmp $@

tests: $(TEST_BIN)

# The targets that build before they run (test, test-levels, asan-test, valgrind-test, demo)
# compile as many files at once as the machine has cores unless the caller chose a job count
# (make -jN, -j1 included): a newcomer's first `make test` would otherwise build one file at a
# time (a fresh clone on 2 cores: 165 s against 86 s). Deferred (=): GNU make 4.3 puts -jN in MAKEFLAGS only
# once the recipes run, not while the makefile is read.
NPROC := $(shell nproc 2>/dev/null || echo 1)
AUTO_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(NPROC))

test: deps
	@$(MAKE) $(AUTO_JOBS) --no-print-directory all tests
	@tests/run.sh $(BUILD)/tests

# The C tests compiled for each level too (the header-only vector helpers they test directly
# are then that level's), run by tests/levels.sh with the kernels dispatched to the same level.
define level_test_rules
$(BUILD)/tests-$(1)/%: tests/c/%.c $(BUILD)/libattnlab.a $(BUILD_DEPS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(BASE_CFLAGS) $$(ISA_FLAGS_$(1)) $$(NO_VTA) -Itests/c -o $$@ $$< $(BUILD)/libattnlab.a $$(LDLIBS)
endef
$(foreach l,$(ISA_LEVELS),$(eval $(call level_test_rules,$(l))))
LEVEL_TEST_BIN := $(foreach l,$(ISA_LEVELS),$(TEST_SRC:tests/c/%.c=$(BUILD)/tests-$(l)/%))

# Kernel, determinism and model tests at every CPU level this machine runs, and under
# OpenBLAS's own kernel choice and a pinned OPENBLAS_CORETYPE=Haswell (tests/levels.sh).
test-levels: deps
	@$(MAKE) $(AUTO_JOBS) --no-print-directory all tests $(LEVEL_TEST_BIN)
	@tests/levels.sh $(BUILD)

# Sanitizers: a separate build tree; the Lua tests run in the sanitized host.
ASAN_BUILD = build/asan
asan-test: deps
	@$(MAKE) $(AUTO_JOBS) --no-print-directory BUILD=$(ASAN_BUILD) OPT=-O1 \
	  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  $(ASAN_BUILD)/attnlab $(TEST_SRC:tests/c/%.c=$(ASAN_BUILD)/tests/%)
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 LSAN_OPTIONS=suppressions=tests/lsan.supp:print_suppressions=0 \
	  ATTNLAB_SANITIZED=1 ATTNLAB_HOST=$(ASAN_BUILD)/attnlab tests/run.sh $(ASAN_BUILD)/tests

# valgrind does not know AVX-512: the baseline for x86-64-v2, the kernels for avx2 and generic
# only, and tests/valgrind.sh caps them at ATTNLAB_CPU=avx2.
VG_BUILD = build/valgrind
valgrind-test: deps
	@$(MAKE) $(AUTO_JOBS) --no-print-directory BUILD=$(VG_BUILD) OPT=-O1 ARCH=-march=x86-64-v2 ISA_LEVELS="avx2 generic" \
	  $(VG_BUILD)/attnlab $(TEST_SRC:tests/c/%.c=$(VG_BUILD)/tests/%)
	@ATTNLAB_VALGRIND=1 tests/valgrind.sh $(VG_BUILD)


FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
fuzz: $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
build/fuzz/%: tests/fuzz/%.c $(CORE_SRC) $(HEADERS)
	@mkdir -p build/fuzz
	clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
	  $(DEPS_CFLAGS) -o $@ $< $(CORE_SRC) $(DEPS_LIBS) -ldl -lm -fopenmp

# C micro-benchmarks (scripts/bench/*.c): build/bench/<name>
BENCH_SRC := $(wildcard scripts/bench/*.c)
bench: $(BENCH_SRC:scripts/bench/%.c=$(BUILD)/bench/%)
$(BUILD)/bench/%: scripts/bench/%.c $(BUILD)/libattnlab.a $(BUILD_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libattnlab.a $(LDLIBS)

demo: deps
	@$(MAKE) $(AUTO_JOBS) --no-print-directory all
	bin/attnlab scripts/demo.lua

clean:
	rm -rf build bin lib

# make install / uninstall / shared / install-lua / embed-test, attnlab.pc: see mk/install.mk
include mk/install.mk
