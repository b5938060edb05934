// Liveness that never lies (daemon/liveness.h): the controller pings its agents down the control
// tree; an agent that misses `heartbeat_misses` rounds is unresponsive (its nodes take no new job),
// and only after twice as many and a failed direct probe is it down (its jobs requeued). Rounds
// count, not time: a controller that was stopped or starved declares nobody down. After
// max_requeue node failures a job is held; a node that failed node_failure_drain jobs is drained.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>
#include <algorithm>

#include "daemon/controller.h"
#include "daemon/liveness.h"
#include "daemon_test_support.h"
#include "store/state_store.h"

namespace trellis {
namespace {

// --- The two levels, alone ----------------------------------------------------------------------

TEST(LivenessTest, UnresponsiveAfterTheMissesDownOnlyAfterTwiceAsManyAndAFailedProbe) {
  Liveness liveness(3);
  liveness.add("b:1", {4, 5}, 0);
  liveness.add("a:1", {0, 1}, 0);
  EXPECT_EQ(liveness.agents(), (std::vector<std::string>{"a:1", "b:1"}));  // in node order
  auto kinds = [&] {
    std::vector<std::pair<Liveness::Change::Kind, std::string>> out;
    for (const Liveness::Change& c : liveness.take_changes()) out.emplace_back(c.kind, c.agent);
    return out;
  };
  std::vector<std::string> both = {"a:1", "b:1"};
  for (int round = 1; round <= 2; ++round) liveness.round(both, {"b:1"}, round);
  EXPECT_TRUE(kinds().empty());
  liveness.round(both, {"b:1"}, 3);
  EXPECT_EQ(kinds(), (std::vector<std::pair<Liveness::Change::Kind, std::string>>{
                         {Liveness::Change::Kind::kUnresponsive, "b:1"}}));
  EXPECT_EQ(liveness.to_probe(), std::vector<std::string>{"b:1"});
  // Many more missed rounds, but no probe has failed: not down.
  for (int round = 4; round <= 10; ++round) liveness.round(both, {"b:1"}, round);
  EXPECT_TRUE(kinds().empty());
  liveness.probed("b:1", false, "no answer within 2 s", 10.5);
  EXPECT_TRUE(liveness.to_probe().empty());
  liveness.round(both, {"b:1"}, 11);
  std::vector<Liveness::Change> changes = liveness.take_changes();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].kind, Liveness::Change::Kind::kDown);
  EXPECT_EQ(changes[0].nodes, (std::vector<NodeId>{4, 5}));
  // The reason says when it was last heard and what was tried.
  EXPECT_NE(changes[0].why.find("last heard 11.0 s ago"), std::string::npos) << changes[0].why;
  EXPECT_NE(changes[0].why.find("11 pings"), std::string::npos) << changes[0].why;
  EXPECT_NE(changes[0].why.find("no answer within 2 s"), std::string::npos) << changes[0].why;
  // Down is said once; a registration brings it back.
  liveness.round(both, {"b:1"}, 12);
  EXPECT_TRUE(kinds().empty());
  liveness.add("b:1", {4, 5}, 13);
  EXPECT_TRUE(liveness.to_probe().empty());
}

TEST(LivenessTest, AnAgentHeardAgainIsResponsiveAtOnceAndAProbeAnsweredClearsIt) {
  Liveness liveness(2);
  liveness.add("a:1", {0}, 0);
  liveness.round({"a:1"}, {"a:1"}, 1);
  liveness.round({"a:1"}, {"a:1"}, 2);
  ASSERT_EQ(liveness.take_changes().size(), 1u);  // unresponsive
  liveness.round({"a:1"}, {}, 3);
  std::vector<Liveness::Change> back = liveness.take_changes();
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].kind, Liveness::Change::Kind::kResponsive);
  // A probe that is answered counts as hearing it.
  liveness.round({"a:1"}, {"a:1"}, 4);
  liveness.round({"a:1"}, {"a:1"}, 5);
  ASSERT_EQ(liveness.take_changes().size(), 1u);
  liveness.probed("a:1", true, "", 5.5);
  EXPECT_EQ(liveness.last_heard("a:1"), 5.5);
  for (int round = 6; round <= 9; ++round) liveness.round({"a:1"}, {"a:1"}, round);
  for (const Liveness::Change& c : liveness.take_changes())
    EXPECT_NE(c.kind, Liveness::Change::Kind::kDown) << "a probe was answered since";
}

