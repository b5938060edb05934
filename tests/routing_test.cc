#include <gtest/gtest.h>

#include <random>

#include "topology/channel_dependency.h"
#include "topology/route.h"
#include "topology/routing.h"

namespace trellis {
namespace {

// Digest 4.4's grids: x and y meshes, z a torus.
Torus grid(int x, int y, int z) {
  auto t = Torus::make({x, y, z}, {false, false, true});
  EXPECT_TRUE(t);
  return *t;
}

RoutingRules rules(const std::string& text) {
  auto r = RoutingRules::parse(text);
  EXPECT_TRUE(r) << r.error().message;
  return *r;
}

bool acyclic(const Torus& t, const RoutingRules& r) {
  auto check = check_channel_dependencies(t, r);
  EXPECT_TRUE(check) << check.error().message;
  return check->acyclic;
}

const char* kTables[] = {"A", "B", "C", "D"};

TEST(RoutingCheck, LiteralThroughTrafficDatelineHasCyclesOnEveryGridAndSign) {
  for (auto [x, y, z] : {std::tuple{3, 3, 4}, {4, 4, 4}, {3, 4, 6}, {2, 2, 8}})
    for (const char* table : kTables)
      EXPECT_FALSE(acyclic(grid(x, y, z), rules(std::string("literal,table=") + table)))
          << x << "x" << y << "x" << z << " table " << table;
}

TEST(RoutingCheck, PriorArtWithoutChannelRuleInXYDeadlocks) {
  EXPECT_FALSE(acyclic(grid(3, 3, 4), rules("prior-art")));
  EXPECT_FALSE(acyclic(grid(3, 3, 4), rules("prior-art,dateline=link")));
}

TEST(RoutingCheck, ZHopEndingPhaseOneClosesTheHole) {
  for (auto [x, y, z] : {std::tuple{3, 3, 4}, {4, 4, 6}, {2, 3, 8}, {3, 4, 5}})
    for (const char* table : kTables) {
      std::string t = std::string(",table=") + table;
      EXPECT_TRUE(acyclic(grid(x, y, z), rules("literal,phase=latest" + t))) << table;
      EXPECT_TRUE(acyclic(grid(x, y, z), rules("recommended" + t))) << table;
    }
}

TEST(RoutingCheck, LinkAndBoundaryDatelinesAreAcyclicEvenWithEarliestPhase) {
  for (auto [x, y, z] : {std::tuple{3, 3, 4}, {4, 4, 4}, {3, 4, 6}, {2, 2, 8}})
    for (const char* table : kTables) {
      std::string t = std::string(",table=") + table;
      EXPECT_TRUE(acyclic(grid(x, y, z), rules("literal,dateline=link" + t))) << table;
      EXPECT_TRUE(acyclic(grid(x, y, z), rules("literal,dateline=boundary" + t))) << table;
    }
}

TEST(RoutingCheck, DimensionOrderIsAcyclicWithEitherDateline) {
  EXPECT_TRUE(acyclic(grid(3, 3, 4), rules("dor")));
  EXPECT_TRUE(acyclic(grid(3, 3, 4), rules("dor,dateline=through")));
  // Without a dateline the z ring deadlocks, and the cycle runs round it.
  auto check = check_channel_dependencies(grid(3, 3, 4), rules("dor,dateline=none"));
  ASSERT_TRUE(check);
  ASSERT_FALSE(check->acyclic);
  for (const Channel& c : check->cycle) EXPECT_EQ(c.direction / 2, 2);
}

TEST(RoutingCheck, ReportedCycleIsAChainOfNeighbouringChannels) {
  Torus t = grid(3, 3, 4);
  auto check = check_channel_dependencies(t, rules("literal"));
  ASSERT_TRUE(check);
  ASSERT_FALSE(check->acyclic);
  ASSERT_GE(check->cycle.size(), 2u);
  for (size_t i = 0; i < check->cycle.size(); ++i) {
    const Channel& a = check->cycle[i];
    const Channel& b = check->cycle[(i + 1) % check->cycle.size()];
    // b leaves the router a enters.
    EXPECT_EQ(t.hop_distance(a.node, b.node), 1)
        << format_channel(t, a) << " -> " << format_channel(t, b);
    EXPECT_NE(b.direction, a.direction ^ 1);  // no U-turn
  }
}

TEST(RoutingCheck, RedStormRecommendedRulesAreDeadlockFree) {
  auto check = check_channel_dependencies(grid(27, 16, 24), rules("recommended"));
  ASSERT_TRUE(check);
  EXPECT_TRUE(check->acyclic);
  EXPECT_GT(check->dependencies, 0);
}

TEST(RoutingRules, ParseErrorsNameThePart) {
  auto bad = RoutingRules::parse("recommended,dateline=sideways");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("dateline='sideways'"), std::string::npos);
  EXPECT_FALSE(RoutingRules::parse("table=E"));
  EXPECT_FALSE(RoutingRules::parse("fastest"));
  EXPECT_FALSE(RoutingRules::parse("recommended,color=red"));
  EXPECT_EQ(rules("literal").describe(),
            "table=A (+x -x +y +z | -y +z | -z) phase=earliest dateline=through channels=keep");
}

}  // namespace
}  // namespace trellis

