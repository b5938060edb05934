// trellis cluster up|down|status: a whole cluster on this host, for trying Trellis out and for
// tests: a private munged, one controller (or several, on a shared PostgreSQL store) and agents
// serving emulated nodes, everything kept under one directory:
//
//   DIR/trellis.toml     the config every client finds through TRELLIS_CONF
//   DIR/state.db         the SQLite store (unless --store names another, e.g. PostgreSQL)
//   DIR/munge/           munged's key, socket, pid and log
//   DIR/trellisd.{pid,log,port} (DIR/trellisd-C.* for controllers C = 1, 2, ...),
//   DIR/agent-K.{pid,log} and DIR/agent-K/ (its state; agent-K/cgroup names its cgroup, which
//                        `down` removes once the agent is gone)
//   DIR/agent-K.json     how agent K was started (its arguments and network namespace), for
//                        `cluster start-agent` to start it again as it was
//   DIR/network.json     with --netns: the bridge and namespaces the agents live in
//                        (daemon/host_network.h), removed by `down`
//
// `down` stops exactly the processes whose pids `up` recorded (checking each pid still runs the
// program it started, so a reused pid is never signalled).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "cli/live_client.h"
#include "core/hostlist.h"
#include "daemon/config.h"
#include "daemon/detached_process.h"
#include "daemon/freezer.h"
#include "daemon/host_network.h"
#include "daemon/munge_daemon.h"
#include "daemon/process.h"
#include "topology/machine.h"

namespace trellis::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

int failure(const std::string& message) {
  std::cerr << "trellis cluster: " << message << "\n";
  return kExitFailure;
}

// The daemons live next to the trellis binary (the build tree, or the install's bin/).

// A free TCP port on the IPv4 address `host` (the loopback interface by default), as the kernel
// hands one out.
Result<int> free_port(const std::string& host = "127.0.0.1") {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return fail(Error::Code::kUnavailable, "cannot open a socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  if (inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) {
    close(fd);
    return fail("not an IPv4 address: " + host);
  }
  socklen_t length = sizeof address;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
    port = ntohs(address.sin_port);
  close(fd);
  if (port == 0) return fail(Error::Code::kUnavailable, "no free port on " + host);
  return port;
}

std::optional<pid_t> read_pid(const fs::path& file) {
  std::ifstream in(file);
  long pid = 0;
  if (!(in >> pid) || pid <= 1) return std::nullopt;
  return static_cast<pid_t>(pid);
}

// Reaps `pid` if it is our child (cluster up's own children); others are polled.
bool gone(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, WNOHANG);
  return !process_running(pid);
}

// Stops the processes whose pids the files give, together: SIGTERM to each pid that still runs
// `program` for `dir`, then SIGKILL to those still running after `patience`. (One at a time, 64
// agents that each take a few seconds to stop took minutes.) The pid files are removed.
void stop_processes(const std::vector<fs::path>& pid_files, const std::string& program,
                    const fs::path& dir, std::chrono::seconds patience) {
  std::vector<pid_t> stopping;
  for (const fs::path& pid_file : pid_files) {
    std::optional<pid_t> pid = read_pid(pid_file);
    if (!pid) continue;
    std::string command = process_command_line(*pid);
    if (!gone(*pid) && command.find(program) != std::string::npos &&
        command.find(dir.string()) != std::string::npos) {
      kill(*pid, SIGTERM);
      stopping.push_back(*pid);
    }
  }
  auto running = [&] {
    return std::any_of(stopping.begin(), stopping.end(), [](pid_t pid) { return !gone(pid); });
  };
  auto deadline = Clock::now() + patience;
  while (running() && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (pid_t pid : stopping)
    if (!gone(pid)) kill(pid, SIGKILL);
  while (running()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  for (const fs::path& pid_file : pid_files) fs::remove(pid_file);
}

// The pid files in `dir` whose names start with `prefix`.
std::vector<fs::path> pid_files(const fs::path& dir, std::string_view prefix) {
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && entry.path().extension() == ".pid")
      files.push_back(entry.path());
  }
  return files;
}

std::string tail(const fs::path& log) {
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > 2000) text = text.substr(text.size() - 2000);
  return text;
}

