#include "alloc/baseline.h"

#include <bit>
#include <vector>

#include "alloc/registry.h"

namespace trellis {

Status require_free_count(const NodeSet& free, int nodes) {
  if (free.count() < nodes) return does_not_fit_now();
  return Ok{};
}

Result<Placement> FirstAvailableAllocator::allocate(const NodeSet& free,
                                                    const Request& request) const {
  if (auto ok = require_free_count(free, request.nodes); !ok) return ok.error();
  Placement p{NodeSet(free.size()), std::nullopt, {}};
  // A word at a time: whole words while they fit, then the lowest bits of the last one.
  const auto in = free.words();
  const auto out = p.nodes.mutable_words();
  int left = request.nodes;
  for (size_t w = 0; left > 0; ++w) {
    NodeSet::Word bits = in[w];
    int have = std::popcount(bits);
    if (have <= left) {
      out[w] = bits;
      left -= have;
      continue;
    }
    for (; left > 0; --left) {
      NodeSet::Word lowest = bits & (~bits + 1);
      out[w] |= lowest;
      bits ^= lowest;
    }
  }
  return p;
}

namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

Result<Placement> RandomAllocator::allocate(const NodeSet& free, const Request& request) const {
  if (auto ok = require_free_count(free, request.nodes); !ok) return ok.error();
  // Mix the seed with the inputs so that the draw is a pure function of them.
  uint64_t state = seed_ ^ (static_cast<uint64_t>(request.nodes) << 32);
  for (NodeSet::Word w : free.words()) state = splitmix64(state) ^ w;
  std::vector<NodeId> ids = free.to_vector();
  Placement p{NodeSet(free.size()), std::nullopt, {}};
  for (int i = 0; i < request.nodes; ++i) {  // partial Fisher-Yates
    size_t j = i + splitmix64(state) % (ids.size() - i);
    std::swap(ids[i], ids[j]);
    p.nodes.set(ids[i]);
  }
  return p;
}

void register_baseline_allocators(AllocatorRegistry& registry) {
  registry.add(
      {"first-available", "lowest free node ids (topology-unaware baseline)", "any",
       [](const Machine& m, const AllocatorOptions& o) -> Result<std::unique_ptr<Allocator>> {
         if (auto ok = o.for_component("first-available").only({}); !ok) return ok.error();
         return make_allocator<FirstAvailableAllocator>(m);
       }});
  registry.add(
      {"random", "uniformly random free nodes (option seed=N)", "any",
       [](const Machine& m, const AllocatorOptions& given) -> Result<std::unique_ptr<Allocator>> {
         ComponentOptions o = given.for_component("random");
         if (auto ok = o.only({"seed"}); !ok) return ok.error();
         auto seed = o.whole_number("seed", 1, 0);
         if (!seed) return seed.error();
         return make_allocator<RandomAllocator>(m, static_cast<uint64_t>(*seed));
       }});
}

}  // namespace trellis
