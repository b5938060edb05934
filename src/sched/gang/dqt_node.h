// DqtNode: one node of the Distributed Queue Tree: the run queue of one partition and its part
// of the distributed round-robin protocol (thesis sections 7.1.1-7.1.2). It reacts to one
// Message at a time and answers only by posting messages.
//
// Round-robin state kept per node: the own queue with its persistent pointer and the count of own
// jobs that had their turn in this lap (RoundRobinQueue), and for each child whether it has
// answered `rounded` in this lap. A selection cancelled by `deactivate` in the same slot leaves
// the pointer where it was.
#pragma once

#include <bit>
#include <cstdint>
#include <memory>
#include <vector>

#include "sched/gang/mailbox.h"
#include "sched/gang/round_robin_queue.h"
#include "sched/gang/task_allocation.h"

namespace trellis::gang {

enum class NodeState {
  kIdle,      // own queue empty, not taking part in a lap
  kReady,     // jobs queued, waiting to be activated
  kRounding,  // running one of its own jobs on the whole partition
  kRounded,   // own jobs have had their turn in this lap; the turn is with the children
};

// What a node calls back into besides the mailbox: bookkeeping the slot driver needs.
class DqtNodeHost {
 public:
  virtual void enqueued(JobId job, TreeNodeId node) = 0;  // the job's partition is now known
  virtual void selected(TreeNodeId node) = 0;             // the node runs a job in this slot

 protected:
  ~DqtNodeHost() = default;
};

// The rules every node of one tree shares, and the mailbox its messages go through.
struct DqtRules {
  const PartitionTree& tree;
  Mailbox& mailbox;
  TaskAllocationPolicy policy;
  // Fair-DQT: a node never re-activates a child that has finished its lap; only the root starts
  // laps, so every job runs exactly once per lap.
  bool fair;
};

class DqtNode {
 public:
  DqtNode(TreeNodeId id, const PartitionTree& tree);

  // `info` is the summary an `info` message carries (null for other kinds).
  void receive(const Message& message, const SubtreeSummary* info, const DqtRules& rules,
               DqtNodeHost& host);

  TreeNodeId id() const { return id_; }
  NodeState state() const { return state_; }
  const std::vector<JobId>& queue() const { return queue_.jobs(); }
  // Whether the node runs one of its jobs in the current slot, and which.
  bool running() const { return queue_.selected(); }
  JobId running_job() const { return queue_.current(); }
  // The summary the node last reported to its parent.
  const SubtreeSummary& summary() const { return aggregates_->own; }

 private:
  void on_add_task(const Message& m, const DqtRules& rules, DqtNodeHost& host);
  void on_task_done(const Message& m, const DqtRules& rules);
  void on_activate(const DqtRules& rules, DqtNodeHost& host);
  void on_deactivate(const DqtRules& rules);
  void on_next_turn(const DqtRules& rules, DqtNodeHost& host);
  void on_reply(const Message& m, const DqtRules& rules);
  void on_info(const Message& m, const SubtreeSummary& info, const DqtRules& rules);

  void reset_lap();
  void run_own_job(DqtNodeHost& host);
  // Sends `kind` to every child whose subtree holds jobs; the others count as rounded.
  int send_to_children(MessageKind kind, const DqtRules& rules, bool skip_rounded);
  void send(MessageKind kind, int child, const DqtRules& rules) const;
  void finish_turn(const DqtRules& rules);
  void reply(MessageKind kind, const DqtRules& rules);
  void report_summary(const DqtRules& rules);
  static uint64_t bit(int k) { return uint64_t{1} << k; }

  TreeNodeId id_;
  int depth_;
  int children_;
  RoundRobinQueue queue_;
  bool in_lap_ = false;  // activated or turned since the last deactivate
  int awaiting_ = 0;     // replies to a forwarded next_turn still to come
  // Per-child flags, bit k for child k:
  uint64_t all_children_ = 0;
  uint64_t child_has_jobs_ = 0;     // its subtree holds jobs (from its last info)
  uint64_t child_rounded_ = 0;      // answered rounded in this lap
  uint64_t child_rounded_now_ = 0;  // answered rounded to the current next_turn
  uint64_t child_in_lap_ = 0;       // sent activate or next_turn since the last deactivate
  // Summaries change only when queues do; kept apart so the round robin's hot state stays small.
  struct Aggregates {
    SubtreeSummary own;                    // last reported to the parent
    std::vector<SubtreeSummary> children;  // last received from each child
  };
  std::unique_ptr<Aggregates> aggregates_;
  NodeState state_ = NodeState::kIdle;
};

}  // namespace trellis::gang
