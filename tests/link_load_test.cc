// all_to_all_link_loads against routing every ordered pair one by one: dimension_order_route on
// meshes and tori (wrapping and not, odd and even extents for the ties), up-and-down on fat trees.
#include "topology/link_load.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "test_machines.h"
#include "topology/route.h"

namespace trellis {
namespace {

std::map<int64_t, int64_t> as_map(const std::vector<LinkLoad>& loads) {
  std::map<int64_t, int64_t> out;
  for (const LinkLoad& l : loads) {
    EXPECT_GT(l.messages, 0) << "link " << l.link;
    EXPECT_TRUE(out.emplace(l.link, l.messages).second) << "link " << l.link << " twice";
  }
  return out;
}

std::map<int64_t, int64_t> routed_pair_by_pair(const Torus& torus, const NodeSet& nodes) {
  std::map<int64_t, int64_t> loads;
  nodes.for_each([&](NodeId s) {
    nodes.for_each([&](NodeId d) {
      if (s == d) return;
      for (const Hop& hop : dimension_order_route(torus, s, d))
        ++loads[static_cast<int64_t>(hop.from) * 2 * torus.dims() + hop.direction];
    });
  });
  return loads;
}

TEST(LinkLoad, MeshAndTorusMatchRoutingEveryPair) {
  std::mt19937 rng(11);
  const char* specs[] = {"torus:5x4",         "mesh:4x3x3",  "torus:6",    "mesh:7",
                         "mesh:5x4x4:wrap=z", "torus:4x4x4", "torus:3x2x5"};
  for (const char* spec : specs) {
    Machine m = machine(spec);
    const Torus& torus = *m.torus();
    for (int trial = 0; trial < 40; ++trial) {
      int count = 1 + static_cast<int>(rng() % std::min(14, m.node_count()));
      NodeSet nodes = random_nodes(m.node_count(), count, rng);
      auto loads = all_to_all_link_loads(m, nodes);
      EXPECT_EQ(as_map(loads), routed_pair_by_pair(torus, nodes)) << spec << " trial " << trial;
      for (const LinkLoad& l : loads) EXPECT_LT(l.link, link_id_bound(m));
    }
  }
}

TEST(LinkLoad, FatTreeMatchesUpAndDownRoutes) {
  std::mt19937 rng(12);
  for (const char* spec : {"fattree:4,4", "fattree:2,3,2", "flat:8"}) {
    Machine m = machine(spec);
    const FatTree& tree = *m.fat_tree();
    // Link ids: level by level, two per subtree (up, down); level 0 is a node's own link.
    std::vector<int64_t> first_link{0};
    for (int level = 0; level < tree.levels(); ++level)
      first_link.push_back(first_link.back() +
                           2 * (level == 0 ? tree.node_count() : tree.switches_at(level)));
    auto subtree = [&](NodeId id, int level) {
      return level == 0 ? id : tree.switch_of(id, level);
    };
    for (int trial = 0; trial < 40; ++trial) {
      int count = 1 + static_cast<int>(rng() % m.node_count());
      NodeSet nodes = random_nodes(m.node_count(), count, rng);
      std::map<int64_t, int64_t> expected;
      nodes.for_each([&](NodeId s) {
        nodes.for_each([&](NodeId d) {
          if (s == d) return;
          for (int level = 0; level < tree.common_level(s, d); ++level) {
            ++expected[first_link[level] + 2 * subtree(s, level)];
            ++expected[first_link[level] + 2 * subtree(d, level) + 1];
          }
        });
      });
      auto loads = all_to_all_link_loads(m, nodes);
      EXPECT_EQ(as_map(loads), expected) << spec << " trial " << trial;
      // Per unit of capacity: a level-l link carries the bandwidth of the nodes under it.
      double most = 0;
      for (auto [link, messages] : expected) {
        int level = 0;
        while (level + 1 < tree.levels() && link >= first_link[level + 1]) ++level;
        most = std::max(most,
                        static_cast<double>(messages) / (level == 0 ? 1 : tree.nodes_under(level)));
      }
      EXPECT_DOUBLE_EQ(max_link_load(m, loads), most) << spec;
    }
  }
}

TEST(LinkLoad, OneNodeSendsNothing) {
  Machine m = machine("torus:4x4");
  EXPECT_TRUE(all_to_all_link_loads(m, NodeSet::of(16, {5})).empty());
  EXPECT_EQ(max_link_load(m, {}), 0);
}

}  // namespace
}  // namespace trellis