TEST(LivenessTest, ANodeRegisteredByAnotherAgentMovesToIt) {
  Liveness liveness(3);
  liveness.add("a:1", {0, 1, 2}, 0);
  liveness.add("b:1", {2, 3}, 0);
  std::map<std::string, std::pair<std::vector<NodeId>, Seconds>> heard = liveness.heard();
  EXPECT_EQ(heard["a:1"].first, (std::vector<NodeId>{0, 1}));
  EXPECT_EQ(heard["b:1"].first, (std::vector<NodeId>{2, 3}));
  liveness.add("c:1", {0, 1}, 0);
  EXPECT_EQ(liveness.agents(), (std::vector<std::string>{"c:1", "b:1"}));
}

TEST(LivenessTest, RegistrationIsAskedAtMostEveryTwoSecondsUntilItComes) {
  Liveness liveness(3);
  liveness.add("a:1", {0}, 0);
  liveness.want_registration("a:1");
  EXPECT_EQ(liveness.registration_wanted(10), std::vector<std::string>{"a:1"});
  EXPECT_TRUE(liveness.registration_wanted(11).empty());
  EXPECT_EQ(liveness.registration_wanted(12.5), std::vector<std::string>{"a:1"});
  liveness.add("a:1", {0}, 13);
  EXPECT_TRUE(liveness.registration_wanted(20).empty());
}

// --- The controller acting on it ----------------------------------------------------------------

class HeartbeatTest : public ::testing::Test {
 protected:
  static constexpr Seconds kStart = 1000;

  void SetUp() override { open(/*max_requeue=*/3, /*drain_after=*/3); }
  void open(int max_requeue, int drain_after) {
    controller_.reset();
    store_.reset();
    ClusterConfig config;
    config.machine = "flat:2";
    config.store = "sqlite:" + (dir_ / ("state-" + std::to_string(++opened_) + ".db"));
    config.controller.heartbeat_interval = 1;
    config.controller.heartbeat_misses = 3;
    config.controller.max_requeue = max_requeue;
    config.controller.node_failure_drain = drain_after;
    auto store = open_store(config.store);
    ASSERT_TRUE(store) << store.error().message;
    store_ = std::move(*store);
    auto controller = Controller::open(config, *store_, agents_, kStart);
    ASSERT_TRUE(controller) << controller.error().message;
    controller_ = std::move(*controller);
    register_agent(kStart, {});
    ASSERT_TRUE(controller_->tick(kStart));  // takes the scheduler lease
  }
  // The agent registers (again), saying which tasks it runs.
  void register_agent(Seconds now, const std::vector<v1::TaskStatus>& running) {
    v1::RegisterRequest hello;
    hello.set_address("fake:1");
    hello.add_nodes("n0");
    hello.add_nodes("n1");
    for (const v1::TaskStatus& task : running) *hello.add_tasks() = task;
    ASSERT_TRUE(controller_->register_agent(hello, daemon_, now));
  }
  // One ping round per second from `from` to `to`, answered or not, with a tick after each.
  void rounds(Seconds from, Seconds to, bool answered) {
    Liveness& liveness = controller_->liveness();
    for (Seconds t = from; t <= to; t += 1) {
      liveness.round({"fake:1"},
                     answered ? std::vector<std::string>{} : std::vector<std::string>{"fake:1"}, t);
      for (const std::string& agent : liveness.to_probe()) liveness.probed(agent, false, "", t);
      ASSERT_TRUE(controller_->tick(t + 0.5));
    }
  }
  int nodes_in(v1::NodeState state) {
    Result<v1::ListNodesReply> nodes = controller_->list_nodes({});
    EXPECT_TRUE(nodes) << nodes.error().message;
    int count = 0;
    if (nodes)
      for (const v1::NodeInfo& node : nodes->nodes()) count += node.state() == state;
    return count;
  }
  JobId submit_both_nodes() {
    v1::JobSpec spec;
    spec.set_nodes(2);
    spec.add_argv("true");
    spec.set_cwd("/tmp");
    Result<JobId> id = controller_->submit(spec, daemon_, kStart);
    EXPECT_TRUE(id) << id.error().message;
    return id ? *id : 0;
  }
  std::vector<v1::TaskStatus> running_on_both(JobId id, int attempt) {
    std::vector<v1::TaskStatus> running;
    for (const char* node : {"n0", "n1"}) {
      v1::TaskStatus task;
      task.set_job_id(id);
      task.set_attempt(attempt);
      task.set_node(node);
      task.set_running(true);
      running.push_back(task);
    }
    return running;
  }

