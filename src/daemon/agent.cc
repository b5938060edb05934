#include "daemon/agent.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <optional>

#include <grpcpp/grpcpp.h>

#include "core/hostlist.h"
#include "daemon/agent_requests.h"
#include "daemon/auth.h"
#include "daemon/controller_client.h"
#include "daemon/server_threads.h"
#include "daemon/switch_node.h"
#include "daemon/task_runner.h"
#include "trellis/v1/trellis.grpc.pb.h"

extern char** environ;

namespace trellis {
namespace {

// The wall clock, in seconds since the epoch (what launch_by is given in).
double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

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

grpc::Status to_grpc(const Error& error) {
  switch (error.code) {
    case Error::Code::kInvalidArgument:
      return grpc::Status(StatusCode::INVALID_ARGUMENT, error.message);
    case Error::Code::kNotFound:
      return grpc::Status(StatusCode::NOT_FOUND, error.message);
    case Error::Code::kUnavailable:
      return grpc::Status(StatusCode::UNAVAILABLE, error.message);
    default:
      return grpc::Status(StatusCode::INTERNAL, error.message);
  }
}

v1::TaskStatus to_proto(const TaskInfo& task) {
  v1::TaskStatus status;
  status.set_job_id(task.key.job_id);
  status.set_attempt(task.key.attempt);
  status.set_node(task.key.node);
  status.set_running(task.running);
  status.set_exit_code(task.exit_code);
  status.set_signal(task.signal);
  return status;
}

std::string describe(const TaskInfo& task) {
  std::string text = "job " + std::to_string(task.key.job_id) + " attempt " +
                     std::to_string(task.key.attempt) + " on " + task.key.node;
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
  static std::mutex log_mutex;
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
  std::lock_guard lock(log_mutex);
  std::cerr << line_start << " trellis-agent: " << message << std::endl;
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

// The Agent RPC service: authenticates, validates, and hands the work to the TaskRunner.
class Agent::Service final : public v1::Agent::Service {
 public:
  explicit Service(Agent& agent) : agent_(agent) {}

  grpc::Status Launch(grpc::ServerContext* context, const v1::LaunchRequest* request,
                      v1::LaunchReply*) override {
    if (grpc::Status allowed = authorize(*context); !allowed.ok()) return allowed;
    return launch(*request);
  }

  grpc::Status LaunchBatch(grpc::ServerContext* context, const v1::LaunchBatchRequest* request,
                           v1::LaunchBatchReply* reply) override {
    if (grpc::Status allowed = authorize(*context); !allowed.ok()) return allowed;
    if (request->launches_size() > kMaxLaunchBatch) {
      return grpc::Status(StatusCode::INVALID_ARGUMENT,
                          "launches: " + std::to_string(request->launches_size()) +
                              " in one batch; at most " + std::to_string(kMaxLaunchBatch));
    }
    agent_log("launch batch of " + std::to_string(request->launches_size()));
    for (const v1::LaunchRequest& one : request->launches()) {
      grpc::Status status = launch(one);
      v1::LaunchResult* result = reply->add_results();
      result->set_code(status.error_code());
      result->set_message(status.error_message());
    }
    return grpc::Status::OK;
  }

  grpc::Status Signal(grpc::ServerContext* context, const v1::SignalRequest* request,
                      v1::SignalReply* reply) override {
    if (grpc::Status allowed = authorize(*context); !allowed.ok()) return allowed;
    Result<std::chrono::milliseconds> grace =
        check_signal_request(*request, agent_.config_.kill_wait);
    if (!grace) return to_grpc(grace.error());
    agent_.switch_node_->before_signal(request->job_id(), request->attempt());
    int count =
        agent_.runner_->signal(request->job_id(), request->attempt(), request->signal(), *grace);
    agent_log("signal " + std::to_string(request->signal()) + " to job " +
              std::to_string(request->job_id()) + ": " + std::to_string(count) + " tasks");
    reply->set_processes(count);
    return grpc::Status::OK;
  }

  grpc::Status Tasks(grpc::ServerContext* context, const v1::TasksRequest*,
                     v1::TasksReply* reply) override {
    if (grpc::Status allowed = authorize(*context); !allowed.ok()) return allowed;
    for (const TaskInfo& task : agent_.runner_->tasks()) *reply->add_tasks() = to_proto(task);
    return grpc::Status::OK;
  }

  grpc::Status Switch(grpc::ServerContext* context, const v1::SwitchRequest* request,
                      v1::SwitchReply* reply) override {
    if (grpc::Status allowed = authorize(*context); !allowed.ok()) return allowed;
    if (Status valid = check_switch_request(*request); !valid) return to_grpc(valid.error());
    *reply = agent_.switch_node_->handle(*request);
    return grpc::Status::OK;
  }

 private:
  static constexpr int kMaxLaunchBatch = 1024;

  // One launch, as Launch and each entry of LaunchBatch ask for it (the caller is authorized).
  grpc::Status launch(const v1::LaunchRequest& request) {
    if (Status valid = check_launch_request(request, agent_.served_); !valid)
      return to_grpc(valid.error());
    // The job's cgroup is not removed while its tasks are being started (SwitchNode::ended).
    std::unique_lock<std::mutex> launching = agent_.switch_node_->hold_for_launch();
    agent_.switch_node_->thaw_for_launch(request.job_id(), request.attempt());
    // On every way out, with the launch still held: a frozen job is frozen again, whatever
    // started.
    struct RefreezeAtExit {
      SwitchNode& node;
      int64_t job;
      int attempt;
      ~RefreezeAtExit() { node.started(job, attempt); }
    } refreeze{*agent_.switch_node_, request.job_id(), request.attempt()};
    int started = 0;
    for (const std::string& node : request.nodes()) {
      if (request.launch_by() > 0 && wall_seconds() > request.launch_by()) {
        agent_log("launch of job " + std::to_string(request.job_id()) + " attempt " +
                  std::to_string(request.attempt()) + " came after its deadline: " +
                  std::to_string(request.nodes_size() - started) + " tasks not started");
        return grpc::Status(StatusCode::DEADLINE_EXCEEDED,
                            "the launch came after its deadline (launch_by); not started");
      }
      TaskSpec spec = task_spec(request, node, agent_.base_env_);
      spec.env.push_back("TRELLIS_RUNTIME_AREA=" +
                         runtime_area_name(request.job_id(), request.attempt(), node));
      Result<std::string> cgroup =
          agent_.switch_node_->cgroup_for(request.job_id(), request.attempt());
      if (!cgroup) {
        agent_log("launch of " + spec.key.name() + " failed: " + cgroup.error().message);
        return to_grpc(cgroup.error());
      }
      spec.cgroup_procs = *cgroup;
      Result<bool> launched = agent_.runner_->launch(spec);
      if (!launched) {
        agent_log("launch of " + spec.key.name() + " failed: " + launched.error().message);
        return to_grpc(launched.error());
      }
      started += *launched ? 1 : 0;
    }
    agent_log("launch job " + std::to_string(request.job_id()) + " attempt " +
              std::to_string(request.attempt()) + ": " + std::to_string(started) + " of " +
              std::to_string(request.nodes_size()) + " tasks started" +
              (started < request.nodes_size() ? " (the others were already known)" : ""));
    return grpc::Status::OK;
  }

  grpc::Status authorize(const grpc::ServerContext& context) const {
    Result<Caller> caller = agent_.authenticator_->verify(context);
    if (!caller) {
      StatusCode code = caller.error().code == Error::Code::kUnavailable
                            ? StatusCode::UNAVAILABLE
                            : StatusCode::UNAUTHENTICATED;
      return grpc::Status(code, caller.error().message);
    }
    if (caller->uid != agent_.config_.daemon_uid) {
      return grpc::Status(StatusCode::PERMISSION_DENIED,
                          "uid " + std::to_string(caller->uid) +
                              " may not call the agent (only the daemon user, uid " +
                              std::to_string(agent_.config_.daemon_uid) + ")");
    }
    return grpc::Status::OK;
  }

  Agent& agent_;
};

Agent::Agent(AgentConfig config) : config_(std::move(config)) {}

Agent::~Agent() {
  shutdown();
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

  TaskRunner::Options runner_options;
  runner_options.state_dir = a.config_.state_dir;
  runner_options.on_exit = [&a] { a.wake(); };
  Result<std::unique_ptr<TaskRunner>> runner = TaskRunner::open(std::move(runner_options));
  if (!runner) return runner.error();
  a.runner_ = std::move(*runner);
  for (const TaskInfo& task : a.runner_->tasks()) {
    agent_log(std::string("adopted ") + (task.running ? "running task " : "ended task ") +
              task.key.name());
  }

  Freezer::Options freezer;
  freezer.name = state_dir_tag(a.config_.state_dir);
  freezer.force_signals = a.config_.freeze_with_signals;
  a.switch_node_ = std::make_unique<SwitchNode>(*a.runner_, Freezer::open(freezer),
                                                a.config_.munge_socket, a.config_.listen);
  agent_log(std::string("gang switches freeze with ") +
            std::string(freeze_method_name(a.switch_node_->freeze_method())));

  a.service_ = std::make_unique<Service>(a);
  grpc::ServerBuilder builder;
  keep_server_threads(builder);
  builder.AddListeningPort(a.config_.listen, grpc::InsecureServerCredentials(), &a.port_);
  builder.RegisterService(a.service_.get());
  a.server_ = builder.BuildAndStart();
  if (!a.server_ || a.port_ <= 0) {
    return fail(Error::Code::kUnavailable, "cannot listen on " + a.config_.listen);
  }
  std::string host =
      a.config_.advertise_host.empty() ? host_of(a.config_.listen) : a.config_.advertise_host;
  if (host.empty() || host == "0.0.0.0" || host == "::") {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    host = name;
  }
  a.address_ = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
               std::to_string(a.port_);
  agent_log("serving " + std::to_string(a.config_.nodes.size()) + " nodes on " + a.address_);
  a.controller_thread_ = std::thread([&a] { a.controller_loop(); });
  return agent;
}

void Agent::shutdown() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !controller_thread_.joinable() && !server_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (controller_thread_.joinable()) controller_thread_.join();
  if (server_) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    server_->Wait();
    server_.reset();
  }
  switch_node_.reset();  // it uses the runner
  runner_.reset();       // stops watching; the jobs keep running
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
  Clock::time_point next_heartbeat = Clock::now();
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

