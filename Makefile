# moonflow — a plain Makefile (see doc/design.md "Build").
#   make          build build/moonflow
#   make run      build and start the prompt
#   make test     build and run every cmocka and Lua test
#   make check    the same tests under AddressSanitizer + UBSan (build/asan)
#   make fuzz     API fuzzer + libFuzzer file-format fuzzers (FUZZ_CALLS, FUZZ_SECONDS)
#   make bench    benchmarks, side by side with PyTorch when it is installed
#   make MODE=debug   an -O0 -g build in build/debug (MODE=asan: build/asan)
#                 (CORES="Haswell auto": the conv table under both OPENBLAS_CORETYPE)
#   make interop  exported ONNX models run in onnxruntime (npm), outputs compared
# Missing Debian packages are installed by tools/configure.sh (as root) or
# named in one apt-get line.

CC ?= cc
WARN := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wwrite-strings -Wdouble-promotion -Wformat=2 -Werror
# The build mode is named, not guessed from the folder: MODE=release (the
# default), asan (make check) or debug (-O0 -g); BUILD defaults to build/$(MODE).
# -fvect-cost-model is GCC's; clang (make CC=clang) does without it.
MODE ?= release
VECT := $(if $(findstring clang,$(CC)),,-fvect-cost-model=dynamic)
FLAGS_release := -O2 $(VECT) -march=native -g
FLAGS_asan := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
              -fno-omit-frame-pointer -DMF_ALLOC_NO_CACHE
FLAGS_debug := -O0 -g
BUILD ?= build/$(MODE)
MODE_FLAGS = $(FLAGS_$(MODE))

# make clean reads no configuration (configure may install packages)
ifeq ($(filter clean,$(MAKECMDGOALS)),)
include build/config.mk
endif

CFLAGS_ALL = -std=c11 $(WARN) $(MODE_FLAGS) -MMD -MP -I. $(DEP_CFLAGS)
LDFLAGS_ALL = $(MODE_FLAGS) $(DEP_LIBS)
# cmocka is linked into the tests only
BIN_LDFLAGS = $(MODE_FLAGS) $(filter-out -lcmocka,$(DEP_LIBS)) $(KERNEL_LIBS)

