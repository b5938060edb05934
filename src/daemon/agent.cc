#include "daemon/agent.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <optional>

#include <grpcpp/grpcpp.h>

#include "core/hostlist.h"
#include "core/node_inventory.h"
#include "core/write_all.h"
#include "daemon/agent_launcher.h"
#include "daemon/agent_requests.h"
#include "daemon/agent_service.h"
#include "daemon/auth.h"
#include "daemon/controller_client.h"
#include "daemon/emulated_tasks.h"
#include "daemon/job_programs.h"
#include "daemon/pmi_exchange.h"
#include "daemon/pmi_tree_link.h"
#include "daemon/server_threads.h"
#include "daemon/shell_socket.h"
#include "daemon/switch_node.h"
#include "daemon/task_runner.h"
#include "daemon/tree/tree_auth.h"
#include "daemon/tree/tree_channel.h"
#include "daemon/tree/tree_node.h"
#include "shell/exchange_wire.h"
#include "trellis/v1/trellis.grpc.pb.h"

extern char** environ;

namespace trellis {
namespace {

using Clock = std::chrono::steady_clock;
using grpc::StatusCode;

// Names this agent's freezer cgroup after its state directory (FNV-1a), so that a restarted agent
// finds the cgroups of the jobs it adopts, and agents on one host do not share one.
std::string state_dir_tag(const std::string& state_dir) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : state_dir) hash = (hash ^ c) * 1099511628211ull;
  char text[32];
  std::snprintf(text, sizeof text, "agent-%016llx", static_cast<unsigned long long>(hash));
  return text;
}

constexpr auto kMinBackoff = std::chrono::milliseconds(200);
constexpr auto kMaxBackoff = std::chrono::seconds(10);
// How often steps that ended here are dropped from the exchange, and stale barriers failed, when
// no exit wakes the agent sooner.
constexpr auto kExchangeSweep = std::chrono::seconds(2);

// A program installed beside the running one (the build tree and `make install` put all of
// Trellis's programs in one directory).
std::string beside_this_program(const std::string& name) {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return name;
  std::string path(self, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/') + 1) + name;
}

std::string describe(const TaskInfo& task) {
  std::string text = "job " + std::to_string(task.key.job_id) + " attempt " +
                     std::to_string(task.key.attempt) + " step " + std::to_string(task.key.step) +
                     " on " + task.key.node;
  if (task.signal != 0) return text + " ended by signal " + std::to_string(task.signal);
  return text + " exited " + std::to_string(task.exit_code);
}

// "host" of "host:port" / "[v6]:port".
std::string host_of(const std::string& address) {
  size_t colon = address.rfind(':');
  std::string host = colon == std::string::npos ? address : address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return host;
}

}  // namespace

void agent_log(std::string_view message) {
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  char line_start[48];
  std::snprintf(line_start, sizeof line_start, "%s.%03dZ", stamp, static_cast<int>(millis.count()));
  std::string line = std::string(line_start) + " trellis-agent: ";
  line += message;
  line += '\n';
  // One write() per line (iostream's << with endl made four): lines of different threads never
  // interleave, and a launch's two lines cost two system calls.
  (void)!::write(STDERR_FILENO, line.data(), line.size());
}

