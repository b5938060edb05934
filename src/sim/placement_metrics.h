// Locality of one job's nodes, as the literature measures it (peers-and-conventions.md, 5.3):
//   average pairwise hops  mean over all pairs of nodes of Machine::hop_distance (L1 on a mesh,
//                          the short way round on wrapping axes; switch chips crossed on a tree)
//   leaf switches spanned  distinct leaf switches the nodes hang from (fat trees; flat = 1)
// Both are computed from per-axis or per-switch counts, not by visiting every pair, so they stay
// cheap for jobs of thousands of nodes.
#pragma once

#include <optional>

#include "core/node_set.h"
#include "topology/machine.h"

namespace trellis {

// 0 for fewer than two nodes.
double average_pairwise_hops(const Machine& machine, const NodeSet& nodes);
// Nullopt on a mesh/torus, where the machine has no switches.
std::optional<int> leaf_switches_spanned(const Machine& machine, const NodeSet& nodes);

}  // namespace trellis
