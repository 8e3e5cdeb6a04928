# attnlab -- build, test and check.
#   make            bin/attnlab (REPL/script host) + lib/attnlab/core.so + lib/libattnlab.a
#   make test       install missing Debian packages (as root), build, run every test
#   make asan-test  the same tests built with AddressSanitizer + UBSan
#   make valgrind-test   the C tests under valgrind (portable -march, no AVX-512)
#   make gemm-levels  tests/c/test_gemm.c with core/gemm.c built at each ISA level
#                   (AVX-512, AVX2+FMA, generic); the FMA levels must agree bitwise
#   make fuzz       build the libFuzzer targets (clang)
#   make demo       the README's first command: a real normalizer comparison
# Variables: ARCH (default -march=native), OPT, BUILD.

CC      ?= gcc
ARCH    ?= -march=native
OPT     ?= -O3
BUILD   ?= build/release
PKGS     = lua5.4 libcjson zlib
DEPS_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
DEPS_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
WARN     = -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -Wshadow=local
CFLAGS  += -std=c11 -D_GNU_SOURCE $(OPT) $(ARCH) -g -fPIC -fopenmp $(WARN) \
           -Iinclude $(DEPS_CFLAGS) $(SAN)
LDLIBS   = $(DEPS_LIBS) -lreadline -ldl -lm -fopenmp $(SAN)

CORE_SRC  := $(sort $(wildcard core/*.c))
BIND_SRC  := $(sort $(wildcard lua/bind/*.c))
TEST_SRC  := $(sort $(wildcard tests/c/test_*.c))
CORE_OBJ  := $(CORE_SRC:%.c=$(BUILD)/%.o)
BIND_OBJ  := $(BIND_SRC:%.c=$(BUILD)/%.o)
HOST_OBJ  := $(BUILD)/lua/host/main.o
TEST_BIN  := $(TEST_SRC:tests/c/%.c=$(BUILD)/tests/%)
HEADERS   := $(wildcard include/*.h include/attnlab/*.h lua/bind/*.h core/*.h tests/c/*.h)

.PHONY: all deps test asan-test valgrind-test fuzz demo clean bench gemm-levels
all: bin/attnlab lib/attnlab/core.so lib/libattnlab.a

deps:
	@sh scripts/install_deps.sh

$(BUILD)/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libattnlab.a: $(CORE_OBJ)
	@rm -f $@; ar rcs $@ $^

$(BUILD)/attnlab: $(HOST_OBJ) $(BIND_OBJ) $(BUILD)/libattnlab.a
	$(CC) -o $@ $(HOST_OBJ) $(BIND_OBJ) $(BUILD)/libattnlab.a $(LDLIBS) -Wl,-E

$(BUILD)/core.so: $(BIND_OBJ) $(BUILD)/libattnlab.a
	$(CC) -shared -o $@ $(BIND_OBJ) $(BUILD)/libattnlab.a $(filter-out -llua5.4,$(LDLIBS))

$(BUILD)/tests/%: tests/c/%.c $(BUILD)/libattnlab.a $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/c -o $@ $< $(BUILD)/libattnlab.a $(LDLIBS)

# copy then rename: a running bin/attnlab ("text file busy") is left alone
bin/attnlab: $(BUILD)/attnlab
	@mkdir -p bin; cp $< $@.tmp && mv -f $@.tmp $@
lib/attnlab/core.so: $(BUILD)/core.so
	@mkdir -p lib/attnlab; cp $< $@.tmp && mv -f $@.tmp $@
lib/libattnlab.a: $(BUILD)/libattnlab.a
	@mkdir -p lib; cp $< $@.tmp && mv -f $@.tmp $@

tests: $(TEST_BIN)

test: deps
	@$(MAKE) --no-print-directory all tests
	@tests/run.sh $(BUILD)/tests

# Sanitizers: a separate build tree; the Lua tests run in the sanitized host.
ASAN_BUILD = build/asan
asan-test: deps
	@$(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) OPT=-O1 \
	  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  $(ASAN_BUILD)/attnlab $(TEST_SRC:tests/c/%.c=$(ASAN_BUILD)/tests/%)
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 LSAN_OPTIONS=suppressions=tests/lsan.supp:print_suppressions=0 \
	  ATTNLAB_SANITIZED=1 ATTNLAB_HOST=$(ASAN_BUILD)/attnlab tests/run.sh $(ASAN_BUILD)/tests

# valgrind does not know AVX-512: build for a portable x86-64 target.
VG_BUILD = build/valgrind
valgrind-test: deps
	@$(MAKE) --no-print-directory BUILD=$(VG_BUILD) OPT=-O1 ARCH=-march=x86-64-v2 \
	  $(VG_BUILD)/attnlab $(TEST_SRC:tests/c/%.c=$(VG_BUILD)/tests/%)
	@ATTNLAB_VALGRIND=1 tests/valgrind.sh $(VG_BUILD)

# The default build is -march=native, which exercises one of gemm.c's three code paths.
# This builds the test with core/gemm.c at each level (linked before the library, so its
# al_gemm_f32 is the one al_sgemm calls too), runs it, and compares the digests.
GEMM_LEVELS = x86-64-v4 x86-64-v3 x86-64
gemm-levels: $(BUILD)/libattnlab.a
	@mkdir -p $(BUILD)/gemm-levels
	@for m in $(GEMM_LEVELS); do \
	  $(CC) $(filter-out $(ARCH),$(CFLAGS)) -march=$$m -Itests/c -o $(BUILD)/gemm-levels/test_gemm_$$m \
	    tests/c/test_gemm.c core/gemm.c $(BUILD)/libattnlab.a $(LDLIBS) || exit 1; done
	@sh tests/gemm_levels.sh $(BUILD)/gemm-levels $(GEMM_LEVELS)

FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
fuzz: $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
build/fuzz/%: tests/fuzz/%.c $(CORE_SRC) $(HEADERS)
	@mkdir -p build/fuzz
	clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
	  $(DEPS_CFLAGS) -o $@ $< $(CORE_SRC) $(DEPS_LIBS) -ldl -lm -fopenmp

# C micro-benchmarks (scripts/bench/*.c): build/bench/<name>
BENCH_SRC := $(wildcard scripts/bench/*.c)
bench: $(BENCH_SRC:scripts/bench/%.c=$(BUILD)/bench/%)
$(BUILD)/bench/%: scripts/bench/%.c $(BUILD)/libattnlab.a $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libattnlab.a $(LDLIBS)

demo: deps all
	bin/attnlab scripts/demo.lua

clean:
	rm -rf build bin lib