Result<std::vector<std::string>> parse_node_names(std::string_view hostlist) {
  // Split at the commas outside brackets; each part has its own prefix.
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= hostlist.size(); ++i) {
    if (i == hostlist.size() || (hostlist[i] == ',' && depth == 0)) {
      parts.push_back(hostlist.substr(start, i - start));
      start = i + 1;
    } else if (hostlist[i] == '[') {
      ++depth;
    } else if (hostlist[i] == ']') {
      --depth;
    }
  }
  if (parts.size() > kMaxAgentNodes)
    return fail("nodes: more than " + std::to_string(kMaxAgentNodes) +
                " names; one agent serves at most that many");
  std::vector<std::string> names;
  auto too_many = [&](size_t more) {
    return names.size() + more > kMaxAgentNodes
               ? std::optional(fail("nodes: more than " + std::to_string(kMaxAgentNodes) +
                                    " names; one agent serves at most that many"))
               : std::nullopt;
  };
  for (std::string_view part : parts) {
    if (part.empty()) return fail("nodes '" + std::string(hostlist) + "': empty name");
    size_t bracket = part.find('[');
    if (bracket == std::string_view::npos) {  // one name, taken as it is
      if (auto error = too_many(1)) return *error;
      names.emplace_back(part);
      continue;
    }
    std::string_view prefix = part.substr(0, bracket);
    Result<NodeSet> ids = parse_hostlist(part, kMaxNodeNumber + 1, prefix);
    if (!ids) return fail("nodes: " + ids.error().message);
    if (auto error = too_many(static_cast<size_t>(ids->count()))) return *error;
    for (NodeId id = ids->next(0); id >= 0; id = ids->next(id + 1)) {
      names.push_back(std::string(prefix) + std::to_string(id));
    }
  }
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  if (auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end()) {
    return fail("nodes '" + std::string(hostlist) + "': " + *dup + " appears twice");
  }
  return names;
}

Agent::Agent(AgentConfig config) : config_(std::move(config)) {}

namespace {

// Marks `status` out of memory when the kernel's OOM killer ended a process in its job attempt's
// group here, with the step, node, limit and peak in its reason (Slurm's OUT_OF_MEMORY).
void mark_out_of_memory(const ResourceLimits& limits, const TaskInfo& task,
                        v1::TaskStatus& status) {
  const std::string group =
      std::to_string(task.key.job_id) + "." + std::to_string(task.key.attempt);
  const ResourceLimits::MemoryReport used = limits.memory_report(group);
  if (used.oom_kills <= 0) return;
  auto mib = [](int64_t bytes) { return format_memory_mb((bytes + (1 << 20) - 1) >> 20); };
  status.set_out_of_memory(true);
  status.set_reason(
      "step " + std::to_string(task.key.job_id) + "." + std::to_string(task.key.step) + " on " +
      task.key.node + " went over its memory limit of " +
      (used.limit_bytes > 0 ? mib(used.limit_bytes) : std::string("(none)")) + " (peak " +
      (used.peak_bytes >= 0 ? mib(used.peak_bytes) : "unknown") +
      "): the kernel's OOM killer ended " + std::to_string(used.oom_kills) + " process(es)");
}

// Appends `line` to the task's stderr file, which its job made: only a regular file of the job's
// user, opened without following a link (the agent is root, the path the user's).
Status note_in_error_file(const TaskInfo& task, const std::string& line) {
  if (task.error_file.empty()) return fail("the task's error file is not known (an adopted task)");
  const int fd = ::open(task.error_file.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return fail(task.error_file + ": " + std::strerror(errno));
  struct stat info {};
  Status written = Ok{};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) ||
      (task.uid >= 0 && info.st_uid != static_cast<uid_t>(task.uid))) {
    written = fail(task.error_file + ": not a regular file of uid " + std::to_string(task.uid));
  } else {
    write_all(fd, line + "\n");
  }
  ::close(fd);
  return written;
}

}  // namespace

Agent::~Agent() {
  shutdown();
  // Jobs that still run keep their groups (a restarted agent finds them): then the roots stay.
  if (limits_) (void)limits_->remove_roots();
}

