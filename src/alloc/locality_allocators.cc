// Registers every locality allocator family (issue 3) through one entry point.
#include "alloc/registry.h"

namespace trellis {

void register_linear_allocators(AllocatorRegistry& registry);
void register_mc_allocators(AllocatorRegistry& registry);
void register_fattree_allocators(AllocatorRegistry& registry);
void register_buddy_allocators(AllocatorRegistry& registry);

void register_locality_allocators(AllocatorRegistry& registry) {
  register_linear_allocators(registry);
  register_mc_allocators(registry);
  register_fattree_allocators(registry);
  register_buddy_allocators(registry);
}

}  // namespace trellis
