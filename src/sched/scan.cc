#include "sched/scan.h"

#include "sched/fcfs.h"

#include <algorithm>
#include <bit>
#include <numeric>
#include <vector>

namespace trellis {

int size_class(int nodes) {
  return nodes <= 1 ? 0 : std::bit_width(static_cast<unsigned>(nodes - 1));
}

template <ScanDirection D>
Schedule ScanPolicy<D>::schedule(const SchedulerView& view, const Allocator& allocator) const {
  constexpr bool up = D == ScanDirection::kUp;
  constexpr int kClasses = 32;
  int current = up ? 0 : kClasses - 1;
  const RunningJob* latest = nullptr;
  for (const RunningJob& r : view.running)
    if (!latest || r.start > latest->start || (r.start == latest->start && r.id > latest->id))
      latest = &r;
  if (latest) current = size_class(latest->nodes.count());

  // Distance of a class from the current one, going in scan direction and wrapping around.
  auto distance = [current](int c) {
    return up ? (c - current + kClasses) % kClasses : (current - c + kClasses) % kClasses;
  };
  std::vector<size_t> order(view.queue.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return distance(size_class(view.queue[a]->request.nodes)) <
           distance(size_class(view.queue[b]->request.nodes));
  });

  return start_in_order_until_blocked(view, allocator, order);
}

template class ScanPolicy<ScanDirection::kUp>;
template class ScanPolicy<ScanDirection::kDown>;

}  // namespace trellis
