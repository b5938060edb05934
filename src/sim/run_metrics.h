// Metrics of a whole simulated run, defined as the literature does (DESIGN.md "Metrics",
// peers-and-conventions.md 5.3). With T0 the first submit time and T1 the last end of the jobs
// counted, and "ran" the time a job really ran (its run time, or its limit when killed there):
//   wait, response, bounded slowdown  per job (JobRecord), averaged over the jobs counted;
//                         bounded slowdown = max(1, response / max(ran, threshold)), threshold
//                         10 s by default (SummaryOptions)
//   utilization           node-seconds held (time-shared jobs: while switched in) / (N * (T1 - T0))
//   steady utilization    busy node-seconds / (N * window) over the window from the submit time of
//                         the job at the 10th percentile of arrivals to that at the 90th, leaving
//                         out the warm-up and drain-down that bias the whole-run figure
//   offered load          sum(requested nodes * ran) / (N * (last submit - T0)): the work arriving
//                         per unit of capacity, whatever the policy did with it (time-sharing
//                         included); above 1 the queue grows without bound
//   makespan              T1 - T0
//   loss of capacity      idle node-seconds while at least one job waits, / (N * (T1 - T0))
//                         (Zhang et al.: capacity lost to the schedule, not to a lack of work)
//   fragmentation time    fraction of T1 - T0 during which the queue head fits by count but the
//                         allocator cannot place it (external fragmentation)
//   queue length          time-weighted mean and the maximum
//   largest free box      time-weighted mean of the largest free box's node count (mesh/torus,
//                         when placements are recorded)
//   pairwise hops         mean over jobs of two or more nodes of the mean hop distance between
//                         the job's nodes (when placements are recorded)
//   network figures       with a run-time model that measures (sim/runtime_model.h): the mean over
//                         the jobs it measured of their run-time inflation, all-to-all hop-bytes
//                         and most loaded link (JobRecord::network())
//   core utilization      on nodes with an inventory: core-seconds the jobs asked for / (the
//                         machine's cores * (T1 - T0)): the work done (a job of one processor
//                         on a whole node of 8 cores counts 1)
//   allocated cores, memory and GPU utilization: core-seconds (MiB-, GPU-seconds) held / (all of
//                         the machine's * (T1 - T0))
//   shared fragmentation  on nodes with an inventory: time-weighted mean of the free cores that
//                         sit on nodes in use, over all free cores (NodePool::Totals)
//   internal fragmentation  node-seconds held beyond the request / node-seconds held:
//                         sum (nodes - requested nodes) x held / sum nodes x held, for boxes larger
//                         than the count asked for and gang partitions larger than the job (0 when
//                         every job got what it asked for)
//   decision time         wall time per allocator call and per policy pass
// A metric that was not computed (placements not recorded, not a mesh/torus, not a fat tree) is
// absent (std::nullopt; null in JSON), never a number that could be mistaken for a result.
//
// With a window (SummaryOptions::from / to, e.g. to skip warm-up), the per-job metrics count the
// jobs submitted in [from, to), and the time-based ones integrate over [from, to] within [T0, T1].
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "sim/simulator.h"

namespace trellis {

struct SummaryOptions {
  Seconds bsld_threshold = JobRecord::kBoundedSlowdownThreshold;
  std::optional<Seconds> from, to;  // the window of submit times counted
};

// One user's jobs (by the workload's user id; -1 for jobs with none).
struct UserSummary {
  int user = -1;
  long jobs = 0;
  double node_seconds = 0;  // nodes held * time held
  double mean_wait = 0, mean_bounded_slowdown = 0;
};

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
  std::optional<double> mean_largest_free_box;
  bool largest_free_box_sampled = false;  // see TimelineSample::largest_free_box
  std::optional<double> mean_pairwise_hops;
  std::optional<double> mean_leaf_switches;
  // Means over the jobs with network figures; absent when no counted job has them (no model).
  std::optional<double> mean_inflation;
  std::optional<double> mean_hop_bytes;
  std::optional<double> mean_max_link_load;
  double internal_fragmentation = 0;
  std::optional<double> core_utilization, allocated_core_utilization, memory_utilization,
      gpu_utilization;
  std::optional<double> shared_fragmentation;
  double allocator_call_us = 0;  // mean wall time of one allocate() call
  double mean_pass_us = 0, max_pass_us = 0;
  long allocator_calls = 0, passes = 0;
  double wall_seconds = 0;
  double jobs_per_second = 0;  // jobs simulated per second of wall time
  SummaryOptions options;
  std::vector<UserSummary> users;  // by node-seconds, largest first
};

RunSummary summarize(const SimResult& result, const SummaryOptions& options = {});
// The metrics as one flat object (null for those not computed). Per-user figures are in
// users_to_json.
nlohmann::json to_json(const RunSummary& summary);
nlohmann::json users_to_json(const RunSummary& summary);

}  // namespace trellis
