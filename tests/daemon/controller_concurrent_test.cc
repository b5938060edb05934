// Concurrent allocation ([controller] allocation = "concurrent", daemon/controller.h): two
// controllers share one store in virtual time, each placing the jobs it was given on its own view
// of the machine. A start that meets the other's commit is refused by the store, and the job is
// placed again after the log is read; a controller that stops checking in has its pending jobs
// adopted by the lease holder. Neither ever places the other's jobs while it lives.
#include <unistd.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "daemon/controller.h"
#include "daemon_test_support.h"
#include "store/state_store.h"

namespace trellis {
namespace {

class ControllerConcurrentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.machine = "mesh:2x2";
    config_.store = "sqlite:" + (dir_ / "state.db");
    config_.controller.policy = "fcfs";
    config_.controller.allocation = AllocationMode::kConcurrent;
    config_.controller.heartbeat_interval = 1;
    config_.controller.heartbeat_misses = 1000;  // the fake agents never miss
    for (auto* store : {&store_a_, &store_b_}) {
      auto opened = open_store(config_.store);
      ASSERT_TRUE(opened) << opened.error().message;
      *store = std::move(*opened);
    }
    auto a = Controller::open(config_, *store_a_, agents_a_, kStart, "A");
    ASSERT_TRUE(a) << a.error().message;
    a_ = std::move(*a);
    auto b = Controller::open(config_, *store_b_, agents_b_, kStart, "B");
    ASSERT_TRUE(b) << b.error().message;
    b_ = std::move(*b);
    v1::RegisterRequest hello;
    hello.set_address("fake:1");
    for (const char* node : {"n0", "n1", "n2", "n3"}) hello.add_nodes(node);
    ASSERT_TRUE(a_->register_agent(hello, admin_, kStart));
  }

  JobId submit(Controller& c, int nodes, Seconds now) {
    v1::JobSpec spec;
    spec.set_nodes(nodes);
    spec.set_time_limit(100);
    spec.add_argv("true");
    spec.set_cwd("/");
    Result<JobId> id = c.submit(spec, admin_, now);
    EXPECT_TRUE(id) << id.error().message;
    return id ? *id : -1;
  }

  StoredJob stored(JobId id) {
    Result<StoredJob> job = store_a_->job(id);
    EXPECT_TRUE(job) << job.error().message;
    return job ? *job : StoredJob{};
  }

  // What agents report when the tasks of `id`'s first attempt on `nodes` end, each with
  // `exit_code` and `signal`.
  static v1::ExitRequest ended(JobId id, const std::vector<NodeId>& nodes, int exit_code = 0,
                               int signal = 0) {
    v1::ExitRequest report;
    for (NodeId node : nodes) {
      v1::TaskStatus* task = report.add_tasks();
      task->set_job_id(id);
      task->set_attempt(1);
      task->set_node("n" + std::to_string(node));
      task->set_exit_code(exit_code);
      task->set_signal(signal);
    }
    return report;
  }

  static std::set<JobId> launched(const testing::RecordingAgents& agents) {
    std::set<JobId> ids;
    for (const v1::LaunchRequest& l : agents.launches) ids.insert(l.job_id());
    return ids;
  }

  static constexpr Seconds kStart = 1000;
  testing::TempDir dir_;
  ClusterConfig config_;
  std::unique_ptr<StateStore> store_a_, store_b_;
  testing::RecordingAgents agents_a_, agents_b_;
  std::unique_ptr<Controller> a_, b_;
  Caller admin_{static_cast<int>(getuid()), static_cast<int>(getgid())};
};

