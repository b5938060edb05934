// PartitionTree: the shape of a Distributed Queue Tree (thesis section 7.1): a complete tree of
// nested partitions with fan-out w and height h over P = w^h processors. Node 0 is the whole
// machine; nodes are numbered breadth first, so the children of node i are i*w+1 ... i*w+w, and
// the nodes at one depth cover the processors left to right. w = 2 is the binary buddy system.
//
// A job of s processors lives in a partition of the smallest size w^k >= s; the depth of that
// partition is h - k.
#pragma once

#include <vector>

#include "core/result.h"

namespace trellis::gang {

using TreeNodeId = int;

// The deepest tree the schedulers accept (2^24 processors in a binary tree); keeps per-depth
// arrays small and fixed.
constexpr int kMaxTreeHeight = 24;
// The widest node: a node keeps per-child flags in one 64-bit word.
constexpr int kMaxFanout = 64;

class PartitionTree {
 public:
  // 2 <= fanout <= kMaxFanout, 0 <= height <= kMaxTreeHeight, and fanout^height fits in an int.
  static Result<PartitionTree> make(int fanout, int height);
  // The tree whose leaves are `processors` single processors; an error unless processors is a
  // power of the fan-out.
  static Result<PartitionTree> for_processors(int processors, int fanout);

  int fanout() const { return fanout_; }
  int height() const { return height_; }
  int processors() const { return processors_; }
  int node_count() const { return static_cast<int>(depth_of_.size()); }

  TreeNodeId root() const { return 0; }
  TreeNodeId parent(TreeNodeId node) const { return (node - 1) / fanout_; }
  TreeNodeId child(TreeNodeId node, int k) const { return node * fanout_ + 1 + k; }
  // Which child of its parent the node is (0 = leftmost).
  int child_index(TreeNodeId node) const { return (node - 1) % fanout_; }
  bool is_leaf(TreeNodeId node) const { return depth(node) == height_; }
  bool is_ancestor_or_self(TreeNodeId ancestor, TreeNodeId node) const;

  int depth(TreeNodeId node) const { return depth_of_[node]; }
  int size_at_depth(int depth) const { return size_at_depth_[depth]; }
  int size(TreeNodeId node) const { return size_at_depth_[depth(node)]; }
  TreeNodeId first_at_depth(int depth) const { return first_at_depth_[depth]; }
  // The lowest-numbered processor of the node's partition; it covers [first, first + size).
  int first_processor(TreeNodeId node) const;

  // The size of the partition a job of `job_size` processors occupies (the smallest w^k >= it),
  // or an error naming the size when it is below 1 or above the machine.
  Result<int> partition_size_for(int job_size) const;
  // The depth of partitions of exactly `partition_size` processors, or -1 if there are none.
  int depth_for_size(int partition_size) const;

 private:
  PartitionTree(int fanout, int height);

  int fanout_ = 2;
  int height_ = 0;
  int processors_ = 1;
  std::vector<int> depth_of_;
  std::vector<int> size_at_depth_;
  std::vector<TreeNodeId> first_at_depth_;
};

}  // namespace trellis::gang
