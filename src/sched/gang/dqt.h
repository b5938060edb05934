// Dqt: time-space sharing with the Distributed Queue Tree (thesis chapter 7), as a
// GangScheduler. It owns the tree's nodes and the mailbox between them and acts as the slot
// driver above the root: once per slot it sends the root `next_turn`, delivers messages until
// the tree is quiet, and reads off which partitions run. Jobs reach their partitions through
// `add_task` messages steered by a task allocation policy.
//
// This is the protocol as the nodes of a distributed tree would run it. The simulator's `dqt-*`
// policies use DirectDqt (direct_dqt.h), which chooses the same slots with direct calls.
//
// Every job is rounded up to a partition size of the tree (a power of the fan-out).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sched/gang/dqt_jobs.h"
#include "sched/gang/dqt_node.h"
#include "sched/gang/gang_scheduler.h"

namespace trellis::gang {

struct DqtOptions {
  int fanout = 2;
  TaskAllocationPolicy policy = TaskAllocationPolicy::kFirstFitApa;
  bool fair = false;
};

class Dqt final : public GangScheduler, private DqtNodeHost {
 public:
  // An error if `processors` is not a power of the fan-out.
  static Result<std::unique_ptr<Dqt>> make(std::string name, int processors, DqtOptions options);

  const std::string& name() const override { return name_; }
  int processors() const override { return tree_.processors(); }
  Status submit(JobId job, int size) override;
  // Queues a job at a given tree node, bypassing the task allocation policy: for replaying a
  // recorded placement and for the thesis's worked examples.
  Status submit_at(JobId job, TreeNodeId node);
  const std::vector<SlotJob>& next_slot() override;
  void finish(JobId job) override;
  bool suspend(JobId job) override;
  void resume(JobId job) override;
  LoadIndex load() const override;
  int jobs_in_system() const override { return jobs_.size(); }

  // Inspection, for tests and reports.
  const PartitionTree& tree() const { return tree_; }
  const DqtNode& node(TreeNodeId id) const { return nodes_[id]; }
  // The tree node a job is queued at (-1 if unknown).
  TreeNodeId node_of(JobId job) const { return jobs_.node_of(job); }
  // The nodes running a job in the last slot, in tree order.
  const std::vector<TreeNodeId>& active_nodes() const { return active_nodes_; }
  // Slots in which the root started a new lap.
  long laps() const { return laps_; }
  uint64_t messages() const { return mailbox_.posted(); }

 private:
  Dqt(std::string name, PartitionTree tree, DqtOptions options);

  void enqueued(JobId job, TreeNodeId node) override { jobs_.placed(job, node); }
  void selected(TreeNodeId node) override { candidates_.push_back(node); }

  // Sends add_task for `job` to the root, bound for tree node `node`, and delivers it.
  void add_task(JobId job, TreeNodeId node);
  void deliver_all();
  void send_task_done(JobId job, TreeNodeId node);

  std::string name_;
  PartitionTree tree_;
  DqtOptions options_;
  Mailbox mailbox_;
  DqtRules rules_;
  std::vector<DqtNode> nodes_;
  DqtJobs jobs_;
  std::vector<TreeNodeId> candidates_;  // nodes that selected a job during this slot
  std::vector<TreeNodeId> active_nodes_;
  std::vector<SlotJob> running_;
  bool lap_started_this_slot_ = false;
  long laps_ = 0;
};

}  // namespace trellis::gang
