// ResourceRequest: what a job asks of its nodes besides the nodes themselves: cores per task,
// memory, GPUs and other generic resources, node features, and whether it shares its nodes. It is
// the one model of it: the Slurm front ends (sbatch, srun), `trellis submit` and the simulator's
// workload readers map their flags onto it, the controller stores it with the job
// (encode/decode: "cpus_per_task=4 mem=2048 gpus_per_node=1"), and the scheduler turns it into
// what each node must give (node_demand()).
//
// Slurm's options, one to one: -c/--cpus-per-task, --mem (per node; 0 = all of it),
// --mem-per-cpu, --mem-per-gpu (one of the three), --gres=gpu[:TYPE]:N[,NAME:N] (per node),
// -G/--gpus=[TYPE:]N (per job), --gpus-per-node, --gpus-per-task, --cpus-per-gpu,
// --exclusive[=user], --oversubscribe (-s), -C/--constraint.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/node_inventory.h"
#include "core/result.h"

namespace trellis {

// How a job shares its nodes with other jobs.
enum class NodeSharing {
  kPartition,      // as its partition says (shared or whole nodes)
  kExclusive,      // whole nodes: every core, GPU and byte of them (--exclusive)
  kExclusiveUser,  // nodes shared only with jobs of the same user (--exclusive=user)
  kShared,         // may share, even on a partition of whole nodes (--oversubscribe)
};

struct ResourceRequest {
  int cpus_per_task = 0;         // 0: not given (1)
  int64_t mem_per_node_mb = -1;  // -1: not given; 0: all of each node's memory
  int64_t mem_per_cpu_mb = 0;    // 0: not given
  int64_t mem_per_gpu_mb = 0;
  int gpus = 0;           // per job (-G); split over its nodes
  int gpus_per_node = 0;  // --gpus-per-node, --gres=gpu:N
  int gpus_per_task = 0;
  int cpus_per_gpu = 0;
  std::string gpu_type;                   // "" = any
  std::map<std::string, int64_t> counts;  // other generic resources per node: name -> count
  NodeSharing sharing = NodeSharing::kPartition;
  std::string constraint;  // features: "a", "a&b", "a|b"

  // Whether the job asks for anything a node is split by (cores, memory or GPUs).
  bool asks_resources() const;
  bool asks_gpus() const { return gpus > 0 || gpus_per_node > 0 || gpus_per_task > 0; }
  bool operator==(const ResourceRequest&) const = default;
};

// "cpus_per_task=4 mem=2048 gpu_type=a100 gpus_per_node=2 gres=license:1 sharing=exclusive", the
// fields at their defaults left out ("" is every default); decode errors name the field.
std::string encode_resource_request(const ResourceRequest& request);
Result<ResourceRequest> decode_resource_request(std::string_view text);

// --gres as Slurm writes it, "gpu[:TYPE]:N[,NAME[:TYPE]:N...]" (a count of 1 may be left out):
// the GPUs go to gpus_per_node and gpu_type, the rest to counts. Errors name the item.
Status apply_gres(std::string_view text, ResourceRequest& request);
// "[TYPE:]N" as -G, --gpus-per-node and --gpus-per-task take it: the count, and the type into
// `type` (an error if it differs from one given before). Errors name `option`.
Result<int> parse_gpu_count(std::string_view text, std::string_view option, std::string& type);
// The options of sbatch, srun and `trellis submit` that set a ResourceRequest, by their long
// names: cpus-per-task, mem, mem-per-cpu, mem-per-gpu, gres, gpus, gpus-per-node, gpus-per-task,
// cpus-per-gpu, exclusive (value "", "user" or "mcs"), oversubscribe (no value), constraint. The
// one place where their values are read. --mem, --mem-per-cpu and --mem-per-gpu exclude each
// other: the one applied last wins, so that the command line overrides a script's directive; a
// later --gres replaces an earlier one (and an earlier --gpus-per-node).
// Errors name the option ("--mem: '2GB' is not a size").
bool is_resource_option(std::string_view option);
Status apply_resource_option(std::string_view option, std::string_view value,
                             ResourceRequest& request);
// -C/--constraint: whether `node` has the features asked ("a", "a&b", "a|b", "a,b" = and;
// brackets are not taken). An empty constraint is met by every node.
bool meets_constraint(const NodeInventory& node, std::string_view constraint);
// A constraint's syntax checked: an error names what is wrong.
Status check_constraint(std::string_view constraint);

// What one node of a job must give it for `tasks` of its tasks there (the scheduler gives every
// node of a job the same, for the most tasks any of its nodes runs), or that it takes the node
// whole. `default_mem_per_cpu_mb` is the partition's (0 = none: a job that asks no memory gets
// the node's memory in proportion to the cores it takes). `nodes` splits -G over the nodes.
struct NodeDemand {
  bool whole = false;  // the whole node: all its cores, GPUs and memory
  int cores = 0;       // whole cores
  int64_t memory_mb = 0;
  int gpus = 0;
  std::string gpu_type;
  std::map<std::string, int64_t> counts;
  std::string constraint;       // the features its nodes must have
  bool same_user_only = false;  // --exclusive=user: nodes shared only with the same user's jobs
  int user = -1;                // whose job it is (for same_user_only)
  bool operator==(const NodeDemand&) const = default;
};
// Errors say why the node can never hold it ("8 cores per node, its node has 4").
Result<NodeDemand> node_demand(const ResourceRequest& request, int tasks, int nodes,
                               const NodeInventory& node, int64_t default_mem_per_cpu_mb);
// "cpu=4,mem=2G,node=1,gres/gpu=1": Slurm's TRES text for what `nodes` such demands hold.
std::string tres_text(const NodeDemand& demand, int nodes, const NodeInventory& node);

}  // namespace trellis
