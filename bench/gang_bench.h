// `trellis bench gang`: speed of the DQT round robin and of whole gang simulations, measured in
// the same run against references.
//
//   1. Round robin: DirectDqt and the message-passing Dqt against the centralized
//      ReferenceRoundRobin (which re-examines whole subtrees each slot) on the same random static
//      trees of 128, 1,024 and 4,096 processors. All must produce the same slots (checked; exit 1
//      otherwise). Prints slots per second of each and the ratios.
//   2. Simulation: 10^6 time units (--quick: 10^5) of the thesis workload at load 0.9 on 4,096
//      processors with dqt-ffapa, for uniform, proportional and inverse sizes, and fcfs-bb on the
//      same jobs. The first tenth is also run with both DQT engines for the ratio (their results
//      must agree). Prints wall times, slots per second and utilization.
#pragma once

#include <ostream>

namespace trellis::bench {

struct GangBenchOptions {
  bool quick = false;
  bool progress = false;  // progress on stderr
};

int run_gang_bench(const GangBenchOptions& options, std::ostream& out);

}  // namespace trellis::bench
