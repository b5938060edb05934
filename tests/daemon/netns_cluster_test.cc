// The live-cluster scenarios with every agent on a host of its own (tests/daemon/netns_cluster.h):
// each agent in a network namespace with its own address, the controller on a private bridge.
// Registration, launches, exits, heartbeats, cancels, an agent killed -9 and started again, the
// read path and gang switches all cross a real network interface; what ran where is read from
// the jobs' own output (their ranks print the address of the host they ran on).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "../build_paths.h"
#include "core/hostlist.h"
#include "daemon/proc_stat.h"
#include "daemon/process.h"
#include "netns_cluster.h"

namespace trellis {
namespace {

using testing::ChildProcess;
using testing::eventually;
using testing::NetnsCluster;

// The nodes `trellis nodes --json` lists, by name.
std::map<std::string, nlohmann::json> nodes_of(const NetnsCluster& cluster) {
  std::map<std::string, nlohmann::json> nodes;
  nlohmann::json all =
      nlohmann::json::parse(cluster.trellis("nodes --json").output, nullptr, false);
  if (all.is_array())
    for (const nlohmann::json& node : all) nodes[node["name"].get<std::string>()] = node;
  return nodes;
}

int count_in_state(const NetnsCluster& cluster, const std::string& state) {
  int count = 0;
  for (const auto& [name, node] : nodes_of(cluster)) count += node["state"] == state;
  return count;
}

TEST(NetnsClusterTest, JobsRunAcrossHostsAndAKilledAgentComesBackOnItsHost) {
  if (std::string why = NetnsCluster::unavailable(); !why.empty()) GTEST_SKIP() << why;
  NetnsCluster cluster("--machine torus:4x4x4 --agents 4 --heartbeat 0.2 --kill-grace 1");
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  std::set<std::string> addresses;
  for (int k = 0; k < 4; ++k) {
    HostNetwork::Host host = cluster.host(k);
    addresses.insert(host.address);
    // The host has its address and no other but loopback.
    test::CommandRun ip = cluster.in_host(k, "ip -4 -o addr show");
    EXPECT_NE(ip.output.find(host.address + "/24"), std::string::npos) << ip.output;
    EXPECT_EQ(ip.output.find(cluster.network().bridge_address() + "/"), std::string::npos)
        << ip.output;
  }
  ASSERT_EQ(addresses.size(), 4u);
  // Every agent registered from its own host: n[16k..16k+15] are agent k's.
  std::map<std::string, nlohmann::json> nodes = nodes_of(cluster);
  ASSERT_EQ(nodes.size(), 64u);
  for (int id = 0; id < 64; ++id) {
    const std::string agent = nodes["n" + std::to_string(id)]["agent"];
    EXPECT_EQ(agent.substr(0, agent.rfind(':')), cluster.host(id / 16).address) << "n" << id;
  }

  // A job on all 64 nodes: each rank prints its rank and the address of the host it ran on.
  const std::string out = cluster.dir() / "ranks.out";
  test::CommandRun ran = cluster.trellis("submit -N 64 --wait -o " + out +
                                         " -- sh -c 'echo $TRELLIS_NODEID $(hostname -I)'");
  ASSERT_EQ(ran.status, 0) << ran.output;
  std::map<std::string, int> per_host;
  std::set<int> ranks;
  for (const std::string& line : testing::read_lines(out)) {
    std::istringstream fields(line);
    int rank = -1;
    std::string address;
    fields >> rank >> address;
    ranks.insert(rank);
    ++per_host[address];
  }
  EXPECT_EQ(ranks.size(), 64u);
  for (const std::string& address : addresses) EXPECT_EQ(per_host[address], 16) << address;

  // Cancel: every rank's process, on every host, is gone.
  const std::string pids = cluster.dir() / "pids";
  std::filesystem::create_directories(pids);
  int64_t sleeper =
      cluster.submit("-N 64 -- sh -c 'echo $$ > " + pids + "/$TRELLIS_NODEID; exec sleep 600'");
  ASSERT_GT(sleeper, 0);
  // Every rank has written its pid (a file may exist a moment before its line does).
  std::vector<pid_t> processes;
  ASSERT_TRUE(eventually([&] {
    processes.clear();
    for (const auto& entry : std::filesystem::directory_iterator(pids)) {
      std::string text = testing::read_file(entry.path());
      if (text.empty() || text.back() != '\n') return false;
      processes.push_back(std::stoi(text));
    }
    return processes.size() == 64;
  })) << cluster.trellis("show job " + std::to_string(sleeper)).output;
  EXPECT_EQ(cluster.trellis("cancel " + std::to_string(sleeper)).status, 0);
  ASSERT_TRUE(eventually([&] { return cluster.state(sleeper) == "CA"; }));
  EXPECT_TRUE(eventually(
      [&] { return std::none_of(processes.begin(), processes.end(), process_running); }));

  // A box, drawn by showmesh from the store; then its first host's agent is killed -9: its nodes
  // go down, the job is requeued onto the other hosts, and the agent started again on its host
  // brings its nodes back.
  int64_t boxed = cluster.submit("--shape 2x2x2 -- sleep 600");
  ASSERT_TRUE(eventually([&] { return cluster.state(boxed) == "R"; }));
  test::CommandRun mesh = cluster.trellis("showmesh");
  EXPECT_NE(mesh.output.find("8 allocated, 56 idle"), std::string::npos) << mesh.output;
  const std::string first_nodes = cluster.job(boxed)["nodelist"];
  ASSERT_EQ(::kill(cluster.pid_of("agent-0"), SIGKILL), 0);
  ASSERT_TRUE(eventually([&] { return count_in_state(cluster, "down") == 16; }))
      << cluster.trellis("nodes").output;
  Result<NodeSet> first = parse_hostlist(first_nodes, 64);
  ASSERT_TRUE(first) << first_nodes;
  if (first->first() < 16) {  // it ran on the killed agent's host
    ASSERT_TRUE(eventually([&] {
      nlohmann::json job = cluster.job(boxed);
      return job["state"] == "R" && job["attempt"] == 2;
    })) << cluster.trellis("show job " + std::to_string(boxed)).output;
  }
  test::CommandRun restarted = cluster.start_agent(0);
  ASSERT_EQ(restarted.status, 0) << restarted.output;
  ASSERT_TRUE(eventually([&] { return count_in_state(cluster, "down") == 0; }))
      << cluster.trellis("nodes").output;
  // Heartbeats keep every node up from every host (10 heartbeat intervals).
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(count_in_state(cluster, "down"), 0) << cluster.trellis("nodes").output;
  EXPECT_EQ(cluster.state(boxed), "R");

  // The dashboard, in the machine's own namespace, reads the same store.
  const std::string log = cluster.dir() / "web.log";
  ChildProcess web(
      {TRELLIS_BINARY, "web", "--conf", cluster.dir() / "trellis.toml", "--listen", "127.0.0.1:0"},
      log);
  int port = 0;
  ASSERT_TRUE(eventually([&] {
    std::string text = testing::read_file(log);
    size_t at = text.find("http://127.0.0.1:");
    if (at != std::string::npos) port = std::atoi(text.c_str() + at + 17);
    return port > 0;
  })) << testing::read_file(log);
  httplib::Client api("127.0.0.1", port);
  auto answer = api.Get("/api/nodes");
  ASSERT_TRUE(answer);
  nlohmann::json body = nlohmann::json::parse(answer->body, nullptr, false);
  EXPECT_EQ(body["counts"]["allocated"], 8) << answer->body;
  EXPECT_EQ(body["counts"]["idle"], 56) << answer->body;
}

// The process groups of job `id`'s tasks (attempt 1) on a flat:4 cluster of one node per agent.
std::vector<pid_t> task_groups(const NetnsCluster& cluster, int64_t id) {
  std::vector<pid_t> groups;
  for (int k = 0; k < 4; ++k) {
    std::ifstream in(cluster.dir() / ("agent-" + std::to_string(k) + "/tasks/" +
                                      std::to_string(id) + ".1.0.n" + std::to_string(k) + ".pid"));
    pid_t shepherd = 0, group = 0;
    if (in >> shepherd >> group) groups.push_back(group);
  }
  return groups;
}

// Whether some process of the group is on a CPU or waiting for one.
bool group_running(pid_t group) {
  for (pid_t pid : processes_in_group(group)) {
    Result<ProcStat> stat = read_proc_stat(pid);
    if (stat && stat->state == 'R') return true;
  }
  return false;
}

// Gang switches go down the tree of agents across hosts: two shared jobs that spin on all four
// hosts take turns, each seen frozen on every host while the other runs.
TEST(NetnsClusterTest, GangSwitchesFreezeAndThawOnEveryHost) {
  if (std::string why = NetnsCluster::unavailable(); !why.empty()) GTEST_SKIP() << why;
  NetnsCluster cluster("--machine flat:4 --agents 4 --policy dqt-ffapa --slice 0.3");
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  const std::string spin = " -- sh -c 'while :; do :; done'";
  int64_t a = cluster.submit("-N 4 --share" + spin);
  int64_t b = cluster.submit("-N 4 --share" + spin);
  std::vector<pid_t> groups_a, groups_b;
  ASSERT_TRUE(eventually([&] {
    groups_a = task_groups(cluster, a);
    groups_b = task_groups(cluster, b);
    return groups_a.size() == 4 && groups_b.size() == 4;
  })) << cluster.trellis("queue").output;
  // For each job, on each host: seen running, and seen stopped while the other job ran there.
  std::set<std::pair<int64_t, int>> seen_running, seen_frozen;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((seen_running.size() < 8 || seen_frozen.size() < 8) &&
         std::chrono::steady_clock::now() < deadline) {
    for (int k = 0; k < 4; ++k) {
      bool ra = group_running(groups_a[k]), rb = group_running(groups_b[k]);
      if (ra) seen_running.insert({a, k});
      if (rb) seen_running.insert({b, k});
      if (ra && !rb) seen_frozen.insert({b, k});
      if (rb && !ra) seen_frozen.insert({a, k});
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  EXPECT_EQ(seen_running.size(), 8u);
  EXPECT_EQ(seen_frozen.size(), 8u);
  EXPECT_EQ(cluster.trellis("cancel " + std::to_string(a) + " " + std::to_string(b)).status, 0);
  EXPECT_TRUE(eventually([&] { return cluster.state(a) == "CA" && cluster.state(b) == "CA"; }));
}

}  // namespace
}  // namespace trellis
