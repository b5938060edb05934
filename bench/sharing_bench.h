// `trellis bench sharing`: how long the placement of one job takes when nodes are shared by
// cores, memory and GPUs (alloc/node_sharing.h over alloc/node_pool.h), against today's whole-node
// decision of the machine's own allocator, measured in the same run on the same machine and the
// same stream of jobs, and what the pool's state costs in memory.
//
// Machine flat:16384 (--quick: flat:1024) of nodes "sockets=2,cores=128,numa=8,mem=512G,gpus=8".
// Jobs: half of one node with 1 to 16 cores and 2 GiB per core, a fifth of one node with 1 to 4
// GPUs (16 cores and 32 GiB each), a fifth of 1 to 8 whole nodes, a tenth of 16 to 64 whole nodes.
// The machine is filled to 70% of its cores, then each decision is timed, its job started, and a
// running job chosen at random ends (untimed), so that the occupancy stays where it is. The
// whole-node reference places the same jobs as node counts (a job of one node takes one node)
// on a machine filled to the same share of its nodes.
#pragma once

#include <ostream>

namespace trellis::bench {

struct SharingBenchOptions {
  bool quick = false;
  int decisions = 0;  // timed per placement kind; 0 = 20,000 (quick: 2,000)
};

int run_sharing_bench(const SharingBenchOptions& options, std::ostream& out);

}  // namespace trellis::bench
