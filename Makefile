# Tessera - GNU make. `make demo` and `make test` set everything up on a fresh Debian 12.
#
#   make            build ./tessera
#   make test       install missing packages, build, run every test
#   make demo       install missing packages, build, replay the bundled example cluster
#   make bench      run the benchmarks; results in bench/results/
#   make sanitize   ASan + UBSan build running the whole test suite
#   make fuzz       every libFuzzer target for FUZZ_SECONDS each (30); make fuzz-smoke: 5 s each
#   make soak       tessera run against the fake API server: SOAK_SECONDS (3600) of churn and faults
#   make soak-names tessera run while SOAK_NAMES (1,000,000) distinct pod names and label values
#                   pass through it: resident memory must not grow (bench/results/soak-names.txt)
#   make valgrind   memcheck over the golden scenarios and each bad-input file
#   make e2e-scale  tessera run with 1,000 nodes + 8,000 pods on the real server (TESSERA_APISERVER)
#   make e2e        scenarios against a real kube-apiserver (TESSERA_APISERVER; skipped without)
#   make check-style  clang-format dry run, and the include table (scripts/check-deps.sh)
#   make clean

CC      ?= cc
BUILD   ?= build
SAN     ?= 0
PKGS    := jansson libcurl libuv yaml-0.1 openssl libnghttp2 libzip

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla \
           -Wno-missing-field-initializers -Wformat-truncation
OPT     := -O2 -g
ifeq ($(FUZZ),1)
OPT     := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
           -fno-sanitize-recover=undefined
WARN    += -Wno-unknown-warning-option
LDSAN   := -fsanitize=fuzzer,address,undefined
endif
ifeq ($(SAN),1)
OPT     := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
           -fno-sanitize-recover=undefined
LDSAN   := -fsanitize=address,undefined
endif
CFLAGS  := -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L $(OPT) $(WARN) -I. $(PKG_CFLAGS) \
           -MMD -MP $(EXTRA_CFLAGS)
LDLIBS  := $(PKG_LIBS) -lm
# What `tessera version` reports: the commit (-dirty with uncommitted changes; give
# TESSERA_COMMIT=... where there is no .git) and the build date (SOURCE_DATE_EPOCH fixes it).
TESSERA_COMMIT ?= $(shell c=$$(git rev-parse --short=12 HEAD 2>/dev/null) && \
  { git diff --quiet HEAD -- 2>/dev/null && echo $$c || echo $$c-dirty; } || echo unknown)
BUILD_DATE := $(shell date -u $${SOURCE_DATE_EPOCH:+-d @$$SOURCE_DATE_EPOCH} +%Y-%m-%dT%H:%M:%SZ)

