#include "alloc/node_sharing.h"

namespace trellis {

NodeSharingAllocator::NodeSharingAllocator(const Machine& machine, const Allocator& inner,
                                           const NodePool& pool)
    : Allocator(machine), inner_(inner), pool_(pool) {}

Result<Placement> NodeSharingAllocator::allocate(const NodeSet& free,
                                                 const Request& request) const {
  const NodeDemand* demand = request.demand.get();
  if (demand == nullptr || demand->whole) {
    // Whole nodes: among the idle ones (and, with a demand, those of its features).
    NodeSet idle = free & pool_.idle_nodes();
    if (demand != nullptr) idle = pool_.fitting(idle, *demand);
    Result<Placement> placement = inner_.allocate(idle, request);
    if (!placement) return placement;
    placement->nodes.for_each([&](NodeId node) { placement->grants.push_back(pool_.whole(node)); });
    return placement;
  }
  // A job of one node is placed here, not by the wrapped allocator: the nodes it may have
  // (its partition's, Request::allowed) are applied here too.
  NodeSet fitting = pool_.fitting(request.allowed ? free & *request.allowed : free, *demand);
  if (request.nodes == 1 && !request.has_shape()) {
    std::optional<NodeId> best = pool_.best_fit(fitting, *demand);
    if (!best) return does_not_fit_now();
    if (pool_.idle_nodes().test(*best) && round_free_.size() == free.size()) {
      NodeSet placed_this_call = round_free_ - free;
      if (pool_.fitting(placed_this_call, *demand).any()) return does_not_fit_now();
    }
    Placement placement;
    placement.nodes = NodeSet(free.size());
    placement.nodes.set(*best);
    placement.grants.push_back(*pool_.choose(*best, *demand));
    return placement;
  }
  Result<Placement> placement = inner_.allocate(fitting, request);
  if (!placement) return placement;
  placement->nodes.for_each(
      [&](NodeId node) { placement->grants.push_back(*pool_.choose(node, *demand)); });
  return placement;
}

}  // namespace trellis