Result<std::unique_ptr<Agent>> Agent::start(AgentConfig config) {
  if (config.nodes.empty()) return fail("nodes: none given");
  if (config.controllers.empty()) return fail("controllers: none given");
  if (config.state_dir.empty()) return fail("state directory: none given");
  if (config.daemon_uid < 0) config.daemon_uid = static_cast<int>(::geteuid());

  std::unique_ptr<Agent> agent(new Agent(std::move(config)));
  Agent& a = *agent;
  a.served_.insert(a.config_.nodes.begin(), a.config_.nodes.end());
  for (char** entry = environ; entry && *entry; ++entry) a.base_env_.emplace_back(*entry);
  a.authenticator_ = std::make_unique<Authenticator>(a.config_.munge_socket);
  a.controllers_ = std::make_unique<ControllerClient>(ControllerClient::Options{
      a.config_.controllers, a.config_.munge_socket, a.config_.rpc_deadline});

  // A few acknowledged exits per node are remembered, so that a repeated launch of a whole job's
  // attempt (a controller's reconciliation) never runs a task again.
  const size_t remembered = std::max<size_t>(1024, 4 * a.config_.nodes.size());
  if (a.config_.emulate) {
    a.runner_ = std::make_unique<EmulatedTasks>(EmulatedTasks::Options{
        .on_exit = [&a] { a.wake(); }, .remembered_acknowledged = remembered});
    a.config_.freeze_with_signals = true;  // no cgroups: there are no processes to put in them
    agent_log("tasks are emulated (--emulate): nothing is forked");
  } else {
    TaskRunner::Options runner_options;
    runner_options.state_dir = a.config_.state_dir;
    runner_options.on_exit = [&a] { a.wake(); };
    runner_options.remembered_acknowledged = remembered;
    Result<std::unique_ptr<TaskRunner>> runner = TaskRunner::open(std::move(runner_options));
    if (!runner) return runner.error();
    a.runner_ = std::move(*runner);
  }
  for (const TaskInfo& task : a.runner_->tasks()) {
    agent_log(std::string("adopted ") + (task.running ? "running task " : "ended task ") +
              task.key.name());
  }

  a.credentials_ = CredentialSource(a.config_.munge_socket);
  a.shell_binary_ = a.config_.shell_binary.empty() ? beside_this_program("trellis-shell")
                                                   : a.config_.shell_binary;
  a.slurm_commands_ = a.config_.slurm_commands;
  if (a.slurm_commands_.empty()) {
    // Where the build tree (slurm-bin) and `make install` (libexec/trellis/slurm) put the links.
    for (const char* dir : {"slurm-bin", "../libexec/trellis/slurm"}) {
      std::string beside = beside_this_program(dir);
      if (::access((beside + "/srun").c_str(), X_OK) == 0) {
        a.slurm_commands_ = beside;
        break;
      }
    }
  }
  // Jobs of other users run the shell and the Slurm commands as themselves: from a copy where
  // they cannot reach the build (daemon/job_programs.h).
  JobPrograms programs = a.config_.job_program_places.empty()
                             ? reachable_for_jobs({a.shell_binary_, a.slurm_commands_}, agent_log)
                             : reachable_for_jobs({a.shell_binary_, a.slurm_commands_}, agent_log,
                                                  a.config_.job_program_places);
  a.shell_binary_ = programs.shell;
  a.slurm_commands_ = programs.slurm_commands;
  // The exchange's messages to other agents go on the control tree (daemon/pmi_tree_link.h),
  // which exists once the agent listens: a barrier cannot start before the agent serves.
  a.exchange_ = std::make_unique<PmiExchangeHub>(
      "", [&a](const std::string& parent, const StepKey& step, uint32_t round, std::string data,
               PmiExchangeHub::Answer done) {
        a.exchange_link_->send_up(parent, step, round, std::move(data),
                                  [done](const std::string& why) { done(fail(why)); });
      });
  a.exchange_->set_send_down(
      [&a](const StepKey& step, uint32_t round, const std::string& data, const StepPlan& plan) {
        a.exchange_link_->send_down(step, round, data, plan.agents, plan.fanout);
      });
  a.exchange_->set_log([](const std::string& line) { agent_log(line); });
  a.shell_socket_ = shell_socket_name(state_dir_tag(a.config_.state_dir));
  ShellSocket::Handlers handlers;
  handlers.authorize = [&a](const ShellSocket::Peer& peer, const StepKey& step,
                            const std::string& node) {
    return a.authorize_shell(peer.pid, peer.uid, step, node);
  };
  handlers.contribute = [&a](const StepKey& step, uint32_t round, const std::string& node,
                             std::string data, PmiExchangeHub::Answer answer) {
    a.exchange_->contribute_local(step, round, node, std::move(data), std::move(answer));
  };
  handlers.ended = [&a](const StepKey& step, const std::string& node, int, int,
                        const std::string& reason) {
    std::lock_guard lock(a.reasons_mutex_);
    a.reasons_[TaskKey{step.job, step.attempt, node, step.step}] = reason.substr(0, 1024);
  };
  Result<std::unique_ptr<ShellSocket>> shells = ShellSocket::open(a.shell_socket_, handlers);
  if (!shells) return shells.error();
  a.shells_ = std::move(*shells);

  Freezer::Options freezer;
  freezer.name = state_dir_tag(a.config_.state_dir);
  freezer.force_signals = a.config_.freeze_with_signals;
  Freezer opened = Freezer::open(freezer);
  // Where the agent's cgroup is, for `trellis cluster down` to remove once the agent is gone (an
  // agent killed while a task ran leaves it behind).
  if (!opened.root().empty())
    std::ofstream(a.config_.state_dir + "/cgroup") << opened.root() << "\n";
  a.switch_node_ = std::make_unique<SwitchNode>(*a.runner_, std::move(opened), a.config_.listen);
  agent_log(std::string("gang switches freeze with ") +
            std::string(freeze_method_name(a.switch_node_->freeze_method())));
  // Jobs held to their grants: only by an agent of one node (an agent that stands for many
  // nodes on one host, as in tests of scale, has no per-node hardware to divide).
  if (a.config_.emulate) {
    agent_log("job limits: none (tasks are emulated)");
  } else if (a.config_.nodes.size() != 1) {
    agent_log("job limits: none (the agent serves " + std::to_string(a.config_.nodes.size()) +
              " nodes on one host)");
  } else {
    ResourceLimits::Options where;
    where.name = state_dir_tag(a.config_.state_dir);
    a.limits_ = std::make_unique<ResourceLimits>(ResourceLimits::open(std::move(where)));
    agent_log("job limits: " + a.limits_->describe());
    if (a.limits_->kind() == ResourceLimits::Kind::kNone) a.limits_.reset();
    if (a.limits_)
      a.switch_node_->on_group_gone([limits = a.limits_.get()](const std::string& group) {
        if (Status removed = limits->remove(group); !removed)
          agent_log("job " + group + ": its limits' cgroups stay: " + removed.error().message);
      });
  }
  // The host as hwloc found it, for binding the tasks of jobs that hold the node whole.
  if (!a.config_.found_resources.empty() && !a.config_.emulate)
    if (Result<NodeInventory> host = parse_node_inventory(a.config_.found_resources))
      a.host_inventory_ = std::move(*host);
  a.launcher_ = std::make_unique<AgentLauncher>(*a.runner_, *a.switch_node_, a.limits_.get());
  // A node that cannot hold a job to its grant is no place for jobs: the job is requeued (its
  // exit report says the start was refused) and the node drained with the reason.
  a.launcher_->on_limits_failed([agent = &a](const TaskKey& task, const std::string& why) {
    {
      std::lock_guard lock(agent->reasons_mutex_);
      agent->reasons_[task] = "job " + std::to_string(task.job_id) + " could not be held to its " +
                              "grant on " + task.node + ": " + why;
      agent->start_refused_.insert(task);
      if (agent->drain_reason_.empty()) {
        agent->drain_reason_ = "job limits did not take: " + why;
        agent->drain_tries_ = 0;
      }
    }
    agent_log("node " + task.node + " cannot hold job " + std::to_string(task.job_id) +
              " to its grant (" + why + "): the job is requeued and the node to be drained");
    agent->wake();
  });

  a.service_ = std::make_unique<Service>(a);
  grpc::ServerBuilder builder;
  keep_server_threads(builder);
  builder.AddListeningPort(a.config_.listen, grpc::InsecureServerCredentials(), &a.port_);
  builder.RegisterService(a.service_.get());
  a.server_ = builder.BuildAndStart();
  if (!a.server_ || a.port_ <= 0) {
    return fail(Error::Code::kUnavailable, "cannot listen on " + a.config_.listen);
  }
  // The control tree, on the same host.
  a.verifier_ = std::make_unique<TreeVerifier>(*a.authenticator_, a.config_.daemon_uid);
  a.tree_channel_ = std::make_unique<TreeChannel>();
  Result<int> tree_port = a.tree_channel_->listen_async(
      host_of(a.config_.listen), a.config_.tree_port,
      [&a](const v1::TreeMessage& message, const std::string& raw, TreeChannel::Respond respond) {
        TreeNode* node = a.tree_node_.load();
        if (node == nullptr)
          return respond(grpc::Status(StatusCode::UNAVAILABLE, "the agent is starting up"), {});
        node->handle(message, raw, std::move(respond));
      });
  if (!tree_port) return tree_port.error();
  a.tree_port_ = *tree_port;
  std::string host =
      a.config_.advertise_host.empty() ? host_of(a.config_.listen) : a.config_.advertise_host;
  if (host.empty() || host == "0.0.0.0" || host == "::") {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    host = name;
  }
  a.address_ = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
               std::to_string(a.tree_port_);
  a.tree_owner_ = std::make_unique<TreeNode>(
      a.address_, *a.verifier_, *a.tree_channel_,
      [service = a.service_.get()](const v1::TreeBody& body) { return service->tree_part(body); });
  a.tree_node_.store(a.tree_owner_.get());
  a.exchange_link_ = std::make_unique<PmiTreeLink>(*a.tree_channel_, a.credentials_,
                                                   a.config_.daemon_uid, a.address_);
  a.exchange_->set_self(a.address_);
  agent_log("serving " + std::to_string(a.config_.nodes.size()) + " nodes; control tree on " +
            a.address_ + ", gRPC on port " + std::to_string(a.port_));
  a.controller_thread_ = std::thread([&a] { a.controller_loop(); });
  return agent;
}

