// The quantum gang simulator: hand-computed schedules, the global-state model (idle skipping,
// deadlock removal), and short versions of the thesis's comparisons that check orderings.
#include "sim/gang/gang_simulator.h"

#include <gtest/gtest.h>

#include "sched/gang/registry.h"
#include "sim/gang/experiment.h"
#include "sim/gang/interactive_model.h"

namespace trellis::gangsim {
namespace {

SimJob batch(JobId id, long submit, int size, long work) {
  SimJob j;
  j.id = id;
  j.submit = submit;
  j.size = size;
  j.work = work;
  return j;
}

GangSimResult run(const std::string& policy, int processors, const std::vector<SimJob>& jobs,
                  GangSimConfig config = {}) {
  auto s = gang::GangPolicyRegistry::builtin().create(policy, processors);
  EXPECT_TRUE(s) << policy;
  auto r = simulate_gang(jobs, **s, config);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return *r;
}

const JobOutcome& outcome(const GangSimResult& r, JobId id) {
  for (const auto& j : r.jobs)
    if (j.id == id) return j;
  ADD_FAILURE() << "no job " << id;
  return r.jobs.front();
}

TEST(GangSimulator, TwoWholeMachineJobsAlternateUnderDqt) {
  GangSimConfig config;
  config.trace_slots = 6;
  auto r = run("dqt-ffapa", 4, {batch(1, 0, 4, 3), batch(2, 0, 4, 3)}, config);
  // Slots: 1 2 1 2 1 2 -> job 1 ends at 5, job 2 at 6.
  ASSERT_EQ(r.trace.size(), 6u);
  for (int t = 0; t < 6; ++t) {
    ASSERT_EQ(r.trace[t].running.size(), 1u);
    EXPECT_EQ(r.trace[t].running[0].job, t % 2 == 0 ? 1 : 2);
  }
  EXPECT_EQ(outcome(r, 1).end, 5);
  EXPECT_EQ(outcome(r, 2).end, 6);
  EXPECT_DOUBLE_EQ(outcome(r, 1).retr, 5.0 / 3);
  EXPECT_DOUBLE_EQ(outcome(r, 2).retr, 2.0);
  EXPECT_DOUBLE_EQ(r.utilization, 1.0);
  EXPECT_DOUBLE_EQ(r.offered_load, 1.0);
  EXPECT_EQ(r.max_tqlb, 2);
  EXPECT_EQ(r.duration, 6);
}

TEST(GangSimulator, BatchBaselineRunsJobsBackToBack) {
  auto r = run("fcfs-bb", 4, {batch(1, 0, 4, 3), batch(2, 0, 4, 3), batch(3, 10, 1, 2)});
  EXPECT_EQ(outcome(r, 1).end, 3);
  EXPECT_EQ(outcome(r, 2).end, 6);
  EXPECT_EQ(outcome(r, 3).end, 12);  // arrives into an empty machine at 10
  EXPECT_DOUBLE_EQ(outcome(r, 2).retr, 2.0);
  // Busy 4*6 + 1*2 processor-units over 12 units on 4 processors.
  EXPECT_DOUBLE_EQ(r.utilization, 26.0 / 48);
}

TEST(GangSimulator, FixedEndTimeCutsTheRunAndCountsOnlyFinishedJobs) {
  GangSimConfig config;
  config.end_time = 4;
  auto r = run("dqt-ffapa", 2, {batch(1, 0, 2, 1), batch(2, 0, 2, 100)}, config);
  EXPECT_EQ(r.duration, 4);
  EXPECT_EQ(r.finished(), 1);
  EXPECT_EQ(outcome(r, 2).fate, JobFate::kUnfinished);
  EXPECT_EQ(outcome(r, 2).done, 3);
  EXPECT_DOUBLE_EQ(r.mean_retr, 1.0);
}

// Job 1 computes one unit, waits 5 units for its user, then computes one more; job 2 is batch.
std::vector<SimJob> interactive_pair() {
  SimJob a = batch(1, 0, 2, 2);
  a.interactions = {{1, 5}, {1, 0}};
  return {a, batch(2, 0, 2, 6)};
}

TEST(GlobalState, WithoutIdleDetectionAWaitingJobWastesItsSlots) {
  auto r = run("dqt-ffapa", 2, interactive_pair());
  // 1 2 1(idle) 2 1(idle) 2 1 2 2 2: job 1's input arrives at 6, it ends at 7; job 2 at 10.
  EXPECT_EQ(outcome(r, 1).end, 7);
  EXPECT_EQ(outcome(r, 2).end, 10);
  EXPECT_EQ(r.idle_skips, 0);
  EXPECT_DOUBLE_EQ(r.utilization, 1.0);
  EXPECT_DOUBLE_EQ(r.useful_utilization, 0.8);
}

TEST(GlobalState, IdleDetectionSkipsTheWaitingJobUntilItsInputArrives) {
  GangSimConfig config;
  config.idle_detection = true;
  config.trace_slots = 8;
  auto r = run("dqt-ffapa", 2, interactive_pair(), config);
  EXPECT_EQ(r.idle_skips, 1);
  // Job 1 is found idle after slot 0 and skipped; job 2 has slots 1-5 to itself.
  for (int t = 1; t <= 5; ++t) {
    ASSERT_EQ(r.trace[t].running.size(), 1u);
    EXPECT_EQ(r.trace[t].running[0].job, 2) << "slot " << t;
  }
  EXPECT_LT(outcome(r, 2).end, 10);
  EXPECT_LE(outcome(r, 1).end, 8);
  EXPECT_DOUBLE_EQ(r.useful_utilization, 1.0);
}

TEST(GlobalState, IdleDetectionRemovesADeadlockedJobAndReportsIt) {
  SimJob stuck = batch(1, 0, 2, 10);
  stuck.deadlock_after = 2;
  std::vector<SimJob> jobs = {stuck, batch(2, 0, 2, 4)};
  GangSimConfig detect;
  detect.idle_detection = true;
  auto with = run("dqt-ffapa", 2, jobs, detect);
  // 1 2 1 -> job 1 has done 2 units and is stopped: removed at the switch at time 3.
  EXPECT_EQ(outcome(with, 1).fate, JobFate::kDeadlocked);
  EXPECT_EQ(outcome(with, 1).end, 3);
  EXPECT_EQ(outcome(with, 1).done, 2);
  EXPECT_EQ(with.deadlocked(), 1);
  EXPECT_EQ(outcome(with, 2).end, 6);

  auto without = run("dqt-ffapa", 2, jobs);
  EXPECT_EQ(outcome(without, 1).fate, JobFate::kUnfinished);
  EXPECT_EQ(outcome(without, 2).end, 8);  // shares the machine with a job that never progresses
}

TEST(GlobalState, ChapterSixModelIdleDetectionRaisesUsefulUtilization) {
  InteractiveModel model;
  model.jobs = 3;
  model.size = 8;
  model.interactions = 40;
  auto jobs = generate_interactive_jobs(model);
  ASSERT_TRUE(jobs);
  for (const char* policy : {"dqt-ffapa", "slurm-gang"}) {
    GangSimConfig config;
    config.slice = 10;
    auto plain = run(policy, 8, *jobs, config);
    config.idle_detection = true;
    auto skipping = run(policy, 8, *jobs, config);
    EXPECT_EQ(plain.finished(), 3);
    EXPECT_EQ(skipping.finished(), 3);
    EXPECT_GT(skipping.idle_skips, 0);
    // Same work done in less time: higher useful utilization, shorter makespan.
    EXPECT_GT(skipping.useful_utilization, plain.useful_utilization) << policy;
    EXPECT_LT(skipping.duration, plain.duration) << policy;
  }
}

TEST(GangSimulator, RejectsBadInput) {
  auto s = gang::GangPolicyRegistry::builtin().create("dqt-ffapa", 4);
  ASSERT_TRUE(s);
  GangSimConfig config;
  config.slice = 0;
  EXPECT_FALSE(simulate_gang({batch(1, 0, 1, 1)}, **s, config));
  auto too_big = simulate_gang({batch(7, 0, 5, 1)}, **s, GangSimConfig{});
  ASSERT_FALSE(too_big);
  EXPECT_NE(too_big.error().message.find("job 7"), std::string::npos);
  EXPECT_FALSE(simulate_gang({batch(1, 5, 1, 1), batch(2, 0, 1, 1)}, **s, GangSimConfig{}));
}

// A short Table 7.1 (128 processors, inverse sizes, service uniform 500-19,999, WF 0.793):
// FF-APA keeps the load index lowest and packs at least as well as FF and MAX-TQLB.
TEST(ThesisComparisons, ShortTable7_1Orderings) {
  GangExperiment e;
  e.policies = {"dqt-maxtqlb", "dqt-ff", "dqt-ffapa"};
  e.model.processors = 128;
  e.model.sizes = workload::SizeDistribution::kInverse;
  e.model.service = workload::ServiceDistribution::kUniform;
  e.model.arrival_end = 1e5;
  e.loads = {0.793};
  e.seeds = {1, 2};
  auto runs = run_experiment(e);
  ASSERT_TRUE(runs);
  auto rows = summarize(*runs);
  ASSERT_EQ(rows.size(), 3u);
  const auto& max = rows[0];
  const auto& ff = rows[1];
  const auto& ffapa = rows[2];
  EXPECT_LT(ffapa.mean_max_tqlb, max.mean_max_tqlb);
  EXPECT_LT(ffapa.mean_max_tqlb, ff.mean_max_tqlb);
  EXPECT_LE(ffapa.max_tqlb, ff.max_tqlb);
  EXPECT_GE(ffapa.utilization, ff.utilization);
  EXPECT_GE(ffapa.utilization, max.utilization);
}

// Thesis Fig. 7.20 at reduced length: 1,024 processors, uniform sizes, load 0.9.
TEST(ThesisComparisons, DqtMatchesScanUpAndBeatsFcfsBuddyInUtilization) {
  GangExperiment e;
  e.policies = {"dqt-ffapa", "scan-up-bb", "fcfs-bb"};
  e.model.processors = 1024;
  e.model.arrival_end = 1e5;
  e.loads = {0.9};
  e.seeds = {1, 2};
  auto runs = run_experiment(e);
  ASSERT_TRUE(runs);
  auto rows = summarize(*runs);
  ASSERT_EQ(rows.size(), 3u);
  double dqt = rows[0].utilization, scan = rows[1].utilization, fcfs = rows[2].utilization;
  EXPECT_NEAR(dqt, scan, 0.04);
  EXPECT_GT(dqt, fcfs + 0.08);
  EXPECT_GT(scan, fcfs + 0.08);
  // DQT's RETR grows with job size (thesis Fig. 7.21): a positive correlation.
  EXPECT_GT(rows[0].correlation, 0.1);
}

}  // namespace
}  // namespace trellis::gangsim
