// Which jobs each run of a comparison completed, and metrics over the jobs every run completed.
//
// Runs that reject different jobs (a contiguous allocator refuses shapes a non-contiguous one
// places) average their metrics over different job sets; `trellis sim-compare` reads each run's
// jobs.csv with these functions to compare them over the common jobs too.
#pragma once

#include <istream>
#include <set>
#include <vector>

#include "core/result.h"

namespace trellis {

// A job a run completed (state CD, or TO: killed at its time limit), with its times in seconds.
struct CompletedJob {
  long id = 0;
  double submit = 0, start = 0, end = 0;
};

// The completed jobs of a jobs.csv, read by header names: id, submit, start, end and state are
// required, other columns are ignored, quoted fields may hold commas. Rows whose state is RJ
// (rejected) and jobs whose id is in `rejected` are left out. Errors name the line and column.
Result<std::vector<CompletedJob>> read_completed_jobs(std::istream& csv,
                                                      const std::set<long>& rejected = {});

struct JobSetMetrics {
  double mean_wait_s = 0;
  double mean_response_s = 0;
  // Mean of max(1, response / max(run time, 10 s)).
  double mean_bounded_slowdown = 0;
};

struct CommonJobs {
  std::set<long> ids;                  // completed by every run
  bool differ = false;                 // some run completed a job another did not
  std::vector<JobSetMetrics> per_run;  // over `ids`, in the order of the runs given
};

// The jobs every run completed and each run's metrics over them.
CommonJobs common_jobs(const std::vector<std::vector<CompletedJob>>& runs);

}  // namespace trellis