void Agent::shutdown() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !controller_thread_.joinable() && !server_ && !tree_channel_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (controller_thread_.joinable()) controller_thread_.join();
  // The exchange's sends first (they use the tree channel; later ones fail at once), then the
  // tree: its workers use everything below.
  if (exchange_link_) exchange_link_->stop();
  tree_channel_.reset();
  tree_node_.store(nullptr);
  tree_owner_.reset();
  if (server_) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    server_->Wait();
    server_.reset();
  }
  shells_.reset();  // its handlers use the exchange and the runner
  exchange_link_.reset();
  launcher_.reset();     // tasks not started yet are left (a controller launches them again)
  switch_node_.reset();  // it uses the runner
  runner_.reset();       // stops watching; the jobs keep running
  exchange_.reset();
}

Status Agent::authorize_shell(pid_t pid, uid_t uid, const StepKey& step, const std::string& node) {
  TaskKey key{step.job, step.attempt, node, step.step};
  auto find = [&]() -> std::optional<TaskInfo> {
    for (const TaskInfo& task : runner_->tasks())
      if (task.key == key && task.running) return task;
    return std::nullopt;
  };
  std::optional<TaskInfo> task = find();
  if (!task) {
    // Its launch may still be under way (a shell can call before the launch has recorded it).
    std::unique_lock<std::mutex> launching = switch_node_->hold_for_launch();
    task = find();
  }
  if (!task) return fail("task " + key.name() + " does not run on this agent");
  if (task->process_group != pid)
    return fail("process " + std::to_string(pid) + " is not the job shell of task " + key.name());
  std::optional<StepPlan> plan = exchange_->plan(step);
  if (plan && plan->uid >= 0 && static_cast<uid_t>(plan->uid) != uid && uid != ::geteuid())
    return fail("uid " + std::to_string(uid) + " is not the user of task " + key.name());
  return Ok{};
}

