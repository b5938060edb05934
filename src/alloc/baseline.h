// Baseline allocators that ignore topology, for comparison:
//   first-available  the lowest free node ids, as a topology-unaware scheduler hands them out
//   random           free nodes drawn uniformly at random (option seed=N, default 1); the draw is
//                    a pure function of the seed, the free set and the request, so runs repeat
#pragma once

#include <cstdint>

#include "alloc/allocator.h"

namespace trellis {

class FirstAvailableAllocator : public Allocator {
 public:
  explicit FirstAvailableAllocator(const Machine& machine) : Allocator(machine) {}
  std::string_view name() const override { return "first-available"; }
  Result<Placement> allocate(const NodeSet& free, const Request& request) const override;
};

class RandomAllocator : public Allocator {
 public:
  RandomAllocator(const Machine& machine, uint64_t seed) : Allocator(machine), seed_(seed) {}
  std::string_view name() const override { return "random"; }
  Result<Placement> allocate(const NodeSet& free, const Request& request) const override;

 private:
  uint64_t seed_;
};

// Shared by allocators that place any nodes: does_not_fit_now() when `free` has fewer than
// `nodes`.
Status require_free_count(const NodeSet& free, int nodes);

}  // namespace trellis
