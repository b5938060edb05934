#include "sched/gang/subtree_summary.h"

#include <algorithm>

namespace trellis::gang {

SubtreeSummary summarize(const PartitionTree& tree, int depth, int own_queue,
                         std::span<const SubtreeSummary> children) {
  SubtreeSummary s;
  s.jobs = own_queue;
  s.apa = static_cast<long long>(own_queue) * tree.size_at_depth(depth);
  s.shortest_queue[depth] = own_queue;
  if (children.empty()) {
    s.max_tqlb = s.min_tqlb = own_queue;
    return s;
  }
  int max_below = children[0].max_tqlb;
  int min_below = children[0].min_tqlb;
  for (int d = depth + 1; d <= tree.height(); ++d)
    s.shortest_queue[d] = children[0].shortest_queue[d];
  for (const SubtreeSummary& c : children) {
    s.jobs += c.jobs;
    s.apa += c.apa;
    max_below = std::max(max_below, c.max_tqlb);
    min_below = std::min(min_below, c.min_tqlb);
    for (int d = depth + 1; d <= tree.height(); ++d)
      s.shortest_queue[d] = std::min(s.shortest_queue[d], c.shortest_queue[d]);
  }
  s.max_tqlb = own_queue + max_below;
  s.min_tqlb = own_queue + min_below;
  return s;
}

}  // namespace trellis::gang
