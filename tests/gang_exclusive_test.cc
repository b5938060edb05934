// GangCore with exclusive jobs (GangCoreOptions::exclusive_jobs, as a controller runs it): a job
// that may not share keeps whole nodes. Checked on random workloads under every kind of gang
// policy against the rules themselves, pass by pass: no started job ever overlaps a started
// exclusive job, which runs in every slot and is never switched out; every job ends (nobody waits
// for ever); and a core restored from a snapshot at a random pass decides exactly as the original.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <sstream>

#include "sched/gang/registry.h"
#include "sched/gang_core.h"

namespace trellis {
namespace {

constexpr int kProcessors = 8;

Job job(JobId id, int nodes, bool share) {
  Job j;
  j.id = id;
  j.run_time = j.time_limit = 1000;
  j.request = Request::count(nodes);
  j.share = share;
  return j;
}

// A policy and its core, as a controller holds them.
struct Driven {
  explicit Driven(const std::string& name) {
    auto made = gang::GangPolicyRegistry::builtin().create(name, kProcessors);
    EXPECT_TRUE(made) << name;
    policy = std::move(*made);
    core = std::make_unique<GangCore>(*policy, Curve::identity(kProcessors),
                                      GangCoreOptions{.slice = 1, .exclusive_jobs = true});
  }
  // A pass at `t`; the jobs it starts join `started`.
  void pass(Seconds t) {
    for (const CoreDecision& d : core->pass(t).decisions)
      if (d.kind == CoreDecision::Kind::kStart) started.insert(d.job);
  }
  // `job` ends at `t`, then the pass at `t`.
  void end_then_pass(JobId job, Seconds t) {
    EXPECT_TRUE(core->ended(job, t)) << "job " << job;
    pass(t);
  }
  std::unique_ptr<gang::GangScheduler> policy;
  std::unique_ptr<GangCore> core;
  std::set<JobId> started;
};

struct Arrival {
  Job job;
  Seconds at = 0;
  int length = 0;  // slots it runs before it ends
};

std::vector<Arrival> workload(uint64_t seed) {
  std::mt19937_64 random(seed);
  const int sizes[] = {1, 2, 3, 4, 5, 8};
  std::vector<Arrival> jobs;
  for (JobId id = 1; id <= 40; ++id) {
    Arrival a;
    a.job = job(id, sizes[random() % 6], random() % 100 >= 35);
    a.at = static_cast<Seconds>(random() % 60);
    a.length = 1 + static_cast<int>(random() % 12);
    jobs.push_back(a);
  }
  return jobs;
}

bool overlap(std::pair<int, int> a, std::pair<int, int> b) {
  return a.first < b.first + b.second && b.first < a.first + a.second;
}

// Runs `jobs` pass by pass (one a second), checking the rules after every pass; restarts the core
// from its snapshot at pass `restart_at` (-1: never). Returns every decision and slot, as text.
std::string run(const std::string& policy, const std::vector<Arrival>& jobs, int restart_at) {
  Driven driven(policy);
  std::map<JobId, const Arrival*> by_id;
  for (const Arrival& a : jobs) by_id[a.job.id] = &a;
  std::map<JobId, int> ran;  // slots run, for started jobs not ended
  std::set<JobId> ended;
  std::ostringstream log;
  for (int t = 0; ended.size() < jobs.size(); ++t) {
    if (t > 4000) {
      ADD_FAILURE() << policy << ": " << jobs.size() - ended.size() << " jobs never end";
      break;
    }
    if (t == restart_at) {
      CoreSnapshot snapshot = driven.core->snapshot();
      Driven fresh(policy);
      Status restored = fresh.core->restore(snapshot);
      EXPECT_TRUE(restored) << policy << " at " << t << ": " << restored.error().message;
      driven = std::move(fresh);
    }
    GangCore& core = *driven.core;
    for (auto& [id, slots] : ran) {
      if (slots >= by_id[id]->length && !ended.contains(id)) {
        EXPECT_TRUE(core.ended(id, t)) << policy << ": job " << id;
        ended.insert(id);
      }
    }
    for (const Arrival& a : jobs)
      if (a.at == t) {
        EXPECT_TRUE(core.submit(a.job, t)) << policy << ": job " << a.job.id;
      }
    std::set<JobId> previous;
    for (const gang::SlotJob& r : core.slot()) previous.insert(r.job);
    const PassResult& pass = core.pass(t);
    for (const CoreDecision& d : pass.decisions) {
      const bool exclusive = !by_id[d.job]->job.share;
      log << t << " " << static_cast<int>(d.kind) << " " << d.job << "\n";
      switch (d.kind) {
        case CoreDecision::Kind::kStart:
          EXPECT_FALSE(ran.contains(d.job)) << policy << ": job " << d.job << " starts twice";
          ran[d.job] = 0;
          break;
        case CoreDecision::Kind::kSuspend:
          EXPECT_FALSE(exclusive) << policy << " at " << t << ": exclusive job " << d.job
                                  << " switched out";
          EXPECT_TRUE(previous.contains(d.job));
          break;
        case CoreDecision::Kind::kResume:
          EXPECT_TRUE(ran.contains(d.job) && !previous.contains(d.job));
          break;
        case CoreDecision::Kind::kKill:
          ADD_FAILURE() << "a gang core kills nothing";
          break;
      }
    }
    // The slot that runs: started jobs on disjoint partitions, every started exclusive job in it.
    std::set<JobId> in_slot;
    for (const gang::SlotJob& r : core.slot()) {
      EXPECT_TRUE(ran.contains(r.job)) << policy << " at " << t << ": job " << r.job;
      in_slot.insert(r.job);
      ++ran[r.job];
      log << t << " slot " << r.job << "\n";
    }
    for (const auto& [id, slots] : ran) {
      if (ended.contains(id)) continue;
      auto mine = core.partition_of(id);
      if (!mine) {
        ADD_FAILURE() << policy << ": started job " << id << " has no partition";
        continue;
      }
      if (by_id[id]->job.share) continue;
      EXPECT_TRUE(in_slot.contains(id))
          << policy << " at " << t << ": exclusive job " << id << " left out of a slot";
      // No other started job, in this slot or any, on an exclusive job's nodes.
      for (const auto& [other, other_slots] : ran)
        if (other != id && !ended.contains(other)) {
          EXPECT_FALSE(overlap(*mine, core.partition_of(other).value_or(std::pair{-1, 0})))
              << policy << " at " << t << ": job " << other << " on exclusive job " << id
              << "'s nodes";
        }
    }
    for (const gang::SlotJob& a : core.slot())
      for (const gang::SlotJob& b : core.slot())
        if (a.job < b.job) {
          EXPECT_FALSE(overlap({a.first, a.size}, {b.first, b.size}))
              << policy << " at " << t << ": jobs " << a.job << " and " << b.job;
        }
  }
  return log.str();
}

TEST(GangExclusive, ExclusiveJobsKeepWholeNodesUnderEveryPolicyAndEveryJobEnds) {
  for (const std::string policy :
       {"dqt-ffapa", "dqt-maxtqlb", "fair-dqt-apa", "slurm-gang", "fcfs-bb", "scan-up-bb"}) {
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      SCOPED_TRACE(policy + " seed " + std::to_string(seed));
      std::vector<Arrival> jobs = workload(seed);
      const std::string straight = run(policy, jobs, -1);
      // A restarted controller's core: restored at a pass where exclusive jobs wait and run.
      const int restart_at = 10 + static_cast<int>(seed * 7);
      EXPECT_EQ(run(policy, jobs, restart_at), straight) << "restored at " << restart_at;
    }
  }
}

TEST(GangExclusive, AnExclusiveJobWaitsForTheJobsOnItsNodesAndKeepsLaterOnesOff) {
  Driven driven("dqt-ffapa");
  GangCore& core = *driven.core;
  const int n = kProcessors;
  ASSERT_TRUE(core.submit(job(1, n, true), 0));
  ASSERT_TRUE(core.submit(job(2, n, false), 0));
  ASSERT_TRUE(core.submit(job(3, n, true), 0));
  auto pass = [&](Seconds t) { driven.pass(t); };
  const std::set<JobId>& started = driven.started;
  for (Seconds t = 0; t < 6; ++t) pass(t);
  // Job 1 ran first; the policy then placed job 2, which waits for job 1, and job 3 waits too
  // (it would be on job 2's nodes): job 1 runs alone.
  EXPECT_EQ(started, std::set<JobId>{1});
  EXPECT_FALSE(core.idle(2, 6)) << "not started";
  EXPECT_EQ(core.why_waiting(2), GangCore::Wait::kForExclusiveNodes);
  EXPECT_EQ(core.why_waiting(3), GangCore::Wait::kForExclusiveNodes);
  driven.end_then_pass(1, 6);
  EXPECT_EQ(started, (std::set<JobId>{1, 2}));
  // From then on job 2 runs in every slot; job 3 does not start; job 2 keeps its slots even when
  // it waits for input (it keeps its nodes, as on a queue policy).
  EXPECT_FALSE(core.idle(2, 6));
  for (Seconds t = 7; t < 12; ++t) {
    pass(t);
    ASSERT_EQ(core.slot().size(), 1u);
    EXPECT_EQ(core.slot()[0].job, 2);
  }
  EXPECT_EQ(started, (std::set<JobId>{1, 2}));
  driven.end_then_pass(2, 12);
  EXPECT_EQ(started, (std::set<JobId>{1, 2, 3}));
}

TEST(GangExclusive, ExclusiveJobsStartInTheOrderThePolicyPlacedThem) {
  Driven driven("dqt-ffapa");
  GangCore& core = *driven.core;
  auto pass = [&](Seconds t) { driven.pass(t); };
  const std::set<JobId>& started = driven.started;
  // Job 2 takes the whole machine and waits for job 1 (half of it).
  ASSERT_TRUE(core.submit(job(1, kProcessors / 2, true), 0));
  pass(0);
  ASSERT_TRUE(core.submit(job(2, kProcessors, false), 1));
  for (Seconds t = 1; t < 4; ++t) pass(t);
  // Job 3 would fit beside job 1, but job 2 is before it in line.
  ASSERT_TRUE(core.submit(job(3, kProcessors / 2, false), 4));
  for (Seconds t = 4; t < 10; ++t) pass(t);
  EXPECT_EQ(started, std::set<JobId>{1});
  driven.end_then_pass(1, 10);
  EXPECT_EQ(started, (std::set<JobId>{1, 2}));
  driven.end_then_pass(2, 11);
  EXPECT_EQ(started, (std::set<JobId>{1, 2, 3}));
}

TEST(GangExclusive, AWithdrawnExclusiveJobKeepsNoJobWaiting) {
  Driven driven("dqt-ffapa");
  GangCore& core = *driven.core;
  ASSERT_TRUE(core.submit(job(1, kProcessors, true), 0));
  ASSERT_TRUE(core.submit(job(2, kProcessors, false), 0));
  ASSERT_TRUE(core.submit(job(3, kProcessors, true), 0));
  EXPECT_EQ(core.why_waiting(2), GangCore::Wait::kForASlot) << "not placed yet";
  const std::set<JobId>& started = driven.started;
  for (Seconds t = 0; t < 4; ++t) driven.pass(t);
  ASSERT_FALSE(started.contains(3));
  ASSERT_TRUE(core.cancel(2, 4));  // it never started: withdrawn
  for (Seconds t = 4; t < 8; ++t) driven.pass(t);
  EXPECT_TRUE(started.contains(3)) << "time-shared with job 1 once job 2 is gone";
  EXPECT_FALSE(started.contains(2));
}

TEST(GangExclusive, NeedsSwitchReports) {
  auto dqt = gang::GangPolicyRegistry::builtin().create("dqt-ffapa", 4);
  ASSERT_TRUE(dqt);
  EXPECT_THROW(GangCore(**dqt, Curve::identity(4),
                        GangCoreOptions{.report_switches = false, .exclusive_jobs = true}),
               std::invalid_argument);
}

}  // namespace
}  // namespace trellis