// Jobs of the whole machine (4 nodes), with two controllers: larger than either's share of it (2
// nodes each), so both may place them anywhere, and both choose the same nodes.
TEST_F(ControllerConcurrentTest, AStartThatMeetsTheOthersCommitIsRefusedAndPlacedAgain) {
  const JobId mine = submit(*a_, 4, kStart);
  const JobId theirs = submit(*b_, 4, kStart);
  EXPECT_EQ(stored(mine).owner, "A");
  EXPECT_EQ(stored(theirs).owner, "B");
  // The lease settles (taking it reads everything again), then both read the store at the same
  // instant, so both see the same four free nodes...
  ASSERT_TRUE(a_->tick(kStart + 0.5));
  ASSERT_TRUE(b_->tick(kStart + 0.5));
  const Seconds t = kStart + 1;
  ASSERT_TRUE(a_->tick(t));
  ASSERT_TRUE(b_->tick(t));
  // ... B commits its start first; A, deciding on what it read, chooses the same nodes.
  Result<std::vector<JobId>> b_started = b_->run_pass(t);
  ASSERT_TRUE(b_started) << b_started.error().message;
  EXPECT_EQ(*b_started, std::vector<JobId>{theirs});
  Result<std::vector<JobId>> a_started = a_->run_pass(t);
  ASSERT_TRUE(a_started) << a_started.error().message;
  EXPECT_TRUE(a_started->empty()) << "the store took a start on nodes another job holds";
  EXPECT_EQ(a_->conflicts(), 1);
  EXPECT_EQ(stored(mine).state, JobState::kPending);
  EXPECT_EQ(stored(mine).attempt, 0);
  EXPECT_TRUE(launched(agents_a_).empty());
  // The next pass reads the log first (B's start): no node is free, the job waits.
  EXPECT_TRUE(a_->pass_due(t + 0.1));
  a_started = a_->run_pass(t + 0.1);
  ASSERT_TRUE(a_started) << a_started.error().message;
  EXPECT_TRUE(a_started->empty());
  EXPECT_EQ(a_->conflicts(), 1);
  // B's job ends; A places its job on the freed nodes.
  const StoredJob b_job = stored(theirs);
  ASSERT_EQ(b_job.nodes.size(), 4u);
  ASSERT_TRUE(b_->report_exits(ended(theirs, b_job.nodes), admin_, t + 0.2));
  EXPECT_EQ(stored(theirs).state, JobState::kCompleted);
  a_started = a_->run_pass(t + 0.3);
  ASSERT_TRUE(a_started) << a_started.error().message;
  EXPECT_EQ(*a_started, std::vector<JobId>{mine});
  EXPECT_EQ(stored(mine).nodes.size(), 4u);
  EXPECT_EQ(launched(agents_a_), std::set<JobId>{mine});
  EXPECT_EQ(launched(agents_b_), std::set<JobId>{theirs});
  EXPECT_EQ(b_->conflicts(), 0);
}

// With shares of the machine, each places its jobs in its own: no conflict.
TEST_F(ControllerConcurrentTest, JobsThatFitTheirSharesArePlacedInThemWithoutConflict) {
  ASSERT_TRUE(a_->tick(kStart + 0.5));
  ASSERT_TRUE(b_->tick(kStart + 0.5));
  const JobId mine = submit(*a_, 1, kStart + 0.6);
  const JobId theirs = submit(*b_, 1, kStart + 0.6);
  const Seconds t = kStart + 1;
  ASSERT_TRUE(a_->tick(t));
  ASSERT_TRUE(b_->tick(t));
  ASSERT_TRUE(b_->run_pass(t));
  Result<std::vector<JobId>> a_started = a_->run_pass(t);
  ASSERT_TRUE(a_started) << a_started.error().message;
  EXPECT_EQ(*a_started, std::vector<JobId>{mine});
  EXPECT_EQ(a_->conflicts() + b_->conflicts(), 0);
  // A is first by name: the first half of the machine; B the second.
  ASSERT_EQ(stored(mine).nodes.size(), 1u);
  ASSERT_EQ(stored(theirs).nodes.size(), 1u);
  EXPECT_LT(stored(mine).nodes[0], 2);
  EXPECT_GE(stored(theirs).nodes[0], 2);
}

TEST_F(ControllerConcurrentTest, EachPlacesOnlyItsOwnJobsUntilTheOtherStopsCheckingIn) {
  // B ticks first: it holds the scheduler lease (the one that adopts).
  ASSERT_TRUE(b_->tick(kStart));
  ASSERT_TRUE(a_->tick(kStart));
  EXPECT_TRUE(b_->is_scheduler());
  const JobId left = submit(*a_, 2, kStart);
  // A stops (killed: it neither resigns nor checks in again). Its job waits while A's check-in
  // lasts, though B has every node free, and is B's once it has run out.
  Seconds t = kStart;
  for (; t < kStart + Controller::kCheckInTtl - 0.5; t += 0.25) {
    ASSERT_TRUE(b_->tick(t));
    if (b_->pass_due(t)) {
      ASSERT_TRUE(b_->run_pass(t));
    }
  }
  EXPECT_EQ(stored(left).state, JobState::kPending) << "B placed a job of a live controller";
  EXPECT_TRUE(launched(agents_b_).empty());
  for (; t < kStart + Controller::kCheckInTtl + 3; t += 0.25) {
    ASSERT_TRUE(b_->tick(t));
    if (b_->pass_due(t)) {
      ASSERT_TRUE(b_->run_pass(t));
    }
  }
  StoredJob adopted = stored(left);
  EXPECT_EQ(adopted.owner, "B");
  EXPECT_EQ(adopted.state, JobState::kRunning);
  EXPECT_EQ(launched(agents_b_), std::set<JobId>{left});
  // The log says who adopted which jobs, and why.
  Result<std::vector<StoredEvent>> events = store_b_->events(0, 100000);
  ASSERT_TRUE(events);
  int adoptions = 0;
  for (const StoredEvent& e : *events)
    if (e.kind == "adopt") {
      ++adoptions;
      EXPECT_NE(e.detail.find("B adopted pending jobs " + std::to_string(left)), std::string::npos)
          << e.detail;
    }
  EXPECT_EQ(adoptions, 1);
}

