// StartLimits: what may hold a queued job back besides the free nodes: a limit on what a group
// of jobs may hold at once (an account's GrpTRES, an association's MaxJobs:
// daemon/account_limits.h). The core shows the policy only the jobs the limits let start now, and
// checks each start the policy decides against them again, in order, so that several starts of one
// pass never pass a limit together. A job held back waits at its place in the queue and is looked
// at again at the next pass (the backfill plan does not reserve for it: Slurm's behaviour too).
//
// Not owned by the core; it must outlive it. The core tells it of every start and end, and
// restore() tells it the running jobs again from the start (clear(), then started() for each).
#pragma once

#include <string>

#include "core/job.h"

namespace trellis {

class StartLimits {
 public:
  virtual ~StartLimits() = default;
  // Why `job` may not start now beside the jobs started so far (a reason code as Slurm's squeue
  // shows it, "AssocGrpNodeLimit"), or "" when it may.
  virtual std::string held_back(const Job& job) const = 0;
  // `job` started on `nodes` nodes (counted against its limits until ended()).
  virtual void started(const Job& job, int nodes) = 0;
  virtual void ended(const Job& job) = 0;
  virtual void clear() = 0;  // nothing runs
};

}  // namespace trellis