namespace trellis {
namespace {

// Replays `hops` as a walk under `rules`: every hop must be one the rules allow, on the channel
// they assign. Returns the router reached, or -1 at the first illegal hop.
NodeId replay(const Torus& t, const RoutingRules& r, NodeId source, const std::vector<Hop>& hops) {
  WalkState s{source, 0, 0, kInjected};
  std::array<WalkState, 2> next;
  for (const Hop& h : hops) {
    if (h.from != s.node) return -1;
    const int count = successors(t, r, s, h.direction, next);
    int match = -1;
    for (int i = 0; i < count; ++i)
      if (next[i].vc == h.vc) match = i;
    if (match < 0) return -1;
    s = next[match];
  }
  return s.node;
}

TEST(Routes, DimensionOrderIsShortestAndLegalUnderEveryTable) {
  Torus t = grid(4, 3, 6);
  for (const char* table : kTables) {
    RoutingRules r = rules(std::string("recommended,table=") + table);
    for (NodeId a = 0; a < t.node_count(); ++a)
      for (NodeId b = 0; b < t.node_count(); ++b) {
        auto hops = dimension_order_route(t, a, b);
        ASSERT_EQ(static_cast<int>(hops.size()), t.hop_distance(a, b));
        ASSERT_EQ(replay(t, r, a, hops), b) << "table " << table << " " << a << "->" << b;
      }
  }
}

TEST(Routes, LegalRouteDetoursAroundFailures) {
  Torus t = grid(4, 4, 6);
  RoutingRules r = rules("recommended");
  NodeSet failed(t.node_count());
  const NodeId src = t.id({0, 1, 0}), dst = t.id({3, 1, 0});
  failed.set(t.id({1, 1, 0}));  // blocks the straight x segment
  auto route = legal_route(t, r, src, dst, failed);
  ASSERT_TRUE(route) << route.error().message;
  EXPECT_EQ(replay(t, r, src, *route), dst);
  for (const Hop& h : *route) EXPECT_FALSE(failed.test(h.from));
  // Side-step +y, x, then -y back (digest 4.5): 5 hops.
  EXPECT_EQ(route->size(), 5u);
  // Without faults it is as short as dimension order.
  auto clear = legal_route(t, r, src, dst, NodeSet(t.node_count()));
  ASSERT_TRUE(clear);
  EXPECT_EQ(clear->size(), 3u);
  // A walled-in destination is unreachable, and says so.
  NodeSet wall(t.node_count());
  const NodeId corner = t.id({0, 0, 3});
  for (int d = 0; d < kDirections; ++d)
    if (NodeId nb = neighbour(t, corner, d); nb >= 0) wall.set(nb);
  auto none = legal_route(t, r, src, corner, wall);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no route"), std::string::npos);
}

// Every legal route found around random faults obeys the rules, so its channel dependencies are
// a subset of the CDG, which is acyclic for the recommended rules.
TEST(Routes, RandomFaultRoutesAreLegalWalks) {
  Torus t = grid(4, 4, 6);
  RoutingRules r = rules("recommended");
  std::mt19937 rng(8);
  int routed = 0;
  for (int trial = 0; trial < 300; ++trial) {
    NodeSet failed(t.node_count());
    for (int f = 0; f < 6; ++f) failed.set(rng() % t.node_count());
    NodeId a = rng() % t.node_count(), b = rng() % t.node_count();
    if (failed.test(a) || failed.test(b)) continue;
    auto route = legal_route(t, r, a, b, failed);
    if (!route) continue;
    ++routed;
    ASSERT_EQ(replay(t, r, a, *route), b);
    for (const Hop& h : *route) ASSERT_FALSE(failed.test(h.from));
    ASSERT_GE(static_cast<int>(route->size()), t.hop_distance(a, b));
  }
  EXPECT_GT(routed, 200);
}

}  // namespace
}  // namespace trellis