// A controller that dies between committing a start and reaching the agents (or between
// committing a cancel and sending the kill) leaves jobs that nothing else would run or end: the
// lease holder adopts them with its pending ones and sends their launches, and kills, again.
TEST_F(ControllerConcurrentTest, TheStartedJobsOfAControllerThatStoppedAreLaunchedAgain) {
  ASSERT_TRUE(b_->tick(kStart));
  ASSERT_TRUE(a_->tick(kStart));
  ASSERT_TRUE(b_->is_scheduler());
  const JobId running = submit(*a_, 2, kStart);
  const JobId stopping = submit(*a_, 2, kStart);
  Result<std::vector<JobId>> started = a_->run_pass(kStart + 0.1);
  ASSERT_TRUE(started) << started.error().message;
  ASSERT_EQ(std::set<JobId>(started->begin(), started->end()),
            (std::set<JobId>{running, stopping}));
  Result<std::vector<JobId>> cancelled = a_->cancel({stopping}, 0, admin_, kStart + 0.2);
  ASSERT_TRUE(cancelled) << cancelled.error().message;
  ASSERT_EQ(stored(stopping).state, JobState::kCompleting);
  // A stops here: what it sent (agents_a_) never reached an agent. B follows the store but does
  // not launch another controller's jobs while it lives.
  Seconds t = kStart + 0.25;
  for (; t < kStart + Controller::kCheckInTtl - 0.5; t += 0.25) ASSERT_TRUE(b_->tick(t));
  EXPECT_TRUE(agents_b_.launches.empty());
  for (; t < kStart + Controller::kCheckInTtl + 3; t += 0.25) ASSERT_TRUE(b_->tick(t));
  EXPECT_EQ(stored(running).owner, "B");
  EXPECT_EQ(stored(stopping).owner, "B");
  std::map<JobId, int> launched_attempt;
  for (const v1::LaunchRequest& l : agents_b_.launches) {
    EXPECT_FALSE(launched_attempt.count(l.job_id())) << "job " << l.job_id() << " launched twice";
    launched_attempt[l.job_id()] = l.attempt();
    // Sent again, it never takes its nodes from a job that has them by the time it arrives.
    EXPECT_TRUE(l.whole_nodes() && l.reconcile()) << "job " << l.job_id();
  }
  // A's own launches, sent as the nodes were given, clear them of leftovers.
  ASSERT_FALSE(agents_a_.launches.empty());
  for (const v1::LaunchRequest& l : agents_a_.launches)
    EXPECT_TRUE(l.whole_nodes() && !l.reconcile()) << "job " << l.job_id();
  EXPECT_EQ(launched_attempt, (std::map<JobId, int>{{running, 1}, {stopping, 1}}));
  std::set<JobId> killed;
  for (const v1::SignalRequest& s : agents_b_.signals)
    if (s.signal() == 0 && s.attempt() == 1) killed.insert(s.job_id());
  EXPECT_EQ(killed, std::set<JobId>{stopping});
  Result<std::vector<StoredEvent>> events = store_b_->events(0, 100000);
  ASSERT_TRUE(events);
  std::string adoption;
  for (const StoredEvent& e : *events)
    if (e.kind == "adopt") adoption = e.detail;
  EXPECT_NE(adoption.find("started jobs"), std::string::npos) << adoption;
  // The agents report, through B, and both end as they would have.
  for (JobId id : {running, stopping})
    ASSERT_TRUE(
        b_->report_exits(ended(id, stored(id).nodes, 0, id == stopping ? 15 : 0), admin_, t));
  EXPECT_EQ(stored(running).state, JobState::kCompleted);
  EXPECT_EQ(stored(stopping).state, JobState::kCancelled);
}

