// SimJob: a job as the quantum gang simulator sees it. Times are whole time units (quanta).
//
// A batch job computes `work` units straight through. An interactive job (the global-state
// model of thesis chapter 6) alternates computing and waiting for user input: for each
// Interaction it computes `compute` units, then issues a read and waits `think` units of wall
// time for the answer, whether or not it is scheduled. A job that deadlocks (every process
// waiting for a message that never comes) stops making progress after `deadlock_after` units of
// compute.
#pragma once

#include <vector>

#include "core/job.h"

namespace trellis::gangsim {

struct Interaction {
  long compute = 0;
  long think = 0;  // 0: no wait after this burst
};

struct SimJob {
  JobId id = 0;
  long submit = 0;
  int size = 1;
  long work = 1;                          // total compute units
  std::vector<Interaction> interactions;  // empty: a batch job
  long deadlock_after = -1;               // compute units before deadlock; -1 never
};

// Batch jobs from a workload: size = request.nodes, submit and work rounded to whole units
// (work at least 1).
std::vector<SimJob> batch_jobs(const std::vector<Job>& jobs);

}  // namespace trellis::gangsim
