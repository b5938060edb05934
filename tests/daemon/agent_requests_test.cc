// The agent's checks of Launch and Signal requests (daemon/agent_requests.h), each field's error,
// and the inputs the fuzzer found.
#include "daemon/agent_requests.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "shell/shell_options.h"
#include "trellis/v1/trellis.pb.h"

namespace trellis {
namespace {

const std::unordered_set<std::string> kServed = {"n0", "n1"};

v1::LaunchRequest good_launch() {
  v1::LaunchRequest request;
  request.set_job_id(7);
  request.set_attempt(2);
  request.add_nodes("n1");  // node 0, this agent's
  request.add_nodes("n5");  // node 1, another agent's
  request.set_nodelist("n[1,5]");
  request.set_nnodes(2);
  request.add_argv("sleep");
  request.add_argv("1");
  request.set_cwd("/tmp");
  (*request.mutable_env())["MINE"] = "x";
  (*request.mutable_env())["TRELLIS_JOB_ID"] = "999";
  return request;
}

ShellSetup shell_setup() {
  ShellSetup shell;
  shell.binary = "/opt/trellis/trellis-shell";
  shell.socket = "trellis-agent-shells-x";
  shell.slurm_commands = "/opt/trellis/slurm-commands";
  shell.controllers = {"c1:6817", "c2:6817"};
  return shell;
}

std::string error_of(const v1::LaunchRequest& request) {
  Result<std::vector<int>> checked = check_launch_request(request, kServed);
  return checked ? "" : checked.error().message;
}

TEST(AgentRequestsTest, AGoodLaunchAndItsTask) {
  v1::LaunchRequest request = good_launch();
  EXPECT_EQ(error_of(request), "");
  EXPECT_EQ(*check_launch_request(request, kServed), std::vector<int>{0});  // n1 only
  TaskSpec spec = task_spec(request, 0, {"PATH=/bin", "MINE=agent", "junk"}, shell_setup());
  EXPECT_EQ(spec.key.job_id, 7);
  EXPECT_EQ(spec.key.attempt, 2);
  EXPECT_EQ(spec.key.step, 0);
  // The task is the job shell, told the step's layout; the command comes after "--".
  ASSERT_GE(spec.argv.size(), 3u);
  EXPECT_EQ(spec.argv[0], "/opt/trellis/trellis-shell");
  Result<ShellOptions> options =
      parse_shell_options(std::vector<std::string>(spec.argv.begin() + 1, spec.argv.end()));
  ASSERT_TRUE(options) << options.error().message;
  EXPECT_EQ(options->argv, (std::vector<std::string>{"sleep", "1"}));
  EXPECT_EQ(options->node, "n1");
  EXPECT_EQ(options->node_index, 0);
  EXPECT_EQ(options->agent, "trellis-agent-shells-x");
  EXPECT_EQ(options->tasks_per_node, (std::vector<int>{1, 1}));
  auto has = [&](const std::string& entry) {
    return std::find(spec.env.begin(), spec.env.end(), entry) != spec.env.end();
  };
  EXPECT_TRUE(has("PATH=/opt/trellis/slurm-commands:/bin"));  // srun first, for MPI launchers
  EXPECT_TRUE(has("MINE=x"));            // the job's variable wins over the agent's
  EXPECT_TRUE(has("TRELLIS_JOB_ID=7"));  // and Trellis's win over the job's
  EXPECT_FALSE(has("TRELLIS_JOB_ID=999"));
  EXPECT_TRUE(has("TRELLIS_NODEID=0"));
  EXPECT_TRUE(has("TRELLIS_ATTEMPT=2"));
  EXPECT_TRUE(has("TRELLIS_NODELIST=n[1,5]"));
  EXPECT_TRUE(has("TRELLIS_NTASKS=2"));
  EXPECT_TRUE(has("TRELLIS_CONTROLLERS=c1:6817,c2:6817"));
  // The names Open MPI's and MPICH's Slurm support look for.
  for (const char* entry : {"SLURM_JOB_ID=7", "SLURM_JOBID=7", "SLURM_STEP_ID=0",
                            "SLURM_NODELIST=n[1,5]", "SLURM_NNODES=2", "SLURM_NTASKS=2",
                            "SLURM_NODEID=0", "SLURM_TASKS_PER_NODE=1(x2)", "SLURMD_NODENAME=n1"})
    EXPECT_TRUE(has(entry)) << entry;
}

TEST(AgentRequestsTest, ATaskLayoutReachesTheShell) {
  v1::LaunchRequest request = good_launch();
  request.add_tasks_per_node(3);
  request.add_tasks_per_node(2);
  request.set_distribution("cyclic");
  request.set_mpi("pmix");
  request.set_label(true);
  request.set_step(4);
  request.set_kill_grace(2.5);
  EXPECT_EQ(error_of(request), "");
  TaskSpec spec = task_spec(request, 0, {}, shell_setup());
  EXPECT_EQ(spec.key.step, 4);
  Result<ShellOptions> options =
      parse_shell_options(std::vector<std::string>(spec.argv.begin() + 1, spec.argv.end()));
  ASSERT_TRUE(options) << options.error().message;
  EXPECT_EQ(options->step, 4);
  EXPECT_EQ(options->tasks_per_node, (std::vector<int>{3, 2}));
  EXPECT_EQ(options->distribution, Distribution::kCyclic);
  EXPECT_EQ(options->mpi, MpiKind::kPmix);
  EXPECT_TRUE(options->label);
  EXPECT_DOUBLE_EQ(options->kill_grace, 2.5);
  EXPECT_NE(std::find(spec.env.begin(), spec.env.end(), "SLURM_TASKS_PER_NODE=3,2"),
            spec.env.end());
  EXPECT_NE(std::find(spec.env.begin(), spec.env.end(), "TRELLIS_STEP_ID=4"), spec.env.end());
}

// One list of every node of the step, in node-id order, goes to every agent: each finds its own
// nodes and their ids (their places) in it; the others' are theirs to check.
TEST(AgentRequestsTest, EachAgentFindsItsNodesAndTheirIdsInTheOneList) {
  v1::LaunchRequest request = good_launch();
  request.clear_nodes();
  for (const char* node : {"m0", "n1", "m1", "n0", "m1"}) request.add_nodes(node);
  request.set_nnodes(5);
  Result<std::vector<int>> mine = check_launch_request(request, kServed);
  ASSERT_TRUE(mine) << mine.error().message;
  EXPECT_EQ(*mine, (std::vector<int>{1, 3}));
  TaskSpec spec = task_spec(request, 3, {}, shell_setup());
  EXPECT_EQ(spec.key.node, "n0");
  EXPECT_NE(std::find(spec.env.begin(), spec.env.end(), "TRELLIS_NODEID=3"), spec.env.end());
  EXPECT_NE(std::find(spec.env.begin(), spec.env.end(), "SLURMD_NODENAME=n0"), spec.env.end());
  // An agent that serves none of them starts nothing (a tree message reaches every agent).
  Result<std::vector<int>> none = check_launch_request(request, {"x0"});
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->empty());
}

// The environment is worked out once per launch (LaunchCommon): each node's task has its own
// node variables, the rest as task_spec() alone would give it; an emulated task has neither a
// shell nor an environment (nothing reads them).
TEST(AgentRequestsTest, OneLaunchsTasksShareAllButTheirNodesVariables) {
  v1::LaunchRequest request = good_launch();
  request.clear_nodes();
  for (const char* node : {"n0", "m1", "n1"}) request.add_nodes(node);
  request.set_nnodes(3);
  const std::vector<std::string> agent_env = {"PATH=/bin", "MINE=agent"};
  const LaunchCommon common(request, agent_env, shell_setup());
  for (int id : {0, 2}) {
    TaskSpec shared = task_spec(request, id, common);
    TaskSpec alone = task_spec(request, id, agent_env, shell_setup());
    EXPECT_EQ(shared.env, alone.env);
    EXPECT_EQ(shared.argv, alone.argv);
    EXPECT_TRUE(std::is_sorted(shared.env.begin(), shared.env.end()));
    const std::string node = request.nodes(id), index = std::to_string(id);
    for (const std::string& entry : {"TRELLIS_NODEID=" + index, "TRELLIS_NODENAME=" + node,
                                     "SLURM_NODEID=" + index, "SLURMD_NODENAME=" + node})
      EXPECT_EQ(std::count(shared.env.begin(), shared.env.end(), entry), 1) << entry;
    for (const char* name :
         {"TRELLIS_NODEID=", "TRELLIS_NODENAME=", "SLURM_NODEID=", "SLURMD_NODENAME="})
      EXPECT_EQ(std::count_if(shared.env.begin(), shared.env.end(),
                              [&](const std::string& e) { return e.rfind(name, 0) == 0; }),
                1)
          << name;
  }
  const LaunchCommon emulated(request, agent_env, shell_setup(), /*emulated=*/true);
  TaskSpec task = task_spec(request, 2, emulated);
  EXPECT_EQ(task.key.node, "n1");
  EXPECT_EQ(task.argv, (std::vector<std::string>{"sleep", "1"}));
  EXPECT_TRUE(task.env.empty());
}

TEST(AgentRequestsTest, EachBadFieldIsNamed) {
  auto with = [](auto change) {
    v1::LaunchRequest request = good_launch();
    change(request);
    return error_of(request);
  };
  EXPECT_NE(with([](auto& r) { r.set_job_id(0); }).find("job_id"), std::string::npos);
  EXPECT_NE(with([](auto& r) { r.set_attempt(0); }).find("attempt"), std::string::npos);
  // nnodes is the length of the node list.
  EXPECT_NE(with([](auto& r) { r.add_nodes("n9"); }).find("nnodes: 2 for 3 nodes"),
            std::string::npos);
  EXPECT_NE(with([](auto& r) { r.set_nnodes(1); }).find("nnodes"), std::string::npos);
  EXPECT_NE(with([](auto& r) {
              r.add_nodes("n1");
              r.set_nnodes(3);
            }).find("'n1' appears twice"),
            std::string::npos);
  EXPECT_NE(with([](auto& r) { r.set_nodes(1, "a,b"); }).find("not a node name"),
            std::string::npos);
  EXPECT_NE(with([](auto& r) { r.clear_nodes(); }).find("nodes: empty"), std::string::npos);
  EXPECT_NE(with([](auto& r) { r.clear_argv(); }).find("argv"), std::string::npos);
  EXPECT_NE(with([](auto& r) { r.set_cwd("tmp"); }).find("cwd"), std::string::npos);
  EXPECT_NE(with([](auto& r) { r.set_uid(-1); }).find("uid"), std::string::npos);
  EXPECT_NE(with([](auto& r) { (*r.mutable_env())["A=B"] = ""; }).find("env"), std::string::npos);
  // NUL bytes would be cut off without a word by exec.
  EXPECT_NE(with([](auto& r) { r.set_argv(1, std::string("a\0b", 3)); }).find("NUL"),
            std::string::npos);
  EXPECT_NE(with([](auto& r) { (*r.mutable_env())["X"] = std::string("\0", 1); }).find("NUL"),
            std::string::npos);
  EXPECT_NE(with([](auto& r) { r.set_launch_by(std::nan("")); }).find("launch_by"),
            std::string::npos);
  EXPECT_NE(with([](auto& r) { r.add_tasks_per_node(1); }).find("tasks_per_node"),
            std::string::npos);
  EXPECT_NE(with([](auto& r) {
              r.add_tasks_per_node(1);
              r.add_tasks_per_node(3);
              r.set_distribution("cyclic");
            }).find("cyclic"),
            std::string::npos);
  EXPECT_NE(with([](auto& r) { r.set_distribution("plane"); }).find("distribution"),
            std::string::npos);
  EXPECT_NE(with([](auto& r) { r.set_mpi("pmi3"); }).find("mpi"), std::string::npos);
  EXPECT_NE(with([](auto& r) { r.set_step(-1); }).find("step"), std::string::npos);
  EXPECT_NE(with([](auto& r) { r.set_exchange_fanout(65); }).find("exchange_fanout"),
            std::string::npos);
  EXPECT_NE(with([](auto& r) { r.set_kill_grace(std::nan("")); }).find("kill_grace"),
            std::string::npos);
  EXPECT_NE(with([](auto& r) { r.add_step_agents(""); }).find("step_agents"), std::string::npos);
}

// A huge grace period overflowed its conversion to milliseconds (undefined behaviour, which
// UBSan under the fuzzer stops at), and NaN was taken for "none".
TEST(AgentRequestsTest, SignalGracePeriods) {
  const std::chrono::milliseconds fallback(10000);
  v1::SignalRequest request;
  request.set_job_id(3);
  EXPECT_EQ(*check_signal_request(request, fallback), fallback);
  request.set_grace_seconds(2.5);
  EXPECT_EQ(*check_signal_request(request, fallback), std::chrono::milliseconds(2500));
  for (double bad : {-1.0, 1e300, std::nan(""), std::numeric_limits<double>::infinity()}) {
    request.set_grace_seconds(bad);
    Result<std::chrono::milliseconds> refused = check_signal_request(request, fallback);
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("grace_seconds"), std::string::npos);
  }
  request.set_grace_seconds(0);
  request.set_signal(NSIG);
  EXPECT_FALSE(check_signal_request(request, fallback));
  request.set_signal(9);
  request.set_attempt(-1);
  EXPECT_FALSE(check_signal_request(request, fallback));
  request.set_attempt(0);
  request.set_job_id(0);
  EXPECT_FALSE(check_signal_request(request, fallback));
}

}  // namespace
}  // namespace trellis
