// `trellis bench sim`: how fast the simulator and the policies run, each figure next to a
// reference measured in the same run.
//
//   NASA iPSC     the full cleaned trace (18,239 jobs; embedded in the binary from
//                 data/workloads/NASA-iPSC-1993-3.1-cln.swf.gz, or any SWF file given) on 128 nodes
//                 (torus:8x4x4) with EASY and the contiguous allocator, with and without per-job
//                 placement records (the records feed the CSV, the Gantt chart and the
//                 largest-free-box series); reference: the same run with the topology-unaware
//                 first-available allocator
//   conservative  one policy pass with 10,000 queued jobs behind a full 1,024-node machine:
//                 building every reservation from scratch, then the "compression" pass after a
//                 running job ended early (fed the first pass's reservations); reference: an
//                 EASY pass on the same state
//   Lublin        a generated Lublin-Feitelson workload (1,000,000 jobs by default) on
//                 torus:32x32x32 with EASY and first-available: jobs simulated per second
#pragma once

#include <ostream>
#include <string>

namespace trellis::bench {

struct SimBenchOptions {
  std::string workload;        // an SWF trace (.swf or .swf.gz); empty: the embedded NASA trace
  long lublin_jobs = 1000000;  // 0 skips the Lublin run
  double lublin_load = 1.0;    // --load of the Lublin run (the model offers about 1.0 there)
  int queued_jobs = 10000;
  bool progress = false;
};

// Prints the tables to `out`; returns 0, or 2 when the trace cannot be read.
int run_sim_bench(const SimBenchOptions& options, std::ostream& out);

}  // namespace trellis::bench
