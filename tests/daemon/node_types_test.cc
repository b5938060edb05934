// Node types in the cluster config ([[nodetype]], daemon/config.h and daemon/node_types.h): read
// back as written, wrong ones refused with the key named, and a submission that no node of its
// partition can ever hold refused with the reason, while one that fits is stored with what it
// asked (the store's resources column, read back to the same request).
#include <unistd.h>

#include <gtest/gtest.h>

#include "daemon/config.h"
#include "daemon/controller.h"
#include "daemon/node_types.h"
#include "daemon_test_support.h"
#include "store/state_store.h"

namespace trellis {
namespace {

constexpr const char* kMinimal =
    "[cluster]\nmachine = \"flat:8\"\nstore = \"sqlite:state.db\"\n[controller]\n";
constexpr const char* kTwoTypes =
    "[[nodetype]]\nname = \"gpu\"\nnodes = \"n[0-1]\"\n"
    "resources = \"sockets=2,cores=8,mem=16G,gpus=a100:4,features=ib\"\n"
    "[[nodetype]]\nname = \"cpu\"\nnodes = \"\"\nresources = \"cores=4,mem=8G\"\n";

TEST(NodeTypesTest, ReadBackAsWrittenAndWrongOnesAreNamed) {
  Result<ClusterConfig> config = parse_cluster_config(std::string(kMinimal) + kTwoTypes, "t.toml");
  ASSERT_TRUE(config) << config.error().message;
  ASSERT_EQ(config->node_types.size(), 2u);
  EXPECT_EQ(config->node_types[0].inventory.cores(), 8);
  EXPECT_EQ(config->node_types[0].inventory.gpus_of_type("a100"), 4);
  Result<ClusterConfig> again = parse_cluster_config(format_cluster_config(*config), "again");
  ASSERT_TRUE(again) << again.error().message;
  ASSERT_EQ(again->node_types.size(), 2u);
  EXPECT_EQ(again->node_types[0].inventory, config->node_types[0].inventory);
  EXPECT_EQ(again->node_types[1].nodes, "");

  for (const auto& [text, named] : std::vector<std::pair<std::string, std::string>>{
           {"[[nodetype]]\nname = \"a\"\nresources = \"cores=four\"\n", "cores='four'"},
           {"[[nodetype]]\nname = \"a\"\nresources = \"cores=4\"\ncolour = 1\n", "colour"},
           {"[[nodetype]]\nname = \"a b\"\nresources = \"cores=4\"\n", "must be a word"},
           {"[[nodetype]]\nname = \"a\"\nresources = \"cores=4\"\n"
            "[[nodetype]]\nname = \"b\"\nresources = \"cores=2\"\n",
            "more than one [[nodetype]] with nodes \"\""}}) {
    Result<ClusterConfig> bad = parse_cluster_config(std::string(kMinimal) + text, "t.toml");
    ASSERT_FALSE(bad) << text;
    EXPECT_NE(bad.error().message.find(named), std::string::npos) << bad.error().message;
    EXPECT_NE(bad.error().message.find("t.toml"), std::string::npos) << bad.error().message;
  }
  // A node named by two types.
  Result<ClusterConfig> overlap = parse_cluster_config(
      std::string(kMinimal) +
          "[[nodetype]]\nname = \"a\"\nnodes = \"n[0-3]\"\nresources = \"cores=4\"\n"
          "[[nodetype]]\nname = \"b\"\nnodes = \"n[3-4]\"\nresources = \"cores=2\"\n",
      "t.toml");
  ASSERT_TRUE(overlap) << overlap.error().message;
  Result<NodeTypes> types = NodeTypes::build(overlap->node_types, 8);
  ASSERT_FALSE(types);
  EXPECT_NE(types.error().message.find("n3 is of type a already"), std::string::npos)
      << types.error().message;
}

TEST(NodeTypesTest, EachNodeHasItsTypeAndUnnamedOnesAreFeatureless) {
  Result<ClusterConfig> config = parse_cluster_config(
      std::string(kMinimal) +
          "[[nodetype]]\nname = \"big\"\nnodes = \"n[2-3]\"\nresources = \"cores=16,mem=64G\"\n",
      "t.toml");
  ASSERT_TRUE(config) << config.error().message;
  Result<NodeTypes> types = NodeTypes::build(config->node_types, 8);
  ASSERT_TRUE(types) << types.error().message;
  EXPECT_EQ(types->of(0), nullptr);
  ASSERT_NE(types->of(2), nullptr);
  EXPECT_EQ(types->of(3)->cores(), 16);
  EXPECT_EQ(types->type_name(3), "big");
  EXPECT_EQ(types->type_name(4), "");
  EXPECT_EQ(types->of(99), nullptr);
}

// A controller on flat:8 whose n0-n1 are GPU nodes and the rest 4-core CPU nodes.
class NodeTypeSubmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<ClusterConfig> parsed = parse_cluster_config(std::string(kMinimal) + kTwoTypes, "t");
    ASSERT_TRUE(parsed) << parsed.error().message;
    config_ = *parsed;
    config_.store = "sqlite:" + (dir_ / "state.db");
    config_.controller.policy = "fcfs";
    config_.controller.heartbeat_misses = 1000;
    auto opened = open_store(config_.store);
    ASSERT_TRUE(opened) << opened.error().message;
    store_ = std::move(*opened);
    auto c = Controller::open(config_, *store_, agents_, 1000, "A");
    ASSERT_TRUE(c) << c.error().message;
    controller_ = std::move(*c);
  }
  Result<JobId> submit(int nodes, const std::vector<std::pair<std::string, std::string>>& asks,
                       int ntasks = 0) {
    ResourceRequest request;
    for (const auto& [option, value] : asks) {
      Status ok = apply_resource_option(option, value, request);
      EXPECT_TRUE(ok) << option << "=" << value;
    }
    v1::JobSpec spec;
    spec.set_nodes(nodes);
    spec.set_ntasks(ntasks);
    spec.set_time_limit(100);
    spec.add_argv("true");
    spec.set_cwd("/");
    spec.set_resources(encode_resource_request(request));
    return controller_->submit(spec, caller_, 1000);
  }
  void expect_refused(int nodes, const std::vector<std::pair<std::string, std::string>>& asks,
                      const std::string& says, int ntasks = 0) {
    Result<JobId> id = submit(nodes, asks, ntasks);
    ASSERT_FALSE(id) << "accepted " << nodes << " nodes, " << asks.size() << " asks";
    EXPECT_EQ(id.error().code, Error::Code::kNeverFits) << id.error().message;
    EXPECT_NE(id.error().message.find(says), std::string::npos) << id.error().message;
  }

