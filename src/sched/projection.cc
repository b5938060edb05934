#include "sched/projection.h"

#include <algorithm>
#include <vector>

namespace trellis {

std::optional<Projection> earliest_fit(Seconds now, const NodeSet& free,
                                       std::vector<const RunningJob*> by_end,
                                       const Request& request, const Allocator& allocator) {
  NodeSet projected = free;
  int free_count = projected.count();
  if (free_count >= request.nodes) {
    if (auto p = allocator.allocate(projected, request))
      return Projection{now, std::move(*p), projected};
  }
  // A job past its expected end (it overran an estimate that was not a kill limit) is expected to
  // end at any moment: now.
  auto end_of = [now](const RunningJob* r) { return std::max(now, r->expected_end); };
  std::sort(by_end.begin(), by_end.end(), [&](const RunningJob* a, const RunningJob* b) {
    return end_of(a) != end_of(b) ? end_of(a) < end_of(b) : a->id < b->id;
  });
  // Counts first: node sets are combined only once enough nodes are projected free.
  NodeSet released(free.size());
  int released_count = 0;
  size_t merged = 0;  // jobs of by_end already merged into `projected` and `released`
  for (size_t i = 0; i < by_end.size();) {
    Seconds t = end_of(by_end[i]);
    for (; i < by_end.size() && end_of(by_end[i]) == t; ++i) {
      free_count += by_end[i]->node_count;
      released_count += by_end[i]->node_count;
    }
    if (free_count < request.nodes) continue;
    for (; merged < i; ++merged) {
      projected |= by_end[merged]->nodes;
      released |= by_end[merged]->nodes;
    }
    if (released_count >= request.nodes) {
      if (auto p = allocator.allocate(released, request))
        return Projection{std::max(now, t), std::move(*p), projected};
    }
    if (auto p = allocator.allocate(projected, request))
      return Projection{std::max(now, t), std::move(*p), projected};
  }
  return std::nullopt;
}

}  // namespace trellis
