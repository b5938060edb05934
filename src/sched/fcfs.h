// FCFS: jobs start strictly in queue order; the first job that does not fit stops the pass.
#pragma once

#include <vector>

#include "sched/policy.h"

namespace trellis {

// Starts the queue's jobs in the given order (indices into view.queue) until the first one that
// does not fit: the FCFS rule, shared by the policies that only differ in the order.
Schedule start_in_order_until_blocked(const SchedulerView& view, const Allocator& allocator,
                                      const std::vector<size_t>& order);

class FcfsPolicy : public QueuePolicy {
 public:
  std::string_view name() const override { return "fcfs"; }
  Schedule schedule(const SchedulerView& view, const Allocator& allocator) const override;
};

}  // namespace trellis
