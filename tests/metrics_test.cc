// Allocation metrics against their definitions: largest free box on the seed's FIG. 23 layouts,
// average pairwise hops against the O(n^2) sum on random sets of every machine kind.
#include "alloc/metrics.h"

#include <gtest/gtest.h>

#include "test_machines.h"

#include <random>

namespace trellis {
namespace {

Machine machine(const std::string& spec) {
  auto m = Machine::parse(spec);
  EXPECT_TRUE(m.ok()) << spec;
  return *m;
}

// A 6x5 layout drawn as in the digest: the first string is y = 4; '.' is free.
NodeSet layout(const Torus& t, const std::vector<std::string>& rows) {
  NodeSet free(t.node_count());
  for (int y = 0; y < t.extent(1); ++y)
    for (int x = 0; x < t.extent(0); ++x)
      if (rows[t.extent(1) - 1 - y][x] == '.') free.set(t.id({x, y}));
  return free;
}

long largest(const Torus& t, const NodeSet& free, PlacementMode mode) {
  auto box = largest_free_box(t, free, mode);
  return box ? box->volume() : 0;
}

TEST(Metrics, LargestFreeBoxOnFig23Layouts) {  // digest 5.7
  Torus t = *machine("mesh:6x5:wrap=x").torus();
  NodeSet a = layout(t, {".D....", ".D..B.", ".D..BC", "....BC", ".AAA.C"});
  EXPECT_EQ(largest(t, a, PlacementMode::kMesh), 8);
  EXPECT_EQ(largest(t, a, PlacementMode::kTorus), 8);
  NodeSet b = layout(t, {"......", "......", "......", "CCCDDD", "AAABBB"});
  EXPECT_EQ(largest(t, b, PlacementMode::kTorus), 18);
  NodeSet c = layout(t, {"......", "..DDD.", "..CCC.", "..BBB.", "..AAA."});
  EXPECT_EQ(largest(t, c, PlacementMode::kMesh), 10);
  auto across = largest_free_box(t, c, PlacementMode::kTorus);
  ASSERT_TRUE(across);
  EXPECT_EQ(*across, (Box{{5, 0}, {3, 5}}));  // x = 5, 0, 1 across the wrap: 15
  NodeSet d = layout(t, {".C....", ".C.D..", ".C.D..", "...D..", "AAABBB"});
  EXPECT_EQ(largest(t, d, PlacementMode::kMesh), 8);
  EXPECT_EQ(largest(t, d, PlacementMode::kTorus), 12);
  EXPECT_FALSE(largest_free_box(t, NodeSet(30)));
}

TEST(Metrics, LargestFreeBoxIsCanonicalOnFullAxes) {
  Torus t = *machine("torus:8x8x8").torus();
  auto all = largest_free_box(t, NodeSet::all(512));
  ASSERT_TRUE(all);
  EXPECT_EQ(*all, (Box{{0, 0, 0}, {8, 8, 8}}));
  NodeSet free = NodeSet::all(512);
  for (int x = 0; x < 8; ++x)
    for (int y = 0; y < 8; ++y) free.reset(t.id({x, y, 3}));  // a busy z = 3 plane
  auto slab = largest_free_box(t, free);
  ASSERT_TRUE(slab);
  EXPECT_EQ(*slab, (Box{{0, 0, 4}, {8, 8, 7}}));  // z = 4..7, 0..2 across the wrap
  auto mesh = largest_free_box(t, free, PlacementMode::kMesh);
  ASSERT_TRUE(mesh);
  EXPECT_EQ(*mesh, (Box{{0, 0, 4}, {8, 8, 4}}));
}

double pairwise_by_definition(const Machine& m, const NodeSet& nodes) {
  std::vector<NodeId> ids = nodes.to_vector();
  if (ids.size() < 2) return 0;
  double sum = 0;
  for (size_t i = 0; i < ids.size(); ++i)
    for (size_t j = i + 1; j < ids.size(); ++j) sum += m.hop_distance(ids[i], ids[j]);
  return sum / (ids.size() * (ids.size() - 1) / 2.0);
}

TEST(Metrics, AveragePairwiseHopsMatchesTheDefinition) {
  std::mt19937 rng(3);
  for (std::string spec : {"torus:8x8x8", "mesh:9x7", "mesh:5x6x4:wrap=y", "torus:3x2x4x2",
                           "fattree:4,4,4", "fattree:3,5", "flat:40", "torus:17"}) {
    Machine m = machine(spec);
    for (int i = 0; i < 30; ++i) {
      NodeSet nodes(m.node_count());
      const int want = std::uniform_int_distribution<int>(0, std::min(m.node_count(), 120))(rng);
      for (int k = 0; k < want; ++k) nodes.set(rng() % m.node_count());
      EXPECT_NEAR(average_pairwise_hops(m, nodes), pairwise_by_definition(m, nodes), 1e-9)
          << spec << " with " << nodes.count() << " nodes";
    }
  }
}

TEST(Metrics, AveragePairwiseHopsOfSmallSets) {
  Machine m = machine("torus:8x8");
  EXPECT_EQ(average_pairwise_hops(m, NodeSet(64)), 0);
  EXPECT_EQ(average_pairwise_hops(m, NodeSet::of(64, {9})), 0);
  EXPECT_EQ(average_pairwise_hops(m, NodeSet::of(64, {0, 7})), 1);  // neighbours across the wrap
  EXPECT_EQ(average_pairwise_hops(machine("fattree:4,4,4"), NodeSet::of(64, {0, 63})), 5);
}

}  // namespace
}  // namespace trellis
