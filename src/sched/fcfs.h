// FCFS: jobs start strictly in queue order; the first job that does not fit stops the pass.
//
// The rule itself is start_until_blocked(), one function for every user: FcfsPolicy (a batch
// queue policy, over each pass's view of the queue), ScanPolicy (inside each size class) and the
// gang baselines fcfs-bb and scan-up-bb (sched/gang/), which keep their own waiting queues
// between slots.
#pragma once

#include "sched/policy.h"

namespace trellis {

// The FCFS rule: starts `queue`'s jobs from its front, in order, until one does not fit; no job
// behind a waiting one starts (no backfilling). `start(job)` starts a job and returns true, or
// returns false when it does not fit now; started jobs leave the queue (pop_front). Returns true
// when every job started (the queue is empty), false when one waits at the front.
template <typename Queue, typename Start>
bool start_until_blocked(Queue& queue, Start&& start) {
  while (!queue.empty()) {
    if (!start(queue.front())) return false;
    queue.pop_front();
  }
  return true;
}

// One pass's start decisions: jobs of view.queue placed one at a time by `allocator` on the
// nodes that those started before them left free.
class PassStarts {
 public:
  PassStarts(const SchedulerView& view, const Allocator& allocator);
  // Starts view.queue[i] if it fits on the nodes still free; false if it does not.
  bool start(size_t i);
  Schedule take() { return std::move(out_); }

 private:
  const SchedulerView& view_;
  const Allocator& allocator_;
  NodeSet free_;
  int free_count_;
  Schedule out_;
};

class FcfsPolicy : public QueuePolicy {
 public:
  std::string_view name() const override { return "fcfs"; }
  Schedule schedule(const SchedulerView& view, const Allocator& allocator) const override;
};

}  // namespace trellis
