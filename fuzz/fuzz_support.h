// What every fuzz target of fuzz/ shares: the input as text, and a check that reports a broken
// invariant as a crash, which libFuzzer saves as a reproducer (build/fuzz/crashes/).
//
// Each target is one input surface of Trellis: it feeds the fuzzer's bytes to the parser or
// handler and checks what must hold of any answer. A target never rejects an input by crashing;
// an error Result is a good answer. `make fuzz` runs them all (scripts/fuzz.sh says how).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace trellis::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Reports that `what` does not hold (with `detail`), and aborts: the fuzzer keeps the input.
[[noreturn]] inline void invariant_failed(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz invariant failed: %s\n  %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace trellis::fuzz

#define FUZZ_CHECK(condition, detail) \
  ((condition) ? (void)0 : ::trellis::fuzz::invariant_failed(#condition, (detail)))
