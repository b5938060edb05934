#include "topology/route.h"

#include <algorithm>
#include <deque>

namespace trellis {

std::vector<Hop> dimension_order_route(const Torus& torus, NodeId source, NodeId destination) {
  std::vector<Hop> hops;
  const Coords to = torus.coords(destination);
  NodeId at = source;
  int vc = 0;
  for (int axis = 0; axis < torus.dims(); ++axis) {
    const int extent = torus.extent(axis);
    int forward = (to[axis] - torus.coords(at)[axis] + extent) % extent;  // hops going +
    int dir = 2 * axis, count = to[axis] - torus.coords(at)[axis];
    if (torus.wraps(axis)) {
      count = forward;
      if (forward > extent - forward) {  // the short way is -; ties stay +
        dir = 2 * axis + 1;
        count = extent - forward;
      }
    } else if (count < 0) {
      dir = 2 * axis + 1;
      count = -count;
    }
    for (int i = 0; i < count; ++i) {
      bool crosses_wrap = false;
      NodeId next = neighbour(torus, at, dir, &crosses_wrap);
      if (crosses_wrap) vc = 1;
      hops.push_back({at, dir, vc});
      at = next;
    }
  }
  return hops;
}

Result<std::vector<Hop>> legal_route(const Torus& torus, const RoutingRules& rules, NodeId source,
                                     NodeId destination, const NodeSet& failed) {
  const int n = torus.node_count();
  if (torus.dims() > 3) return fail("routes cover meshes and tori of 1 to 3 axes");
  for (NodeId end : {source, destination}) {
    if (end < 0 || end >= n)
      return fail("router " + std::to_string(end) + " is not on " + torus.describe());
    if (failed.test(end)) return fail("router " + std::to_string(end) + " has failed");
  }
  const int phases = static_cast<int>(rules.phases.size());
  auto index = [&](const WalkState& s) {
    return ((static_cast<size_t>(s.node) * phases + s.phase) * 2 + s.vc) * (kDirections + 1) +
           s.last;
  };
  std::vector<bool> seen(static_cast<size_t>(n) * phases * 2 * (kDirections + 1), false);
  const WalkState start{source, 0, 0, kInjected};
  seen[index(start)] = true;
  std::vector<WalkState> states = {start};  // every state reached, in breadth-first order
  std::vector<size_t> from = {0};           // from[i]: the position of states[i]'s predecessor
  std::deque<size_t> queue = {0};
  std::array<WalkState, 2> next;
  while (!queue.empty()) {
    const size_t at = queue.front();
    queue.pop_front();
    const WalkState s = states[at];
    if (s.node == destination) {
      std::vector<Hop> hops;
      for (size_t i = at; i != 0; i = from[i]) {
        const WalkState& here = states[i];
        hops.push_back({states[from[i]].node, here.last, here.vc});
      }
      std::reverse(hops.begin(), hops.end());
      return hops;
    }
    for (int d = 0; d < kDirections; ++d) {
      const int count = successors(torus, rules, s, d, next);
      for (int i = 0; i < count; ++i) {
        if (failed.test(next[i].node)) continue;
        const size_t si = index(next[i]);
        if (seen[si]) continue;
        seen[si] = true;
        states.push_back(next[i]);
        from.push_back(at);
        queue.push_back(states.size() - 1);
      }
    }
  }
  return fail("no route the rules allow from router " + std::to_string(source) + " to " +
              std::to_string(destination) + " around the failed routers");
}

}  // namespace trellis
