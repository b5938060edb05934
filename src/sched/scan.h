// Scan (Krueger, Lai and Dixit-Radiya 1994): jobs are grouped into size classes (powers of two:
// class c holds jobs of 2^(c-1)+1 .. 2^c nodes) and the classes are served one after the other,
// each in arrival order, like an elevator: ScanUp goes to larger classes and wraps around to the
// smallest, ScanDown the other way.
//
// The rule is serve_scan(), one function for both users:
//   - ScanPolicy, the batch queue policy, keeps no state between passes (as every QueuePolicy):
//     the class being served is that of the most recently started running job (the smallest
//     class, or the largest for ScanDown, when nothing runs), and each pass sorts the queue into
//     classes afresh.
//   - the gang baseline scan-up-bb (sched/gang/scan_up.h), the thesis's ScanUp, keeps its queues
//     per class and the class being served between slots, as the original does, so the class
//     moves on only when its queue is served out: a job of the class just left waits for the
//     scan to come round again even after the jobs of the next class ended. The stateless form
//     cannot know that, which is why the batch policy reads the class from the running jobs.
// No backfilling in either: a pass stops at the first job that does not fit.
#pragma once

#include <vector>

#include "sched/fcfs.h"
#include "sched/policy.h"

namespace trellis {

enum class ScanDirection { kUp, kDown };

// ceil(log2(nodes)): 1 node -> 0, 2 -> 1, 3..4 -> 2, ...
int size_class(int nodes);

// The Scan rule: serves queues[current], then the next classes in scan direction, cyclically,
// each by the FCFS rule (start_until_blocked), until a job does not fit. queues[c] holds class
// c's waiting jobs in arrival order (empty(), front(), pop_front()); `start(job)` starts one or
// returns false when it does not fit. Returns the class being served afterwards: that of the job
// that did not fit, else the last class a job started from, else `current` when nothing waited.
template <ScanDirection D, typename Queue, typename Start>
int serve_scan(std::vector<Queue>& queues, int current, Start&& start) {
  const int classes = static_cast<int>(queues.size());
  int served = current;
  for (int step = 0; step < classes; ++step) {
    const int c =
        D == ScanDirection::kUp ? (current + step) % classes : (current - step + classes) % classes;
    if (queues[c].empty()) continue;
    served = c;
    if (!start_until_blocked(queues[c], start)) break;
  }
  return served;
}

template <ScanDirection D>
class ScanPolicy : public QueuePolicy {
 public:
  std::string_view name() const override {
    return D == ScanDirection::kUp ? "scan-up" : "scan-down";
  }
  Schedule schedule(const SchedulerView& view, const Allocator& allocator) const override;
};

}  // namespace trellis
