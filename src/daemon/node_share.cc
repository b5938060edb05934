#include "daemon/node_share.h"

#include <sys/stat.h>

#include <algorithm>
#include <set>

#include "core/id_ranges.h"

namespace trellis {
namespace {

std::string joined(const std::vector<int>& ids) {
  std::string out;
  for (int id : ids) out += (out.empty() ? "" : ",") + std::to_string(id);
  return out;
}

}  // namespace

Result<std::optional<NodeShare>> node_share(const v1::LaunchRequest& request, int node_id) {
  if (request.node_grants_size() == 0) return std::optional<NodeShare>();
  if (request.node_grants_size() != request.nodes_size() ||
      request.node_types_size() != request.nodes_size())
    return fail(Error::Code::kInvalidArgument,
                "node_grants: " + std::to_string(request.node_grants_size()) + " grants and " +
                    std::to_string(request.node_types_size()) + " node types for " +
                    std::to_string(request.nodes_size()) + " nodes");
  if (node_id < 0 || node_id >= request.nodes_size())
    return fail(Error::Code::kInvalidArgument,
                "node " + std::to_string(node_id) + " of " + std::to_string(request.nodes_size()));
  const std::string& grant_text = request.node_grants(node_id);
  if (grant_text.empty()) return std::optional<NodeShare>();
  const std::string& node = request.nodes(node_id);
  Result<NodeGrant> grant = decode_grant(grant_text);
  if (!grant)
    return fail(Error::Code::kInvalidArgument,
                "node_grants of " + node + ": " + grant.error().message);
  Result<NodeInventory> inventory = parse_node_inventory(request.node_types(node_id));
  if (!inventory)
    return fail(Error::Code::kInvalidArgument,
                "node_types of " + node + ": " + inventory.error().message);
  for (int core : grant->cores)
    if (core < 0 || core >= inventory->cores())
      return fail(Error::Code::kInvalidArgument, "node_grants of " + node + ": core " +
                                                     std::to_string(core) + " is not one of its " +
                                                     std::to_string(inventory->cores()));
  for (int gpu : grant->gpus)
    if (gpu < 0 || gpu >= static_cast<int>(inventory->gpus.size()))
      return fail(Error::Code::kInvalidArgument, "node_grants of " + node + ": GPU " +
                                                     std::to_string(gpu) + " is not one of its " +
                                                     std::to_string(inventory->gpus.size()));
  return std::optional<NodeShare>(NodeShare{std::move(*grant), std::move(*inventory)});
}

std::vector<int> share_cpus(const NodeShare& share) {
  std::vector<int> cpus;
  const int threads = share.node.threads_per_core;
  for (int core : share.grant.cores)
    for (int t = 0; t < threads; ++t) cpus.push_back(core * threads + t);
  return cpus;
}

NodeLimits share_limits(const NodeShare& share) {
  NodeLimits limits;
  limits.cpus = share_cpus(share);
  // The memory nodes stay the agent's own: the inventory's NUMA numbering is the site's
  // description, not necessarily the host's, and a cpuset.mems naming a node the host lacks is
  // refused by the kernel. The CPUs are the binding; memory follows first touch.
  limits.memory_bytes = share.grant.memory_mb * (int64_t{1} << 20);
  const std::set<int> given(share.grant.gpus.begin(), share.grant.gpus.end());
  for (size_t i = 0; i < share.node.gpus.size(); ++i) {
    if (given.count(static_cast<int>(i))) continue;
    const std::string& device = share.node.gpus[i].device;
    struct stat info {};
    if (device.empty() || ::stat(device.c_str(), &info) != 0) continue;
    Result<DeviceNumber> number = device_number(device);
    if (number) limits.denied_devices.push_back({device, *number});
  }
  return limits;
}

void set_variable(std::vector<std::string>& env, const std::string& name,
                  const std::string& value) {
  const std::string prefix = name + "=";
  for (std::string& entry : env)
    if (entry.compare(0, prefix.size(), prefix) == 0) {
      entry = prefix + value;
      return;
    }
  env.push_back(prefix + value);
}

void set_share_variables(const NodeShare& share, std::vector<std::string>& env) {
  const std::vector<int> cpus = share_cpus(share);
  set_variable(env, "SLURM_CPUS_ON_NODE", std::to_string(cpus.size()));
  std::vector<int64_t> cpu_ids(cpus.begin(), cpus.end());
  set_variable(env, "TRELLIS_CPUS", format_id_ranges(cpu_ids));
  if (share.grant.memory_mb > 0) {
    set_variable(env, "SLURM_MEM_PER_NODE", std::to_string(share.grant.memory_mb));
    set_variable(env, "TRELLIS_MEM_MB", std::to_string(share.grant.memory_mb));
  }
  if (share.grant.gpus.empty()) return;  // no GPU variable at all without GPUs, as Slurm
  const std::string global = joined(share.grant.gpus);
  std::vector<int> seen;
  for (size_t i = 0; i < share.grant.gpus.size(); ++i) seen.push_back(static_cast<int>(i));
  const std::string visible = joined(seen);
  set_variable(env, "SLURM_JOB_GPUS", global);
  set_variable(env, "SLURM_STEP_GPUS", global);
  set_variable(env, "SLURM_GPUS_ON_NODE", std::to_string(share.grant.gpus.size()));
  set_variable(env, "TRELLIS_GPUS", global);
  set_variable(env, "CUDA_VISIBLE_DEVICES", visible);
  set_variable(env, "ROCR_VISIBLE_DEVICES", visible);
  set_variable(env, "CUDA_DEVICE_ORDER", "PCI_BUS_ID");
}

void set_binding_variables(const v1::LaunchRequest& request, const NodeInventory& node,
                           const NodeGrant& grant, bool whole_node, int tasks,
                           const std::string& node_name, std::vector<std::string>& env) {
  BindingRequest binding;
  binding.tasks = tasks;
  binding.cpus_per_task = std::max(request.cpus_per_task(), 1);
  binding.gpus_per_task = request.gpus_per_task();
  binding.whole_node = whole_node;
  // check_launch_request() read both already.
  if (Result<CpuBind> cpu = parse_cpu_bind(request.cpu_bind())) binding.cpu = *cpu;
  if (Result<GpuBind> gpu = parse_gpu_bind(request.gpu_bind())) binding.gpu = *gpu;
  Result<std::vector<TaskPlacement>> placed = place_tasks(node, grant, binding, node_name);
  if (!placed) {
    set_variable(env, "TRELLIS_BIND_ERROR", placed.error().message);
    return;
  }
  std::vector<std::vector<int>> cpus, gpus;
  bool cpus_bound = false, gpus_bound = false;
  for (const TaskPlacement& p : *placed) {
    cpus.push_back(p.cpus);
    gpus.push_back(p.gpus);
    cpus_bound |= !p.cpus.empty();
    gpus_bound |= p.gpus != grant.gpus;
  }
  if (cpus_bound) set_variable(env, "TRELLIS_BIND_CPUS", encode_task_sets(cpus));
  if (gpus_bound) set_variable(env, "TRELLIS_BIND_GPUS", encode_task_sets(gpus));
}

}  // namespace trellis
