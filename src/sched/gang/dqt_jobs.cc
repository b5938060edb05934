#include "sched/gang/dqt_jobs.h"

#include <cassert>
#include <string>

namespace trellis::gang {

Status DqtJobs::admit_id(JobId job) {
  if (where_.count(job)) return fail("job " + std::to_string(job) + " was submitted twice");
  where_[job] = Placement{};
  return Ok{};
}

Result<int> DqtJobs::admit(JobId job, int size, const PartitionTree& tree) {
  auto partition = tree.partition_size_for(size);
  if (!partition) return fail("job " + std::to_string(job) + ": " + partition.error().message);
  if (auto ok = admit_id(job); !ok) return ok.error();
  return tree.depth_for_size(*partition);
}

Status DqtJobs::admit_at(JobId job, TreeNodeId node, const PartitionTree& tree) {
  if (node < 0 || node >= tree.node_count())
    return fail("job " + std::to_string(job) + ": tree node " + std::to_string(node) +
                " is outside 0.." + std::to_string(tree.node_count() - 1));
  return admit_id(job);
}

TreeNodeId DqtJobs::node_of(JobId job) const {
  auto it = where_.find(job);
  return it == where_.end() ? -1 : it->second.node;
}

std::optional<TreeNodeId> DqtJobs::remove(JobId job) {
  auto it = where_.find(job);
  assert(it != where_.end() && "removing a job not in the system");
  Placement p = it->second;
  where_.erase(it);
  if (p.suspended) return std::nullopt;
  return p.node;
}

TreeNodeId DqtJobs::suspend(JobId job) {
  auto it = where_.find(job);
  assert(it != where_.end() && !it->second.suspended);
  it->second.suspended = true;
  return it->second.node;
}

TreeNodeId DqtJobs::resume(JobId job) {
  auto it = where_.find(job);
  assert(it != where_.end() && it->second.suspended);
  it->second.suspended = false;
  return it->second.node;
}

}  // namespace trellis::gang
