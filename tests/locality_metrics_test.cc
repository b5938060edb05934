#include "alloc/locality_metrics.h"

#include "alloc/metrics.h"

#include <gtest/gtest.h>

#include "test_machines.h"

#include <random>
#include <set>

namespace trellis {
namespace {

TEST(LocalityMetrics, Seed001PairsOnTheSixtyFourNodeTree) {
  Machine m = machine("fattree:4,4,4");
  const FatTree& t = *m.fat_tree();
  EXPECT_EQ(sum_pairwise_hops(t, NodeSet::of(64, {1, 2})), 1);
  EXPECT_EQ(sum_pairwise_hops(t, NodeSet::of(64, {1, 63})), 5);
  // {1,2,63}: 1 + 5 + 5.
  NodeSet three = NodeSet::of(64, {1, 2, 63});
  EXPECT_EQ(sum_pairwise_hops(t, three), 11);
  EXPECT_DOUBLE_EQ(average_pairwise_hops(m, three), 11.0 / 3);
  EXPECT_EQ(leaf_switches_spanned(t, three), 2);
}

TEST(LocalityMetrics, FatTreePairwiseHopsMatchAllPairs) {
  std::mt19937 rng(2);
  const char* specs[] = {"fattree:4,4,4", "fattree:2,3,2", "fattree:16,16,8", "flat:20"};
  for (int trial = 0; trial < 400; ++trial) {
    Machine m = machine(specs[trial % std::size(specs)]);
    const FatTree& t = *m.fat_tree();
    NodeSet s(m.node_count());
    const int members = 1 + rng() % 40;
    for (int i = 0; i < members; ++i) s.set(rng() % m.node_count());
    long want = 0;
    auto v = s.to_vector();
    for (size_t i = 0; i < v.size(); ++i)
      for (size_t j = i + 1; j < v.size(); ++j) want += t.hop_count(v[i], v[j]);
    ASSERT_EQ(sum_pairwise_hops(t, s), want) << m.spec();
    std::set<int> leaves;
    for (NodeId id : v) leaves.insert(t.leaf_switch(id));
    ASSERT_EQ(leaf_switches_spanned(t, s), static_cast<int>(leaves.size()));
  }
}

TEST(LocalityMetrics, SpanAndRunsAlongTheSnakeRing) {
  Machine m = machine("mesh:4x2x2:wrap=z");
  auto curve = Curve::make(CurveKind::kSnake, *m.torus());
  ASSERT_TRUE(curve);
  ASSERT_TRUE(curve->closes_into_ring());
  auto nodes_at = [&](std::vector<int> ranks) {
    NodeSet s(16);
    for (int r : ranks) s.set(curve->node_at(r));
    return s;
  };
  EXPECT_EQ(curve_span(*curve, nodes_at({2, 3, 4})), 2);
  EXPECT_EQ(contiguous_runs(*curve, nodes_at({2, 3, 4})), 1);
  // Through the seam: ranks 15, 0, 1 are one run of span 2.
  EXPECT_EQ(curve_span(*curve, nodes_at({15, 0, 1})), 2);
  EXPECT_EQ(contiguous_runs(*curve, nodes_at({15, 0, 1})), 1);
  EXPECT_EQ(contiguous_runs(*curve, nodes_at({1, 3, 5, 6})), 3);
  EXPECT_EQ(curve_span(*curve, nodes_at({1, 3, 5, 6})), 5);
  EXPECT_EQ(curve_span(*curve, NodeSet(16)), 0);
}

}  // namespace
}  // namespace trellis
