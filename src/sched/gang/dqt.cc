#include "sched/gang/dqt.h"

#include <algorithm>

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
  auto depth = jobs_.admit(job, size, tree_);
  if (!depth) return depth.error();
  Message m;
  m.kind = MessageKind::kAddTask;
  m.to = tree_.root();
  m.job = job;
  m.job_depth = *depth;
  mailbox_.post(m);
  // Aggregates settle before the next decision, so every placement sees up-to-date summaries.
  deliver_all();
  return Ok{};
}

Status Dqt::submit_at(JobId job, TreeNodeId node) {
  if (auto ok = jobs_.admit_at(job, node, tree_); !ok) return ok;
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

const std::vector<SlotJob>& Dqt::next_slot() {
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
    running_.push_back(SlotJob{nodes_[n].running_job(), tree_.first_processor(n), tree_.size(n)});
  return running_;
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
  if (auto node = jobs_.remove(job)) send_task_done(job, *node);
}

bool Dqt::suspend(JobId job) {
  send_task_done(job, jobs_.suspend(job));
  return true;
}

void Dqt::resume(JobId job) {
  add_task(job, jobs_.resume(job));
}

LoadIndex Dqt::load() const {
  const SubtreeSummary& s = nodes_[tree_.root()].summary();
  return LoadIndex{s.max_tqlb, s.min_tqlb};
}

}  // namespace trellis::gang