  testing::TempDir dir_;
  int opened_ = 0;

  // The agent, restarted at a new address ("fake:2"), registers its nodes with another controller
  // on this store (a restarted agent registers with the first in its list that answers).
  void register_elsewhere(Seconds now) {
    ClusterConfig config;
    config.machine = "flat:2";
    config.store = "sqlite:" + (dir_ / ("state-" + std::to_string(opened_) + ".db"));
    auto other_store = open_store(config.store);
    ASSERT_TRUE(other_store) << other_store.error().message;
    testing::RecordingAgents other_agents;
    auto other = Controller::open(config, **other_store, other_agents, now, "other");
    ASSERT_TRUE(other) << other.error().message;
    v1::RegisterRequest hello;
    hello.set_address("fake:2");
    hello.add_nodes("n0");
    hello.add_nodes("n1");
    ASSERT_TRUE((*other)->register_agent(hello, daemon_, now));
    EXPECT_FALSE((*other)->is_scheduler());
  }
  testing::RecordingAgents agents_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<Controller> controller_;
  Caller daemon_{static_cast<int>(getuid()), static_cast<int>(getgid())};
};

TEST_F(HeartbeatTest, NodesGoDownOnlyAfterTheMissedRoundsAndAFailedProbe) {
  rounds(kStart + 1, kStart + 5, /*answered=*/false);
  EXPECT_EQ(nodes_in(v1::DOWN), 0);  // unresponsive only
  rounds(kStart + 6, kStart + 6, false);
  EXPECT_EQ(nodes_in(v1::DOWN), 2);
  Result<v1::ListNodesReply> nodes = controller_->list_nodes({});
  ASSERT_TRUE(nodes);
  EXPECT_NE(nodes->nodes(0).reason().find("not responding: agent fake:1 last heard"),
            std::string::npos)
      << nodes->nodes(0).reason();
}

TEST_F(HeartbeatTest, TheControllersOwnStallDoesNotCountAgainstTheNodes) {
  // Ten seconds without a round (the controller was stopped): nobody is down.
  for (Seconds t = kStart; t <= kStart + 10; t += 0.25) ASSERT_TRUE(controller_->tick(t));
  EXPECT_EQ(nodes_in(v1::DOWN), 0);
  // Rounds again, answered: still up; then silent rounds take it down as usual.
  rounds(kStart + 11, kStart + 14, true);
  EXPECT_EQ(nodes_in(v1::DOWN), 0);
  rounds(kStart + 15, kStart + 20, false);
  EXPECT_EQ(nodes_in(v1::DOWN), 2);
}

