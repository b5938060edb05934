#include "core/task_binding.h"

#include <gtest/gtest.h>

#include <set>

namespace trellis {
namespace {

NodeInventory binding_node(const std::string& text) {
  Result<NodeInventory> node = parse_node_inventory(text);
  EXPECT_TRUE(node) << node.error().message;
  return *node;
}

TEST(TaskBindingTest, ParsesSlurmsWordsAndReadsBackItsText) {
  for (const char* text : {"", "none", "cores", "threads", "map_cpu:0,2,5"}) {
    Result<CpuBind> bind = parse_cpu_bind(text);
    ASSERT_TRUE(bind) << text << ": " << bind.error().message;
    EXPECT_EQ(cpu_bind_text(*bind), text);
  }
  EXPECT_EQ(parse_cpu_bind("q")->kind, CpuBind::Kind::kAuto);  // snakemake's srun --cpu-bind=q
  EXPECT_EQ(parse_cpu_bind("verbose,cores")->kind, CpuBind::Kind::kCores);
  EXPECT_EQ(parse_cpu_bind("verbose,map_cpu:3,1")->map, (std::vector<int>{3, 1}));
  EXPECT_EQ(parse_cpu_bind("no")->kind, CpuBind::Kind::kNone);
  EXPECT_NE(parse_cpu_bind("sockets").error().message.find("'sockets' is not taken"),
            std::string::npos);
  EXPECT_NE(parse_cpu_bind("map_cpu:0,x").error().message.find("'x' is not a CPU id"),
            std::string::npos);
  EXPECT_FALSE(parse_cpu_bind("map_cpu:"));
  for (const char* text : {"", "none", "closest", "per_task:2"}) {
    Result<GpuBind> bind = parse_gpu_bind(text);
    ASSERT_TRUE(bind) << text << ": " << bind.error().message;
    EXPECT_EQ(gpu_bind_text(*bind), text);
  }
  EXPECT_FALSE(parse_gpu_bind("per_task:0"));
  EXPECT_FALSE(parse_gpu_bind("map_gpu:0"));
}

TEST(TaskBindingTest, AutoBindsEachTaskToItsOwnCoresWithTheirThreads) {
  NodeInventory node = binding_node("cores=8,threads=2,mem=16G");
  NodeGrant grant{.node = 0, .cores = {2, 3, 4, 5}};
  Result<std::vector<TaskPlacement>> placed =
      place_tasks(node, grant, {.tasks = 2, .cpus_per_task = 2}, "n0");
  ASSERT_TRUE(placed) << placed.error().message;
  ASSERT_EQ(placed->size(), 2u);
  EXPECT_EQ((*placed)[0].cpus, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ((*placed)[1].cpus, (std::vector<int>{8, 9, 10, 11}));
  // More tasks than the cores hold: not bound (each sees all the job's CPUs through its cgroup).
  placed = place_tasks(node, grant, {.tasks = 5}, "n0");
  ASSERT_TRUE(placed);
  for (const TaskPlacement& p : *placed) EXPECT_TRUE(p.cpus.empty());
  // On a node held whole, not asked is not bound.
  placed = place_tasks(node, grant, {.tasks = 2, .whole_node = true}, "n0");
  ASSERT_TRUE(placed);
  EXPECT_TRUE((*placed)[0].cpus.empty());
}

TEST(TaskBindingTest, ThreadsAndMapCpuAndTheirErrors) {
  NodeInventory node = binding_node("cores=4,threads=2");
  NodeGrant grant{.node = 3, .cores = {1, 2}};  // CPUs 2-5
  Result<std::vector<TaskPlacement>> placed =
      place_tasks(node, grant, {.tasks = 4, .cpu = {CpuBind::Kind::kThreads, {}}}, "n3");
  ASSERT_TRUE(placed) << placed.error().message;
  for (int i = 0; i < 4; ++i) EXPECT_EQ((*placed)[i].cpus, (std::vector<int>{2 + i}));
  placed = place_tasks(node, grant, {.tasks = 3, .cpu = {CpuBind::Kind::kMapCpu, {5, 2}}}, "n3");
  ASSERT_TRUE(placed);
  EXPECT_EQ((*placed)[0].cpus, (std::vector<int>{5}));
  EXPECT_EQ((*placed)[1].cpus, (std::vector<int>{2}));
  EXPECT_EQ((*placed)[2].cpus, (std::vector<int>{5}));
  Result<std::vector<TaskPlacement>> outside =
      place_tasks(node, grant, {.tasks = 1, .cpu = {CpuBind::Kind::kMapCpu, {0}}}, "n3");
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().message,
            "--cpu-bind=map_cpu: CPU 0 is not one of the job's on n3 (2-5)");
  Result<std::vector<TaskPlacement>> short_of = place_tasks(
      node, grant, {.tasks = 2, .cpus_per_task = 2, .cpu = {CpuBind::Kind::kCores, {}}}, "n3");
  ASSERT_FALSE(short_of);
  EXPECT_EQ(short_of.error().message, "--cpu-bind=cores: 2 tasks x 2 cores, the job has 2 on n3");
}

// The oracle: for every count of tasks and GPUs per task on a 4-GPU grant, per_task gives each
// task its own GPUs while they last, every task the number it asked, and only the job's GPUs.
TEST(TaskBindingTest, GpusPerTaskGiveDistinctGpusWhileTheyLast) {
  NodeInventory node = binding_node("cores=8,gpus=4");
  NodeGrant grant{.node = 0, .cores = {0, 1, 2, 3, 4, 5, 6, 7}, .gpus = {0, 1, 2, 3}};
  for (int tasks = 1; tasks <= 8; ++tasks)
    for (int per = 1; per <= 4; ++per) {
      Result<std::vector<TaskPlacement>> placed =
          place_tasks(node, grant, {.tasks = tasks, .gpus_per_task = per}, "n0");
      ASSERT_TRUE(placed);
      std::multiset<int> used;
      for (const TaskPlacement& p : *placed) {
        EXPECT_EQ(static_cast<int>(p.gpus.size()), per);
        for (int g : p.gpus) {
          EXPECT_TRUE(g >= 0 && g < 4);
          used.insert(g);
        }
      }
      if (tasks * per <= 4)
        for (int g : used) EXPECT_EQ(used.count(g), 1u) << tasks << " tasks x " << per;
    }
  // Without --gpus-per-task, every task sees every GPU of the job's.
  Result<std::vector<TaskPlacement>> all = place_tasks(node, {.gpus = {1, 3}}, {.tasks = 2}, "n0");
  ASSERT_TRUE(all);
  EXPECT_EQ((*all)[1].gpus, (std::vector<int>{1, 3}));
}

TEST(TaskBindingTest, ClosestGivesEachTaskTheGpusOfItsNumaNode) {
  // Two NUMA nodes of 4 cores; GPUs 0,1 on NUMA 0 and 2,3 on NUMA 1.
  NodeInventory node = binding_node("sockets=2,cores_per_socket=4,numa=2,gpus=4");
  node.gpus[2].numa = node.gpus[3].numa = 1;
  NodeGrant grant{.node = 0, .cores = {2, 3, 4, 5}, .gpus = {1, 2, 3}};
  Result<std::vector<TaskPlacement>> placed = place_tasks(
      node, grant, {.tasks = 2, .cpus_per_task = 2, .gpu = {GpuBind::Kind::kClosest, 0}}, "n0");
  ASSERT_TRUE(placed) << placed.error().message;
  EXPECT_EQ((*placed)[0].cpus, (std::vector<int>{2, 3}));
  EXPECT_EQ((*placed)[0].gpus, (std::vector<int>{1}));
  EXPECT_EQ((*placed)[1].cpus, (std::vector<int>{4, 5}));
  EXPECT_EQ((*placed)[1].gpus, (std::vector<int>{2, 3}));
}

}  // namespace
}  // namespace trellis
