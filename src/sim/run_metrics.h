// Metrics of a whole simulated run, defined as the literature does (DESIGN.md "Metrics",
// peers-and-conventions.md 5.3). With T0 the first submit time and T1 the last end:
//   wait, response, bounded slowdown  per job (JobRecord), averaged over the jobs run
//   utilization           sum(nodes * time run) / (N * (T1 - T0))
//   steady utilization    busy node-seconds / (N * window) over the window from the submit time of
//                         the job at the 10th percentile of arrivals to that at the 90th, leaving
//                         out the warm-up and drain-down that bias the whole-run figure
//   offered load          sum(nodes * time run) / (N * (last submit - T0)): the work arriving per
//                         unit of capacity; above 1 the queue grows without bound
//   makespan              T1 - T0
//   loss of capacity      idle node-seconds while at least one job waits, / (N * (T1 - T0))
//                         (Zhang et al.: capacity lost to the schedule, not to a lack of work)
//   fragmentation time    fraction of T1 - T0 during which the queue head fits by count but the
//                         allocator cannot place it (external fragmentation)
//   queue length          time-weighted mean and the maximum
//   largest free box      time-weighted mean of the largest free box's node count (mesh/torus,
//                         when placements are recorded; -1 otherwise)
//   decision time         wall time per allocator call and per policy pass
#pragma once

#include <nlohmann/json.hpp>

#include "sim/simulator.h"

namespace trellis {

struct RunSummary {
  long jobs = 0;
  long rejected = 0;
  long timed_out = 0;
  double mean_wait = 0, max_wait = 0;
  double mean_response = 0;
  double mean_bounded_slowdown = 0, max_bounded_slowdown = 0;
  double offered_load = 0;
  double utilization = 0;
  double steady_utilization = 0;
  Seconds steady_from = 0, steady_to = 0;
  Seconds first_submit = 0, last_end = 0, makespan = 0;
  double loss_of_capacity = 0;
  double fragmented_fraction = 0;
  double mean_queue_length = 0;
  int max_queue_length = 0;
  double mean_largest_free_box = -1;
  double mean_pairwise_hops = 0;   // mean over jobs of two or more nodes (recorded runs only)
  double mean_leaf_switches = -1;  // fat trees only
  double allocator_call_us = 0;    // mean wall time of one allocate() call
  double mean_pass_us = 0, max_pass_us = 0;
  long allocator_calls = 0, passes = 0;
  double wall_seconds = 0;
  double jobs_per_second = 0;  // jobs simulated per second of wall time
};

RunSummary summarize(const SimResult& result);
nlohmann::json to_json(const RunSummary& summary);

}  // namespace trellis