  while (true) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    Clock::time_point now = Clock::now();
    if (!registered && now >= retry_at) {
      v1::RegisterRequest request;
      for (const std::string& node : config_.nodes) request.add_nodes(node);
      request.set_address(address_);
      for (const TaskInfo& task : runner_->tasks()) *request.add_tasks() = to_proto(task);
      v1::RegisterReply reply;
      grpc::Status status =
          controllers_->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
            return stub.Register(&context, request, &reply);
          });
      if (status.ok()) {
        succeeded();
        registered = true;
        if (reply.heartbeat_interval_ms() > 0)
          interval = std::chrono::milliseconds(reply.heartbeat_interval_ms());
        next_heartbeat = Clock::now() + interval;
        std::string unknown;
        for (const std::string& node : reply.unknown_nodes()) unknown += " " + node;
        agent_log("registered with " + controllers_->current_address() + " (heartbeat every " +
                  std::to_string(interval.count()) + " ms)" +
                  (unknown.empty() ? "" : "; nodes the cluster does not have:" + unknown));
      } else {
        failed("register", status);
      }
    }

    std::vector<TaskInfo> exits =
        registered ? runner_->unacknowledged_exits() : std::vector<TaskInfo>{};
    if (registered && !exits.empty() && Clock::now() >= retry_at) {
      v1::ExitRequest request;
      for (const TaskInfo& task : exits) *request.add_tasks() = to_proto(task);
      v1::ExitReply reply;
      grpc::Status status =
          controllers_->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
            return stub.ReportExit(&context, request, &reply);
          });
      if (status.ok()) {
        succeeded();
        std::vector<TaskKey> keys;
        for (const TaskInfo& task : exits) {
          agent_log("reported " + describe(task));
          keys.push_back(task.key);
        }
        runner_->acknowledge(keys);
        switch_node_->ended(keys);
        exits.clear();
      } else if (not_known(status)) {
        registered = false;
        retry_at = Clock::now();
      } else {
        failed("exit report", status);
      }
    }

    if (registered && Clock::now() >= next_heartbeat) {
      v1::HeartbeatRequest request;
      request.set_address(address_);
      for (const std::string& node : config_.nodes) request.add_nodes(node);
      v1::HeartbeatReply reply;
      grpc::Status status =
          controllers_->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
            return stub.Heartbeat(&context, request, &reply);
          });
      next_heartbeat = Clock::now() + interval;
      if (status.ok()) {
        succeeded();
      } else {
        // A controller that does not know us, or none reachable: register again, since a
        // controller that comes back may have marked the nodes down meanwhile.
        registered = false;
        if (not_known(status)) {
          agent_log("controller does not know this agent; registering again");
          retry_at = Clock::now();
        } else {
          failed("heartbeat", status);
        }
      }
    }

    // Sleep until the next thing due, or until a task ends or the agent stops.
    Clock::time_point until = registered ? next_heartbeat : retry_at;
    if (registered && !exits.empty()) until = std::min(until, retry_at);
    std::unique_lock lock(mutex_);
    wake_.wait_until(lock, until, [&] { return stopping_ || woken_; });
    woken_ = false;
  }
}

}  // namespace trellis
