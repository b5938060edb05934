#include "topology/fat_tree.h"

namespace trellis {

Result<FatTree> FatTree::make(std::vector<int> fanouts) {
  if (fanouts.empty() || fanouts.size() > 8)
    return fail("a fat tree needs 1 to 8 levels of fan-out, got " + std::to_string(fanouts.size()));
  FatTree t;
  long under = 1;
  t.nodes_under_.push_back(1);
  for (size_t l = 0; l < fanouts.size(); ++l) {
    if (fanouts[l] < 1)
      return fail("fan-out of level " + std::to_string(l + 1) + " must be at least 1");
    under *= fanouts[l];
    if (under > (1 << 24))
      return fail("machine too large: more than " + std::to_string(1 << 24) + " nodes");
    t.nodes_under_.push_back(static_cast<int>(under));
  }
  t.fanouts_ = std::move(fanouts);
  t.node_count_ = static_cast<int>(under);
  return t;
}

int FatTree::common_level(NodeId a, NodeId b) const {
  for (int level = 0; level <= levels(); ++level)
    if (a / nodes_under_[level] == b / nodes_under_[level]) return level;
  return levels();
}

int FatTree::hop_count(NodeId a, NodeId b) const {
  int level = common_level(a, b);
  return level == 0 ? 0 : 2 * level - 1;
}

std::string FatTree::describe() const {
  std::string out = std::to_string(levels()) + "-level fat tree (";
  for (int l = 0; l < levels(); ++l) {
    if (l) out += ',';
    out += std::to_string(fanouts_[l]);
  }
  return out + "), " + std::to_string(node_count_) + " nodes";
}

}  // namespace trellis
