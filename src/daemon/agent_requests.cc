#include "daemon/agent_requests.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <map>
#include <thread>

#include "core/hostlist_names.h"
#include "core/task_binding.h"
#include "daemon/program_libraries.h"
#include "shell/shell_options.h"
#include "trellis/v1/trellis.pb.h"

namespace trellis {
namespace {

Error invalid(std::string message) {
  return fail(std::move(message));
}

// A day: a longer grace period is a mistake, and its milliseconds would overflow sooner or later.
constexpr double kMaxGraceSeconds = 86400;
// The agents of one step's exchange tree, and the children each has.
constexpr int kMaxStepAgents = 1 << 16;
constexpr int kMaxExchangeFanout = 64;
constexpr int kDefaultExchangeFanout = 2;

Distribution distribution_of(const v1::LaunchRequest& request) {
  return request.distribution() == "cyclic" ? Distribution::kCyclic : Distribution::kBlock;
}

// The environment of a step's tasks before a job shell adds each rank's own: the agent's, the
// user's identity, the job's, then Trellis's and Slurm's names (which the job cannot override).
std::map<std::string, std::string> step_variables(const v1::LaunchRequest& request,
                                                  const std::vector<std::string>& agent_env,
                                                  const ShellSetup& shell) {
  const bool batch = !request.script().empty();
  const TaskLayout layout = launch_layout(request);
  std::map<std::string, std::string> variables;
  for (const std::string& entry : agent_env) {
    size_t eq = entry.find('=');
    if (eq != std::string::npos && eq > 0) variables[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  if (static_cast<uid_t>(request.uid()) != ::geteuid()) {
    std::vector<char> buffer(16384);
    struct passwd entry {};
    struct passwd* found = nullptr;
    if (::getpwuid_r(request.uid(), &entry, buffer.data(), buffer.size(), &found) == 0 && found) {
      variables["USER"] = variables["LOGNAME"] = entry.pw_name;
      variables["HOME"] = entry.pw_dir;
    }
  }
  for (const auto& [name, value] : request.env()) variables[name] = value;
  // Where `trellis run` (and srun) inside the job find the cluster, unless the job names a config.
  if (!variables.contains("TRELLIS_CONF") && !shell.controllers.empty()) {
    std::string controllers;
    for (const std::string& c : shell.controllers) {
      if (!controllers.empty()) controllers += ',';
      controllers += c;
    }
    variables["TRELLIS_CONTROLLERS"] = controllers;
    if (!shell.munge_socket.empty()) variables["TRELLIS_MUNGE_SOCKET"] = shell.munge_socket;
  }
  if (!shell.slurm_commands.empty()) {
    auto path = variables.find("PATH");
    std::string rest = path == variables.end() ? "/usr/local/bin:/usr/bin:/bin" : path->second;
    variables["PATH"] = shell.slurm_commands + ":" + rest;
  }
  const std::string step_id =
      batch || request.step() == kBatchStep ? "batch" : std::to_string(request.step());
  const std::string job_nodelist =
      request.job_nodelist().empty() ? request.nodelist() : request.job_nodelist();
  const int job_nnodes = request.job_nnodes() > 0 ? request.job_nnodes() : request.nnodes();
  variables["TRELLIS_JOB_ID"] = std::to_string(request.job_id());
  variables["TRELLIS_STEP_ID"] = step_id;
  variables["TRELLIS_NODELIST"] = request.nodelist();
  variables["TRELLIS_JOB_NODELIST"] = job_nodelist;
  variables["TRELLIS_NNODES"] = std::to_string(request.nnodes());
  variables["TRELLIS_NODEID"] = "";    // each node's (task_spec)
  variables["TRELLIS_NODENAME"] = "";  // each node's
  variables["TRELLIS_NTASKS"] = std::to_string(layout.ntasks());
  // 1 the first time; a job requeued (node failure) runs again with the next attempt.
  variables["TRELLIS_ATTEMPT"] = std::to_string(request.attempt());
  // Nodes are allocated whole: the job has every CPU of its node (as Slurm's exclusive jobs).
  variables["SLURM_CPUS_ON_NODE"] =
      std::to_string(std::max(1u, std::thread::hardware_concurrency()));
  // The names Slurm gives them, which MPI libraries (Open MPI's schizo/ras/plm, MPICH's hydra)
  // and tools read.
  const std::string job_id = std::to_string(request.job_id());
  variables["SLURM_JOB_ID"] = variables["SLURM_JOBID"] = job_id;
  variables["SLURM_JOB_NODELIST"] = job_nodelist;
  variables["SLURM_JOB_NUM_NODES"] = std::to_string(job_nnodes);
  variables["SLURM_NODELIST"] = request.nodelist();
  variables["SLURM_NNODES"] = std::to_string(request.nnodes());
  variables["SLURM_NTASKS"] = variables["SLURM_NPROCS"] = std::to_string(layout.ntasks());
  variables["SLURM_TASKS_PER_NODE"] = layout.slurm_tasks_per_node();
  variables["SLURM_NODEID"] = "";     // each node's
  variables["SLURMD_NODENAME"] = "";  // each node's
  variables["SLURM_DISTRIBUTION"] = std::string(distribution_name(layout.distribution()));
  if (request.cpus_per_task() > 0)
    variables["SLURM_CPUS_PER_TASK"] = variables["TRELLIS_CPUS_PER_TASK"] =
        std::to_string(request.cpus_per_task());
  if (request.gpus_per_task() > 0)
    variables["SLURM_GPUS_PER_TASK"] = std::to_string(request.gpus_per_task());
  // A batch step is no step to Slurm: sbatch's script sees no SLURM_STEP_* (with SLURM_STEP_ID
  // beside SLURM_NODELIST, an Open MPI program the script runs by itself takes itself for one
  // that srun launched, and fails for want of a PMIx server).
  if (!batch) {
    variables["SLURM_STEP_ID"] = variables["SLURM_STEPID"] = step_id;
    variables["SLURM_STEP_NODELIST"] = request.nodelist();
    variables["SLURM_STEP_NUM_NODES"] = std::to_string(request.nnodes());
    variables["SLURM_STEP_NUM_TASKS"] = std::to_string(layout.ntasks());
    variables["SLURM_STEP_TASKS_PER_NODE"] = layout.slurm_tasks_per_node();
  }
  return variables;
}

}  // namespace

Result<std::vector<int>> check_launch_request(const v1::LaunchRequest& request,
                                              const std::unordered_set<std::string>& served) {
  if (request.job_id() <= 0)
    return invalid("job_id: must be positive, got " + std::to_string(request.job_id()));
  if (request.attempt() <= 0)
    return invalid("attempt: must be positive, got " + std::to_string(request.attempt()));
  if (request.nodes().empty()) return invalid("nodes: empty");
  // Every node of the step, each with its own place: the job shells lay the ranks out over them.
  if (request.nnodes() != request.nodes_size())
    return invalid("nnodes: " + std::to_string(request.nnodes()) + " for " +
                   std::to_string(request.nodes_size()) + " nodes");
  std::vector<int> mine;
  std::unordered_set<std::string_view> seen;  // of this agent's: another agent checks its own
  for (int id = 0; id < request.nodes_size(); ++id) {
    const std::string& name = request.nodes(id);
    if (name.empty() || name.size() > 255 ||
        name.find_first_of(",[] \t\n", 0) != std::string::npos ||
        name.find('\0') != std::string::npos)
      return invalid("nodes: '" + name.substr(0, 64) +
                     "' is not a node name (empty, too long, or with ',', '[', ']' or a space)");
    if (!served.contains(name)) continue;
    if (!seen.insert(name).second) return invalid("nodes: '" + name + "' appears twice");
    mine.push_back(id);
  }
  if (request.argv().empty() || request.argv(0).empty()) return invalid("argv: empty command");
  // exec takes C strings: a NUL inside one would cut it short without a word.
  for (const std::string& arg : request.argv())
    if (arg.find('\0') != std::string::npos) return invalid("argv: an argument holds a NUL byte");
  for (const std::string* path : {&request.cwd(), &request.output(), &request.error()})
    if (path->find('\0') != std::string::npos) return invalid("cwd, output, error: a NUL byte");
  if (!request.cwd().empty() && request.cwd()[0] != '/')
    return invalid("cwd: '" + request.cwd() + "' is not an absolute path");
  if (request.uid() < 0) return invalid("uid: must not be negative");
  if (request.gid() < 0) return invalid("gid: must not be negative");
  for (const auto& [name, value] : request.env()) {
    if (name.empty() || name.find('=') != std::string::npos || name.find('\0') != std::string::npos)
      return invalid("env: bad variable name '" + name + "'");
    if (value.find('\0') != std::string::npos)
      return invalid("env: the value of " + name + " holds a NUL byte");
  }
  if (!std::isfinite(request.launch_by())) return invalid("launch_by: not a finite time");
  if (request.step() < 0 && request.step() != kBatchStep)
    return invalid("step: " + std::to_string(request.step()) + " is not a step id");
  if (!request.tasks_per_node().empty()) {
    if (request.tasks_per_node_size() != request.nnodes())
      return invalid("tasks_per_node: " + std::to_string(request.tasks_per_node_size()) +
                     " counts for " + std::to_string(request.nnodes()) + " nodes");
    Result<TaskLayout> layout =
        TaskLayout::from_counts({request.tasks_per_node().begin(), request.tasks_per_node().end()},
                                distribution_of(request));
    if (!layout) return invalid("tasks_per_node: " + layout.error().message);
  }
  if (!request.distribution().empty() && request.distribution() != "block" &&
      request.distribution() != "cyclic")
    return invalid("distribution: '" + request.distribution() + "'; expected block or cyclic");
  if (!request.mpi().empty())
    if (Result<MpiKind> kind = parse_mpi_kind(request.mpi()); !kind)
      return invalid(kind.error().message);
  if (request.step_agents_size() > kMaxStepAgents)
    return invalid("step_agents: more than " + std::to_string(kMaxStepAgents));
  for (const std::string& agent : request.step_agents())
    if (agent.empty() || agent.size() > 255)
      return invalid("step_agents: an address is empty or longer than 255 bytes");
  if (request.exchange_fanout() < 0 || request.exchange_fanout() > kMaxExchangeFanout)
    return invalid("exchange_fanout: " + std::to_string(request.exchange_fanout()) +
                   "; must be 1.." + std::to_string(kMaxExchangeFanout) + " (0: the default)");
  if (!(request.kill_grace() >= 0 && request.kill_grace() <= kMaxGraceSeconds))
    return invalid("kill_grace: must be between 0 and " +
                   std::to_string(static_cast<int>(kMaxGraceSeconds)) + " seconds");
  if (request.job_nnodes() < 0) return invalid("job_nnodes: must not be negative");
  if (Result<CpuBind> bind = parse_cpu_bind(request.cpu_bind()); !bind)
    return invalid("cpu_bind: " + bind.error().message);
  if (Result<GpuBind> bind = parse_gpu_bind(request.gpu_bind()); !bind)
    return invalid("gpu_bind: " + bind.error().message);
  if (request.cpus_per_task() < 0 || request.cpus_per_task() > kMaxTasks ||
      request.gpus_per_task() < 0 || request.gpus_per_task() > 1024)
    return invalid("cpus_per_task, gpus_per_task: " + std::to_string(request.cpus_per_task()) +
                   ", " + std::to_string(request.gpus_per_task()) + " are not counts");
  for (const std::string* text : {&request.nodelist(), &request.job_nodelist()})
    if (text->find('\0') != std::string::npos) return invalid("nodelist: a NUL byte");
  return mine;
}

TaskLayout launch_layout(const v1::LaunchRequest& request) {
  std::vector<int> counts(request.tasks_per_node().begin(), request.tasks_per_node().end());
  if (counts.empty()) counts.assign(static_cast<size_t>(std::max(request.nnodes(), 1)), 1);
  Result<TaskLayout> layout = TaskLayout::from_counts(counts, distribution_of(request));
  return layout ? *layout
                : *TaskLayout::plan(std::max(request.nnodes(), 1), 0, 0, Distribution::kBlock);
}

StepWiring step_wiring(const v1::LaunchRequest& request, const TaskLayout& layout,
                       const std::map<std::string, std::string>& variables) {
  const MpiKind asked = request.mpi().empty() ? MpiKind::kAuto : *parse_mpi_kind(request.mpi());
  // --label is the shell's work (a pipe per rank), whatever the program; so is a binding asked
  // in words (the shell sets each rank's affinity).
  const bool one_task = layout.ntasks() == 1 && !request.label() && request.cpu_bind().empty() &&
                        request.gpu_bind().empty();
  StepWiring wiring;
  if (asked != MpiKind::kAuto) {
    wiring.mpi = asked;
    wiring.direct = one_task && asked == MpiKind::kNone;
    return wiring;
  }
  std::string cwd = request.cwd();
  if (cwd.empty())
    if (auto home = variables.find("HOME"); home != variables.end()) cwd = home->second;
  auto path = variables.find("PATH");
  Result<std::string> program =
      find_program(request.argv(0), path == variables.end() ? "" : path->second, cwd);
  wiring.program = program ? program_mpi(*program) : ProgramMpi::kUnknown;
  if (program) wiring.program_path = *program;
  switch (wiring.program) {
    case ProgramMpi::kOpenMpi:
      wiring.mpi = MpiKind::kPmix;
      break;
    case ProgramMpi::kMpich:
      wiring.mpi = MpiKind::kPmi1;
      break;
    case ProgramMpi::kNone:
      // Ranks of a program that links no MPI may still start one (sh -c ./a.out): PMI-1 costs
      // the shell nothing but a socketpair per rank. One task alone needs no shell.
      wiring.mpi = MpiKind::kPmi1;
      wiring.direct = one_task;
      break;
    case ProgramMpi::kUnknown:
      // A script may run either library: both are served (PMIx loads libpmix in the shell).
      wiring.mpi = MpiKind::kPmix;
      break;
  }
  if (wiring.direct) wiring.mpi = MpiKind::kNone;
  return wiring;
}

LaunchCommon::LaunchCommon(const v1::LaunchRequest& request,
                           const std::vector<std::string>& agent_env, const ShellSetup& shell,
                           bool emulated)
    : layout(launch_layout(request)), tasks_per_node(layout.slurm_tasks_per_node()) {
  if (emulated) {  // no job shell and no environment: nothing would read them
    argv.assign(request.argv().begin(), request.argv().end());
    node_at = node_index_at = argv.size();
    return;
  }
  const bool batch = !request.script().empty();
  std::map<std::string, std::string> variables = step_variables(request, agent_env, shell);

  // A batch job's script is its batch step: one process on the job's first node, started as
  // given, with no job shell and no PMI (daemon/batch_task.h turns it into the script's copy).
  // So is a step of one task whose program needs no PMI (step_wiring): a job shell would only
  // stand between the shepherd and that one process.
  if (batch) {
    wiring.direct = true;
    wiring.mpi = MpiKind::kNone;
  } else {
    wiring = step_wiring(request, layout, variables);
  }
  if (wiring.direct) {
    argv.assign(request.argv().begin(), request.argv().end());
    node_at = node_index_at = argv.size();  // nothing to fill in
    // The rank variables a job shell would have set: the command is task 0.
    variables["TRELLIS_PROCID"] = variables["TRELLIS_LOCALID"] = "0";
    variables["SLURM_PROCID"] = variables["SLURM_LOCALID"] = "0";
  } else {
    this->shell = true;
    ShellOptions options;
    options.job = request.job_id();
    options.attempt = request.attempt();
    options.step = request.step();
    // The step's node names in node-id order.
    options.nodes.assign(request.nodes().begin(), request.nodes().end());
    options.tasks_per_node = layout.counts();
    options.distribution = layout.distribution();
    options.mpi = wiring.mpi;
    options.label = request.label();
    options.kill_grace = request.kill_grace();
    options.agent = shell.socket;
    options.argv.assign(request.argv().begin(), request.argv().end());
    argv.push_back(shell.binary);
    for (std::string& a : options.to_arguments()) argv.push_back(std::move(a));
    // The options end with "--" and the command: the first "--node" and "--node-index" before
    // it are the shell's own.
    const auto end = std::find(argv.begin(), argv.end(), "--");
    node_at = static_cast<size_t>(std::find(argv.begin(), end, "--node") - argv.begin()) + 1;
    node_index_at =
        static_cast<size_t>(std::find(argv.begin(), end, "--node-index") - argv.begin()) + 1;
  }
  env.reserve(variables.size());
  for (const auto& [name, value] : variables) {
    if (name == "TRELLIS_NODEID") nodeid_at = env.size();
    if (name == "TRELLIS_NODENAME") nodename_at = env.size();
    if (name == "SLURM_NODEID") slurm_nodeid_at = env.size();
    if (name == "SLURMD_NODENAME") slurmd_nodename_at = env.size();
    env.push_back(name + "=" + value);
  }
}

TaskSpec task_spec(const v1::LaunchRequest& request, int node_id,
                   const std::vector<std::string>& agent_env, const ShellSetup& shell) {
  return task_spec(request, node_id, LaunchCommon(request, agent_env, shell));
}

TaskSpec task_spec(const v1::LaunchRequest& request, int node_id, const LaunchCommon& common) {
  const std::string& node = request.nodes(node_id);
  TaskSpec spec;
  spec.key = {request.job_id(), request.attempt(), node, request.step()};
  spec.argv = common.argv;
  if (common.node_at < spec.argv.size()) spec.argv[common.node_at] = node;
  if (common.node_index_at < spec.argv.size())
    spec.argv[common.node_index_at] = std::to_string(node_id);
  // A direct task runs the file the wiring found (a shell finds its ranks' program itself).
  if (common.wiring.direct) spec.program = common.wiring.program_path;
  spec.shell = common.shell;
  spec.cwd = request.cwd();
  spec.output = request.output();
  spec.error = request.error();
  spec.uid = request.uid();
  spec.gid = request.gid();
  if (common.env.empty()) return spec;  // emulated
  spec.env = common.env;
  const std::string id = std::to_string(node_id);
  spec.env[common.nodeid_at] = "TRELLIS_NODEID=" + id;
  spec.env[common.nodename_at] = "TRELLIS_NODENAME=" + node;
  spec.env[common.slurm_nodeid_at] = "SLURM_NODEID=" + id;
  spec.env[common.slurmd_nodename_at] = "SLURMD_NODENAME=" + node;
  return spec;
}

Result<std::chrono::milliseconds> check_signal_request(const v1::SignalRequest& request,
                                                       std::chrono::milliseconds default_grace) {
  if (request.job_id() <= 0) return invalid("job_id: must be positive");
  if (request.attempt() < 0) return invalid("attempt: must be 0 (any) or positive");
  if (request.signal() < 0 || request.signal() >= NSIG)
    return invalid("signal: " + std::to_string(request.signal()) + " is not a signal number");
  double grace = request.grace_seconds();
  // Written so that NaN fails too.
  if (!(grace >= 0 && grace <= kMaxGraceSeconds))
    return invalid("grace_seconds: must be between 0 and " +
                   std::to_string(static_cast<int>(kMaxGraceSeconds)) + " seconds");
  if (grace == 0) return default_grace;
  return std::chrono::milliseconds(static_cast<long long>(grace * 1000));
}

}  // namespace trellis
