#include "alloc/registry.h"

namespace trellis {

std::string default_allocator_for(const Machine& machine) {
  if (machine.torus()) return "contiguous";
  if (machine.kind() == Machine::Kind::kFatTree) return "fattree-units";
  return "first-available";
}

}  // namespace trellis
