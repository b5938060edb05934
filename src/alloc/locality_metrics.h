// Locality metrics of one allocation (issue 3, item 8): how spread out a job's nodes are.
//
//   curve_span            distance along a curve from the first to the last node (on a ring,
//                         the shortest arc holding them all)
//   contiguous_runs       maximal runs of consecutive curve ranks (1 = one interval)
//   leaf_switches_spanned leaf switches of a fat tree that hold at least one node
//   sum_pairwise_hops     over all unordered pairs of a fat tree's nodes: switch chips crossed
//                         (2L-1 for a lowest common switch at level L, seed 001), counted per
//                         switch level in O(nodes x levels), never over all pairs
// The average over pairs, on any machine, is average_pairwise_hops in alloc/metrics.h.
#pragma once

#include "core/node_set.h"
#include "topology/curve.h"
#include "topology/fat_tree.h"

namespace trellis {

int curve_span(const Curve& curve, const NodeSet& nodes);
int contiguous_runs(const Curve& curve, const NodeSet& nodes);
int leaf_switches_spanned(const FatTree& tree, const NodeSet& nodes);

long sum_pairwise_hops(const FatTree& tree, const NodeSet& nodes);

}  // namespace trellis
