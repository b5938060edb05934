// SpaceSharing: the common part of the batch baselines (FCFS-BB, ScanUp). Jobs run to completion
// on a binary-buddy block, never time-shared; a subclass only decides which waiting job to
// start next. The thesis compares DQT against these (section 7.2.4, Fig. 7.20).
//
// The blocks come from the one buddy system, alloc/buddy's BuddyAllocator, on a flat machine of
// P nodes in identity order: a job of n processors asks for buddy_block_size(n) nodes, so it
// takes a whole block (the buddy system's internal fragmentation, as in the thesis), the smallest
// maximal free one at the lowest address. The order in which jobs start is the batch policies'
// rule (sched/fcfs.h's start_until_blocked, sched/scan.h's serve_scan). The baselines keep their
// own waiting queues between slots instead of running a QueuePolicy over a BatchCore: a policy
// sees the whole queue every pass, and on the thesis's workloads fcfs-bb's queue grows to
// hundreds of thousands of jobs, which would make every slot cost as much as the queue is long.
#pragma once

#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "alloc/buddy/buddy_allocator.h"
#include "sched/gang/gang_scheduler.h"

namespace trellis::gang {

class SpaceSharing : public GangScheduler {
 public:
  const std::string& name() const override { return name_; }
  int processors() const override { return processors_; }
  Status submit(JobId job, int size) override;
  const std::vector<SlotJob>& next_slot() override;
  // The slot is the running jobs; it changes when one starts (after a submit or a finish).
  bool slots_change_only_on_calls() const override { return true; }
  void finish(JobId job) override;
  // A batch system cannot skip an idle job: it keeps its processors.
  bool suspend(JobId) override { return false; }
  void resume(JobId) override {}
  LoadIndex load() const override;
  int jobs_in_system() const override { return waiting_ + static_cast<int>(running_.size()); }

 protected:
  // An error unless `processors` is a power of two (the buddy system's blocks must tile it).
  static Status check_processors(int processors);
  // `processors` must have passed check_processors().
  SpaceSharing(std::string name, int processors);

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

 private:
  std::string name_;
  int processors_;
  BuddyAllocator buddy_;
  NodeSet free_;
  int used_ = 0;  // processors in running jobs' blocks
  // The smallest block the buddy system found no room for since a job last finished: until one
  // finishes, the free processors only shrink, so no block as large fits either. (A waiting head
  // of the queue is asked again at every arrival.)
  int no_room_for_ = std::numeric_limits<int>::max();
  std::unordered_map<JobId, SlotJob> running_;
  // The running jobs by first processor: the slot, kept in order as jobs start and finish
  // (sorting it at every change cost more than the rest of a long simulation).
  std::vector<SlotJob> slot_;
  int waiting_ = 0;
  bool changed_ = true;
};

}  // namespace trellis::gang