TEST_F(HeartbeatTest, AnUnresponsiveAgentsNodesTakeNoNewJobUntilItAnswers) {
  rounds(kStart + 1, kStart + 3, false);  // unresponsive, not down
  JobId id = submit_both_nodes();
  ASSERT_TRUE(controller_->run_pass(kStart + 3.6));
  EXPECT_TRUE(agents_.launches.empty());
  EXPECT_EQ(store_->job(id)->state, JobState::kPending);
  rounds(kStart + 4, kStart + 4, true);  // answers again
  ASSERT_TRUE(controller_->run_pass(kStart + 4.6));
  ASSERT_EQ(agents_.launches.size(), 1u);
  EXPECT_EQ(agents_.launches[0].nodes_size(), 2);  // one message for the whole job
}

// An agent that was away while its nodes were declared down may still run the processes of the
// attempt that was requeued then (the kill could not reach it). Found by `trellis bench chaos`:
// the nodes came back and were given to another job while the old processes still ran there. A
// down node comes back only through a registration, which lists the agent's tasks: those of ended
// attempts are killed, and their nodes stay down until the agent registers without them.
TEST_F(HeartbeatTest, ANodeComesBackOnlyWhenNothingOfAnEndedAttemptRunsThere) {
  JobId id = submit_both_nodes();
  ASSERT_TRUE(controller_->run_pass(kStart + 0.1));
  ASSERT_EQ(agents_.launches.size(), 1u);
  // The agent falls silent: its nodes go down and the job is requeued.
  rounds(kStart + 1, kStart + 6, false);
  ASSERT_EQ(nodes_in(v1::DOWN), 2);
  ASSERT_EQ(store_->job(id)->state, JobState::kPending);
  EXPECT_EQ(store_->job(id)->node_failures, 1);
  // Back: it is asked in the pings to register.
  EXPECT_EQ(controller_->liveness().registration_wanted(kStart + 7),
            std::vector<std::string>{"fake:1"});
  // It registers, still running attempt 1 on both nodes: killed (one signal for the attempt),
  // and the nodes stay down.
  agents_.signals.clear();
  register_agent(kStart + 7, running_on_both(id, 1));
  ASSERT_EQ(agents_.signals.size(), 1u);
  EXPECT_EQ(agents_.signals[0].job_id(), id);
  EXPECT_EQ(agents_.signals[0].attempt(), 1);
  EXPECT_EQ(agents_.signals[0].signal(), SIGKILL);
  EXPECT_EQ(nodes_in(v1::DOWN), 2);
  ASSERT_TRUE(controller_->run_pass(kStart + 7.1));
  EXPECT_EQ(agents_.launches.size(), 1u) << "the job was given nodes where it still runs";
  // Asked again, once the old processes are gone it registers without them: the job runs again.
  EXPECT_EQ(controller_->liveness().registration_wanted(kStart + 9.5),
            std::vector<std::string>{"fake:1"});
  register_agent(kStart + 10, {});
  EXPECT_EQ(nodes_in(v1::DOWN), 0);
  ASSERT_TRUE(controller_->run_pass(kStart + 10.1));
  ASSERT_EQ(agents_.launches.size(), 2u);
  EXPECT_EQ(agents_.launches[1].attempt(), 2);
}

// No requeue forever: the job is held at its max_requeue-th node-failure requeue, with a reason
// naming the node; the node that failed that many jobs is drained with a reason; `release` lets
// the job go.
// The agent the scheduler declared down comes back on a new address and registers with another
// controller (a restarted agent registers with the first in its list that answers). The scheduler
// learns it from the log: the nodes are in service again for its passes, and the new agent is
// pinged. (Found by a chaos run: the scheduler kept the nodes out of service, having last found
// them unresponsive, and never pinged the new agent, which registered again every 10 s.)
TEST_F(HeartbeatTest, NodesDownHereThatComeBackThroughAnotherControllerTakeJobsAgain) {
  rounds(kStart + 1, kStart + 6, /*answered=*/false);
  ASSERT_EQ(nodes_in(v1::DOWN), 2);
  ASSERT_NO_FATAL_FAILURE(register_elsewhere(kStart + 7));
  const JobId id = submit_both_nodes();
  ASSERT_TRUE(controller_->tick(kStart + 7.5));
  EXPECT_EQ(nodes_in(v1::DOWN), 0);
  Result<std::vector<JobId>> started = controller_->run_pass(kStart + 7.5);
  ASSERT_TRUE(started) << started.error().message;
  EXPECT_EQ(*started, std::vector<JobId>{id});
  ASSERT_FALSE(agents_.launches.empty());
  const std::vector<std::string> pinged = controller_->liveness().agents();
  EXPECT_NE(std::find(pinged.begin(), pinged.end(), "fake:2"), pinged.end());
}

