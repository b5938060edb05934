// Task binding: which of a job's CPUs and GPUs on one node each of its tasks there runs on, as
// srun's --cpu-bind and --gpu-bind ask. The agent works it out per node from the node's
// inventory and the job's grant there (core/node_grant.h); the job shell (shell/shell.h) sets
// each rank's CPU affinity before it execs and its GPU variables (CUDA_VISIBLE_DEVICES, ...).
//
// --cpu-bind (Slurm's words):
//   none       every task may run on every CPU of the job's on the node (the cgroup's set);
//   cores      task i gets cpus_per_task whole cores (all their hardware threads), the next ones
//              of the grant in order: the grant's cores sit together (socket, NUMA node), so a
//              task's cores do too;
//   threads    task i gets cpus_per_task hardware threads, the next ones in order;
//   map_cpu:L  task i gets CPU L[i mod |L|] (host CPU ids, each one of the job's);
//   (not given) cores when the node's tasks fit its cores (tasks x cpus_per_task <= cores given,
//              Slurm's "auto binding"), else none. On whole nodes, not given is none: a job
//              that takes the node keeps all of it unless it asks.
// --gpu-bind:
//   none       every task sees every GPU of the job's on the node;
//   per_task:N task i gets N GPUs, the next ones of the grant in turn (wrapping round);
//   closest    task i gets the job's GPUs on the NUMA node of its first core (all of them when
//              none is there);
//   (not given) per_task:gpus_per_task when --gpus-per-task is given, else none.
//
//   Result<CpuBind> cpu = parse_cpu_bind("map_cpu:0,2");
//   Result<std::vector<TaskPlacement>> where = place_tasks(node, grant, {.tasks = 2, ...});
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/node_grant.h"
#include "core/node_inventory.h"
#include "core/result.h"

namespace trellis {

struct CpuBind {
  enum class Kind { kAuto, kNone, kCores, kThreads, kMapCpu };
  Kind kind = Kind::kAuto;
  std::vector<int> map;  // kMapCpu: host CPU ids
  bool operator==(const CpuBind&) const = default;
};
struct GpuBind {
  enum class Kind { kAuto, kNone, kPerTask, kClosest };
  Kind kind = Kind::kAuto;
  int per_task = 0;  // kPerTask
  bool operator==(const GpuBind&) const = default;
};

// "" (kAuto), "none", "cores", "threads", "map_cpu:0,2,..."; Slurm's "no" and "verbose,"
// prefixes and "q"/"quiet" are taken (verbose reports nothing more here). Errors name the word.
Result<CpuBind> parse_cpu_bind(std::string_view text);
// "" (kAuto), "none", "closest", "per_task:N"; "verbose," is taken. Errors name the word.
Result<GpuBind> parse_gpu_bind(std::string_view text);
// The text parse_*_bind() reads back to the same binding ("" for kAuto).
std::string cpu_bind_text(const CpuBind& bind);
std::string gpu_bind_text(const GpuBind& bind);

struct BindingRequest {
  int tasks = 1;          // the job's tasks on this node
  int cpus_per_task = 1;  // cores (or threads, for kThreads) per task
  int gpus_per_task = 0;
  CpuBind cpu;
  GpuBind gpu;
  bool whole_node = false;  // the job holds the node whole (auto binding then is none)
};

struct TaskPlacement {
  std::vector<int> cpus;  // host CPU ids, ascending; empty: every CPU of the job's (no binding)
  std::vector<int> gpus;  // the node's global GPU ids, ascending; every one of the job's when
                          // not bound
  bool operator==(const TaskPlacement&) const = default;
};

// Each task's place on the node, tasks in local order. Host CPU ids follow the inventory's
// numbering (core c with T threads is CPUs c*T .. c*T+T-1). An error when the binding cannot
// be met: more cores or threads than the grant has ("--cpu-bind=cores: 2 tasks x 2 cores, the
// job has 3 on n4"), or a map_cpu CPU that is not the job's. `node_name` is for messages.
Result<std::vector<TaskPlacement>> place_tasks(const NodeInventory& node, const NodeGrant& grant,
                                               const BindingRequest& request,
                                               std::string_view node_name);

// Each task's ids (CPUs or GPUs) as the agent hands them to the job shell (TRELLIS_BIND_CPUS):
// id ranges per task in local order, separated by '/' ("0-1/2-3"; an empty item is no ids).
std::string encode_task_sets(const std::vector<std::vector<int>>& sets);
// Errors name the task whose item is not id ranges.
Result<std::vector<std::vector<int>>> decode_task_sets(std::string_view text);

}  // namespace trellis
