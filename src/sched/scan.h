// Scan (Krueger, Lai and Dixit-Radiya 1994): jobs are grouped into size classes (powers of two:
// class c holds jobs of 2^(c-1)+1 .. 2^c nodes) and the classes are served one after the other,
// each in arrival order, like an elevator: ScanUp goes to larger classes and wraps around to the
// smallest, ScanDown the other way.
//
// Stateless form: the class being served is that of the most recently started running job (the
// smallest class, or the largest for ScanDown, when nothing runs). A pass orders the queue from
// that class on, in scan direction and cyclically, arrival order inside a class, and starts jobs in
// that order until one does not fit (no backfilling).
#pragma once

#include "sched/policy.h"

namespace trellis {

enum class ScanDirection { kUp, kDown };

// ceil(log2(nodes)): 1 node -> 0, 2 -> 1, 3..4 -> 2, ...
int size_class(int nodes);

template <ScanDirection D>
class ScanPolicy : public QueuePolicy {
 public:
  std::string_view name() const override {
    return D == ScanDirection::kUp ? "scan-up" : "scan-down";
  }
  Schedule schedule(const SchedulerView& view, const Allocator& allocator) const override;
};

}  // namespace trellis
