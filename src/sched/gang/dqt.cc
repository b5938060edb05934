#include "sched/gang/dqt.h"

#include <algorithm>
#include <cassert>

namespace trellis::gang {

Result<std::unique_ptr<Dqt>> Dqt::make(std::string name, int processors, DqtOptions options) {
  auto tree = PartitionTree::for_processors(processors, options.fanout);
  if (!tree) return tree.error();
  return std::unique_ptr<Dqt>(new Dqt(std::move(name), std::move(*tree), options));
}

Dqt::Dqt(std::string name, PartitionTree tree, DqtOptions options)
    : name_(std::move(name)),
      tree_(std::move(tree)),
      options_(options),
      rules_{tree_, mailbox_, options.policy, options.fair} {
  nodes_.reserve(tree_.node_count());
  for (TreeNodeId i = 0; i < tree_.node_count(); ++i) nodes_.emplace_back(i, tree_);
}

Status Dqt::submit(JobId job, int size) {
  auto partition = tree_.partition_size_for(size);
  if (!partition) return fail("job " + std::to_string(job) + ": " + partition.error().message);
  if (where_.count(job)) return fail("job " + std::to_string(job) + " was submitted twice");
  where_[job] = Placement{};
  Message m;
  m.kind = MessageKind::kAddTask;
  m.to = tree_.root();
  m.job = job;
  m.job_depth = tree_.depth_for_size(*partition);
  mailbox_.post(m);
  // Aggregates settle before the next decision, so every placement sees up-to-date summaries.
  deliver_all();
  return Ok{};
}

Status Dqt::submit_at(JobId job, TreeNodeId node) {
  if (node < 0 || node >= tree_.node_count())
    return fail("job " + std::to_string(job) + ": tree node " + std::to_string(node) +
                " is outside 0.." + std::to_string(tree_.node_count() - 1));
  if (where_.count(job)) return fail("job " + std::to_string(job) + " was submitted twice");
  where_[job] = Placement{};
  add_task(job, node);
  return Ok{};
}

void Dqt::add_task(JobId job, TreeNodeId node) {
  Message m;
  m.kind = MessageKind::kAddTask;
  m.to = tree_.root();
  m.job = job;
  m.job_depth = tree_.depth(node);
  m.target = node;
  mailbox_.post(m);
  deliver_all();
}

void Dqt::deliver_all() {
  while (!mailbox_.empty()) {
    Message m = mailbox_.take();
    if (m.to != kSlotDriver) {
      const SubtreeSummary* info =
          m.kind == MessageKind::kInfo ? &mailbox_.last_summary() : nullptr;
      nodes_[m.to].receive(m, info, rules_, *this);
      continue;
    }
    // The root answered the slot's next_turn. `rounded` means the whole tree has lapped: start
    // the next lap in this same slot.
    if (m.kind == MessageKind::kRounded && !lap_started_this_slot_ &&
        nodes_[tree_.root()].summary().jobs > 0) {
      lap_started_this_slot_ = true;
      ++laps_;
      Message activate;
      activate.kind = MessageKind::kActivate;
      activate.to = tree_.root();
      mailbox_.post(activate);
    }
  }
}

const std::vector<RunningJob>& Dqt::next_slot() {
  candidates_.clear();
  lap_started_this_slot_ = false;
  Message turn;
  turn.kind = MessageKind::kNextTurn;
  turn.to = tree_.root();
  mailbox_.post(turn);
  deliver_all();

  active_nodes_.clear();
  for (TreeNodeId n : candidates_)
    if (nodes_[n].running()) active_nodes_.push_back(n);
  std::sort(active_nodes_.begin(), active_nodes_.end());
  active_nodes_.erase(std::unique(active_nodes_.begin(), active_nodes_.end()), active_nodes_.end());
  running_.clear();
  for (TreeNodeId n : active_nodes_)
    running_.push_back(
        RunningJob{nodes_[n].running_job(), tree_.first_processor(n), tree_.size(n)});
  return running_;
}

TreeNodeId Dqt::node_of(JobId job) const {
  auto it = where_.find(job);
  return it == where_.end() ? -1 : it->second.node;
}

void Dqt::send_task_done(JobId job, TreeNodeId node) {
  Message m;
  m.kind = MessageKind::kTaskDone;
  m.to = node;
  m.job = job;
  mailbox_.post(m);
  deliver_all();
}

void Dqt::finish(JobId job) {
  auto it = where_.find(job);
  assert(it != where_.end() && "finish() of a job not in the system");
  Placement p = it->second;
  where_.erase(it);
  if (!p.suspended) send_task_done(job, p.node);
}

bool Dqt::suspend(JobId job) {
  auto it = where_.find(job);
  assert(it != where_.end() && !it->second.suspended);
  it->second.suspended = true;
  send_task_done(job, it->second.node);
  return true;
}

void Dqt::resume(JobId job) {
  auto it = where_.find(job);
  assert(it != where_.end() && it->second.suspended);
  it->second.suspended = false;
  TreeNodeId node = it->second.node;
  add_task(job, node);
}

LoadIndex Dqt::load() const {
  const SubtreeSummary& s = nodes_[tree_.root()].summary();
  return LoadIndex{s.max_tqlb, s.min_tqlb};
}

}  // namespace trellis::gang
