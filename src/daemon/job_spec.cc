#include "daemon/job_spec.h"

#include <cmath>

#include "core/dependency.h"
#include "core/hostlist.h"
#include "core/task_binding.h"
#include "core/task_layout.h"
#include "shell/shell_options.h"

namespace trellis {
namespace {

bool has_nul(const std::string& text) {
  return text.find('\0') != std::string::npos;
}

Status check_text(const std::string& text, std::string_view field, size_t limit) {
  if (text.size() > limit)
    return fail(std::string(field) + ": " + std::to_string(text.size()) +
                " bytes is longer than the limit of " + std::to_string(limit));
  if (has_nul(text)) return fail(std::string(field) + ": contains a NUL byte");
  return Ok{};
}

}  // namespace

Result<StoredJob> job_from_spec(const v1::JobSpec& spec, const Machine& machine,
                                const ControllerSettings& settings) {
  StoredJob job;
  PlacementMode mode = PlacementMode::kTorus;
  if (!spec.mode().empty()) {
    std::string name = spec.mode() == "any" ? "noncont" : spec.mode();
    Result<PlacementMode> parsed = parse_placement_mode(name);
    if (!parsed) return fail("mode: " + parsed.error().message + " (or any)");
    mode = *parsed;
  } else if (machine.kind() != Machine::Kind::kTorus) {
    mode = PlacementMode::kNonContiguous;
  }
  const bool rotate = spec.rotate_set() ? spec.rotate() : true;
  if (spec.shape_size() > 0) {
    if (spec.shape_size() > kMaxDims)
      return fail("shape: " + std::to_string(spec.shape_size()) + " extents, at most " +
                  std::to_string(kMaxDims));
    Shape shape;
    // The volume grows extent by extent and stops past the machine, so it cannot overflow.
    long volume = 1;
    for (int extent : spec.shape()) {
      if (extent < 1) return fail("shape: extent " + std::to_string(extent) + " is not positive");
      if (extent > machine.node_count())
        return fail("shape: extent " + std::to_string(extent) + " is larger than the machine (" +
                    machine.spec() + ")");
      shape.push_back(extent);
      volume *= extent;
      if (volume > machine.node_count()) {
        Shape asked(spec.shape().begin(), spec.shape().end());
        return fail("shape: " + format_shape(asked) + " is larger than " + machine.spec() + " (" +
                    std::to_string(machine.node_count()) + " nodes)");
      }
    }
    if (spec.nodes() != 0 && volume != spec.nodes())
      return fail("nodes: " + std::to_string(spec.nodes()) + " does not match the shape's " +
                  std::to_string(volume) + " nodes (give one of them)");
    if (const Torus* torus = machine.torus()) {
      if (static_cast<int>(shape.size()) > torus->dims())
        return fail("shape: " + format_shape(shape) + " has more axes than " + machine.spec());
    } else {
      return fail("shape: " + machine.spec() + " is not a mesh or torus; ask for a node count");
    }
    job.request = Request::box(shape, rotate, mode);
  } else {
    int nodes = spec.nodes();
    // Without a node count, the tasks say how many nodes: one task per node, or ntasks_per_node.
    if (nodes == 0 && spec.ntasks() > 0)
      nodes = spec.ntasks_per_node() > 0 ? spec.ntasks() / spec.ntasks_per_node() +
                                               (spec.ntasks() % spec.ntasks_per_node() ? 1 : 0)
                                         : spec.ntasks();
    if (nodes < 1)
      return fail("nodes: " + std::to_string(nodes) + " is not a node count (at least 1)");
    if (nodes > machine.node_count())
      return fail("nodes: " + std::to_string(nodes) + " is more than " + machine.spec() + " has (" +
                  std::to_string(machine.node_count()) + ")" +
                  (spec.nodes() == 0 ? " (one per task: give --ntasks-per-node or -N)" : ""));
    job.request = Request::count(nodes, mode);
  }

  if (!std::isfinite(spec.time_limit()) || spec.time_limit() < 0)
    return fail("time_limit: must be a number of seconds >= 0");
  job.time_limit = spec.time_limit() == 0 ? settings.default_time_limit : spec.time_limit();
  if (settings.max_time_limit > 0 && job.time_limit > settings.max_time_limit)
    return fail("time_limit: " + std::to_string(job.time_limit) + " s is over the maximum of " +
                std::to_string(settings.max_time_limit) + " s");

  if (spec.argv_size() == 0 || spec.argv(0).empty())
    return fail("argv: no command given (e.g. trellis submit -N 2 -- hostname)");
  if (static_cast<size_t>(spec.argv_size()) > kMaxArgs)
    return fail("argv: " + std::to_string(spec.argv_size()) + " arguments, at most " +
                std::to_string(kMaxArgs));
  size_t bytes = 0;
  for (const std::string& arg : spec.argv()) {
    bytes += arg.size();
    if (has_nul(arg)) return fail("argv: an argument contains a NUL byte");
    job.argv.push_back(arg);
  }
  if (bytes > kMaxArgBytes)
    return fail("argv: " + std::to_string(bytes) + " bytes, at most " +
                std::to_string(kMaxArgBytes));
  if (Status ok = check_text(spec.name(), "name", kMaxNameBytes); !ok) return ok.error();
  job.name = spec.name().empty() ? spec.argv(0) : spec.name();
  if (job.name.size() > kMaxNameBytes) job.name.resize(kMaxNameBytes);
  if (Status ok = check_text(spec.cwd(), "cwd", kMaxPathBytes); !ok) return ok.error();
  if (spec.cwd().empty() || spec.cwd()[0] != '/')
    return fail("cwd: '" + spec.cwd() + "' is not an absolute path");
  job.cwd = spec.cwd();
  if (Status ok = check_text(spec.output(), "output", kMaxPathBytes); !ok) return ok.error();
  if (Status ok = check_text(spec.error(), "error", kMaxPathBytes); !ok) return ok.error();
  auto absolute = [&](const std::string& path) {
    return path.empty() || path[0] == '/' ? path : job.cwd + "/" + path;
  };
  job.output = spec.output().empty() ? job.cwd + "/trellis-%j.out" : absolute(spec.output());
  job.error = absolute(spec.error());
  if (static_cast<size_t>(spec.env_size()) > kMaxEnvEntries)
    return fail("env: " + std::to_string(spec.env_size()) + " variables, at most " +
                std::to_string(kMaxEnvEntries));
  for (const auto& [key, value] : spec.env()) {
    if (key.empty() || key.find('=') != std::string::npos || has_nul(key))
      return fail("env: '" + key + "' is not a variable name");
    if (Status ok = check_text(value, "env " + key, kMaxArgBytes); !ok) return ok.error();
    job.env[key] = value;
  }
  job.share = spec.share();
  if (spec.script().size() > kMaxScriptBytes)
    return fail("script: " + std::to_string(spec.script().size()) +
                " bytes is longer than the limit of " + std::to_string(kMaxScriptBytes));
  if (has_nul(spec.script())) return fail("script: contains a NUL byte");
  job.script = spec.script();
  if (Status ok = check_text(spec.dependency(), "dependency", kMaxArgBytes); !ok) return ok.error();
  Result<Dependency> dependency = parse_dependency(spec.dependency());
  if (!dependency) return fail("dependency: " + dependency.error().message);
  job.dependency = format_dependency(*dependency);
  job.kill_on_invalid_dep = spec.kill_on_invalid_dep();

  // The tasks: a layout must exist for them on the job's nodes.
  Result<Distribution> distribution = parse_distribution(spec.distribution());
  if (!distribution) return fail(distribution.error().message);
  job.tasks.ntasks = spec.ntasks();
  job.tasks.per_node = spec.ntasks_per_node();
  job.tasks.distribution = *distribution;
  job.tasks.label = spec.label();
  if (!spec.mpi().empty()) {
    Result<MpiKind> kind = parse_mpi_kind(spec.mpi());
    if (!kind) return fail(kind.error().message);
    job.tasks.mpi = std::string(mpi_kind_name(*kind));
  }
  if (Status ok = check_text(spec.cpu_bind(), "cpu_bind", kMaxNameBytes); !ok) return ok.error();
  if (Status ok = check_text(spec.gpu_bind(), "gpu_bind", kMaxNameBytes); !ok) return ok.error();
  Result<CpuBind> cpu_bind = parse_cpu_bind(spec.cpu_bind());
  if (!cpu_bind) return fail(cpu_bind.error().message);
  job.tasks.cpu_bind = cpu_bind_text(*cpu_bind);
  Result<GpuBind> gpu_bind = parse_gpu_bind(spec.gpu_bind());
  if (!gpu_bind) return fail(gpu_bind.error().message);
  job.tasks.gpu_bind = gpu_bind_text(*gpu_bind);
  if (Status ok = check_text(spec.resources(), "resources", kMaxArgBytes); !ok) return ok.error();
  Result<ResourceRequest> resources = decode_resource_request(spec.resources());
  if (!resources) return fail(resources.error().message);
  job.resources = std::move(*resources);
  int nnodes = job.request.nodes;
  if (Result<TaskLayout> layout =
          TaskLayout::plan(nnodes, job.tasks.ntasks, job.tasks.per_node, job.tasks.distribution);
      !layout)
    return fail(layout.error().message);
  return job;
}

std::string resolve_output_path(const std::string& pattern, const StoredJob& job) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char next = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
    if (pattern[i] != '%' || !next) {
      out += pattern[i];
      continue;
    }
    switch (next) {
      case 'j':
        out += std::to_string(job.id);
        break;
      case 'A':
        out += std::to_string(job.array_job != 0 ? job.array_job : job.id);
        break;
      case 'a':
        out += std::to_string(std::max(job.array_task, 0));
        break;
      case 'x':
        out += job.name;
        break;
      case 'u':
        out += job.user;
        break;
      case '%':
        out += '%';
        break;
      default:  // %N, %n, %t, %s: known only where the task runs
        out += pattern.substr(i, 2);
        break;
    }
    ++i;
  }
  return out;
}

