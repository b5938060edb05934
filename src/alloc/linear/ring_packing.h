// One-dimensional bin packing on a line or ring of ranks (seed 004, digest 4.8-4.9).
//
// The free ranks form maximal free intervals; on a ring the run through the seam (ranks N-1
// and 0 both free) is one interval whose start is its high rank, so it loses ties to intervals
// that start lower. An all-free ring is one interval (0, N). A job goes into one interval,
// left-justified (the lowest ranks, "the smallest number line value"):
//   first fit       the lowest start that is large enough
//   best fit        the least left over in the chosen interval
//   sum of squares  the least sum over sizes s of n_s^2, n_s = number of free intervals of size
//                   s after the placement (the chosen interval's remainder counts if positive)
// Ties go to the lowest start. When no interval is large enough, min_span picks the k free
// ranks, consecutive among the free ones, whose first-to-last distance along the curve is the
// least (the production CPA's fallback); ties again to the lowest first rank.
#pragma once

#include <optional>
#include <vector>

#include "core/node_set.h"

namespace trellis {

struct FreeInterval {
  int start = 0;   // first rank; for a run through the seam, its rank near N-1
  int length = 0;  // ranks start, start+1, ... (mod N)
};

enum class IntervalFit { kFirst, kBest, kSumOfSquares };

// Maximal free intervals of `free_ranks`, sorted by start.
std::vector<FreeInterval> free_intervals(const NodeSet& free_ranks, bool ring);

// The interval a job of `k` ranks goes into under `fit`, or nullopt when none is large enough.
std::optional<FreeInterval> choose_interval(const std::vector<FreeInterval>& intervals, int k,
                                            IntervalFit fit);

// The k ranks of `interval` a job takes (its first k, modulo n on a ring).
std::vector<int> place_in_interval(const FreeInterval& interval, int k, int n);

// The min-span choice of k free ranks (requires at least k free). On a ring a window may run
// through the seam.
std::vector<int> min_span(const NodeSet& free_ranks, int k, bool ring);

// The distance along the curve from the first to the last of `ranks` (sorted or not) on a
// line; on a ring, the shortest arc that holds them all.
int curve_span(const std::vector<int>& ranks, int n, bool ring);

}  // namespace trellis
