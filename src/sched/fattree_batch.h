// Seed 001's batch scheduler (NUDT, fat-tree job scheduling with minimum scheduling units).
//
// A minimum scheduling unit is the group of `unit` nodes under one leaf switch (node ids unit*k ..
// unit*k+unit-1). A pass takes the first njob queued jobs (njob=4 by default, the seed's value),
// and while their total node count exceeds the nodes of the wholly free units it drops the last
// job of the batch; a batch of one that still does not fit ends the pass. The batch is sorted by
// size, largest first, and each job is placed by the allocator (the seed's is `fattree-units`,
// the default of `trellis sim` on fat trees; any allocator works by name). The seed schedules when
// a job arrives or ends; this pass then takes the next batch from the head of the queue until one
// does not fit.
//
// Options: njob=N (batch size), unit=N (nodes per unit). The default unit is the seed's rule, as
// the fat-tree allocator applies it (minimum_unit_size in alloc/fattree/unit_allocator.h); 1 on
// machines without a fat tree.
#pragma once

#include "sched/registry.h"

namespace trellis {

class FatTreeBatchPolicy : public QueuePolicy {
 public:
  FatTreeBatchPolicy(int njob, int unit) : njob_(njob), unit_(unit) {}
  std::string_view name() const override { return "fattree-batch"; }
  Schedule schedule(const SchedulerView& view, const Allocator& allocator) const override;

  // The seed's minimum scheduling unit for `machine`.
  static int default_unit(const Machine& machine);

 private:
  int njob_;
  int unit_;
};

PolicyFactory make_fattree_batch_factory();

}  // namespace trellis