v1::JobState to_proto(JobState state) {
  switch (state) {
    case JobState::kPending:
      return v1::PENDING;
    case JobState::kRunning:
      return v1::RUNNING;
    case JobState::kSuspended:
      return v1::SUSPENDED;
    case JobState::kCompleting:
      return v1::COMPLETING;
    case JobState::kCompleted:
      return v1::COMPLETED;
    case JobState::kFailed:
      return v1::FAILED;
    case JobState::kCancelled:
      return v1::CANCELLED;
    case JobState::kTimeout:
      return v1::TIMEOUT;
    case JobState::kNodeFail:
      return v1::NODE_FAIL;
    case JobState::kOutOfMemory:
      return v1::OUT_OF_MEMORY;
  }
  return v1::JOB_STATE_UNSPECIFIED;
}

Result<JobState> from_proto(v1::JobState state) {
  for (JobState s :
       {JobState::kPending, JobState::kRunning, JobState::kSuspended, JobState::kCompleting,
        JobState::kCompleted, JobState::kFailed, JobState::kCancelled, JobState::kTimeout,
        JobState::kNodeFail, JobState::kOutOfMemory})
    if (to_proto(s) == state) return s;
  return fail("states: " + std::to_string(static_cast<int>(state)) + " is not a job state");
}

