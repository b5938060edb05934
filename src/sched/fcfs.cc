#include "sched/fcfs.h"

namespace trellis {

Schedule FcfsPolicy::schedule(const SchedulerView& view, const Allocator& allocator) const {
  Schedule out;
  NodeSet free = view.free;
  int free_count = free.count();
  for (size_t i = 0; i < view.queue.size(); ++i) {
    const Request& request = view.queue[i]->request;
    if (request.nodes > free_count) break;
    auto placement = allocator.allocate(free, request);
    if (!placement) break;
    free -= placement->nodes;
    free_count -= request.nodes;
    out.starts.push_back({i, std::move(*placement)});
  }
  return out;
}

}  // namespace trellis
