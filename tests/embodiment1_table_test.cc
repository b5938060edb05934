// Seed 000's search tables against the digest's worked examples (shared/reference/
// 000_fujitsu.md sections 5.1-5.5) and its published condition-check counts (section 6.2).
#include "alloc/contiguous/embodiment1_table.h"

#include <gtest/gtest.h>

#include <random>
#include <sstream>

namespace trellis {
namespace {

Torus make_torus(std::vector<int> extents, std::vector<bool> wraps) {
  auto t = Torus::make(std::move(extents), std::move(wraps));
  EXPECT_TRUE(t.ok());
  return *t;
}

NodeSet free_except(const Torus& m, const std::vector<Coords>& busy) {
  NodeSet free = NodeSet::all(m.node_count());
  for (const auto& c : busy) free.reset(m.id(c));
  return free;
}

// Rows of the digest's tables: for each Y, for each X, the entries c = Y..Ymax-1 as "f/d".
// Entries are listed per (Y, X) separated by '|', values by spaces.
void expect_table(const SearchTable2D& t, const std::vector<std::string>& rows) {
  ASSERT_EQ(static_cast<int>(rows.size()), t.ymax);
  for (int y = 0; y < t.ymax; ++y) {
    std::istringstream per_x(rows[y]);
    std::string cell;
    for (int x = 0; x < t.x_starts; ++x) {
      ASSERT_TRUE(std::getline(per_x, cell, '|')) << "row " << y << " has too few X entries";
      std::istringstream values(cell);
      for (int c = y; c < t.ymax; ++c) {
        long f = -1;
        int d = -1;
        char slash = 0;
        ASSERT_TRUE(values >> f >> slash >> d) << "Y=" << y << " X=" << x << " c=" << c;
        SCOPED_TRACE("T[" + std::to_string(x) + "][" + std::to_string(y) + "].yx[" +
                     std::to_string(c) + "]");
        EXPECT_EQ(t.at(x, y, c).f, f);
        EXPECT_EQ(t.at(x, y, c).d, d);
        EXPECT_EQ(t.at(x, y, c).e, c - y + 1);
      }
    }
  }
}

TEST(Embodiment1Table, PriorArtAllFree4x3MatchesFig24A) {  // digest 5.1
  Torus m = make_torus({4, 3}, {false, false});
  long checks = 0;
  auto t = prior_art_search(m, NodeSet::all(12), &checks);
  expect_table(t, {"4/4 8/4 12/4 | 3/3 6/3 9/3 | 2/2 4/2 6/2 | 1/1 2/1 3/1",
                   "4/4 8/4 | 3/3 6/3 | 2/2 4/2 | 1/1 2/1", "4/4 | 3/3 | 2/2 | 1/1"});
}

TEST(Embodiment1Table, Embodiment1AllFree4x3MatchesFig2) {  // digest 5.2
  Torus m = make_torus({4, 3}, {true, false});
  auto t = embodiment1_search_2d(m, NodeSet::all(12), nullptr);
  ASSERT_EQ(t.x_starts, 8);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 8; ++x)
      for (int c = y; c < 3; ++c) {
        int e = c - y + 1, d = 8 - x;
        EXPECT_EQ(t.at(x, y, c), (SearchEntry{std::min(d, 4) * e, d, e}));
      }
  EXPECT_EQ(t.at(0, 0, 2), (SearchEntry{12, 8, 3}));
  EXPECT_EQ(t.at(5, 0, 2), (SearchEntry{9, 3, 3}));
  EXPECT_EQ(t.at(7, 2, 2), (SearchEntry{1, 1, 1}));
}

TEST(Embodiment1Table, TwoBusyNodes4x3MatchesSection53) {  // digest 5.3
  Torus mesh = make_torus({4, 3}, {false, false});
  Torus xtorus = make_torus({4, 3}, {true, false});
  NodeSet free = free_except(mesh, {{1, 0}, {2, 1}});
  expect_table(prior_art_search(mesh, free, nullptr),
               {"1/1 2/1 3/1 | 0/0 0/0 0/0 | 2/2 0/0 0/0 | 1/1 2/1 3/1",
                "2/2 4/2 | 1/1 2/1 | 0/0 0/0 | 1/1 2/1", "4/4 | 3/3 | 2/2 | 1/1"});
  expect_table(embodiment1_search_2d(xtorus, free, nullptr),
               {"1/1 2/1 3/1 | 0/0 0/0 0/0 | 3/3 0/0 0/0 | 2/2 4/2 6/2 |"
                " 1/1 2/1 3/1 | 0/0 0/0 0/0 | 2/2 0/0 0/0 | 1/1 2/1 3/1",
                "2/2 4/2 | 1/1 2/1 | 0/0 0/0 | 3/3 6/3 | 2/2 4/2 | 1/1 2/1 | 0/0 0/0 | 1/1 2/1",
                "4/8 | 4/7 | 4/6 | 4/5 | 4/4 | 3/3 | 2/2 | 1/1"});
}

TEST(Embodiment1Table, PublishedConditionCheckCounts) {  // digest 6.2
  long mesh_24x1 = 0, mesh_24x18 = 0, emb1_24x18 = 0, emb1_24x1 = 0;
  prior_art_search(make_torus({24, 1}, {false, false}), NodeSet::all(24), &mesh_24x1);
  prior_art_search(make_torus({24, 18}, {false, false}), NodeSet::all(432), &mesh_24x18);
  embodiment1_search_2d(make_torus({24, 18}, {true, false}), NodeSet::all(432), &emb1_24x18);
  embodiment1_search_2d(make_torus({24, 1}, {true, false}), NodeSet::all(24), &emb1_24x1);
  EXPECT_EQ(mesh_24x1, 999);
  EXPECT_EQ(mesh_24x18, 163'009);
  EXPECT_EQ(24 * mesh_24x18, 3'912'216);  // the conventional torus: one search per origin
  EXPECT_EQ(emb1_24x18, 629'677);
  EXPECT_EQ(emb1_24x1, 3'771);  // the digest's per-Y table, first row
}

TEST(Embodiment1Table, GeneralisedFormIsFig4And5In2D) {
  // Same counts on the published grids...
  long mesh = 0, xtorus = 0;
  embodiment1_table(make_torus({24, 18}, {false, false}), NodeSet::all(432), PlacementMode::kMesh,
                    &mesh);
  embodiment1_table(make_torus({24, 18}, {true, false}), NodeSet::all(432), PlacementMode::kTorus,
                    &xtorus);
  EXPECT_EQ(mesh, 163'009);
  EXPECT_EQ(xtorus, 629'677);
  // ...and the same table and count as the literal form on random grids.
  std::mt19937 rng(7);
  for (int i = 0; i < 200; ++i) {
    int xm = std::uniform_int_distribution<int>(1, 9)(rng);
    int ym = std::uniform_int_distribution<int>(1, 7)(rng);
    bool wrap = rng() % 2 == 0;
    Torus m = make_torus({xm, ym}, {wrap, false});
    NodeSet free(m.node_count());
    for (NodeId id = 0; id < m.node_count(); ++id)
      if (rng() % 10 < 7) free.set(id);
    long literal_checks = 0, general_checks = 0;
    auto literal = wrap ? embodiment1_search_2d(m, free, &literal_checks)
                        : prior_art_search(m, free, &literal_checks);
    auto general = embodiment1_table(m, free, PlacementMode::kTorus, &general_checks);
    EXPECT_EQ(literal_checks, general_checks);
    for (int y = 0; y < ym; ++y)
      for (int x = 0; x < literal.x_starts; ++x)
        for (int c = y; c < ym; ++c) {
          Shape h = {1, c - y + 1};
          EXPECT_EQ(general[y].run(x, general[y].window_index(h)), literal.at(x, y, c).d);
        }
    if (HasFailure()) return;
  }
}

// T[X][Y][Z].yzx[ye][ze] as (f, g) from the generalised table on an X-torus (digest 5.5).
std::pair<long, int> entry_3d(const std::vector<Embodiment1Slice>& table, const Torus& m, int x,
                              int y, int z, int ye, int ze) {
  const auto& slice = table[y + m.extent(1) * z];
  int g = slice.run(x, slice.window_index({1, ye - y + 1, ze - z + 1}));
  return {std::min(g, m.extent(0)) * (ye - y + 1) * (ze - z + 1), g};
}

TEST(Embodiment1Table, Generalised4x3x2MatchesSection55) {
  Torus m = make_torus({4, 3, 2}, {true, false, false});
  auto all_free = embodiment1_table(m, NodeSet::all(24), PlacementMode::kTorus, nullptr);
  for (int x = 0; x < 8; ++x)
    for (int y = 0; y < 3; ++y)
      for (int z = 0; z < 2; ++z)
        for (int ye = y; ye < 3; ++ye)
          for (int ze = z; ze < 2; ++ze) {
            long f = std::min(8 - x, 4) * (ye - y + 1) * (ze - z + 1);
            EXPECT_EQ(entry_3d(all_free, m, x, y, z, ye, ze), std::make_pair(f, 8 - x));
          }
  EXPECT_EQ(entry_3d(all_free, m, 0, 0, 0, 2, 1), std::make_pair(24L, 8));
  EXPECT_EQ(entry_3d(all_free, m, 5, 1, 0, 2, 1), std::make_pair(12L, 3));

  auto t =
      embodiment1_table(m, free_except(m, {{1, 0, 0}, {3, 2, 1}}), PlacementMode::kTorus, nullptr);
  using P = std::pair<long, int>;
  EXPECT_EQ(entry_3d(t, m, 0, 0, 0, 0, 0), P(1, 1));
  EXPECT_EQ(entry_3d(t, m, 0, 0, 0, 2, 1), P(6, 1));
  for (int ye = 0; ye < 3; ++ye)
    for (int ze = 0; ze < 2; ++ze) EXPECT_EQ(entry_3d(t, m, 1, 0, 0, ye, ze), P(0, 0));
  EXPECT_EQ(entry_3d(t, m, 2, 0, 0, 0, 0), P(3, 3));
  EXPECT_EQ(entry_3d(t, m, 2, 0, 0, 1, 0), P(6, 3));
  EXPECT_EQ(entry_3d(t, m, 2, 0, 0, 2, 1), P(6, 1));
  EXPECT_EQ(entry_3d(t, m, 3, 0, 0, 0, 0), P(2, 2));
  EXPECT_EQ(entry_3d(t, m, 3, 0, 0, 2, 1), P(0, 0));
  EXPECT_EQ(entry_3d(t, m, 0, 1, 1, 2, 1), P(6, 3));
  EXPECT_EQ(entry_3d(t, m, 1, 1, 1, 2, 1), P(4, 2));
  EXPECT_EQ(entry_3d(t, m, 6, 0, 0, 2, 1), P(6, 1));
  EXPECT_EQ(entry_3d(t, m, 7, 0, 0, 2, 1), P(0, 0));
}

// The generalised table against its definition, with wrap in any axes: the forward run from X
// (along the doubled x axis where x may cross) of columns whose window cross-section is free.
TEST(Embodiment1Table, GeneralisedRunsMatchTheirDefinition) {
  std::mt19937 rng(11);
  for (int i = 0; i < 150; ++i) {
    std::vector<int> extents;
    std::vector<bool> wraps;
    for (int k = 0; k < 3; ++k) {
      extents.push_back(std::uniform_int_distribution<int>(1, 5)(rng));
      wraps.push_back(rng() % 2 == 0);
    }
    Torus m = make_torus(extents, wraps);
    NodeSet free(m.node_count());
    for (NodeId id = 0; id < m.node_count(); ++id)
      if (rng() % 10 < 8) free.set(id);
    const PlacementMode mode = rng() % 2 ? PlacementMode::kTorus : PlacementMode::kMesh;
    auto table = embodiment1_table(m, free, mode, nullptr);
    const int n0 = extents[0];
    for (int rho = 0; rho < static_cast<int>(table.size()); ++rho) {
      const auto& slice = table[rho];
      Coords start = m.coords(rho * n0);
      for (int h1 = 1; h1 <= slice.window_limit(1); ++h1)
        for (int h2 = 1; h2 <= slice.window_limit(2); ++h2) {
          auto column_free = [&](int x) {
            for (int a = 0; a < h1; ++a)
              for (int b = 0; b < h2; ++b)
                if (!free.test(
                        m.id({x % n0, (start[1] + a) % extents[1], (start[2] + b) % extents[2]})))
                  return false;
            return true;
          };
          for (int x = 0; x < slice.x_starts(); ++x) {
            int expected = 0;
            while (x + expected < slice.x_starts() && column_free(x + expected)) ++expected;
            EXPECT_EQ(slice.run(x, slice.window_index({1, h1, h2})), expected);
          }
        }
    }
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace trellis
