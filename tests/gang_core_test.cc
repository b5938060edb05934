// GangCore, the scheduling core of time-sharing policies: what a pass decides (switch out, start,
// resume), its rules for ended/cancel/idle/busy and nodes, and snapshots: a gang simulation whose
// core is replaced at a random slot by a fresh policy and core restored from the old core's
// snapshot (what a restarted controller does) gives exactly the run without the restart.
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "sched/gang/registry.h"
#include "sched/gang_core.h"
#include "sim/gang/gang_simulator.h"
#include "sim/gang/interactive_model.h"
#include "sim/workload/thesis_model.h"
#include "topology/machine.h"

namespace trellis {
namespace {

using gangsim::GangSimConfig;
using gangsim::GangSimResult;

Job job(JobId id, int nodes) {
  Job j;
  j.id = id;
  j.run_time = j.time_limit = 100;
  j.request = Request::count(nodes);
  return j;
}

std::unique_ptr<gang::GangScheduler> policy(const std::string& name, int processors) {
  auto made = gang::GangPolicyRegistry::builtin().create(name, processors);
  EXPECT_TRUE(made) << name;
  return std::move(*made);
}

// Everything a run reports about its jobs and its slots.
void expect_same_run(const GangSimResult& a, const GangSimResult& b, const std::string& what) {
  ASSERT_EQ(a.jobs.size(), b.jobs.size()) << what;
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    const auto &x = a.jobs[i], &y = b.jobs[i];
    ASSERT_TRUE(x.id == y.id && x.start == y.start && x.end == y.end && x.first == y.first &&
                x.partition == y.partition && x.done == y.done && x.fate == y.fate &&
                x.active_spans == y.active_spans)
        << what << ": job " << x.id;
  }
  EXPECT_EQ(a.slots, b.slots) << what;
  EXPECT_EQ(a.duration, b.duration) << what;
  EXPECT_EQ(a.idle_skips, b.idle_skips) << what;
  EXPECT_EQ(a.max_tqlb, b.max_tqlb) << what;
  EXPECT_DOUBLE_EQ(a.utilization, b.utilization) << what;
}

// The DQT study's batch workload on 64 processors at load 0.9, arrivals over 20,000 units.
std::vector<gangsim::SimJob> thesis_batch_jobs(uint64_t seed) {
  workload::ThesisModel model;
  model.processors = 64;
  model.load = 0.9;
  model.arrival_end = 20000;
  model.seed = seed;
  auto jobs = workload::generate_thesis_workload(model);
  EXPECT_TRUE(jobs);
  return jobs ? gangsim::batch_jobs(*jobs) : std::vector<gangsim::SimJob>{};
}

TEST(GangCoreSnapshot, RestoredAtRandomSlotsTheRunIsIdentical) {
  const std::vector<gangsim::SimJob> batch = thesis_batch_jobs(5);
  ASSERT_FALSE(batch.empty());
  gangsim::InteractiveModel interactive;
  interactive.jobs = 4;
  interactive.size = 16;
  interactive.interactions = 30;
  interactive.deadlock_fraction = 0.25;
  auto interactive_jobs = gangsim::generate_interactive_jobs(interactive);
  ASSERT_TRUE(interactive_jobs);

  std::mt19937 rng(7);
  struct Setup {
    const char* policy;
    const std::vector<gangsim::SimJob>* jobs;
    bool idle_detection;
    long slice;
  };
  for (Setup setup :
       {Setup{"dqt-ffapa", &batch, false, 1}, Setup{"fair-dqt-maxtqlb", &batch, false, 3},
        Setup{"slurm-gang", &batch, false, 2}, Setup{"fcfs-bb", &batch, false, 1},
        Setup{"scan-up-bb", &batch, false, 1}, Setup{"dqt-ffapa", &*interactive_jobs, true, 10},
        Setup{"slurm-gang", &*interactive_jobs, true, 10}}) {
    GangSimConfig config;
    config.idle_detection = setup.idle_detection;
    config.slice = setup.slice;
    config.record_activity = true;
    gangsim::GangPolicyFactory make = [&] { return policy(setup.policy, 64); };
    auto whole = gangsim::simulate_gang(*setup.jobs, make, config);
    ASSERT_TRUE(whole) << whole.error().message;
    ASSERT_GT(whole->slots, 100) << setup.policy;
    for (int trial = 0; trial < 4; ++trial) {
      GangSimConfig restarting = config;
      ASSERT_GT(whole->passes, 10) << setup.policy;
      restarting.restart_after_pass = 1 + static_cast<long>(rng() % (whole->passes - 1));
      auto restarted = gangsim::simulate_gang(*setup.jobs, make, restarting);
      ASSERT_TRUE(restarted) << restarted.error().message;
      expect_same_run(*whole, *restarted,
                      std::string(setup.policy) + " restarted after pass " +
                          std::to_string(restarting.restart_after_pass));
    }
  }
}

// A space-sharing policy's slot runs from one event to the next in one pass (repeat_slot). The
// oracle is the same run decided slot by slot: recording the slot trace keeps one pass per slot.
TEST(GangCore, ASlotRunForManySlotsGivesTheSlotBySlotRun) {
  const std::vector<gangsim::SimJob> batch = thesis_batch_jobs(11);
  ASSERT_FALSE(batch.empty());
  for (const char* name : {"fcfs-bb", "scan-up-bb"}) {
    for (long slice : {1L, 3L}) {
      for (long end_time : {-1L, 15000L}) {
        GangSimConfig config;
        config.slice = slice;
        config.end_time = end_time;
        config.record_activity = true;
        config.load_samples = 500;
        GangSimConfig slot_by_slot = config;
        slot_by_slot.trace_slots = std::numeric_limits<int>::max();
        auto fast_policy = policy(name, 64), slow_policy = policy(name, 64);
        auto fast = gangsim::simulate_gang(batch, *fast_policy, config);
        auto slow = gangsim::simulate_gang(batch, *slow_policy, slot_by_slot);
        ASSERT_TRUE(fast && slow);
        const std::string what = std::string(name) + " slice " + std::to_string(slice) + " end " +
                                 std::to_string(end_time);
        expect_same_run(*fast, *slow, what);
        EXPECT_GE(slow->passes, slow->slots) << what;      // and passes with nothing to run
        EXPECT_LT(fast->passes * 2, fast->slots) << what;  // the point of it
        EXPECT_EQ(fast->activity, slow->activity) << what;
        EXPECT_EQ(fast->load_series, slow->load_series) << what;
        EXPECT_DOUBLE_EQ(fast->mean_max_tqlb, slow->mean_max_tqlb) << what;
        EXPECT_DOUBLE_EQ(fast->useful_utilization, slow->useful_utilization) << what;
      }
    }
  }
  // A policy that decides every slot afresh cannot run one for longer.
  auto dqt = policy("dqt-ffapa", 64);
  GangCore core(*dqt, Curve::identity(64), GangCoreOptions{1, 1, false});
  ASSERT_TRUE(core.submit(job(1, 8), 0).ok());
  core.pass(0);
  EXPECT_FALSE(core.repeats_slots());
  EXPECT_THROW(core.repeat_slot(3), std::logic_error);
}

TEST(GangCore, PassesSwitchJobsOutAndInOnTheirPartitions) {
  auto dqt = policy("dqt-ffapa", 4);
  // Processors along a snake over a 2x2 mesh (nodes 0, 1, 3, 2): partitions map through it.
  Machine mesh = *Machine::parse("mesh:2x2");
  auto snake = Curve::make(CurveKind::kSnake, *mesh.torus());
  ASSERT_TRUE(snake);
  ASSERT_EQ(snake->node_at(2), 3);
  GangCore core(*dqt, *snake, {.slice = 10});
  ASSERT_TRUE(core.submit(job(1, 4), 0));
  ASSERT_TRUE(core.submit(job(2, 2), 0));
  PassResult first = core.pass(0);
  ASSERT_EQ(first.decisions.size(), 1u);
  const CoreDecision& started = first.decisions[0];
  EXPECT_EQ(started.kind, CoreDecision::Kind::kStart);
  ASSERT_EQ(core.slot().size(), 1u);
  EXPECT_EQ(started.nodes, core.partition_nodes(core.slot()[0].first, core.slot()[0].size));
  EXPECT_EQ(core.next_wakeup(), 10.0);
  const JobId a = started.job, b = a == 1 ? 2 : 1;

  // The other job's slot: the first is switched out, the second starts.
  PassResult second = core.pass(10);
  ASSERT_EQ(second.decisions.size(), 2u);
  EXPECT_EQ(second.decisions[0].kind, CoreDecision::Kind::kSuspend);
  EXPECT_EQ(second.decisions[0].job, a);
  EXPECT_EQ(second.decisions[1].kind, CoreDecision::Kind::kStart);
  EXPECT_EQ(second.decisions[1].job, b);
  // And back: the first is resumed, not started again.
  PassResult third = core.pass(20);
  ASSERT_EQ(third.decisions.size(), 2u);
  EXPECT_EQ(third.decisions[0].kind, CoreDecision::Kind::kSuspend);
  EXPECT_EQ(third.decisions[1].kind, CoreDecision::Kind::kResume);
  EXPECT_EQ(third.decisions[1].job, a);

  // The job in the slot ends; with the other alone, it runs from then on with no more switches.
  ASSERT_TRUE(core.ended(a, 25));
  EXPECT_FALSE(core.ended(a, 25)) << "a job ends once";
  PassResult fourth = core.pass(30);
  ASSERT_EQ(fourth.decisions.size(), 1u);
  EXPECT_EQ(fourth.decisions[0].kind, CoreDecision::Kind::kResume);
  EXPECT_TRUE(core.pass(40).decisions.empty());
  ASSERT_TRUE(core.ended(b, 45));
  EXPECT_EQ(core.jobs_in_system(), 0);
  EXPECT_FALSE(core.next_wakeup()) << "nothing to switch: no timer";
}

TEST(GangCore, WithdrawnJobsNeverRunAndIdleJobsAreSkipped) {
  auto dqt = policy("dqt-ffapa", 4);
  GangCore core(*dqt, Curve::identity(4));
  ASSERT_TRUE(core.submit(job(1, 4), 0));
  ASSERT_TRUE(core.submit(job(2, 4), 0));
  ASSERT_TRUE(core.submit(job(3, 4), 0));
  ASSERT_TRUE(core.cancel(2, 0));
  EXPECT_FALSE(core.cancel(2, 0)) << "withdrawn once";
  EXPECT_FALSE(core.cancel(9, 0));
  for (Seconds t = 0; t < 6; ++t)
    for (const CoreDecision& d : core.pass(t).decisions) EXPECT_NE(d.job, 2) << "at " << t;
  EXPECT_EQ(core.find(2), nullptr);
  // The job in the slot waits for input: it is skipped until busy(); the other runs alone.
  const JobId running = core.slot().at(0).job, other = running == 1 ? 3 : 1;
  EXPECT_TRUE(core.idle(running, 6));
  EXPECT_FALSE(core.idle(running, 6)) << "already idle";
  for (Seconds t = 6; t < 9; ++t) {
    core.pass(t);
    ASSERT_EQ(core.slot().size(), 1u);
    EXPECT_EQ(core.slot()[0].job, other);
  }
  ASSERT_TRUE(core.busy(running, 9));
  bool ran_again = false;
  for (Seconds t = 9; t < 12; ++t) {
    core.pass(t);
    ran_again |= core.slot().at(0).job == running;
  }
  EXPECT_TRUE(ran_again);
}

TEST(GangCore, RefusesWhatItCannotDo) {
  auto dqt = policy("dqt-ffapa", 4);
  GangCore core(*dqt, Curve::identity(4));
  auto too_big = core.submit(job(1, 5), 0);
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error().code, Error::Code::kNeverFits);
  EXPECT_FALSE(core.submit(job(1, 0), 0));
  ASSERT_TRUE(core.submit(job(1, 2), 0));
  EXPECT_FALSE(core.submit(job(1, 2), 0)) << "an id in the system";
  EXPECT_FALSE(core.ended(1, 0)) << "it has not run";
  auto down = core.node_down(2, 0);
  ASSERT_FALSE(down);
  EXPECT_EQ(down.error().code, Error::Code::kUnavailable);
  EXPECT_TRUE(core.node_up(2, 0));
  EXPECT_FALSE(core.node_up(4, 0));
  EXPECT_THROW(GangCore(*dqt, Curve::identity(8)), std::invalid_argument);
}

