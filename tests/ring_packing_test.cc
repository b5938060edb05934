#include "alloc/linear/ring_packing.h"

#include <gtest/gtest.h>

#include <random>

namespace trellis {
namespace {

NodeSet ranks_of(int n, const std::vector<std::pair<int, int>>& runs) {
  NodeSet s(n);
  for (auto [start, len] : runs)
    for (int j = 0; j < len; ++j) s.set((start + j) % n);
  return s;
}

std::vector<int> pick(const NodeSet& free, int k, IntervalFit fit, bool ring = true) {
  auto iv = choose_interval(free_intervals(free, ring), k, fit);
  if (!iv) return {};
  return place_in_interval(*iv, k, free.size());
}

std::vector<int> range(int first, int count) {
  std::vector<int> v(count);
  for (int i = 0; i < count; ++i) v[i] = first + i;
  return v;
}

// Digest 5.2 E1: best fit and sum of squares disagree.
TEST(RingPacking, E1BestFitAndSumOfSquaresDiffer) {
  NodeSet free = ranks_of(24, {{0, 3}, {6, 4}, {14, 4}});
  auto ivs = free_intervals(free, true);
  ASSERT_EQ(ivs.size(), 3u);
  EXPECT_EQ(pick(free, 3, IntervalFit::kFirst), range(0, 3));
  EXPECT_EQ(pick(free, 3, IntervalFit::kBest), range(0, 3));
  EXPECT_EQ(pick(free, 3, IntervalFit::kSumOfSquares), range(6, 3));
}

// E2: the run through the seam is one interval starting at its high rank.
TEST(RingPacking, E2WrapsThroughTheSeam) {
  NodeSet free = ranks_of(24, {{20, 6}, {8, 3}});
  auto ivs = free_intervals(free, true);
  ASSERT_EQ(ivs.size(), 2u);
  EXPECT_EQ(ivs[0].start, 8);
  EXPECT_EQ(ivs[1].start, 20);
  EXPECT_EQ(ivs[1].length, 6);
  const std::vector<int> want = {20, 21, 22, 23, 0};
  for (auto fit : {IntervalFit::kFirst, IntervalFit::kBest, IntervalFit::kSumOfSquares})
    EXPECT_EQ(pick(free, 5, fit), want);
  // On a line the two ends stay apart and nothing of 5 fits.
  EXPECT_EQ(free_intervals(free, false).size(), 3u);
  EXPECT_TRUE(pick(free, 5, IntervalFit::kFirst, false).empty());
}

// E3: no interval fits; min span picks {1,2,5,6} (span 5, tie with {2,5,6,7} to the lower).
TEST(RingPacking, E3MinSpanFallback) {
  NodeSet free = NodeSet::of(24, {1, 2, 5, 6, 7, 12, 13, 20});
  for (auto fit : {IntervalFit::kFirst, IntervalFit::kBest, IntervalFit::kSumOfSquares})
    EXPECT_TRUE(pick(free, 4, fit).empty());
  auto ms = min_span(free, 4, true);
  EXPECT_EQ(ms, (std::vector<int>{1, 2, 5, 6}));
  EXPECT_EQ(curve_span(ms, 24, true), 5);
}

TEST(RingPacking, E4AndE4Prime) {
  NodeSet free = ranks_of(40, {{0, 6}, {10, 4}, {20, 4}, {30, 5}});
  EXPECT_EQ(pick(free, 4, IntervalFit::kFirst), range(0, 4));
  EXPECT_EQ(pick(free, 4, IntervalFit::kBest), range(10, 4));
  EXPECT_EQ(pick(free, 4, IntervalFit::kSumOfSquares), range(10, 4));
  EXPECT_EQ(pick(free, 5, IntervalFit::kFirst), range(0, 5));
  EXPECT_EQ(pick(free, 5, IntervalFit::kBest), range(30, 5));
  EXPECT_EQ(pick(free, 5, IntervalFit::kSumOfSquares), range(30, 5));
}

TEST(RingPacking, AllFreeRingIsOneInterval) {
  auto ivs = free_intervals(NodeSet::all(10), true);
  ASSERT_EQ(ivs.size(), 1u);
  EXPECT_EQ(ivs[0].start, 0);
  EXPECT_EQ(ivs[0].length, 10);
  EXPECT_TRUE(free_intervals(NodeSet(10), true).empty());
}

// Oracle: sum of squares recomputed from scratch for every candidate, and min span by trying
// every k-subset window of the free ranks against the brute-force span of all k-subsets.
TEST(RingPacking, SumOfSquaresAndMinSpanMatchBruteForce) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 3000; ++trial) {
    const int n = 4 + rng() % 13;
    const bool ring = rng() % 2;
    NodeSet free(n);
    for (int r = 0; r < n; ++r)
      if (rng() % 3) free.set(r);
    const int m = free.count();
    if (m == 0) continue;
    const int k = 1 + rng() % m;
    auto ivs = free_intervals(free, ring);
    // Sum of squares oracle.
    std::optional<std::pair<long, int>> best;
    for (size_t i = 0; i < ivs.size(); ++i) {
      if (ivs[i].length < k) continue;
      std::vector<long> h(n + 1, 0);
      for (size_t j = 0; j < ivs.size(); ++j)
        if (j != i) ++h[ivs[j].length];
      if (ivs[i].length > k) ++h[ivs[i].length - k];
      long cost = 0;
      for (long c : h) cost += c * c;
      if (!best || cost < best->first) best = {cost, ivs[i].start};
    }
    auto got = choose_interval(ivs, k, IntervalFit::kSumOfSquares);
    ASSERT_EQ(got.has_value(), best.has_value());
    if (got) {
      ASSERT_EQ(got->start, best->second);
    }
    // Min span oracle: the least span over all k-subsets of free ranks.
    std::vector<int> f = free.to_vector();
    int least = n;
    for (uint32_t mask = 0; mask < (1u << m); ++mask) {
      if (std::popcount(mask) != k) continue;
      std::vector<int> sub;
      for (int b = 0; b < m; ++b)
        if (mask >> b & 1) sub.push_back(f[b]);
      least = std::min(least, curve_span(sub, n, ring));
    }
    auto ms = min_span(free, k, ring);
    ASSERT_EQ(static_cast<int>(ms.size()), k);
    for (int r : ms) ASSERT_TRUE(free.test(r));
    ASSERT_EQ(curve_span(ms, n, ring), least) << "n=" << n << " k=" << k << " ring=" << ring;
  }
}

}  // namespace
}  // namespace trellis
