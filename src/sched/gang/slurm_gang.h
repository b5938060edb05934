// SlurmGang: a gang scheduler in the manner of Slurm's gang.c with OverSubscribe=FORCE:K. Each
// job gets its nodes when it is admitted (here a binary-buddy block whose busiest processor
// holds fewer than K jobs; the least loaded such block, leftmost among equals); jobs that cannot
// be admitted wait in FIFO order. Every slice one active row is rebuilt from a rotating job
// list: jobs are taken in list order when their nodes do not overlap the row so far, and then
// the jobs that ran move to the back of the list, so the ones left out go first next slice.
#pragma once

#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/node_set.h"
#include "sched/gang/gang_scheduler.h"

namespace trellis::gang {

class SlurmGang final : public GangScheduler {
 public:
  // processors: a power of two; max_jobs_per_node: K >= 1 (Slurm's default FORCE is 4).
  static Result<std::unique_ptr<SlurmGang>> make(std::string name, int processors,
                                                 int max_jobs_per_node);

  const std::string& name() const override { return name_; }
  int processors() const override { return processors_; }
  Status submit(JobId job, int size) override;
  const std::vector<SlotJob>& next_slot() override;
  void finish(JobId job) override;
  bool suspend(JobId job) override;
  void resume(JobId job) override;
  LoadIndex load() const override;
  int jobs_in_system() const override {
    return static_cast<int>(pending_.size() + admitted_.size());
  }

 private:
  SlurmGang(std::string name, int processors, int max_jobs_per_node);

  struct Admitted {
    int first = 0;
    int size = 0;
    bool suspended = false;
  };
  // The first processor of the block a job of `block` processors is admitted to, or -1.
  int choose_block(int block) const;
  void admit_pending();
  void add_load(int first, int size, int delta);

  std::string name_;
  int processors_;
  int max_jobs_per_node_;
  std::vector<int> jobs_on_;                   // per processor: admitted jobs whose block holds it
  std::deque<std::pair<JobId, int>> pending_;  // (job, block size), FIFO
  std::unordered_map<JobId, Admitted> admitted_;
  std::deque<JobId> rotation_;  // admitted, not suspended, in row-building order
  std::vector<SlotJob> row_;
  NodeSet row_nodes_;
  LoadIndex load_;
};

}  // namespace trellis::gang
