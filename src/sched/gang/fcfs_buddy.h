// FcfsBuddy (FCFS-BB): first come, first served on binary-buddy partitions, no backfilling. The
// head of the queue waits until a block of its size is free, and everything behind it waits too:
// the thesis's example of small jobs blocking large ones (section 2.3.3, Fig. 7.20). The rule is
// the batch FCFS policy's (start_until_blocked in sched/fcfs.h); space_sharing.h says why the
// queue is kept here.
#pragma once

#include <deque>
#include <memory>

#include "sched/gang/space_sharing.h"

namespace trellis::gang {

class FcfsBuddy final : public SpaceSharing {
 public:
  static Result<std::unique_ptr<FcfsBuddy>> make(std::string name, int processors);

 private:
  using SpaceSharing::SpaceSharing;
  void enqueue(Waiting waiting) override { queue_.push_back(waiting); }
  void start_jobs() override;

  std::deque<Waiting> queue_;
};

}  // namespace trellis::gang
