// PartitionMask: an Allocator that places each job only on the nodes its request allows
// (Request::allowed: the job's partition), by asking the allocator it wraps with the free nodes
// outside the partition taken away. The wrapped allocator still works on the whole machine's
// topology (a box on the torus, few switches on the fat tree); policies need no change, since
// every placement they ask for goes through allocate().
//
//   auto masked = std::make_unique<PartitionMask>(machine, std::move(contiguous));
//   request.allowed = std::make_shared<const NodeSet>(partition_nodes);
//   masked->allocate(free, request);   // a subset of free & partition_nodes
#pragma once

#include <memory>

#include "alloc/allocator.h"

namespace trellis {

class PartitionMask final : public Allocator {
 public:
  PartitionMask(const Machine& machine, std::unique_ptr<Allocator> inner);

  std::string_view name() const override { return inner_->name(); }
  // The wrapped allocator's check, and a request for more nodes than its partition has never fits.
  Status check(const Request& request) const override;
  Result<Placement> allocate(const NodeSet& free, const Request& request) const override;
  const Curve* node_order() const override { return inner_->node_order(); }

  const Allocator& inner() const { return *inner_; }

 private:
  std::unique_ptr<Allocator> inner_;
};

}  // namespace trellis
