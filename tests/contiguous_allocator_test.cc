// The "contiguous" allocator through the registry: options, impossible requests, the seed's
// FIG. 23 scenario, and allocation/freeing never corrupting the free set.
#include "alloc/contiguous/contiguous_allocator.h"

#include <gtest/gtest.h>

#include "test_machines.h"

#include <random>

#include "alloc/contiguous/orientations.h"
#include "alloc/metrics.h"
#include "alloc/registry.h"

namespace trellis {
namespace {

std::unique_ptr<Allocator> contiguous(const Machine& m, const std::string& search = "") {
  AllocatorOptions options;
  if (!search.empty()) {
    EXPECT_TRUE(options.add("search=" + search).ok());
  }
  auto a = AllocatorRegistry::builtin().create("contiguous", m, options);
  EXPECT_TRUE(a.ok()) << (a ? "" : a.error().message);
  return a ? std::move(*a) : nullptr;
}

Machine machine(const std::string& spec) {
  auto m = Machine::parse(spec);
  EXPECT_TRUE(m.ok()) << spec;
  return *m;
}

TEST(ContiguousAllocator, IsRegisteredWithItsSearchOption) {
  Machine m = machine("torus:8x8");
  for (std::string s : {"", "production", "brute", "embodiment1"})
    EXPECT_NE(contiguous(m, s), nullptr);
  AllocatorOptions bad;
  ASSERT_TRUE(bad.add("search=fastest").ok());
  auto a = AllocatorRegistry::builtin().create("contiguous", m, bad);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("fastest"), std::string::npos);
  auto tree = AllocatorRegistry::builtin().create("contiguous", machine("fattree:4,4"));
  ASSERT_FALSE(tree.ok());
  EXPECT_NE(tree.error().message.find("mesh/torus"), std::string::npos);
}

TEST(ContiguousAllocator, RejectsRequestsThatFitInNoOrientation) {
  Machine m = machine("torus:8x8");
  auto a = contiguous(m);
  auto shaped = a->check(Request::box({9, 2}));
  ASSERT_FALSE(shaped.ok());
  EXPECT_EQ(shaped.error().message, "shape 9x2 does not fit in 8x8 torus in any orientation");
  EXPECT_FALSE(a->check(Request::box({2, 9}, false)).ok());
  EXPECT_TRUE(a->check(Request::box({2, 8}, false)).ok());
  EXPECT_FALSE(a->check(Request::box({2, 2, 2})).ok());  // a third axis that is not 1
  EXPECT_TRUE(a->check(Request::box({4, 2, 1})).ok());
  auto prime = a->check(Request::count(13));  // 13 = 13x1 only: longer than any axis
  ASSERT_FALSE(prime.ok());
  EXPECT_NE(prime.error().message.find("13 nodes"), std::string::npos);
  EXPECT_FALSE(a->allocate(NodeSet::all(64), Request::box({9, 2})).ok());
}

TEST(ContiguousAllocator, OrientationsAreDistinctSortedAndFitting) {
  Torus t = *machine("torus:8x4x2").torus();
  // 4x2x1 rotated: six permutations, less the two with 4 on the z axis (extent 2).
  EXPECT_EQ(orientations_for(t, Request::box({4, 2, 1})),
            (std::vector<Shape>{{1, 4, 2}, {2, 4, 1}, {4, 1, 2}, {4, 2, 1}}));
  EXPECT_EQ(orientations_for(t, Request::box({2, 2})),
            (std::vector<Shape>{{1, 2, 2}, {2, 1, 2}, {2, 2, 1}}));
  EXPECT_EQ(orientations_for(t, Request::box({4, 2}, false)), (std::vector<Shape>{{4, 2, 1}}));
  EXPECT_EQ(orientations_for(t, Request::count(8)),
            (std::vector<Shape>{{1, 4, 2}, {2, 2, 2}, {2, 4, 1}, {4, 1, 2}, {4, 2, 1}, {8, 1, 1}}));
}

// Digest 5.7: four 3x1 jobs on an empty 6x5 machine whose x axis wraps. Every row is a full free
// ring (f = 6) until a row is partly used, so job 1 goes to (0,0), job 2 into the 3-wide rest of
// row 0 (f = 3), jobs 3 and 4 likewise fill row 1: the jobs are "gathered to the side" and the
// largest free box left is the 6x3 of FIG. 23B (18 nodes).
TEST(ContiguousAllocator, GathersSmallJobsAsInFig23B) {
  Machine m = machine("mesh:6x5:wrap=x");
  const Torus& t = *m.torus();
  for (std::string search : {"production", "brute", "embodiment1"}) {
    for (bool rotate : {false, true}) {
      SCOPED_TRACE(search + (rotate ? " rotate" : ""));
      auto a = contiguous(m, search);
      NodeSet free = NodeSet::all(30);
      std::vector<Coords> anchors;
      for (int job = 0; job < 4; ++job) {
        auto p = a->allocate(free, Request::box({3, 1}, rotate));
        ASSERT_TRUE(p.ok());
        ASSERT_TRUE(p->box);
        EXPECT_EQ(p->box->extents, (Shape{3, 1}));
        anchors.push_back(p->box->anchor);
        free -= p->nodes;
      }
      EXPECT_EQ(anchors, (std::vector<Coords>{{0, 0}, {3, 0}, {0, 1}, {3, 1}}));
      auto largest = largest_free_box(t, free);
      ASSERT_TRUE(largest);
      EXPECT_EQ(largest->volume(), 18);
      EXPECT_EQ(*largest, (Box{{0, 2}, {6, 3}}));
    }
  }
}

// Random allocate/free sequences: every placement is a box of free nodes of the requested size,
// no node is given twice, and freeing restores exactly the nodes given.
TEST(ContiguousAllocator, AllocationAndFreeingNeverCorruptTheFreeSet) {
  std::mt19937 rng(5);
  for (std::string spec : {"torus:8x8x8", "mesh:12x10", "mesh:70x3:wrap=x", "torus:4x4x2x2"}) {
    Machine m = machine(spec);
    const Torus& t = *m.torus();
    auto a = contiguous(m);
    NodeSet free = NodeSet::all(m.node_count());
    std::vector<NodeSet> running;
    for (int step = 0; step < 400; ++step) {
      if (!running.empty() && (rng() % 3 == 0 || free.count() < m.node_count() / 4)) {
        size_t j = rng() % running.size();
        EXPECT_FALSE(running[j].intersects(free));
        free |= running[j];
        running.erase(running.begin() + j);
        continue;
      }
      Shape shape;
      for (int k = 0; k < t.dims(); ++k)
        shape.push_back(std::uniform_int_distribution<int>(1, std::max(1, t.extent(k) / 3))(rng));
      Request r = rng() % 4 == 0 ? Request::count(static_cast<int>(shape_volume(shape)))
                                 : Request::box(shape, rng() % 2 == 0);
      auto p = a->allocate(free, r);
      if (!p) continue;
      ASSERT_EQ(p->nodes.count(), r.nodes);
      ASSERT_TRUE(p->nodes.is_subset_of(free));
      ASSERT_TRUE(p->box);
      EXPECT_EQ(p->box->nodes(t), p->nodes);
      for (const auto& other : running) ASSERT_FALSE(other.intersects(p->nodes));
      free -= p->nodes;
      running.push_back(p->nodes);
    }
    NodeSet all = free;
    for (const auto& r : running) all |= r;
    EXPECT_EQ(all, NodeSet::all(m.node_count())) << spec;
  }
}

TEST(ContiguousAllocator, ARequestThatDoesNotFitNowSaysSoByItsCode) {
  Machine m = machine("torus:4x4");
  auto a = contiguous(m);
  NodeSet free = NodeSet::all(16);
  free.reset(5);
  free.reset(10);
  auto p = a->allocate(free, Request::box({3, 3}, true, PlacementMode::kMesh));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, Error::Code::kDoesNotFitNow) << p.error().message;
  // A 5x1 box is longer than the machine: it never fits, whatever is free.
  auto never = a->allocate(free, Request::box({5, 1}, false, PlacementMode::kMesh));
  ASSERT_FALSE(never.ok());
  EXPECT_EQ(never.error().code, Error::Code::kNeverFits) << never.error().message;
}

}  // namespace
}  // namespace trellis