// An agent restarted (a new address) before its nodes were found down registers with another
// controller: this one pings and launches at the new address, not the dead one.
TEST_F(HeartbeatTest, AnAgentThatComesBackAtANewAddressThroughAnotherControllerIsFollowed) {
  ASSERT_EQ(nodes_in(v1::DOWN), 0);
  ASSERT_NO_FATAL_FAILURE(register_elsewhere(kStart + 1));
  ASSERT_TRUE(controller_->tick(kStart + 1.5));
  const std::vector<std::string> pinged = controller_->liveness().agents();
  EXPECT_EQ(pinged, std::vector<std::string>{"fake:2"});
}

// An agent that registers again listing nothing of a job that runs on its nodes may have lost the
// launch (it restarted before starting the tasks): the launch is sent again, whole (a batch job's
// with its script), as a copy to reconcile, which never takes the nodes from a job that has them
// by the time it arrives. An agent that lists the job's tasks gets nothing again.
TEST_F(HeartbeatTest, ARegistrationThatListsNothingOfARunningJobGetsItsLaunchAgainToReconcile) {
  v1::JobSpec spec;
  spec.set_nodes(2);
  spec.add_argv("job.sh");
  spec.set_cwd("/tmp");
  const std::string script = "#!/bin/sh\necho from the script\n";
  spec.set_script(script);
  Result<JobId> id = controller_->submit(spec, daemon_, kStart);
  ASSERT_TRUE(id) << id.error().message;
  Result<std::vector<JobId>> started = controller_->run_pass(kStart + 0.5);
  ASSERT_TRUE(started) << started.error().message;
  ASSERT_EQ(*started, std::vector<JobId>{*id});
  ASSERT_EQ(agents_.launches.size(), 1u);
  EXPECT_TRUE(agents_.launches[0].whole_nodes());
  EXPECT_FALSE(agents_.launches[0].reconcile());
  EXPECT_EQ(agents_.launches[0].script(), script);
  register_agent(kStart + 1, {});
  ASSERT_EQ(agents_.launches.size(), 2u);
  const v1::LaunchRequest& again = agents_.launches[1];
  EXPECT_EQ(again.job_id(), *id);
  EXPECT_EQ(again.attempt(), 1);
  EXPECT_TRUE(again.whole_nodes());
  EXPECT_TRUE(again.reconcile());
  EXPECT_EQ(again.script(), script);
  register_agent(kStart + 2, running_on_both(*id, 1));
  EXPECT_EQ(agents_.launches.size(), 2u);
}

