# The two set-up commands of the README, and a few conveniences.
#   make run   installs dependencies, builds, runs the main job on a bundled default
#   make test  installs dependencies, builds, runs every test
JOBS ?= 2

.PHONY: deps build build-asan build-fuzz run sim-compare test test-asan fuzz fuzz-smoke bench \
	format clean screenshots install

deps:
	@bash scripts/bootstrap.sh

build: deps
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS)

# The main job on the bundled default: a local cluster on a 4x4x4 torus (64 emulated nodes) runs
# the first 200 jobs of the bundled Lublin trace as real `sleep` jobs in about two minutes, beside
# the simulator's prediction for the same jobs (out/demo/{predicted,live}/report.html).
run: build
	@./build/release/trellis cluster demo --out out/demo

# The simulator alone on the whole trace: every allocator that accepts it x EASY and conservative.
sim-compare: build
	@./build/release/trellis sim-compare --machine torus:16x16 \
	  --workload data/workloads/lublin_256.swf --sched easy,conservative --out out/run

# Tests that need PostgreSQL (bench/postgres_server.h) fail rather than skip when it cannot start:
# deps installs it.
test: build
	@TRELLIS_REQUIRE_POSTGRES=1 ctest --preset release -j $(JOBS)

build-asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS)

test-asan: build-asan
	@TRELLIS_REQUIRE_POSTGRES=1 ctest --preset asan -j $(JOBS)

# libFuzzer targets (fuzz/, clang, build/fuzz): each for FUZZ_SECONDS; fuzz-smoke is CI's short pass.
FUZZ_SECONDS ?= 60
build-fuzz: deps
	@cmake --preset fuzz >/dev/null
	@cmake --build --preset fuzz -j $(JOBS)

fuzz: build-fuzz
	@bash scripts/fuzz.sh $(FUZZ_SECONDS)

fuzz-smoke: build-fuzz
	@bash scripts/fuzz.sh 5

# Installs the programs into PREFIX (default /usr/local) and Slurm's command names (sbatch,
# squeue, ...) as links in PREFIX/libexec/trellis/slurm: `eval "$$(trellis slurm-env)"` uses them.
PREFIX ?= /usr/local
install: build
	@cmake --install build/release --prefix $(PREFIX)

bench: build
	@./build/release/trellis bench contiguous

# PNGs of the HTML reports (NASA iPSC and Lublin traces, a gang run, two comparisons) and of the
# dashboard's three views on a 3-D torus and a fat tree (live clusters, `trellis web`) in
# out/screenshots, taken with headless Chromium.
screenshots: build
	@bash scripts/report_screenshots.sh out/screenshots
	@TRELLIS_SCREENSHOTS=$(CURDIR)/out/screenshots ./build/release/trellis_tests \
	  --gtest_filter=DashboardBrowserTest.ScreenshotsOfTheThreeViews

format:
	@clang-format -i $$(git ls-files '*.h' '*.cc')

clean:
	rm -rf build
