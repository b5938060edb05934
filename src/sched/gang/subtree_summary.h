// SubtreeSummary: the aggregate a DQT node reports to its parent in `info` messages whenever
// its subtree's queues change (thesis section 7.1.5). The task allocation policies decide from
// these alone, so a parent never needs to look inside a child.
#pragma once

#include <array>
#include <span>

#include "sched/gang/partition_tree.h"

namespace trellis::gang {

struct SubtreeSummary {
  int jobs = 0;  // jobs queued anywhere in the subtree
  // M_i = L_i + max over children of M (0 below the leaves): the largest TQLB counted from i.
  int max_tqlb = 0;
  // N_i = L_i + min over children of N: the smallest TQLB counted from i.
  int min_tqlb = 0;
  // A_i = L_i * S_i + sum over children of A: the processors the subtree's jobs ask for.
  long long apa = 0;
  // For every depth d at or below the node: the shortest queue among the subtree's nodes at
  // depth d (the FF policy's vector, thesis Fig. 7.8). Entries above the node's depth are 0.
  std::array<int, kMaxTreeHeight + 1> shortest_queue{};

  friend bool operator==(const SubtreeSummary&, const SubtreeSummary&) = default;
};

// The summary of a node with `own_queue` jobs in its own queue, at `depth` in `tree`, whose
// children reported `children` (empty for a leaf).
SubtreeSummary summarize(const PartitionTree& tree, int depth, int own_queue,
                         std::span<const SubtreeSummary> children);

}  // namespace trellis::gang
