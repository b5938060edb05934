// The three contiguous searches agree with brute force on random grids (issue 2, "Done when"):
// the chosen box and the largest free box, in 1-D to 6-D, mesh and torus, with and without
// rotation, shaped and count-only requests.
#include <gtest/gtest.h>

#include <random>

#include "alloc/contiguous/box_search.h"
#include "alloc/contiguous/orientations.h"

namespace trellis {
namespace {

struct Grid {
  Torus machine;
  NodeSet free;
};

// A random machine with `dims` axes of 1..max_extent nodes (at most max_nodes in all), random
// wrap flags, and a random free set whose density is itself random (from almost empty to full).
Grid random_grid(std::mt19937& rng, int dims, int max_extent, int max_nodes) {
  while (true) {
    std::vector<int> extents;
    std::vector<bool> wraps;
    long total = 1;
    for (int k = 0; k < dims; ++k) {
      extents.push_back(std::uniform_int_distribution<int>(1, max_extent)(rng));
      wraps.push_back(rng() % 3 != 0);
      total *= extents.back();
    }
    if (total > max_nodes) continue;
    auto machine = Torus::make(extents, wraps);
    EXPECT_TRUE(machine.ok());
    NodeSet free(machine->node_count());
    const double busy = std::uniform_real_distribution<double>(0, 0.7)(rng);
    for (NodeId id = 0; id < machine->node_count(); ++id)
      if (std::uniform_real_distribution<double>(0, 1)(rng) >= busy) free.set(id);
    return {*machine, free};
  }
}

Request random_request(std::mt19937& rng, const Torus& machine) {
  const PlacementMode mode = rng() % 2 ? PlacementMode::kTorus : PlacementMode::kMesh;
  if (rng() % 3 == 0) {
    int nodes = std::uniform_int_distribution<int>(1, std::min(machine.node_count(), 24))(rng);
    return Request::count(nodes, mode);
  }
  Shape shape;
  const int dims = std::uniform_int_distribution<int>(1, machine.dims())(rng);
  for (int k = 0; k < dims; ++k) {
    int limit = std::max(1, machine.extent(k % machine.dims()) / 2 + 1);
    shape.push_back(std::uniform_int_distribution<int>(1, limit)(rng));
  }
  return Request::box(shape, rng() % 2 == 0, mode);
}

std::string describe(const Grid& g, const Request& r) {
  return g.machine.describe() + " free " + std::to_string(g.free.count()) + " request " +
         (r.has_shape() ? format_shape(r.shape) : std::to_string(r.nodes)) + " " +
         std::string(to_string(r.mode)) + (r.rotate ? " rotate" : "");
}

std::string box_text(const Torus& m, const std::optional<Box>& b) {
  return b ? b->describe(m) : "none";
}

// Returns whether the request could be placed (so callers can check both outcomes occur).
bool expect_agreement(const Grid& g, const Request& request, bool with_embodiment1) {
  const auto brute = make_brute_force_search(g.machine);
  std::vector<std::unique_ptr<BoxSearch>> others;
  others.push_back(make_production_search(g.machine));
  if (with_embodiment1) others.push_back(make_embodiment1_search(g.machine));
  const auto orientations = orientations_for(g.machine, request);
  const auto expected = brute->choose(g.free, orientations, request.mode);
  const auto expected_largest = brute->largest_free_box(g.free, request.mode);
  for (const auto& search : others) {
    SCOPED_TRACE(std::string(search->name()) + " on " + describe(g, request));
    const auto got = search->choose(g.free, orientations, request.mode);
    EXPECT_EQ(got.has_value(), expected.has_value());
    if (expected && got) {
      EXPECT_EQ(got->box, expected->box)
          << got->box.describe(g.machine) << " vs " << expected->box.describe(g.machine);
      EXPECT_EQ(got->key.score, expected->key.score);
      EXPECT_EQ(got->key.offset, expected->key.offset);
      EXPECT_EQ(got->key.orientation, expected->key.orientation);
    }
    const auto largest = search->largest_free_box(g.free, request.mode);
    EXPECT_EQ(largest, expected_largest)
        << box_text(g.machine, largest) << " vs " << box_text(g.machine, expected_largest);
  }
  if (expected) {  // the brute-force choice itself obeys the request
    EXPECT_TRUE(expected->box.nodes(g.machine).is_subset_of(g.free));
    EXPECT_EQ(expected->box.volume(), request.nodes);
  }
  return expected.has_value();
}

// Both outcomes must be common, or the agreement above would prove little.
void expect_mixed_outcomes(int placed, int total) {
  EXPECT_GT(placed, total / 5) << placed << " of " << total << " placed";
  EXPECT_LT(placed, total - total / 20) << placed << " of " << total << " placed";
}

TEST(ContiguousSearch, AllSearchesAgreeWithBruteForceOn2D) {
  std::mt19937 rng(20260);
  int placed = 0;
  for (int i = 0; i < 1200; ++i) {
    Grid g = random_grid(rng, 2, 12, 144);
    placed += expect_agreement(g, random_request(rng, g.machine), true);
    if (HasFailure()) return;
  }
  expect_mixed_outcomes(placed, 1200);
}

TEST(ContiguousSearch, AllSearchesAgreeWithBruteForceOn3D) {
  std::mt19937 rng(31337);
  int placed = 0;
  for (int i = 0; i < 1200; ++i) {
    Grid g = random_grid(rng, 3, 12, 432);
    placed += expect_agreement(g, random_request(rng, g.machine), true);
    if (HasFailure()) return;
  }
  expect_mixed_outcomes(placed, 1200);
}

TEST(ContiguousSearch, AllSearchesAgreeFrom1DTo6D) {
  std::mt19937 rng(4242);
  for (int dims = 1; dims <= 6; ++dims) {
    for (int i = 0; i < 60; ++i) {
      Grid g = random_grid(rng, dims, dims <= 2 ? 12 : 4, 200);
      expect_agreement(g, random_request(rng, g.machine), true);
      if (HasFailure()) return;
    }
  }
}

TEST(ContiguousSearch, AllSearchesAgreeWithAxesOfLengthOne) {
  std::mt19937 rng(1);
  for (std::vector<int> extents : std::vector<std::vector<int>>{
           {1, 9}, {9, 1}, {1, 1}, {5, 1, 7}, {1, 1, 6}, {4, 6, 1}, {1, 12, 3}}) {
    for (int i = 0; i < 40; ++i) {
      std::vector<bool> wraps;
      for (size_t k = 0; k < extents.size(); ++k) wraps.push_back(rng() % 2 == 0);
      auto machine = Torus::make(extents, wraps);
      ASSERT_TRUE(machine);
      NodeSet free(machine->node_count());
      for (NodeId id = 0; id < machine->node_count(); ++id)
        if (rng() % 4 != 0) free.set(id);
      Grid g{*machine, free};
      expect_agreement(g, random_request(rng, g.machine), true);
      if (HasFailure()) return;
    }
  }
}

TEST(ContiguousSearch, ProductionHandlesRowsLongerThanOneWord) {
  std::mt19937 rng(99);
  for (int i = 0; i < 60; ++i) {
    std::vector<int> extents = {std::uniform_int_distribution<int>(60, 150)(rng),
                                std::uniform_int_distribution<int>(1, 3)(rng)};
    auto machine = Torus::make(extents, {rng() % 2 == 0, true});
    ASSERT_TRUE(machine);
    NodeSet free(machine->node_count());
    const double busy = std::uniform_real_distribution<double>(0, 0.3)(rng);
    for (NodeId id = 0; id < machine->node_count(); ++id)
      if (std::uniform_real_distribution<double>(0, 1)(rng) >= busy) free.set(id);
    Grid g{*machine, free};
    Request r = Request::box({std::uniform_int_distribution<int>(1, 70)(rng), 1}, true,
                             rng() % 2 ? PlacementMode::kTorus : PlacementMode::kMesh);
    expect_agreement(g, r, true);
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace trellis
