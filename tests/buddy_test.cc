#include "alloc/buddy/buddy_allocator.h"

#include <gtest/gtest.h>

#include "test_machines.h"

#include <random>

#include "alloc/registry.h"

namespace trellis {
namespace {

TEST(Buddy, BlockSizes) {
  EXPECT_EQ(buddy_block_size(1), 1);
  EXPECT_EQ(buddy_block_size(3), 4);
  EXPECT_EQ(buddy_block_size(64), 64);
  EXPECT_EQ(buddy_block_size(65), 128);
}

TEST(Buddy, TakesTheSmallestMaximalBlockAndSplitsIt) {
  Machine m = machine("flat:16");
  BuddyAllocator a(m, Curve::identity(16));
  // Free: 0-7 (a maximal block of 8), 10-11 (maximal block of 2), 13 (block of 1).
  NodeSet free = NodeSet::of(16, {0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 13});
  auto two = a.allocate(free, Request::count(2, PlacementMode::kNonContiguous));
  ASSERT_TRUE(two);
  EXPECT_EQ(two->nodes.to_vector(), (std::vector<NodeId>{10, 11}));
  auto three = a.allocate(free, Request::count(3, PlacementMode::kNonContiguous));
  ASSERT_TRUE(three);  // block of 4 split from the 8 at rank 0
  EXPECT_EQ(three->nodes.to_vector(), (std::vector<NodeId>{0, 1, 2}));
  auto one = a.allocate(free, Request::count(1, PlacementMode::kNonContiguous));
  ASSERT_TRUE(one);
  EXPECT_EQ(one->nodes.to_vector(), (std::vector<NodeId>{13}));
  // Nine free nodes, but no free aligned block of 16.
  auto nine = a.allocate(free, Request::count(9, PlacementMode::kNonContiguous));
  ASSERT_FALSE(nine);
  EXPECT_EQ(nine.error().code, Error::Code::kDoesNotFitNow);
}

TEST(Buddy, HilbertBlocksAreSubCubes) {
  Machine m = machine("torus:8x8x8");
  auto a = AllocatorRegistry::builtin().create("buddy", m);
  ASSERT_TRUE(a);
  auto p = (*a)->allocate(NodeSet::all(512), Request::count(64, PlacementMode::kNonContiguous));
  ASSERT_TRUE(p);
  // 64 aligned Hilbert ranks of an 8x8x8 cube form a 4x4x4 sub-cube.
  int lo[3] = {8, 8, 8}, hi[3] = {-1, -1, -1};
  p->nodes.for_each([&](NodeId id) {
    Coords c = m.torus()->coords(id);
    for (int ax = 0; ax < 3; ++ax) {
      lo[ax] = std::min(lo[ax], c[ax]);
      hi[ax] = std::max(hi[ax], c[ax]);
    }
  });
  for (int ax = 0; ax < 3; ++ax) EXPECT_EQ(hi[ax] - lo[ax], 3);
}

TEST(Buddy, ImpossibleRequestsAreNamed) {
  Machine m = machine("flat:24");
  BuddyAllocator a(m, Curve::identity(24));
  EXPECT_TRUE(a.check(Request::count(16)));
  auto big = a.check(Request::count(17));
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().message.find("largest"), std::string::npos);
  // Ranks 16-23 form one block of 8 (its buddy would reach past the machine).
  NodeSet free = NodeSet::of(24, {16, 17, 18, 19, 20, 21, 22, 23});
  auto p = a.allocate(free, Request::count(8, PlacementMode::kNonContiguous));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->nodes.first(), 16);
}

