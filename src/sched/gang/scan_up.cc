#include "sched/gang/scan_up.h"

#include <bit>

namespace trellis::gang {

Result<std::unique_ptr<ScanUp>> ScanUp::make(std::string name, int processors) {
  auto buddy = BuddySystem::make(processors);
  if (!buddy) return buddy.error();
  return std::unique_ptr<ScanUp>(new ScanUp(std::move(name), std::move(*buddy)));
}

ScanUp::ScanUp(std::string name, BuddySystem buddy)
    : SpaceSharing(std::move(name), std::move(buddy)),
      by_order_(std::countr_zero(static_cast<unsigned>(processors())) + 1) {}

void ScanUp::enqueue(Waiting waiting) {
  by_order_[std::countr_zero(static_cast<unsigned>(block_size(waiting.size)))].push_back(waiting);
}

void ScanUp::start_jobs() {
  const int orders = static_cast<int>(by_order_.size());
  for (;;) {
    auto& queue = by_order_[current_];
    if (!queue.empty()) {
      if (!try_start(queue.front())) return;  // the current size waits for a free block
      queue.pop_front();
      continue;
    }
    // The current size is served out: scan up to the next size that has jobs.
    int next = -1;
    for (int step = 1; step <= orders; ++step) {
      int o = (current_ + step) % orders;
      if (!by_order_[o].empty()) {
        next = o;
        break;
      }
    }
    if (next < 0) return;
    current_ = next;
  }
}

}  // namespace trellis::gang
