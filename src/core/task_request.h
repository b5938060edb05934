// TaskRequest: what a job (or a step) asks of its tasks, as `trellis submit -n/--ntasks-per-node
// /--distribution/--mpi/--label` and srun put it; TaskLayout (core/task_layout.h) is where they
// then run. Stored with the job as a short text: "ntasks=8 per_node=2 distribution=cyclic
// mpi=pmix label=1", fields at their defaults left out ("" is all defaults).
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "core/task_layout.h"

namespace trellis {

struct TaskRequest {
  int ntasks = 0;    // 0: one per node (per_node per node, when given)
  int per_node = 0;  // at most this many on a node; 0: spread evenly
  Distribution distribution = Distribution::kBlock;
  std::string mpi;  // "pmi1", "pmix", "none"; "" = the cluster's default
  bool label = false;
  // srun's --cpu-bind and --gpu-bind (core/task_binding.h's text); "" = not given.
  std::string cpu_bind, gpu_bind;
  bool operator==(const TaskRequest&) const = default;
};

std::string encode_task_request(const TaskRequest& request);
// Errors name the field ("ntasks='x': ...").
Result<TaskRequest> decode_task_request(std::string_view text);

}  // namespace trellis
