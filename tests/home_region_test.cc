// alloc/home_region.h: a concurrent controller's allocator places a job only in its share of the
// machine while the job could fit there, and anywhere otherwise; shares tile the machine.
#include "alloc/home_region.h"

#include <gtest/gtest.h>

#include "alloc/registry.h"
#include "test_machines.h"

namespace trellis {
namespace {

TEST(HomeRegion, SharesTileTheMachineInNodeOrder) {
  NodeSet all(10);
  int total = 0;
  for (int i = 0; i < 3; ++i) {
    NodeSet share = HomeRegion::share(10, i, 3);
    EXPECT_TRUE((all & share).empty()) << "shares " << i << " overlap";
    all |= share;
    total += share.count();
  }
  EXPECT_EQ(total, 10);
  EXPECT_EQ(HomeRegion::share(10, 0, 3).first(), 0);
  EXPECT_EQ(HomeRegion::share(10, 2, 3).first(), 6);
  EXPECT_EQ(HomeRegion::share(10, 3, 3).count(), 0);
}

TEST(HomeRegion, AJobWaitsForRoomAtHomeUnlessItCouldNeverFitThere) {
  Machine machine = trellis::machine("flat:8");
  auto inner = AllocatorRegistry::builtin().create("first-available", machine, {});
  ASSERT_TRUE(inner);
  HomeRegion region(machine, std::move(*inner));
  region.set_home(HomeRegion::share(8, 1, 2));  // nodes 4-7
  const NodeSet all = NodeSet::all(8);
  Result<Placement> one = region.allocate(all, Request::count(1));
  ASSERT_TRUE(one);
  EXPECT_EQ(one->nodes.first(), 4);  // at home, though node 0 is free and first
  // Home full (4-7 taken), the rest free: a job that fits at home waits.
  NodeSet away = all - HomeRegion::share(8, 1, 2);
  Result<Placement> waits = region.allocate(away, Request::count(2));
  ASSERT_FALSE(waits);
  EXPECT_EQ(waits.error().code, Error::Code::kDoesNotFitNow);
  // One larger than the home goes anywhere it fits.
  Result<Placement> large = region.allocate(all, Request::count(6));
  ASSERT_TRUE(large);
  EXPECT_EQ(large->nodes.count(), 6);
  // No home: the wrapped allocator alone.
  region.set_home(std::nullopt);
  Result<Placement> plain = region.allocate(all, Request::count(1));
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->nodes.first(), 0);
}

}  // namespace
}  // namespace trellis
