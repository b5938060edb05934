#include "sched/demand.h"

#include <memory>

namespace trellis {

Status set_demand(Job& job, const DemandContext& context) {
  const ResourceRequest& r = job.resources;
  const bool shares = r.sharing == NodeSharing::kShared ||
                      r.sharing == NodeSharing::kExclusiveUser ||
                      (context.shared && r.sharing != NodeSharing::kExclusive);
  ResourceRequest asked = r;
  if (!shares) asked.sharing = NodeSharing::kExclusive;  // whole nodes
  Result<NodeDemand> demand = node_demand(asked, context.tasks_per_node, job.request.nodes,
                                          context.node, context.default_mem_per_cpu_mb);
  if (!demand) return demand.error();
  demand->user = job.user;
  job.request.demand = std::make_shared<const NodeDemand>(std::move(*demand));
  return Ok{};
}

}  // namespace trellis
