#include "sched/gang/direct_dqt.h"

#include <bit>
#include <span>

namespace trellis::gang {

namespace {

uint64_t bit(int k) {
  return uint64_t{1} << k;
}

}  // namespace

Result<std::unique_ptr<DirectDqt>> DirectDqt::make(std::string name, int processors,
                                                   DqtOptions options) {
  auto tree = PartitionTree::for_processors(processors, options.fanout);
  if (!tree) return tree.error();
  return std::unique_ptr<DirectDqt>(new DirectDqt(std::move(name), std::move(*tree), options));
}

DirectDqt::DirectDqt(std::string name, PartitionTree tree, DqtOptions options)
    : name_(std::move(name)),
      tree_(std::move(tree)),
      options_(options),
      all_children_(tree_.fanout() == 64 ? ~uint64_t{0} : bit(tree_.fanout()) - 1),
      nodes_(tree_.node_count()),
      summaries_(tree_.node_count()),
      first_processor_(tree_.node_count()) {
  // Every subtree starts empty; summaries are built leaves first.
  for (TreeNodeId n = tree_.node_count() - 1; n >= 0; --n) {
    std::span<const SubtreeSummary> children;
    if (!tree_.is_leaf(n)) children = {&summaries_[tree_.child(n, 0)], std::size_t(tree_.fanout())};
    summaries_[n] = summarize(tree_, tree_.depth(n), 0, children);
    first_processor_[n] = tree_.first_processor(n);
  }
}

void DirectDqt::catch_up(TreeNodeId node, uint64_t parent_stamp) {
  Node& x = nodes_[node];
  if (x.parent_stamp_seen == parent_stamp) return;
  // The deactivate this node missed: cancel a selection not yet run, forget the lap, and leave
  // the same reset pending for the children.
  x.parent_stamp_seen = parent_stamp;
  x.own.cancel();
  x.own.new_lap();
  x.child_rounded = 0;
  x.in_lap = false;
  ++x.lap_stamp;
}

void DirectDqt::catch_up_path(TreeNodeId node) {
  TreeNodeId path[kMaxTreeHeight + 1];
  int length = 0;
  for (TreeNodeId n = node; n != tree_.root(); n = tree_.parent(n)) path[length++] = n;
  TreeNodeId above = tree_.root();
  while (length > 0) {
    TreeNodeId n = path[--length];
    catch_up(n, nodes_[above].lap_stamp);
    above = n;
  }
}

void DirectDqt::select(TreeNodeId node) {
  nodes_[node].own.select();
  selected_.push_back(node);
}

bool DirectDqt::next_turn(TreeNodeId node) {
  Node& x = nodes_[node];
  x.in_lap = true;
  x.own.end_turn();  // the job selected last slot has had its turn
  if (x.own.turns_left()) {
    select(node);
    return false;  // rounding
  }
  // The own jobs have had their turn in this lap: the turn goes to the children. An empty
  // subtree has nothing left to run in this lap.
  x.child_rounded |= all_children_ & ~x.child_has_jobs;
  const std::size_t mark = selected_.size();
  uint64_t targets = x.child_has_jobs;
  // Fair-DQT leaves children that finished their lap alone.
  if (options_.fair) targets &= ~x.child_rounded;
  const TreeNodeId first_child = tree_.child(node, 0);
  uint64_t rounded_now = 0;
  for (uint64_t rest = targets; rest != 0; rest &= rest - 1) {
    const int k = std::countr_zero(rest);
    const TreeNodeId child = first_child + k;
    catch_up(child, x.lap_stamp);
    if (next_turn(child)) rounded_now |= bit(k);
  }
  x.child_rounded |= rounded_now;
  if ((x.child_rounded & all_children_) != all_children_) {
    // Plain DQT: children that finished early lap again while their siblings are still busy.
    if (!options_.fair) {
      for (uint64_t rest = rounded_now; rest != 0; rest &= rest - 1) {
        const TreeNodeId child = first_child + std::countr_zero(rest);
        activate(child);  // caught up above; it has just reset its own children's lap
      }
    }
    return false;  // rounding
  }
  // The whole subtree has lapped: end the lap below (withdrawing this slot's selections there).
  selected_.resize(mark);
  ++x.lap_stamp;
  return true;  // rounded
}

void DirectDqt::activate(TreeNodeId node) {
  Node& x = nodes_[node];
  x.own.new_lap();
  x.own.cancel();
  x.child_rounded = 0;
  x.in_lap = true;
  if (x.own.turns_left()) {
    select(node);
    return;
  }
  x.child_rounded |= all_children_ & ~x.child_has_jobs;
  const TreeNodeId first_child = tree_.child(node, 0);
  for (uint64_t rest = x.child_has_jobs; rest != 0; rest &= rest - 1) {
    const TreeNodeId child = first_child + std::countr_zero(rest);
    catch_up(child, x.lap_stamp);
    activate(child);
  }
}

const std::vector<SlotJob>& DirectDqt::next_slot() {
  selected_.clear();
  // The root answers rounded when the whole tree has lapped: start the next lap in this slot.
  if (next_turn(tree_.root()) && summaries_[tree_.root()].jobs > 0) {
    ++laps_;
    activate(tree_.root());
  }
  running_.clear();
  for (TreeNodeId n : selected_)
    running_.push_back(SlotJob{nodes_[n].own.current(), first_processor_[n], tree_.size(n)});
  return running_;
}

void DirectDqt::report_up(TreeNodeId node) {
  for (TreeNodeId n = node;; n = tree_.parent(n)) {
    std::span<const SubtreeSummary> children;
    if (!tree_.is_leaf(n)) children = {&summaries_[tree_.child(n, 0)], std::size_t(tree_.fanout())};
    SubtreeSummary now = summarize(tree_, tree_.depth(n), nodes_[n].own.size(), children);
    if (now == summaries_[n]) return;
    summaries_[n] = now;
    if (n == tree_.root()) return;
    uint64_t& has_jobs = nodes_[tree_.parent(n)].child_has_jobs;
    if (now.jobs > 0) {
      has_jobs |= bit(tree_.child_index(n));
    } else {
      has_jobs &= ~bit(tree_.child_index(n));
    }
  }
}

void DirectDqt::add_task(JobId job, TreeNodeId node) {
  catch_up_path(node);
  Node& x = nodes_[node];
  x.own.add(job, /*lap_over=*/x.in_lap && !x.own.turns_left());
  jobs_.placed(job, node);
  report_up(node);
}

void DirectDqt::task_done(JobId job, TreeNodeId node) {
  catch_up_path(node);
  nodes_[node].own.remove(job);
  report_up(node);
}

Status DirectDqt::submit(JobId job, int size) {
  auto job_depth = jobs_.admit(job, size, tree_);
  if (!job_depth) return job_depth.error();
  // The task allocation policy steers the job down from the root, one level at a time.
  TreeNodeId node = tree_.root();
  while (tree_.depth(node) < *job_depth) {
    TreeNodeId first_child = tree_.child(node, 0);
    std::span<const SubtreeSummary> children{&summaries_[first_child], std::size_t(tree_.fanout())};
    node = first_child + choose_child(options_.policy, children, *job_depth);
  }
  add_task(job, node);
  return Ok{};
}

Status DirectDqt::submit_at(JobId job, TreeNodeId node) {
  if (auto ok = jobs_.admit_at(job, node, tree_); !ok) return ok;
  add_task(job, node);
  return Ok{};
}

void DirectDqt::finish(JobId job) {
  if (auto node = jobs_.remove(job)) task_done(job, *node);
}

bool DirectDqt::suspend(JobId job) {
  task_done(job, jobs_.suspend(job));
  return true;
}

void DirectDqt::resume(JobId job) {
  add_task(job, jobs_.resume(job));
}

LoadIndex DirectDqt::load() const {
  const SubtreeSummary& s = summaries_[tree_.root()];
  return LoadIndex{s.max_tqlb, s.min_tqlb};
}

}  // namespace trellis::gang
