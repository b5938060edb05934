# The two set-up commands of the README, and a few conveniences.
#   make run   installs dependencies, builds, runs the main job on a bundled default
#   make test  installs dependencies, builds, runs every test
JOBS ?= 2

.PHONY: deps build run test test-asan bench format clean screenshots

deps:
	@bash scripts/bootstrap.sh

build: deps
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS)

# The main job on the bundled default: the Lublin-Feitelson trace of 10,000 jobs (data/workloads)
# on a 16x16 torus, every allocator that accepts it x EASY and conservative backfilling.
run: build
	@./build/release/trellis sim-compare --machine torus:16x16 \
	  --workload data/workloads/lublin_256.swf --sched easy,conservative --out out/run

test: build
	@ctest --preset release -j $(JOBS)

test-asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS)
	@ctest --preset asan -j $(JOBS)

bench: build
	@./build/release/trellis bench contiguous

# PNGs of the HTML reports (NASA iPSC and Lublin traces, a gang run, two comparisons) in
# out/screenshots, taken with headless Chromium.
screenshots: build
	@bash scripts/report_screenshots.sh out/screenshots

format:
	@clang-format -i $$(git ls-files '*.h' '*.cc')

clean:
	rm -rf build
