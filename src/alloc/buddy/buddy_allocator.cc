#include "alloc/buddy/buddy_allocator.h"

#include <bit>
#include <vector>

#include "alloc/baseline.h"
#include "alloc/registry.h"

namespace trellis {

int buddy_block_size(int nodes) {
  return static_cast<int>(std::bit_ceil(static_cast<unsigned>(nodes)));
}

BuddyAllocator::BuddyAllocator(const Machine& machine, Curve curve)
    : Allocator(machine), curve_(std::move(curve)) {}

Status BuddyAllocator::check(const Request& request) const {
  if (auto ok = Allocator::check(request); !ok) return ok;
  const int largest = static_cast<int>(std::bit_floor(static_cast<unsigned>(curve_.size())));
  if (buddy_block_size(request.nodes) > largest)
    return never_fits("a buddy block for " + std::to_string(request.nodes) + " nodes has " +
                      std::to_string(buddy_block_size(request.nodes)) +
                      " nodes, but the largest on " + machine().describe() + " has " +
                      std::to_string(largest));
  return Ok{};
}

Result<Placement> BuddyAllocator::allocate(const NodeSet& free, const Request& request) const {
  if (auto ok = check(request); !ok) return ok.error();
  if (auto ok = require_free_count(free, request.nodes); !ok) return ok.error();
  const int n = curve_.size();
  const int want = buddy_block_size(request.nodes);
  // free_blocks[j][b]: the aligned block b of 2^j ranks lies inside the machine and is free.
  std::vector<std::vector<bool>> free_blocks;
  {
    NodeSet ranks = curve_.to_ranks(free);
    std::vector<bool> level(n);
    for (int r = 0; r < n; ++r) level[r] = ranks.test(r);
    free_blocks.push_back(std::move(level));
  }
  while (free_blocks.back().size() >= 2) {
    const auto& below = free_blocks.back();
    std::vector<bool> level(below.size() / 2);
    for (size_t b = 0; b < level.size(); ++b) level[b] = below[2 * b] && below[2 * b + 1];
    free_blocks.push_back(std::move(level));
  }
  const int want_order = std::countr_zero(static_cast<unsigned>(want));
  for (int j = want_order; j < static_cast<int>(free_blocks.size()); ++j) {
    const auto& level = free_blocks[j];
    const bool has_parent_level = j + 1 < static_cast<int>(free_blocks.size());
    for (size_t b = 0; b < level.size(); ++b) {
      if (!level[b]) continue;
      if (has_parent_level && b / 2 < free_blocks[j + 1].size() && free_blocks[j + 1][b / 2])
        continue;  // not maximal: its buddy is free as well
      const int first = static_cast<int>(b) << j;
      Placement p{NodeSet(free.size()), std::nullopt, {}};
      for (int r = first; r < first + request.nodes; ++r) p.nodes.set(curve_.node_at(r));
      p.note = "buddy block of " + std::to_string(want) + " at rank " + std::to_string(first) +
               (j > want_order ? " (split from " + std::to_string(1 << j) + ")" : "");
      return p;
    }
  }
  return does_not_fit_now();
}

void register_buddy_allocators(AllocatorRegistry& registry) {
  registry.add(
      {"buddy", "binary buddy: aligned power-of-two blocks along a curve (option curve=...)", "any",
       [](const Machine& m, const AllocatorOptions& given) -> Result<std::unique_ptr<Allocator>> {
         ComponentOptions o = given.for_component("buddy");
         if (auto ok = o.only({"curve"}); !ok) return ok.error();
         CurveKind kind = m.torus() && m.torus()->dims() <= 3 ? CurveKind::kHilbert
                          : m.torus()                         ? CurveKind::kSnake
                                                              : CurveKind::kRowMajor;
         if (auto c = o.get("curve")) {
           auto parsed = parse_curve_kind(*c);
           if (!parsed) return o.bad_value("curve", parsed.error().message);
           kind = *parsed;
         }
         auto curve = Curve::for_machine(kind, m);
         if (!curve) return o.bad_value("curve", curve.error().message);
         return make_allocator<BuddyAllocator>(m, std::move(*curve));
       }});
}

}  // namespace trellis