// Oracle: the chosen block is free and aligned, and no smaller maximal free block would do.
TEST(Buddy, ChoiceIsTheSmallestLowestMaximalBlock) {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 2000; ++trial) {
    const int n = 8 + static_cast<int>(rng() % (trial % 4 == 0 ? 600 : 57));
    Machine m = machine("flat:" + std::to_string(n));
    BuddyAllocator a(m, Curve::identity(n));
    NodeSet free(n);
    const unsigned busy_one_in = trial % 3 == 0 ? 100 : 4;  // long free runs: whole-word blocks
    for (int r = 0; r < n; ++r)
      if (rng() % busy_one_in) free.set(r);
    const int k = 1 + static_cast<int>(rng() % (n > 64 ? n / 2 : 16));
    if (!a.check(Request::count(k)) || free.count() < k) continue;
    auto block_free = [&](int first, int size) {
      if (first + size > n) return false;
      for (int r = first; r < first + size; ++r)
        if (!free.test(r)) return false;
      return true;
    };
    auto maximal = [&](int first, int size) {
      if (!block_free(first, size)) return false;
      int parent = first & ~(2 * size - 1);
      return !block_free(parent, 2 * size);
    };
    std::optional<std::pair<int, int>> want;  // (size, first)
    for (int size = buddy_block_size(k); size <= n && !want; size *= 2)
      for (int first = 0; first + size <= n; first += size)
        if (maximal(first, size)) {
          want = {size, first};
          break;
        }
    auto p = a.allocate(free, Request::count(k, PlacementMode::kNonContiguous));
    ASSERT_EQ(p.ok(), want.has_value()) << "trial " << trial;
    if (!want) continue;
    ASSERT_EQ(p->nodes.count(), k);
    ASSERT_TRUE(p->nodes.is_subset_of(free));
    ASSERT_EQ(p->nodes.first(), want->second) << "trial " << trial;
  }
}

// Brute force: is some aligned block of `block` nodes entirely free?
bool aligned_free_block(const NodeSet& free, int block) {
  for (int first = 0; first + block <= free.size(); first += block) {
    bool all = true;
    for (int r = first; r < first + block; ++r) all = all && free.test(r);
    if (all) return true;
  }
  return false;
}

// The buddy system as the gang baselines use it (sched/gang/space_sharing.h): on P = 2^k nodes in
// identity order, jobs ask for whole blocks and give them back in any order. A block is found
// exactly when some aligned block of that size is free, it is aligned, and it is all free.
TEST(Buddy, WholeBlocksAllocatedAndFreedAtRandomMatchBruteForce) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 300; ++trial) {
    const int processors = 1 << std::uniform_int_distribution<int>(0, 9)(rng);
    Machine m = machine("flat:" + std::to_string(processors));
    BuddyAllocator a(m, Curve::identity(processors));
    NodeSet free = NodeSet::all(processors);
    std::vector<NodeSet> blocks;
    for (int step = 0; step < 200; ++step) {
      if (!blocks.empty() && std::bernoulli_distribution(0.45)(rng)) {
        std::size_t i = std::uniform_int_distribution<std::size_t>(0, blocks.size() - 1)(rng);
        free |= blocks[i];
        blocks.erase(blocks.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      const int block = buddy_block_size(std::uniform_int_distribution<int>(1, processors)(rng));
      auto p = a.allocate(free, Request::count(block, PlacementMode::kNonContiguous));
      ASSERT_EQ(p.ok(), aligned_free_block(free, block)) << "trial " << trial;
      if (!p) continue;
      const int first = p->nodes.first();
      ASSERT_EQ(first % block, 0);
      ASSERT_EQ(p->nodes.count(), block);
      ASSERT_EQ(p->nodes.runs().size(), 1u);
      ASSERT_TRUE(p->nodes.is_subset_of(free)) << "a node given twice";
      free -= p->nodes;
      blocks.push_back(p->nodes);
    }
  }
}

// Along a curve other than the identity, the choice is the same in rank space.
TEST(Buddy, AlongACurveTheChoiceIsMadeInRankSpace) {
  std::mt19937 rng(5);
  Machine m = machine("torus:8x8x4");
  auto hilbert = Curve::for_machine(CurveKind::kHilbert, m);
  ASSERT_TRUE(hilbert);
  BuddyAllocator along(m, *hilbert);
  Machine flat = machine("flat:256");
  BuddyAllocator ranks(flat, Curve::identity(256));
  for (int trial = 0; trial < 500; ++trial) {
    NodeSet free(256);
    for (int r = 0; r < 256; ++r)
      if (rng() % 3) free.set(r);
    const int k = 1 + static_cast<int>(rng() % 40);
    auto in_ranks = ranks.allocate(hilbert->to_ranks(free), Request::count(k));
    auto on_curve = along.allocate(free, Request::count(k));
    ASSERT_EQ(in_ranks.ok(), on_curve.ok()) << "trial " << trial;
    if (in_ranks) {
      EXPECT_EQ(hilbert->to_nodes(in_ranks->nodes), on_curve->nodes);
    }
  }
}

}  // namespace
}  // namespace trellis
