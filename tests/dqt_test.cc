// The Distributed Queue Tree's round-robin protocol: the thesis's worked example (Fig. 7.2),
// checked slot by slot, and the properties of thesis section 7.1.4 on random trees, for both
// engines (message passing and direct calls); then the two engines against each other under
// random arrivals, finishes, suspends and resumes.
#include "sched/gang/dqt.h"
#include "sched/gang/direct_dqt.h"

#include "sched/gang/reference_round_robin.h"

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>

namespace trellis::gang {
namespace {

// Job ids that name their place: Qi(j) is job i*100 + j, the j-th job queued at node i.
JobId q(int node, int j) {
  return node * 100 + j;
}
std::string label(JobId job) {
  std::string text = "Q";
  text += std::to_string(job / 100);
  text += '(';
  text += std::to_string(job % 100);
  text += ')';
  return text;
}

template <typename Engine>
std::unique_ptr<Engine> tree_with_queues(int processors, int fanout,
                                         const std::vector<int>& lengths, bool fair = false) {
  DqtOptions options;
  options.fanout = fanout;
  options.fair = fair;
  auto dqt = Engine::make("test", processors, options);
  EXPECT_TRUE(dqt);
  for (int node = 0; node < static_cast<int>(lengths.size()); ++node)
    for (int j = 0; j < lengths[node]; ++j) EXPECT_TRUE((*dqt)->submit_at(q(node, j), node));
  return std::move(*dqt);
}

// Which job each processor runs in the slot ("-" for idle).
std::vector<std::string> per_processor(const std::vector<SlotJob>& slot, int processors) {
  std::vector<std::string> pe(processors, "-");
  for (const SlotJob& r : slot)
    for (int p = r.first; p < r.first + r.size; ++p) pe[p] = label(r.job);
  return pe;
}

template <typename Engine>
class DqtEngine : public ::testing::Test {};
using Engines = ::testing::Types<Dqt, DirectDqt>;
TYPED_TEST_SUITE(DqtEngine, Engines);

TYPED_TEST(DqtEngine, ReproducesThesisFigure7_2SlotBySlot) {
  // Binary DQT on 4 PEs, queue lengths L0..L6 = 2,2,1,1,2,3,2 (thesis Fig. 7.2).
  auto dqt = tree_with_queues<TypeParam>(4, 2, {2, 2, 1, 1, 2, 3, 2});
  const std::vector<std::vector<std::string>> expected = {
      {"Q0(0)", "Q0(0)", "Q0(0)", "Q0(0)"},  // 0
      {"Q0(1)", "Q0(1)", "Q0(1)", "Q0(1)"},  // 1
      {"Q1(0)", "Q1(0)", "Q2(0)", "Q2(0)"},  // 2
      {"Q1(1)", "Q1(1)", "Q5(0)", "Q6(0)"},  // 3
      {"Q3(0)", "Q4(0)", "Q5(1)", "Q6(1)"},  // 4
      {"Q3(0)", "Q4(1)", "Q5(2)", "Q6(0)"},  // 5: Q3(0) runs a second time
      {"Q0(0)", "Q0(0)", "Q0(0)", "Q0(0)"},  // 6
      {"Q0(1)", "Q0(1)", "Q0(1)", "Q0(1)"},  // 7
      {"Q1(0)", "Q1(0)", "Q2(0)", "Q2(0)"},  // 8
      {"Q1(1)", "Q1(1)", "Q5(0)", "Q6(1)"},  // 9: node 6 resumes at Q6(1)
      {"Q3(0)", "Q4(0)", "Q5(1)", "Q6(0)"},  // 10
      {"Q3(0)", "Q4(1)", "Q5(2)", "Q6(1)"},  // 11
      {"Q0(0)", "Q0(0)", "Q0(0)", "Q0(0)"},  // 12
  };
  for (int slot = 0; slot < static_cast<int>(expected.size()); ++slot)
    EXPECT_EQ(per_processor(dqt->next_slot(), 4), expected[slot]) << "slot " << slot;
  EXPECT_EQ(dqt->load().max, 6);  // the period is max TQLB
  EXPECT_EQ(dqt->load().min, 5);
}

TYPED_TEST(DqtEngine, EmptyTreeRunsNothingAndSingleJobRunsEverySlot) {
  auto dqt = tree_with_queues<TypeParam>(8, 2, {});
  EXPECT_TRUE(dqt->next_slot().empty());
  ASSERT_TRUE(dqt->submit(1, 3));  // rounded up to a partition of 4
  for (int slot = 0; slot < 5; ++slot) {
    const auto& s = dqt->next_slot();
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].job, 1);
    EXPECT_EQ(s[0].size, 4);
  }
  dqt->finish(1);
  EXPECT_TRUE(dqt->next_slot().empty());
  EXPECT_EQ(dqt->jobs_in_system(), 0);
}

