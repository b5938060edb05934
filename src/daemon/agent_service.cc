#include "daemon/agent_service.h"

#include <unistd.h>

#include <chrono>
#include <csignal>

#include "core/wall_clock.h"
#include "daemon/agent_launcher.h"
#include "daemon/agent_requests.h"
#include "daemon/auth.h"
#include "daemon/batch_task.h"
#include "daemon/emulated_tasks.h"
#include "daemon/grpc_status.h"
#include "daemon/node_share.h"
#include "daemon/pmi_exchange.h"
#include "daemon/switch_node.h"
#include "daemon/task_runner.h"

namespace trellis {
namespace {

using grpc::StatusCode;

// The wall clock, in seconds since the epoch (what launch_by is given in).

}  // namespace

v1::TaskStatus task_status(const TaskInfo& task) {
  v1::TaskStatus status;
  status.set_job_id(task.key.job_id);
  status.set_attempt(task.key.attempt);
  status.set_node(task.key.node);
  status.set_step(task.key.step);
  status.set_running(task.running);
  status.set_exit_code(task.exit_code);
  status.set_signal(task.signal);
  if (task.usage) {
    status.set_has_usage(true);
    status.set_user_usec(task.usage->user_usec);
    status.set_system_usec(task.usage->system_usec);
    status.set_max_rss_kb(task.usage->max_rss_kb);
  }
  return status;
}

grpc::Status Agent::Service::Launch(grpc::ServerContext* context, const v1::LaunchRequest* request,
                                    v1::LaunchReply*) {
  if (grpc::Status allowed = authorize(*context); !allowed.ok()) return allowed;
  return launch(*request, /*wait=*/true);
}

grpc::Status Agent::Service::LaunchBatch(grpc::ServerContext* context,
                                         const v1::LaunchBatchRequest* request,
                                         v1::LaunchBatchReply* reply) {
  if (grpc::Status allowed = authorize(*context); !allowed.ok()) return allowed;
  if (request->launches_size() > kMaxLaunchBatch) {
    return grpc::Status(StatusCode::INVALID_ARGUMENT,
                        "launches: " + std::to_string(request->launches_size()) +
                            " in one batch; at most " + std::to_string(kMaxLaunchBatch));
  }
  agent_log("launch batch of " + std::to_string(request->launches_size()));
  for (const v1::LaunchRequest& one : request->launches()) {
    grpc::Status status = launch(one, /*wait=*/true);
    v1::LaunchResult* result = reply->add_results();
    result->set_code(status.error_code());
    result->set_message(status.error_message());
  }
  return grpc::Status::OK;
}

grpc::Status Agent::Service::Signal(grpc::ServerContext* context, const v1::SignalRequest* request,
                                    v1::SignalReply* reply) {
  if (grpc::Status allowed = authorize(*context); !allowed.ok()) return allowed;
  v1::TreeReply signalled;
  grpc::Status status = signal(*request, signalled);
  reply->set_processes(signalled.processes());
  return status;
}

grpc::Status Agent::Service::Tasks(grpc::ServerContext* context, const v1::TasksRequest*,
                                   v1::TasksReply* reply) {
  if (grpc::Status allowed = authorize(*context); !allowed.ok()) return allowed;
  for (const TaskInfo& task : agent_.runner_->tasks()) *reply->add_tasks() = task_status(task);
  return grpc::Status::OK;
}

v1::TreeReply Agent::Service::tree_part(const v1::TreeBody& body) {
  v1::TreeReply reply;
  reply.set_agents(1);
  const std::string& self = agent_.address_;
  switch (body.op_case()) {
    case v1::TreeBody::kGangSwitch: {
      v1::SwitchReply done = agent_.switch_node_->switch_here(body.gang_switch());
      for (const std::string& error : done.errors()) reply.add_errors(error);
      done.clear_errors();
      *reply.mutable_gang_switch() = std::move(done);
      break;
    }
    case v1::TreeBody::kSignal: {
      grpc::Status status = signal(body.signal(), reply);
      if (!status.ok()) reply.add_errors(self + ": " + status.error_message());
      break;
    }
    case v1::TreeBody::kLaunch:
      for (const v1::LaunchRequest& request : body.launch().launches()) {
        v1::LaunchResult* result = reply.add_launches();
        // Only the nodes this agent serves are its to start (launch() finds them).
        int here = -1;
        grpc::Status status = launch(request, /*wait=*/false, &here);
        if (here == 0) continue;  // none of its nodes is this agent's
        agent_log("launch of job " + std::to_string(request.job_id()) + " attempt " +
                  std::to_string(request.attempt()) + " from " + body.origin() + ": " +
                  std::to_string(here) + " task(s) here " +
                  (status.ok() ? "accepted" : "refused: " + status.error_message()));
        result->set_code(status.error_code());
        if (!status.ok()) result->set_message(self + ": " + status.error_message());
      }
      break;
    case v1::TreeBody::kPing:
      for (const std::string& agent : body.ping().register_again())
        if (agent == self) agent_.register_again();
      agent_.pinged();
      break;
    case v1::TreeBody::kPmiExchange:
      pmi_exchange(body.pmi_exchange(), reply);
      break;
    case v1::TreeBody::OP_NOT_SET:
      break;
  }
  return reply;
}

grpc::Status Agent::Service::launch(const v1::LaunchRequest& request, bool wait, int* here) {
  Result<std::vector<int>> mine = check_launch_request(request, agent_.served_);
  if (!mine) return to_grpc(mine.error());
  if (here) *here = static_cast<int>(mine->size());
  if (mine->empty()) {
    std::string named;  // the step's first few nodes
    for (int i = 0; i < request.nodes_size() && i < 3; ++i)
      named += (i > 0 ? "," : "") + request.nodes(i);
    if (request.nodes_size() > 3) named += ",...";
    return grpc::Status(StatusCode::INVALID_ARGUMENT,
                        "nodes: this agent serves none of the step's nodes (" + named + ")");
  }
  if (request.launch_by() > 0 && wall_clock_now() > request.launch_by()) {
    agent_log("launch of job " + std::to_string(request.job_id()) + " attempt " +
              std::to_string(request.attempt()) +
              " came after its deadline: " + std::to_string(mine->size()) + " tasks not started");
    return grpc::Status(StatusCode::DEADLINE_EXCEEDED,
                        "the launch came after its deadline (launch_by); not started");
  }
  // Refused now, rather than failing every task as it starts.
  const uid_t self = ::geteuid();
  if (self != 0 && request.uid() >= 0 && static_cast<uid_t>(request.uid()) != self)
    return grpc::Status(StatusCode::INVALID_ARGUMENT,
                        "uid: the agent runs as uid " + std::to_string(self) +
                            " and cannot start processes as uid " + std::to_string(request.uid()));
  ShellSetup shell;
  shell.binary = agent_.shell_binary_;
  shell.socket = agent_.shell_socket_;
  shell.slurm_commands = agent_.slurm_commands_;
  shell.controllers = agent_.config_.controllers;
  shell.munge_socket = agent_.config_.munge_socket;
  std::vector<TaskSpec> specs;
  specs.reserve(mine->size());
  // Emulated tasks (daemon/emulated_tasks.h) act on the job's own command, not a shell's, and
  // have neither an environment nor a runtime area.
  const bool emulated = agent_.config_.emulate;
  const LaunchCommon common(request, agent_.base_env_, shell, emulated);
  for (int node_id : *mine) {
    const std::string& node = request.nodes(node_id);
    TaskSpec spec = task_spec(request, node_id, common);
    if (!request.script().empty()) {
      if (Status batch = prepare_batch_task(agent_.config_.state_dir, request, node_id, spec);
          !batch) {
        agent_log("launch of " + spec.key.name() + " failed: " + batch.error().message);
        return to_grpc(batch.error());
      }
      if (emulated && node_id == 0) spec.argv = EmulatedTasks::command_of_script(request.script());
    }
    if (!emulated)
      spec.env.push_back("TRELLIS_RUNTIME_AREA=" +
                         runtime_area_name(request.job_id(), request.attempt(), node));
    // What the job holds on this node: its variables, and its limits where the agent holds jobs
    // to them (the launcher applies them just before the task starts).
    Result<std::optional<NodeShare>> share = node_share(request, node_id);
    if (!share) return to_grpc(share.error());
    if (*share && !emulated) {
      spec.shared_cpus = share_cpus(**share);
      set_share_variables(**share, spec.env);
      if (agent_.limits_) spec.limits = share_limits(**share);
    }
    // Where each of the node's tasks runs inside what the job holds: on a shared node its grant;
    // on a node held whole, the host as hwloc found it, when asked. Only by an agent of one node:
    // the CPU ids of nodes that share a host (tests of scale, chaos runs) are not the host's.
    if (common.shell && !emulated && agent_.config_.nodes.size() == 1) {
      const int tasks = node_id < static_cast<int>(common.layout.counts().size())
                            ? common.layout.counts()[node_id]
                            : 1;
      if (*share) {
        set_binding_variables(request, (*share)->node, (*share)->grant, false, tasks, node,
                              spec.env);
      } else if (agent_.host_inventory_ &&
                 (!request.cpu_bind().empty() || request.gpus_per_task() > 0)) {
        NodeGrant all;
        for (int c = 0; c < agent_.host_inventory_->cores(); ++c) all.cores.push_back(c);
        for (size_t g = 0; g < agent_.host_inventory_->gpus.size(); ++g)
          all.gpus.push_back(static_cast<int>(g));
        set_binding_variables(request, *agent_.host_inventory_, all, true, tasks, node, spec.env);
      }
    }
    specs.push_back(std::move(spec));
  }
  // The step's barriers can complete here once its tasks run (a child's contribution that came
  // first waited for this).
  StepPlan plan;
  plan.agents.assign(request.step_agents().begin(), request.step_agents().end());
  if (plan.agents.empty()) plan.agents.push_back(agent_.address_);
  plan.fanout = request.exchange_fanout() > 0 ? request.exchange_fanout() : 2;
  for (int node_id : *mine) plan.local_nodes.insert(request.nodes(node_id));
  plan.uid = request.uid();
  agent_.exchange_->expect({request.job_id(), request.attempt(), request.step()}, std::move(plan));
  std::shared_future<AgentLauncher::Outcome> done = agent_.launcher_->accept(
      request.job_id(), request.attempt(), std::move(specs),
      // On a shared node a launch kills leftovers on its CPUs first, unless it is only sent
      // again to reconcile (then it may be the late one, and kills nothing).
      !request.whole_nodes() ? (request.node_grants_size() > 0 && !request.reconcile()
                                    ? AgentLauncher::Nodes::kSharedCores
                                    : AgentLauncher::Nodes::kShared)
                             : (request.reconcile() ? AgentLauncher::Nodes::kWholeIfFree
                                                    : AgentLauncher::Nodes::kWhole));
  if (!wait) return grpc::Status::OK;
  AgentLauncher::Outcome outcome = done.get();
  if (!outcome.error.empty()) return grpc::Status(StatusCode::UNAVAILABLE, outcome.error);
  return grpc::Status::OK;
}

grpc::Status Agent::Service::signal(const v1::SignalRequest& request, v1::TreeReply& reply) {
  Result<std::chrono::milliseconds> grace = check_signal_request(request, agent_.config_.kill_wait);
  if (!grace) return to_grpc(grace.error());
  // With the launch held, no task of the job is half started: those waiting are dropped (they
  // end as killed by the signal), those started are signalled.
  int count = 0, dropped = 0;
  {
    std::unique_lock<std::mutex> held = agent_.switch_node_->hold_for_launch();
    const bool ends = request.signal() == 0 || request.signal() == SIGKILL ||
                      request.signal() == SIGTERM || request.signal() == SIGINT;
    std::optional<int> step;
    if (request.has_step()) step = request.step();
    // A step's signal leaves the job's other tasks waiting to start alone.
    if (ends && !step)
      dropped = agent_.launcher_->drop(request.job_id(), request.attempt(),
                                       request.signal() == 0 ? SIGTERM : request.signal(),
                                       request.signal() == 0 || request.signal() == SIGKILL);
    agent_.switch_node_->before_signal(request.job_id(), request.attempt());
    count =
        agent_.runner_->signal(request.job_id(), request.attempt(), request.signal(), *grace, step);
  }
  agent_log("signal " + std::to_string(request.signal()) + " to job " +
            std::to_string(request.job_id()) +
            (request.has_step() ? " step " + std::to_string(request.step()) : std::string()) +
            ": " + std::to_string(count) + " tasks" +
            (dropped > 0 ? ", " + std::to_string(dropped) + " not started dropped" : ""));
  reply.set_processes(reply.processes() + count);
  return grpc::Status::OK;
}

void Agent::Service::pmi_exchange(const v1::PmiExchange& op, v1::TreeReply& reply) {
  const StepKey step{op.job_id(), op.attempt(), op.step()};
  if (op.complete()) {
    agent_.exchange_->deliver(step, op.round(), op.data());
    return;
  }
  // A refusal comes back at once (from contribute_child's own thread); the answer when the
  // barrier completes is not used (the root sends it down the tree, see pmi_tree_link.h).
  struct Refusal {
    std::mutex mutex;
    bool returned = false;
    std::string why;
  };
  auto refusal = std::make_shared<Refusal>();
  agent_.exchange_->contribute_child(step, op.round(), op.from(), op.data(),
                                     [refusal](Result<std::string> outcome) {
                                       std::lock_guard lock(refusal->mutex);
                                       if (!refusal->returned && !outcome)
                                         refusal->why = outcome.error().message;
                                     });
  std::lock_guard lock(refusal->mutex);
  refusal->returned = true;
  if (!refusal->why.empty()) reply.add_errors(agent_.address_ + ": " + refusal->why);
}

grpc::Status Agent::Service::authorize(const grpc::ServerContext& context) const {
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

}  // namespace trellis