  testing::TempDir dir_;
  ClusterConfig config_;
  std::unique_ptr<StateStore> store_;
  testing::RecordingAgents agents_;
  std::unique_ptr<Controller> controller_;
  Caller caller_{static_cast<int>(getuid()), static_cast<int>(getgid())};
};

TEST_F(NodeTypeSubmissionTest, WhatNoNodeCanEverHoldIsRefusedWithTheReason) {
  // More GPUs per node than the GPU nodes have; a GPU type no node has.
  expect_refused(1, {{"gpus-per-node", "5"}}, "5 GPUs per node asked, its nodes have 4");
  expect_refused(1, {{"gres", "gpu:v100:1"}}, "GPUs of type v100");
  // More memory than any node has; more cores per node than any has (tasks x cpus per task).
  expect_refused(1, {{"mem", "32G"}}, "32G of memory per node asked");
  expect_refused(1, {{"cpus-per-task", "4"}}, "16 cores per node asked", /*ntasks=*/4);
  // A feature only the GPU nodes have, on more nodes than there are GPU nodes.
  expect_refused(3, {{"constraint", "ib"}}, "only 2 nodes of partition main");
  // A count-only resource no node has.
  expect_refused(1, {{"gres", "license:1"}}, "license");
  // What fits is stored with its request, read back the same.
  Result<JobId> gpu =
      submit(2, {{"gpus-per-node", "a100:2"}, {"mem", "12G"}, {"cpus-per-task", "2"}});
  ASSERT_TRUE(gpu) << gpu.error().message;
  Result<StoredJob> stored = store_->job(*gpu);
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_EQ(stored->resources.gpus_per_node, 2);
  EXPECT_EQ(stored->resources.gpu_type, "a100");
  EXPECT_EQ(stored->resources.mem_per_node_mb, 12 * 1024);
  EXPECT_EQ(stored->resources.cpus_per_task, 2);
  // Six CPU nodes of 4 cores hold 4 one-core tasks each.
  Result<JobId> cpu = submit(6, {{"mem-per-cpu", "1G"}}, /*ntasks=*/24);
  EXPECT_TRUE(cpu) << cpu.error().message;
}

