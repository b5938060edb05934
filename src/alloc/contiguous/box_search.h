// BoxSearch: the one interface behind which the contiguous allocator's three searches sit.
//
//   brute force   enumerates orientations and anchors node by node; the test oracle
//   embodiment1   seed 000's embodiment 1 (virtual doubled axes, shrinking XSize cap, search
//                 table), generalised to any dimension count; a faithful but slow reference
//   production    word-parallel over 64-bit rows along x; what the allocator uses by default
//
// All three implement the rule of fit_rule.h exactly and must return identical answers; tests
// compare them on thousands of random grids. A search is built for one machine and is pure.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "alloc/contiguous/fit_rule.h"
#include "core/node_set.h"
#include "core/result.h"
#include "topology/torus.h"

namespace trellis {

class BoxSearch {
 public:
  virtual ~BoxSearch() = default;

  virtual std::string_view name() const = 0;

  // The placement the selection rule picks among `orientations` (as orientations_for lists
  // them) on the free nodes, or nullopt when no orientation fits anywhere now.
  virtual std::optional<BoxChoice> choose(const NodeSet& free,
                                          const std::vector<Shape>& orientations,
                                          PlacementMode mode) const = 0;

  // The largest free box (fit_rule.h), crossing where `mode` and the machine allow; nullopt
  // when no node is free.
  virtual std::optional<Box> largest_free_box(const NodeSet& free, PlacementMode mode) const = 0;
};

enum class SearchKind { kProduction, kBruteForce, kEmbodiment1 };

// "production", "brute" or "embodiment1".
Result<SearchKind> parse_search_kind(std::string_view text);
std::string_view to_string(SearchKind kind);

std::unique_ptr<BoxSearch> make_box_search(SearchKind kind, const Torus& machine);

// The individual searches (defined in their own files).
std::unique_ptr<BoxSearch> make_brute_force_search(const Torus& machine);
std::unique_ptr<BoxSearch> make_embodiment1_search(const Torus& machine);
std::unique_ptr<BoxSearch> make_production_search(const Torus& machine);

}  // namespace trellis
