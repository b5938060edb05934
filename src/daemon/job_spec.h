// Between the RPC messages and the store's records: checking a submitted JobSpec (every field of
// a hostile or mistaken request gets an error naming it) and describing stored jobs and states as
// messages.
#pragma once

#include <optional>
#include <string>

#include "core/task_layout.h"
#include "daemon/config.h"
#include "store/state_store.h"
#include "topology/machine.h"
#include "trellis/v1/trellis.pb.h"

namespace trellis {

// Nodes are named this prefix and their id (n0, n1, ...), in the machine's order.
inline constexpr std::string_view kNodeNamePrefix = "n";

// Limits on what one submission may carry, so that a request cannot fill the store.
inline constexpr size_t kMaxArgs = 4096;
inline constexpr size_t kMaxArgBytes = 64 * 1024;  // all of argv together
inline constexpr size_t kMaxPathBytes = 4096;
inline constexpr size_t kMaxNameBytes = 256;
inline constexpr size_t kMaxEnvEntries = 4096;
inline constexpr size_t kMaxScriptBytes = 4 * 1024 * 1024;  // a batch script

// The job a spec asks for, with the cluster's defaults filled in (mode, time limit, output
// file), or an INVALID_ARGUMENT error naming the field: "nodes: -3 is not a node count", "shape:
// 9x9 is larger than torus:4x4x4". The batch script and the dependency (in its canonical text)
// are checked and kept; ids, states, the submitter, the partition and the array's tasks are left
// for the caller.
Result<StoredJob> job_from_spec(const v1::JobSpec& spec, const Machine& machine,
                                const ControllerSettings& settings);

// An output path with sbatch's patterns replaced: %j the job id, %A the array's job id (the job id
// for a job that is not an array task), %a the array task id (0 when none), %x the job name, %u
// the user's name, %% a percent sign. Other patterns are left as they are.
std::string resolve_output_path(const std::string& pattern, const StoredJob& job);

v1::JobState to_proto(JobState state);
Result<JobState> from_proto(v1::JobState state);
v1::JobSpec spec_of(const StoredJob& job);
v1::JobInfo job_info(const StoredJob& job, int node_count);
// Where a job's tasks run on its nodes (in the order of its node ids).
TaskLayout job_layout(const StoredJob& job);
// IDLE, ALLOCATED, DOWN, DRAINED or DRAINING, from what the store holds.
v1::NodeState node_state(const StoredNode& node);
v1::NodeInfo node_info(const StoredNode& node, const Machine& machine);
// The usage an agent's task status carries, if any (TaskStatus.has_usage; negative numbers, from
// a hostile or broken agent, are none).
std::optional<TaskUsage> usage_of(const v1::TaskStatus& task);
v1::StepUsage step_usage_info(const StepUsage& usage);
v1::StepInfo step_info(const StoredStep& step, int node_count);

}  // namespace trellis
