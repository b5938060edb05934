// BitRows and its run finder against naive per-bit computations.
#include "alloc/contiguous/bit_rows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace trellis {
namespace {

using Runs = std::vector<std::pair<int, int>>;

// Maximal runs of set bits, the slow way; cyclic runs touching both ends are merged and start
// at their start near the end, a full row is (0, n).
Runs naive_runs(const std::vector<bool>& bits, bool cyclic) {
  const int n = static_cast<int>(bits.size());
  Runs runs;
  for (int c = 0; c < n; ++c) {
    if (!bits[c] || (c > 0 && bits[c - 1])) continue;
    int end = c;
    while (end < n && bits[end]) ++end;
    runs.push_back({c, end - c});
  }
  if (cyclic && runs.size() > 1 && runs.front().first == 0 &&
      runs.back().first + runs.back().second == n) {
    runs.back().second += runs.front().second;
    runs.erase(runs.begin());
  }
  std::sort(runs.begin(), runs.end());
  return runs;
}

TEST(BitRows, RunsMatchANaiveScanAcrossWordBoundaries) {
  std::mt19937 rng(8);
  for (int i = 0; i < 3000; ++i) {
    const int n = std::uniform_int_distribution<int>(1, 200)(rng);
    const int words = (n + 63) / 64;
    const int density = std::uniform_int_distribution<int>(0, 10)(rng);
    std::vector<bool> bits(n);
    std::vector<NodeSet::Word> row(words, 0);
    for (int c = 0; c < n; ++c) {
      bits[c] = static_cast<int>(rng() % 10) < density;
      if (bits[c]) row[c / 64] |= NodeSet::Word{1} << (c % 64);
    }
    for (bool cyclic : {false, true}) {
      Runs got;
      for_each_run(row.data(), words, n, cyclic, [&](int s, int l) { got.push_back({s, l}); });
      std::sort(got.begin(), got.end());
      ASSERT_EQ(got, naive_runs(bits, cyclic)) << "n=" << n << (cyclic ? " cyclic" : "");
    }
  }
}

TEST(BitRows, WindowAndMatchesTheDefinition) {
  std::mt19937 rng(9);
  for (int i = 0; i < 200; ++i) {
    std::vector<int> extents = {std::uniform_int_distribution<int>(1, 70)(rng),
                                std::uniform_int_distribution<int>(1, 6)(rng),
                                std::uniform_int_distribution<int>(1, 5)(rng)};
    auto t = Torus::make(extents, {true, true, true});
    ASSERT_TRUE(t);
    NodeSet free(t->node_count());
    for (NodeId id = 0; id < t->node_count(); ++id)
      if (rng() % 5 != 0) free.set(id);
    const int axis = 1 + static_cast<int>(rng() % 2);
    const int extent = std::uniform_int_distribution<int>(1, extents[axis])(rng);
    const bool cyclic = rng() % 2 == 0;
    BitRows rows(*t, free), out, scratch;
    out.assign_window_and(rows, *t, axis, extent, cyclic, scratch);
    for (NodeId id = 0; id < t->node_count(); ++id) {
      Coords c = t->coords(id);
      bool expected = cyclic || c[axis] + extent <= extents[axis];
      for (int j = 0; j < extent && expected; ++j) {
        Coords d = c;
        d[axis] = (c[axis] + j) % extents[axis];
        expected = free.test(t->id(d));
      }
      const int rho = id / extents[0], x = id % extents[0];
      const bool got = (out.row(rho)[x / 64] >> (x % 64)) & 1;
      ASSERT_EQ(got, expected) << "node " << id << " axis " << axis << " extent " << extent;
    }
  }
}

}  // namespace
}  // namespace trellis
