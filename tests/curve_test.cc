#include "topology/curve.h"

#include <gtest/gtest.h>

namespace trellis {
namespace {

Torus grid(std::vector<int> extents, std::vector<bool> wraps) {
  auto t = Torus::make(std::move(extents), std::move(wraps));
  EXPECT_TRUE(t) << t.error().message;
  return *t;
}

Curve curve(CurveKind kind, const Torus& t) {
  auto c = Curve::make(kind, t);
  EXPECT_TRUE(c) << c.error().message;
  return *c;
}

void expect_bijection(const Curve& c) {
  std::vector<bool> seen(c.size(), false);
  for (int r = 0; r < c.size(); ++r) {
    NodeId id = c.node_at(r);
    ASSERT_GE(id, 0);
    ASSERT_LT(id, c.size());
    EXPECT_FALSE(seen[id]) << "node " << id << " appears twice";
    seen[id] = true;
    EXPECT_EQ(c.rank_of(id), r);
  }
}

// Digest 4.7: the Red Storm number line, 0-based ranks.
TEST(Curve, SnakeReproducesRedStormNumberLine) {
  Torus t = grid({27, 16, 24}, {false, false, true});
  Curve c = curve(CurveKind::kSnake, t);
  struct Vec {
    int x, y, z, rank;
  };
  const Vec table[] = {{0, 0, 0, 0},   {26, 0, 0, 26},  {26, 1, 0, 27},  {0, 1, 0, 53},
                       {5, 3, 0, 102}, {0, 15, 0, 431}, {0, 15, 1, 432}, {26, 15, 1, 458},
                       {5, 3, 1, 761}, {0, 0, 1, 863},  {0, 0, 2, 864},  {0, 0, 23, 10367}};
  for (const auto& v : table) {
    NodeId id = t.id({v.x, v.y, v.z});
    EXPECT_EQ(c.rank_of(id), v.rank) << v.x << "," << v.y << "," << v.z;
    EXPECT_EQ(snake_rank(t, t.coords(id)), v.rank);
  }
  EXPECT_TRUE(c.closes_into_ring());
  expect_bijection(c);
}

TEST(Curve, SnakeMatchesPatentClosedFormEverywhere) {
  for (auto dims : std::vector<std::vector<int>>{{27, 16, 24}, {4, 3, 2}, {5, 4, 3}, {3, 3, 3}}) {
    Torus t = grid(dims, {false, false, true});
    const int X = dims[0], Y = dims[1];
    for (NodeId id = 0; id < t.node_count(); ++id) {
      Coords p = t.coords(id);
      int r = p[1] * X + (p[1] % 2 == 0 ? p[0] : X - 1 - p[0]);
      if (p[2] % 2 == 1) r = X * Y - 1 - r;
      ASSERT_EQ(snake_rank(t, p), p[2] * X * Y + r);
    }
  }
}

TEST(Curve, SnakeConsecutiveRanksAreNeighboursAndRingClosesOnlyWhenItCan) {
  struct Case {
    std::vector<int> dims;
    bool ring;
  };
  // Digest 4.7 and 8 A-8: even Z closes the ring over the z torus; odd Z does not.
  const Case cases[] = {{{27, 16, 24}, true}, {{27, 20, 24}, true}, {{4, 4, 4}, true},
                        {{3, 4, 2}, true},    {{4, 3, 2}, true},    {{4, 4, 3}, false},
                        {{5, 3, 3}, false},   {{6, 5}, false},      {{7}, false}};
  for (const auto& cs : cases) {
    std::vector<bool> wraps(cs.dims.size(), false);
    wraps.back() = true;
    Torus t = grid(cs.dims, wraps);
    Curve c = curve(CurveKind::kSnake, t);
    expect_bijection(c);
    for (int r = 0; r + 1 < c.size(); ++r)
      ASSERT_EQ(t.hop_distance(c.node_at(r), c.node_at(r + 1)), 1) << format_shape(cs.dims);
    EXPECT_EQ(c.closes_into_ring(), cs.ring || cs.dims.size() == 1) << format_shape(cs.dims);
  }
  // Without the wrap, no ring.
  EXPECT_FALSE(curve(CurveKind::kSnake, grid({4, 4, 4}, {false, false, false})).closes_into_ring());
}

TEST(Curve, HilbertIsLocalOnPowerOfTwoSquaresAndCubes) {
  for (auto dims :
       std::vector<std::vector<int>>{{2, 2}, {8, 8}, {32, 32}, {4, 4, 4}, {16, 16, 16}}) {
    Torus t = grid(dims, std::vector<bool>(dims.size(), false));
    Curve c = curve(CurveKind::kHilbert, t);
    expect_bijection(c);
    for (int r = 0; r + 1 < c.size(); ++r)
      ASSERT_EQ(t.hop_distance(c.node_at(r), c.node_at(r + 1)), 1)
          << format_shape(dims) << " rank " << r;
  }
}

TEST(Curve, HilbertOnAnySizesIsABijectionWithBoundedSteps) {
  for (auto dims :
       std::vector<std::vector<int>>{{27, 16, 24}, {5, 3}, {7, 1, 3}, {1, 1}, {6, 10}, {13}}) {
    Torus t = grid(dims, std::vector<bool>(dims.size(), false));
    Curve c = curve(CurveKind::kHilbert, t);
    expect_bijection(c);
    // Locality survives the embedding: skipped cells lengthen some steps, but the mean step
    // stays at most two hops.
    long total = 0;
    for (int r = 0; r + 1 < c.size(); ++r) total += t.hop_distance(c.node_at(r), c.node_at(r + 1));
    if (c.size() > 1) {
      EXPECT_LE(static_cast<double>(total) / (c.size() - 1), 2.0) << format_shape(dims);
    }
  }
  EXPECT_FALSE(Curve::make(CurveKind::kHilbert, grid({2, 2, 2, 2}, {false, false, false, false})));
}

TEST(Curve, RowMajorIsTheIdOrderAndFatTreesOnlyHaveIt) {
  Torus t = grid({4, 3}, {true, true});
  Curve c = curve(CurveKind::kRowMajor, t);
  for (int r = 0; r < c.size(); ++r) EXPECT_EQ(c.node_at(r), r);
  auto ft = Machine::parse("fattree:4,4");
  ASSERT_TRUE(ft);
  EXPECT_TRUE(Curve::for_machine(CurveKind::kRowMajor, *ft));
  auto snake = Curve::for_machine(CurveKind::kSnake, *ft);
  ASSERT_FALSE(snake);
  EXPECT_NE(snake.error().message.find("mesh or torus"), std::string::npos);
}

TEST(Curve, RanksAndNodesConvertBothWays) {
  Torus t = grid({4, 4}, {false, false});
  Curve c = curve(CurveKind::kSnake, t);
  NodeSet nodes = NodeSet::of(16, {4, 5, 6});  // row y=1 runs backwards: ranks 7,6,5
  NodeSet ranks = c.to_ranks(nodes);
  EXPECT_EQ(ranks.to_vector(), (std::vector<NodeId>{5, 6, 7}));
  EXPECT_EQ(c.to_nodes(ranks), nodes);
  EXPECT_FALSE(parse_curve_kind("peano"));
}

}  // namespace
}  // namespace trellis
