// Invariants of every policy and allocator pair over thousands of random small workloads:
//   no node is given to two jobs at once; no job starts before it is submitted; a job runs for
//   min(run time, limit) and is TO exactly when it would have run longer; every job runs;
//   and promises are kept: EASY's head job and every conservative reservation start no later
//   than the reserved time, whatever happens afterwards (early ends, new arrivals).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>

#include "alloc/baseline.h"
#include "alloc/registry.h"
#include "sched/registry.h"
#include "sim/simulator.h"
#include "sim_test_support.h"

namespace trellis {
namespace {

using testing::ConsecutiveAllocator;

std::vector<Job> random_workload(std::mt19937& rng, int nodes) {
  std::uniform_int_distribution<int> count(8, 28), gap(0, 12), limit(1, 40), coin(0, 9);
  std::uniform_int_distribution<int> size(1, nodes);
  std::vector<Job> jobs;
  double t = 0;
  int n = count(rng);
  for (int i = 0; i < n; ++i) {
    t += gap(rng);
    Job job;
    job.id = i + 1;
    job.submit = t;
    job.time_limit = limit(rng);
    // Mostly shorter than the limit (so jobs end early and reservations move), sometimes longer.
    int c = coin(rng);
    job.run_time =
        c < 6   ? std::uniform_int_distribution<int>(0, static_cast<int>(job.time_limit))(rng)
        : c < 8 ? job.time_limit
                : job.time_limit + 5;
    int s = size(rng);
    job.request = Request::count(coin(rng) < 6 ? std::max(1, s / 3) : s);
    jobs.push_back(job);
  }
  return jobs;
}

struct Scenario {
  std::string machine;
  std::string allocator;  // "consecutive" is the test's line allocator
};

// Returns how many promises (reserved jobs) it checked.
size_t check_workload(const Scenario& setup, const std::string& policy_name, uint32_t seed) {
  Machine machine = *Machine::parse(setup.machine);
  std::unique_ptr<Allocator> allocator;
  if (setup.allocator == "consecutive")
    allocator = std::make_unique<ConsecutiveAllocator>(machine);
  else
    allocator = std::move(*AllocatorRegistry::builtin().create(setup.allocator, machine));
  auto policy = PolicyRegistry::builtin().create(policy_name, machine);
  EXPECT_TRUE(policy.ok());
  if (!policy.ok()) return 0;
  std::mt19937 rng(seed);
  std::vector<Job> jobs = random_workload(rng, machine.node_count());

  // Every reservation seen: the earliest promised start per job.
  std::map<JobId, Seconds> promised;
  SimOptions options;
  options.on_pass = [&](const PassResult& s, const BatchCore& core) {
    for (const Reservation& r : core.reservations()) {
      ASSERT_GT(r.start, s.now);
      const Job* reserved = core.find(r.job);  // a reserved job is still queued
      ASSERT_NE(reserved, nullptr);
      ASSERT_EQ(r.nodes.count(), reserved->request.nodes);
      auto [p, inserted] = promised.emplace(r.job, r.start);
      if (!inserted) p->second = std::min(p->second, r.start);
    }
  };
  SimResult result = simulate(machine, *allocator, **policy, jobs, options);
  std::string where =
      setup.machine + " " + setup.allocator + " " + policy_name + " seed " + std::to_string(seed);
  EXPECT_TRUE(result.rejected.empty()) << where;
  EXPECT_EQ(result.jobs.size(), jobs.size()) << where;

  std::map<JobId, const Job*> by_id;
  for (const Job& j : jobs) by_id[j.id] = &j;
  std::vector<NodeSet> nodes;
  for (const JobRecord& r : result.jobs) {
    const Job& job = *by_id.at(r.id);
    EXPECT_GE(r.start, job.submit) << where << " job " << r.id;
    EXPECT_EQ(r.end - r.start, std::min(job.run_time, job.time_limit)) << where;
    EXPECT_EQ(r.timed_out, job.run_time > job.time_limit) << where;
    NodeSet set(machine.node_count());
    for (auto [a, b] : r.runs) set.set_range(a, b + 1);
    EXPECT_EQ(set.count(), job.request.nodes) << where;
    nodes.push_back(set);
    if (auto p = promised.find(r.id); p != promised.end()) {
      EXPECT_LE(r.start, p->second) << where << ": job " << r.id << " was promised " << p->second;
    }
  }
  for (size_t i = 0; i < result.jobs.size(); ++i)
    for (size_t k = i + 1; k < result.jobs.size(); ++k) {
      const JobRecord &a = result.jobs[i], &b = result.jobs[k];
      bool overlap_in_time = a.start < b.end && b.start < a.end;
      if (overlap_in_time) {
        EXPECT_FALSE(nodes[i].intersects(nodes[k]))
            << where << ": jobs " << a.id << " and " << b.id << " share nodes";
      }
    }
  return promised.size();
}

class PolicyInvariants : public ::testing::TestWithParam<std::string> {};

TEST_P(PolicyInvariants, HoldOnRandomWorkloads) {
  const std::vector<Scenario> setups = {{"flat:12", "consecutive"},
                                        {"torus:4x4", "first-available"},
                                        {"fattree:4,4", "random"},
                                        {"torus:16", "contiguous"},
                                        {"fattree:4,4", "fattree-units"}};
  size_t promises = 0;
  for (const Scenario& setup : setups)
    for (uint32_t seed = 1; seed <= 1000; ++seed) {
      promises += check_workload(setup, GetParam(), seed);
      if (::testing::Test::HasFailure()) return;  // one clear failure, not thousands
    }
  // The backfilling policies make promises on these workloads, so the promise check has teeth.
  if (GetParam() == "easy" || GetParam() == "conservative") {
    EXPECT_GT(promises, 1000u);
  }
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, PolicyInvariants,
                         ::testing::Values("fcfs", "easy", "conservative", "scan-up", "scan-down",
                                           "fattree-batch"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// The promise checks above must be able to fail: a policy that breaks its promises is caught.
// This one reserves every waiting job at now + 1 but starts nothing early, so a job that cannot
// start at now + 1 (the machine is full) breaks the promise.
class BrokenPromisePolicy : public QueuePolicy {
 public:
  std::string_view name() const override { return "broken"; }
  Schedule schedule(const SchedulerView& view, const Allocator& allocator) const override {
    Schedule out;
    NodeSet free = view.free;
    for (size_t i = 0; i < view.queue.size(); ++i) {
      if (auto p = allocator.allocate(free, view.queue[i]->request)) {
        free -= p->nodes;
        out.starts.push_back({i, std::move(*p)});
      } else {
        NodeSet some(free.size());
        some.set_range(0, view.queue[i]->request.nodes);
        out.reservations.push_back({view.queue[i]->id, view.now + 1, some});
      }
    }
    return out;
  }
};

TEST(PolicyInvariantsOracle, DetectsABrokenPromise) {
  Machine machine = *Machine::parse("flat:4");
  FirstAvailableAllocator alloc(machine);
  BrokenPromisePolicy policy;
  std::vector<Job> jobs = {testing::make_job(1, 0, 4, 100), testing::make_job(2, 1, 4, 10)};
  std::map<JobId, Seconds> promised;
  SimOptions options;
  options.on_pass = [&](const PassResult&, const BatchCore& core) {
    for (const Reservation& r : core.reservations()) promised.emplace(r.job, r.start);
  };
  SimResult result = simulate(machine, alloc, policy, jobs, options);
  ASSERT_EQ(promised.count(2), 1u);
  const JobRecord& second = result.jobs.back();
  EXPECT_EQ(second.id, 2);
  EXPECT_GT(second.start, promised[2]);  // the check `start <= promised` would flag this
}

}  // namespace
}  // namespace trellis