TYPED_TEST(DqtEngine, RejectsImpossibleSizesAndMachines) {
  EXPECT_FALSE(TypeParam::make("x", 12, DqtOptions{}));
  auto dqt = TypeParam::make("x", 16, DqtOptions{});
  ASSERT_TRUE(dqt);
  EXPECT_FALSE((*dqt)->submit(1, 17));
  EXPECT_FALSE((*dqt)->submit(2, 0));
  ASSERT_TRUE((*dqt)->submit(3, 16));
  EXPECT_FALSE((*dqt)->submit(3, 1));  // same id twice
}

// Random queue lengths on a random tree; nodes are kept sparse so that partial trees occur.
std::vector<int> random_lengths(std::mt19937& rng, int nodes, int max_len) {
  std::uniform_int_distribution<int> len(0, max_len);
  std::bernoulli_distribution present(0.5);
  std::vector<int> lengths(nodes, 0);
  for (int& l : lengths)
    if (present(rng)) l = len(rng);
  return lengths;
}

// TQLB of every leaf: the queue lengths on the path to the root.
std::vector<int> leaf_tqlbs(const PartitionTree& tree, const std::vector<int>& lengths) {
  std::vector<int> out;
  for (TreeNodeId leaf = tree.first_at_depth(tree.height()); leaf < tree.node_count(); ++leaf) {
    int sum = 0;
    for (TreeNodeId n = leaf;; n = tree.parent(n)) {
      sum += lengths[n];
      if (n == 0) break;
    }
    out.push_back(sum);
  }
  return out;
}

struct Shape {
  int fanout;
  int processors;
};

TYPED_TEST(DqtEngine, EveryJobRunsWithinMaxTqlbSlotsAndPartitionsNeverOverlap) {
  std::mt19937 rng(5);
  const std::vector<Shape> shapes = {{2, 4}, {2, 8}, {2, 16}, {3, 9}, {4, 16}, {2, 32}};
  for (int trial = 0; trial < 1500; ++trial) {
    Shape shape = shapes[trial % shapes.size()];
    auto tree = PartitionTree::for_processors(shape.processors, shape.fanout);
    ASSERT_TRUE(tree);
    auto lengths = random_lengths(rng, tree->node_count(), 3);
    auto dqt = tree_with_queues<TypeParam>(shape.processors, shape.fanout, lengths, trial % 2 == 1);
    int max_tqlb = dqt->load().max;
    auto tq = leaf_tqlbs(*tree, lengths);
    ASSERT_EQ(max_tqlb, *std::max_element(tq.begin(), tq.end()));
    std::map<JobId, std::vector<int>> runs;
    const int slots = 6 * std::max(max_tqlb, 1) + 5;
    for (int slot = 0; slot < slots; ++slot) {
      const auto& s = dqt->next_slot();
      // No processor is in two active partitions (the active nodes form an antichain).
      const auto& active = dqt->active_nodes();
      for (std::size_t a = 0; a < active.size(); ++a)
        for (std::size_t b = 0; b < active.size(); ++b) {
          if (a == b) continue;
          ASSERT_FALSE(tree->is_ancestor_or_self(active[a], active[b])) << "trial " << trial;
        }
      for (const SlotJob& r : s) runs[r.job].push_back(slot);
    }
    // Every window of max-TQLB consecutive slots runs every job at least once.
    for (int node = 0; node < static_cast<int>(lengths.size()); ++node) {
      for (int j = 0; j < lengths[node]; ++j) {
        const auto& at = runs[q(node, j)];
        ASSERT_FALSE(at.empty()) << "trial " << trial << " " << label(q(node, j)) << " never ran";
        int last = -1;
        for (int t : at) {
          ASSERT_LE(t - last, max_tqlb) << "trial " << trial << " " << label(q(node, j));
          last = t;
        }
        ASSERT_LE(slots - 1 - last, max_tqlb - 1) << "trial " << trial << " " << label(q(node, j));
      }
    }
  }
}

