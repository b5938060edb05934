#include "daemon/node_share.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>

#include "daemon_test_support.h"

namespace trellis {
namespace {

using testing::TempDir;

v1::LaunchRequest share_launch(const std::vector<std::string>& grants,
                               const std::vector<std::string>& types) {
  v1::LaunchRequest request;
  request.set_job_id(7);
  request.set_attempt(1);
  for (size_t i = 0; i < grants.size(); ++i) {
    request.add_nodes("n" + std::to_string(i));
    request.add_node_grants(grants[i]);
    request.add_node_types(types[i]);
  }
  return request;
}

std::string share_env_value(const std::vector<std::string>& env, const std::string& name) {
  for (const std::string& entry : env)
    if (entry.rfind(name + "=", 0) == 0) return entry.substr(name.size() + 1);
  return "(unset)";
}

TEST(NodeShareTest, ALaunchWithoutGrantsHasNoShare) {
  v1::LaunchRequest request;
  request.add_nodes("n0");
  Result<std::optional<NodeShare>> share = node_share(request, 0);
  ASSERT_TRUE(share);
  EXPECT_FALSE(share->has_value());
  // A node given whole on a machine of featureless nodes: "" for it.
  v1::LaunchRequest whole = share_launch({"", "1:c=0"}, {"", "cores=2"});
  ASSERT_TRUE(node_share(whole, 0));
  EXPECT_FALSE(node_share(whole, 0)->has_value());
  EXPECT_TRUE(node_share(whole, 1)->has_value());
}

TEST(NodeShareTest, CoresBecomeTheirHardwareThreadsAndMemoryItsBytes) {
  v1::LaunchRequest request = share_launch({"3:c=1,3;m=2048"}, {"cores=4,threads=2,mem=8G"});
  Result<std::optional<NodeShare>> share = node_share(request, 0);
  ASSERT_TRUE(share) << share.error().message;
  ASSERT_TRUE(share->has_value());
  EXPECT_EQ(share_cpus(**share), (std::vector<int>{2, 3, 6, 7}));
  NodeLimits limits = share_limits(**share);
  EXPECT_EQ(limits.cpus, (std::vector<int>{2, 3, 6, 7}));
  EXPECT_EQ(limits.memory_bytes, int64_t{2048} << 20);
  EXPECT_TRUE(limits.memory_nodes.empty());  // the agent's own: the host's numbering
  EXPECT_TRUE(limits.denied_devices.empty());
  std::vector<std::string> env = {"SLURM_CPUS_ON_NODE=64", "PATH=/bin"};
  set_share_variables(**share, env);
  EXPECT_EQ(share_env_value(env, "SLURM_CPUS_ON_NODE"), "4");  // replaced, not added twice
  EXPECT_EQ(
      std::count_if(env.begin(), env.end(),
                    [](const std::string& e) { return e.rfind("SLURM_CPUS_ON_NODE=", 0) == 0; }),
      1);
  EXPECT_EQ(share_env_value(env, "SLURM_MEM_PER_NODE"), "2048");
  EXPECT_EQ(share_env_value(env, "TRELLIS_CPUS"), "2-3,6-7");
  // No GPU was given: none of the GPU variables is set (a program would take "" for no GPU).
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "SLURM_JOB_GPUS",
                           "SLURM_GPUS_ON_NODE", "CUDA_DEVICE_ORDER"})
    EXPECT_EQ(share_env_value(env, name), "(unset)") << name;
}

TEST(NodeShareTest, GpusAreNamedGloballyAndAsTheJobSeesThem) {
  v1::LaunchRequest request = share_launch({"0:c=0;g=1,3"}, {"cores=8,gpus=a100:4"});
  Result<std::optional<NodeShare>> share = node_share(request, 0);
  ASSERT_TRUE(share && share->has_value());
  std::vector<std::string> env;
  set_share_variables(**share, env);
  EXPECT_EQ(share_env_value(env, "SLURM_JOB_GPUS"), "1,3");
  EXPECT_EQ(share_env_value(env, "SLURM_STEP_GPUS"), "1,3");
  EXPECT_EQ(share_env_value(env, "SLURM_GPUS_ON_NODE"), "2");
  EXPECT_EQ(share_env_value(env, "CUDA_VISIBLE_DEVICES"), "0,1");
  EXPECT_EQ(share_env_value(env, "ROCR_VISIBLE_DEVICES"), "0,1");
  EXPECT_EQ(share_env_value(env, "CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
}

// The GPUs not given are denied by their device files' numbers, only those that exist here.
TEST(NodeShareTest, GpusNotGivenAreDeniedByTheirDeviceNumbers) {
  TempDir dir;
  std::string files;
  for (int i = 0; i < 3; ++i) {
    const std::string path = dir / ("gpu" + std::to_string(i));
    if (::geteuid() == 0) {
      ASSERT_EQ(::mknod(path.c_str(), S_IFCHR | 0600, makedev(1, 7 + i)), 0);
    }
    files += (i > 0 ? "+" : "") + path;
  }
  if (::geteuid() != 0) GTEST_SKIP() << "not root: cannot make device files";
  v1::LaunchRequest request =
      share_launch({"0:c=0;g=1"}, {"cores=2,gpus=4,gpu_files=" + files + "+" + (dir / "absent")});
  Result<std::optional<NodeShare>> share = node_share(request, 0);
  ASSERT_TRUE(share) << share.error().message;
  ASSERT_TRUE(share->has_value());
  NodeLimits limits = share_limits(**share);
  ASSERT_EQ(limits.denied_devices.size(), 2u);  // gpu0 and gpu2; "absent" does not exist
  EXPECT_EQ(limits.denied_devices[0].path, dir / "gpu0");
  EXPECT_EQ(limits.denied_devices[0].number, (DeviceNumber{'c', 1, 7}));
  EXPECT_EQ(limits.denied_devices[1].number, (DeviceNumber{'c', 1, 9}));
}

TEST(NodeShareTest, MalformedGrantsAreRefusedNamingTheNode) {
  auto error_of = [](const v1::LaunchRequest& request) {
    Result<std::optional<NodeShare>> share = node_share(request, 0);
    return share ? std::string("accepted") : share.error().message;
  };
  EXPECT_NE(error_of(share_launch({"0:c=5"}, {"cores=4"})).find("core 5 is not one of its 4"),
            std::string::npos);
  EXPECT_NE(error_of(share_launch({"0:c=0;g=2"}, {"cores=4,gpus=2"})).find("GPU 2"),
            std::string::npos);
  EXPECT_NE(error_of(share_launch({"0:x=1"}, {"cores=4"})).find("node_grants of n0"),
            std::string::npos);
  EXPECT_NE(error_of(share_launch({"0:c=0"}, {"cores=banana"})).find("node_types of n0"),
            std::string::npos);
  v1::LaunchRequest short_list = share_launch({"0:c=0"}, {"cores=4"});
  short_list.add_nodes("n1");  // two nodes, one grant
  EXPECT_NE(error_of(short_list).find("1 grants and 1 node types for 2 nodes"), std::string::npos);
}

}  // namespace
}  // namespace trellis
