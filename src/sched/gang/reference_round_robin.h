// ReferenceRoundRobin: the DQT round robin restated as one centralized recursive procedure over
// fixed queues (the semantics the thesis digest, section 3.6.4, checked against Fig. 7.2). It has
// no messages and no incremental state: each slot it asks, top down, whether a subtree "would
// round" by looking at the whole subtree. It serves as the oracle both DQT engines (Dqt and
// DirectDqt) are tested against on random trees, and as a baseline of `trellis bench gang`.
//
// Per node: a persistent round-robin pointer, the number of own jobs run in this lap, and for
// each child whether it has finished a lap. Each slot, from the root:
//   1. a node with own jobs left in this lap runs the next one on its whole partition;
//   2. otherwise, if every child has finished a lap or would finish now, it reports "rounded";
//   3. otherwise it passes the turn to each child; a child that would finish now is marked
//      finished and (plain DQT) restarted at once, or (Fair-DQT) left idle;
// and when the root would report "rounded", a new lap starts in the same slot.
#pragma once

#include <vector>

#include "sched/gang/gang_scheduler.h"
#include "sched/gang/partition_tree.h"

namespace trellis::gang {

class ReferenceRoundRobin {
 public:
  // queues[i]: the jobs of tree node i in round-robin order (missing nodes have none).
  ReferenceRoundRobin(PartitionTree tree, std::vector<std::vector<JobId>> queues, bool fair);

  // The jobs of the next slot, in tree-node order.
  std::vector<SlotJob> next_slot();

 private:
  struct Node {
    std::size_t next = 0;
    std::size_t ran = 0;
    std::vector<char> finished;  // per child
  };
  bool empty_subtree(TreeNodeId n) const { return !has_jobs_[n]; }
  bool own_exhausted(TreeNodeId n) const { return nodes_[n].ran >= queues_[n].size(); }
  bool would_round(TreeNodeId n) const;
  void reset(TreeNodeId n);
  void turn(TreeNodeId n, std::vector<SlotJob>& out);
  int children(TreeNodeId n) const { return tree_.is_leaf(n) ? 0 : tree_.fanout(); }

  PartitionTree tree_;
  std::vector<std::vector<JobId>> queues_;
  bool fair_;
  std::vector<Node> nodes_;
  std::vector<char> has_jobs_;  // the subtree holds jobs
};

}  // namespace trellis::gang
