// The cluster config (daemon/config.h): the gang settings, what format_cluster_config writes
// reads back the same, and a wrong value is refused with its key named.
#include <gtest/gtest.h>

#include "daemon/config.h"

namespace trellis {
namespace {

constexpr const char* kMinimal =
    "[cluster]\nmachine = \"mesh:2x2\"\nstore = \"sqlite:state.db\"\n[controller]\n";

TEST(ClusterConfigTest, GangSettingsReadBackAsWritten) {
  Result<ClusterConfig> defaults = parse_cluster_config(kMinimal, "t.toml");
  ASSERT_TRUE(defaults) << defaults.error().message;
  EXPECT_TRUE(defaults->controller.idle_detection);
  EXPECT_FALSE(defaults->controller.kill_deadlocked);
  EXPECT_EQ(defaults->controller.activity_every, 4);

  ClusterConfig config = *defaults;
  config.controller.policy = "dqt-ffapa";
  config.controller.slice = 0.25;
  config.controller.tree_fanout = 4;
  config.controller.kill_deadlocked = true;
  config.controller.idle_detection = false;
  config.controller.activity_every = 1;
  Result<ClusterConfig> again = parse_cluster_config(format_cluster_config(config), "again.toml");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->controller.policy, "dqt-ffapa");
  EXPECT_DOUBLE_EQ(again->controller.slice, 0.25);
  EXPECT_EQ(again->controller.tree_fanout, 4);
  EXPECT_TRUE(again->controller.kill_deadlocked);
  EXPECT_FALSE(again->controller.idle_detection);
  EXPECT_EQ(again->controller.activity_every, 1);
}

TEST(ClusterConfigTest, WrongGangSettingsAreNamed) {
  for (const auto& [line, named] : std::vector<std::pair<std::string, std::string>>{
           {"idle_detection = \"no\"", "idle_detection"},
           {"deadlock = \"ignore\"", "deadlock"},
           {"switch_fanout = 65", "switch_fanout"},
           {"slice = 0", "slice"},
           {"activity_every = 0", "activity_every"},
           {"idle_detect = false", "idle_detect"}}) {
    Result<ClusterConfig> config = parse_cluster_config(kMinimal + line + "\n", "t.toml");
    ASSERT_FALSE(config) << line;
    EXPECT_NE(config.error().message.find(named), std::string::npos) << config.error().message;
    EXPECT_NE(config.error().message.find("t.toml"), std::string::npos) << config.error().message;
  }
}

TEST(ClusterConfigTest, TheBatchWaitReadsBackAndIsBounded) {
  Result<ClusterConfig> defaults = parse_cluster_config(kMinimal, "t.toml");
  ASSERT_TRUE(defaults) << defaults.error().message;
  EXPECT_DOUBLE_EQ(defaults->controller.batch_wait, 0.002);
  ClusterConfig config = *defaults;
  config.controller.batch_wait = 0;  // never wait
  Result<ClusterConfig> again = parse_cluster_config(format_cluster_config(config), "again.toml");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_DOUBLE_EQ(again->controller.batch_wait, 0);
  for (const std::string line : {"batch_wait = -0.001", "batch_wait = 2", "batch_wait = \"2ms\""}) {
    Result<ClusterConfig> wrong = parse_cluster_config(kMinimal + line + "\n", "t.toml");
    ASSERT_FALSE(wrong) << line;
    EXPECT_NE(wrong.error().message.find("batch_wait"), std::string::npos) << wrong.error().message;
  }
}

}  // namespace
}  // namespace trellis
