// Boxes for any count (sched/request_shaping.h: pad_to_box): a count that no box holds exactly is
// rounded up to the smallest box volume of the machine. Oracle: every box of the machine listed by
// brute force.

#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "alloc/registry.h"
#include "sched/request_shaping.h"
#include "sim/workload.h"
#include "test_machines.h"

namespace trellis {
namespace {

// The smallest volume >= n among all boxes of the machine, by listing every extent tuple.
long brute_force_smallest_volume(const Torus& t, int n) {
  long best = std::numeric_limits<long>::max();
  Shape extents(t.dims(), 1);
  while (true) {
    long volume = shape_volume(extents);
    if (volume >= n) best = std::min(best, volume);
    int axis = 0;
    while (axis < t.dims() && extents[axis] == t.extent(axis)) extents[axis++] = 1;
    if (axis == t.dims()) return best;
    ++extents[axis];
  }
}

const char* const kSmallMachines[] = {"torus:16x16", "mesh:3x5",    "torus:7",
                                      "mesh:5x7",    "torus:4x4x2", "mesh:2x3x5",
                                      "torus:6x5x3", "mesh:11x13",  "torus:3x3x3x2"};

TEST(BoxPadding, SmallestBoxVolumeMatchesEveryBoxOfTheMachine) {
  for (const char* spec : kSmallMachines) {
    Machine m = machine(spec);
    const Torus& t = *m.torus();
    for (int n = 1; n <= m.node_count(); ++n) {
      auto volume = smallest_box_volume(t, n);
      ASSERT_TRUE(volume) << spec << " n=" << n;
      EXPECT_EQ(*volume, brute_force_smallest_volume(t, n)) << spec << " n=" << n;
      EXPECT_EQ(box_of_volume_fits(t, n), *volume == n) << spec << " n=" << n;
    }
    EXPECT_FALSE(smallest_box_volume(t, 0));
    EXPECT_FALSE(smallest_box_volume(t, m.node_count() + 1));
  }
}

TEST(BoxPadding, PadsOnlyCountsInBoxModes) {
  const Torus t = *machine("torus:16x16").torus();
  Request padded = pad_to_box(t, Request::count(17));
  EXPECT_EQ(padded.nodes, 18);  // 17 is prime and longer than an axis; 18 = 3x6
  EXPECT_EQ(padded.padding, 1);
  EXPECT_EQ(padded.asked_nodes(), 17);
  Request exact = pad_to_box(t, Request::count(32));
  EXPECT_EQ(exact.nodes, 32);
  EXPECT_EQ(exact.padding, 0);
  Request mesh = pad_to_box(t, Request::count(166, PlacementMode::kMesh));
  EXPECT_EQ(mesh.nodes, 168);  // 166 = 2 x 83, 167 prime; 168 = 12x14
  Request any = pad_to_box(t, Request::count(17, PlacementMode::kNonContiguous));
  EXPECT_EQ(any.nodes, 17);
  EXPECT_EQ(any.padding, 0);
  Request shaped = pad_to_box(t, Request::box({17, 1}));  // never fits, but a shape is a shape
  EXPECT_EQ(shaped.nodes, 17);
  Request too_big = pad_to_box(t, Request::count(300));
  EXPECT_EQ(too_big.nodes, 300);
  EXPECT_EQ(too_big.padding, 0);
}

// The contiguous allocator places a padded request in a box of exactly the padded volume: never
// larger than the smallest box that holds the count, on random free sets of small machines.
TEST(BoxPadding, ContiguousPlacementsNeverExceedTheSmallestFittingVolume) {
  std::mt19937 rng(12);
  for (const char* spec : kSmallMachines) {
    Machine m = machine(spec);
    const Torus& t = *m.torus();
    auto allocator = AllocatorRegistry::builtin().create("contiguous", m, {});
    ASSERT_TRUE(allocator) << allocator.error().message;
    for (int n = 1; n <= m.node_count(); ++n) {
      const Request request = pad_to_box(t, Request::count(n));
      const long smallest = brute_force_smallest_volume(t, n);
      ASSERT_TRUE((*allocator)->check(request).ok()) << spec << " n=" << n;
      auto empty = (*allocator)->allocate(NodeSet::all(m.node_count()), request);
      ASSERT_TRUE(empty) << spec << " n=" << n << ": " << empty.error().message;
      EXPECT_EQ(empty->nodes.count(), smallest) << spec << " n=" << n;
      for (int trial = 0; trial < 4; ++trial) {
        int free_count = std::uniform_int_distribution<int>(0, m.node_count())(rng);
        NodeSet free = random_nodes(m.node_count(), free_count, rng);
        auto placed = (*allocator)->allocate(free, request);
        if (!placed) continue;
        EXPECT_EQ(placed->nodes.count(), smallest) << spec << " n=" << n;
        EXPECT_TRUE(placed->nodes.is_subset_of(free));
      }
    }
  }
}

TEST(BoxPadding, WorkloadFormPadsForBoxAllocatorsOnly) {
  Machine m = machine("torus:16x16");
  Workload workload;
  for (int n : {17, 16, 166, 300}) {
    Job job;
    job.id = n;
    job.request = Request::count(n);
    workload.jobs.push_back(job);
  }
  Workload padded = workload, unpadded = workload, noncont = workload;
  set_request_form(padded, m, PlacementMode::kTorus, /*shaped=*/false, /*pad_counts=*/true);
  EXPECT_EQ(padded.jobs[0].request.nodes, 18);
  EXPECT_EQ(padded.jobs[1].request.nodes, 16);
  EXPECT_EQ(padded.jobs[2].request.nodes, 168);
  EXPECT_EQ(padded.jobs[2].request.asked_nodes(), 166);
  EXPECT_EQ(padded.jobs[3].request.nodes, 300);  // larger than the machine: rejected later
  set_request_form(unpadded, m, PlacementMode::kTorus, false, /*pad_counts=*/false);
  EXPECT_EQ(unpadded.jobs[0].request.nodes, 17);
  set_request_form(noncont, m, PlacementMode::kNonContiguous, false, /*pad_counts=*/true);
  EXPECT_EQ(noncont.jobs[0].request.nodes, 17);
  // Padding comes before shaping, so the padded count gets a cube-like box.
  Workload shaped = workload;
  set_request_form(shaped, m, PlacementMode::kTorus, /*shaped=*/true, /*pad_counts=*/true);
  EXPECT_EQ(shaped.jobs[0].request.shape, (Shape{3, 6}));
  EXPECT_EQ(shaped.jobs[0].request.padding, 1);
}

}  // namespace
}  // namespace trellis
