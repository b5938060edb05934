// Backfilling policies. Both start jobs in queue order while they fit and let later jobs jump
// ahead only where that cannot delay a reservation; reservations are node sets chosen by the
// allocator at a projected time (sched/projection.h), so a job that needs a box is promised a
// place that can hold the box, not just enough free nodes.
//
//   EASY (Lifka 1995): only the first job that does not fit gets a reservation. A later job may
//   start now if it fits and either ends (by its time limit) before the reservation starts, or
//   fits without touching the reserved nodes.
//   Conservative (Mu'alem & Feitelson 2001): every queued job, in order, gets the earliest
//   reservation that fits around the running jobs and the reservations before it; the jobs whose
//   reservation is now start now. No job can delay any earlier job's reservation.
#pragma once

#include "sched/policy.h"

namespace trellis {

class EasyPolicy : public QueuePolicy {
 public:
  std::string_view name() const override { return "easy"; }
  Schedule schedule(const SchedulerView& view, const Allocator& allocator) const override;
};

class ConservativePolicy : public QueuePolicy {
 public:
  std::string_view name() const override { return "conservative"; }
  Schedule schedule(const SchedulerView& view, const Allocator& allocator) const override;
};

}  // namespace trellis
