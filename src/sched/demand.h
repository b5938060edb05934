// What a job's nodes must give it, on a machine whose nodes have an inventory: the job's
// ResourceRequest (core/resource_request.h) turned into its Request::demand, the one input the
// placement (alloc/node_sharing.h) reads. The controller calls it at submission, the simulator
// when it loads a workload, both with the node type of the job's partition and its policy:
//
//   Status ok = set_demand(job, {.node = partition_node_type, .tasks_per_node = 2,
//                                .shared = partition_shares});
//
// On a partition of whole nodes a job takes whole nodes unless it asks to share
// (--oversubscribe); on a shared one it takes what it asks, with Slurm's defaults (one core per
// task, the partition's memory per core), unless it asks for whole nodes (--exclusive). A
// request no node of that type can ever hold is an error that says why.
#pragma once

#include <cstdint>

#include "core/job.h"
#include "core/node_inventory.h"
#include "core/result.h"

namespace trellis {

struct DemandContext {
  NodeInventory node;                  // the partition's node type (its first node's)
  int tasks_per_node = 1;              // the most tasks any node of the job runs
  bool shared = false;                 // the partition shares its nodes
  int64_t default_mem_per_cpu_mb = 0;  // the partition's (0: the node's memory per core)
};

Status set_demand(Job& job, const DemandContext& context);

}  // namespace trellis
