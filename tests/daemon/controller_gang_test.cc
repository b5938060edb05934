// The controller with a gang policy, in virtual time with recording agents: the switches of a
// DQT schedule, time limits that count only running time, global state detection from switch
// replies, and a restart that resumes the same schedule without losing or restarting a job.
#include <signal.h>
#include <unistd.h>

#include <map>
#include <set>

#include <gtest/gtest.h>

#include "core/hostlist.h"
#include "daemon/controller.h"
#include "daemon_test_support.h"
#include "store/state_store.h"

namespace trellis {
namespace {

class ControllerGangTest : public ::testing::Test {
 protected:
  static constexpr Seconds kStart = 1000;
  static constexpr Seconds kSlice = 0.5;

  void SetUp() override {
    config_.machine = "mesh:2x2";
    config_.store = "sqlite:" + (dir_ / "state.db");
    config_.controller.policy = "dqt-ffapa";
    config_.controller.slice = kSlice;
    config_.controller.heartbeat_interval = 1;
    config_.controller.heartbeat_misses = 1000;  // the fake agent never misses
    auto store = open_store(config_.store);
    ASSERT_TRUE(store) << store.error().message;
    store_ = std::move(*store);
    open(kStart);
  }

  void open(Seconds now) {
    auto controller = Controller::open(config_, *store_, agents_, now);
    ASSERT_TRUE(controller) << controller.error().message;
    controller_ = std::move(*controller);
    ASSERT_TRUE(controller_->time_shares());
    v1::RegisterRequest hello;
    hello.set_address("fake:1");
    for (const char* node : {"n0", "n1", "n2", "n3"}) hello.add_nodes(node);
    ASSERT_TRUE(controller_->register_agent(hello, daemon_, now));
  }

  JobId submit(int nodes, Seconds time_limit, Seconds now, bool share = true) {
    v1::JobSpec spec;
    spec.set_nodes(nodes);
    spec.set_time_limit(time_limit);
    spec.set_share(share);
    spec.add_argv("true");
    spec.set_cwd("/");
    Result<JobId> id = controller_->submit(spec, daemon_, now);
    EXPECT_TRUE(id) << id.error().message;
    return id ? *id : -1;
  }

  // Runs the controller as trellisd's loop would, every 0.05 s from `from` to `to`.
  void run(Seconds from, Seconds to) {
    for (Seconds t = from; t <= to + 1e-9; t += 0.05) {
      ASSERT_TRUE(controller_->tick(t));
      if (controller_->pass_due(t)) {
        ASSERT_TRUE(controller_->run_pass(t));
      }
    }
  }

  // Every job, finished ones too.
  std::map<JobId, v1::JobInfo> jobs(Seconds now) {
    std::map<JobId, v1::JobInfo> out;
    v1::ListJobsRequest all;
    all.set_all_states(true);
    Result<v1::ListJobsReply> listed = controller_->list_jobs(all, now);
    EXPECT_TRUE(listed);
    if (listed) {
      for (const v1::JobInfo& j : listed->jobs()) out[j.id()] = j;
    }
    return out;
  }

  // A switch's reply with one job's activity on the test's 4 nodes.
  static SwitchOutcome reply_for(JobId job, int processes, int running, int input, int message) {
    SwitchOutcome outcome;
    v1::JobActivity* activity = outcome.reply.add_activity();
    activity->set_job_id(job);
    activity->set_attempt(1);
    activity->set_tasks(4);
    activity->set_processes(processes);
    activity->set_running(running);
    activity->set_waiting_input(input);
    activity->set_waiting_message(message);
    return outcome;
  }

  // Every task of `job` ends (its agent reports the exits).
  void exits(JobId job, Seconds now, int signal = 0) {
    v1::ExitRequest report;
    for (const char* node : {"n0", "n1", "n2", "n3"}) {
      v1::TaskStatus* task = report.add_tasks();
      task->set_job_id(job);
      task->set_attempt(1);
      task->set_node(node);
      task->set_signal(signal);
    }
    ASSERT_TRUE(controller_->report_exits(report, daemon_, now));
  }

  std::set<JobId> launched() const {
    std::set<JobId> ids;
    for (const v1::LaunchRequest& l : agents_.launches) ids.insert(l.job_id());
    return ids;
  }

