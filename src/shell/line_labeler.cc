#include "shell/line_labeler.h"

namespace trellis {

std::string LineLabeler::feed(std::string_view bytes) {
  std::string out;
  size_t start = 0;
  for (size_t end; (end = bytes.find('\n', start)) != std::string_view::npos; start = end + 1) {
    out += prefix_;
    out += partial_;
    partial_.clear();
    out.append(bytes.substr(start, end - start + 1));
  }
  partial_.append(bytes.substr(start));
  if (partial_.size() >= kMaxPartialLine) {
    out += prefix_;
    out += partial_;
    out += '\n';
    partial_.clear();
  }
  return out;
}

std::string LineLabeler::finish() {
  if (partial_.empty()) return "";
  std::string out = prefix_ + partial_ + "\n";
  partial_.clear();
  return out;
}

}  // namespace trellis
