// The list of allocator families Trellis ships. Add one line per family.
#include "alloc/registry.h"

namespace trellis {

const AllocatorRegistry& AllocatorRegistry::builtin() {
  static const AllocatorRegistry registry = [] {
    AllocatorRegistry r;
    register_baseline_allocators(r);
    register_contiguous_allocators(r);
    register_locality_allocators(r);
    return r;
  }();
  return registry;
}

}  // namespace trellis
