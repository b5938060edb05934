#include "alloc/home_region.h"

namespace trellis {

HomeRegion::HomeRegion(const Machine& machine, std::unique_ptr<Allocator> inner)
    : Allocator(machine), inner_(std::move(inner)) {}

Result<Placement> HomeRegion::allocate(const NodeSet& free, const Request& request) const {
  if (!home_ || home_->count() < request.nodes) return inner_->allocate(free, request);
  Result<Placement> placed = inner_->allocate(free & *home_, request);
  if (placed || placed.error().code != Error::Code::kDoesNotFitNow) return placed;
  // It waits for room at home, unless even an empty home has none for it (a shape it cannot hold).
  if (inner_->allocate(*home_, request)) return placed;
  return inner_->allocate(free, request);
}

NodeSet HomeRegion::share(int node_count, int index, int count) {
  NodeSet nodes(node_count);
  if (count <= 0 || index < 0 || index >= count) return nodes;
  const int64_t from = static_cast<int64_t>(node_count) * index / count;
  const int64_t to = static_cast<int64_t>(node_count) * (index + 1) / count;
  for (int64_t n = from; n < to; ++n) nodes.set(static_cast<NodeId>(n));
  return nodes;
}

}  // namespace trellis
