// DirectDqt: the Distributed Queue Tree's round robin (thesis chapter 7) with every message of
// the protocol delivered as a direct call from one tree node to the next. It chooses exactly the
// slots the message-passing Dqt chooses (tests check this slot by slot on random trees and random
// arrivals, finishes, suspends and resumes), at a fraction of the cost, so it is what the `dqt-*`
// and `fair-dqt-*` policies run in simulation. Dqt stays the protocol as the nodes of a
// distributed tree would run it.
//
// What changes is how the messages travel, not what the nodes decide:
//   - next_turn is a call down the tree and its answer (rounding or rounded) the return value, so
//     a slot is one depth-first pass over the nodes that hold the turn.
//   - deactivate is not flooded through the subtree. A node that finishes its lap bumps its lap
//     stamp; a child whose recorded stamp differs resets its lap state the next time anything
//     reaches it, and passes the reset on in the same way. Selections made in the finished subtree
//     during this slot are withdrawn at once: in a depth-first pass they are the tail of the
//     slot's selection list.
//   - A slot's partitions come out in the order the pass selects them, not left to right.
//   - Summaries (info) are recomputed along the path from a changed queue to the root.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sched/gang/dqt.h"
#include "sched/gang/dqt_jobs.h"
#include "sched/gang/round_robin_queue.h"

namespace trellis::gang {

class DirectDqt final : public GangScheduler {
 public:
  // An error if `processors` is not a power of the fan-out.
  static Result<std::unique_ptr<DirectDqt>> make(std::string name, int processors,
                                                 DqtOptions options);

  const std::string& name() const override { return name_; }
  int processors() const override { return tree_.processors(); }
  Status submit(JobId job, int size) override;
  // Queues a job at a given tree node, bypassing the task allocation policy (as Dqt::submit_at).
  Status submit_at(JobId job, TreeNodeId node);
  const std::vector<SlotJob>& next_slot() override;
  void finish(JobId job) override;
  bool suspend(JobId job) override;
  void resume(JobId job) override;
  LoadIndex load() const override;
  int jobs_in_system() const override { return jobs_.size(); }

  const PartitionTree& tree() const { return tree_; }
  // The tree node a job is queued at (-1 if unknown).
  TreeNodeId node_of(JobId job) const { return jobs_.node_of(job); }
  // The nodes running a job in the last slot, in the order they were selected.
  const std::vector<TreeNodeId>& active_nodes() const { return selected_; }
  // Slots in which the root started a new lap.
  long laps() const { return laps_; }

 private:
  DirectDqt(std::string name, PartitionTree tree, DqtOptions options);

  // One tree node's protocol state. Summaries live apart (summaries_) so the round robin's hot
  // state stays small.
  struct Node {
    RoundRobinQueue own;
    uint64_t lap_stamp = 0;          // bumped when the node ends a lap below itself
    uint64_t parent_stamp_seen = 0;  // the parent's lap_stamp when this node was last reset
    uint64_t child_has_jobs = 0;     // bit k: child k's subtree holds jobs
    uint64_t child_rounded = 0;      // bit k: child k has finished a lap in this lap of ours
    bool in_lap = false;             // activated or turned since the last reset
  };

  // Applies a pending reset (a lazily delivered deactivate) to `node`, whose parent's current
  // lap stamp is `parent_stamp`.
  void catch_up(TreeNodeId node, uint64_t parent_stamp);
  void catch_up_path(TreeNodeId node);  // root to `node`
  // The protocol's messages, as calls. next_turn returns true for `rounded`.
  bool next_turn(TreeNodeId node);
  void activate(TreeNodeId node);
  void select(TreeNodeId node);

  void add_task(JobId job, TreeNodeId node);
  void task_done(JobId job, TreeNodeId node);
  // Recomputes the summaries from `node` up to the root after its queue changed.
  void report_up(TreeNodeId node);

  std::string name_;
  PartitionTree tree_;
  DqtOptions options_;
  uint64_t all_children_ = 0;  // bit k set for every child index k
  std::vector<Node> nodes_;
  std::vector<SubtreeSummary> summaries_;  // per node; a node's children are contiguous
  std::vector<int> first_processor_;
  DqtJobs jobs_;
  std::vector<TreeNodeId> selected_;  // this slot's selections
  std::vector<SlotJob> running_;
  long laps_ = 0;
};

}  // namespace trellis::gang