MODULES   := common input cel model queueing dra scheduler kubeclient config live gen sim
LIB_SRCS  := $(foreach m,$(MODULES),$(wildcard $(m)/*.c))
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
CMD_SRCS  := $(wildcard cmd/*.c)
CMD_OBJS  := $(CMD_SRCS:%.c=$(BUILD)/obj/%.o)
SUP_SRCS  := $(wildcard tests/support/*.c)
SUP_OBJS  := $(SUP_SRCS:%.c=$(BUILD)/obj/%.o)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
CONF_SRCS := $(wildcard tests/conformance/*.c)
CONF_BINS := $(CONF_SRCS:tests/conformance/%.c=$(BUILD)/tests/%)
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)
LIB       := $(BUILD)/libtessera.a
TESSERA   := $(BUILD)/tessera

.SECONDARY:

.PHONY: all deps test demo bench sanitize soak soak-names fuzz fuzz-smoke fuzz-run valgrind check-style format clean tests run-tests e2e e2e-scale rbac manifests FORCE

all: tessera

tessera: $(TESSERA)
	cp $(TESSERA) tessera

deps:
	@scripts/deps.sh

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC  $<"
	@$(CC) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# version.o is compiled again when the commit changes (the stamp holds the last one).
$(BUILD)/version.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(TESSERA_COMMIT)' | cmp -s - $@ || echo '$(TESSERA_COMMIT)' >$@

$(BUILD)/obj/cmd/version.o: cmd/version.c $(BUILD)/version.stamp
	@mkdir -p $(dir $@)
	@echo "  CC  $<"
	@$(CC) $(CFLAGS) -DTESSERA_COMMIT='"$(TESSERA_COMMIT)"' \
	  -DTESSERA_BUILD_DATE='"$(BUILD_DATE)"' -c $< -o $@

FORCE:

$(TESSERA): $(CMD_OBJS) $(LIB)
	$(CC) $(LDSAN) -o $@ $(CMD_OBJS) $(LIB) $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(SUP_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDSAN) -o $@ $< $(SUP_OBJS) $(LIB) $(LDLIBS) $(CMOCKA_LIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/conformance/%.o $(SUP_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDSAN) -o $@ $< $(SUP_OBJS) $(LIB) $(LDLIBS) $(CMOCKA_LIBS)

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(SUP_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDSAN) -o $@ $< $(SUP_OBJS) $(LIB) $(LDLIBS)

FUZZ_SRCS := $(wildcard fuzz/fuzz_*.c)
FUZZ_BINS := $(FUZZ_SRCS:fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_SECONDS ?= 30

$(BUILD)/fuzz/%: $(BUILD)/obj/fuzz/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDSAN) -o $@ $< $(LIB) $(LDLIBS)

$(BUILD)/soak/%: $(BUILD)/obj/tests/soak/%.o $(SUP_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDSAN) -o $@ $< $(SUP_OBJS) $(LIB) $(LDLIBS)

SOAK_SECONDS ?= 3600

tests: $(TESSERA) $(UNIT_BINS) $(CONF_BINS)

run-tests: tests
	@scripts/run-tests.sh $(BUILD)

test: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory run-tests

demo: deps
	@$(MAKE) --no-print-directory all
	@echo "== examples/cluster: plain pods on a GPU cluster"
	@./tessera replay examples/cluster
	@echo
	@echo "== examples/kueue: the seed article's queues and PyTorchJob, admitted with placement"
	@./tessera replay examples/kueue
	@echo
	@echo "== examples/dra: GPUs and MIG partitions through DRA claims with CEL selectors"
	@./tessera replay examples/dra
	@echo
	@echo "== examples/simulate: a day of three ITP clusters' jobs as three teams on 32 x 8 GPUs"
	@./tessera simulate --trace examples/simulate/itp-day1.csv --nodes 32x8 \
	  --queues examples/simulate/queues.yaml --config examples/simulate/tessera.yaml --until 2d

bench: deps
	@$(MAKE) --no-print-directory all $(BENCH_BINS)
	@scripts/run-bench.sh $(BUILD)

e2e: deps
	@$(MAKE) --no-print-directory all
	@scripts/e2e.sh $(BUILD)

e2e-scale: deps
	@$(MAKE) --no-print-directory all
	@scripts/e2e-scale.sh $(BUILD)

sanitize: deps
	@$(MAKE) --no-print-directory BUILD=build/san SAN=1 run-tests

fuzz:
	@scripts/deps.sh fuzz
	@$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang FUZZ=1 fuzz-run

fuzz-smoke:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=5

soak: deps
	@$(MAKE) --no-print-directory all $(BUILD)/soak/soak
	@scripts/soak.sh $(BUILD) $(SOAK_SECONDS)

soak-names: deps
	@$(MAKE) --no-print-directory all $(BUILD)/soak/names
	@scripts/soak.sh $(BUILD) 0 names

valgrind:
	@scripts/deps.sh valgrind
	@$(MAKE) --no-print-directory all
	@scripts/valgrind.sh $(TESSERA)

fuzz-run: $(FUZZ_BINS)
	@scripts/run-fuzz.sh $(BUILD) $(FUZZ_SECONDS)

check-style:
	@scripts/check-style.sh

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

# The chart's RBAC from the code's tables, and the plain manifests rendered from the chart
# (make test fails when either is stale).
rbac: $(BUILD)/tessera
	@$(BUILD)/tessera rbac --helm >deploy/helm/tessera/templates/rbac.yaml
	@echo "wrote deploy/helm/tessera/templates/rbac.yaml"

manifests: $(BUILD)/tests/test_chart
	@TESSERA_WRITE_MANIFESTS=1 $(BUILD)/tests/test_chart >/dev/null
	@echo "wrote deploy/manifests/tessera.yaml"

clean:
	rm -rf build tessera

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