v1::JobSpec spec_of(const StoredJob& job) {
  v1::JobSpec spec;
  spec.set_nodes(job.request.nodes);
  for (int extent : job.request.shape) spec.add_shape(extent);
  spec.set_mode(std::string(to_string(job.request.mode)));
  spec.set_rotate(job.request.rotate);
  spec.set_rotate_set(true);
  spec.set_time_limit(job.time_limit);
  spec.set_name(job.name);
  for (const std::string& arg : job.argv) spec.add_argv(arg);
  spec.set_cwd(job.cwd);
  spec.set_output(job.output);
  spec.set_error(job.error);
  for (const auto& [key, value] : job.env) (*spec.mutable_env())[key] = value;
  spec.set_share(job.share);
  spec.set_partition(job.partition);
  spec.set_account(job.account);
  spec.set_qos(job.qos);
  spec.set_dependency(job.dependency);
  spec.set_kill_on_invalid_dep(job.kill_on_invalid_dep);
  spec.set_ntasks(job.tasks.ntasks);
  spec.set_ntasks_per_node(job.tasks.per_node);
  spec.set_distribution(std::string(distribution_name(job.tasks.distribution)));
  spec.set_mpi(job.tasks.mpi);
  spec.set_label(job.tasks.label);
  spec.set_cpu_bind(job.tasks.cpu_bind);
  spec.set_gpu_bind(job.tasks.gpu_bind);
  spec.set_resources(encode_resource_request(job.resources));
  return spec;
}

