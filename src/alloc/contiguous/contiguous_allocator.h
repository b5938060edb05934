// ContiguousAllocator ("contiguous"): one free box per job on a mesh/torus, chosen by seed 000's
// best-fit rule made exact (fit_rule.h): the job goes into the tightest free run along x, so that
// large free space stays large.
//
// Options: search=production (default) | brute | embodiment1 picks the search (box_search.h);
// all three give identical decisions, the others exist as oracle and reference.
#pragma once

#include <memory>

#include "alloc/allocator.h"
#include "alloc/contiguous/box_search.h"

namespace trellis {

class ContiguousAllocator : public Allocator {
 public:
  // `machine` must be a mesh/torus.
  ContiguousAllocator(const Machine& machine, SearchKind search);

  std::string_view name() const override { return "contiguous"; }
  // Also rejects shapes that fit in no orientation, and noncontiguous machines.
  Status check(const Request& request) const override;
  Result<Placement> allocate(const NodeSet& free, const Request& request) const override;

  const BoxSearch& search() const { return *search_; }

 private:
  const Torus& torus() const { return *machine().torus(); }

  std::shared_ptr<const BoxSearch> search_;
};

}  // namespace trellis
