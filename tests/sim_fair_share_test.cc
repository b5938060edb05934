// The simulator with a priority order (sched/priority_order.h, sim/user_accounts.h,
// sim/user_fairness.h): fair-share lets a light user's job pass a heavy user's queue, usage that
// has decayed no longer counts, a trace's groups become accounts with the shares of a file (a bad
// one refused with its line), Jain's index, and the fair-start unfairness, which is zero for FCFS
// in arrival order by its definition and not for EASY's backfilling.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "sched/priority_order.h"
#include "sched/registry.h"
#include "sim/simulator.h"
#include "sim/user_accounts.h"
#include "sim/user_fairness.h"
#include "sim_test_support.h"

namespace trellis {
namespace {

using testing::ConsecutiveAllocator;
using testing::make_job;

Job job_of(JobId id, Seconds submit, int nodes, Seconds run, int user, int group) {
  Job job = make_job(id, submit, nodes, run);
  job.user = user;
  job.group = group;
  return job;
}

Seconds start_of(const SimResult& result, JobId id) {
  for (const JobRecord& r : result.jobs)
    if (r.id == id) return r.start;
  return -1;
}

// On one node: user 1 queues ten 100 s jobs at time 0, user 2 one at time 1. In arrival order
// user 2 waits for all ten; with fair-share it runs as soon as the first ends, since user 1 has
// used the machine and user 2 has not.
TEST(SimFairShareTest, ALightUsersJobPassesAHeavyUsersQueue) {
  Machine machine = *Machine::parse("flat:1");
  ConsecutiveAllocator allocator(machine);
  auto policy = PolicyRegistry::builtin().create("fcfs", machine);
  ASSERT_TRUE(policy);
  std::vector<Job> jobs;
  for (int i = 1; i <= 10; ++i) jobs.push_back(job_of(i, 0, 1, 100, 1, 1));
  jobs.push_back(job_of(11, 1, 1, 100, 2, 2));
  SimResult fifo = simulate(machine, allocator, **policy, jobs);
  EXPECT_EQ(start_of(fifo, 11), 1000);
  Result<SimAccounts> accounts = sim_accounts(jobs, SimAccountsFrom::kGroup, "");
  ASSERT_TRUE(accounts) << accounts.error().message;
  accounts->assign(jobs);
  PriorityOrder order(accounts->tree, 1);
  SimOptions options;
  options.order = &order;
  SimResult fair = simulate(machine, allocator, **policy, jobs, options);
  EXPECT_EQ(start_of(fair, 11), 100);
  // Every other job in its arrival order after it: user 1's own jobs keep their order.
  for (JobId id = 2; id <= 10; ++id) EXPECT_LT(start_of(fair, id - 1), start_of(fair, id));
  // The tree charged user 1 for its ten node-hundred-seconds (decayed, so a little less).
  const double used =
      order.tree().nodes()[static_cast<size_t>(accounts->user_index.at({1, 1}))].usage;
  EXPECT_GT(used, 900);
  EXPECT_LE(used, 1000);
}

// With a half-life of 10 s, user 1's usage of long ago has all but vanished when user 2 and user 1
// queue again, so age decides (user 1's job came first); with no decay user 2 goes first.
TEST(SimFairShareTest, UsageThatHasDecayedNoLongerCounts) {
  Machine machine = *Machine::parse("flat:1");
  ConsecutiveAllocator allocator(machine);
  auto policy = PolicyRegistry::builtin().create("fcfs", machine);
  std::vector<Job> jobs = {job_of(1, 0, 1, 1000, 1, 1), job_of(2, 100000, 1, 100, 9, 9),
                           job_of(3, 100010, 1, 100, 1, 1), job_of(4, 100020, 1, 100, 2, 2)};
  Result<SimAccounts> accounts = sim_accounts(jobs, SimAccountsFrom::kGroup, "");
  ASSERT_TRUE(accounts);
  accounts->assign(jobs);
  for (const auto& [half_life, first] : std::vector<std::pair<double, JobId>>{{10, 3}, {0, 4}}) {
    // User 9's job holds the node while 3 and 4 queue; its own usage is the same for both.
    PriorityWeights weights;
    weights.half_life = half_life;
    PriorityOrder order(accounts->tree, 1, weights);
    SimOptions options;
    options.order = &order;
    SimResult result = simulate(machine, allocator, **policy, jobs, options);
    const JobId second = first == 3 ? 4 : 3;
    EXPECT_LT(start_of(result, first), start_of(result, second)) << "half-life " << half_life;
  }
}

TEST(SimFairShareTest, GroupsAreAccountsWithTheSharesOfTheFile) {
  std::vector<Job> jobs = {job_of(1, 0, 1, 10, 7, 12), job_of(2, 0, 1, 10, 8, 12),
                           job_of(3, 0, 1, 10, 9, 13), job_of(4, 0, 1, 10, 7, 13)};
  const std::string file = ::testing::TempDir() + "/shares.txt";
  auto write = [&](const std::string& text) { std::ofstream(file) << text; };
  write("# site shares\ng12 40\ng13 60  # the rest\nu8 3\n");
  Result<SimAccounts> accounts = sim_accounts(jobs, SimAccountsFrom::kGroup, file);
  ASSERT_TRUE(accounts) << accounts.error().message;
  const ShareTree& tree = accounts->tree;
  ASSERT_EQ(tree.user_count(), 4);  // u7 in g12 and in g13, u8, u9
  const int g12 = tree.find_account("g12");
  ASSERT_GT(g12, 0);
  EXPECT_EQ(tree.nodes()[static_cast<size_t>(g12)].shares, 40);
  EXPECT_EQ(tree.nodes()[static_cast<size_t>(tree.find_user(g12, "u8"))].shares, 3);
  EXPECT_EQ(accounts->node_of(jobs[3]), tree.find_user(tree.find_account("g13"), "u7"));
  accounts->assign(jobs);
  EXPECT_EQ(jobs[3].association, accounts->node_of(jobs[3]));
  Result<SimAccounts> by_user = sim_accounts(jobs, SimAccountsFrom::kUser, "");
  ASSERT_TRUE(by_user);
  EXPECT_GT(by_user->tree.find_account("u9"), 0);
  EXPECT_EQ(by_user->tree.find_account("g12"), -1);
  for (const auto& [text, says] : std::vector<std::pair<std::string, std::string>>{
           {"g12\n", "shares.txt:1: expected NAME SHARES"},
           {"g12 -1\n", "shares.txt:1: shares '-1' is not a number from 0 to 10^9"},
           {"\ng12 1e12\n", "shares.txt:2: shares '1e12'"},
           {"g12 ten\n", "shares 'ten'"},
           {"x12 1\n", "'x12' is not a user (u7) or a group (g12)"},
           {"g99 1\n", "'g99' is no user or group of the trace"}}) {
    write(text);
    Result<SimAccounts> bad = sim_accounts(jobs, SimAccountsFrom::kGroup, file);
    ASSERT_FALSE(bad) << text;
    EXPECT_NE(bad.error().message.find(says), std::string::npos) << bad.error().message;
  }
  EXPECT_FALSE(sim_accounts(jobs, SimAccountsFrom::kGroup, file + ".missing"));
}

TEST(SimFairShareTest, JainsIndexIsOneForEqualsAndOneOverNForOneTakingAll) {
  EXPECT_DOUBLE_EQ(jain_index({3, 3, 3}), 1);
  EXPECT_DOUBLE_EQ(jain_index({5, 0, 0, 0}), 0.25);
  EXPECT_DOUBLE_EQ(jain_index({1, 3}), 16.0 / 20);
  EXPECT_DOUBLE_EQ(jain_index({}), 1);
}

// Sabin et al.'s fair start: a job started later than it would have with no later arrivals was
// treated unfairly. FCFS in arrival order never lets a later job delay an earlier one, so none
// is; EASY backfills later jobs ahead, and on a busy random workload some are.
TEST(SimFairShareTest, FairStartUnfairnessIsZeroForFcfsAndNotForEasy) {
  Machine machine = *Machine::parse("flat:16");
  ConsecutiveAllocator allocator(machine);
  std::mt19937 random(7);
  std::vector<Job> jobs;
  for (int i = 1; i <= 120; ++i) {
    const Seconds run = 10 + static_cast<Seconds>(random() % 500);
    jobs.push_back(job_of(i, i * 20, 1 + static_cast<int>(random() % 16), run,
                          static_cast<int>(random() % 5), 1));
    jobs.back().time_limit = run * 2;  // estimates as loose as real users give
  }
  for (const auto& [name, zero] :
       std::vector<std::pair<std::string, bool>>{{"fcfs", true}, {"easy", false}}) {
    auto policy = PolicyRegistry::builtin().create(name, machine);
    ASSERT_TRUE(policy);
    SimResult result = simulate(machine, allocator, **policy, jobs);
    FairStartFigures figures =
        fair_start_unfairness(machine, allocator, **policy, jobs, {}, result, nullptr, 0);
    EXPECT_EQ(figures.jobs_measured, 120) << name;
    if (zero) {
      EXPECT_EQ(figures.unfair_fraction, 0) << name;
      EXPECT_EQ(figures.mean_unfair_delay, 0) << name;
    } else {
      EXPECT_GT(figures.unfair_fraction, 0) << name;
    }
    UserFairness users = user_fairness(result, 10);
    EXPECT_EQ(users.users.size(), 5u);
    int total = 0;
    for (const UserFigures& u : users.users) total += u.jobs;
    EXPECT_EQ(total, 120);
  }
}

}  // namespace
}  // namespace trellis
