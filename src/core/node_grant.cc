#include "core/node_grant.h"

#include <charconv>

#include "core/id_ranges.h"

namespace trellis {
namespace {

// Cores and GPUs of one node: a node of 16,384 cores is beyond any sold.
constexpr int64_t kMostIds = 1 << 14;

bool parse_int(std::string_view text, int64_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

std::string ranges(const std::vector<int>& ids) {
  return format_id_ranges(std::vector<int64_t>(ids.begin(), ids.end()));
}

}  // namespace

std::string encode_grant(const NodeGrant& g) {
  std::string out = std::to_string(g.node) + ":";
  std::string parts;
  auto part = [&](const std::string& text) { parts += (parts.empty() ? "" : ";") + text; };
  if (!g.cores.empty()) part("c=" + ranges(g.cores));
  if (g.memory_mb > 0) part("m=" + std::to_string(g.memory_mb));
  if (!g.gpus.empty()) part("g=" + ranges(g.gpus));
  for (const auto& [name, count] : g.counts) part("r=" + name + ":" + std::to_string(count));
  return out + parts;
}

std::string encode_grants(const std::vector<NodeGrant>& grants) {
  std::string out;
  for (const NodeGrant& g : grants) out += (out.empty() ? "" : " ") + encode_grant(g);
  return out;
}

Result<NodeGrant> decode_grant(std::string_view text) {
  NodeGrant g;
  size_t colon = text.find(':');
  int64_t node = 0;
  if (colon == std::string_view::npos || !parse_int(text.substr(0, colon), node) || node < 0 ||
      node > (int64_t{1} << 30))
    return fail("grant '" + std::string(text) + "': expected NODE:PARTS");
  g.node = static_cast<NodeId>(node);
  std::string_view rest = text.substr(colon + 1);
  while (!rest.empty()) {
    size_t end = rest.find(';');
    std::string_view part = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (part.size() < 2 || part[1] != '=')
      return fail("grant '" + std::string(text) + "': '" + std::string(part) + "' is not K=V");
    std::string_view value = part.substr(2);
    switch (part[0]) {
      case 'c':
      case 'g': {
        Result<std::vector<int>> ids = parse_id_ranges(value, kMostIds);
        if (!ids) return fail("grant '" + std::string(text) + "': " + ids.error().message);
        (part[0] == 'c' ? g.cores : g.gpus) = std::move(*ids);
        break;
      }
      case 'm':
        if (!parse_int(value, g.memory_mb) || g.memory_mb < 0)
          return fail("grant '" + std::string(text) + "': memory '" + std::string(value) + "'");
        break;
      case 'r': {
        size_t at = value.rfind(':');
        int64_t count = 0;
        if (at == std::string_view::npos || at == 0 || !parse_int(value.substr(at + 1), count) ||
            count < 1)
          return fail("grant '" + std::string(text) + "': resource '" + std::string(value) + "'");
        g.counts[std::string(value.substr(0, at))] = count;
        break;
      }
      default:
        return fail("grant '" + std::string(text) + "': unknown part '" + std::string(part) + "'");
    }
  }
  return g;
}

Result<std::vector<NodeGrant>> decode_grants(std::string_view text) {
  std::vector<NodeGrant> out;
  size_t from = 0;
  while (from < text.size()) {
    size_t end = text.find(' ', from);
    std::string_view one = text.substr(from, end == std::string_view::npos ? end : end - from);
    if (!one.empty()) {
      Result<NodeGrant> g = decode_grant(one);
      if (!g) return g.error();
      out.push_back(std::move(*g));
    }
    if (end == std::string_view::npos) break;
    from = end + 1;
  }
  return out;
}

}  // namespace trellis
