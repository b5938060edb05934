// The node agent (trellis-agent): runs the jobs a controller launches on the nodes it serves.
//
// Its address in the cluster is its control-tree endpoint (daemon/tree/tree_channel.h): what the
// controllers send to many agents (launches, signals, gang switches, liveness pings) comes down
// the tree, each message signed once by its sender and checked here (daemon/tree/tree_auth.h),
// forwarded to this agent's children in the message's tree and answered with their replies
// folded in (daemon/tree/tree_node.h). It also serves the Agent RPC service (Launch, Signal,
// Tasks) on its gRPC port to the daemon user only (every call must carry a MUNGE credential of
// that user), for tools and tests.
//
// It registers with a controller (any of them: they share the store), and reports each task's
// exit with ReportExit until a controller acknowledges it (the exits survive agent restarts in
// the state directory). Liveness is the controller's to watch: it pings its agents through the
// tree, and a ping is answered on a channel worker, never behind a launch (launches are accepted
// at once and their tasks started by the launcher's thread, daemon/agent_launcher.h). The agent
// registers again when a ping asks it to, when a controller answers an exit report with
// NOT_FOUND or FAILED_PRECONDITION ("I do not know you"), and when no ping came for 10 ping
// intervals (a controller that lost track of it).
//
// Each launch starts one job shell (trellis-shell, shell/shell.h) per node of the step, which
// starts the node's ranks; the shells reach the agent on its shell socket (daemon/shell_socket.h)
// for the cross-node half of their PMI barriers and to say why a step failed. The agents of a
// step exchange their barriers' data on the control tree (daemon/pmi_exchange.h,
// daemon/pmi_tree_link.h).
//
// One agent may serve many node names (an emulated cluster on one host). Stopping the agent
// leaves its jobs running; the next agent on the same state directory adopts them.
//
//   AgentConfig config;
//   config.nodes = {"n0", "n1"};
//   config.controllers = {"127.0.0.1:6817"};
//   config.state_dir = "/var/lib/trellis/agent";
//   Result<std::unique_ptr<Agent>> agent = Agent::start(config);
//   ... (*agent)->address() ...   // host:tree-port, as registered
//   (*agent)->shutdown();
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

#include "core/node_inventory.h"
#include "core/result.h"
#include "daemon/auth.h"
#include "daemon/task_runner.h"
#include "trellis/v1/trellis.grpc.pb.h"

namespace grpc {
class Server;
}

namespace trellis {

class Authenticator;
class ControllerClient;
class AgentLauncher;
class PmiExchangeHub;
class PmiTreeLink;
class ShellSocket;
class SwitchNode;
class Tasks;
class TreeChannel;
class TreeNode;
class TreeVerifier;
struct StepKey;

struct AgentConfig {
  std::vector<std::string> nodes;        // node names served
  std::vector<std::string> controllers;  // "host:port" of each controller
  // The gRPC service's address; port 0 = any free port (see Agent::port()). The control tree
  // listens on the same host, on `tree_port` (0 = any free port, see Agent::tree_port()).
  std::string listen = "127.0.0.1:0";
  int tree_port = 0;
  // The host controllers and other agents should call, registered as host:tree_port; "" = the
  // listen host, or this host's name when listening on every interface.
  std::string advertise_host;
  std::string state_dir;
  std::string munge_socket;  // "" = libmunge's default
  int daemon_uid = -1;       // the only uid allowed to call the agent; -1 = the agent's own
  // How often controllers ping, until one says (the agent registers again after 10 without one).
  std::chrono::milliseconds heartbeat_interval{10000};
  std::chrono::milliseconds rpc_deadline{5000};  // per call to a controller
  std::chrono::milliseconds kill_wait{10000};    // SIGTERM -> SIGKILL when a cancel gives no grace
  // Gang switches stop jobs with SIGSTOP/SIGCONT even where a freezer cgroup could be made
  // (daemon/freezer.h).
  bool freeze_with_signals = false;
  // Tasks are emulated, not run (daemon/emulated_tasks.h): for scale tests of thousands of nodes
  // on one host. Nothing is forked and nothing kept in the state directory; gang switches stop
  // the tasks' clocks.
  bool emulate = false;
  // The job shell; "" = trellis-shell next to the running executable.
  std::string shell_binary;
  // A directory put first in jobs' PATH, holding `srun` (trellis called as srun is `trellis run`)
  // and the other Slurm command names; "" = slurm-bin next to the running executable (the build
  // tree), else ../libexec/trellis/slurm from it (`make install`), if either exists.
  std::string slurm_commands;
  // Where copies of those two go when other users cannot reach them (daemon/job_programs.h),
  // in order; empty = /run/trellis, /var/tmp, /tmp.
  std::vector<std::string> job_program_places;
  // What hwloc found on this host (core/node_inventory.h's text), sent when registering so that
  // the controller can check the node against its [[nodetype]]; "" = not checked (several nodes
  // share this host, or tasks are emulated).
  std::string found_resources;
};

class Agent {
 public:
  // Opens the state directory (adopting tasks from an earlier run), starts serving and starts
  // registering with the controllers in the background.
  static Result<std::unique_ptr<Agent>> start(AgentConfig config);

