// HomeRegion: an Allocator that places a job only inside a region of the machine (its home),
// unless the job could not fit there even if the whole home were free: then anywhere it fits.
//
// It exists for concurrent allocators (several controllers placing on one machine from their own
// views of the free nodes, daemon/controller.h): the wrapped allocator, being deterministic,
// would make every controller choose the same "best" free nodes at once, and all but one of their
// commits would then be refused. Each controller instead places in a region of its own (its share
// of the machine in node order, an equal one for each controller checked in), so that their
// choices meet only for jobs larger than a share and while shares move. (Preferring the home but
// spilling beyond it when it is full was measured: on a busy machine every controller spills onto
// every freed node, and most commits conflicted.) The home is set between passes, never during one,
// so that a pass sees one deterministic allocator.
//
//   auto preferring = std::make_unique<HomeRegion>(machine, std::move(contiguous));
//   preferring->set_home(NodeSet::of(n, first_quarter));
//   preferring->allocate(free, request);  // in the first quarter if it fits there
#pragma once

#include <memory>
#include <optional>

#include "alloc/allocator.h"

namespace trellis {

class HomeRegion final : public Allocator {
 public:
  HomeRegion(const Machine& machine, std::unique_ptr<Allocator> inner);

  std::string_view name() const override { return inner_->name(); }
  Status check(const Request& request) const override { return inner_->check(request); }
  Result<Placement> allocate(const NodeSet& free, const Request& request) const override;
  const Curve* node_order() const override { return inner_->node_order(); }

  // std::nullopt: no preference (the wrapped allocator alone).
  void set_home(std::optional<NodeSet> home) { home_ = std::move(home); }
  const std::optional<NodeSet>& home() const { return home_; }

  // The `index`-th of `count` equal shares of the machine's nodes in id order (a slab of a mesh
  // or torus, a run of leaves of a fat tree); empty for an index out of range.
  static NodeSet share(int node_count, int index, int count);

 private:
  std::unique_ptr<Allocator> inner_;
  std::optional<NodeSet> home_;
};

}  // namespace trellis
