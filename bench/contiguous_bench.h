// `trellis bench contiguous`: decision time of the contiguous allocator's three searches
// (production, generalised embodiment 1, brute force), measured in the same run on the same
// free sets, with the production search's speed-up over the other two.
//
// Machines torus 16x16x16, 32x32x32, 48x48x48; occupancy (i) 50% of nodes busy at random and
// (ii) a realistic fill, random boxes placed with the production search until 90% busy;
// requests 4x4x2 and 8x4x2 with rotation and count-only 32 and 64. Every search gets a time
// budget per configuration: it repeats until `repeat` runs or the budget is spent, and a search
// whose single decision exceeds the budget is reported as over budget and skipped in the
// remaining configurations. The three searches' decisions are cross-checked on every one.
#pragma once

#include <ostream>

namespace trellis::bench {

struct ContiguousBenchOptions {
  bool quick = false;  // CI-sized: machines 8^3 and 16^3, fewer repeats
  int repeat = 0;      // runs per search and configuration; 0 = default (15, quick: 3)
  double budget_seconds = 2.0;
  bool progress = false;  // progress lines on stderr (when stdout is a terminal)
};

// Prints the tables to `out`; returns 0, or 1 when the searches disagreed somewhere.
int run_contiguous_bench(const ContiguousBenchOptions& options, std::ostream& out);

}  // namespace trellis::bench
