// DqtJobs: the jobs a DQT engine holds and the tree node each is queued at, with the checks a
// submission must pass. Both engines (Dqt and DirectDqt) keep one, so they admit, reject and
// track jobs identically.
#pragma once

#include <optional>
#include <unordered_map>

#include "core/job.h"
#include "core/result.h"
#include "sched/gang/partition_tree.h"

namespace trellis::gang {

class DqtJobs {
 public:
  // Admits a job of `size` processors and returns the depth of its partition, or an error
  // naming the job: a size outside the machine, or an id already in the system.
  Result<int> admit(JobId job, int size, const PartitionTree& tree);
  // Admits a job bound for tree node `node`; an error if the node is not in the tree or the id
  // is already in the system.
  Status admit_at(JobId job, TreeNodeId node, const PartitionTree& tree);
  // The admitted job is now queued at `node`.
  void placed(JobId job, TreeNodeId node) { where_[job].node = node; }

  // The node a job is queued at (-1 if unknown).
  TreeNodeId node_of(JobId job) const;
  // The job leaves the system. Returns the node whose queue still holds it, or nothing if it was
  // suspended (and so is in no queue).
  std::optional<TreeNodeId> remove(JobId job);
  // The job leaves its node's queue until resume(); returns that node.
  TreeNodeId suspend(JobId job);
  // The suspended job goes back to its node (jobs never migrate); returns that node.
  TreeNodeId resume(JobId job);
  int size() const { return static_cast<int>(where_.size()); }

 private:
  struct Placement {
    TreeNodeId node = -1;
    bool suspended = false;
  };
  Status admit_id(JobId job);

  std::unordered_map<JobId, Placement> where_;
};

}  // namespace trellis::gang