TEST(GangCore, RefusesSnapshotsThatDoNotReplay) {
  auto make_core = [](gang::GangScheduler& p) { return GangCore(p, Curve::identity(8)); };
  auto dqt = policy("dqt-ffapa", 8);
  GangCore core = make_core(*dqt);
  ASSERT_TRUE(core.submit(job(1, 4), 0));
  ASSERT_TRUE(core.submit(job(2, 8), 0));
  core.pass(0);
  core.pass(1);
  const CoreSnapshot good = core.snapshot();
  {
    auto fresh = policy("dqt-ffapa", 8);
    GangCore restored = make_core(*fresh);
    ASSERT_TRUE(restored.restore(good));
    EXPECT_EQ(restored.snapshot().policy_calls, good.policy_calls);
    EXPECT_FALSE(restored.restore(good)) << "only a fresh core restores";
  }
  auto refused = [&](CoreSnapshot s, const std::string& why) {
    auto fresh = policy("dqt-ffapa", 8);
    GangCore restored = make_core(*fresh);
    EXPECT_FALSE(restored.restore(s)) << why;
  };
  CoreSnapshot s = good;
  s.policy_calls.push_back({PolicyCall::Kind::kFinish, 7, 0});
  refused(s, "finishes a job it never had");
  s = good;
  s.policy_calls.push_back({PolicyCall::Kind::kResume, 1, 0});
  refused(s, "resumes a job that is not suspended");
  s = good;
  s.policy_calls.insert(s.policy_calls.begin(), {PolicyCall::Kind::kSubmit, 1, 4});
  refused(s, "submits a job twice");
  s = good;
  s.queue.push_back(job(3, 1));
  refused(s, "a job that is not in the calls");
  s = good;
  ASSERT_FALSE(s.running.empty());
  s.running[0].nodes = NodeSet::all(8) - s.running[0].nodes;
  refused(s, "nodes that are not the job's partition");
  s = good;
  s.idle.push_back(1);
  refused(s, "an idle job the calls never suspended");
}

}  // namespace
}  // namespace trellis
