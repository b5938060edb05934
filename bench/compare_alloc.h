// compare-alloc: the same random job sequence placed by each allocator on one machine, and the
// locality each one achieves (issue 3, item 9).
//
// The sequence: job sizes log-uniform between 1 and an eighth of the machine
// (one size in two rounded to a power of two, as real workloads are), and each job leaves after
// a random number of later arrivals, chosen so that the machine runs about 85% full and
// fragments. Arrivals and departures are fixed by the seed before any allocator runs, so every
// allocator sees the same jobs in the same order; a job an allocator refuses is skipped (and
// counted) for that allocator only.
//
// Per placed job: mean pairwise hops (torus-aware L1 or fat-tree switch chips), span and
// contiguous runs along the machine's own curve (the snake on a mesh/torus, the leaf order on a
// fat tree), leaf switches spanned (fat trees), and the wall time of allocate() (median).
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "alloc/registry.h"

namespace trellis {

struct CompareJob {
  int nodes = 1;
  int departs_before = 0;  // index of the arrival it leaves before
};

// The job sequence for `machine` (pure function of the arguments).
std::vector<CompareJob> random_job_sequence(int node_count, int jobs, uint64_t seed);

struct AllocatorComparison {
  std::string allocator;
  int placed = 0;
  int refused = 0;
  double mean_hops = 0;
  double mean_span = 0;
  double mean_switches = -1;  // -1: not a fat tree
  double mean_runs = 0;
  double median_decision_us = 0;
};

struct CompareAllocOptions {
  int jobs = 500;
  uint64_t seed = 1;
  std::vector<std::string> allocators;  // empty: every registered allocator the machine takes
};

// Runs the comparison; `progress` (may be empty) hears each allocator's name before it runs.
// Errors: an allocator named in options that is unknown or does not fit the machine.
Result<std::vector<AllocatorComparison>> compare_allocators(
    const Machine& machine, const CompareAllocOptions& options,
    const std::function<void(const std::string&)>& progress = {});

void print_comparison(std::ostream& out, const Machine& machine, const CompareAllocOptions& options,
                      const std::vector<AllocatorComparison>& rows);

}  // namespace trellis
