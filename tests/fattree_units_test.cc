#include "alloc/fattree/unit_allocator.h"

#include <gtest/gtest.h>

#include "test_machines.h"

#include <random>

#include "alloc/registry.h"

namespace trellis {
namespace {

// Seed 001, Fig. 1: 64 nodes, height 3, width 4. Nodes 1 and 2 talk through one switch (200);
// nodes 1 and 63 through five (200, 100, 000, 103, 203).
TEST(FatTreeUnits, Seed001SixtyFourNodeExample) {
  Machine m = machine("fattree:4,4,4");
  const FatTree& t = *m.fat_tree();
  EXPECT_EQ(t.hop_count(1, 2), 1);
  EXPECT_EQ(t.hop_count(1, 63), 5);
  EXPECT_EQ(minimum_unit_size(t), 4);  // <= 4096 nodes and Nleaf = 4: Nunit = Nleaf
  FatTreeUnitAllocator a(m, 4);
  EXPECT_EQ(a.unit_count(), 16);
  EXPECT_EQ(a.unit_hops(0, 0), 0);
  EXPECT_EQ(a.unit_hops(0, 1), 3);  // units 0,1 = leaf switches 200, 201 under 100
  EXPECT_EQ(a.unit_hops(0, 15), 5);
  // An 8-node job on the empty machine takes two units under one middle switch.
  auto p = a.allocate(NodeSet::all(64), Request::count(8, PlacementMode::kNonContiguous));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->nodes.to_vector(), (std::vector<NodeId>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(FatTreeUnits, UnitSizeRule) {
  EXPECT_EQ(minimum_unit_size(*machine("fattree:2,4").fat_tree()), 2);
  EXPECT_EQ(minimum_unit_size(*machine("fattree:16,16,8").fat_tree()), 4);
  EXPECT_EQ(minimum_unit_size(*machine("fattree:6,4").fat_tree()), 3);
  EXPECT_EQ(minimum_unit_size(*machine("fattree:8,32,32").fat_tree()), 8);   // 8192 nodes
  EXPECT_EQ(minimum_unit_size(*machine("fattree:16,32,32").fat_tree()), 8);  // 16384 nodes
  const auto& reg = AllocatorRegistry::builtin();
  AllocatorOptions unit3;
  ASSERT_TRUE(unit3.add("unit=3"));
  auto bad = reg.create("fattree-units", machine("fattree:4,4"), unit3);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("dividing the leaf fan-out 4"), std::string::npos);
  EXPECT_FALSE(reg.create("fattree-units", machine("torus:4x4")));
}

TEST(FatTreeUnits, SmallJobFillsABusyUnitExactly) {
  Machine m = machine("fattree:4,4,4");
  FatTreeUnitAllocator a(m, 4);
  NodeSet free = NodeSet::all(64);
  free.reset(20);  // unit 5 busy with 3 free
  free.reset(40);
  free.reset(41);  // unit 10 busy with 2 free
  EXPECT_EQ(a.unit_state(free, 5), UnitState::kBusy);
  EXPECT_EQ(a.unit_state(free, 0), UnitState::kFree);
  EXPECT_EQ(a.free_unit_count(free), 14);
  auto three = a.allocate(free, Request::count(3, PlacementMode::kNonContiguous));
  ASSERT_TRUE(three);
  EXPECT_EQ(three->nodes.to_vector(), (std::vector<NodeId>{21, 22, 23}));
  auto two = a.allocate(free, Request::count(2, PlacementMode::kNonContiguous));
  ASSERT_TRUE(two);
  EXPECT_EQ(two->nodes.to_vector(), (std::vector<NodeId>{42, 43}));
  // One node: no busy unit has exactly one free, so a free unit is used, in the fullest subtree
  // (best fit): unit 4 under middle switch 1, whose unit 5 is busy.
  auto one = a.allocate(free, Request::count(1, PlacementMode::kNonContiguous));
  ASSERT_TRUE(one);
  EXPECT_EQ(one->nodes.to_vector(), (std::vector<NodeId>{16}));
  NodeSet after = free - one->nodes;
  EXPECT_EQ(a.unit_state(after, 4), UnitState::kBusy);
}

TEST(FatTreeUnits, MultiUnitJobsNeedWholeFreeUnits) {
  Machine m = machine("fattree:4,4");
  FatTreeUnitAllocator a(m, 4);
  NodeSet free = NodeSet::all(16);
  free.reset(0);
  free.reset(4);
  free.reset(8);  // three busy units, one free: 4 nodes OK, 5 nodes refused
  EXPECT_TRUE(a.allocate(free, Request::count(4, PlacementMode::kNonContiguous)));
  auto five = a.allocate(free, Request::count(5, PlacementMode::kNonContiguous));
  ASSERT_FALSE(five);
  EXPECT_EQ(five.error().code, Error::Code::kDoesNotFitNow);
}

long brute_force_least_hops(const FatTreeUnitAllocator& a, const std::vector<int>& free_units,
                            int count) {
  long best = -1;
  const int f = static_cast<int>(free_units.size());
  for (uint32_t mask = 0; mask < (1u << f); ++mask) {
    if (std::popcount(mask) != count) continue;
    std::vector<int> s;
    for (int b = 0; b < f; ++b)
      if (mask >> b & 1) s.push_back(free_units[b]);
    long hops = 0;
    for (size_t i = 0; i < s.size(); ++i)
      for (size_t j = i + 1; j < s.size(); ++j) hops += a.unit_hops(s[i], s[j]);
    if (best < 0 || hops < best) best = hops;
  }
  return best;
}

// Issue 3, Done when: on machines up to 16 nodes the unit choice has the least sum of pairwise
// hops, checked against every set of free units.
TEST(FatTreeUnits, LeastHopUnitsMatchBruteForceOnSmallTrees) {
  struct Case {
    const char* spec;
    int unit;
  };
  const Case cases[] = {{"fattree:2,2,2,2", 1}, {"fattree:2,2,2,2", 2}, {"fattree:4,4", 1},
                        {"fattree:2,4,2", 1},   {"fattree:4,2,2", 2},   {"fattree:1,4,4", 1},
                        {"fattree:2,2,4", 1},   {"fattree:3,5", 1}};
  std::mt19937 rng(3);
  int checked = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const Case& cs = cases[trial % std::size(cases)];
    Machine m = machine(cs.spec);
    FatTreeUnitAllocator a(m, cs.unit);
    NodeSet free(m.node_count());
    for (NodeId id = 0; id < m.node_count(); ++id)
      if (rng() % 4) free.set(id);
    std::vector<int> free_units;
    for (int u = 0; u < a.unit_count(); ++u)
      if (a.unit_state(free, u) == UnitState::kFree) free_units.push_back(u);
    if (free_units.empty()) continue;
    const int count = 1 + rng() % free_units.size();
    std::vector<int> got = a.least_hop_units(free, count);
    ASSERT_EQ(static_cast<int>(got.size()), count);
    long hops = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(a.unit_state(free, got[i]), UnitState::kFree);
      if (i > 0) {
        ASSERT_LT(got[i - 1], got[i]);
      }
      for (size_t j = i + 1; j < got.size(); ++j) hops += a.unit_hops(got[i], got[j]);
    }
    ASSERT_EQ(hops, brute_force_least_hops(a, free_units, count))
        << cs.spec << " unit " << cs.unit << " trial " << trial;
    ++checked;
  }
  EXPECT_GT(checked, 3000);
}

}  // namespace
}  // namespace trellis