TYPED_TEST(DqtEngine, BalancedTreeKeepsEveryProcessorBusy) {
  std::mt19937 rng(7);
  const std::vector<Shape> shapes = {{2, 8}, {2, 16}, {3, 27}, {4, 16}, {2, 64}};
  for (int trial = 0; trial < 500; ++trial) {
    Shape shape = shapes[trial % shapes.size()];
    auto tree = PartitionTree::for_processors(shape.processors, shape.fanout);
    ASSERT_TRUE(tree);
    // Random internal queues, then leaves topped up so every leaf TQLB is the same.
    auto lengths = random_lengths(rng, tree->node_count(), 2);
    for (TreeNodeId leaf = tree->first_at_depth(tree->height()); leaf < tree->node_count(); ++leaf)
      lengths[leaf] = 0;
    auto tq = leaf_tqlbs(*tree, lengths);
    int target =
        *std::max_element(tq.begin(), tq.end()) + std::uniform_int_distribution<int>(1, 2)(rng);
    TreeNodeId first_leaf = tree->first_at_depth(tree->height());
    for (TreeNodeId leaf = first_leaf; leaf < tree->node_count(); ++leaf)
      lengths[leaf] = target - tq[leaf - first_leaf];
    auto dqt = tree_with_queues<TypeParam>(shape.processors, shape.fanout, lengths);
    ASSERT_EQ(dqt->load().max, dqt->load().min);
    std::map<JobId, int> count;
    for (int slot = 0; slot < 3 * target; ++slot) {
      int busy = 0;
      for (const SlotJob& r : dqt->next_slot()) {
        busy += r.size;
        ++count[r.job];
      }
      ASSERT_EQ(busy, shape.processors) << "trial " << trial << " slot " << slot;
    }
    // Equal opportunity: over whole periods every job runs the same number of times.
    for (const auto& [job, n] : count) ASSERT_EQ(n, 3) << "trial " << trial << " " << label(job);
  }
}

TYPED_TEST(DqtEngine, FairDqtRunsEveryJobExactlyOncePerLap) {
  std::mt19937 rng(11);
  const std::vector<Shape> shapes = {{2, 4}, {2, 16}, {3, 9}, {4, 16}, {2, 32}};
  for (int trial = 0; trial < 1500; ++trial) {
    Shape shape = shapes[trial % shapes.size()];
    auto tree = PartitionTree::for_processors(shape.processors, shape.fanout);
    ASSERT_TRUE(tree);
    auto lengths = random_lengths(rng, tree->node_count(), 3);
    int total = std::accumulate(lengths.begin(), lengths.end(), 0);
    if (total == 0) continue;
    auto dqt = tree_with_queues<TypeParam>(shape.processors, shape.fanout, lengths, /*fair=*/true);
    std::map<long, std::map<JobId, int>> per_lap;
    long first_lap = -1;
    for (int slot = 0; slot < 8 * dqt->load().max + 4; ++slot) {
      const auto& s = dqt->next_slot();
      if (first_lap < 0) first_lap = dqt->laps();
      for (const SlotJob& r : s) ++per_lap[dqt->laps()][r.job];
    }
    long last_lap = dqt->laps();
    // Every complete lap (not the one still running) ran each job exactly once.
    for (const auto& [lap, counts] : per_lap) {
      if (lap == last_lap) continue;
      ASSERT_EQ(static_cast<int>(counts.size()), total) << "trial " << trial << " lap " << lap;
      for (const auto& [job, n] : counts) ASSERT_EQ(n, 1) << "trial " << trial << " " << label(job);
    }
    ASSERT_GE(last_lap - first_lap, 2) << "trial " << trial;
  }
}

TYPED_TEST(DqtEngine, PlainDqtGivesLightBranchesExtraTurnsWhereFairDqtDoesNot) {
  // Left child: three jobs; right leaf side: one job. Plain DQT re-runs the light job while the
  // heavy side is mid-lap; Fair-DQT leaves its processors idle.
  std::vector<int> lengths = {0, 3, 1};
  auto plain = tree_with_queues<TypeParam>(2, 2, lengths);
  auto fair = tree_with_queues<TypeParam>(2, 2, lengths, true);
  std::map<JobId, int> plain_runs;
  std::map<JobId, int> fair_runs;
  for (int slot = 0; slot < 30; ++slot) {
    for (const auto& r : plain->next_slot()) ++plain_runs[r.job];
    for (const auto& r : fair->next_slot()) ++fair_runs[r.job];
  }
  EXPECT_EQ(plain_runs[q(2, 0)], 30);
  EXPECT_EQ(fair_runs[q(2, 0)], 10);
  EXPECT_EQ(plain_runs[q(1, 0)], 10);
  EXPECT_EQ(fair_runs[q(1, 0)], 10);
}

// Each engine against the centralized restatement, slot by slot, on thousands of random trees
// (binary and wider), plain and fair.
TYPED_TEST(DqtEngine, MatchesTheCentralizedReference) {
  std::mt19937 rng(23);
  const std::vector<Shape> shapes = {{2, 4}, {2, 8}, {2, 16}, {2, 64}, {3, 9}, {3, 27}, {4, 16}};
  for (int trial = 0; trial < 3000; ++trial) {
    Shape shape = shapes[trial % shapes.size()];
    bool fair = trial % 3 == 2;
    auto tree = PartitionTree::for_processors(shape.processors, shape.fanout);
    ASSERT_TRUE(tree);
    auto lengths = random_lengths(rng, tree->node_count(), 3);
    auto dqt = tree_with_queues<TypeParam>(shape.processors, shape.fanout, lengths, fair);
    std::vector<std::vector<JobId>> queues(lengths.size());
    for (std::size_t n = 0; n < lengths.size(); ++n)
      for (int j = 0; j < lengths[n]; ++j) queues[n].push_back(q(static_cast<int>(n), j));
    ReferenceRoundRobin reference(*tree, queues, fair);
    for (int slot = 0; slot < 6 * std::max(dqt->load().max, 1) + 3; ++slot) {
      std::vector<SlotJob> got = dqt->next_slot();
      std::sort(got.begin(), got.end(),
                [](const SlotJob& a, const SlotJob& b) { return a.first < b.first; });
      ASSERT_EQ(got, reference.next_slot()) << "trial " << trial << " slot " << slot;
    }
  }
}

