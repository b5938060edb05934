// SpaceSharing: the common part of the batch baselines (FCFS-BB, ScanUp). Jobs run to completion
// on a binary-buddy block, never time-shared; a subclass only decides which waiting job to
// start next. The thesis compares DQT against these (section 7.2.4, Fig. 7.20).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "sched/gang/buddy_system.h"
#include "sched/gang/gang_scheduler.h"

namespace trellis::gang {

class SpaceSharing : public GangScheduler {
 public:
  const std::string& name() const override { return name_; }
  int processors() const override { return buddy_.processors(); }
  Status submit(JobId job, int size) override;
  const std::vector<SlotJob>& next_slot() override;
  void finish(JobId job) override;
  // A batch system cannot skip an idle job: it keeps its processors.
  bool suspend(JobId) override { return false; }
  void resume(JobId) override {}
  LoadIndex load() const override;
  int jobs_in_system() const override { return waiting_ + static_cast<int>(running_.size()); }

 protected:
  SpaceSharing(std::string name, BuddySystem buddy);

  struct Waiting {
    JobId job;
    int size;
  };
  // A job arrived; keep it wherever the policy keeps its queue.
  virtual void enqueue(Waiting waiting) = 0;
  // Start waiting jobs, by calling try_start(), while the policy allows.
  virtual void start_jobs() = 0;
  // Starts the job if a block is free; false if it must wait.
  bool try_start(const Waiting& waiting);
  int block_size(int size) const { return BuddySystem::block_size(size); }

 private:
  std::string name_;
  BuddySystem buddy_;
  std::unordered_map<JobId, SlotJob> running_;
  std::vector<SlotJob> slot_;
  int waiting_ = 0;
  bool changed_ = true;
};

}  // namespace trellis::gang