  ~Agent();  // shutdown()
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // The gRPC port bound, the tree port bound, and the address registered with the controllers
  // (host:tree port).
  int port() const { return port_; }
  int tree_port() const { return tree_port_; }
  const std::string& address() const { return address_; }

  // Stops serving and calling controllers; the jobs keep running. Idempotent.
  void shutdown();

 private:
  class Service;

  explicit Agent(AgentConfig config);
  void controller_loop();
  void wake();
  // A controller asked (in a liveness ping) for a new registration.
  void register_again();
  // A liveness ping came.
  void pinged();
  // Ok when process `pid` of user `uid` is the job shell of `node` in `step` (shell socket).
  Status authorize_shell(pid_t pid, uid_t uid, const StepKey& step, const std::string& node);
  // Tells the exchange which steps no longer run here (every task of theirs has ended).
  void reap_steps();

  AgentConfig config_;
  std::unordered_set<std::string> served_;  // its nodes' names
  std::vector<std::string> base_env_;       // the agent's own environment, "NAME=value"
  std::unique_ptr<Authenticator> authenticator_;
  std::unique_ptr<ControllerClient> controllers_;
  std::unique_ptr<Tasks> runner_;
  // The cgroup limits that hold each job to its grant (daemon/resource_limits.h), when the agent
  // serves one node of a machine with an inventory; null otherwise (its log says why at
  // start).
  std::unique_ptr<ResourceLimits> limits_;
  // What this host has (config_.found_resources), when the agent serves one node here: where
  // the tasks of a job holding the node whole are bound when it asks (--cpu-bind).
  std::optional<NodeInventory> host_inventory_;
  std::unique_ptr<SwitchNode> switch_node_;  // gang switches (daemon/switch_node.h)
  std::unique_ptr<AgentLauncher> launcher_;
  // The control tree (daemon/tree/): messages come in on the channel, are checked by the
  // verifier and handled by the node, which is set once the agent's address is known.
  std::unique_ptr<TreeVerifier> verifier_;
  std::unique_ptr<TreeChannel> tree_channel_;
  std::unique_ptr<TreeNode> tree_owner_;
  std::atomic<TreeNode*> tree_node_{nullptr};
  std::unique_ptr<PmiExchangeHub> exchange_;    // steps' PMI barriers across nodes
  std::unique_ptr<PmiTreeLink> exchange_link_;  // the exchange's messages to other agents
  std::unique_ptr<ShellSocket> shells_;
  std::string shell_binary_, shell_socket_, slurm_commands_;
  std::mutex reasons_mutex_;
  std::map<TaskKey, std::string> reasons_;  // why a task's step failed, from its shell
  std::set<TaskKey> start_refused_;         // not started: their limits did not take here
  std::string drain_reason_;                // the node is to be drained for this ("" = not)
  int drain_tries_ = 0;
  static constexpr int kDrainTries = 5;
  CredentialSource credentials_;  // signs the exchange's messages to other agents
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  int tree_port_ = 0;
  std::string address_;
  std::atomic<int64_t> last_ping_ms_{0};  // steady clock, when the last ping came

  std::mutex mutex_;
  std::condition_variable wake_;
  bool woken_ = false;           // guarded by mutex_
  bool stopping_ = false;        // guarded by mutex_
  bool register_asked_ = false;  // guarded by mutex_
  std::thread controller_thread_;
};

// Node names from a hostlist whose parts may carry different prefixes: "n[0-3],gpu[0-1],login".
// A part without brackets is one name, as written; numbers in brackets go up to kMaxNodeNumber.
// Errors: an empty part, a name given twice, more than kMaxAgentNodes names. (The limits keep a
// hostile or mistyped list cheap: one agent emulating thousands of nodes is already a lot.)
Result<std::vector<std::string>> parse_node_names(std::string_view hostlist);
constexpr size_t kMaxAgentNodes = 4096;
constexpr int kMaxNodeNumber = (1 << 18) - 1;  // Fugaku (158,976 nodes) fits

// Writes "2026-01-31T12:00:00.123Z trellis-agent: MESSAGE" to stderr, one line at a time.
void agent_log(std::string_view message);

}  // namespace trellis
