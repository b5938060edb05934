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

NodeSet HomeRegion::share(int node_count, const std::vector<int64_t>& weights, size_t index) {
  NodeSet nodes(node_count);
  int64_t total = 0, before = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] < 0) return nodes;
    total += weights[i];
    if (i < index) before += weights[i];
  }
  if (index >= weights.size() || total <= 0) return nodes;
  // Cut points rounded the same way for every share, so that shares tile the machine.
  const auto cut = [&](int64_t weight_before) {
    return static_cast<int64_t>(static_cast<__int128>(node_count) * weight_before / total);
  };
  const int64_t from = cut(before), to = cut(before + weights[index]);
  for (int64_t n = from; n < to; ++n) nodes.set(static_cast<NodeId>(n));
  return nodes;
}

}  // namespace trellis
