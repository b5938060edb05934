// Routes of single packets under seed 004's rules (digest 4.3 and 4.5).
//
//   dimension_order_route  the fault-free default: all x hops, then y, then z, each axis the
//                          short way round when it wraps (ties: the + direction). The packet
//                          moves to channel 1 on the hop that crosses a wrap link (link
//                          dateline). It is a legal walk under the recommended rules and all four
//                          phase tables.
//   legal_route            the shortest walk the rules allow that avoids failed routers: a
//                          breadth-first search over walk states (router, phase, channel, last
//                          direction) with the fixed direction order +x -x +y -y +z -z, so the
//                          route is deterministic. Used when the default route hits a fault.
#pragma once

#include <vector>

#include "core/node_set.h"
#include "core/result.h"
#include "topology/routing.h"

namespace trellis {

struct Hop {
  NodeId from = 0;  // the router the hop leaves
  int direction = 0;
  int vc = 0;  // the logical channel it uses
};

std::vector<Hop> dimension_order_route(const Torus& torus, NodeId source, NodeId destination);

// Errors: a failed or out-of-range end point, or no legal walk around the failures.
Result<std::vector<Hop>> legal_route(const Torus& torus, const RoutingRules& rules, NodeId source,
                                     NodeId destination, const NodeSet& failed);

}  // namespace trellis
