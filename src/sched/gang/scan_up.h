// ScanUp [KLDR94] on binary-buddy partitions: one queue per power-of-two size. The scheduler
// serves the current size's queue until it is empty, then moves to the next larger size that
// has jobs, wrapping from the largest back to the smallest. Consecutive jobs are of one size,
// which packs the buddy system well (thesis section 2.3.3; DQT's closest rival in Fig. 7.20).
// Starvation is possible, as in the original.
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
  ScanUp(std::string name, BuddySystem buddy);
  void enqueue(Waiting waiting) override;
  void start_jobs() override;

  std::vector<std::deque<Waiting>> by_order_;  // queue per log2(block size)
  int current_ = 0;                            // the order being served
};

}  // namespace trellis::gang
