#include "daemon/exchange_tree.h"

#include <algorithm>

#include "daemon/tree/tree_shape.h"

namespace trellis {
namespace {

// Levels of the tree that tree_children() builds over `count` agents below one root.
int levels_below(size_t count, int fanout) {
  int levels = 0;
  while (count > 0) {
    ++levels;
    size_t runs = std::min(count, static_cast<size_t>(std::max(fanout, 1)));
    // The longest run, less its first agent (the child), is what remains below the next level.
    count = count / runs + (count % runs ? 1 : 0) - 1;
  }
  return levels;
}

}  // namespace

ExchangeTreePosition exchange_tree_position(const std::vector<std::string>& agents,
                                            const std::string& self, int fanout) {
  ExchangeTreePosition position;
  if (agents.empty()) return position;
  position.height = levels_below(agents.size() - 1, fanout);
  std::string node = agents.front();
  std::vector<std::string> subtree(agents.begin() + 1, agents.end());
  std::optional<std::string> parent;
  for (int depth = 0;; ++depth) {
    std::vector<TreeChild> children = tree_children(subtree, fanout);
    if (node == self) {
      position.member = true;
      position.parent = parent;
      position.depth = depth;
      for (const TreeChild& child : children) position.children.push_back(child.agent);
      return position;
    }
    bool found = false;
    for (TreeChild& child : children) {
      if (child.agent == self ||
          std::find(child.subtree.begin(), child.subtree.end(), self) != child.subtree.end()) {
        parent = node;
        node = child.agent;
        subtree = std::move(child.subtree);
        found = true;
        break;
      }
    }
    if (!found) return position;  // not a member
  }
}

}  // namespace trellis
