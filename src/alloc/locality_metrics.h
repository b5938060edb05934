// Locality metrics of one allocation (issue 3, item 8): how spread out a job's nodes are.
//
//   curve_span            distance along a curve from the first to the last node (on a ring,
//                         the shortest arc holding them all)
//   contiguous_runs       maximal runs of consecutive curve ranks (1 = one interval)
//   leaf_switches_spanned leaf switches of a fat tree that hold at least one node
//   sum/mean pairwise hops  over all unordered pairs of nodes: switch chips crossed on a fat
//                         tree (2L-1, seed 001), torus-aware L1 on a mesh/torus, 1 on flat
//
// The pairwise sums run in O(nodes x levels) on a tree and O(nodes + extent^2) per axis on a
// torus (L1 splits into per-axis sums over coordinate histograms), never over all pairs.
#pragma once

#include "core/node_set.h"
#include "topology/curve.h"
#include "topology/fat_tree.h"
#include "topology/machine.h"
#include "topology/torus.h"

namespace trellis {

int curve_span(const Curve& curve, const NodeSet& nodes);
int contiguous_runs(const Curve& curve, const NodeSet& nodes);
int leaf_switches_spanned(const FatTree& tree, const NodeSet& nodes);

long sum_pairwise_hops(const FatTree& tree, const NodeSet& nodes);
long sum_pairwise_hops(const Torus& torus, const NodeSet& nodes);
// Dispatches on the machine kind (a flat machine is a one-level tree: one hop per pair).
long sum_pairwise_hops(const Machine& machine, const NodeSet& nodes);
// The sum over the number of pairs; 0 for fewer than two nodes.
double mean_pairwise_hops(const Machine& machine, const NodeSet& nodes);

}  // namespace trellis