v1::JobInfo job_info(const StoredJob& job, int node_count) {
  v1::JobInfo info;
  info.set_id(job.id);
  *info.mutable_spec() = spec_of(job);
  info.set_uid(job.uid);
  info.set_gid(job.gid);
  info.set_user(job.user);
  info.set_state(to_proto(job.state));
  info.set_reason(job.reason);
  if (!job.nodes.empty()) info.set_nodelist(format_hostlist(NodeSet::of(node_count, job.nodes)));
  for (int a : job.box_anchor) info.add_box_origin(a);
  for (int e : job.box_extents) info.add_box_shape(e);
  info.set_submit_time(job.submit_time);
  info.set_start_time(job.start_time);
  info.set_end_time(job.end_time);
  info.set_expected_start(job.expected_start);
  info.set_exit_code(job.exit_code);
  info.set_signal(job.signal);
  info.set_attempt(job.attempt);
  info.set_seconds_frozen(job.seconds_frozen);  // the controller's count replaces it while it runs
  info.set_output(resolve_output_path(job.output, job));
  info.set_hold(job.hold);
  info.set_node_failures(job.node_failures);
  info.set_array_job_id(job.array_job);
  info.set_array_task_id(job.array_task);
  info.set_array_limit(job.array_limit);
  info.set_batch(job.script_id != 0);
  if (!job.grants.empty()) info.set_grants(encode_grants(job.grants));
  TaskLayout layout = job_layout(job);
  info.set_ntasks(layout.ntasks());
  info.set_distribution(std::string(distribution_name(layout.distribution())));
  if (!job.nodes.empty()) {
    std::vector<std::string> names;
    for (NodeId n : job.nodes) names.push_back(std::string(kNodeNamePrefix) += std::to_string(n));
    info.set_task_layout(layout.describe(names));
  }
  return info;
}

TaskLayout job_layout(const StoredJob& job) {
  Result<TaskLayout> layout = TaskLayout::plan(job.request.nodes, job.tasks.ntasks,
                                               job.tasks.per_node, job.tasks.distribution);
  // Checked at submission; a stored job that no longer fits runs one task per node.
  return layout ? *layout
                : *TaskLayout::plan(std::max(job.request.nodes, 1), 0, 0, Distribution::kBlock);
}

v1::NodeState node_state(const StoredNode& node) {
  if (node.drained) return node.jobs.empty() ? v1::DRAINED : v1::DRAINING;
  if (!node.up) return v1::DOWN;
  return node.jobs.empty() ? v1::IDLE : v1::ALLOCATED;
}

v1::NodeInfo node_info(const StoredNode& node, const Machine& machine) {
  v1::NodeInfo info;
  info.set_index(node.id);
  info.set_name(node.name);
  info.set_state(node_state(node));
  for (JobId job : node.jobs) info.add_job_ids(job);
  info.set_agent(node.agent);
  info.set_last_heartbeat(node.last_heartbeat);
  info.set_reason(node.reason);
  if (const Torus* torus = machine.torus()) {
    Coords c = torus->coords(node.id);
    for (int axis = 0; axis < torus->dims(); ++axis) info.add_coordinates(c[axis]);
  }
  return info;
}

std::optional<TaskUsage> usage_of(const v1::TaskStatus& task) {
  if (!task.has_usage() || task.user_usec() < 0 || task.system_usec() < 0 || task.max_rss_kb() < 0)
    return std::nullopt;
  return TaskUsage{task.user_usec(), task.system_usec(), task.max_rss_kb()};
}

v1::StepUsage step_usage_info(const StepUsage& usage) {
  v1::StepUsage info;
  info.set_step(usage.step);
  info.set_user_usec(usage.user_usec);
  info.set_system_usec(usage.system_usec);
  info.set_max_rss_kb(usage.max_rss_kb);
  if (usage.max_rss_node >= 0)
    info.set_max_rss_node(std::string(kNodeNamePrefix) + std::to_string(usage.max_rss_node));
  info.set_nodes(usage.nodes);
  return info;
}

v1::StepInfo step_info(const StoredStep& s, int node_count) {
  v1::StepInfo info;
  info.set_job_id(s.job);
  info.set_step(s.step);
  info.set_attempt(s.attempt);
  info.set_state(to_proto(s.state));
  info.set_reason(s.reason);
  info.set_nodelist(format_hostlist(NodeSet::of(node_count, s.nodes)));
  info.set_ntasks(s.ntasks);
  Result<TaskLayout> layout = TaskLayout::plan(static_cast<int>(s.nodes.size()), s.ntasks,
                                               s.tasks.per_node, s.tasks.distribution);
  if (layout) {
    std::vector<std::string> names;
    for (NodeId n : s.nodes) names.push_back(std::string(kNodeNamePrefix) += std::to_string(n));
    info.set_task_layout(layout->describe(names));
  }
  for (const std::string& a : s.argv) info.add_argv(a);
  info.set_exit_code(s.exit_code);
  info.set_signal(s.signal);
  info.set_start_time(s.start_time);
  info.set_end_time(s.end_time);
  return info;
}

}  // namespace trellis
