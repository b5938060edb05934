// The most compact allocation of n nodes that Trellis knows on a machine: the yardstick that the
// run-time models (sim/runtime_model.h) measure a job's placement against, since a trace records
// how long a job ran, not where. "Compact" is in average pairwise hops (alloc/metrics.h).
//
//   mesh/torus  the best of the boxes that hold n nodes with at most one partial slab: each box
//               (extents within the machine's, volume >= n, fewer than one slab of it left empty)
//               filled with its first n nodes in row-major order, its longest axis slowest. Exact
//               boxes are among them. The minimum over all n-node sets is not known in closed
//               form (the WADS 2005 pairwise-distance paper approximates it), so a placement may
//               beat this reference; models treat that as no inflation.
//   fat tree    the first n nodes: they fill leaf switches, then whole subtrees, in order.
//   flat        the first n nodes (every placement is as compact).
#pragma once

#include "core/node_set.h"
#include "topology/machine.h"

namespace trellis {

// n nodes (1 <= n <= machine.node_count(); programmer error otherwise).
NodeSet most_compact_nodes(const Machine& machine, int n);

}  // namespace trellis
