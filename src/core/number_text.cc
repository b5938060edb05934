#include "core/number_text.h"

#include <charconv>

namespace trellis {

std::string exact_number(double value) {
  char buffer[32];  // the longest shortest form of a double is 24 characters
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

}  // namespace trellis