TEST_F(NodeTypeSubmissionTest, AHostileResourceTextIsAnInvalidArgument) {
  v1::JobSpec spec;
  spec.set_nodes(1);
  spec.add_argv("true");
  spec.set_cwd("/");
  for (const char* text : {"cpus_per_task=-1", "mem=lots", "colour=red", "gres=x", "sharing=all"}) {
    spec.set_resources(text);
    Result<JobId> id = controller_->submit(spec, caller_, 1000);
    ASSERT_FALSE(id) << text;
    EXPECT_EQ(id.error().code, Error::Code::kInvalidArgument) << text;
    EXPECT_NE(id.error().message.find("resources"), std::string::npos) << id.error().message;
  }
}

// fewest_nodes against a count by hand: the smallest k for which k nodes of the partition each
// hold ceil(tasks / k) tasks of the request (cores, GPUs and memory per task), over small
// machines of two node types and requests of every kind.
TEST(NodeTypesFewestNodesTest, IsTheSmallestCountWhoseNodesHoldTheirShareOfTheTasks) {
  struct Kind {
    int cores, gpus, mem_gb;
  };
  for (const auto& [small, large, smalls, larges] :
       std::vector<std::tuple<Kind, Kind, int, int>>{{{2, 0, 4}, {8, 4, 32}, 3, 1},
                                                     {{4, 1, 8}, {4, 2, 8}, 2, 2},
                                                     {{1, 0, 2}, {3, 0, 6}, 4, 2}}) {
    auto resources = [](const Kind& k) {
      return "cores=" + std::to_string(k.cores) + ",mem=" + std::to_string(k.mem_gb) + "G" +
             (k.gpus > 0 ? ",gpus=" + std::to_string(k.gpus) : "");
    };
    std::vector<NodeTypeConfig> types(2);
    types[0].name = "small";
    types[0].nodes = "n[0-" + std::to_string(smalls - 1) + "]";
    types[0].inventory = *parse_node_inventory(resources(small));
    types[1].name = "large";
    types[1].nodes = "";
    types[1].inventory = *parse_node_inventory(resources(large));
    Result<NodeTypes> built = NodeTypes::build(types, smalls + larges);
    ASSERT_TRUE(built) << built.error().message;
    for (int tasks = 2; tasks <= 9; ++tasks)
      for (int cpus = 1; cpus <= 3; ++cpus)
        for (int gpus = 0; gpus <= 1; ++gpus) {
          StoredJob job;
          job.tasks.ntasks = tasks;
          job.resources.cpus_per_task = cpus;
          job.resources.gpus_per_task = gpus;
          job.resources.mem_per_cpu_mb = 1024;
          int want = 0;
          for (int k = 1; k <= std::min(tasks, smalls + larges) && want == 0; ++k) {
            const int per_node = (tasks + k - 1) / k;
            auto holds = [&](const Kind& kind) {
              return kind.cores >= per_node * cpus && kind.gpus >= per_node * gpus &&
                     int64_t{kind.mem_gb} * 1024 >= int64_t{per_node} * cpus * 1024;
            };
            if ((holds(small) ? smalls : 0) + (holds(large) ? larges : 0) >= k) want = k;
          }
          EXPECT_EQ(built->fewest_nodes(job, nullptr), want)
              << tasks << " tasks of " << cpus << " cores, " << gpus << " GPUs; small "
              << resources(small) << " x" << smalls << ", large " << resources(large) << " x"
              << larges;
        }
  }
}

}  // namespace
}  // namespace trellis
