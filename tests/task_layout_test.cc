// Task layouts (core/task_layout.h) against oracles: every rank placed once, the counts srun
// gives, block and cyclic order, and the PMI_process_mapping and SLURM_TASKS_PER_NODE texts read
// back the way MPI libraries read them.
#include "core/task_layout.h"

#include <gtest/gtest.h>

#include <random>
#include <regex>

#include "core/hostlist_names.h"
#include "core/task_request.h"

namespace trellis {
namespace {

// "n7": a name and a number (GCC 12 misreads "n" + std::to_string(7) under -Wrestrict).
std::string numbered(const char* prefix, long number) {
  std::string name(prefix);
  name += std::to_string(number);
  return name;
}

// The node of each rank, from a PMI_process_mapping value as MPICH reads it (RFC 13): blocks of
// (first node, node count, ranks per node), repeated until every rank has a node.
std::vector<int> decode_mapping(const std::string& text, int ntasks) {
  std::regex block(R"(\((\d+),(\d+),(\d+)\))");
  std::vector<std::array<int, 3>> blocks;
  for (std::sregex_iterator it(text.begin(), text.end(), block), end; it != end; ++it)
    blocks.push_back({std::stoi((*it)[1]), std::stoi((*it)[2]), std::stoi((*it)[3])});
  std::vector<int> node_of;
  while (static_cast<int>(node_of.size()) < ntasks && !blocks.empty()) {
    for (const auto& [first, count, ppn] : blocks)
      for (int n = 0; n < count; ++n)
        for (int r = 0; r < ppn && static_cast<int>(node_of.size()) < ntasks; ++r)
          node_of.push_back(first + n);
  }
  return node_of;
}

TEST(TaskLayoutTest, EveryRankOnceWithTheCountsAndOrderAsked) {
  std::mt19937 random(31);
  for (int trial = 0; trial < 3000; ++trial) {
    int nnodes = 1 + static_cast<int>(random() % 40);
    int per_node = random() % 3 == 0 ? 1 + static_cast<int>(random() % 6) : 0;
    int ntasks = random() % 4 == 0 ? 0 : 1 + static_cast<int>(random() % 120);
    Distribution d = random() % 2 ? Distribution::kCyclic : Distribution::kBlock;
    Result<TaskLayout> layout = TaskLayout::plan(nnodes, ntasks, per_node, d);
    int expected = ntasks > 0 ? ntasks : nnodes * (per_node > 0 ? per_node : 1);
    bool fits = per_node == 0 || (per_node * nnodes >= expected && expected >= nnodes);
    ASSERT_EQ(static_cast<bool>(layout), fits) << nnodes << " " << ntasks << " " << per_node;
    if (!layout) continue;
    ASSERT_EQ(layout->ntasks(), expected);
    std::vector<int> seen(static_cast<size_t>(expected), -1);
    int most = 0, least = expected;
    for (int node = 0; node < nnodes; ++node) {
      std::vector<int> ranks = layout->ranks_on(node);
      most = std::max(most, static_cast<int>(ranks.size()));
      least = std::min(least, static_cast<int>(ranks.size()));
      if (per_node > 0) {
        EXPECT_LE(static_cast<int>(ranks.size()), per_node);
      }
      for (size_t i = 0; i < ranks.size(); ++i) {
        ASSERT_GE(ranks[i], 0);
        ASSERT_LT(ranks[i], expected);
        EXPECT_EQ(seen[static_cast<size_t>(ranks[i])], -1) << "rank placed twice";
        seen[static_cast<size_t>(ranks[i])] = node;
        EXPECT_EQ(layout->node_of(ranks[i]), node);
        if (i > 0 && d == Distribution::kBlock) {
          EXPECT_EQ(ranks[i], ranks[i - 1] + 1);
        }
      }
    }
    for (int r = 0; r < expected; ++r) ASSERT_NE(seen[static_cast<size_t>(r)], -1);
    EXPECT_LE(most - least, 1) << "spread evenly";
    if (d == Distribution::kCyclic) {
      // Dealt in turn: consecutive ranks go to consecutive nodes, wrapping around to the first.
      for (int r = 1; r < expected; ++r) {
        int a = seen[static_cast<size_t>(r - 1)], b = seen[static_cast<size_t>(r)];
        EXPECT_TRUE(b == a + 1 || b == 0) << r << " of " << expected << " on " << nnodes;
      }
    }
    EXPECT_EQ(decode_mapping(layout->pmi_process_mapping(), expected), seen)
        << layout->pmi_process_mapping();
    Result<std::vector<int>> counts = parse_slurm_tasks_per_node(layout->slurm_tasks_per_node());
    ASSERT_TRUE(counts);
    EXPECT_EQ(*counts, layout->counts());
    Result<TaskLayout> again = TaskLayout::from_counts(layout->counts(), d);
    ASSERT_TRUE(again) << again.error().message;
    for (int node = 0; node < nnodes; ++node)
      EXPECT_EQ(again->ranks_on(node), layout->ranks_on(node));
  }
}

TEST(TaskLayoutTest, TheTextsMpiLibrariesRead) {
  TaskLayout four = *TaskLayout::plan(4, 0, 0, Distribution::kBlock);
  EXPECT_EQ(four.pmi_process_mapping(), "(vector,(0,4,1))");
  EXPECT_EQ(four.slurm_tasks_per_node(), "1(x4)");
  TaskLayout two_by_two = *TaskLayout::plan(2, 4, 0, Distribution::kBlock);
  EXPECT_EQ(two_by_two.pmi_process_mapping(), "(vector,(0,2,2))");
  EXPECT_EQ(two_by_two.ranks_on(1), (std::vector<int>{2, 3}));
  TaskLayout uneven = *TaskLayout::plan(3, 8, 0, Distribution::kBlock);
  EXPECT_EQ(uneven.slurm_tasks_per_node(), "3(x2),2");
  EXPECT_EQ(uneven.pmi_process_mapping(), "(vector,(0,2,3),(2,1,2))");
  TaskLayout cyclic = *TaskLayout::plan(2, 4, 0, Distribution::kCyclic);
  EXPECT_EQ(cyclic.ranks_on(0), (std::vector<int>{0, 2}));
  EXPECT_EQ(cyclic.pmi_process_mapping(), "(vector,(0,2,1))");
  EXPECT_EQ(cyclic.describe({"n4", "n5"}), "n4:0,2 n5:1,3");
  // Fewer tasks than nodes: the first nodes take one each (a script on the first node).
  TaskLayout one = *TaskLayout::plan(4, 1, 0, Distribution::kBlock);
  EXPECT_EQ(one.counts(), (std::vector<int>{1, 0, 0, 0}));
  EXPECT_EQ(one.slurm_tasks_per_node(), "1,0(x3)");
  EXPECT_EQ(one.describe({"a", "b", "c", "d"}), "a:0 b:- c:- d:-");
}

TEST(TaskLayoutTest, BadRequestsNameTheField) {
  auto error = [](int nodes, int ntasks, int per_node) {
    Result<TaskLayout> r = TaskLayout::plan(nodes, ntasks, per_node, Distribution::kBlock);
    return r ? std::string() : r.error().message;
  };
  EXPECT_NE(error(0, 4, 0).find("nodes"), std::string::npos);
  EXPECT_NE(error(2, 5, 2).find("do not fit"), std::string::npos);
  EXPECT_NE(error(4, 2, 1).find("empty"), std::string::npos);
  EXPECT_NE(error(2, -1, 0).find("ntasks"), std::string::npos);
  EXPECT_NE(error(1, 5000, 0).find("per node"), std::string::npos);
  EXPECT_FALSE(TaskLayout::from_counts({}, Distribution::kBlock));
  EXPECT_FALSE(TaskLayout::from_counts({0, 0}, Distribution::kBlock));
  EXPECT_FALSE(TaskLayout::from_counts({1, 2}, Distribution::kCyclic));
  for (const char* bad : {"", "2(x", "2(x0)", "a", "1,", ",1", "2(x3)4", "-1"})
    EXPECT_FALSE(parse_slurm_tasks_per_node(bad)) << bad;
}

TEST(TaskLayoutTest, RequestsAsStoredText) {
  TaskRequest r;
  EXPECT_EQ(encode_task_request(r), "");
  EXPECT_EQ(*decode_task_request(""), r);
  r.ntasks = 8;
  r.per_node = 2;
  r.distribution = Distribution::kCyclic;
  r.mpi = "pmix";
  r.label = true;
  EXPECT_EQ(*decode_task_request(encode_task_request(r)), r);
  EXPECT_FALSE(decode_task_request("ntasks=x"));
  EXPECT_FALSE(decode_task_request("color=red"));
  EXPECT_FALSE(decode_task_request("ntasks"));
}

TEST(HostlistNamesTest, CompressedListsReadBackInOrder) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<std::string> names;
    int count = 1 + static_cast<int>(random() % 30);
    for (int i = 0; i < count; ++i) {
      switch (random() % 4) {
        case 0:
          names.push_back("login" + std::string(random() % 2 ? "" : "-a"));
          break;
        case 1:
          names.push_back(numbered("gpu", random() % 20));
          break;
        default:
          names.push_back(numbered("n", random() % 50));
      }
    }
    std::string text = compress_hostlist_names(names);
    Result<std::vector<std::string>> back = expand_hostlist_names(text, 1000);
    ASSERT_TRUE(back) << text << ": " << back.error().message;
    EXPECT_EQ(*back, names) << text;
  }
  EXPECT_EQ(compress_hostlist_names({"n0", "n1", "n2", "n5", "login"}), "n[0-2,5],login");
  EXPECT_EQ(*expand_hostlist_names("n[01-03]", 10),
            (std::vector<std::string>{"n01", "n02", "n03"}));
  for (const char* bad : {"", "n[", "n[1-]", "n[3-1]", "n[]", "a,,b", "n[1,]", "n]"})
    EXPECT_FALSE(expand_hostlist_names(bad, 100)) << bad;
  EXPECT_FALSE(expand_hostlist_names("n[0-99999]", 1000));
}

}  // namespace
}  // namespace trellis
