// The node names an agent is given to serve (`--nodes`): hostlists, and their limits.
#include <gtest/gtest.h>

#include "daemon/agent.h"

namespace trellis {
namespace {

TEST(AgentNodeNamesTest, HostlistsWithSeveralPrefixes) {
  Result<std::vector<std::string>> names = parse_node_names("n[0-2,5],gpu1,login");
  ASSERT_TRUE(names) << names.error().message;
  EXPECT_EQ(*names, (std::vector<std::string>{"n0", "n1", "n2", "n5", "gpu1", "login"}));
  EXPECT_FALSE(parse_node_names("n[0-3],n2"));
  EXPECT_FALSE(parse_node_names("n[3-1]"));
  EXPECT_FALSE(parse_node_names(""));
}

// Found by fuzz_node_names: "n[0-1048575]" made a million names, and lists of many names or many
// parts ran at under 100 inputs a second. One agent serves at most kMaxAgentNodes names.
TEST(AgentNodeNamesTest, AtMostTheLimitOfNames) {
  EXPECT_EQ(parse_node_names("n[0-4095]")->size(), kMaxAgentNodes);
  Result<std::vector<std::string>> too_many = parse_node_names("n[0-4095],login");
  ASSERT_FALSE(too_many);
  EXPECT_NE(too_many.error().message.find("4096"), std::string::npos) << too_many.error().message;
  EXPECT_FALSE(parse_node_names("n[0-1048575]"));
  EXPECT_FALSE(parse_node_names("n[262144]"));        // beyond kMaxNodeNumber
  EXPECT_TRUE(parse_node_names("n[106496-110591]"));  // torus:48x48x48's last 4,096
  EXPECT_EQ(*parse_node_names("n[65535]"), std::vector<std::string>{"n65535"});
  std::string many_parts;
  for (int i = 0; i <= 4096; ++i) many_parts += (i ? ",x" : "x") + std::to_string(i);
  EXPECT_FALSE(parse_node_names(many_parts));
  // A name without brackets is taken as written.
  EXPECT_EQ(*parse_node_names("n02,n2"), (std::vector<std::string>{"n02", "n2"}));
}

}  // namespace
}  // namespace trellis
