// LineLabeler: `trellis run --label` / `submit --label`: each line a rank writes is prefixed with
// the rank ("3: text"), as srun --label does. The shell reads a rank's stdout and stderr from
// pipes and writes the labelled lines to its own; a line is written whole, so that ranks' lines
// do not interleave within a line. A line longer than kMaxPartialLine is written in pieces.
#pragma once

#include <string>
#include <string_view>

namespace trellis {

class LineLabeler {
 public:
  static constexpr size_t kMaxPartialLine = 64 * 1024;
  explicit LineLabeler(std::string prefix) : prefix_(std::move(prefix)) {}

  // The complete lines among the bytes read so far, each prefixed.
  std::string feed(std::string_view bytes);
  // At end of file: what is left of a last line without its newline, prefixed and ended with
  // one ("" when nothing is left).
  std::string finish();

 private:
  std::string prefix_;
  std::string partial_;
};

}  // namespace trellis
