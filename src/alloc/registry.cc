#include "alloc/registry.h"

namespace trellis {

void AllocatorRegistry::add(AllocatorInfo info) {
  infos_.push_back(std::move(info));
}

const AllocatorInfo* AllocatorRegistry::find(std::string_view name) const {
  for (const auto& info : infos_)
    if (info.name == name) return &info;
  return nullptr;
}

std::string default_allocator_for(const Machine& machine) {
  if (machine.torus()) return "contiguous";
  if (machine.kind() == Machine::Kind::kFatTree) return "fattree-units";
  return "first-available";
}

std::string AllocatorRegistry::names() const {
  std::string known;
  for (const auto& info : infos_) known += (known.empty() ? "" : ", ") + info.name;
  return known;
}

Result<std::unique_ptr<Allocator>> AllocatorRegistry::create(
    std::string_view name, const Machine& machine, const AllocatorOptions& options) const {
  const AllocatorInfo* info = find(name);
  if (!info) return fail("unknown allocator '" + std::string(name) + "' (known: " + names() + ")");
  return info->factory(machine, options);
}

}  // namespace trellis
