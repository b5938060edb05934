#include "sched/fcfs.h"

#include <numeric>

namespace trellis {

Schedule start_in_order_until_blocked(const SchedulerView& view, const Allocator& allocator,
                                      const std::vector<size_t>& order) {
  Schedule out;
  NodeSet free = view.free;
  int free_count = free.count();
  for (size_t i : order) {
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

Schedule FcfsPolicy::schedule(const SchedulerView& view, const Allocator& allocator) const {
  std::vector<size_t> order(view.queue.size());
  std::iota(order.begin(), order.end(), size_t{0});
  return start_in_order_until_blocked(view, allocator, order);
}

}  // namespace trellis
