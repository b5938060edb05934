// FCFS: jobs start strictly in queue order; the first job that does not fit stops the pass.
#pragma once

#include "sched/policy.h"

namespace trellis {

class FcfsPolicy : public QueuePolicy {
 public:
  std::string_view name() const override { return "fcfs"; }
  Schedule schedule(const SchedulerView& view, const Allocator& allocator) const override;
};

}  // namespace trellis
