#include <gtest/gtest.h>

#include "topology/channel_dependency.h"
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