TEST_F(HeartbeatTest, AJobIsHeldAfterMaxRequeueAndANodeThatFailsJobsIsDrained) {
  open(/*max_requeue=*/2, /*drain_after=*/2);
  JobId id = submit_both_nodes();
  Seconds t = kStart;
  for (int attempt = 1; attempt <= 2; ++attempt) {
    ASSERT_TRUE(controller_->run_pass(t + 0.1));
    ASSERT_EQ(store_->job(id)->state, JobState::kRunning) << "attempt " << attempt;
    ASSERT_EQ(store_->job(id)->attempt, attempt);
    rounds(t + 1, t + 6, false);
    t += 7;
    ASSERT_NE(store_->job(id)->state, JobState::kRunning) << "attempt " << attempt;
    register_agent(t, {});  // back, with nothing running
  }
  StoredJob held = *store_->job(id);
  EXPECT_EQ(held.state, JobState::kPending);
  EXPECT_EQ(held.attempt, 2);
  EXPECT_EQ(held.node_failures, 2);
  EXPECT_NE(held.hold.find("max_requeue = 2"), std::string::npos) << held.hold;
  EXPECT_NE(held.reason.find("nodes n[0-1] failed: "), std::string::npos) << held.reason;
  EXPECT_NE(held.reason.find("agent fake:1"), std::string::npos) << held.reason;
  // Drained, with the jobs it failed.
  Result<std::vector<StoredNode>> nodes = store_->list_nodes();
  ASSERT_TRUE(nodes);
  for (const StoredNode& node : *nodes) {
    EXPECT_TRUE(node.drained) << node.name;
    EXPECT_NE(
        node.reason.find("failed 2 jobs (" + std::to_string(id) + ", " + std::to_string(id) + ";"),
        std::string::npos)
        << node.reason;
  }
  // Held: no attempt beyond the limit, even with the nodes back in service.
  v1::DrainRequest resume;
  resume.set_nodelist("n[0-1]");
  resume.set_resume(true);
  ASSERT_TRUE(controller_->drain(resume, daemon_, t));
  ASSERT_TRUE(controller_->run_pass(t + 0.1));
  EXPECT_EQ(store_->job(id)->attempt, 2);
  EXPECT_EQ(store_->job(id)->state, JobState::kPending);
  v1::ListJobsRequest listed;
  Result<v1::ListJobsReply> jobs = controller_->list_jobs(listed, t);
  ASSERT_TRUE(jobs);
  ASSERT_EQ(jobs->jobs_size(), 1);
  EXPECT_EQ(jobs->jobs(0).hold(), held.hold);
  // Another user may not release it; its owner may.
  Caller stranger{static_cast<int>(getuid()) + 4242, 4242};
  EXPECT_FALSE(controller_->release({id}, stranger, t));
  Result<std::vector<JobId>> released = controller_->release({id}, daemon_, t + 0.2);
  ASSERT_TRUE(released);
  EXPECT_EQ(*released, std::vector<JobId>{id});
  ASSERT_TRUE(controller_->run_pass(t + 0.3));
  EXPECT_EQ(store_->job(id)->state, JobState::kRunning);
  EXPECT_EQ(store_->job(id)->attempt, 3);
  // A second release of a job not held changes nothing.
  EXPECT_TRUE(controller_->release({id}, daemon_, t + 0.4)->empty());
}

// Callers take `now` before they get the controller's lock: a pass that took it just before an
// exit report committed (at a later `now`) still starts the dependent job no earlier than its
// dependency's end (SlurmLiveTest saw afterok start a few ms before the end it waited for).
TEST_F(HeartbeatTest, ADependentJobNeverStartsBeforeItsDependencyEnded) {
  JobId first = submit_both_nodes();
  ASSERT_TRUE(controller_->run_pass(kStart + 0.1));
  ASSERT_EQ(store_->job(first)->state, JobState::kRunning);
  v1::JobSpec spec;
  spec.set_nodes(2);
  spec.add_argv("true");
  spec.set_cwd("/tmp");
  spec.set_dependency("afterok:" + std::to_string(first));
  Result<JobId> second = controller_->submit(spec, daemon_, kStart + 0.2);
  ASSERT_TRUE(second) << second.error().message;
  v1::ExitRequest report;
  for (v1::TaskStatus& task : running_on_both(first, 1)) {
    task.set_running(false);
    *report.add_tasks() = task;
  }
  ASSERT_TRUE(controller_->report_exits(report, daemon_, kStart + 5));
  ASSERT_EQ(store_->job(first)->state, JobState::kCompleted);
  ASSERT_TRUE(controller_->run_pass(kStart + 4.9));  // its `now` taken before the report came
  StoredJob started = *store_->job(*second);
  ASSERT_EQ(started.state, JobState::kRunning) << started.reason;
  EXPECT_GE(started.start_time, store_->job(first)->end_time);
}

}  // namespace
}  // namespace trellis