// Jobs the controller could not cancel (it was stopped first) outlive their agents: each task's
// shepherd recorded "SHEPHERD_PID JOB_PID" in agent-K/tasks/*.pid. A shepherd still working for
// one of this cluster's agents (its command line names the agent's directory) has the job's
// process group killed, then is killed itself.
void kill_leftover_tasks(const fs::path& dir) {
  std::error_code error;
  std::set<pid_t> shepherds;
  for (const fs::directory_entry& agent : fs::directory_iterator(dir, error)) {
    fs::path tasks = agent.path() / "tasks";
    if (agent.path().filename().string().rfind("agent-", 0) != 0 || !fs::is_directory(tasks))
      continue;
    for (const fs::directory_entry& entry : fs::directory_iterator(tasks, error)) {
      if (entry.path().extension() != ".pid") continue;
      std::ifstream in(entry.path());
      long shepherd = 0, job = 0;
      if (!(in >> shepherd >> job) || shepherd <= 1 || job <= 1) continue;
      std::string command = process_command_line(static_cast<pid_t>(shepherd));
      if (!process_running(static_cast<pid_t>(shepherd)) ||
          command.find(dir.string()) == std::string::npos)
        continue;
      kill(-static_cast<pid_t>(job), SIGKILL);
      shepherds.insert(static_cast<pid_t>(shepherd));
    }
  }
  // After every job: one shepherd serves all the tasks of its agent.
  for (pid_t shepherd : shepherds) kill(shepherd, SIGKILL);
}

