// The scheduling core can be snapshotted and restored: a simulation whose core is replaced, at a
// random pass, by a fresh core restored from the old one's snapshot (what a restarted controller
// does) gives exactly the schedule of the uninterrupted run. Also the core's own rules: nodes
// down and up, cancel, and snapshots it must refuse.
#include <gtest/gtest.h>

#include <random>

#include "alloc/registry.h"
#include "build_paths.h"
#include "sched/batch_core.h"
#include "sched/registry.h"
#include "sim/simulator.h"
#include "sim/workload.h"
#include "sim_test_support.h"
#include "test_machines.h"

namespace trellis {
namespace {

struct Scheduled {
  JobId id;
  Seconds start, end;
  std::vector<std::pair<NodeId, NodeId>> runs;
  friend bool operator==(const Scheduled&, const Scheduled&) = default;
};

std::vector<Scheduled> schedule_of(const SimResult& r) {
  std::vector<Scheduled> out;
  for (const JobRecord& j : r.jobs) out.push_back({j.id, j.start, j.end, j.runs});
  return out;
}

TEST(CoreSnapshot, RestoredAtRandomPassesTheScheduleIsIdentical) {
  auto workload = load_workload(TRELLIS_SOURCE_DIR + "/data/workloads/lublin_256.swf");
  ASSERT_TRUE(workload);
  workload->jobs.resize(1500);
  std::mt19937 rng(11);
  struct Setup {
    const char *machine, *allocator, *policy;
  };
  for (Setup setup : {Setup{"torus:16x16", "contiguous", "conservative"},
                      Setup{"torus:16x16", "linear-bestfit-hilbert", "easy"},
                      Setup{"torus:16x16", "mc1x1", "scan-up"},
                      Setup{"fattree:4,4,16", "fattree-units", "fattree-batch"}}) {
    Machine machine = trellis::machine(setup.machine);
    auto allocator = AllocatorRegistry::builtin().create(setup.allocator, machine, {});
    auto policy = PolicyRegistry::builtin().create(setup.policy, machine, {});
    ASSERT_TRUE(allocator && policy) << setup.allocator << " " << setup.policy;
    SimResult whole = simulate(machine, **allocator, **policy, workload->jobs);
    ASSERT_GT(whole.passes, 100);
    for (int trial = 0; trial < 6; ++trial) {
      SimOptions options;
      options.restart_after_pass = 1 + static_cast<long>(rng() % (whole.passes - 1));
      SimResult restarted = simulate(machine, **allocator, **policy, workload->jobs, options);
      ASSERT_EQ(schedule_of(restarted), schedule_of(whole))
          << setup.policy << " restarted after pass " << options.restart_after_pass;
      EXPECT_EQ(restarted.rejected.size(), whole.rejected.size());
    }
  }
}

Job job(JobId id, int nodes, Seconds limit = 100) {
  Job j;
  j.id = id;
  j.run_time = j.time_limit = limit;
  j.request = Request::count(nodes);
  return j;
}

TEST(BatchCore, DownNodesAreNotGivenAndComeBackWhenFree) {
  Machine machine = trellis::machine("flat:4");
  auto allocator = AllocatorRegistry::builtin().create("first-available", machine, {});
  auto policy = PolicyRegistry::builtin().create("fcfs", machine, {});
  BatchCore core(machine, **allocator, **policy);
  ASSERT_TRUE(core.submit(job(1, 2), 0));
  PassResult first = core.pass(0);
  ASSERT_EQ(first.decisions.size(), 1u);
  EXPECT_EQ(first.decisions[0].job, 1);
  NodeSet held = first.decisions[0].nodes;
  // A node of the running job goes down: it stays with the job and does not come back free.
  NodeId busy = held.next(0);
  ASSERT_TRUE(core.node_down(busy, 1));
  ASSERT_TRUE(core.node_down(3, 1));
  ASSERT_TRUE(core.submit(job(2, 2), 1));
  EXPECT_TRUE(core.pass(1).decisions.empty());  // only one node is up and free
  ASSERT_TRUE(core.ended(1, 5));
  EXPECT_EQ(core.free().count(), 2);
  EXPECT_FALSE(core.free().test(busy));
  PassResult second = core.pass(5);
  ASSERT_EQ(second.decisions.size(), 1u);
  EXPECT_FALSE(second.decisions[0].nodes.test(busy));
  EXPECT_FALSE(second.decisions[0].nodes.test(3));
  ASSERT_TRUE(core.node_up(busy, 6));
  EXPECT_TRUE(core.free().test(busy));
  EXPECT_FALSE(core.node_down(9, 6));
}

TEST(BatchCore, CancelWithdrawsQueuedJobsAndFreesRunningOnes) {
  Machine machine = trellis::machine("flat:4");
  auto allocator = AllocatorRegistry::builtin().create("first-available", machine, {});
  auto policy = PolicyRegistry::builtin().create("easy", machine, {});
  BatchCore core(machine, **allocator, **policy);
  ASSERT_TRUE(core.submit(job(1, 4), 0));
  ASSERT_TRUE(core.submit(job(2, 4), 0));
  EXPECT_EQ(core.pass(0).decisions.size(), 1u);
  EXPECT_EQ(core.next_wakeup(), 100);  // job 2 is promised job 1's nodes at its limit
  ASSERT_TRUE(core.cancel(2, 1));
  EXPECT_TRUE(core.queue().empty());
  EXPECT_FALSE(core.next_wakeup());
  ASSERT_TRUE(core.cancel(1, 2));
  EXPECT_EQ(core.free().count(), 4);
  EXPECT_FALSE(core.cancel(1, 3));
  EXPECT_FALSE(core.submit(job(3, 5), 3));  // larger than the machine
  ASSERT_TRUE(core.submit(job(4, 1), 3));
  EXPECT_FALSE(core.submit(job(4, 1), 3));  // the same id twice
}

TEST(BatchCore, RefusesSnapshotsThatDoNotFit) {
  Machine machine = trellis::machine("flat:4");
  auto allocator = AllocatorRegistry::builtin().create("first-available", machine, {});
  auto policy = PolicyRegistry::builtin().create("fcfs", machine, {});
  BatchCore core(machine, **allocator, **policy);
  ASSERT_TRUE(core.submit(job(1, 2), 0));
  ASSERT_TRUE(core.submit(job(2, 2), 0));
  core.pass(0);
  CoreSnapshot good = core.snapshot();
  ASSERT_EQ(good.running.size(), 2u);
  CoreSnapshot twice = good;
  twice.running[1].nodes = twice.running[0].nodes;  // one node given to two jobs
  BatchCore other(machine, **allocator, **policy);
  EXPECT_FALSE(other.restore(twice));
  CoreSnapshot wrong_machine = good;
  wrong_machine.down = NodeSet(8);
  EXPECT_FALSE(other.restore(wrong_machine));
  ASSERT_TRUE(other.restore(good));
  EXPECT_EQ(other.free().count(), 0);
  ASSERT_TRUE(other.ended(2, 10));
  EXPECT_EQ(other.free().count(), 2);
}

// Concurrent allocators: a job another allocator started holds its nodes here, and is
// promised around; a start the store refused returns the job to its place in the queue.
TEST(BatchCore, AJobStartedElsewhereHoldsItsNodesAndARefusedStartWaitsAtItsPlace) {
  Machine machine = trellis::machine("flat:4");
  auto allocator = AllocatorRegistry::builtin().create("first-available", machine, {});
  auto policy = PolicyRegistry::builtin().create("fcfs", machine, {});
  BatchCore core(machine, **allocator, **policy);
  RunningJob elsewhere{7, 0, 50, NodeSet::of(4, {0, 1}), 0, {}};
  ASSERT_TRUE(core.add_running(job(7, 2), elsewhere));
  EXPECT_EQ(core.free().count(), 2);
  EXPECT_FALSE(core.free().test(0));
  EXPECT_FALSE(core.add_running(job(7, 2), elsewhere));  // the same id twice
  RunningJob overlapping{8, 0, 50, NodeSet::of(4, {1, 2}), 0, {}};
  EXPECT_FALSE(core.add_running(job(8, 2), overlapping));  // node 1 is held
  EXPECT_EQ(core.free().count(), 2);
  // Three jobs queue; 1 starts on the two free nodes, 2 and 3 wait behind it.
  Job first = job(1, 2), second = job(2, 2), third = job(3, 1);
  first.submit = 1;
  second.submit = 2;
  third.submit = 3;
  for (const Job& j : {first, second, third}) ASSERT_TRUE(core.submit(j, 3));
  PassResult pass = core.pass(3);
  ASSERT_EQ(pass.decisions.size(), 1u);
  EXPECT_EQ(pass.decisions[0].job, 1);
  EXPECT_FALSE(pass.decisions[0].nodes.test(0));
  // Its start was refused: it waits again ahead of 2 and 3, and its nodes are free.
  ASSERT_TRUE(core.unstart(1));
  EXPECT_FALSE(core.unstart(1));  // not running any more
  ASSERT_EQ(core.queue().size(), 3u);
  EXPECT_EQ(core.queue()[0]->id, 1);
  EXPECT_EQ(core.queue()[1]->id, 2);
  EXPECT_EQ(core.free().count(), 2);
  // The other allocator's job ends: 1 and 2 start, in order, on all four nodes.
  ASSERT_TRUE(core.ended(7, 4));
  PassResult again = core.pass(4);
  ASSERT_EQ(again.decisions.size(), 2u);
  EXPECT_EQ(again.decisions[0].job, 1);
  EXPECT_EQ(again.decisions[1].job, 2);
}

}  // namespace
}  // namespace trellis
