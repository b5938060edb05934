// NodeShare: what a job holds on one node of its launch when nodes have an inventory, and what
// the agent makes of it: the cgroup limits that hold the job's processes to it
// (daemon/resource_limits.h) and the variables that tell the job what it has, with Slurm's names.
//
// The controller sends, per node of a launch, the job's grant there (core/node_grant.h) and the
// node's inventory (core/node_inventory.h, with its GPUs' device files); one GPU identity goes
// from the inventory through the grant to the variables and the device rules.
//
// Host CPUs: core c of a node with T threads per core is CPUs c*T .. c*T+T-1 (the numbering the
// inventory's cores follow, socket by socket); memory nodes: the NUMA nodes of its cores.
//
//   Result<std::optional<NodeShare>> share = node_share(request, node_id);
//   if (*share) { set_share_variables(**share, step_has_gpus, env); limits = share_limits(**share);
//   }
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/node_grant.h"
#include "core/node_inventory.h"
#include "core/result.h"
#include "core/task_binding.h"
#include "daemon/resource_limits.h"
#include "trellis/v1/trellis.pb.h"

namespace trellis {

struct NodeShare {
  NodeGrant grant;
  NodeInventory node;
};

// The share of node `node_id` (its index in request.nodes()), or nullopt when the launch carries
// no grants (featureless nodes) or none for it (""). An error names the malformed field.
Result<std::optional<NodeShare>> node_share(const v1::LaunchRequest& request, int node_id);

// The host CPU ids of the grant's cores, ascending.
std::vector<int> share_cpus(const NodeShare& share);

// The limits: its CPUs and their memory nodes, its memory (bytes), and the node's GPUs it was not
// given as denied devices (only those whose device file exists here: a GPU the host lacks cannot
// be opened anyway).
NodeLimits share_limits(const NodeShare& share);

// Sets (replacing any already there) in `env` ("NAME=value" entries): SLURM_CPUS_ON_NODE,
// SLURM_MEM_PER_NODE, TRELLIS_CPUS, TRELLIS_MEM_MB and, only when it was given GPUs,
// SLURM_JOB_GPUS and SLURM_STEP_GPUS (the node's global GPU ids), SLURM_GPUS_ON_NODE,
// CUDA_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES (0.., as the job sees them behind its device
// rules), CUDA_DEVICE_ORDER=PCI_BUS_ID and TRELLIS_GPUS.
void set_share_variables(const NodeShare& share, std::vector<std::string>& env);

// What each of the node's tasks is bound to (core/task_binding.h), for the job shell, which sets
// each rank's affinity and GPU variables from it: TRELLIS_BIND_CPUS and TRELLIS_BIND_GPUS, each
// the tasks' id ranges in local order separated by '/' ("0-1/2-3"; an empty item: not bound),
// set only when some task is bound. `node` is the node's inventory and `grant` what the job holds
// there (every core and GPU of a node held whole), `node_name` for messages. A binding that cannot
// be met sets TRELLIS_BIND_ERROR to why instead (the shell fails the step with it).
void set_binding_variables(const v1::LaunchRequest& request, const NodeInventory& node,
                           const NodeGrant& grant, bool whole_node, int tasks,
                           const std::string& node_name, std::vector<std::string>& env);

// Sets NAME=value in `env`, replacing an entry of that name.
void set_variable(std::vector<std::string>& env, const std::string& name, const std::string& value);

}  // namespace trellis
