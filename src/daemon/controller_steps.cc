#include <signal.h>

#include <algorithm>
#include <set>

#include "core/hostlist.h"
#include "core/hostlist_names.h"
#include "core/task_binding.h"
#include "daemon/controller.h"
#include "daemon/job_spec.h"
#include "daemon/log.h"
#include "shell/shell_options.h"

// Job steps: `trellis run` (srun) inside a running job launches a command on some of its nodes;
// each node's exit is recorded, a failure stops the step's other tasks, and the step ends when
// every node has reported. A job's own command is its step 0 (controller_jobs.cc).

namespace trellis {
namespace {

// The first id of the steps a job launches itself: its own command is step 0.
constexpr int kFirstStepId = 1;

}  // namespace

Result<StoredJob> Controller::job_for(JobId id, const Caller& caller) {
  Result<StoredJob> job = store_.job(id);
  if (!job) return fail(Error::Code::kNotFound, "job " + std::to_string(id) + " does not exist");
  if (job->uid != caller.uid && !is_admin(caller))
    return fail(Error::Code::kPermissionDenied,
                "permission denied: job " + std::to_string(job->id) + " belongs to " + job->user);
  return job;
}

std::string Controller::failure_reason(const v1::TaskStatus& task) {
  if (!task.reason().empty()) return task.reason();
  return "node " + task.node() +
         (task.signal() != 0 ? " was killed by signal " + std::to_string(task.signal())
                             : " exited with exit code " + std::to_string(task.exit_code()));
}

Result<v1::RunStepReply> Controller::run_step(const v1::RunStepRequest& request,
                                              const Caller& caller, Seconds now) {
  if (request.argv_size() == 0 || request.argv(0).empty())
    return fail("argv: no command given (e.g. trellis run -n 4 -- ./app)");
  auto lock = lock_memory();
  Result<StoredJob> job = job_for(request.job_id(), caller);
  if (!job) return job.error();
  if (job->state != JobState::kRunning && job->state != JobState::kSuspended)
    return fail(Error::Code::kNeverFits, "job " + std::to_string(job->id) + " is " +
                                             std::string(state_name(job->state)) +
                                             ": steps run inside running jobs");

  // The step's nodes, a subset of the job's in the job's order.
  std::vector<NodeId> nodes;
  if (!request.nodelist().empty()) {
    Result<std::vector<std::string>> names =
        expand_hostlist_names(request.nodelist(), job->nodes.size());
    if (!names) return fail("nodelist: " + names.error().message);
    std::set<NodeId> chosen;
    for (const std::string& name : *names) {
      Result<NodeId> id = node_id(name);
      if (!id || std::find(job->nodes.begin(), job->nodes.end(), *id) == job->nodes.end())
        return fail(
            "nodelist: " + name + " is not one of job " + std::to_string(job->id) + "'s nodes (" +
            format_hostlist(NodeSet::of(machine_.node_count(), job->nodes), kNodePrefix) + ")");
      chosen.insert(*id);
    }
    nodes.assign(chosen.begin(), chosen.end());
    if (request.nodes() > 0 && request.nodes() != static_cast<int>(nodes.size()))
      return fail("nodes: " + std::to_string(request.nodes()) + " does not match the nodelist's " +
                  std::to_string(nodes.size()));
  } else {
    int count = static_cast<int>(job->nodes.size());
    if (request.nodes() > 0) {
      if (request.nodes() > count)
        return fail("nodes: " + std::to_string(request.nodes()) + " is more than job " +
                    std::to_string(job->id) + " holds (" + std::to_string(count) + ")");
      count = request.nodes();
    } else if (request.ntasks() > 0) {
      int wanted =
          request.ntasks_per_node() > 0
              ? (request.ntasks() + request.ntasks_per_node() - 1) / request.ntasks_per_node()
              : request.ntasks();
      count = std::min(count, wanted);
    }
    nodes.assign(job->nodes.begin(), job->nodes.begin() + count);
  }
  Result<Distribution> distribution = parse_distribution(request.distribution());
  if (!distribution) return fail(distribution.error().message);
  TaskRequest tasks;
  tasks.ntasks = request.ntasks();
  tasks.per_node = request.ntasks_per_node();
  tasks.distribution = *distribution;
  tasks.label = request.label();
  // Neither a size nor a node list: the job's own tasks, as srun in an allocation runs them
  // (sbatch -N 2 -n 4 script: its plain `srun cmd` is 4 tasks, not one per node).
  if (request.nodelist().empty() && request.nodes() == 0 && request.ntasks() == 0 &&
      request.ntasks_per_node() == 0) {
    tasks.ntasks = job->tasks.ntasks;
    tasks.per_node = job->tasks.per_node;
    if (request.distribution().empty()) tasks.distribution = job->tasks.distribution;
  }
  tasks.mpi = job->tasks.mpi;
  // A step binds as the job does unless it says otherwise (srun --cpu-bind inside sbatch).
  tasks.cpu_bind = job->tasks.cpu_bind;
  tasks.gpu_bind = job->tasks.gpu_bind;
  if (!request.cpu_bind().empty()) {
    Result<CpuBind> bind = parse_cpu_bind(request.cpu_bind());
    if (!bind) return fail(bind.error().message);
    tasks.cpu_bind = cpu_bind_text(*bind);
  }
  if (!request.gpu_bind().empty()) {
    Result<GpuBind> bind = parse_gpu_bind(request.gpu_bind());
    if (!bind) return fail(bind.error().message);
    tasks.gpu_bind = gpu_bind_text(*bind);
  }
  if (!request.mpi().empty()) {
    Result<MpiKind> kind = parse_mpi_kind(request.mpi());
    if (!kind) return fail(kind.error().message);
    tasks.mpi = std::string(mpi_kind_name(*kind));
  }
  Result<TaskLayout> layout = TaskLayout::plan(static_cast<int>(nodes.size()), tasks.ntasks,
                                               tasks.per_node, tasks.distribution);
  if (!layout) return fail(layout.error().message);
  for (const auto& [key, value] : request.env())
    if (key.empty() || key.find('=') != std::string::npos || key.find('\0') != std::string::npos ||
        value.find('\0') != std::string::npos)
      return fail("env: '" + key + "' is not a variable name, or its value holds a NUL byte");
  if (request.env_size() > 4096) return fail("env: more than 4096 variables");
  for (const std::string& a : request.argv())
    if (a.find('\0') != std::string::npos) return fail("argv: an argument holds a NUL byte");
  for (const std::string* path : {&request.cwd(), &request.output(), &request.error()})
    if (path->find('\0') != std::string::npos || (!path->empty() && (*path)[0] != '/'))
      return fail("cwd, output, error: '" + *path + "' is not an absolute path");

  StoredStep step;
  step.job = job->id;
  step.attempt = job->attempt;
  step.argv.assign(request.argv().begin(), request.argv().end());
  step.nodes = nodes;
  step.tasks = tasks;
  step.ntasks = layout->ntasks();
  Result<int> id = store_.add_step(step, kFirstStepId, now);
  if (!id) return id.error();
  step.step = *id;
  step.start_time = now;
  if (tracking())
    if (auto live = running_.find(job->id); live != running_.end()) live->second.has_steps = true;

  // The launch: the job's, on the step's nodes, with the step's command, tasks and environment.
  v1::LaunchRequest launch = launch_request(*job, job->attempt, nodes);
  launch.set_step(step.step);
  launch.clear_argv();
  for (const std::string& a : request.argv()) launch.add_argv(a);
  if (!request.cwd().empty()) launch.set_cwd(request.cwd());
  launch.clear_env();
  for (const auto& [key, value] : request.env()) (*launch.mutable_env())[key] = value;
  if (!request.output().empty()) {
    launch.set_output(request.output());
    launch.set_error(request.error());
  }
  launch.clear_tasks_per_node();
  for (int count : layout->counts()) launch.add_tasks_per_node(count);
  launch.set_distribution(std::string(distribution_name(layout->distribution())));
  launch.set_mpi(tasks.mpi.empty() ? config_.controller.mpi : tasks.mpi);
  launch.set_label(tasks.label);
  launch.set_cpu_bind(tasks.cpu_bind);
  launch.set_gpu_bind(tasks.gpu_bind);
  launch.set_job_nodelist(
      format_hostlist(NodeSet::of(machine_.node_count(), job->nodes), kNodePrefix));
  launch.set_job_nnodes(static_cast<int>(job->nodes.size()));
  // One message down the tree of the step's agents; each starts the tasks of the nodes it serves.
  std::vector<StepExit> unreachable;
  std::vector<NodeId> reachable;
  for (NodeId node : nodes) {
    if (agent_of_[node].empty()) {  // a node of the job whose agent this controller does not know
      unreachable.push_back({job->id, job->attempt, step.step, node, 255, 0,
                             "node " + node_name(node) + " has no agent known to the controller",
                             std::nullopt});
    } else {
      reachable.push_back(node);
    }
  }
  if (std::vector<std::string> agents = agents_of(reachable); !agents.empty())
    agents_.launch(agents, launch);
  if (!unreachable.empty()) (void)store_.record_step_exits(unreachable, now);
  log_line("job " + std::to_string(job->id) + " step " + std::to_string(step.step) + ": " +
           std::to_string(layout->ntasks()) + " tasks on " + std::to_string(nodes.size()) +
           " nodes: " + request.argv(0));
  v1::RunStepReply reply;
  *reply.mutable_step() = step_info(step, machine_.node_count());
  return reply;
}

Result<v1::ListStepsReply> Controller::list_steps(const v1::ListStepsRequest& request) {
  Result<std::vector<StoredStep>> steps = store_.list_steps(request.job_id());
  if (!steps) return steps.error();
  v1::ListStepsReply reply;
  for (const StoredStep& s : *steps) {
    if (request.has_step() && s.step != request.step()) continue;
    *reply.add_steps() = step_info(s, machine_.node_count());
  }
  return reply;
}

Status Controller::cancel_step(const v1::CancelStepRequest& request, const Caller& caller,
                               Seconds now) {
  if (request.signal() < 0 || request.signal() > 64)
    return fail("signal: " + std::to_string(request.signal()) + " is not a signal");
  auto lock = lock_memory();
  Result<StoredJob> job = job_for(request.job_id(), caller);
  if (!job) return job.error();
  Result<std::vector<StoredStep>> steps = store_.list_steps(job->id);
  if (!steps) return steps.error();
  for (const StoredStep& s : *steps) {
    if (s.attempt != job->attempt || s.step != request.step()) continue;
    if (request.signal() == 0) {
      Result<JobState> after =
          store_.stop_step(s.job, s.attempt, s.step, StopCause::kCancel, "cancelled", now);
      if (!after) return after.error();
    }
    send_step_signal(s, request.signal());
    return Ok{};
  }
  return fail(Error::Code::kNotFound, "job " + std::to_string(job->id) + " has no step " +
                                          std::to_string(request.step()) + " in its attempt " +
                                          std::to_string(job->attempt));
}

void Controller::send_step_signal(const StoredStep& step, int signal) {
  v1::SignalRequest request;
  request.set_job_id(step.job);
  request.set_attempt(step.attempt);
  request.set_step(step.step);
  request.set_signal(signal);
  request.set_grace_seconds(config_.controller.kill_grace);
  if (std::vector<std::string> agents = agents_of(step.nodes); !agents.empty())
    agents_.signal(agents, request);
}

Status Controller::record_step_exits(const std::vector<const v1::TaskStatus*>& tasks, Seconds now) {
  std::vector<StepExit> exits;
  for (const v1::TaskStatus* task : tasks) {
    Result<NodeId> node = node_id(task->node());
    if (!node) continue;
    exits.push_back({task->job_id(), task->attempt(), task->step(), *node, task->exit_code(),
                     task->signal(), task->reason(), usage_of(*task)});
    if (task->exit_code() == 0 && task->signal() == 0) continue;
    // The step's first failure stops its other tasks; its reason is the step's.
    const std::string reason = failure_reason(*task);
    Result<JobState> after = store_.stop_step(task->job_id(), task->attempt(), task->step(),
                                              StopCause::kFailed, reason, now);
    if (!after || *after != JobState::kCompleting) continue;
    log_line("job " + std::to_string(task->job_id()) + " step " + std::to_string(task->step()) +
             " failed: " + reason + "; stopping its other tasks");
    Result<std::vector<StoredStep>> steps = store_.list_steps(task->job_id());
    if (!steps) continue;
    for (const StoredStep& s : *steps)
      if (s.attempt == task->attempt() && s.step == task->step()) send_step_signal(s, 0);
  }
  if (exits.empty()) return Ok{};
  Result<std::vector<StepEnd>> ended = store_.record_step_exits(exits, now);
  if (!ended) return ended.error();
  for (const StepEnd& end : *ended)
    log_line("job " + std::to_string(end.job) + " step " + std::to_string(end.step) + " ended " +
             std::string(state_name(end.state)) + (end.reason.empty() ? "" : ": " + end.reason));
  return Ok{};
}

Status Controller::step_launch_failed(const v1::LaunchRequest& request, const Error& error,
                                      Seconds now) {
  auto lock = lock_memory();
  // The step's tasks on that agent never ran: their nodes end failed, so the step ends.
  std::vector<StepExit> exits;
  for (const std::string& name : request.nodes())
    if (Result<NodeId> node = node_id(name); node)
      exits.push_back({request.job_id(), request.attempt(), request.step(), *node, 255, 0,
                       "launch failed on " + name + ": " + error.message, std::nullopt});
  Result<std::vector<StepEnd>> ended = store_.record_step_exits(exits, now);
  if (!ended) return ended.error();
  Result<JobState> after =
      store_.stop_step(request.job_id(), request.attempt(), request.step(), StopCause::kFailed,
                       "launch failed: " + error.message, now);
  if (after && *after == JobState::kCompleting) {
    Result<std::vector<StoredStep>> steps = store_.list_steps(request.job_id());
    if (steps)
      for (const StoredStep& s : *steps)
        if (s.attempt == request.attempt() && s.step == request.step()) send_step_signal(s, 0);
  }
  return Ok{};
}

void Controller::end_job_steps(JobId id, int attempt, const std::vector<NodeId>& nodes,
                               Seconds now) {
  Result<std::vector<StepEnd>> ended = store_.end_steps(id, attempt, "its job ended", now);
  if (!ended) {
    log_line("job " + std::to_string(id) + ": its steps were not ended: " + ended.error().message);
    return;
  }
  if (ended->empty()) return;
  log_line("job " + std::to_string(id) + " ended with " + std::to_string(ended->size()) +
           " steps still running; killing them");
  send_signal(id, attempt, nodes, SIGKILL);
}

}  // namespace trellis
