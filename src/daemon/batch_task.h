// A batch job's task on one node (an agent's side of sbatch): on the job's first node the stored
// script runs, from a private copy written when the launch arrives (later edits of the user's
// file never reach it), with the job's arguments; the other nodes run nothing of their own until
// the script launches steps on them (`trellis run` / `srun`), and report at once.
//
// Scripts are kept in STATE_DIR/scripts/JOB.ATTEMPT, owned by the job's user, mode 0700, in a
// directory others may pass through but not list. A later attempt of the same job removes the
// earlier attempts' copies.
#pragma once

#include <string>

#include "core/result.h"
#include "daemon/task_runner.h"

namespace trellis {

namespace v1 {
class LaunchRequest;
}

// Turns `spec` (task_spec() of a launch that carries a script) into the batch task of the node
// of id `node_id` (the script on node 0).
Status prepare_batch_task(const std::string& state_dir, const v1::LaunchRequest& request,
                          int node_id, TaskSpec& spec);

}  // namespace trellis
