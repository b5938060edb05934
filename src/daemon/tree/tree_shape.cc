#include "daemon/tree/tree_shape.h"

#include <algorithm>

namespace trellis {
namespace {

// The runs a subtree of `n` agents is split into: [begin, end) offsets, at most `fanout`.
std::vector<std::pair<size_t, size_t>> runs(size_t n, int fanout) {
  std::vector<std::pair<size_t, size_t>> out;
  const size_t count = std::min(n, static_cast<size_t>(std::max(fanout, 1)));
  size_t at = 0;
  for (size_t run = 0; run < count; ++run) {
    // The first n % count runs are one longer.
    size_t length = n / count + (run < n % count ? 1 : 0);
    out.emplace_back(at, at + length);
    at += length;
  }
  return out;
}

}  // namespace

std::vector<TreeChild> tree_children(const std::vector<std::string>& subtree, int fanout) {
  std::vector<TreeChild> children;
  for (auto [begin, end] : runs(subtree.size(), fanout)) {
    TreeChild child;
    child.agent = subtree[begin];
    child.subtree.assign(subtree.begin() + static_cast<long>(begin) + 1,
                         subtree.begin() + static_cast<long>(end));
    children.push_back(std::move(child));
  }
  return children;
}

std::optional<TreePosition> tree_position(const std::vector<std::string>& agents, int fanout,
                                          std::string_view me) {
  auto found = std::find(agents.begin(), agents.end(), me);
  if (found == agents.end()) return std::nullopt;
  const size_t index = static_cast<size_t>(found - agents.begin());
  // Down from the root: [root, end) is the current subtree, rooted at `root`.
  TreePosition position;
  size_t root = 0, end = agents.size();
  while (root != index) {
    size_t base = root + 1;
    for (auto [begin, stop] : runs(end - base, fanout)) {
      if (index >= base + begin && index < base + stop) {
        position.parent = agents[root];
        root = base + begin;
        end = base + stop;
        break;
      }
    }
    ++position.depth;
  }
  for (auto [begin, stop] : runs(end - root - 1, fanout)) {
    TreeChild child;
    child.agent = agents[root + 1 + begin];
    child.subtree.assign(agents.begin() + static_cast<long>(root + 2 + begin),
                         agents.begin() + static_cast<long>(root + 1 + stop));
    position.children.push_back(std::move(child));
  }
  return position;
}

int tree_levels(size_t agents, int fanout) {
  if (agents == 0) return 0;
  // The deepest path follows the longest run at each level (the first one).
  int levels = 1;
  size_t n = agents - 1;
  const size_t k = static_cast<size_t>(std::max(fanout, 1));
  while (n > 0) {
    ++levels;
    size_t first_run = n / std::min(n, k) + (n % std::min(n, k) ? 1 : 0);
    n = first_run - 1;
  }
  return levels;
}

}  // namespace trellis
