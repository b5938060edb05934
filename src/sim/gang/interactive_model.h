// The interactive workload of thesis chapter 6 (Fig. 6.3): jobs that compute for an
// exponentially distributed time, then wait an exponentially distributed time for the user's
// answer, a fixed number of times. With the thesis's values (compute mean 0.25 s, think mean
// 1.0 s, 10 ms discretisation, 300 answers) each job alone keeps its processors 20% busy.
#pragma once

#include <cstdint>
#include <vector>

#include "core/result.h"
#include "sim/gang/sim_job.h"

namespace trellis::gangsim {

struct InteractiveModel {
  int jobs = 2;
  int size = 64;                 // processors per job
  double mean_compute = 25;      // time units (10 ms each: 0.25 s)
  double mean_think = 100;       // time units (1.0 s)
  int interactions = 300;        // user answers per job
  double deadlock_fraction = 0;  // share of jobs that deadlock half way through their work
  uint64_t seed = 1;
};

Status validate(const InteractiveModel& model);
// All jobs arrive at time 0, ids from 1. Every burst and wait is at least one unit.
Result<std::vector<SimJob>> generate_interactive_jobs(const InteractiveModel& model);

}  // namespace trellis::gangsim
