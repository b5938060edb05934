#include "core/node_set.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "core/hostlist.h"

namespace trellis {
namespace {

TEST(NodeSet, SetAlgebraMatchesStdSetOnRandomSets) {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    int size = 1 + static_cast<int>(rng() % 300);
    std::set<int> a, b;
    NodeSet sa(size), sb(size);
    for (int i = 0; i < size; ++i) {
      if (rng() % 3 == 0) {
        a.insert(i);
        sa.set(i);
      }
      if (rng() % 2 == 0) {
        b.insert(i);
        sb.set(i);
      }
    }
    auto check = [&](const NodeSet& got, auto pred) {
      for (int i = 0; i < size; ++i) ASSERT_EQ(got.test(i), pred(i)) << "id " << i;
      int n = 0;
      for (int i = 0; i < size; ++i) n += pred(i);
      ASSERT_EQ(got.count(), n);
    };
    check(sa | sb, [&](int i) { return a.count(i) || b.count(i); });
    check(sa & sb, [&](int i) { return a.count(i) && b.count(i); });
    check(sa - sb, [&](int i) { return a.count(i) && !b.count(i); });
    check(sa ^ sb, [&](int i) { return a.count(i) != b.count(i); });
    check(sa.complement(), [&](int i) { return !a.count(i); });
    std::vector<int> expect(a.begin(), a.end());
    EXPECT_EQ(sa.to_vector(), expect);
    EXPECT_EQ(sa.intersects(sb), (sa & sb).any());
    EXPECT_EQ((sa & sb).is_subset_of(sa), true);
    // next / next_absent walk the set exactly.
    int from = static_cast<int>(rng() % size);
    auto it = a.lower_bound(from);
    EXPECT_EQ(sa.next(from), it == a.end() ? -1 : *it);
    int absent = from;
    while (absent < size && a.count(absent)) ++absent;
    EXPECT_EQ(sa.next_absent(from), absent);
  }
}

TEST(NodeSet, RangesAcrossWordBoundaries) {
  NodeSet s(200);
  s.set_range(60, 130);
  EXPECT_EQ(s.count(), 70);
  EXPECT_EQ(s.next(0), 60);
  EXPECT_EQ(s.next_absent(60), 130);
  s.reset_range(64, 128);
  EXPECT_EQ(s.count(), 6);
  EXPECT_EQ(format_hostlist(s), "n[60-63,128-129]");
  EXPECT_EQ(NodeSet::all(130).count(), 130);
  EXPECT_EQ(NodeSet::all(130).complement().count(), 0);
}

// Sets up to kInlineWords * 64 nodes keep their words inline, larger ones on the heap: copies,
// moves and assignments between the two kinds (and sizes) give equal sets and leave the source
// as the language promises (a copy's unchanged, a move's empty).
TEST(NodeSet, CopiesAndMovesAcrossInlineAndHeapSizes) {
  std::mt19937 rng(11);
  const int inline_nodes = NodeSet::kInlineWords * NodeSet::kWordBits;
  const std::vector<int> sizes = {
      0, 1, 63, 64, 128, inline_nodes - 1, inline_nodes, inline_nodes + 1, 1000, 4096};
  auto random_set = [&](int size) {
    NodeSet s(size);
    for (NodeId id = 0; id < size; ++id)
      if (rng() % 3 == 0) s.set(id);
    return s;
  };
  for (int from : sizes) {
    for (int to : sizes) {
      const NodeSet source = random_set(from);
      NodeSet copied(source);
      EXPECT_EQ(copied, source);
      NodeSet assigned = random_set(to);
      assigned = source;
      EXPECT_EQ(assigned, source) << from << " over " << to;
      EXPECT_EQ(assigned.count(), source.count());
      NodeSet moved_into = random_set(to);
      NodeSet moving = source;
      moved_into = std::move(moving);
      EXPECT_EQ(moved_into, source) << from << " moved over " << to;
      EXPECT_EQ(moving.size(), 0);  // NOLINT(bugprone-use-after-move): documented state
      NodeSet constructed(std::move(moved_into));
      EXPECT_EQ(constructed, source);
      // The copies are independent of each other and of the source.
      if (from > 0) {
        copied.set(from - 1);
        assigned.reset(from - 1);
        EXPECT_TRUE(copied.test(from - 1));
        EXPECT_FALSE(assigned.test(from - 1));
        EXPECT_EQ(constructed, source);
      }
      EXPECT_EQ(NodeSet(from).count(), 0);
      EXPECT_EQ(NodeSet::all(from).count(), from);
    }
  }
}

TEST(NodeSet, RunsAreTheMaximalConsecutiveStretches) {
  using Runs = std::vector<std::pair<NodeId, NodeId>>;
  EXPECT_EQ(NodeSet(10).runs(), Runs{});
  EXPECT_EQ(NodeSet::of(10, {1, 2, 3, 7}).runs(), (Runs{{1, 3}, {7, 7}}));
  EXPECT_EQ(NodeSet::all(130).runs(), (Runs{{0, 129}}));
  NodeSet across(200);
  across.set_range(60, 70);
  across.set_range(127, 129);
  across.set_range(199, 200);
  EXPECT_EQ(across.runs(), (Runs{{60, 69}, {127, 128}, {199, 199}}));
  // Property: on random sets, the runs cover exactly the members and never touch each other.
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    int size = 1 + static_cast<int>(rng() % 300);
    NodeSet nodes(size);
    for (NodeId id = 0; id < size; ++id)
      if (rng() % 3) nodes.set(id);
    NodeSet rebuilt(size);
    NodeId previous_last = -2;
    for (auto [first, last] : nodes.runs()) {
      EXPECT_LE(first, last);
      EXPECT_GT(first, previous_last + 1) << "adjacent runs should have been one";
      rebuilt.set_range(first, last + 1);
      previous_last = last;
    }
    EXPECT_EQ(rebuilt, nodes);
  }
}