// Each agent's cgroup (its path in agent-K/cgroup), once its agent and tasks are gone: a clean
// agent removes its own, one killed while a task ran does not. The kernel takes killed processes
// out of their cgroup a moment after they die, so each is tried for up to a second.
void remove_agent_cgroups(const fs::path& dir) {
  std::error_code error;
  for (const fs::directory_entry& agent : fs::directory_iterator(dir, error)) {
    if (agent.path().filename().string().rfind("agent-", 0) != 0) continue;
    std::ifstream in(agent.path() / "cgroup");
    std::string root;
    if (!std::getline(in, root) || root.empty()) continue;
    auto deadline = Clock::now() + std::chrono::seconds(1);
    while (fs::exists(root, error) && !Freezer::remove_agent_cgroup(root) &&
           Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

struct UpArgs {
  std::string machine;
  std::string dir;
  int agents = 1;
  int controllers = 1;
  std::string policy = "easy";
  std::string allocator;
  std::string node_failure = "requeue";
  std::string store;  // empty: sqlite:DIR/state.db
  double heartbeat = 1.0;
  double kill_grace = 2.0;
  double half_life = 7 * 86400;  // [priority] half_life
  double weight_qos = 0;         // [priority] weight_qos
  double slice = 0.1;            // gang policies
  int tree_fanout = 16;
  int max_requeue = 3;
  int node_failure_drain = 3;
  std::string allocation = "lease";
  std::string deadlock = "report";
  bool freeze_with_signals = false;
  bool emulate = false;  // agents emulate their tasks (daemon/emulated_tasks.h)
  bool no_idle_detection = false;
  bool netns = false;  // each agent in a network namespace of its own (daemon/host_network.h)
  // NAME:NODES:RESOURCES, as [[nodetype]] tables (daemon/config.h); NODES "" = the rest.
  std::vector<std::string> node_types;
  bool shared_nodes = false;
};

// "gpu:n[0-1]:cores=8,mem=16G,gpus=4" -> a [[nodetype]] (its resources checked later, with the
// config, by the daemons' parser).
Result<NodeTypeConfig> parse_node_type_option(const std::string& text) {
  size_t first = text.find(':');
  size_t second = first == std::string::npos ? first : text.find(':', first + 1);
  if (second == std::string::npos)
    return fail("--node-type '" + text +
                "': expected NAME:NODES:RESOURCES, e.g. "
                "gpu:n[0-1]:cores=8,mem=16G,gpus=4 (NODES empty: every other node)");
  NodeTypeConfig type;
  type.name = text.substr(0, first);
  type.nodes = text.substr(first + 1, second - first - 1);
  type.resources = text.substr(second + 1);
  return type;
}

// How agent K is started: its arguments, and the network namespace it enters ("" = none).
struct AgentLaunch {
  std::vector<std::string> argv;
  std::string netns;
};

fs::path agent_launch_file(const fs::path& dir, int k) {
  return dir / ("agent-" + std::to_string(k) + ".json");
}

Status save_agent_launch(const fs::path& dir, int k, const AgentLaunch& launch) {
  nlohmann::json out = {{"argv", launch.argv}, {"netns", launch.netns}};
  std::ofstream stream(agent_launch_file(dir, k), std::ios::trunc);
  stream << out.dump(2) << "\n";
  if (!stream)
    return fail(Error::Code::kUnavailable, "cannot write " + agent_launch_file(dir, k).string());
  return Ok{};
}

Result<AgentLaunch> load_agent_launch(const fs::path& dir, int k) {
  std::ifstream in(agent_launch_file(dir, k));
  if (!in)
    return fail(Error::Code::kNotFound, "no agent " + std::to_string(k) + " in " + dir.string() +
                                            " (no " + agent_launch_file(dir, k).string() + ")");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object() || !j["argv"].is_array() || j["argv"].empty() || !j["netns"].is_string())
    return fail(agent_launch_file(dir, k).string() + ": not an agent's launch (argv, netns)");
  AgentLaunch launch;
  for (const nlohmann::json& arg : j["argv"]) {
    if (!arg.is_string()) return fail(agent_launch_file(dir, k).string() + ": argv: not text");
    launch.argv.push_back(arg.get<std::string>());
  }
  launch.netns = j["netns"].get<std::string>();
  return launch;
}

// Starts agent K as its launch file says, logging to DIR/agent-K.log and recording its pid.
Result<pid_t> start_agent(const fs::path& dir, int k, const AgentLaunch& launch) {
  return start_detached(launch.argv, (dir / ("agent-" + std::to_string(k) + ".log")).string(),
                        (dir / ("agent-" + std::to_string(k) + ".pid")).string(), launch.netns);
}

int run_down(const std::string& dir_arg);

int run_up(const UpArgs& args) {
  Result<Machine> machine = Machine::parse(args.machine);
  if (!machine) return usage_error(fail("--machine: " + machine.error().message));
  const int n = machine->node_count();
  if (args.agents < 1 || args.agents > n)
    return usage_error(fail("--agents: between 1 and " + std::to_string(n)));
  if (args.controllers < 1 || args.controllers > 16)
    return usage_error(fail("--controllers: between 1 and 16"));
  if (args.controllers > 1 && !args.store.starts_with("postgres"))
    return usage_error(fail("--controllers " + std::to_string(args.controllers) +
                            ": several controllers share a PostgreSQL store; give --store "
                            "postgresql://..."));
  fs::path dir = fs::absolute(args.dir);
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return failure("cannot create " + dir.string() + ": " + error.message());
  if (auto pid = read_pid(dir / "trellisd.pid"); pid && process_running(*pid))
    return failure("a cluster already runs in " + dir.string() + " (trellis cluster down --dir " +
                   dir.string() + ")");

  // Separate hosts: the agents each in a namespace of their own, the controllers on the bridge.
  std::string controller_host = "127.0.0.1";
  std::optional<HostNetwork> network;
  if (args.netns) {
    if (args.agents > HostNetwork::kMaxHosts)
      return usage_error(fail("--agents " + std::to_string(args.agents) +
                              " with --netns: at most " + std::to_string(HostNetwork::kMaxHosts)));
    if (Status ok = HostNetwork::available(); !ok) return failure("--netns: " + ok.error().message);
    Result<HostNetwork> made = HostNetwork::create(args.agents);
    if (!made) return failure("--netns: " + made.error().message);
    network = std::move(*made);
    if (Status saved = network->save((dir / "network.json").string()); !saved) {
      (void)network->remove();
      return failure(saved.error().message);
    }
    controller_host = network->bridge_address();
  }

  Result<MungeDaemon> munge =
      MungeDaemon::start((dir / "munge").string(), MungeDaemon::Mode::kDetached);
  // Before the config is written (`down` needs it), a failure undoes what was made by hand.
  auto undo_early = [&](const std::string& message) {
    (void)MungeDaemon::stop((dir / "munge").string());
    if (network) (void)network->remove();
    fs::remove(dir / "network.json");
    return failure(message);
  };
  if (!munge) return undo_early(munge.error().message);

  // Controller C listens on its own port and writes DIR/trellisd[-C].{pid,log,port}.
  auto controller_file = [&](int c, const std::string& extension) {
    return dir / ((c == 0 ? std::string("trellisd") : "trellisd-" + std::to_string(c)) + extension);
  };
  std::vector<std::string> addresses;
  for (int c = 0; c < args.controllers; ++c) {
    Result<int> port = free_port(controller_host);
    if (!port) return undo_early(port.error().message);
    addresses.push_back(controller_host + ":" + std::to_string(*port));
  }
  ClusterConfig config;
  config.machine = machine->spec();
  config.store = args.store.empty() ? "sqlite:" + (dir / "state.db").string() : args.store;
  config.munge_socket = munge->socket();
  config.controller.listen = addresses[0];
  config.controllers = addresses;
  config.controller.port_file = controller_file(0, ".port").string();
  config.controller.policy = args.policy;
  config.controller.allocator = args.allocator;
  config.controller.heartbeat_interval = args.heartbeat;
  config.controller.kill_grace = args.kill_grace;
  config.priority.half_life = args.half_life;
  config.priority.weight_qos = args.weight_qos;
  config.controller.slice = args.slice;
  config.controller.tree_fanout = args.tree_fanout;
  config.controller.max_requeue = args.max_requeue;
  config.controller.node_failure_drain = args.node_failure_drain;
  config.controller.allocation =
      args.allocation == "concurrent" ? AllocationMode::kConcurrent : AllocationMode::kLease;
  config.controller.kill_deadlocked = args.deadlock == "kill";
  config.controller.idle_detection = !args.no_idle_detection;
  config.controller.node_failure =
      args.node_failure == "fail" ? NodeFailurePolicy::kFail : NodeFailurePolicy::kRequeue;
  for (const std::string& option : args.node_types) {
    Result<NodeTypeConfig> type = parse_node_type_option(option);
    if (!type) return undo_early(type.error().message);
    config.node_types.push_back(std::move(*type));
  }
  // One partition of every node whose jobs share nodes by cores, memory and GPUs.
  if (args.shared_nodes)
    config.partitions.push_back({.name = "main", .nodes = "", .is_default = true, .shared = true});
  // The config is checked by the parser the daemons use, before anything starts.
  std::string text = format_cluster_config(config);
  if (Result<ClusterConfig> again = parse_cluster_config(text, "trellis.toml"); !again)
    return undo_early(again.error().message);
  const fs::path conf = dir / "trellis.toml";
  std::ofstream(conf) << text;
  // From here on a failure stops what was started (daemons and munged), as `cluster down` does,
  // so that a failed `cluster up` leaves nothing running.
  auto failed_after_start = [&](const std::string& message) {
    int code = failure(message);
    std::cerr << "trellis cluster: stopping what was started\n";
    (void)run_down(dir.string());
    return code;
  };

  for (int c = 0; c < args.controllers; ++c) {
    fs::remove(controller_file(c, ".port"));
    Result<pid_t> controller =
        start_detached({sibling_binary("trellisd"), "--conf", conf.string(), "--listen",
                        addresses[c], "--port-file", controller_file(c, ".port").string()},
                       controller_file(c, ".log").string(), controller_file(c, ".pid").string());
    if (!controller) return failed_after_start(controller.error().message);
    auto deadline = Clock::now() + std::chrono::seconds(30);
    while (!fs::exists(controller_file(c, ".port"))) {
      if (gone(*controller) || Clock::now() > deadline)
        return failed_after_start("trellisd did not start; its log (" +
                                  controller_file(c, ".log").string() + "):\n" +
                                  tail(controller_file(c, ".log")));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  std::string controller_list;
  for (const std::string& a : addresses)
    controller_list += (controller_list.empty() ? "" : ",") + a;

  std::vector<pid_t> agents;
  for (int k = 0; k < args.agents; ++k) {
    NodeId first = static_cast<NodeId>(static_cast<long>(n) * k / args.agents);
    NodeId last = static_cast<NodeId>(static_cast<long>(n) * (k + 1) / args.agents);
    std::vector<NodeId> ids;
    for (NodeId id = first; id < last; ++id) ids.push_back(id);
    fs::path state = dir / ("agent-" + std::to_string(k));
    fs::create_directories(state);
    std::vector<std::string> command = {sibling_binary("trellis-agent"),
                                        "--controller",
                                        controller_list,
                                        "--nodes",
                                        format_hostlist(NodeSet::of(n, ids)),
                                        "--state-dir",
                                        state.string(),
                                        "--munge-socket",
                                        munge->socket(),
                                        "--port-file",
                                        (state / "port").string()};
    if (args.freeze_with_signals) command.push_back("--freeze-with-signals");
    if (args.emulate) command.push_back("--emulate");
    AgentLaunch launch{command, ""};
    if (network) {
      const HostNetwork::Host& host = network->hosts()[static_cast<size_t>(k)];
      launch.argv.insert(launch.argv.end(), {"--listen", host.address + ":0"});
      launch.netns = host.namespace_path();
    }
    if (Status saved = save_agent_launch(dir, k, launch); !saved)
      return failed_after_start(saved.error().message);
    Result<pid_t> agent = start_agent(dir, k, launch);
    if (!agent) return failed_after_start(agent.error().message);
    agents.push_back(*agent);
  }

  // Up when every node's agent has registered.
  Result<LiveClient> client = connect_to_cluster(conf.string());
  if (!client) return failed_after_start(client.error().message);
  auto deadline = Clock::now() + std::chrono::seconds(30);
  for (;;) {
    Result<v1::ListNodesReply> nodes = list_nodes(*client, {});
    int up = 0;
    if (nodes)
      for (const v1::NodeInfo& node : nodes->nodes()) up += node.state() != v1::DOWN;
    if (up == n) break;
    // An agent that cannot start (a missing binary, a bad option) exits at once: say so now.
    for (size_t k = 0; k < agents.size(); ++k) {
      if (!gone(agents[k])) continue;
      fs::path log = dir / ("agent-" + std::to_string(k) + ".log");
      std::string said = tail(log);
      return failed_after_start(
          "trellis-agent " + std::to_string(k) + " exited; " +
          (said.empty() ? "its log is empty (can " + sibling_binary("trellis-agent") + " run?)"
                        : "its log (" + log.string() + "):\n" + said));
    }
    if (Clock::now() > deadline)
      return failed_after_start(std::to_string(up) + " of " + std::to_string(n) +
                                " nodes came up in 30 s; see the logs in " + dir.string());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::cout << "cluster up: " << machine->spec() << " (" << n << " nodes, " << args.agents
            << (args.agents == 1 ? " agent" : " agents") << "), "
            << (args.controllers == 1 ? "controller " : "controllers ") << controller_list
            << ", policy " << args.policy
            << (network
                    ? ", agents on separate hosts " + network->hosts().front().address +
                          " and on, bridge " + network->bridge() + " " + network->bridge_address()
                    : std::string())
            << "\n"
            << "  export TRELLIS_CONF=" << conf.string() << "\n";
  return kExitOk;
}

int run_down(const std::string& dir_arg) {
  fs::path dir = fs::absolute(dir_arg);
  if (!fs::exists(dir / "trellis.toml"))
    return usage_error(fail(Error::Code::kNotFound, "no cluster in " + dir.string()));
  // Jobs first, while the controller and agents can still stop them.
  bool controller_runs = false;
  // Only pid files are read: whatever else a user keeps here (a FIFO) might block a read.
  for (const fs::path& pid_file : pid_files(dir, "trellisd")) {
    std::optional<pid_t> pid = read_pid(pid_file);
    if (pid && process_running(*pid)) controller_runs = true;
  }
  if (controller_runs) {
    if (Result<LiveClient> client = connect_to_cluster((dir / "trellis.toml").string())) {
      Result<v1::ListJobsReply> jobs = list_jobs(*client, {});
      if (jobs && jobs->jobs_size() > 0) {
        v1::CancelRequest cancel;
        for (const v1::JobInfo& job : jobs->jobs()) cancel.add_job_ids(job.id());
        v1::CancelReply cancelled;
        (void)client->controllers->call(
            [&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
              return stub.Cancel(&context, cancel, &cancelled);
            });
        auto deadline = Clock::now() + std::chrono::seconds(10);
        while (Clock::now() < deadline) {
          Result<v1::ListJobsReply> left = list_jobs(*client, {});
          if (!left || left->jobs_size() == 0) break;
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
      }
    }
  }
  stop_processes(pid_files(dir, "agent-"), "trellis-agent", dir, std::chrono::seconds(5));
  stop_processes(pid_files(dir, "trellisd"), "trellisd", dir, std::chrono::seconds(5));
  kill_leftover_tasks(dir);
  remove_agent_cgroups(dir);
  if (fs::exists(dir / "network.json")) {
    Result<HostNetwork> network = HostNetwork::load((dir / "network.json").string());
    if (!network) return failure(network.error().message);
    if (Status removed = network->remove(); !removed) return failure(removed.error().message);
    fs::remove(dir / "network.json");
  }
  if (Status ok = MungeDaemon::stop((dir / "munge").string()); !ok)
    return failure(ok.error().message);
  std::cout << "cluster down: " << dir.string() << "\n";
  return kExitOk;
}

// Starts agent K of the cluster in `dir_arg` again, as `up` started it (same arguments, state
// directory and network namespace): after it was killed, or to try a restart by hand.
int run_start_agent(const std::string& dir_arg, int k) {
  fs::path dir = fs::absolute(dir_arg);
  if (!fs::exists(dir / "trellis.toml"))
    return usage_error(fail(Error::Code::kNotFound, "no cluster in " + dir.string()));
  Result<AgentLaunch> launch = load_agent_launch(dir, k);
  if (!launch) return usage_error(launch.error());
  fs::path pid_file = dir / ("agent-" + std::to_string(k) + ".pid");
  if (auto pid = read_pid(pid_file);
      pid && process_running(*pid) &&
      process_command_line(*pid).find(dir.string()) != std::string::npos)
    return failure("agent " + std::to_string(k) + " runs already (pid " + std::to_string(*pid) +
                   ")");
  Result<pid_t> agent = start_agent(dir, k, *launch);
  if (!agent) return failure(agent.error().message);
  std::cout << "agent " << k << " started, pid " << *agent << "\n";
  return kExitOk;
}

int run_status(const std::string& dir_arg) {
  fs::path dir = fs::absolute(dir_arg);
  if (!fs::exists(dir / "trellis.toml"))
    return usage_error(fail(Error::Code::kNotFound, "no cluster in " + dir.string()));
  int running = 0, stopped = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".pid") continue;
    std::optional<pid_t> pid = read_pid(entry.path());
    bool alive = pid && process_running(*pid);
    (alive ? running : stopped)++;
    std::cout << entry.path().stem().string() << ": "
              << (alive ? "running, pid " + std::to_string(*pid) : std::string("stopped")) << "\n";
  }
  if (Result<LiveClient> client = connect_to_cluster((dir / "trellis.toml").string())) {
    if (Result<v1::ListNodesReply> nodes = list_nodes(*client, {})) {
      int up = 0;
      for (const v1::NodeInfo& node : nodes->nodes()) up += node.state() != v1::DOWN;
      std::cout << "nodes: " << up << " of " << nodes->nodes_size() << " up\n";
    } else {
      std::cout << "controller: not answering\n";
    }
  }
  return stopped == 0 && running > 0 ? kExitOk : kExitFailure;
}

}  // namespace

std::string sibling_binary(const std::string& name) {
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  return (self.parent_path() / name).string();
}

void add_cluster_command(CLI::App& app, int& status) {
  CLI::App* cluster = app.add_subcommand(
      "cluster", "A local cluster on this host: a munged, trellisd and agents with emulated nodes");
  cluster->require_subcommand(1);

  auto up = std::make_shared<UpArgs>();
  CLI::App* u = cluster->add_subcommand(
      "up", "Start a cluster: trellis cluster up --machine torus:4x4x4 --dir /tmp/c");
  u->add_option("--machine", up->machine, "The machine spec (trellis topo --help)")->required();
  u->add_option("--dir", up->dir, "Where everything of the cluster is kept")->required();
  u->add_option("--agents", up->agents, "How many agents share the nodes (default 1)");
  u->add_option("--controllers", up->controllers,
                "How many controllers (trellisd) share the store (default 1; more than one "
                "needs a PostgreSQL --store)");
  u->add_option("--store", up->store,
                "The store's URL (default sqlite:DIR/state.db; or postgresql://USER@HOST/DB, "
                "an empty database or one of this same cluster)");
  u->add_option("--policy", up->policy,
                "The queue or gang policy of `trellis list` (default easy; e.g. dqt-ffapa)");
  u->add_option("--allocator", up->allocator, "The allocator (default: the machine's)");
  u->add_option("--node-failure", up->node_failure, "A failed node's jobs: requeue or fail")
      ->check(CLI::IsMember({"requeue", "fail"}));
  u->add_option("--heartbeat", up->heartbeat, "Seconds between agent heartbeats (default 1)")
      ->check(CLI::Range(0.05, 3600.0));
  u->add_option("--slice", up->slice, "Gang policies: seconds per time slot (default 0.1)")
      ->check(CLI::Range(0.005, 3600.0));
  u->add_option("--tree-fanout,--switch-fanout", up->tree_fanout,
                "Children per agent in the control tree: launches, signals, gang switches, "
                "pings (default 16)")
      ->check(CLI::Range(1, 64));
  u->add_option("--allocation", up->allocation,
                "With several controllers: lease (the lease holder places every job; the\n"
                "default) or concurrent (each places the jobs it was given; queue policies)")
      ->check(CLI::IsMember({"lease", "concurrent"}));
  u->add_option("--max-requeue", up->max_requeue,
                "Node-failure requeues after which a job is held (default 3)")
      ->check(CLI::Range(1, 1000));
  u->add_option("--node-failure-drain", up->node_failure_drain,
                "Jobs a node may fail before it is drained (default 3)")
      ->check(CLI::Range(1, 1000));
  u->add_option("--deadlock", up->deadlock,
                "Gang policies: a globally stopped job is reported or killed (default report)")
      ->check(CLI::IsMember({"report", "kill"}));
  u->add_flag("--no-idle-detection", up->no_idle_detection,
              "Gang policies: keep giving slots to jobs that wait for input");
  u->add_flag("--freeze-with-signals", up->freeze_with_signals,
              "Agents freeze jobs with SIGSTOP/SIGCONT even where a freezer cgroup works");
  u->add_flag("--emulate", up->emulate,
              "Agents emulate tasks instead of running them (sleep N lasts N s, others end at "
              "once): for machines of many thousands of nodes on one host");
  u->add_option("--priority-half-life", up->half_life,
                "Seconds in which fair-share usage decays by half (default 604800: 7 days)")
      ->check(CLI::Range(0.0, 1e9));
  u->add_option("--priority-weight-qos", up->weight_qos,
                "Weight of a job's QOS Priority in its priority (PriorityWeightQOS; default 0: "
                "QOS Priority counts for nothing until it is set)")
      ->check(CLI::Range(0.0, 1e9));
  u->add_option("--kill-grace", up->kill_grace, "Seconds from SIGTERM to SIGKILL (default 2)")
      ->check(CLI::Range(0.0, 3600.0));
  u->add_option("--node-type", up->node_types,
                "NAME:NODES:RESOURCES, a [[nodetype]] of the config (repeatable), e.g. "
                "gpu:n[0-1]:cores=8,mem=16G,gpus=a100:4 (NODES empty: every other node)");
  u->add_flag("--shared-nodes", up->shared_nodes,
              "Jobs share nodes, each given the cores, memory and GPUs it asks for (a partition "
              "'main' with shared = true; needs --node-type for every node)");
  u->add_flag("--netns", up->netns,
              "Each agent on a host of its own: a network namespace with its own address on a "
              "private bridge, the controllers on the bridge (root; removed by `down`)");
  u->callback([up, &status] { status = run_up(*up); });

  auto down_dir = std::make_shared<std::string>();
  CLI::App* d = cluster->add_subcommand("down", "Cancel its jobs and stop a cluster's processes");
  d->add_option("--dir", *down_dir, "The cluster's directory")->required();
  d->callback([down_dir, &status] { status = run_down(*down_dir); });

  auto status_dir = std::make_shared<std::string>();
  CLI::App* s = cluster->add_subcommand("status", "Which of a cluster's processes run");
  s->add_option("--dir", *status_dir, "The cluster's directory")->required();
  s->callback([status_dir, &status] { status = run_status(*status_dir); });

  auto start_agent_args = std::make_shared<std::pair<std::string, int>>("", 0);
  CLI::App* sa = cluster->add_subcommand(
      "start-agent", "Start agent K again as `up` started it (after it was killed or stopped)");
  sa->add_option("--dir", start_agent_args->first, "The cluster's directory")->required();
  sa->add_option("agent", start_agent_args->second, "The agent's number K (agent-K.log)")
      ->required()
      ->check(CLI::NonNegativeNumber);
  sa->callback([start_agent_args, &status] {
    status = run_start_agent(start_agent_args->first, start_agent_args->second);
  });

  add_live_demo_command(*cluster, status);
}

}  // namespace trellis::cli
