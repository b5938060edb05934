#include "sched/scan.h"

#include <bit>
#include <vector>

namespace trellis {

int size_class(int nodes) {
  return nodes <= 1 ? 0 : std::bit_width(static_cast<unsigned>(nodes - 1));
}

namespace {

// A run of queue indices, served from the front.
struct IndexRun {
  const size_t* next = nullptr;
  const size_t* end = nullptr;
  bool empty() const { return next == end; }
  size_t front() const { return *next; }
  void pop_front() { ++next; }
};

}  // namespace

template <ScanDirection D>
Schedule ScanPolicy<D>::schedule(const SchedulerView& view, const Allocator& allocator) const {
  constexpr int kClasses = 32;
  int current = D == ScanDirection::kUp ? 0 : kClasses - 1;
  const RunningJob* latest = nullptr;
  for (const RunningJob& r : view.running)
    if (!latest || r.start > latest->start || (r.start == latest->start && r.id > latest->id))
      latest = &r;
  if (latest) current = size_class(latest->nodes.count());

  // The queue's indices grouped by class (a counting sort, arrival order kept inside a class).
  std::vector<int> class_of(view.queue.size());
  std::vector<size_t> begin(kClasses + 1, 0);
  for (size_t i = 0; i < view.queue.size(); ++i) {
    class_of[i] = size_class(view.queue[i]->request.nodes);
    ++begin[class_of[i] + 1];
  }
  for (int c = 0; c < kClasses; ++c) begin[c + 1] += begin[c];
  std::vector<size_t> by_class(view.queue.size());
  std::vector<size_t> fill(begin.begin(), begin.end() - 1);
  for (size_t i = 0; i < view.queue.size(); ++i) by_class[fill[class_of[i]]++] = i;
  std::vector<IndexRun> queues(kClasses);
  for (int c = 0; c < kClasses; ++c)
    queues[c] = {by_class.data() + begin[c], by_class.data() + begin[c + 1]};

  PassStarts starts(view, allocator);
  serve_scan<D>(queues, current, [&](size_t i) { return starts.start(i); });
  return starts.take();
}

template class ScanPolicy<ScanDirection::kUp>;
template class ScanPolicy<ScanDirection::kDown>;

}  // namespace trellis
