#include "alloc/mc/mc_allocator.h"

#include <gtest/gtest.h>

#include "test_machines.h"

#include <algorithm>
#include <random>

#include "alloc/registry.h"
#include "topology/curve.h"

namespace trellis {
namespace {

struct Expect {
  std::string spec;
  bool wrap;
  int k;
  long cost;
  Coords centre;
  int snake_rank;
};

void check(const Expect& e, const NodeSet& free) {
  Machine m = machine(e.spec);
  Mc1x1Allocator mc(m, e.wrap);
  auto choice = mc.best_centre(free, e.k);
  const Torus& t = *m.torus();
  EXPECT_EQ(choice.cost, e.cost) << e.spec << " k=" << e.k << " wrap=" << e.wrap;
  EXPECT_EQ(choice.centre, t.id(e.centre)) << e.spec << " k=" << e.k << " wrap=" << e.wrap;
  EXPECT_EQ(snake_rank(t, t.coords(choice.centre)), e.snake_rank);
  auto placed = mc.allocate(free, Request::count(e.k, PlacementMode::kNonContiguous));
  ASSERT_TRUE(placed);
  EXPECT_EQ(placed->nodes.count(), e.k);
  EXPECT_TRUE(placed->nodes.is_subset_of(free));
}

// Digest 5.2, MC table.
TEST(Mc1x1, M1AllFreeCube) {
  check({"mesh:5x5x5", false, 27, 26, {1, 3, 1}, 31}, NodeSet::all(125));
}

NodeSet m2_free() {
  Machine m = machine("mesh:8x8x8");
  NodeSet free(512);
  for (NodeId id = 0; id < 512; ++id) {
    Coords c = m.torus()->coords(id);
    if ((c[0] + 2 * c[1] + 3 * c[2]) % 5 != 0) free.set(id);
  }
  return free;
}

TEST(Mc1x1, M2AndM2wPatternedOccupancy) {
  NodeSet free = m2_free();
  ASSERT_EQ(free.count(), 409);
  check({"mesh:8x8x8", false, 40, 57, {3, 6, 1}, 76}, free);
  check({"mesh:8x8x8:wrap=z", true, 40, 57, {5, 1, 0}, 10}, free);
  Machine m = machine("mesh:8x8x8");
  Mc1x1Allocator mc(m, false);
  auto shells = mc.shell_counts(free, m.torus()->id({3, 6, 1}), 2);
  EXPECT_EQ(shells, (std::vector<int>{1, 21, 42}));
}

TEST(Mc1x1, RedStormAllFree) {
  const std::string rs = "mesh:27x16x24:wrap=z";
  NodeSet all = NodeSet::all(10368);
  check({rs, false, 100, 172, {2, 13, 1}, 488}, all);
  check({rs, true, 100, 172, {24, 1, 0}, 29}, all);
  check({rs, false, 27, 26, {25, 14, 1}, 460}, all);
  check({rs, true, 27, 26, {25, 1, 0}, 28}, all);
  check({rs, false, 1000, 3775, {4, 4, 4}, 1840}, all);
  check({rs, true, 1000, 3775, {4, 4, 0}, 112}, all);
}

TEST(Mc1x1, CornerCostsOfRedStorm) {
  // Digest 5.2: the corner (0,0,0) costs 300 / 242 (k=100) and 6975 / 5612 (k=1000).
  Machine m = machine("mesh:27x16x24:wrap=z");
  for (bool wrap : {false, true}) {
    Mc1x1Allocator mc(m, wrap);
    NodeSet only_corner_centre = NodeSet::all(10368);
    auto shells = mc.shell_counts(only_corner_centre, 0, 30);
    auto cost_for = [&](int k) {
      std::vector<int> takes;
      for (int s : shells) {
        takes.push_back(std::min(s, k));
        k -= takes.back();
      }
      return mc_cost(takes);
    };
    EXPECT_EQ(cost_for(100), wrap ? 242 : 300);
    EXPECT_EQ(cost_for(1000), wrap ? 5612 : 6975);
  }
}

// The concrete node sets of the reference prototype (digest 5.2: last shell by L1, then rank).
TEST(Mc1x1, ConcreteSetsMatchTheReferencePrototype) {
  auto ids = [](const std::string& spec, bool wrap, const NodeSet& free, int k) {
    Machine m = machine(spec);
    Mc1x1Allocator mc(m, wrap);
    auto p = mc.allocate(free, Request::count(k, PlacementMode::kNonContiguous));
    EXPECT_TRUE(p);
    return p ? p->nodes.to_vector() : std::vector<NodeId>{};
  };
  EXPECT_EQ(ids("mesh:5x5x5", false, NodeSet::all(125), 27),
            (std::vector<NodeId>{10, 11, 12, 15, 16, 17, 20, 21, 22, 35, 36, 37, 40, 41,
                                 42, 45, 46, 47, 60, 61, 62, 65, 66, 67, 70, 71, 72}));
  EXPECT_EQ(
      ids("mesh:8x8x8", false, m2_free(), 40),
      (std::vector<NodeId>{35,  36,  42,  43,  44,  49,  50,  52,  53,  58,  59,  60,  98,  99,
                           105, 107, 108, 109, 113, 114, 115, 116, 121, 122, 124, 125, 163, 170,
                           171, 177, 179, 180, 181, 186, 187, 188, 235, 242, 243, 251}));
  EXPECT_EQ(
      ids("mesh:8x8x8:wrap=z", true, m2_free(), 40),
      (std::vector<NodeId>{3,   4,   6,   7,   12,  13,  14,  15,  19,  20,  21,  23,  29,  30,
                           68,  69,  70,  75,  76,  78,  79,  84,  85,  86,  93,  133, 140, 141,
                           142, 389, 396, 398, 405, 453, 454, 460, 461, 462, 468, 470}));
}

TEST(Mc1x1, PatentCostArithmetic) {
  // P2's example (not geometrically realisable, digest 8 A-14): only the arithmetic is tested.
  EXPECT_EQ(mc_cost({1, 30, 69}), 168);
  EXPECT_EQ(mc_cost({1, 25, 74}), 173);
}

// Oracle: the digest's naive algorithm (sort every free node by shell for every centre).
TEST(Mc1x1, MatchesNaiveReferenceOnRandomGrids) {
  std::mt19937 rng(5);
  const char* specs[] = {"mesh:5x4x3", "mesh:6x6", "torus:4x5x3", "mesh:3x7x4:wrap=y", "mesh:9"};
  for (int trial = 0; trial < 300; ++trial) {
    Machine m = machine(specs[trial % 5]);
    const Torus& t = *m.torus();
    const bool wrap = trial % 2;
    NodeSet free(t.node_count());
    for (NodeId id = 0; id < t.node_count(); ++id)
      if (rng() % 3) free.set(id);
    if (free.none()) continue;
    const int k = 1 + rng() % free.count();
    Curve snake = *Curve::make(CurveKind::kSnake, t);
    auto dist = [&](NodeId a, NodeId b) {
      Coords ca = t.coords(a), cb = t.coords(b);
      int d = 0;
      for (int ax = 0; ax < t.dims(); ++ax) {
        int s = std::abs(ca[ax] - cb[ax]);
        if (wrap && t.wraps(ax)) s = std::min(s, t.extent(ax) - s);
        d = std::max(d, s);
      }
      return d;
    };
    long best_cost = -1;
    NodeId best_centre = -1;
    for (int r = 0; r < t.node_count(); ++r) {
      NodeId c = snake.node_at(r);
      if (!free.test(c)) continue;
      std::vector<int> d;
      free.for_each([&](NodeId p) { d.push_back(dist(c, p)); });
      std::sort(d.begin(), d.end());
      long cost = 0;
      for (int i = 0; i < k; ++i) cost += d[i];
      if (best_cost < 0 || cost < best_cost) {
        best_cost = cost;
        best_centre = c;
      }
    }
    Mc1x1Allocator mc(m, wrap);
    auto got = mc.best_centre(free, k);
    ASSERT_EQ(got.cost, best_cost) << m.spec() << " trial " << trial;
    ASSERT_EQ(got.centre, best_centre) << m.spec() << " trial " << trial;
  }
}

TEST(Mc1x1, RegistryRejectsWhatItCannotDo) {
  const auto& reg = AllocatorRegistry::builtin();
  EXPECT_FALSE(reg.create("mc1x1", machine("fattree:4,4")));
  EXPECT_FALSE(reg.create("mc1x1", machine("torus:2x2x2x2")));
  AllocatorOptions bad;
  ASSERT_TRUE(bad.add("wrap=maybe"));
  EXPECT_FALSE(reg.create("mc1x1", machine("torus:4x4"), bad));
  EXPECT_TRUE(reg.create("mc1x1", machine("torus:4x4")));
}

}  // namespace
}  // namespace trellis
