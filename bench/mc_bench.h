// `trellis bench mc`: decision time of the MC1x1 allocator (prefix-sum shell counts, pruning)
// against the naive reference of digest 4.10, measured in the same run on the same free sets.
//
// The reference evaluates every free centre by scanning every free node for its shell (O(F^2)
// distance computations), then sorts the winning cube's nodes; the production allocator counts
// shells from a prefix-sum table and stops a centre as soon as it cannot win. Both must choose
// the same nodes on every configuration (checked; a disagreement is reported and exits 1).
//
// Machine mesh:27x16x24:wrap=z (Red Storm; --quick: mesh:12x8x8:wrap=z), occupancy 50% random
// and 90% random, jobs of 27, 100 and 1000 nodes, shells clipped and wrapped.
#pragma once

#include <ostream>

namespace trellis::bench {

struct McBenchOptions {
  bool quick = false;
  int repeat = 0;         // decisions timed per search and configuration; 0 = 5 (quick: 3)
  bool progress = false;  // progress on stderr
};

int run_mc_bench(const McBenchOptions& options, std::ostream& out);

}  // namespace trellis::bench
