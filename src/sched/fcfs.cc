#include "sched/fcfs.h"

namespace trellis {

namespace {

// The queue indices next..end-1 as a queue.
struct IndexRange {
  size_t next = 0, end = 0;
  bool empty() const { return next == end; }
  size_t front() const { return next; }
  void pop_front() { ++next; }
};

}  // namespace

PassStarts::PassStarts(const SchedulerView& view, const Allocator& allocator)
    : view_(view), allocator_(allocator), free_(view.free), free_count_(free_.count()) {}

bool PassStarts::start(size_t i) {
  const Request& request = view_.queue[i]->request;
  if (request.nodes > free_count_) return false;
  auto placement = allocator_.allocate(free_, request);
  if (!placement) return false;
  free_ -= placement->nodes;
  free_count_ -= request.nodes;
  out_.starts.push_back({i, std::move(*placement)});
  return true;
}

Schedule FcfsPolicy::schedule(const SchedulerView& view, const Allocator& allocator) const {
  PassStarts starts(view, allocator);
  IndexRange queue{0, view.queue.size()};
  start_until_blocked(queue, [&](size_t i) { return starts.start(i); });
  return starts.take();
}

}  // namespace trellis
