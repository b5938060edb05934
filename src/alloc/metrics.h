// Allocation metrics: how much contiguous space is left, and how compact a set of nodes is.
// Fast enough to call after every simulated event (largest_free_box on torus:16x16x16 runs the
// word-parallel production search).
#pragma once

#include <optional>

#include "core/node_set.h"
#include "core/request.h"
#include "topology/box.h"
#include "topology/machine.h"
#include "topology/torus.h"

namespace trellis {

// The free box of largest volume, crossing the wrap-around where the machine wraps (torus mode)
// or nowhere (mesh mode); ties go to the smallest anchor id, then the smallest extents
// (alloc/contiguous/fit_rule.h has the canonical form). nullopt when no node is free.
std::optional<Box> largest_free_box(const Torus& machine, const NodeSet& free,
                                    PlacementMode mode = PlacementMode::kTorus);

// Number of free nodes (free.count(); here so that reports name their metrics in one place).
int free_node_count(const NodeSet& free);

// Mean hop distance over unordered pairs of distinct nodes of `nodes`; 0 for fewer than two.
// Exact for any set: on a mesh/torus the L1 sum splits by axis into sums over per-axis coordinate
// histograms (torus-aware), O(n * dims + sum N_k^2); on a fat tree pairs are counted per switch
// (a pair whose lowest common switch is at level L costs 2L-1); on a flat machine every pair is 1.
double average_pairwise_hops(const Machine& machine, const NodeSet& nodes);

}  // namespace trellis
