// Missed heartbeats: a node whose agent stays silent for heartbeat_misses intervals goes down,
// but the time the controller itself was not running (stopped, swapped out) does not count
// against the nodes. Found by `trellis bench chaos`: a controller resumed after a SIGSTOP of a
// few seconds declared every node down at its first tick and requeued every running job.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "daemon/controller.h"
#include "daemon_test_support.h"
#include "store/state_store.h"

namespace trellis {
namespace {

class HeartbeatTest : public ::testing::Test {
 protected:
  static constexpr Seconds kStart = 1000;

  void SetUp() override {
    ClusterConfig config;
    config.machine = "flat:2";
    config.store = "sqlite:" + (dir_ / "state.db");
    config.controller.heartbeat_interval = 1;
    config.controller.heartbeat_misses = 3;
    auto store = open_store(config.store);
    ASSERT_TRUE(store) << store.error().message;
    store_ = std::move(*store);
    auto controller = Controller::open(config, *store_, agents_, kStart);
    ASSERT_TRUE(controller) << controller.error().message;
    controller_ = std::move(*controller);
    register_agent(kStart, {});
    heartbeat(kStart);
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
  Status try_heartbeat(Seconds now) {
    v1::HeartbeatRequest beat;
    beat.set_address("fake:1");
    beat.add_nodes("n0");
    beat.add_nodes("n1");
    return controller_->heartbeat(beat, daemon_, now);
  }
  void heartbeat(Seconds now) { ASSERT_TRUE(try_heartbeat(now)); }
  // Ticks every quarter second, as trellisd's scheduler thread does, from `from` to `to`.
  void tick_until(Seconds from, Seconds to) {
    for (Seconds t = from; t <= to; t += 0.25) ASSERT_TRUE(controller_->tick(t));
  }
  int nodes_down() {
    Result<v1::ListNodesReply> nodes = controller_->list_nodes({});
    EXPECT_TRUE(nodes) << nodes.error().message;
    int down = 0;
    if (nodes)
      for (const v1::NodeInfo& node : nodes->nodes()) down += node.state() == v1::DOWN;
    return down;
  }

  testing::TempDir dir_;
  testing::RecordingAgents agents_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<Controller> controller_;
  Caller daemon_{static_cast<int>(getuid()), static_cast<int>(getgid())};
};

TEST_F(HeartbeatTest, NodesGoDownAfterTheirMissedHeartbeats) {
  tick_until(kStart + 0.25, kStart + 2.75);
  EXPECT_EQ(nodes_down(), 0);
  tick_until(kStart + 3.0, kStart + 3.5);
  EXPECT_EQ(nodes_down(), 2);
}

TEST_F(HeartbeatTest, TheControllersOwnStallDoesNotCountAgainstTheNodes) {
  tick_until(kStart + 0.25, kStart + 0.5);
  // Stopped for five seconds: more than the three-heartbeat window, with nothing heard.
  ASSERT_TRUE(controller_->tick(kStart + 5.5));
  EXPECT_EQ(nodes_down(), 0);
  // The agent, which kept retrying, is heard again at once.
  heartbeat(kStart + 5.75);
  tick_until(kStart + 5.75, kStart + 8.5);
  EXPECT_EQ(nodes_down(), 0);
  // A node that then stays silent still goes down, a window after it was last heard.
  tick_until(kStart + 8.75, kStart + 9.5);
  EXPECT_EQ(nodes_down(), 2);
}

// An agent that was away while its nodes were declared down may still run the processes of the
// attempt that was requeued then (the kill could not reach it). Found by `trellis bench chaos`:
// the nodes came back at the agent's next heartbeat and were given to another job while the old
// processes still ran there. A down node now comes back only through a registration, which
// lists the agent's tasks: those of ended attempts are killed, and their nodes stay down until
// the agent registers without them.
TEST_F(HeartbeatTest, ANodeComesBackOnlyWhenNothingOfAnEndedAttemptRunsThere) {
  v1::JobSpec spec;
  spec.set_nodes(2);
  spec.add_argv("true");
  spec.set_cwd("/tmp");
  Result<JobId> id = controller_->submit(spec, daemon_, kStart);
  ASSERT_TRUE(id) << id.error().message;
  ASSERT_TRUE(controller_->run_pass(kStart + 0.1));
  ASSERT_EQ(agents_.launches.size(), 1u);
  // The agent falls silent: its nodes go down and the job is requeued.
  tick_until(kStart + 0.25, kStart + 3.5);
  ASSERT_EQ(nodes_down(), 2);
  ASSERT_EQ(store_->job(*id)->state, JobState::kPending);
  // Back, it is asked to register rather than heard.
  Status beat = try_heartbeat(kStart + 4);
  ASSERT_FALSE(beat);
  EXPECT_EQ(beat.error().code, Error::Code::kNotFound);
  // It registers, still running attempt 1 on both nodes: killed, and the nodes stay down.
  std::vector<v1::TaskStatus> running;
  for (const char* node : {"n0", "n1"}) {
    v1::TaskStatus task;
    task.set_job_id(*id);
    task.set_attempt(1);
    task.set_node(node);
    task.set_running(true);
    running.push_back(task);
  }
  agents_.signals.clear();
  register_agent(kStart + 4, running);
  ASSERT_FALSE(agents_.signals.empty());
  for (const v1::SignalRequest& signal : agents_.signals) {
    EXPECT_EQ(signal.job_id(), *id);
    EXPECT_EQ(signal.attempt(), 1);
    EXPECT_EQ(signal.signal(), SIGKILL);
  }
  EXPECT_EQ(nodes_down(), 2);
  ASSERT_TRUE(controller_->run_pass(kStart + 4.1));
  EXPECT_EQ(agents_.launches.size(), 1u) << "the job was given nodes where it still runs";
  // Once the old processes are gone, the nodes come back and the job runs again.
  register_agent(kStart + 5, {});
  EXPECT_EQ(nodes_down(), 0);
  ASSERT_TRUE(controller_->run_pass(kStart + 5.1));
  ASSERT_EQ(agents_.launches.size(), 2u);
  EXPECT_EQ(agents_.launches[1].attempt(), 2);
}

}  // namespace
}  // namespace trellis