  // Which of the jobs the switches so far leave frozen, replaying them in order.
  std::map<int64_t, bool> frozen_after_switches() {
    std::map<int64_t, bool> frozen;
    for (const SwitchOrder& o : agents_.switches) {
      for (const auto& [job, attempt] : o.freeze) frozen[job] = true;
      for (const auto& [job, attempt] : o.thaw) frozen[job] = false;
    }
    return frozen;
  }

  // The terminate signals sent to `job` so far (a time limit or a cancel).
  int terminations(JobId job) {
    int n = 0;
    for (const v1::SignalRequest& s : agents_.signals) n += s.job_id() == job && s.signal() == 0;
    return n;
  }

  testing::TempDir dir_;
  ClusterConfig config_;
  testing::RecordingAgents agents_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<Controller> controller_;
  Caller daemon_{static_cast<int>(getuid()), static_cast<int>(getgid())};
};

TEST_F(ControllerGangTest, TwoSharedJobsTakeTurnsAndEachTimeLimitCountsOnlyItsRunningTime) {
  JobId a = submit(4, 20, kStart);
  JobId b = submit(4, 20, kStart);
  run(kStart, kStart + 10);
  ASSERT_EQ(agents_.launches.size(), 2u);  // both started, on all four nodes
  // From the second slot on, every slot switches: one job out, the other in.
  ASSERT_GE(agents_.switches.size(), 15u);
  for (size_t i = 1; i < agents_.switches.size(); ++i) {
    const SwitchOrder& o = agents_.switches[i];
    ASSERT_EQ(o.freeze.size(), 1u) << "switch " << i;
    ASSERT_EQ(o.thaw.size(), 1u) << "switch " << i;
    EXPECT_NE(o.freeze[0].first, o.thaw[0].first);
    EXPECT_EQ(o.agents, std::vector<std::string>{"fake:1"});
  }
  std::map<int64_t, bool> frozen = frozen_after_switches();
  EXPECT_NE(frozen[a], frozen[b]);
  // The queue says the same: one R, one S; each has been frozen about half the time.
  std::map<JobId, v1::JobInfo> listed = jobs(kStart + 10);
  EXPECT_EQ((listed[a].state() == v1::SUSPENDED) + (listed[b].state() == v1::SUSPENDED), 1);
  EXPECT_NEAR(listed[a].seconds_frozen(), 5, 1.0);
  EXPECT_NEAR(listed[b].seconds_frozen(), 5, 1.0);
  EXPECT_EQ(listed[a].partition(), 0);

  // A 20 s limit, half of the time frozen: still running at 30 s of wall time...
  run(kStart + 10.05, kStart + 38);
  EXPECT_EQ(terminations(a), 0);
  EXPECT_EQ(terminations(b), 0);
  // ...and stopped once it has run 20 s, at about 40 s.
  run(kStart + 38.05, kStart + 42);
  EXPECT_EQ(terminations(a), 1);
  EXPECT_EQ(terminations(b), 1);

  // Their processes end. Each one's frozen time outlives it: kept in the store, so that `show
  // job` gives it after the end, from any controller.
  std::map<JobId, v1::JobInfo> before = jobs(kStart + 42);
  EXPECT_NEAR(before[a].seconds_frozen(), 20, 1.5);
  exits(a, kStart + 42, SIGTERM);
  exits(b, kStart + 42, SIGTERM);
  run(kStart + 42.05, kStart + 45);
  std::map<JobId, v1::JobInfo> after = jobs(kStart + 45);
  for (JobId id : {a, b}) {
    EXPECT_EQ(after[id].state(), v1::TIMEOUT) << "job " << id;
    EXPECT_NEAR(after[id].seconds_frozen(), before[id].seconds_frozen(), 0.1) << "job " << id;
  }
  controller_.reset();
  open(kStart + 46);
  EXPECT_NEAR(jobs(kStart + 46)[b].seconds_frozen(), before[b].seconds_frozen(), 0.1);
}

TEST_F(ControllerGangTest, AnOutgoingJobsActivityIsAskedForAtItsFirstSwitchOutAndEveryFewAfter) {
  config_.controller.activity_every = 3;
  open(kStart);
  JobId a = submit(4, 3600, kStart);
  JobId b = submit(4, 3600, kStart);
  run(kStart, kStart + 10);
  ASSERT_GE(agents_.switches.size(), 15u);
  // Per job, its switch-outs in order: a look at the 1st, 4th, 7th...; the others skip it.
  std::map<int64_t, int> switch_outs;
  for (const SwitchOrder& o : agents_.switches) {
    std::set<int64_t> skipped;
    for (const auto& [job, attempt] : o.skip_activity) skipped.insert(job);
    for (const auto& [job, attempt] : o.freeze) {
      const int n = ++switch_outs[job];
      EXPECT_EQ(skipped.contains(job), (n - 1) % 3 != 0) << "job " << job << " switch-out " << n;
      skipped.erase(job);
    }
    EXPECT_TRUE(skipped.empty()) << "a skipped job that the switch does not freeze";
  }
  EXPECT_GE(switch_outs[a], 4);
  EXPECT_GE(switch_outs[b], 4);
}

TEST_F(ControllerGangTest, AJobSuspendedByAnAdministratorIsFrozenWithoutALookAtItsActivity) {
  JobId a = submit(4, 3600, kStart, /*share=*/false);
  run(kStart, kStart + 1);
  ASSERT_EQ(launched(), std::set<JobId>{a});
  Result<std::vector<JobId>> suspended = controller_->suspend({a}, daemon_, kStart + 1);
  ASSERT_TRUE(suspended) << suspended.error().message;
  run(kStart + 1.05, kStart + 2);
  ASSERT_FALSE(agents_.switches.empty());
  const SwitchOrder& o = agents_.switches.back();
  ASSERT_EQ(o.freeze.size(), 1u);
  EXPECT_EQ(o.freeze[0].first, a);
  ASSERT_EQ(o.skip_activity.size(), 1u);
  EXPECT_EQ(o.skip_activity[0].first, a);
}

TEST_F(ControllerGangTest, AJobWithoutShareKeepsWholeNodesAndIsNeverSwitchedOut) {
  JobId a = submit(4, 3600, kStart);
  run(kStart, kStart + 1);
  // b may not share: it waits for a (on all four nodes), and c, submitted later, waits for b.
  JobId b = submit(4, 3600, kStart + 1, /*share=*/false);
  JobId c = submit(2, 3600, kStart + 1.5);
  run(kStart + 1.05, kStart + 5);
  EXPECT_EQ(launched(), std::set<JobId>{a});
  // The queue says why (once the policy has placed them).
  std::map<JobId, v1::JobInfo> waiting = jobs(kStart + 5);
  EXPECT_EQ(waiting[b].reason(), "Resources (waits until no other job is on its nodes)");
  EXPECT_EQ(waiting[c].reason(), "Resources (its nodes are kept for a job without --share)");
  exits(a, kStart + 5);
  run(kStart + 5.05, kStart + 6);
  EXPECT_EQ(launched(), (std::set<JobId>{a, b}));
  // From its start on, b runs in every slot: no switch freezes it, and c does not start.
  size_t from = agents_.switches.size();
  run(kStart + 6.05, kStart + 10);
  for (size_t i = from; i < agents_.switches.size(); ++i)
    for (const auto& [job, attempt] : agents_.switches[i].freeze) EXPECT_NE(job, b);
  EXPECT_EQ(launched(), (std::set<JobId>{a, b}));
  std::map<JobId, v1::JobInfo> listed = jobs(kStart + 10);
  EXPECT_EQ(listed[b].state(), v1::RUNNING);
  EXPECT_EQ(listed[b].seconds_frozen(), 0);
  EXPECT_EQ(listed[c].state(), v1::PENDING);
  // The store holds b's nodes exclusively: a shared job beside it would have been refused.
  Result<std::vector<StoredNode>> nodes = store_->list_nodes();
  ASSERT_TRUE(nodes);
  for (const StoredNode& node : *nodes) EXPECT_EQ(node.jobs, std::vector<JobId>{b}) << node.name;
  exits(b, kStart + 10);
  run(kStart + 10.05, kStart + 11);
  EXPECT_EQ(launched(), (std::set<JobId>{a, b, c}));
}

TEST_F(ControllerGangTest, ARestartedControllerResumesTheScheduleWithEveryJob) {
  JobId a = submit(4, 3600, kStart);
  JobId b = submit(2, 3600, kStart);
  JobId c = submit(2, 3600, kStart);
  JobId d = submit(4, 3600, kStart);
  run(kStart, kStart + 5);
  std::map<JobId, v1::JobInfo> before = jobs(kStart + 5);
  for (JobId id : {a, b, c, d}) ASSERT_EQ(before[id].attempt(), 1) << id;
  const size_t launches = agents_.launches.size();
  // A crash: the controller goes without a word; a new one opens the same store.
  controller_.reset();
  agents_.switches.clear();
  open(kStart + 6);
  std::map<JobId, v1::JobInfo> after = jobs(kStart + 6);
  for (JobId id : {a, b, c, d}) {
    EXPECT_EQ(after[id].attempt(), 1) << "job " << id << " was not restarted";
    EXPECT_EQ(after[id].nodelist(), before[id].nodelist()) << "job " << id << " did not move";
    EXPECT_EQ(after[id].partition(), before[id].partition()) << id;
    // Frozen time is saved every 2 s (at the first pass after): at most that much is lost.
    EXPECT_GE(after[id].seconds_frozen(), before[id].seconds_frozen() - 2.0 - kSlice) << id;
    EXPECT_GT(after[id].seconds_frozen(), 0) << id;
  }
  // Once it schedules, the agents are told the whole freeze state at once: every job frozen or
  // thawed, and the thawed ones (one slot of the restored schedule) on different nodes.
  ASSERT_TRUE(agents_.switches.empty()) << "told the agents before it held the lease";
  ASSERT_TRUE(controller_->tick(kStart + 6));
  ASSERT_FALSE(agents_.switches.empty());
  const SwitchOrder& told = agents_.switches.front();
  EXPECT_EQ(told.freeze.size() + told.thaw.size(), 4u);
  std::set<std::string> thawed_nodes;
  size_t thawed_count = 0;
  for (const auto& [job, attempt] : told.thaw) {
    Result<NodeSet> nodes = parse_hostlist(after[job].nodelist(), 4, "n");
    ASSERT_TRUE(nodes);
    for (NodeId n : nodes->to_vector()) thawed_nodes.insert(std::to_string(n));
    thawed_count += nodes->count();
  }
  EXPECT_GT(told.thaw.size(), 0u);
  EXPECT_EQ(thawed_nodes.size(), thawed_count) << "two thawed jobs share a node";
  run(kStart + 6, kStart + 12);
  EXPECT_EQ(agents_.signals.size(), 0u);  // nothing was killed or requeued
  // Resent launches are the reconciliation (no-ops at the agents), not new attempts.
  for (size_t i = launches; i < agents_.launches.size(); ++i)
    EXPECT_EQ(agents_.launches[i].attempt(), 1);
  // Time-sharing goes on: every job is thawed at some point after the restart.
  std::map<int64_t, int> thawed;
  for (const SwitchOrder& o : agents_.switches)
    for (const auto& [job, attempt] : o.thaw) ++thawed[job];
  for (JobId id : {a, b, c, d}) EXPECT_GT(thawed[id], 0) << "job " << id;
}

TEST_F(ControllerGangTest, SwitchRepliesSkipIdleJobsAndReportDeadlocks) {
  JobId a = submit(4, 3600, kStart);
  JobId b = submit(4, 3600, kStart);
  JobId c = submit(4, 3600, kStart);
  run(kStart, kStart + 2);
  // a waited for input in its slot: skipped from its next slot on, and left thawed.
  controller_->switch_done(reply_for(a, 4, 0, 4, 0), kStart + 2);
  // c's processes all wait for messages of each other: globally stopped.
  // (Twice: once may be a message in flight.)
  controller_->switch_done(reply_for(c, 4, 0, 0, 4), kStart + 2);
  controller_->switch_done(reply_for(c, 4, 0, 0, 4), kStart + 2);
  run(kStart + 2.05, kStart + 6);
  std::map<JobId, v1::JobInfo> listed = jobs(kStart + 6);
  EXPECT_TRUE(listed[a].idle());
  EXPECT_EQ(listed[a].state(), v1::RUNNING);
  EXPECT_NE(listed[c].reason().find("globally stopped"), std::string::npos) << listed[c].reason();
  EXPECT_FALSE(listed[b].idle());
  // While a is idle, b and c take turns; a is only probed.
  size_t from = agents_.switches.size();
  run(kStart + 6.05, kStart + 9);
  bool probed = false;
  for (size_t i = from; i < agents_.switches.size(); ++i) {
    const SwitchOrder& o = agents_.switches[i];
    for (const auto& [job, attempt] : o.thaw) EXPECT_NE(job, a);
    for (const auto& [job, attempt] : o.freeze) EXPECT_NE(job, a);
    for (const auto& [job, attempt] : o.probe) probed = probed || job == a;
  }
  EXPECT_TRUE(probed);
  // Its input arrived: a probe sees it run. It is frozen until its turn, then runs again.
  SwitchOutcome woke = reply_for(a, 4, 4, 0, 0);
  woke.order.probe.push_back({a, 1});
  controller_->switch_done(woke, kStart + 9);
  ASSERT_FALSE(agents_.switches.empty());
  EXPECT_EQ(agents_.switches.back().freeze, (std::vector<SwitchOrder::JobAttempt>{{a, 1}}));
  run(kStart + 9.05, kStart + 12);
  EXPECT_FALSE(jobs(kStart + 12)[a].idle());
  EXPECT_FALSE(frozen_after_switches()[a] && frozen_after_switches()[b] &&
               frozen_after_switches()[c]);
  int thawed = 0;
  for (const SwitchOrder& o : agents_.switches)
    for (const auto& [job, attempt] : o.thaw) thawed += job == a;
  EXPECT_GT(thawed, 0);
}

TEST_F(ControllerGangTest, AnIdleJobWhoseProbesFindItWaitingForMessagesIsGloballyStopped) {
  // Seen first before all its processes announced their wait for a message (the rest looked
  // as if they waited for input), the job is skipped as idle. Its probes then see every
  // process wait for a message: it is globally stopped, not idle for ever.
  JobId a = submit(4, 3600, kStart);
  JobId b = submit(4, 3600, kStart);
  run(kStart, kStart + 2);
  controller_->switch_done(reply_for(a, 4, 0, 3, 1), kStart + 2);
  run(kStart + 2.05, kStart + 4);
  ASSERT_TRUE(jobs(kStart + 4)[a].idle());
  for (int probe = 0; probe < 2; ++probe) {
    SwitchOutcome stopped = reply_for(a, 4, 0, 0, 4);
    stopped.order.probe.push_back({a, 1});
    controller_->switch_done(stopped, kStart + 4);
  }
  std::map<JobId, v1::JobInfo> listed = jobs(kStart + 4);
  EXPECT_NE(listed[a].reason().find("globally stopped"), std::string::npos) << listed[a].reason();
  EXPECT_EQ(listed[b].reason().find("globally stopped"), std::string::npos);
}

TEST_F(ControllerGangTest, WithIdleDetectionOffAJobWaitingForInputKeepsItsSlots) {
  config_.controller.idle_detection = false;
  controller_.reset();
  open(kStart);
  JobId a = submit(4, 3600, kStart);
  JobId b = submit(4, 3600, kStart);
  run(kStart, kStart + 2);
  controller_->switch_done(reply_for(a, 4, 0, 4, 0), kStart + 2);
  size_t from = agents_.switches.size();
  run(kStart + 2.05, kStart + 6);
  EXPECT_FALSE(jobs(kStart + 6)[a].idle());
  // a still takes its turns: thawed again after the reply (an idle job would be left thawed
  // and only probed).
  int thawed = 0;
  for (size_t i = from; i < agents_.switches.size(); ++i) {
    const SwitchOrder& o = agents_.switches[i];
    for (const auto& [job, attempt] : o.thaw) thawed += job == a;
    for (const auto& [job, attempt] : o.probe) EXPECT_NE(job, a);
  }
  EXPECT_GT(thawed, 2);
  EXPECT_FALSE(jobs(kStart + 6)[b].idle());
}

TEST_F(ControllerGangTest, ASubmissionDuringASlotWaitsForTheSlotsEnd) {
  // As in the simulator, a slot runs its whole length: passing at once would cut it short.
  submit(4, 3600, kStart);
  submit(4, 3600, kStart);
  run(kStart, kStart + 2);
  std::optional<Seconds> slot_end = controller_->next_wakeup();
  ASSERT_TRUE(slot_end);
  const Seconds now = *slot_end - 0.01;
  submit(2, 3600, now);
  EXPECT_FALSE(controller_->pass_due(now));
  EXPECT_TRUE(controller_->pass_due(*slot_end));
}

TEST_F(ControllerGangTest, ShapesAreRefusedUnderAGangPolicyWithAReason) {
  v1::JobSpec spec;
  spec.add_shape(2);
  spec.add_shape(2);
  spec.add_argv("true");
  spec.set_cwd("/");
  Result<JobId> id = controller_->submit(spec, daemon_, kStart);
  ASSERT_FALSE(id);
  EXPECT_NE(id.error().message.find("partitions"), std::string::npos) << id.error().message;
}

}  // namespace
}  // namespace trellis
