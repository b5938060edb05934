// Missed heartbeats: a node whose agent stays silent for heartbeat_misses intervals goes down,
// but the time the controller itself was not running (stopped, swapped out) does not count
// against the nodes. Found by `trellis bench chaos`: a controller resumed after a SIGSTOP of a
// few seconds declared every node down at its first tick and requeued every running job.
#include <gtest/gtest.h>
#include <unistd.h>

#include "daemon/controller.h"
#include "daemon_test_support.h"
#include "store/state_store.h"

namespace trellis {
namespace {

class SilentAgents final : public AgentLink {
 public:
  void launch(const std::string&, const v1::LaunchRequest&) override {}
  void signal(const std::string&, const v1::SignalRequest&) override {}
};

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
    v1::RegisterRequest hello;
    hello.set_address("fake:1");
    hello.add_nodes("n0");
    hello.add_nodes("n1");
    ASSERT_TRUE(controller_->register_agent(hello, daemon_, kStart));
    heartbeat(kStart);
  }
  void heartbeat(Seconds now) {
    v1::HeartbeatRequest beat;
    beat.set_address("fake:1");
    beat.add_nodes("n0");
    beat.add_nodes("n1");
    ASSERT_TRUE(controller_->heartbeat(beat, daemon_, now));
  }
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
  SilentAgents agents_;
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

}  // namespace
}  // namespace trellis
