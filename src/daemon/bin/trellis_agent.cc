// trellis-agent: the node agent. See daemon/agent.h.
#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "daemon/agent.h"
#include "daemon/config.h"
#include "daemon/node_discovery.h"

int main(int argc, char** argv) {
  using namespace trellis;
  CLI::App app(
      "trellis-agent: the Trellis node agent. It runs the job processes that the controllers "
      "(trellisd) launch on the nodes it serves, each in its own process group, as the job's "
      "user, with stdout/stderr in the job's files. It registers with a controller, heartbeats, "
      "and reports every exit until a controller acknowledges it. Its calls are authenticated "
      "with MUNGE: only the daemon user may launch or signal. Its tasks are recorded in the "
      "state directory, so SIGTERM/SIGINT (or a crash) leaves the jobs running and the next "
      "agent on the same state directory adopts them.",
      "trellis-agent");
  std::string conf, controllers, nodes, port_file, tree_port_file;
  AgentConfig config;
  long heartbeat_ms = config.heartbeat_interval.count();
  double kill_wait = static_cast<double>(config.kill_wait.count()) / 1000;
  app.add_option("--conf,-c", conf,
                 "the cluster config (TOML; default: $TRELLIS_CONF): the controllers' addresses "
                 "and munged's socket come from it unless --controller or --munge-socket say");
  app.add_option("--controller", controllers,
                 "controller addresses host:port, comma-separated; the agent fails over between "
                 "them (default: [cluster] controllers of --conf)");
  app.add_option("--nodes", nodes, "the node names this agent serves, as a hostlist: 'n[0-63]'")
      ->required();
  app.add_option("--listen", config.listen,
                 "address of the agent's RPC service; port 0 picks a free port")
      ->capture_default_str();
  app.add_option("--tree-port", config.tree_port,
                 "port of the control tree's endpoint, on the --listen host (the agent's "
                 "address in the cluster); 0 picks a free port")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  app.add_option("--advertise", config.advertise_host,
                 "host name the controllers and other agents should call (default: the --listen "
                 "host, or this host's name when listening on every interface)");
  app.add_option("--state-dir", config.state_dir,
                 "directory for the task state (tasks.json) and the shepherds' status files")
      ->required();
  app.add_option("--munge-socket", config.munge_socket, "munged's socket (default: libmunge's)");
  app.add_flag("--freeze-with-signals", config.freeze_with_signals,
               "gang switches stop jobs with SIGSTOP/SIGCONT (confirmed in /proc) even where a "
               "freezer cgroup could be made");
  app.add_flag("--emulate", config.emulate,
               "emulate the tasks instead of running them, for scale tests: `sleep N` ends after "
               "N seconds, `false` at once with exit 1, anything else at once with exit 0; "
               "signals and gang switches act on them as on processes (nothing is forked)");
  app.add_option("--shell", config.shell_binary,
                 "the job shell (default: trellis-shell next to this program)");
  app.add_option("--job-programs-dir", config.job_program_places,
                 "where copies of the job shell and the Slurm commands go when other users cannot "
                 "reach them (default: /run/trellis, /var/tmp, /tmp; may be given again)");
  app.add_option("--daemon-uid", config.daemon_uid,
                 "the only uid allowed to call the agent (default: the agent's own)");
  app.add_option("--heartbeat-ms", heartbeat_ms,
                 "how often controllers ping the agent until one says, in milliseconds (the agent "
                 "registers again when none came for 10 intervals)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--kill-wait", kill_wait,
                 "seconds between SIGTERM and SIGKILL when a cancel gives no grace period")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--port-file", port_file,
                 "write the bound gRPC port to this file once listening (for scripts and tests)");
  app.add_option("--tree-port-file", tree_port_file,
                 "write the bound tree port to this file once listening");
  app.set_version_flag("--version", TRELLIS_VERSION);
  CLI11_PARSE(app, argc, argv);

  // A site's agents read the one cluster config that every program reads; a test's or a
  // script's may be given everything on the command line instead.
  if (controllers.empty() || config.munge_socket.empty()) {
    if (!conf.empty() || std::getenv("TRELLIS_CONF") != nullptr) {
      Result<std::string> path = find_cluster_config(conf);
      Result<ClusterConfig> cluster =
          path ? load_cluster_config(*path) : Result<ClusterConfig>(path.error());
      if (!cluster) {
        std::cerr << "trellis-agent: " << cluster.error().message << "\n";
        return 2;
      }
      if (controllers.empty())
        for (const std::string& address : cluster->controllers)
          controllers += (controllers.empty() ? "" : ",") + address;
      if (config.munge_socket.empty()) config.munge_socket = cluster->munge_socket;
    }
    if (controllers.empty()) {
      std::cerr << "trellis-agent: no controller to call: give --controller host:port, or "
                   "--conf (or TRELLIS_CONF) naming a config with [cluster] controllers\n";
      return 2;
    }
  }
  std::stringstream addresses(controllers);
  for (std::string address; std::getline(addresses, address, ',');) {
    if (!address.empty()) config.controllers.push_back(address);
  }
  Result<std::vector<std::string>> names = parse_node_names(nodes);
  if (!names) {
    std::cerr << "trellis-agent: " << names.error().message << "\n";
    return 2;
  }
  config.nodes = *names;
  config.heartbeat_interval = std::chrono::milliseconds(heartbeat_ms);
  config.kill_wait = std::chrono::milliseconds(static_cast<long long>(kill_wait * 1000));

  // SIGTERM and SIGINT are taken by sigwait below, so every thread must block them; a peer
  // closing a connection must not kill the agent.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  // An agent of one node runs on that node's hardware: what hwloc finds goes to the controller,
  // which drains the node when its [[nodetype]] claims more. Agents that share a host among
  // several nodes (a test cluster), or emulate their tasks, have no hardware of their own.
  if (config.nodes.size() == 1 && !config.emulate) {
    if (Result<NodeInventory> found = discover_node(); found) {
      config.found_resources = node_inventory_text(*found);
      agent_log("node " + config.nodes.front() + ": hwloc finds " + config.found_resources);
    } else {
      agent_log("node " + config.nodes.front() +
                ": not checked against its [[nodetype]]: " + found.error().message);
    }
  }
  Result<std::unique_ptr<Agent>> agent = Agent::start(config);
  if (!agent) {
    agent_log("cannot start: " + agent.error().message);
    return 1;
  }
  // Written whole under another name, then renamed: a reader never sees a partial number.
  auto write_port = [](const std::string& file, int port) {
    if (file.empty()) return true;
    std::string temporary = file + ".tmp";
    {
      std::ofstream out(temporary, std::ios::trunc);
      out << port << "\n";
    }
    if (std::rename(temporary.c_str(), file.c_str()) == 0) return true;
    agent_log("cannot write the port file " + file);
    return false;
  };
  // The tree's first: a reader of the gRPC port file may expect both.
  if (!write_port(tree_port_file, (*agent)->tree_port()) ||
      !write_port(port_file, (*agent)->port()))
    return 1;

  int received = 0;
  sigwait(&stop_signals, &received);
  agent_log(std::string("stopping on ") + (received == SIGINT ? "SIGINT" : "SIGTERM") +
            "; jobs keep running");
  (*agent)->shutdown();
  return 0;
}
