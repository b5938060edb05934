// Overtakes: how often a job started while an earlier one that would have fit still waited. A
// measure of queue order for several controllers (daemon/controller.h): under lease allocation
// one queue order is kept (EASY backfilling lets a later job by only when the earlier one does
// not fit), under concurrent allocation each controller keeps its own jobs' order.
//
// "Fits" is counted by nodes: the earlier job asked for at most as many nodes as were free just
// before the later one started (a box allocator may still have found no box of its shape, so
// lease allocation is not always 0). Starts at the same instant are taken in job-id order, and
// only a job's last attempt is seen (the store keeps one start per job).
//
//   int64_t n = count_overtakes(jobs, machine.node_count());
#pragma once

#include <cstdint>
#include <vector>

#include "store/state_store.h"

namespace trellis::bench {

// Starts (of `jobs`, as the store lists them) that overtook an earlier waiting job that fit;
// each start counts at most once. Looks at most at the `look` oldest waiting jobs per start.
int64_t count_overtakes(const std::vector<StoredJob>& jobs, int node_count, int look = 64);

}  // namespace trellis::bench
