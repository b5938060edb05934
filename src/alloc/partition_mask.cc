#include "alloc/partition_mask.h"

namespace trellis {

PartitionMask::PartitionMask(const Machine& machine, std::unique_ptr<Allocator> inner)
    : Allocator(machine), inner_(std::move(inner)) {}

Status PartitionMask::check(const Request& request) const {
  if (Status ok = inner_->check(request); !ok) return ok;
  if (request.allowed && request.allowed->count() < request.nodes)
    return never_fits("needs " + std::to_string(request.nodes) + " nodes, its partition has " +
                      std::to_string(request.allowed->count()));
  return Ok{};
}

Result<Placement> PartitionMask::allocate(const NodeSet& free, const Request& request) const {
  if (!request.allowed) return inner_->allocate(free, request);
  NodeSet allowed = free & *request.allowed;
  if (allowed.count() < request.nodes) return does_not_fit_now();
  return inner_->allocate(allowed, request);
}

}  // namespace trellis
