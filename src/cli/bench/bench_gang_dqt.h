// Part (d) of `trellis bench gang-live`: the thesis's DQT experiment (seed 002, section 7.3;
// digest section 4.8) on the live system. The simulator generates the thesis's workload
// (uniform power-of-two sizes up to the whole machine, gradient load, arrivals in
// [0, units)) and time-shares it under dqt-ffapa in slots of one unit; then a real cluster
// (trellisd with dqt-ffapa, one trellis-agent per node, slice = one unit) runs the same jobs,
// each submitted at its arrival time, each process a trellis-work of the job's length. The mean
// RETR (response time / length) of simulation and live system is printed side by side by job
// size, with the thesis's Table 7.2 beside them.
#pragma once

#include <cstdint>
#include <string>

namespace trellis::cli {

struct DqtLiveArgs {
  int nodes = 64;             // a power of two
  double units = 10000;       // arrivals in [0, units), as the thesis
  double unit_seconds = 0.1;  // wall seconds per time unit, and the live slice
  double mean_service = 12;   // exponential; about 1,500 jobs over 10,000 units on 64 nodes
  // The gradient load's start: it rises by 0.05 every 5% of the arrivals, so 0.05 ends at 1.0.
  // [inferred] The thesis's overall RETR of 2.06 rules out the overloaded gradient of its
  // section 7.2.2 (0.38 to 1.33), with which the simulated RETR here is about 14.
  double gradient_start = 0.05;
  uint64_t seed = 1;
  int switch_fanout = 16;
  std::string dir;  // the cluster's directory ("" = a fresh temp dir, removed after)
  std::string csv;  // "" or a file for one line per job: both runs' times and RETR
};

// Runs the experiment and prints the table; the exit status (0, or 1 with the error printed).
int run_dqt_live_experiment(const DqtLiveArgs& args);

}  // namespace trellis::cli
