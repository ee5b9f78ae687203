# Thin wrapper over CMake.  `make run` and `make test` set up everything themselves on a
# fresh Debian 12 machine (missing packages come from apt-get).
BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
PREFIX     ?= /usr/local
JOBS       ?= 2
SAMPLE     ?= data/events.tsv

# Open-ended fuzzing of the loader (make fuzz): how long, in seconds.
FUZZ_SECONDS ?= 600

.PHONY: all deps build python test test-fast test-asan test-tsan fuzz asan-build tsan-build run run-redis install bench-redis \
	bench bench-quick experiments clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

# The Python package, built in the tree: PYTHONPATH=$(BUILD)/python imports it (the
# tests do); `pip install --no-build-isolation ./python` installs it, as `make install`.
python: build
	@echo "built: PYTHONPATH=$(BUILD)/python /usr/bin/python3 -c 'import once'"

# The whole suite twice: the release build (gcc), then clang with AddressSanitizer and
# UndefinedBehaviorSanitizer, which also builds and runs the libFuzzer targets; then the
# concurrent calls (tests/unit/test_threads.c) under ThreadSanitizer, a build of the library
# and that test alone.
test: test-fast test-asan test-tsan

test-fast: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

# The two sanitizer builds differ only in their directory and their sanitizer option.
asan-build: SANITIZER_BUILD = $(ASAN_BUILD)
asan-build: SANITIZER_OPTION = -DONCE_SANITIZE=ON
tsan-build: SANITIZER_BUILD = $(TSAN_BUILD)
tsan-build: SANITIZER_OPTION = -DONCE_TSAN=ON
asan-build tsan-build: deps
	@cmake -S . -B $(SANITIZER_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    $(SANITIZER_OPTION) -DONCE_BENCH=OFF >/dev/null
	@cmake --build $(SANITIZER_BUILD) -j$(JOBS)

test-asan: asan-build
	cd $(ASAN_BUILD) && ctest --output-on-failure -j$(JOBS)

test-tsan: tsan-build
	cd $(TSAN_BUILD) && ctest --output-on-failure -j$(JOBS)

# Open-ended fuzzing from a random seed for FUZZ_SECONDS each, in the sanitizer build:
# the loader, then the DBF's deltas.  A failing input lands in
# $(ASAN_BUILD)/tests/fuzz_load.fuzz/artifacts/ (fuzz_delta.fuzz/ for deltas); once
# fixed, add it to tests/fuzz/corpus/ (tests/fuzz/delta_corpus/; see README).
fuzz: asan-build
	sh tests/fuzz/run_fuzz.sh $(ASAN_BUILD)/tests/fuzz_load $(ASAN_BUILD)/tests/fuzz_corpus \
	    tests/fuzz/corpus $(ASAN_BUILD)/tests/fuzz_load.fuzz $(FUZZ_SECONDS)
	sh tests/fuzz/run_fuzz.sh $(ASAN_BUILD)/tests/fuzz_delta $(ASAN_BUILD)/tests/fuzz_delta_corpus \
	    tests/fuzz/delta_corpus $(ASAN_BUILD)/tests/fuzz_delta.fuzz $(FUZZ_SECONDS)

# The main job on the embedded default: deduplicate the shipped sample stream, whole
# lines over all time, then event ids (field 2) over the last hour of event time.
run: build
	@echo "once --stats $(SAMPLE) > /dev/null"
	@$(BUILD)/programs/once --stats $(SAMPLE) > /dev/null
	@echo "once --span 1h --time-field 1 --time-format iso8601 -f 2 --stats $(SAMPLE) > /dev/null"
	@$(BUILD)/programs/once --span 1h --time-field 1 --time-format iso8601 -f 2 --stats \
	    $(SAMPLE) > /dev/null

# Debian's redis-server with the module on a free port (see docs/REDIS.md).
run-redis: build
	@scripts/run-redis.sh $(BUILD)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

bench-quick: build
	$(BUILD)/bench/once-bench --quick

bench: build
	$(BUILD)/bench/once-bench
	$(BUILD)/bench/once-sliced-bench --n 1e6 --reps 3
	bench/cli_bench.sh $(BUILD)/programs/once

# The Redis module against SET NX EX (and another Bloom module given as
# BENCH_REDIS_OTHER=path.so BENCH_REDIS_OTHER_NAME=name): docs/BENCHMARKS.md, "Redis module".
bench-redis: build
	bench/redis_bench.sh $(BUILD)/module/once.so 1000000 $(BENCH_REDIS_OTHER) $(BENCH_REDIS_OTHER_NAME)

# Paper reproductions: tables (Markdown) and plots (PNG, gnuplot) in docs/experiments/.
experiments: build
	@scripts/install-deps.sh gnuplot-nox
	scripts/experiments.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)