TEST(Hostlist, FormatsCompactRanges) {
  EXPECT_EQ(format_hostlist(NodeSet::of(20, {0, 1, 2, 3, 12})), "n[0-3,12]");
  EXPECT_EQ(format_hostlist(NodeSet::of(20, {5})), "n5");
  EXPECT_EQ(format_hostlist(NodeSet(20)), "");
  EXPECT_EQ(format_hostlist(NodeSet::of(20, {1, 3}), "node"), "node[1,3]");
}

TEST(Hostlist, ParsesWhatItFormatsOnRandomSets) {
  std::mt19937 rng(3);
  for (int round = 0; round < 200; ++round) {
    int size = 1 + static_cast<int>(rng() % 500);
    NodeSet s(size);
    for (int i = 0; i < size; ++i)
      if (rng() % 4 != 0) s.set(i);
    auto parsed = parse_hostlist(format_hostlist(s), size);
    ASSERT_TRUE(parsed) << parsed.error().message;
    EXPECT_EQ(*parsed, s);
  }
}

TEST(Hostlist, AcceptsMixedForms) {
  auto s = parse_hostlist("n[0-2],n7,n[9,11-12]", 16);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->to_vector(), (std::vector<NodeId>{0, 1, 2, 7, 9, 11, 12}));
}

TEST(Hostlist, RejectsBadInputWithPosition) {
  for (const char* bad : {"x[0-3]", "n[0-3", "n[3-1]", "n[a]", "n[0-3]]", "n99", "n[1,,2]", "n"}) {
    auto s = parse_hostlist(bad, 20);
    ASSERT_FALSE(s) << bad;
    EXPECT_NE(s.error().message.find("hostlist"), std::string::npos) << s.error().message;
  }
  EXPECT_NE(parse_hostlist("n99", 20).error().message.find("outside the machine"),
            std::string::npos);
}

}  // namespace
}  // namespace trellis
