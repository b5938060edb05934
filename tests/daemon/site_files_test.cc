// The files a real multi-host site installs (deploy/: systemd units, the one cluster config, an
// agent's environment file; docs/site.md says how): the example config is one trellisd accepts,
// and an agent started with exactly the command line its unit gives, expanded as systemd expands
// it, joins a live cluster and runs its nodes' share of a job.
#include <signal.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "../build_paths.h"
#include "daemon/agent.h"
#include "daemon/config.h"
#include "live_cluster.h"
#include "topology/machine.h"

namespace trellis {
namespace {

using testing::eventually;
using testing::LiveCluster;

const std::string kDeploy = std::string(TRELLIS_SOURCE_DIR) + "/deploy/";

// KEY=VALUE lines of an environment file or of a unit's Environment= lines.
std::map<std::string, std::string> assignments(const std::string& text, const std::string& prefix) {
  std::map<std::string, std::string> values;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    line = line.substr(prefix.size());
    size_t equals = line.find('=');
    if (equals != std::string::npos) values[line.substr(0, equals)] = line.substr(equals + 1);
  }
  return values;
}

// The unit's ExecStart with ${NAME} replaced from `environment`, as systemd does (an unknown
// name fails the test: the unit would start the agent with an empty option).
std::string exec_start(const std::string& unit, const std::map<std::string, std::string>& env) {
  std::string command = assignments(unit, "").at("ExecStart");
  std::smatch found;
  const std::regex reference(R"(\$\{([A-Z_]+)\})");
  while (std::regex_search(command, found, reference)) {
    auto value = env.find(found[1]);
    if (value == env.end()) {
      ADD_FAILURE() << "the unit uses ${" << found[1] << "}, which nothing sets";
      return "";
    }
    command.replace(static_cast<size_t>(found.position(0)), static_cast<size_t>(found.length(0)),
                    value->second);
  }
  return command;
}

TEST(SiteFilesTest, TheExampleConfigAndAgentEnvironmentNameOneMachine) {
  Result<ClusterConfig> config = load_cluster_config(kDeploy + "site/trellis.toml");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->controllers.size(), 2u) << "the example shows two service nodes";
  EXPECT_TRUE(config->store.starts_with("postgresql://")) << "several controllers share a server";
  Result<Machine> machine = Machine::parse(config->machine);
  ASSERT_TRUE(machine) << machine.error().message;
  // The agent's nodes are nodes of that machine.
  std::map<std::string, std::string> env =
      assignments(testing::read_file(kDeploy + "site/agent.env"), "");
  ASSERT_TRUE(env.contains("TRELLIS_NODES"));
  Result<std::vector<std::string>> nodes = parse_node_names(env["TRELLIS_NODES"]);
  ASSERT_TRUE(nodes) << nodes.error().message;
  for (const std::string& node : *nodes)
    EXPECT_LT(std::stol(node.substr(1)), machine->node_count()) << node;
}

TEST(SiteFilesTest, AnAgentStartedAsItsUnitSaysJoinsTheClusterAndRunsItsNodes) {
  // agent-0 serves n[0-1], agent-1 n[2-3]; agent-1 is stopped and started again by the unit.
  LiveCluster cluster("--machine flat:4 --agents 2");
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  const pid_t old_agent = cluster.pid_of("agent-1");
  ASSERT_EQ(::kill(old_agent, SIGTERM), 0);
  ASSERT_TRUE(eventually([&] { return ::kill(old_agent, 0) != 0; }));

  const std::string unit = testing::read_file(kDeploy + "systemd/trellis-agent.service");
  ASSERT_NE(unit.find("KillMode=process"), std::string::npos) << "jobs must outlive the agent";
  std::map<std::string, std::string> env = assignments(unit, "Environment=");
  // What this host's /etc/trellis/agent.env and the test's own ports and folders say.
  env["TRELLIS_CONF"] = cluster.dir() / "trellis.toml";
  env["TRELLIS_NODES"] = "n[2-3]";
  env["TRELLIS_AGENT_LISTEN"] = "127.0.0.1:0";
  env["TRELLIS_TREE_PORT"] = "0";
  env["TRELLIS_STATE_DIR"] = cluster.dir() / "agent-1";
  std::string command = exec_start(unit, env);
  ASSERT_TRUE(command.starts_with("/usr/local/bin/trellis-agent ")) << command;
  command.replace(0, std::string("/usr/local/bin/trellis-agent").size(), TRELLIS_AGENT_BINARY);
  // No --controller and no --munge-socket: both come from the config, as on a site.
  EXPECT_EQ(command.find("--controller"), std::string::npos) << command;

  const std::string log = cluster.dir() / "unit-agent.log";
  test::CommandRun started = test::run_command(command + " > " + log + " 2>&1 & echo $!");
  const pid_t agent = static_cast<pid_t>(std::stol(started.output));
  // It registers (with the controller the config names, authenticated through the config's
  // munged), and only then is a job of every node submitted: were it not there, the job would
  // wait for ever.
  bool joined = eventually([&] {
    return testing::read_file(log).find("registered with") != std::string::npos ||
           ::kill(agent, 0) != 0;
  });
  const bool running = ::kill(agent, 0) == 0;
  test::CommandRun ran;
  if (joined && running) ran = cluster.trellis("submit -N 4 --wait -o /dev/null -- /bin/true");
  // Stopped by its pid (a shell started it, so it is not this process's child).
  ::kill(agent, SIGTERM);
  eventually([&] { return ::kill(agent, 0) != 0; }, std::chrono::seconds(10));
  ASSERT_TRUE(joined && running) << testing::read_file(log);
  EXPECT_EQ(ran.status, 0) << ran.output << testing::read_file(log);
  EXPECT_EQ(cluster.state(1), "CD");
}

}  // namespace
}  // namespace trellis
