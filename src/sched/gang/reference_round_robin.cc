#include "sched/gang/reference_round_robin.h"

#include <algorithm>

namespace trellis::gang {

ReferenceRoundRobin::ReferenceRoundRobin(PartitionTree tree, std::vector<std::vector<JobId>> queues,
                                         bool fair)
    : tree_(std::move(tree)), queues_(std::move(queues)), fair_(fair) {
  queues_.resize(tree_.node_count());
  nodes_.resize(tree_.node_count());
  has_jobs_.assign(tree_.node_count(), 0);
  for (TreeNodeId n = tree_.node_count() - 1; n >= 0; --n) {
    nodes_[n].finished.assign(children(n), 0);
    bool any = !queues_[n].empty();
    for (int k = 0; k < children(n); ++k) any = any || has_jobs_[tree_.child(n, k)];
    has_jobs_[n] = any;
  }
}

bool ReferenceRoundRobin::would_round(TreeNodeId n) const {
  if (!own_exhausted(n)) return false;
  for (int k = 0; k < children(n); ++k)
    if (!nodes_[n].finished[k] && !would_round(tree_.child(n, k))) return false;
  return true;
}

void ReferenceRoundRobin::reset(TreeNodeId n) {
  nodes_[n].ran = 0;
  std::fill(nodes_[n].finished.begin(), nodes_[n].finished.end(), 0);
  for (int k = 0; k < children(n); ++k) reset(tree_.child(n, k));
}

void ReferenceRoundRobin::turn(TreeNodeId n, std::vector<SlotJob>& out) {
  Node& node = nodes_[n];
  if (!own_exhausted(n)) {
    out.push_back(SlotJob{queues_[n][node.next], tree_.first_processor(n), tree_.size(n)});
    node.next = (node.next + 1) % queues_[n].size();
    ++node.ran;
    return;
  }
  if (would_round(n)) return;
  for (int k = 0; k < children(n); ++k) {
    TreeNodeId c = tree_.child(n, k);
    if (would_round(c)) {
      node.finished[k] = 1;
      if (fair_ || empty_subtree(c)) continue;
      reset(c);  // plain DQT: the early finisher laps again
    }
    turn(c, out);
  }
}

std::vector<SlotJob> ReferenceRoundRobin::next_slot() {
  std::vector<SlotJob> out;
  if (empty_subtree(tree_.root())) return out;
  if (would_round(tree_.root())) reset(tree_.root());
  turn(tree_.root(), out);
  std::sort(out.begin(), out.end(),
            [](const SlotJob& a, const SlotJob& b) { return a.first < b.first; });
  return out;
}

}  // namespace trellis::gang