std::vector<SlotJob> by_processor(std::vector<SlotJob> slot) {
  std::sort(slot.begin(), slot.end(),
            [](const SlotJob& a, const SlotJob& b) { return a.first < b.first; });
  return slot;
}

// The direct-call engine against the message-passing protocol, slot by slot, while jobs arrive
// (placed by every task allocation policy), finish, are suspended and resume at random: the
// cases where a lazily delivered deactivate or a withdrawn re-activation could go wrong.
TEST(DqtEngines, DirectCallsChooseTheSlotsMessagePassingChooses) {
  std::mt19937 rng(31);
  const std::vector<Shape> shapes = {{2, 8}, {2, 16}, {2, 64}, {3, 27}, {4, 16}, {2, 256}};
  const TaskAllocationPolicy policies[] = {
      TaskAllocationPolicy::kFirstFitApa, TaskAllocationPolicy::kMaxTqlb,
      TaskAllocationPolicy::kMinTqlb, TaskAllocationPolicy::kApa, TaskAllocationPolicy::kFirstFit};
  std::uniform_real_distribution<double> coin(0, 1);
  long compared_jobs = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const Shape shape = shapes[trial % shapes.size()];
    DqtOptions options;
    options.fanout = shape.fanout;
    options.policy = policies[trial % 5];
    options.fair = trial % 3 == 2;
    auto messages = Dqt::make("messages", shape.processors, options);
    auto direct = DirectDqt::make("direct", shape.processors, options);
    ASSERT_TRUE(messages && direct);
    const int height = (*messages)->tree().height();
    // Busier trials queue more jobs per partition.
    const double arrival_rate = 0.3 + 0.3 * (trial % 4);
    JobId next_id = 1;
    std::vector<JobId> suspended;
    for (int step = 0; step < 250; ++step) {
      while (coin(rng) < arrival_rate / (1 + arrival_rate)) {
        // Mostly small jobs, now and then up to the whole machine.
        int size =
            std::max(1, shape.processors >> std::uniform_int_distribution<int>(0, height)(rng));
        size -= std::uniform_int_distribution<int>(0, size / 2)(rng);
        JobId id = next_id++;
        ASSERT_TRUE((*messages)->submit(id, size));
        ASSERT_TRUE((*direct)->submit(id, size));
        ASSERT_EQ((*messages)->node_of(id), (*direct)->node_of(id)) << "trial " << trial;
      }
      auto expected = by_processor((*messages)->next_slot());
      const std::vector<SlotJob> got = by_processor((*direct)->next_slot());
      ASSERT_EQ(got, expected) << "trial " << trial << " step " << step;
      ASSERT_EQ((*direct)->laps(), (*messages)->laps()) << "trial " << trial << " step " << step;
      ASSERT_EQ((*direct)->load().max, (*messages)->load().max);
      ASSERT_EQ((*direct)->load().min, (*messages)->load().min);
      compared_jobs += static_cast<long>(got.size());
      for (const SlotJob& r : got) {
        double u = coin(rng);
        if (u < 0.12) {
          (*messages)->finish(r.job);
          (*direct)->finish(r.job);
        } else if (u < 0.18) {
          ASSERT_TRUE((*messages)->suspend(r.job));
          ASSERT_TRUE((*direct)->suspend(r.job));
          suspended.push_back(r.job);
        }
      }
      for (std::size_t i = 0; i < suspended.size();) {
        double u = coin(rng);
        if (u < 0.3 || u > 0.97) {
          if (u < 0.3) {
            (*messages)->resume(suspended[i]);
            (*direct)->resume(suspended[i]);
          } else {  // removed while suspended
            (*messages)->finish(suspended[i]);
            (*direct)->finish(suspended[i]);
          }
          suspended.erase(suspended.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
          ++i;
        }
      }
      ASSERT_EQ((*direct)->jobs_in_system(), (*messages)->jobs_in_system());
    }
  }
  EXPECT_GT(compared_jobs, 50000);  // the trials did run busy trees
}

}  // namespace
}  // namespace trellis::gang
