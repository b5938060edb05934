#include "core/hostlist.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <vector>

namespace trellis {

std::string format_hostlist(const NodeSet& nodes, std::string_view prefix) {
  std::vector<std::pair<NodeId, NodeId>> runs;  // inclusive [first, last]
  for (NodeId first = nodes.next(0); first >= 0;) {
    NodeId end = nodes.next_absent(first);
    runs.emplace_back(first, end - 1);
    first = nodes.next(end);
  }
  std::string out(prefix);
  if (runs.empty()) return "";
  if (runs.size() == 1 && runs[0].first == runs[0].second) {
    return out + std::to_string(runs[0].first);
  }
  out += '[';
  for (size_t i = 0; i < runs.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(runs[i].first);
    if (runs[i].second != runs[i].first) out += '-' + std::to_string(runs[i].second);
  }
  out += ']';
  return out;
}

std::string format_names(const std::vector<std::string>& names) {
  std::vector<std::string> prefixes;
  std::vector<std::vector<int>> numbers;
  std::vector<std::string> others;
  for (const std::string& name : names) {
    size_t digits = name.size();
    while (digits > 0 && name[digits - 1] >= '0' && name[digits - 1] <= '9') --digits;
    int number = -1;
    bool plain = digits < name.size() && name.size() - digits <= 9 &&
                 (name[digits] != '0' || digits + 1 == name.size());
    if (plain) std::from_chars(name.data() + digits, name.data() + name.size(), number);
    if (number < 0 || number >= (1 << 24)) {  // not a node number this format merges
      others.push_back(name);
      continue;
    }
    std::string prefix = name.substr(0, digits);
    size_t at = 0;
    while (at < prefixes.size() && prefixes[at] != prefix) ++at;
    if (at == prefixes.size()) {
      prefixes.push_back(prefix);
      numbers.emplace_back();
    }
    numbers[at].push_back(number);
  }
  std::string out;
  for (size_t p = 0; p < prefixes.size(); ++p) {
    std::vector<int>& ids = numbers[p];
    NodeSet set(*std::max_element(ids.begin(), ids.end()) + 1);
    for (int id : ids) set.set(id);
    if (!out.empty()) out += ',';
    out += format_hostlist(set, prefixes[p]);
  }
  for (const std::string& name : others) {
    if (!out.empty()) out += ',';
    out += name;
  }
  return out;
}

namespace {

// A small cursor over the text that reports errors with the position.
class Parser {
 public:
  Parser(std::string_view text, int size, std::string_view prefix)
      : text_(text), size_(size), prefix_(prefix), nodes_(size) {}

  Result<NodeSet> parse() {
    if (text_.empty()) return nodes_;
    while (true) {
      if (auto err = parse_item()) return *err;
      if (pos_ == text_.size()) return nodes_;
      if (text_[pos_] != ',') return error("expected ',' or end of hostlist");
      ++pos_;
    }
  }

 private:
  std::optional<Error> parse_item() {
    if (text_.substr(pos_, prefix_.size()) != prefix_)
      return error("expected a node name starting with '" + std::string(prefix_) + "'");
    pos_ += prefix_.size();
    if (pos_ < text_.size() && text_[pos_] == '[') {
      ++pos_;
      while (true) {
        if (auto err = parse_range()) return err;
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < text_.size() && text_[pos_] == ']') {
          ++pos_;
          return std::nullopt;
        }
        return error("expected ',' or ']' inside brackets");
      }
    }
    return parse_range_single();
  }

  std::optional<Error> parse_range_single() {
    long id;
    if (auto err = parse_number(id)) return err;
    return add(id, id);
  }

  std::optional<Error> parse_range() {
    long lo, hi;
    if (auto err = parse_number(lo)) return err;
    hi = lo;
    if (pos_ < text_.size() && text_[pos_] == '-') {
      ++pos_;
      if (auto err = parse_number(hi)) return err;
      if (hi < lo)
        return error("range " + std::to_string(lo) + "-" + std::to_string(hi) + " runs backwards");
    }
    return add(lo, hi);
  }

  std::optional<Error> parse_number(long& out) {
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    if (start == pos_) return error("expected a node number");
    if (pos_ - start > 9) return error("node number too large");
    std::from_chars(text_.data() + start, text_.data() + pos_, out);
    return std::nullopt;
  }

  std::optional<Error> add(long lo, long hi) {
    if (hi >= size_)
      return error("node " + std::to_string(hi) + " is outside the machine (nodes 0-" +
                   std::to_string(size_ - 1) + ")");
    nodes_.set_range(static_cast<NodeId>(lo), static_cast<NodeId>(hi + 1));
    return std::nullopt;
  }

  Error error(const std::string& what) const {
    return fail("hostlist '" + std::string(text_) + "' at character " + std::to_string(pos_ + 1) +
                ": " + what);
  }

  std::string_view text_;
  size_t pos_ = 0;
  int size_;
  std::string_view prefix_;
  NodeSet nodes_;
};

}  // namespace

Result<NodeSet> parse_hostlist(std::string_view text, int size, std::string_view prefix) {
  return Parser(text, size, prefix).parse();
}

}  // namespace trellis
