#include "sched/gang/dqt_node.h"

#include <cassert>

namespace trellis::gang {

DqtNode::DqtNode(TreeNodeId id, const PartitionTree& tree)
    : id_(id),
      depth_(tree.depth(id)),
      children_(tree.is_leaf(id) ? 0 : tree.fanout()),
      all_children_(children_ == 64 ? ~uint64_t{0} : (uint64_t{1} << children_) - 1) {
  // Every child starts as an empty subtree one level down.
  aggregates_ = std::make_unique<Aggregates>();
  if (children_ > 0) aggregates_->children.assign(children_, summarize(tree, depth_ + 1, 0, {}));
  aggregates_->own = summarize(tree, depth_, 0, aggregates_->children);
}

void DqtNode::receive(const Message& m, const SubtreeSummary* info, const DqtRules& rules,
                      DqtNodeHost& host) {
  switch (m.kind) {
    case MessageKind::kAddTask:
      return on_add_task(m, rules, host);
    case MessageKind::kTaskDone:
      return on_task_done(m, rules);
    case MessageKind::kActivate:
      return on_activate(rules, host);
    case MessageKind::kDeactivate:
      return on_deactivate(rules);
    case MessageKind::kNextTurn:
      return on_next_turn(rules, host);
    case MessageKind::kRounding:
    case MessageKind::kRounded:
      return on_reply(m, rules);
    case MessageKind::kInfo:
      assert(info != nullptr);
      return on_info(m, *info, rules);
  }
}

void DqtNode::send(MessageKind kind, int child, const DqtRules& rules) const {
  Message down;
  down.kind = kind;
  down.from = id_;
  down.to = rules.tree.child(id_, child);
  rules.mailbox.post(down);
}

void DqtNode::on_add_task(const Message& m, const DqtRules& rules, DqtNodeHost& host) {
  if (m.job_depth != depth_) {
    int k = 0;
    if (m.target >= 0) {
      TreeNodeId toward = m.target;
      while (rules.tree.depth(toward) > depth_ + 1) toward = rules.tree.parent(toward);
      k = rules.tree.child_index(toward);
    } else {
      k = choose_child(rules.policy, aggregates_->children, m.job_depth);
    }
    Message down = m;
    down.from = id_;
    down.to = rules.tree.child(id_, k);
    rules.mailbox.post(down);
    return;
  }
  queue_.add(m.job, /*lap_over=*/in_lap_ && !queue_.turns_left());
  if (state_ == NodeState::kIdle) state_ = NodeState::kReady;
  host.enqueued(m.job, id_);
  report_summary(rules);
}

void DqtNode::on_task_done(const Message& m, const DqtRules& rules) {
  queue_.remove(m.job);
  if (queue_.empty() && state_ == NodeState::kReady) state_ = NodeState::kIdle;
  report_summary(rules);
}

void DqtNode::reset_lap() {
  queue_.new_lap();
  awaiting_ = 0;
  child_rounded_ = 0;
  child_rounded_now_ = 0;
}

void DqtNode::run_own_job(DqtNodeHost& host) {
  queue_.select();
  state_ = NodeState::kRounding;
  host.selected(id_);
}

int DqtNode::send_to_children(MessageKind kind, const DqtRules& rules, bool skip_rounded) {
  // An empty subtree has nothing left to run in this lap.
  child_rounded_ |= all_children_ & ~child_has_jobs_;
  uint64_t targets = child_has_jobs_;
  if (skip_rounded) targets &= ~child_rounded_;
  int sent = 0;
  for (uint64_t rest = targets; rest != 0; rest &= rest - 1) {
    send(kind, std::countr_zero(rest), rules);
    ++sent;
  }
  child_in_lap_ |= targets;
  return sent;
}

void DqtNode::on_activate(const DqtRules& rules, DqtNodeHost& host) {
  reset_lap();
  in_lap_ = true;
  queue_.cancel();
  if (queue_.turns_left()) {
    run_own_job(host);
    return;
  }
  state_ = NodeState::kRounded;
  send_to_children(MessageKind::kActivate, rules, false);
}

void DqtNode::on_deactivate(const DqtRules& rules) {
  // A job selected in this slot has not run: cancelling it leaves the pointer in place.
  queue_.cancel();
  reset_lap();
  in_lap_ = false;
  state_ = queue_.empty() ? NodeState::kIdle : NodeState::kReady;
  for (uint64_t rest = child_in_lap_; rest != 0; rest &= rest - 1)
    send(MessageKind::kDeactivate, std::countr_zero(rest), rules);
  child_in_lap_ = 0;
}

void DqtNode::on_next_turn(const DqtRules& rules, DqtNodeHost& host) {
  in_lap_ = true;
  queue_.end_turn();  // the job selected last slot has had its turn
  if (queue_.turns_left()) {
    run_own_job(host);
    reply(MessageKind::kRounding, rules);
    return;
  }
  state_ = NodeState::kRounded;
  child_rounded_now_ = 0;
  // Fair-DQT leaves children that finished their lap alone; plain DQT has already re-activated
  // them, so they are in a new lap and take the turn like the others.
  awaiting_ = send_to_children(MessageKind::kNextTurn, rules, rules.fair);
  if (awaiting_ == 0) finish_turn(rules);
}

void DqtNode::on_reply(const Message& m, const DqtRules& rules) {
  if (m.kind == MessageKind::kRounded) {
    uint64_t k = bit(rules.tree.child_index(m.from));
    child_rounded_ |= k;
    child_rounded_now_ |= k;
  }
  assert(awaiting_ > 0);
  if (--awaiting_ == 0) finish_turn(rules);
}

void DqtNode::finish_turn(const DqtRules& rules) {
  if ((child_rounded_ & all_children_) == all_children_) {
    // The whole subtree has lapped: end the lap below (cancelling selections made in this slot)
    // and tell the parent.
    for (uint64_t rest = child_in_lap_; rest != 0; rest &= rest - 1)
      send(MessageKind::kDeactivate, std::countr_zero(rest), rules);
    child_in_lap_ = 0;
    reply(MessageKind::kRounded, rules);
    return;
  }
  if (!rules.fair) {
    // Children that finished early lap again while their siblings are still busy: this is what
    // gives lightly loaded branches extra slots.
    uint64_t again = child_rounded_now_ & child_has_jobs_;
    for (uint64_t rest = again; rest != 0; rest &= rest - 1)
      send(MessageKind::kActivate, std::countr_zero(rest), rules);
    child_in_lap_ |= again;
  }
  reply(MessageKind::kRounding, rules);
}

void DqtNode::reply(MessageKind kind, const DqtRules& rules) {
  Message up;
  up.kind = kind;
  up.from = id_;
  up.to = id_ == rules.tree.root() ? kSlotDriver : rules.tree.parent(id_);
  rules.mailbox.post(up);
}

void DqtNode::on_info(const Message& m, const SubtreeSummary& info, const DqtRules& rules) {
  int k = rules.tree.child_index(m.from);
  aggregates_->children[k] = info;
  if (info.jobs > 0) {
    child_has_jobs_ |= bit(k);
  } else {
    child_has_jobs_ &= ~bit(k);
  }
  report_summary(rules);
}

void DqtNode::report_summary(const DqtRules& rules) {
  SubtreeSummary now = summarize(rules.tree, depth_, queue_.size(), aggregates_->children);
  if (now == aggregates_->own) return;
  aggregates_->own = now;
  if (id_ == rules.tree.root()) return;
  Message up;
  up.kind = MessageKind::kInfo;
  up.from = id_;
  up.to = rules.tree.parent(id_);
  rules.mailbox.post_info(up, aggregates_->own);
}

}  // namespace trellis::gang
