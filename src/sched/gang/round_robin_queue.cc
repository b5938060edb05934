#include "sched/gang/round_robin_queue.h"

#include <algorithm>
#include <cassert>
#include <iterator>

namespace trellis::gang {

void RoundRobinQueue::add(JobId job, bool lap_over) {
  if (next_ == 0) {
    jobs_.push_back(job);
  } else {
    jobs_.insert(jobs_.begin() + static_cast<std::ptrdiff_t>(next_), job);
    ++next_;
  }
  if (lap_over) ++ran_;
}

void RoundRobinQueue::remove(JobId job) {
  auto it = std::find(jobs_.begin(), jobs_.end(), job);
  assert(it != jobs_.end() && "removing a job that is not queued here");
  std::size_t k = static_cast<std::size_t>(it - jobs_.begin());
  std::size_t len = jobs_.size();
  if (selected_ && k == next_) {
    // It had its turn and is gone: the pointer now names its successor, the count stays.
    selected_ = false;
  } else {
    // Did it have its turn in this lap? Those are the `ran_` jobs just before the pointer.
    std::size_t behind = (next_ + len - k) % len;  // 1 = just before the pointer
    if (behind >= 1 && behind <= static_cast<std::size_t>(ran_)) --ran_;
    if (k < next_) --next_;
  }
  jobs_.erase(it);
  if (next_ >= jobs_.size()) next_ = 0;
}

}  // namespace trellis::gang
