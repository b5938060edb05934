// ScanUp [KLDR94] on binary-buddy partitions: one queue per power-of-two size. The scheduler
// serves the current size's queue until it is empty, then moves to the next larger size that
// has jobs, wrapping from the largest back to the smallest. Consecutive jobs are of one size,
// which packs the buddy system well (thesis section 2.3.3; DQT's closest rival in Fig. 7.20).
// Starvation is possible, as in the original.
//
// The rule is the batch ScanUp policy's (serve_scan in sched/scan.h); this keeps the size being
// served between slots, where the stateless batch policy reads it from the running jobs (scan.h
// says how they differ, space_sharing.h why the queues are kept here).
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "sched/gang/space_sharing.h"

namespace trellis::gang {

class ScanUp final : public SpaceSharing {
 public:
  static Result<std::unique_ptr<ScanUp>> make(std::string name, int processors);

 private:
  ScanUp(std::string name, int processors);
  void enqueue(Waiting waiting) override;
  void start_jobs() override;

  std::vector<std::deque<Waiting>> by_class_;  // queue per size class (log2 of the block size)
  int current_ = 0;                            // the class being served
};

}  // namespace trellis::gang
