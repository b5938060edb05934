#include "alloc/contiguous/contiguous_allocator.h"

#include "alloc/contiguous/orientations.h"
#include "alloc/registry.h"

namespace trellis {

ContiguousAllocator::ContiguousAllocator(const Machine& machine, SearchKind search)
    : Allocator(machine), search_(make_box_search(search, *machine.torus())) {}

Status ContiguousAllocator::check(const Request& request) const {
  if (auto ok = Allocator::check(request); !ok) return ok;
  if (orientations_for(torus(), request).empty()) {
    if (request.has_shape())
      return never_fits("shape " + format_shape(request.shape) + " does not fit in " +
                        torus().describe() +
                        (request.rotate ? " in any orientation" : " as given"));
    return never_fits("no box of exactly " + std::to_string(request.nodes) + " nodes fits in " +
                      torus().describe());
  }
  return Ok{};
}

Result<Placement> ContiguousAllocator::allocate(const NodeSet& free, const Request& request) const {
  if (auto ok = check(request); !ok) return ok.error();
  auto choice = search_->choose(free, orientations_for(torus(), request), request.mode);
  if (!choice) return does_not_fit_now();
  return Placement{choice->box.nodes(torus()), choice->box, {}};
}

void register_contiguous_allocators(AllocatorRegistry& registry) {
  registry.add(
      {"contiguous",
       "one free box per job, best fit among free boxes (option "
       "search=production|brute|embodiment1)",
       "mesh/torus",
       [](const Machine& m, const AllocatorOptions& given) -> Result<std::unique_ptr<Allocator>> {
         ComponentOptions o = given.for_component("contiguous");
         if (auto ok = o.only({"search"}); !ok) return ok.error();
         if (!m.torus())
           return fail("allocator 'contiguous' needs a mesh/torus machine, not " + m.describe());
         SearchKind kind = SearchKind::kProduction;
         if (auto s = o.get("search")) {
           auto parsed = parse_search_kind(*s);
           if (!parsed) return o.bad_value("search", parsed.error().message);
           kind = *parsed;
         }
         return make_allocator<ContiguousAllocator>(m, kind);
       },
       /*places_only_boxes=*/true});
}

}  // namespace trellis
