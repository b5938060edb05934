// Linear allocators: the machine as a line (or ring) of nodes along a curve, and a job as a set
// of ranks on it (seed 004; Leung et al., Cluster 2002). Registered names:
//   sorted-free-list-<curve>   the lowest free ranks, gaps ignored (the old Cplant default)
//   linear-firstfit-<curve>    first fit       on the free intervals of the ring (or line),
//   linear-bestfit-<curve>     best fit        see alloc/linear/ring_packing.h; when no
//   linear-sumsq-<curve>       sum of squares  interval is large enough, min span
// Option fallback=minspan (default) or fail chooses what happens when no interval fits.
// <curve> is rowmajor, snake or hilbert (topology/curve.h). The curve closes into a ring only
// when its ends are neighbours (the snake on Red Storm's z torus); then a job may run through
// the seam. On a fat tree only -rowmajor applies (ids follow the leaves). Shapes in a request
// are ignored: these allocators place a node count.
#pragma once

#include <string>

#include "alloc/allocator.h"
#include "alloc/linear/ring_packing.h"
#include "topology/curve.h"

namespace trellis {

enum class LinearPolicy { kSortedFreeList, kFirstFit, kBestFit, kSumOfSquares };

class LinearAllocator : public Allocator {
 public:
  LinearAllocator(const Machine& machine, Curve curve, LinearPolicy policy, bool min_span_fallback,
                  std::string name);
  std::string_view name() const override { return name_; }
  Result<Placement> allocate(const NodeSet& free, const Request& request) const override;

  const Curve& curve() const { return curve_; }
  const Curve* node_order() const override { return &curve_; }

 private:
  Curve curve_;
  LinearPolicy policy_;
  bool min_span_fallback_;
  std::string name_;
};

}  // namespace trellis
