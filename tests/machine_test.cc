#include "topology/machine.h"

#include <gtest/gtest.h>

#include <random>

#include "topology/box.h"

namespace trellis {
namespace {

TEST(Machine, ParsesTheDesignSpecs) {
  auto t = Machine::parse("torus:16x8");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->node_count(), 128);
  EXPECT_TRUE(t->torus()->wraps(0) && t->torus()->wraps(1));

  auto rs = Machine::parse("mesh:27x16x24:wrap=z");
  ASSERT_TRUE(rs);
  EXPECT_EQ(rs->node_count(), 10368);
  EXPECT_FALSE(rs->torus()->wraps(0));
  EXPECT_FALSE(rs->torus()->wraps(1));
  EXPECT_TRUE(rs->torus()->wraps(2));
  EXPECT_EQ(rs->spec(), "mesh:27x16x24:wrap=z");

  auto ft = Machine::parse("fattree:4,4,4");
  ASSERT_TRUE(ft);
  EXPECT_EQ(ft->node_count(), 64);
  EXPECT_EQ(ft->kind(), Machine::Kind::kFatTree);

  auto flat = Machine::parse("flat:128");
  ASSERT_TRUE(flat);
  EXPECT_EQ(flat->kind(), Machine::Kind::kFlat);
  EXPECT_EQ(flat->node_count(), 128);
  EXPECT_EQ(flat->hop_distance(0, 127), 1);

  auto six = Machine::parse("torus:2x3x2x2x3x2");
  ASSERT_TRUE(six);
  EXPECT_EQ(six->torus()->dims(), 6);
}

TEST(Machine, RejectsBadSpecsWithAMessage) {
  for (const char* bad :
       {"", "torus", "torus:", "torus:8x0", "torus:8xx8", "torus:8x-1", "cube:8x8",
        "mesh:8x8:wrap=q", "mesh:8x8:wrap=z", "mesh:8x8:twist=x", "fattree:4,,4", "flat:4,4",
        "torus:1x2x3x4x5x6x7", "torus:99999x99999", "fattree:4,4:wrap=x"}) {
    auto m = Machine::parse(bad);
    ASSERT_FALSE(m) << bad;
    EXPECT_NE(m.error().message.find("machine spec"), std::string::npos) << m.error().message;
  }
}

TEST(Torus, CoordinatesRoundTripAndDistancesAreTorusAware) {
  auto m = Machine::parse("mesh:5x4x3:wrap=xz");
  ASSERT_TRUE(m);
  const Torus& t = *m->torus();
  for (NodeId id = 0; id < t.node_count(); ++id) EXPECT_EQ(t.id(t.coords(id)), id);
  // x wraps (5): 0 -> 4 is one hop; y does not (4): 0 -> 3 is three hops; z wraps (3).
  EXPECT_EQ(t.hop_distance(t.id({0, 0, 0}), t.id({4, 0, 0})), 1);
  EXPECT_EQ(t.hop_distance(t.id({0, 0, 0}), t.id({0, 3, 0})), 3);
  EXPECT_EQ(t.hop_distance(t.id({0, 0, 0}), t.id({0, 0, 2})), 1);
  EXPECT_EQ(t.hop_distance(t.id({1, 1, 1}), t.id({3, 2, 0})), 2 + 1 + 1);
  // Brute force: distance equals the BFS distance over the neighbour graph.
  std::vector<int> dist(t.node_count(), -1);
  std::vector<NodeId> queue{0};
  dist[0] = 0;
  for (size_t q = 0; q < queue.size(); ++q) {
    Coords c = t.coords(queue[q]);
    for (int a = 0; a < t.dims(); ++a)
      for (int step : {-1, 1}) {
        Coords n = c;
        n[a] += step;
        if (n[a] < 0 || n[a] >= t.extent(a)) {
          if (!t.wraps(a)) continue;
          n[a] = (n[a] + t.extent(a)) % t.extent(a);
        }
        NodeId nid = t.id(n);
        if (dist[nid] < 0) {
          dist[nid] = dist[queue[q]] + 1;
          queue.push_back(nid);
        }
      }
  }
  for (NodeId id = 0; id < t.node_count(); ++id) EXPECT_EQ(t.hop_distance(0, id), dist[id]);
}

TEST(FatTree, HopCountsFollowSeed001) {
  auto m = Machine::parse("fattree:4,4,4");
  ASSERT_TRUE(m);
  const FatTree& t = *m->fat_tree();
  EXPECT_EQ(t.hop_count(0, 0), 0);
  EXPECT_EQ(t.hop_count(0, 3), 1);   // same leaf switch
  EXPECT_EQ(t.hop_count(0, 4), 3);   // sibling leaves under one middle switch
  EXPECT_EQ(t.hop_count(0, 63), 5);  // across the root
  EXPECT_EQ(t.leaf_switch(17), 4);
  EXPECT_EQ(t.switches_at(1), 16);
  EXPECT_EQ(t.switches_at(3), 1);
}

TEST(Box, NodesWrapOnTorusAxes) {
  auto m = Machine::parse("torus:4x3");
  const Torus& t = *m->torus();
  Box b{{3, 2}, {2, 2}};
  EXPECT_TRUE(b.crosses_wrap(t));
  NodeSet n = b.nodes(t);
  EXPECT_EQ(n.count(), 4);
  for (Coords c : {Coords{3, 2}, Coords{0, 2}, Coords{3, 0}, Coords{0, 0}})
    EXPECT_TRUE(n.test(t.id(c)));
}

}  // namespace
}  // namespace trellis