// The deaths of a stopping job's tasks are its kills, not failures: they cost no store call each
// and change neither its cause nor its reason. A real failure stops the job once, with its reason.
TEST_F(ControllerConcurrentTest, TheKilledTasksOfAStoppingJobAreNotFailures) {
  ASSERT_TRUE(a_->tick(kStart));
  const JobId cancelled = submit(*a_, 4, kStart);
  ASSERT_TRUE(a_->run_pass(kStart + 0.1));
  ASSERT_TRUE(a_->cancel({cancelled}, 0, admin_, kStart + 0.2));
  auto stop_calls = [&] { return store_a_->operation_counts()["stop_job"].calls; };
  const int64_t after_cancel = stop_calls();
  auto report = [&](JobId id, int exit_code, int signal, int nodes_from, Seconds now) {
    // The first task named ends as given, the others by the kill's SIGTERM.
    const std::vector<NodeId> nodes = stored(id).nodes;
    v1::ExitRequest request = ended(id, {nodes[nodes_from]}, exit_code, signal);
    request.MergeFrom(ended(id, {nodes.begin() + nodes_from + 1, nodes.end()}, 0, 15));
    ASSERT_TRUE(a_->report_exits(request, admin_, now));
  };
  report(cancelled, 0, 15, 0, kStart + 0.3);
  EXPECT_EQ(stop_calls(), after_cancel)
      << "a killed task of a cancelled job was taken as a failure";
  EXPECT_EQ(stored(cancelled).state, JobState::kCancelled);
  EXPECT_EQ(stored(cancelled).reason, "cancelled");

  const JobId failing = submit(*a_, 4, kStart + 1);
  ASSERT_TRUE(a_->run_pass(kStart + 1.1));
  ASSERT_EQ(stored(failing).state, JobState::kRunning);
  const size_t signals_before = agents_a_.signals.size();
  // One task fails with exit 3 and another dies by a signal in the same report: one stop.
  {
    const std::vector<NodeId> nodes = stored(failing).nodes;
    v1::ExitRequest request = ended(failing, {nodes[0]}, 3);
    request.MergeFrom(ended(failing, {nodes[1]}, 0, 9));
    ASSERT_TRUE(a_->report_exits(request, admin_, kStart + 1.2));
  }
  EXPECT_EQ(stop_calls(), after_cancel + 1);
  EXPECT_EQ(stored(failing).state, JobState::kCompleting);
  ASSERT_EQ(agents_a_.signals.size(), signals_before + 1);
  EXPECT_EQ(agents_a_.signals.back().job_id(), failing);
  // Its other tasks die of the kill: no further stop, and it ends FAILED with the first reason.
  report(failing, 0, 15, 2, kStart + 1.3);
  EXPECT_EQ(stop_calls(), after_cancel + 1);
  EXPECT_EQ(stored(failing).state, JobState::kFailed);
  EXPECT_NE(stored(failing).reason.find("3"), std::string::npos) << stored(failing).reason;
}

// A short job the other controller started and ended before this one read its start is followed
// from the log alone: the memory is not read again (a rebuild reads every node and the saved
// scheduler state), and this controller goes on placing its own jobs on the nodes it freed.
TEST_F(ControllerConcurrentTest, AForeignJobThatEndedBeforeItsStartWasReadNeedsNoRebuild) {
  ASSERT_TRUE(a_->tick(kStart + 0.5));
  ASSERT_TRUE(b_->tick(kStart + 0.5));
  const JobId theirs = submit(*b_, 4, kStart + 0.6);
  ASSERT_TRUE(b_->run_pass(kStart + 0.7));
  ASSERT_TRUE(b_->report_exits(ended(theirs, stored(theirs).nodes), admin_, kStart + 0.8));
  ASSERT_EQ(stored(theirs).state, JobState::kCompleted);
  auto rebuilds = [&] { return store_a_->operation_counts()["list_nodes"].calls; };
  const int64_t before = rebuilds();
  const JobId mine = submit(*a_, 4, kStart + 0.9);
  ASSERT_TRUE(a_->tick(kStart + 1));
  Result<std::vector<JobId>> started = a_->run_pass(kStart + 1);
  ASSERT_TRUE(started) << started.error().message;
  EXPECT_EQ(*started, std::vector<JobId>{mine});
  EXPECT_EQ(rebuilds(), before) << "A read the whole store again for B's ended job";
  EXPECT_EQ(a_->conflicts(), 0);
}

TEST(ControllerConcurrentConfig, AGangPolicyOrAnUnknownModeIsRefusedWithTheReason) {
  testing::TempDir dir;
  ClusterConfig config;
  config.machine = "mesh:2x2";
  config.store = "sqlite:" + (dir / "state.db");
  config.controller.policy = "dqt-ffapa";
  config.controller.allocation = AllocationMode::kConcurrent;
  auto store = open_store(config.store);
  ASSERT_TRUE(store);
  testing::RecordingAgents agents;
  auto c = Controller::open(config, **store, agents, 0, "A");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("allocation = \"concurrent\""), std::string::npos)
      << c.error().message;
  Result<ClusterConfig> parsed = parse_cluster_config(
      "[cluster]\nmachine = \"mesh:2x2\"\nstore = \"sqlite:x.db\"\n[controller]\nallocation = "
      "\"optimistic\"\n",
      "test.toml");
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().message.find("\"lease\" or \"concurrent\""), std::string::npos)
      << parsed.error().message;
  parsed = parse_cluster_config(
      "[cluster]\nmachine = \"mesh:2x2\"\nstore = \"sqlite:x.db\"\n[controller]\nallocation = "
      "\"concurrent\"\n",
      "test.toml");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->controller.allocation, AllocationMode::kConcurrent);
}

}  // namespace
}  // namespace trellis
