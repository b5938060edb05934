// AllocatorRegistry: names -> factories, so that commands, policies and config files pick an
// allocator by name ("contiguous", "mc1x1", ...); an instance of the one Registry template.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "alloc/allocator.h"
#include "core/registry.h"

namespace trellis {

using AllocatorFactory = std::function<Result<std::unique_ptr<Allocator>>(
    const Machine& machine, const AllocatorOptions& options)>;

struct AllocatorInfo {
  std::string name;
  std::string summary;   // one line for `trellis list`
  std::string machines;  // which machine kinds it accepts, e.g. "mesh/torus", "any"
  AllocatorFactory factory;
  // Places every job as one box, whatever its request's mode: it cannot honour noncont mode
  // (any nodes), and so cannot place a job when its nodes are free but scattered.
  bool places_only_boxes = false;
};

// The allocators by name (core/registry.h has the verbs): create(name, machine, options).
class AllocatorRegistry
    : public Registry<AllocatorInfo, Allocator, const Machine&, const AllocatorOptions&> {
 public:
  AllocatorRegistry() : Registry("allocator") {}

  // Every allocator Trellis ships, registered once.
  static const AllocatorRegistry& builtin();

  using Registry::create;
  // The named allocator for `machine` with its default options.
  Result<std::unique_ptr<Allocator>> create(std::string_view name, const Machine& machine) const {
    return create(name, machine, AllocatorOptions{});
  }
};

// The allocator every command uses when none is named: contiguous on a mesh/torus, fattree-units
// on a fat tree, first-available on a flat machine.
std::string default_allocator_for(const Machine& machine);

// Builds an allocator of type A as a factory's result.
template <typename A, typename... Args>
Result<std::unique_ptr<Allocator>> make_allocator(Args&&... args) {
  return std::unique_ptr<Allocator>(std::make_unique<A>(std::forward<Args>(args)...));
}

// Each allocator family registers itself through one of these (alloc/builtin.cc calls them all).
void register_baseline_allocators(AllocatorRegistry& registry);
void register_contiguous_allocators(AllocatorRegistry& registry);
// Locality allocators: linear (curves), MC, fat-tree units, buddy.
void register_locality_allocators(AllocatorRegistry& registry);

}  // namespace trellis
