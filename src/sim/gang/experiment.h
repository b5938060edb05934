// GangExperiment: a grid of gang policies x target loads x seeds on the thesis's synthetic
// workload, every policy seeing exactly the same jobs for a given (load, seed). This is what
// `trellis gang-sim` runs, and how the thesis's Table 7.1 and Fig. 7.20 are reproduced.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sched/gang/registry.h"
#include "sim/gang/gang_simulator.h"
#include "sim/workload/thesis_model.h"

namespace trellis::gangsim {

struct GangExperiment {
  std::vector<std::string> policies = {"dqt-ffapa"};
  workload::ThesisModel model;  // `load` and `seed` are set per grid point
  std::vector<double> loads = {0.5};
  std::vector<uint64_t> seeds = {1};
  gang::GangPolicyOptions options;
  GangSimConfig sim;  // end_time -1 means the model's arrival end
};

struct GangRun {
  std::string policy;
  double load = 0;
  uint64_t seed = 0;
  GangSimResult result;
  double wall_seconds = 0;  // time the simulation took on this machine
};

// Runs the grid in the order loads, seeds, policies. `on_run` (optional) sees each run as it
// completes. Errors: unknown policy, a machine the policy cannot use, a bad model.
Result<std::vector<GangRun>> run_experiment(const GangExperiment& experiment,
                                            const std::function<void(const GangRun&)>& on_run = {});

// Mean and spread over seeds of one (policy, load).
struct GangSummary {
  std::string policy;
  double load = 0;
  int runs = 0;
  double offered_load = 0;
  double utilization = 0, utilization_min = 0, utilization_max = 0;
  double mean_retr = 0;
  double correlation = 0;
  double max_tqlb = 0;  // mean over seeds of the run's largest max-TQLB
  int max_tqlb_min = 0, max_tqlb_max = 0;
  double mean_max_tqlb = 0;
  double wall_seconds = 0;  // mean
};

std::vector<GangSummary> summarize(const std::vector<GangRun>& runs);

}  // namespace trellis::gangsim
