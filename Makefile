# moonflow — a plain Makefile (see ../shared/DESIGN.md "Build").
#   make          build build/moonflow
#   make run      build and start the prompt
#   make test     build and run every cmocka and Lua test
#   make check    the same tests under AddressSanitizer + UBSan (build/asan)
#   make bench    benchmarks, side by side with PyTorch when it is installed
# Missing Debian packages are installed by tools/configure.sh (as root) or
# named in one apt-get line.

CC ?= cc
WARN := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wwrite-strings -Wdouble-promotion -Wformat=2 -Werror
OPT := -O2 -fvect-cost-model=dynamic -march=native -g
ASAN := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
        -fno-omit-frame-pointer -DMF_ALLOC_NO_CACHE
BUILD ?= build/release
MODE_FLAGS = $(if $(findstring asan,$(BUILD)),$(ASAN),$(OPT))

include build/config.mk

CFLAGS_ALL = -std=c11 $(WARN) $(MODE_FLAGS) -MMD -MP -I. $(DEP_CFLAGS)
LDFLAGS_ALL = $(MODE_FLAGS) $(DEP_LIBS)

ENGINE_SRC := $(wildcard core/*.c core/*/*.c eager/*.c graph/*.c train/*.c)
REPL_SRC := $(wildcard repl/*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
LUA_TESTS := $(wildcard tests/lua/test_*.lua)

ENGINE_OBJ := $(ENGINE_SRC:%.c=$(BUILD)/%.o)
REPL_OBJ := $(REPL_SRC:%.c=$(BUILD)/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
LIB := $(BUILD)/libmoonflow.a
BIN := $(BUILD)/moonflow

.PHONY: all run test check bench clean unit-tests
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

$(LIB): $(ENGINE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(REPL_OBJ) $(LIB)
	$(CC) $(REPL_OBJ) $(LIB) $(LDFLAGS_ALL) -o $@

$(BUILD)/tests/%: tests/unit/%.c tests/unit/testutil.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $< $(LIB) $(LDFLAGS_ALL) -o $@

unit-tests: $(UNIT_BIN) $(BIN)

test: all

run: all
	./build/moonflow

test: unit-tests
	@OPENBLAS_NUM_THREADS=1 sh tests/run.sh $(BUILD)

check:
	@$(MAKE) --no-print-directory BUILD=build/asan unit-tests
	@ASAN_OPTIONS=detect_leaks=1 OPENBLAS_NUM_THREADS=1 sh tests/run.sh build/asan

$(BUILD)/bench/%: bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $< $(LIB) $(LDFLAGS_ALL) -o $@

bench: all $(BUILD)/bench/bench_matmul
	@sh bench/run.sh $(BUILD)

clean:
	rm -rf build

-include $(ENGINE_OBJ:.o=.d) $(REPL_OBJ:.o=.d) $(UNIT_BIN:=.d)
