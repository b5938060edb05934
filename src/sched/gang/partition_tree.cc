#include "sched/gang/partition_tree.h"

#include <climits>
#include <string>

namespace trellis::gang {

Result<PartitionTree> PartitionTree::make(int fanout, int height) {
  if (fanout < 2 || fanout > kMaxFanout)
    return fail("partition tree: fan-out must be 2.." + std::to_string(kMaxFanout) + ", got " +
                std::to_string(fanout));
  if (height < 0 || height > kMaxTreeHeight)
    return fail("partition tree: height must be 0.." + std::to_string(kMaxTreeHeight) + ", got " +
                std::to_string(height));
  long long processors = 1;
  long long nodes = 1;
  for (int d = 0; d < height; ++d) {
    processors *= fanout;
    nodes += processors;
    if (nodes > INT_MAX / 2)
      return fail("partition tree: " + std::to_string(fanout) + "^" + std::to_string(height) +
                  " processors is too many");
  }
  return PartitionTree(fanout, height);
}

Result<PartitionTree> PartitionTree::for_processors(int processors, int fanout) {
  if (fanout < 2 || fanout > kMaxFanout)
    return fail("partition tree: fan-out must be 2.." + std::to_string(kMaxFanout) + ", got " +
                std::to_string(fanout));
  if (processors < 1)
    return fail("partition tree: processors must be positive, got " + std::to_string(processors));
  int height = 0;
  long long p = 1;
  while (p < processors) {
    p *= fanout;
    ++height;
  }
  if (p != processors)
    return fail("partition tree: " + std::to_string(processors) +
                " processors is not a power of the fan-out " + std::to_string(fanout) +
                " (a DQT needs fan-out^height processors)");
  return make(fanout, height);
}

PartitionTree::PartitionTree(int fanout, int height) : fanout_(fanout), height_(height) {
  int width = 1;
  for (int d = 0; d <= height; ++d) {
    first_at_depth_.push_back(static_cast<TreeNodeId>(depth_of_.size()));
    depth_of_.insert(depth_of_.end(), width, d);
    if (d < height) width *= fanout;
  }
  processors_ = width;
  size_at_depth_.resize(height + 1);
  int size = 1;
  for (int d = height; d >= 0; --d) {
    size_at_depth_[d] = size;
    if (d > 0) size *= fanout;
  }
}

bool PartitionTree::is_ancestor_or_self(TreeNodeId ancestor, TreeNodeId node) const {
  while (depth(node) > depth(ancestor)) node = parent(node);
  return node == ancestor;
}

int PartitionTree::first_processor(TreeNodeId node) const {
  int d = depth(node);
  return (node - first_at_depth_[d]) * size_at_depth_[d];
}

Result<int> PartitionTree::partition_size_for(int job_size) const {
  if (job_size < 1 || job_size > processors_)
    return fail("job size " + std::to_string(job_size) + " is outside 1.." +
                std::to_string(processors_) + " processors");
  for (int d = height_; d >= 0; --d)
    if (size_at_depth_[d] >= job_size) return size_at_depth_[d];
  return processors_;
}

int PartitionTree::depth_for_size(int partition_size) const {
  for (int d = 0; d <= height_; ++d)
    if (size_at_depth_[d] == partition_size) return d;
  return -1;
}

}  // namespace trellis::gang
