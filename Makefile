# The two set-up commands of the README, and a few conveniences.
#   make run   installs dependencies, builds, runs the main job on a bundled default
#   make test  installs dependencies, builds, runs every test
JOBS ?= 2

.PHONY: deps build run test test-asan bench format clean

deps:
	@bash scripts/bootstrap.sh

build: deps
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS)

run: build
	@./build/release/trellis demo

test: build
	@ctest --preset release -j $(JOBS)

test-asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS)
	@ctest --preset asan -j $(JOBS)

bench: build
	@./build/release/trellis bench contiguous

format:
	@clang-format -i $$(git ls-files '*.h' '*.cc')

clean:
	rm -rf build