ENGINE_SRC := $(wildcard core/*.c core/*/*.c present/*.c autodiff/*.c eager/*.c graph/*.c distributed/*.c train/*.c mode/*.c)
REPL_SRC := $(wildcard repl/*.c)
# The Jupyter kernel (kernel/) when configure found libzmq and libcrypto;
# otherwise kernel/unavailable.c, whose --kernel names what is missing.
ifdef KERNEL_LIBS
REPL_SRC += $(filter-out kernel/unavailable.c,$(wildcard kernel/*.c))
else
REPL_SRC += kernel/unavailable.c
endif
UNIT_SRC := $(wildcard tests/unit/test_*.c)
LUA_TESTS := $(wildcard tests/lua/test_*.lua)

ENGINE_OBJ := $(ENGINE_SRC:%.c=$(BUILD)/%.o)
REPL_OBJ := $(REPL_SRC:%.c=$(BUILD)/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
LIB := $(BUILD)/libmoonflow.a
BIN := $(BUILD)/moonflow

.PHONY: all run test check bench clean unit-tests test-deps interop
# build/moonflow is the release binary; other BUILD dirs (build/asan, a
# developer's own) leave it alone.
ifeq ($(BUILD),build/release)
all: build/moonflow
else
all: $(BIN)
endif

build/config.mk: tools/configure.sh
	@mkdir -p build
	@sh tools/configure.sh > $@.tmp && mv $@.tmp $@

build/moonflow: $(BIN)
	@cp $(BIN) $@

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC $<"
	@$(CC) $(CFLAGS_ALL) -c $< -o $@

# The fused optimizer kernels take square roots of values >= 0; without
# errno to set, GCC vectorizes sqrt (Adam's step: 5.4 ms -> memory-bound).
$(BUILD)/core/ops/apply.o: CFLAGS_ALL += -fno-math-errno
# The same for the unary ops' sqrt, rsqrt, floor, ceil and round (vsqrtps,
# vroundps): no errno to set, so no libm call per element; without trapping
# math GCC also vectorises floor, ceil (vroundps) and sign's selects.
$(BUILD)/core/ops/unary.o: CFLAGS_ALL += -fno-math-errno -fno-trapping-math
# The conv kernels' multiply-adds fuse into FMAs (-std=c11 turns contraction off):
# one rounding instead of two, and twice the throughput. -Wno-psabi: the sanitizer
# build has no -march=native, and GCC then warns that its always-inline 8-float
# helpers would return vectors by another ABI (they are never called as functions).
$(BUILD)/core/ops/conv_direct.o $(BUILD)/core/ops/winograd.o: CFLAGS_ALL += -ffp-contract=fast \
    -Wno-psabi
# The fused LSTM cell's exp/tanh polynomials (fast_mathf.h): multiply-adds as FMAs too,
# and softmax's exp rows (1.4x faster at rows of 64).
$(BUILD)/core/ops/lstm_cell.o $(BUILD)/core/ops/softmax.o: CFLAGS_ALL += -ffp-contract=fast
# Attention's exp loops (fast_mathf.h) pick 0 for masked scores: both sides
# computed (-fno-trapping-math) so they vectorise; their multiply-adds, and
# those of the tile products (attention_tile_kernels.h, below), are FMAs.
$(BUILD)/core/ops/attention.o $(BUILD)/core/ops/attention_grad.o: CFLAGS_ALL += \
    -fno-trapping-math -ffp-contract=fast
$(BUILD)/core/ops/attention_tile.o: CFLAGS_ALL += -Wno-psabi
# The float32 GEMM's tiles (core/gemm_f32_kernels.h), once per instruction
# set (gemm_f32.c picks a table at run time): their multiply-adds are FMAs,
# in every tile: GCC's Zen tuning (avoid-fma-max-bits) leaves a loop of a
# single FMA chain (the 1 x 8 edge tile) as multiply then add, which would
# round its elements differently from the other tiles'. -Wno-psabi as for
# the conv kernels (gemm_f32.c's 8 x 8 transpose too).
GEMM_TILE_FLAGS := -ffp-contract=fast -Wno-psabi \
    $(if $(findstring clang,$(CC)),,--param=avoid-fma-max-bits=0)
$(BUILD)/core/gemm_f32_avx512.o: CFLAGS_ALL += -march=x86-64-v4 -mprefer-vector-width=512 \
    $(GEMM_TILE_FLAGS)
$(BUILD)/core/gemm_f32_avx2.o: CFLAGS_ALL += -march=haswell $(GEMM_TILE_FLAGS)
$(BUILD)/core/gemm_f32_generic.o: CFLAGS_ALL += $(GEMM_TILE_FLAGS)
$(BUILD)/core/gemm_f32.o: CFLAGS_ALL += -Wno-psabi
# The attention tile products' register blocks (attention_tile_kernels.h)
# likewise, per instruction set, with the same flags: every element one FMA
# chain on each path.
$(BUILD)/core/ops/attention_tile_avx512.o: CFLAGS_ALL += -march=x86-64-v4 \
    -mprefer-vector-width=512 $(GEMM_TILE_FLAGS)
$(BUILD)/core/ops/attention_tile_avx2.o: CFLAGS_ALL += -march=haswell $(GEMM_TILE_FLAGS)
$(BUILD)/core/ops/attention_tile_generic.o: CFLAGS_ALL += $(GEMM_TILE_FLAGS)

# The unary kernels' floor and ceil: with -fno-trapping-math GCC vectorises
# floorf/ceilf (vroundps) instead of one vroundss per element.
$(BUILD)/core/ops/unary.o: CFLAGS_ALL += -fno-trapping-math

# vecmath.h's kernels, once per instruction set (vecmath.c picks one at run
# time); -fno-trapping-math lets GCC compute both sides of a choice, so the
# loops vectorise. Contraction stays off: the kernels' FMAs are explicit, and
# every path gives the same bits.
VECMATH_FLAGS := -fno-trapping-math -fno-math-errno
$(BUILD)/core/ops/vecmath_avx512.o: CFLAGS_ALL += -march=x86-64-v4 -mprefer-vector-width=512 \
    $(VECMATH_FLAGS)
$(BUILD)/core/ops/vecmath_avx2.o: CFLAGS_ALL += -march=haswell $(VECMATH_FLAGS)
$(BUILD)/core/ops/vecmath_scalar.o: CFLAGS_ALL += -fno-tree-vectorize $(VECMATH_FLAGS)

# The Lua library (doc/design.md "The Lua library above the face"):
# lib/*.lua in load order, embedded by repl/lmf_lib.c as one entry per file.
LIB_LUA := lib/util.lua lib/initializers.lua lib/activations.lua lib/composed_ops.lua \
           lib/grad.lua lib/forward.lua lib/vmap.lua lib/layers.lua lib/layers_norm.lua lib/layers_rnn.lua lib/layers_attention.lua \
           lib/model.lua lib/losses.lua \
           lib/metrics.lua lib/fit.lua lib/schedules.lua lib/einsum.lua lib/generate.lua lib/dataset.lua lib/datasets.lua \
           lib/tensorboard.lua lib/timeit.lua lib/layers_help.lua lib/pictures.lua
$(BUILD)/gen/lib_lua.inc: $(LIB_LUA) tools/embed_lua.sh Makefile
	@mkdir -p $(dir $@)
	@echo "  GEN $@"
	@for f in $(LIB_LUA); do \
	    printf '{"@%s", (const char *const[]){\n' $$f; \
	    sh tools/embed_lua.sh $$f || exit 1; \
	    printf 'NULL}},\n'; \
	done > $@.tmp && mv $@.tmp $@

$(BUILD)/repl/lmf_lib.o: $(BUILD)/gen/lib_lua.inc
$(BUILD)/repl/lmf_lib.o: CFLAGS_ALL += -I$(BUILD)/gen

# The help texts (doc/help/README.md): one file per topic, in the order
# help() lists the topics, made into C for repl/help.c.
HELP_TOPICS := compat creation random math compare reduce linalg shape indexing clipping printing \
               autodiff variables graph nn profiling data training layers interchange shell \
               concepts
$(BUILD)/gen/help_doc.inc: $(wildcard doc/help/*.txt) tools/embed_help.sh Makefile
	@mkdir -p $(dir $@)
	@echo "  GEN $@"
	@sh tools/embed_help.sh doc/help $(HELP_TOPICS) > $@.tmp && mv $@.tmp $@

$(BUILD)/repl/help.o: $(BUILD)/gen/help_doc.inc
$(BUILD)/repl/help.o: CFLAGS_ALL += -I$(BUILD)/gen

$(LIB): $(ENGINE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(REPL_OBJ) $(LIB)
	$(CC) $(REPL_OBJ) $(LIB) $(BIN_LDFLAGS) -o $@

$(BUILD)/tests/%: tests/unit/%.c tests/unit/testutil.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $< $(LIB) $(LDFLAGS_ALL) -o $@

unit-tests: $(UNIT_BIN) $(BIN)

# make module: build/moonflow.so, for require "moonflow" from a stock Lua 5.4.
# The engine and the bindings are compiled again with -fPIC in PIC_BUILD (the
# executable's objects are not position-independent); Lua itself is the host
# interpreter's, so neither liblua nor the shell's main and allocator go in,
# nor the Jupyter kernel (kernel/: a mode of the moonflow program only).
PIC_BUILD := build/pic
PIC_FLAGS := $(FLAGS_release) -fPIC -fno-semantic-interposition
MODULE_OBJ = $(filter-out $(BUILD)/repl/main.o $(BUILD)/repl/lua_alloc.o $(BUILD)/kernel/%,\
                          $(REPL_OBJ))
MODULE_LIBS = $(filter-out -lcmocka -l:liblua5.4.a,$(DEP_LIBS))
.PHONY: module install
module:
	@$(MAKE) --no-print-directory BUILD=$(PIC_BUILD) MODE=release MODE_FLAGS="$(PIC_FLAGS)" \
	    $(PIC_BUILD)/moonflow.so
	@cp $(PIC_BUILD)/moonflow.so build/moonflow.so

$(BUILD)/moonflow.so: $(MODULE_OBJ) $(LIB)
	$(CC) -shared $(MODULE_OBJ) $(LIB) $(MODE_FLAGS) $(MODULE_LIBS) -o $@

# make install PREFIX=/usr/local (DESTDIR too): the shell, the Lua module
# (LUA_CMOD, where a stock lua5.4 looks), the help texts and the man page.
PREFIX ?= /usr/local
LUA_CMOD ?= $(PREFIX)/lib/lua/5.4
install: all module
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(LUA_CMOD) \
	    $(DESTDIR)$(PREFIX)/share/moonflow/help $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 build/moonflow $(DESTDIR)$(PREFIX)/bin/moonflow
	install -m 755 build/moonflow.so $(DESTDIR)$(LUA_CMOD)/moonflow.so
	install -m 644 doc/help/*.txt $(DESTDIR)$(PREFIX)/share/moonflow/help
	install -m 644 doc/moonflow.1 $(DESTDIR)$(PREFIX)/share/man/man1/moonflow.1

test: all

run: all
	./build/moonflow

test: unit-tests test-deps module
	@OPENBLAS_NUM_THREADS=1 sh tests/run.sh $(BUILD)

# The independent readers the interchange tests run (python3-onnx,
# python3-protobuf, python3-crcmod), installed like the build's dependencies.
test-deps:
	@sh tools/test_deps.sh

# make interop: exported ONNX models run in onnxruntime (npm's
# onnxruntime-node, pinned) with outputs equal to moonflow's.
interop: all
	@sh tools/test_deps.sh interop
	@sh tests/interop/run.sh $(BUILD)

# The kernel's Lua side (display, plots, progress in a notebook), embedded
# as lib/'s files are.
$(BUILD)/gen/kernel_lua.inc: kernel/display.lua tools/embed_lua.sh
	@mkdir -p $(dir $@)
	@echo "  GEN $@"
	@sh tools/embed_lua.sh kernel/display.lua > $@.tmp && mv $@.tmp $@
$(BUILD)/kernel/%.o: CFLAGS_ALL += $(KERNEL_CFLAGS) -I$(BUILD)/gen
$(BUILD)/kernel/display.o: $(BUILD)/gen/kernel_lua.inc
$(BUILD)/kernel/unavailable.o: CFLAGS_ALL += -DMF_KERNEL_MISSING='"$(KERNEL_MISSING)"'

# CHECK_BUILD: the sanitizer build directory (built with MODE=asan).
CHECK_BUILD ?= build/asan
check: test-deps module
	@$(MAKE) --no-print-directory BUILD=$(CHECK_BUILD) MODE=asan unit-tests
	@ASAN_OPTIONS=detect_leaks=1 OPENBLAS_NUM_THREADS=1 sh tests/run.sh $(CHECK_BUILD)

$(BUILD)/bench/%: bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $< $(LIB) $(LDFLAGS_ALL) -o $@

bench: all $(BUILD)/bench/bench_matmul $(BUILD)/bench/attention_tiles
	@sh tools/test_deps.sh bench
	@CORES="$(CORES)" sh bench/run.sh $(BUILD)

clean:
	rm -rf build

-include $(ENGINE_OBJ:.o=.d) $(REPL_OBJ:.o=.d) $(UNIT_BIN:=.d)

# make fuzz: the API fuzzer (tests/fuzz/api_fuzz.lua, FUZZ_CALLS calls) under
# the ASan moonflow, then each file-format fuzzer (libFuzzer, clang; engine
# objects in FUZZ_BUILD) for FUZZ_SECONDS. Crashes land in FUZZ_BUILD/crashes;
# keep them in tests/fuzz/regress/<format>/, replayed by test_fuzz_regress.
FUZZ_CALLS ?= 20000
FUZZ_SECONDS ?= 20
FUZZ_SEED ?= 1
FUZZ_ASAN ?= build/asan
FUZZ_BUILD ?= build/fuzz
FUZZ_FORMATS := csv idx safetensors
# Allocations over 256 MB fail (NULL, as a full machine would) instead of
# touching gigabytes: sizes under the engine's 1 TB cap are legal requests.
FUZZ_ASAN_OPTIONS := detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=256
# (-Wno-pass-failed: at -O1 clang cannot honour the conv kernels' unroll pragmas)
FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
              -fno-omit-frame-pointer -DMF_ALLOC_NO_CACHE -Wno-pass-failed

.PHONY: fuzz fuzz-api fuzz-files fuzz-lib
fuzz: fuzz-api fuzz-files

fuzz-api:
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_ASAN) MODE=asan all
	@rm -rf $(FUZZ_ASAN)/fuzz-tmp && mkdir -p $(FUZZ_ASAN)/fuzz-tmp
	@cd $(FUZZ_ASAN)/fuzz-tmp && OPENBLAS_NUM_THREADS=1 FUZZ_CALLS=$(FUZZ_CALLS) \
	    FUZZ_SEED=$(FUZZ_SEED) ASAN_OPTIONS=$(FUZZ_ASAN_OPTIONS) \
	    timeout $$(( $(FUZZ_CALLS) / 200 + 300 )) \
	    $(CURDIR)/$(FUZZ_ASAN)/moonflow $(CURDIR)/tests/fuzz/api_fuzz.lua > api_fuzz.out

fuzz-lib:
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=clang MODE_FLAGS="$(FUZZ_FLAGS)" \
	    $(FUZZ_BUILD)/libmoonflow.a

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_one.h fuzz-lib
	clang -std=c11 $(WARN) $(subst fuzzer-no-link,fuzzer,$(FUZZ_FLAGS)) -I. $(DEP_CFLAGS) \
	    $< $(FUZZ_BUILD)/libmoonflow.a $(DEP_LIBS) -o $@

fuzz-files: $(FUZZ_FORMATS:%=$(FUZZ_BUILD)/fuzz_%)
	@for f in $(FUZZ_FORMATS); do \
	    mkdir -p $(FUZZ_BUILD)/corpus-$$f $(FUZZ_BUILD)/crashes; \
	    echo "fuzz $$f: $(FUZZ_SECONDS) s"; \
	    dict=; [ -f tests/fuzz/$$f.dict ] && dict=-dict=tests/fuzz/$$f.dict; \
	    regress=; [ -d tests/fuzz/regress/$$f ] && regress=tests/fuzz/regress/$$f; \
	    OPENBLAS_NUM_THREADS=1 $(FUZZ_BUILD)/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) $$dict \
	        -max_len=4096 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
	        -artifact_prefix=$(FUZZ_BUILD)/crashes/$$f- $(FUZZ_BUILD)/corpus-$$f \
	        tests/fuzz/corpus/$$f $$regress || exit 1; \
	done
