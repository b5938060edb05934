// How fairly a simulated run treated its users, for comparing FCFS or EASY with fair-share on a
// site's own trace (`trellis sim --priority fairshare`, summary.json's "users" and "fairness"):
//
// - per user: jobs, mean wait, mean bounded slowdown, node-hours delivered;
// - Jain's index over the users' mean bounded slowdowns, (sum x)^2 / (n sum x^2): 1 when every
//   user fares the same, 1/n when one user takes all the slowdown;
// - the fair-start-time (FST) unfairness of Sabin et al. (ICPP 2004): a job's fair start is when
//   it would have started had no job arrived after it (the same policy and order, replayed with
//   the jobs up to it only); it was treated unfairly when it started later than that. Reported
//   as the mean unfair delay over the jobs and the fraction treated unfairly. Each fair start is
//   a simulation of its own, so a long trace is measured on an even sample of its jobs (`sample`;
//   0 = every job).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "sched/queue_order.h"
#include "sim/simulator.h"

namespace trellis {

struct UserFigures {
  int user = -1;
  int jobs = 0;
  double mean_wait = 0;
  double mean_bounded_slowdown = 0;
  double node_hours = 0;
};

struct FairStartFigures {
  int jobs_measured = 0;
  double mean_unfair_delay = 0;  // seconds, over the jobs measured
  double unfair_fraction = 0;    // of the jobs measured, those that started after their fair start
};

struct UserFairness {
  std::vector<UserFigures> users;  // by user id
  double jain_bounded_slowdown = 1;
  std::optional<FairStartFigures> fair_start;
};

UserFairness user_fairness(const SimResult& result, double bsld_threshold);

// Jain's index of `values` (1 for none, or all zero).
double jain_index(const std::vector<double>& values);

// The FST figures of `result`, a run of `jobs` with `options`: for an even sample of `sample`
// jobs (0: all), the same run of the jobs that arrived up to it. `make_order` gives each replay a
// fresh queue order (null: arrival order). `progress` hears the fraction done.
FairStartFigures fair_start_unfairness(
    const Machine& machine, const Allocator& allocator, const QueuePolicy& policy,
    const std::vector<Job>& jobs, const SimOptions& options, const SimResult& result,
    const std::function<std::unique_ptr<QueueOrder>()>& make_order, size_t sample,
    const std::function<void(double)>& progress = {});

}  // namespace trellis
