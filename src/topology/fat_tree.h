// FatTree: a tree of switches given by per-level fan-outs, leaves first.
//
// "fattree:4,4,4" has 4 nodes per leaf switch, 4 leaf switches per middle switch and 4 middle
// switches under the root: 64 nodes. Node ids run left to right along the leaves, so the nodes
// under one switch are a contiguous id range. Hop counts follow seed 001: the number of switch
// chips a message crosses, 1 within a leaf, 3 through a level-2 switch, 5 across the root of a
// 3-level tree (2L-1 when the lowest common switch is at level L).
#pragma once

#include <string>
#include <vector>

#include "core/node_set.h"
#include "core/result.h"

namespace trellis {

class FatTree {
 public:
  // fanouts[0] = nodes per leaf switch; fanouts[l] = level-l switches per level-(l+1) switch.
  static Result<FatTree> make(std::vector<int> fanouts);

  int levels() const { return static_cast<int>(fanouts_.size()); }
  const std::vector<int>& fanouts() const { return fanouts_; }
  int node_count() const { return node_count_; }
  // Nodes under one switch of `level` (1 = leaf switch): fanouts[0]*...*fanouts[level-1].
  int nodes_under(int level) const { return nodes_under_[level]; }
  int switches_at(int level) const { return node_count_ / nodes_under_[level]; }

  // Index of the switch at `level` above node `id` (level 1 = its leaf switch).
  int switch_of(NodeId id, int level) const { return id / nodes_under_[level]; }
  int leaf_switch(NodeId id) const { return switch_of(id, 1); }
  // Level of the lowest switch above both nodes: 0 for the same node, 1 for the same leaf.
  int common_level(NodeId a, NodeId b) const;
  // Switch chips crossed between two nodes: 0 for the same node, else 2*common_level-1.
  int hop_count(NodeId a, NodeId b) const;

  std::string describe() const;

 private:
  std::vector<int> fanouts_;
  std::vector<int> nodes_under_;  // [0] = 1, [l] = nodes under a level-l switch
  int node_count_ = 0;
};

}  // namespace trellis
