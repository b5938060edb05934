// Shared nodes on a live cluster: jobs of one node beside each other on its cores, each held to
// what it was given by the kernel (cpuset, memory limit), as the job itself sees it.
//
// One node of 2 cores (this host's, at least), served by an agent of its own, in a partition
// with shared = true (`cluster up --shared-nodes`). The limits need cgroups the agent may write
// (root, with cpuset and memory controllers); the tests say so and skip where the host has none.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "../build_paths.h"
#include "../cli_run.h"
#include "daemon/resource_limits.h"
#include "daemon_test_support.h"
#include "live_cluster.h"

namespace trellis {
namespace {

using testing::eventually;
using testing::LiveCluster;
namespace fs = std::filesystem;

// Helpers of this file alone (a unity batch shares anonymous namespaces with other tests).
namespace shared_nodes {

// Why the host cannot hold jobs to their grants ("" when it can): the agent would run them
// unlimited, and nothing here could be seen.
std::string no_limits_here() {
  if (::geteuid() != 0) return "not root: the agent cannot make cgroups";
  cpu_set_t mine;
  if (sched_getaffinity(0, sizeof mine, &mine) != 0 || CPU_COUNT(&mine) < 2)
    return "fewer than 2 CPUs to share";
  ResourceLimits limits = ResourceLimits::open({.name = "shared-nodes-probe"});
  const bool none = limits.kind() == ResourceLimits::Kind::kNone;
  (void)limits.remove_roots();  // the probe's own directories
  return none ? limits.describe() : "";
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The value of "Key:\tvalue" in a /proc/PID/status text.
std::string status_field(const std::string& text, const std::string& key) {
  size_t at = text.find(key + ":");
  if (at == std::string::npos) return "";
  at = text.find_first_not_of(" \t", at + key.size() + 1);
  return text.substr(at, text.find('\n', at) - at);
}

}  // namespace shared_nodes

class SharedNodesLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = shared_nodes::no_limits_here(); !why.empty()) GTEST_SKIP() << why;
    if (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()).find("Gpu") !=
        std::string::npos)
      return;  // that test makes its own devices first
    start("cores=2,mem=1G");
  }
  // The cluster: one node of type `resources`, shared.
  void start(const std::string& resources) {
    cluster_ = std::make_unique<LiveCluster>("--machine flat:1 --node-type 'two::" + resources +
                                             "' --shared-nodes --kill-grace 1");
    ASSERT_EQ(cluster_->up().status, 0) << cluster_->up().output;
  }
  // Submits a job whose command writes what it sees of itself to a file of the cluster's
  // directory, then runs `then`; returns the job's id and the file.
  std::pair<int64_t, std::string> submit_probe(const std::string& options,
                                               const std::string& then) {
    const std::string out = cluster_->dir() / ("probe-" + std::to_string(++probes_));
    const std::string script = "grep Cpus_allowed_list /proc/self/status > " + out +
                               ".tmp; echo cpus_on_node=$SLURM_CPUS_ON_NODE >> " + out +
                               ".tmp; echo mem_per_node=$SLURM_MEM_PER_NODE >> " + out +
                               ".tmp; mv " + out + ".tmp " + out + "; " + then;
    int64_t id = cluster_->submit(options + " -- sh -c '" + script + "'");
    return {id, out};
  }
  // A Slurm command (sacct, squeue, ...) against the cluster.
  test::CommandRun slurm(const std::string& command) const {
    const std::string bin = (fs::path(TRELLIS_BINARY).parent_path() / "slurm-bin").string();
    return test::run_command("TRELLIS_CONF=" + (cluster_->dir() / "trellis.toml") + " PATH=" + bin +
                             ":$PATH " + command);
  }
  std::unique_ptr<LiveCluster> cluster_;
  int probes_ = 0;
};

