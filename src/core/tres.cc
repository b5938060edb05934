#include "core/tres.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace trellis {
namespace {

constexpr int64_t kMaxCount = int64_t{1} << 53;

bool known_name(const std::string& name) {
  static const std::vector<std::string> kNames = {"cpu", "mem", "node", "billing", "energy"};
  if (std::find(kNames.begin(), kNames.end(), name) != kNames.end()) return true;
  if (name.rfind("gres/", 0) != 0 || name.size() == 5) return false;
  // gres/NAME or gres/NAME:TYPE: letters, digits, '_', '-', ':' after the slash.
  return std::all_of(name.begin() + 5, name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == ':';
  });
}

// Slurm's order: cpu, mem, energy, node, billing, then the rest (gres/...) by name.
int rank(const std::string& name) {
  static const std::vector<std::string> kOrder = {"cpu", "mem", "energy", "node", "billing"};
  auto at = std::find(kOrder.begin(), kOrder.end(), name);
  return at == kOrder.end() ? static_cast<int>(kOrder.size())
                            : static_cast<int>(at - kOrder.begin());
}

// A count, with a size suffix for mem (K, M, G, T; megabytes without one).
Result<int64_t> parse_count(const std::string& name, std::string text, const std::string& where) {
  if (text == "-1") return Tres::kCleared;
  int64_t scale_kb = 0;  // mem only: the suffix's size in kilobytes
  if (name == "mem" && !text.empty() && std::isalpha(static_cast<unsigned char>(text.back()))) {
    switch (std::toupper(static_cast<unsigned char>(text.back()))) {
      case 'K':
        scale_kb = 1;
        break;
      case 'M':
        scale_kb = 1024;
        break;
      case 'G':
        scale_kb = 1024 * 1024;
        break;
      case 'T':
        scale_kb = int64_t{1024} * 1024 * 1024;
        break;
      default:
        return fail(where + ": '" + text + "' is not a size (K, M, G or T)");
    }
    text.pop_back();
  }
  if (text.empty() ||
      !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); }))
    return fail(where + ": '" + text + "' is not a count (a whole number >= 0, or -1 to clear)");
  if (text.size() > 16) return fail(where + ": " + text + " is larger than 2^53");
  int64_t value = std::stoll(text);
  if (scale_kb) {
    // In megabytes, rounded up: 512K is one megabyte.
    if (value > kMaxCount / scale_kb) return fail(where + ": " + text + " is too large");
    value = (value * scale_kb + 1023) / 1024;
  }
  if (value > kMaxCount) return fail(where + ": " + text + " is larger than 2^53");
  return value;
}

}  // namespace

std::optional<int64_t> Tres::count(std::string_view name) const {
  auto at = counts.find(std::string(name));
  if (at == counts.end() || at->second == kCleared) return std::nullopt;
  return at->second;
}

Result<Tres> parse_tres(std::string_view text, std::string_view what) {
  Tres tres;
  const std::string field(what);
  if (text.empty()) return tres;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string item(text.substr(begin, end - begin));
    const std::string where = field + ": '" + item + "'";
    size_t eq = item.find('=');
    if (item.empty()) return fail(field + ": an empty item in '" + std::string(text) + "'");
    if (eq == std::string::npos || eq == 0)
      return fail(where + " is not NAME=COUNT (cpu=4, mem=2G, node=2, gres/gpu=1)");
    std::string name = item.substr(0, eq);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (name == "gpu") name = "gres/gpu";  // as sacctmgr accepts it
    if (!known_name(name))
      return fail(where + ": unknown TRES '" + name +
                  "' (cpu, mem, node, billing, energy, gres/NAME)");
    Result<int64_t> count = parse_count(name, item.substr(eq + 1), where);
    if (!count) return count.error();
    if (!tres.counts.emplace(name, *count).second)
      return fail(field + ": '" + name + "' given twice in '" + std::string(text) + "'");
    begin = end + 1;
    if (end == text.size()) break;
  }
  return tres;
}

std::string format_tres(const Tres& tres) {
  std::vector<std::pair<std::string, int64_t>> items;
  for (const auto& [name, count] : tres.counts)
    if (count != Tres::kCleared) items.emplace_back(name, count);
  std::stable_sort(items.begin(), items.end(),
                   [](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
  std::string out;
  for (const auto& [name, count] : items) {
    if (!out.empty()) out += ',';
    out += name + "=" + std::to_string(count);
  }
  return out;
}

Tres merge_tres(const Tres& base, const Tres& change) {
  Tres out = base;
  for (const auto& [name, count] : change.counts) {
    if (count == Tres::kCleared)
      out.counts.erase(name);
    else
      out.counts[name] = count;
  }
  return out;
}

}  // namespace trellis