void Agent::reap_steps() {
  std::set<StepKey> running;
  {
    // A step is known to the exchange from its launch's acceptance, and its tasks run once the
    // launcher has started them: with tasks waiting to start (or a batch being started, which
    // holds the launch), the steps are left alone until the next sweep.
    std::unique_lock<std::mutex> launching = switch_node_->hold_for_launch();
    if (launcher_->waiting() > 0) return;
    for (const TaskInfo& task : runner_->tasks())
      if (task.running) running.insert({task.key.job_id, task.key.attempt, task.key.step});
  }
  for (const StepKey& step : exchange_->steps())
    if (!running.contains(step)) exchange_->finished(step, "its tasks on this agent have ended");
  exchange_->expire(Clock::now());
}

void Agent::register_again() {
  {
    std::lock_guard lock(mutex_);
    register_asked_ = true;
    woken_ = true;
  }
  wake_.notify_all();
}

void Agent::pinged() {
  last_ping_ms_ =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
          .count();
}

void Agent::wake() {
  {
    std::lock_guard lock(mutex_);
    woken_ = true;
  }
  wake_.notify_all();
}

void Agent::controller_loop() {
  auto interval = config_.heartbeat_interval;
  bool registered = false;
  auto backoff = std::chrono::duration_cast<Clock::duration>(kMinBackoff);
  Clock::time_point retry_at = Clock::now();  // next register or exit report after a failure
  Clock::time_point registered_at = Clock::now();
  Clock::time_point next_sweep = Clock::now() + kExchangeSweep;
  int failures = 0;  // in a row, to log the first and then every tenth

  auto failed = [&](const std::string& what, const grpc::Status& status) {
    if (failures++ % 10 == 0) {
      agent_log(what + " failed: " + status.error_message() + " (code " +
                std::to_string(status.error_code()) + "); retrying");
    }
    retry_at = Clock::now() + backoff;
    backoff = std::min<Clock::duration>(backoff * 2, kMaxBackoff);
  };
  auto succeeded = [&] {
    failures = 0;
    backoff = kMinBackoff;
  };
  auto not_known = [](const grpc::Status& status) {
    return status.error_code() == StatusCode::NOT_FOUND ||
           status.error_code() == StatusCode::FAILED_PRECONDITION;
  };
  // When the controllers last showed they know this agent: a ping, or the registration.
  auto last_heard = [&] {
    Clock::time_point ping{std::chrono::milliseconds(last_ping_ms_.load())};
    return std::max(ping, registered_at);
  };

  while (true) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      if (register_asked_ && registered) {
        agent_log("a controller asked this agent to register again");
        registered = false;
        retry_at = Clock::now();
      }
      register_asked_ = false;
    }
    Clock::time_point now = Clock::now();
    // Not pinged for 10 intervals: the controllers may have lost track of this agent.
    if (registered && now - last_heard() > 10 * interval) {
      agent_log(
          "no liveness ping for " +
          std::to_string(
              std::chrono::duration_cast<std::chrono::milliseconds>(now - last_heard()).count()) +
          " ms; registering again");
      registered = false;
      retry_at = now;
    }
    if (!registered && now >= retry_at) {
      v1::RegisterRequest request;
      for (const std::string& node : config_.nodes) request.add_nodes(node);
      request.set_address(address_);
      request.set_found_resources(config_.found_resources);
      for (const TaskInfo& task : runner_->tasks()) *request.add_tasks() = task_status(task);
      v1::RegisterReply reply;
      grpc::Status status =
          controllers_->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
            return stub.Register(&context, request, &reply);
          });
      if (status.ok()) {
        succeeded();
        registered = true;
        registered_at = Clock::now();
        if (reply.ping_interval_ms() > 0)
          interval = std::chrono::milliseconds(reply.ping_interval_ms());
        std::string unknown;
        for (const std::string& node : reply.unknown_nodes()) unknown += " " + node;
        agent_log("registered with " + controllers_->current_address() + " (pinged every " +
                  std::to_string(interval.count()) + " ms)" +
                  (unknown.empty() ? "" : "; nodes the cluster does not have:" + unknown));
      } else {
        failed("register", status);
      }
    }

    if (Clock::now() >= next_sweep) {
      reap_steps();
      next_sweep = Clock::now() + kExchangeSweep;
    }
    std::vector<TaskInfo> exits =
        registered ? runner_->unacknowledged_exits() : std::vector<TaskInfo>{};
    if (!exits.empty()) reap_steps();  // a step whose ranks died must not keep a barrier open
    if (registered && !exits.empty() && Clock::now() >= retry_at) {
      v1::ExitRequest request;
      {
        std::lock_guard lock(reasons_mutex_);
        for (const TaskInfo& task : exits) {
          v1::TaskStatus* status = request.add_tasks();
          *status = task_status(task);
          if (auto reason = reasons_.find(task.key); reason != reasons_.end())
            status->set_reason(reason->second);
          if (limits_ && task.limited) mark_out_of_memory(*limits_, task, *status);
          if (start_refused_.count(task.key)) status->set_start_refused(true);
        }
      }
      v1::ExitReply reply;
      grpc::Status status =
          controllers_->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
            return stub.ReportExit(&context, request, &reply);
          });
      if (status.ok()) {
        succeeded();
        std::vector<TaskKey> keys;
        for (const TaskInfo& task : exits) {
          keys.push_back(task.key);
          // A failure's reason is worth a line of its own; the rest are counted below.
          std::lock_guard lock(reasons_mutex_);
          if (auto r = reasons_.find(task.key); r != reasons_.end()) {
            agent_log("reported " + describe(task) + ": " + r->second);
            reasons_.erase(r);
          }
          start_refused_.erase(task.key);
        }
        // The job's own stderr says why it ended, as Slurm's slurmstepd writes there.
        for (size_t i = 0; i < exits.size() && i < static_cast<size_t>(request.tasks_size()); ++i)
          if (request.tasks(static_cast<int>(i)).out_of_memory()) {
            const std::string& reason = request.tasks(static_cast<int>(i)).reason();
            agent_log("job " + std::to_string(exits[i].key.job_id) + " out of memory: " + reason);
            if (Status noted = note_in_error_file(exits[i], "trellis: error: " + reason); !noted)
              agent_log(
                  "job " + std::to_string(exits[i].key.job_id) +
                  ": its error file does not say it ran out of memory: " + noted.error().message);
          }
        agent_log("reported " + std::to_string(exits.size()) +
                  " exit(s): " + describe(exits.front()) + (exits.size() > 1 ? ", ..." : ""));
        runner_->acknowledge(keys);
        launcher_->ended(std::move(keys));
        exits.clear();
      } else if (not_known(status)) {
        registered = false;
        retry_at = Clock::now();
      } else {
        failed("exit report", status);
      }
    }

    // A node whose limits did not take is drained (a few tries; the log says when it gave up).
    std::string drain;
    {
      std::lock_guard lock(reasons_mutex_);
      drain = drain_reason_;
    }
    if (registered && !drain.empty() && Clock::now() >= retry_at) {
      v1::DrainRequest request;
      request.set_nodelist(config_.nodes.front());
      request.set_reason(drain.substr(0, 512));
      v1::DrainReply reply;
      grpc::Status status =
          controllers_->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
            return stub.Drain(&context, request, &reply);
          });
      std::lock_guard lock(reasons_mutex_);
      if (status.ok()) {
        agent_log("drained node " + config_.nodes.front() + ": " + drain);
        drain_reason_.clear();
      } else if (++drain_tries_ >= kDrainTries) {
        agent_log("could not drain node " + config_.nodes.front() + " (" + drain + ") after " +
                  std::to_string(kDrainTries) + " tries: " + status.error_message());
        drain_reason_.clear();
      } else {
        retry_at = Clock::now() + backoff;
      }
    }

    // Sleep until the next thing due (a retry, the ping watch, the exchange's sweep), or until a
    // task ends or the agent stops.
    Clock::time_point until =
        std::min(registered ? last_heard() + 10 * interval + interval : retry_at, next_sweep);
    if (registered && !exits.empty()) until = std::min(until, retry_at);
    std::unique_lock lock(mutex_);
    wake_.wait_until(lock, until, [&] { return stopping_ || woken_; });
    woken_ = false;
  }
}

}  // namespace trellis
