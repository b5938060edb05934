#include "sched/projection.h"

#include <algorithm>
#include <vector>

namespace trellis {

std::optional<Projection> earliest_fit(Seconds now, const NodeSet& free,
                                       std::span<const RunningJob> running, const Request& request,
                                       const Allocator& allocator) {
  NodeSet projected = free;
  int free_count = projected.count();
  if (free_count >= request.nodes) {
    if (auto p = allocator.allocate(projected, request))
      return Projection{now, std::move(*p), projected};
  }
  std::vector<const RunningJob*> by_end;
  by_end.reserve(running.size());
  for (const RunningJob& r : running) by_end.push_back(&r);
  std::sort(by_end.begin(), by_end.end(), [](const RunningJob* a, const RunningJob* b) {
    return a->expected_end != b->expected_end ? a->expected_end < b->expected_end : a->id < b->id;
  });
  NodeSet released(free.size());
  int released_count = 0;
  for (size_t i = 0; i < by_end.size();) {
    Seconds t = by_end[i]->expected_end;
    for (; i < by_end.size() && by_end[i]->expected_end == t; ++i) {
      projected |= by_end[i]->nodes;
      released |= by_end[i]->nodes;
      int n = by_end[i]->nodes.count();
      free_count += n;
      released_count += n;
    }
    if (free_count < request.nodes) continue;
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