// Two 1-core jobs run at once on the one 2-core node, each on a core of its own, as the kernel
// holds them (Cpus_allowed_list) and as they are told (SLURM_CPUS_ON_NODE, SLURM_MEM_PER_NODE).
TEST_F(SharedNodesLiveTest, TwoOneCoreJobsRunAtOnceOnDifferentCoresOfOneNode) {
  auto [a, a_out] = submit_probe("-c 1 --mem 100M", "sleep 30");
  auto [b, b_out] = submit_probe("-c 1 --mem 200M", "sleep 30");
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  ASSERT_TRUE(eventually([&] { return cluster_->state(a) == "R" && cluster_->state(b) == "R"; },
                         std::chrono::seconds(30)))
      << cluster_->job(a).dump() << cluster_->job(b).dump();
  ASSERT_TRUE(eventually([&] {
    return !shared_nodes::read_all(a_out).empty() && !shared_nodes::read_all(b_out).empty();
  }));
  EXPECT_EQ(cluster_->job(a)["nodelist"], "n0");
  EXPECT_EQ(cluster_->job(b)["nodelist"], "n0");
  const std::string seen_a = shared_nodes::read_all(a_out), seen_b = shared_nodes::read_all(b_out);
  const std::string cpus_a = shared_nodes::status_field(seen_a, "Cpus_allowed_list");
  const std::string cpus_b = shared_nodes::status_field(seen_b, "Cpus_allowed_list");
  EXPECT_TRUE((cpus_a == "0" && cpus_b == "1") || (cpus_a == "1" && cpus_b == "0"))
      << seen_a << "\n"
      << seen_b;
  EXPECT_NE(seen_a.find("cpus_on_node=1\n"), std::string::npos) << seen_a;
  EXPECT_NE(seen_a.find("mem_per_node=100\n"), std::string::npos) << seen_a;
  EXPECT_NE(seen_b.find("mem_per_node=200\n"), std::string::npos) << seen_b;
  // What each holds, as sacct's AllocTRES says it (by name, as sacct orders them).
  EXPECT_EQ(slurm("sacct -X -n -P -o AllocCPUS,AllocTRES -j " + std::to_string(b)).output,
            "1|billing=1,cpu=1,mem=200M,node=1\n");
  // A third 1-core job waits: the node has no core left.
  int64_t c = cluster_->submit("-c 1 -- true");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(cluster_->state(c), "PD") << cluster_->job(c).dump();
  ASSERT_EQ(cluster_->trellis("cancel " + std::to_string(a)).status, 0);
  EXPECT_TRUE(eventually([&] { return cluster_->state(c) == "CD"; }, std::chrono::seconds(30)))
      << cluster_->job(c).dump();
}

