// Every registered allocator, on every machine kind it accepts: over thousands of random free
// sets it never returns a busy node, never the wrong count, and always the same answer twice.
#include <gtest/gtest.h>

#include <random>

#include "alloc/registry.h"

namespace trellis {
namespace {

TEST(DefaultAllocator, OneRulePerMachineKindNamingARegisteredAllocatorThatAcceptsIt) {
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"torus:8x8", "contiguous"},
      {"mesh:4x4x4", "contiguous"},
      {"fattree:4,4,4", "fattree-units"},
      {"flat:16", "first-available"}};
  for (const auto& [spec, name] : expected) {
    auto machine = Machine::parse(spec);
    ASSERT_TRUE(machine) << spec;
    EXPECT_EQ(default_allocator_for(*machine), name) << spec;
    EXPECT_TRUE(AllocatorRegistry::builtin().create(default_allocator_for(*machine), *machine))
        << spec;
  }
}

// Every registered allocator on every machine kind it takes: a request larger than the machine is
// refused by check() as never fitting; any request on a machine with no free node does not fit
// now, and says so by its code.
TEST(AllocatorProperty, RefusalsCarryNeverFitsOrDoesNotFitNow) {
  const auto& registry = AllocatorRegistry::builtin();
  int applicable = 0;
  for (const char* spec : {"mesh:6x5x4", "torus:8x8", "fattree:4,4,4", "flat:40"}) {
    auto m = Machine::parse(spec);
    ASSERT_TRUE(m) << m.error().message;
    const int n = m->node_count();
    for (const auto& info : registry.all()) {
      auto allocator = registry.create(info.name, *m);
      if (!allocator) continue;
      ++applicable;
      for (PlacementMode mode : {PlacementMode::kTorus, PlacementMode::kNonContiguous}) {
        auto too_big = (*allocator)->check(Request::count(n + 1, mode));
        ASSERT_FALSE(too_big) << info.name << " on " << spec;
        EXPECT_EQ(too_big.error().code, Error::Code::kNeverFits) << info.name << " on " << spec;
        for (int k : {1, 2, n / 2}) {
          Request request = Request::count(k, mode);
          if (!(*allocator)->check(request)) continue;
          auto none_free = (*allocator)->allocate(NodeSet(n), request);
          ASSERT_FALSE(none_free) << info.name << " on " << spec;
          EXPECT_EQ(none_free.error().code, Error::Code::kDoesNotFitNow)
              << info.name << " on " << spec << ": " << none_free.error().message;
        }
      }
    }
  }
  EXPECT_GE(applicable, static_cast<int>(registry.all().size()));
}

TEST(AllocatorProperty, NeverBusyNeverWrongCountAlwaysRepeatable) {
  const char* specs[] = {"mesh:6x5x4",    "torus:8x8",       "mesh:6x4x4:wrap=z",
                         "fattree:4,4,4", "fattree:2,2,2,2", "flat:40"};
  const auto& registry = AllocatorRegistry::builtin();
  std::mt19937 rng(42);
  int applicable = 0;
  for (const char* spec : specs) {
    auto m = Machine::parse(spec);
    ASSERT_TRUE(m) << m.error().message;
    const int n = m->node_count();
    for (const auto& info : registry.all()) {
      auto allocator = registry.create(info.name, *m);
      if (!allocator) continue;  // not for this machine kind
      ++applicable;
      int placed = 0;
      for (int trial = 0; trial < 1500; ++trial) {
        NodeSet free(n);
        const int density = 1 + rng() % 9;  // from nearly full to nearly empty
        for (NodeId id = 0; id < n; ++id)
          if (static_cast<int>(rng() % 10) < density) free.set(id);
        const int k = 1 + rng() % (free.count() + 2);
        Request request = Request::count(k, PlacementMode::kNonContiguous);
        if (auto ok = (*allocator)->check(request); !ok) {
          ASSERT_EQ(ok.error().code, Error::Code::kNeverFits) << info.name << " on " << spec;
          continue;
        }
        auto p = (*allocator)->allocate(free, request);
        if (!p) {
          ASSERT_EQ(p.error().code, Error::Code::kDoesNotFitNow)
              << info.name << " on " << spec << ": " << p.error().message;
        }
        if (k > free.count()) {
          ASSERT_FALSE(p) << info.name << " on " << spec << " placed more nodes than are free";
          continue;
        }
        if (!p) continue;  // some allocators refuse fragmented states; that is their answer
        ++placed;
        ASSERT_EQ(p->nodes.size(), n);
        ASSERT_EQ(p->nodes.count(), k) << info.name << " on " << spec;
        ASSERT_TRUE(p->nodes.is_subset_of(free))
            << info.name << " on " << spec << " gave a busy node";
        auto again = (*allocator)->allocate(free, request);
        ASSERT_TRUE(again);
        ASSERT_EQ(again->nodes, p->nodes) << info.name << " is not deterministic";
      }
      EXPECT_GT(placed, 100) << info.name << " on " << spec << " placed almost nothing";
    }
  }
  EXPECT_GT(applicable, 40);
}

}  // namespace
}  // namespace trellis