// --exclusive takes the whole node: it waits for the 1-core job there, then has both cores.
TEST_F(SharedNodesLiveTest, ExclusiveJobTakesTheWholeNode) {
  auto [small, small_out] = submit_probe("-c 1", "sleep 3");
  ASSERT_TRUE(eventually([&] { return cluster_->state(small) == "R"; }));
  auto [whole, whole_out] = submit_probe("--exclusive", "true");
  ASSERT_GT(whole, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(cluster_->state(whole), "PD") << "one core is free, but it asked for the whole node";
  ASSERT_TRUE(eventually([&] { return cluster_->state(whole) == "CD"; }, std::chrono::seconds(30)))
      << cluster_->job(whole).dump();
  const std::string seen = shared_nodes::read_all(whole_out);
  EXPECT_EQ(shared_nodes::status_field(seen, "Cpus_allowed_list"), "0-1") << seen;
  EXPECT_NE(seen.find("cpus_on_node=2\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("mem_per_node=1024\n"), std::string::npos) << seen;
}

// A job that touches 256 MiB under --mem=64M is ended by the kernel and ends OUT_OF_MEMORY, its
// reason naming the step, node, limit and peak; the job beside it on the node is unharmed.
TEST_F(SharedNodesLiveTest, AJobOverItsMemoryLimitEndsOutOfMemoryAndItsNeighbourRunsOn) {
  int64_t neighbour = cluster_->submit("-c 1 --mem 100M -- sh -c 'sleep 2; true'");
  ASSERT_TRUE(eventually([&] { return cluster_->state(neighbour) == "R"; }));
  const std::string hog_err = cluster_->dir() / "hog.err";
  int64_t hog = cluster_->submit("-c 1 --mem 64M --error " + hog_err +
                                 " -- python3 -c \"x = b'x' * (256 << 20); print(len(x))\"");
  ASSERT_GT(hog, 0);
  ASSERT_TRUE(eventually([&] { return cluster_->state(hog) == "OOM"; }, std::chrono::seconds(30)))
      << cluster_->job(hog).dump();
  const std::string reason = cluster_->job(hog)["reason"];
  EXPECT_NE(reason.find("step " + std::to_string(hog) + ".0 on n0"), std::string::npos) << reason;
  EXPECT_NE(reason.find("memory limit of 64M"), std::string::npos) << reason;
  EXPECT_NE(reason.find("(peak "), std::string::npos) << reason;
  ASSERT_TRUE(
      eventually([&] { return cluster_->state(neighbour) == "CD"; }, std::chrono::seconds(30)))
      << cluster_->job(neighbour).dump();
  // sacct says it as Slurm does, and so does the job's own stderr.
  EXPECT_EQ(slurm("sacct -X -n -P -o State -j " + std::to_string(hog)).output, "OUT_OF_MEMORY\n");
  std::string err;
  EXPECT_TRUE(eventually([&] {
    err = shared_nodes::read_all(hog_err);
    return err.find("trellis: error: " + reason + "\n") != std::string::npos;
  })) << err;
}

// The tasks of one job on the node are each bound to cores of their own (auto binding: the
// tasks fit the cores given), and --cpu-bind=map_cpu puts them where it says.
TEST_F(SharedNodesLiveTest, EachTaskOfAJobIsBoundToItsOwnCore) {
  const std::string out = cluster_->dir() / "bound";
  auto probe = [&](const std::string& options, const std::string& tag) {
    const std::string file = out + "." + tag + ".$SLURM_PROCID";
    int64_t id =
        cluster_->submit(options + " -- sh -c 'grep Cpus_allowed_list /proc/self/status > " + file +
                         ".tmp; echo task_cpus=$TRELLIS_TASK_CPUS >> " + file +
                         ".tmp; echo per_task=$SLURM_CPUS_PER_TASK >> " + file + ".tmp; mv " +
                         file + ".tmp " + file + "'");
    EXPECT_TRUE(eventually([&] { return cluster_->state(id) == "CD"; }, std::chrono::seconds(30)))
        << cluster_->job(id).dump();
    return std::pair{shared_nodes::read_all(out + "." + tag + ".0"),
                     shared_nodes::read_all(out + "." + tag + ".1")};
  };
  auto [rank0, rank1] = probe("-N 1 -n 2 -c 1", "auto");
  const std::string cpus0 = shared_nodes::status_field(rank0, "Cpus_allowed_list");
  const std::string cpus1 = shared_nodes::status_field(rank1, "Cpus_allowed_list");
  EXPECT_TRUE((cpus0 == "0" && cpus1 == "1") || (cpus0 == "1" && cpus1 == "0")) << rank0 << "\n"
                                                                                << rank1;
  EXPECT_NE(rank0.find("task_cpus=" + cpus0 + "\n"), std::string::npos) << rank0;
  EXPECT_NE(rank0.find("per_task=1\n"), std::string::npos) << rank0;
  auto [mapped0, mapped1] = probe("-N 1 -n 2 --cpu-bind map_cpu:1", "map");
  EXPECT_EQ(shared_nodes::status_field(mapped0, "Cpus_allowed_list"), "1") << mapped0;
  EXPECT_EQ(shared_nodes::status_field(mapped1, "Cpus_allowed_list"), "1") << mapped1;
  auto [free0, free1] = probe("-N 1 -n 2 --cpu-bind none", "none");
  EXPECT_EQ(shared_nodes::status_field(free0, "Cpus_allowed_list"), "0-1") << free0;
  // A map naming a CPU the job was not given fails the step, saying why.
  const std::string err = cluster_->dir() / "badmap.err";
  int64_t bad = cluster_->submit("-n 1 -c 1 --cpu-bind map_cpu:5 --error " + err + " -- true");
  ASSERT_TRUE(eventually([&] { return cluster_->state(bad) == "F"; }, std::chrono::seconds(30)))
      << cluster_->job(bad).dump();
  EXPECT_NE(std::string(cluster_->job(bad)["reason"]).find("CPU 5 is not one of the job's on n0"),
            std::string::npos)
      << cluster_->job(bad).dump();
}

// A job given 1 of the node's 4 GPUs (device files made here with the numbers of harmless
// character devices) sees it as CUDA_VISIBLE_DEVICES=0 with its global id, may open its device
// and is refused the other three by the device cgroup; two tasks with a GPU each get distinct
// ones.
TEST_F(SharedNodesLiveTest, AJobGivenOneGpuOpensItAndIsRefusedTheOthers) {
  testing::TempDir devices;
  std::string files;
  const unsigned minors[] = {7, 8, 9, 11};  // /dev/full, random, urandom, kmsg
  for (int i = 0; i < 4; ++i) {
    const std::string path = devices / ("gpu" + std::to_string(i));
    ASSERT_EQ(::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, minors[i])), 0) << path;
    files += (i > 0 ? "+" : "") + path;
  }
  start("cores=2,mem=1G,gpus=4,gpu_files=" + files);
  const std::string out = cluster_->dir() / "gpus";
  const std::string script =
      "{ echo visible=$CUDA_VISIBLE_DEVICES; echo global=$SLURM_JOB_GPUS; "
      "for i in 0 1 2 3; do if (exec 3<" +
      devices.path() +
      "/gpu$i) 2>/dev/null; then echo gpu$i=open; else echo gpu$i=refused; "
      "fi; done; } > " +
      out + ".tmp; mv " + out + ".tmp " + out;
  int64_t id = cluster_->submit("--gres gpu:1 -- sh -c '" + script + "'");
  ASSERT_GT(id, 0);
  ASSERT_TRUE(eventually([&] { return cluster_->state(id) == "CD"; }, std::chrono::seconds(30)))
      << cluster_->job(id).dump();
  const std::string seen = shared_nodes::read_all(out);
  EXPECT_NE(seen.find("visible=0\n"), std::string::npos) << seen;
  const size_t at = seen.find("global=");
  ASSERT_NE(at, std::string::npos) << seen;
  const std::string global = seen.substr(at + 7, 1);
  for (int i = 0; i < 4; ++i) {
    const std::string expected =
        "gpu" + std::to_string(i) + (std::to_string(i) == global ? "=open" : "=refused");
    EXPECT_NE(seen.find(expected + "\n"), std::string::npos) << expected << " in\n" << seen;
  }
  // --gpus-per-task=1 with 2 tasks: each task its own GPU, seen as its device 0 of the job's
  // two, which it may open.
  int64_t pair = cluster_->submit(
      "-N 1 -n 2 --gpus-per-task 1 -- sh -c 'f=" + out +
      ".task$SLURM_PROCID; "
      "{ echo task=$TRELLIS_TASK_GPUS; echo visible=$CUDA_VISIBLE_DEVICES; "
      "echo step=$SLURM_STEP_GPUS; if (exec 3<" +
      devices.path() +
      "/gpu$TRELLIS_TASK_GPUS) 2>/dev/null; then echo mine=open; fi; } > $f.tmp; mv $f.tmp $f'");
  ASSERT_TRUE(eventually([&] { return cluster_->state(pair) == "CD"; }, std::chrono::seconds(30)))
      << cluster_->job(pair).dump();
  const std::string task0 = shared_nodes::read_all(out + ".task0");
  const std::string task1 = shared_nodes::read_all(out + ".task1");
  auto field = [](const std::string& text, const std::string& key) {
    const size_t at = text.find(key + "=");
    return at == std::string::npos
               ? std::string("(none)")
               : text.substr(at + key.size() + 1, text.find('\n', at) - at - key.size() - 1);
  };
  EXPECT_NE(field(task0, "task"), field(task1, "task")) << task0 << "\n" << task1;
  EXPECT_EQ(field(task0, "task").size(), 1u) << task0;
  EXPECT_EQ(field(task0, "step"), field(task1, "step"));  // the step's two GPUs
  EXPECT_NE(field(task0, "visible"), field(task1, "visible")) << task0 << "\n" << task1;
  EXPECT_NE(task0.find("mine=open\n"), std::string::npos) << task0;
  EXPECT_NE(task1.find("mine=open\n"), std::string::npos) << task1;

  // A job with no GPU sees none of the GPU variables.
  int64_t plain = cluster_->submit("-- sh -c 'env > " + out + ".env'");
  ASSERT_TRUE(eventually([&] { return cluster_->state(plain) == "CD"; }));
  const std::string env = shared_nodes::read_all(out + ".env");
  EXPECT_EQ(env.find("CUDA_VISIBLE_DEVICES"), std::string::npos) << env;
  EXPECT_EQ(env.find("SLURM_JOB_GPUS"), std::string::npos) << env;
}

}  // namespace
}  // namespace trellis
