// What an agent checks of a controller's Launch and Signal requests before acting on them, and the
// task a launch asks for. Who called is checked apart (Agent::Service, with MUNGE); these are free
// functions of the request alone, so that the fuzzer (fuzz/fuzz_agent_requests.cc) drives them
// with no agent, server or process.
//
//   Result<std::vector<int>> mine = check_launch_request(request, served);
//   if (!mine) return invalid(mine.error());
//   for (int node_id : *mine) runner.launch(task_spec(request, node_id, env, shell));
#pragma once

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/result.h"
#include "core/task_layout.h"
#include "daemon/program_libraries.h"
#include "daemon/task_runner.h"
#include "shell/shell_options.h"

namespace trellis {

namespace v1 {
class LaunchRequest;
class SignalRequest;
}  // namespace v1

// The node ids (places in `request.nodes`) of the step's nodes that this agent serves
// (`served`), in order; or kInvalidArgument with a message naming the field: ids in range, node
// names that are names, each node served here named once, a command, an absolute cwd,
// sane ids and environment names, a task layout that matches the nodes, a known MPI kind and
// distribution. Empty when none of the nodes is this agent's. One pass over the nodes: a step may
// have 110,592 of them, and every agent looks each one up in `served` (a hash set: a tree's
// comparisons of names that share their first characters were most of the check).
Result<std::vector<int>> check_launch_request(const v1::LaunchRequest& request,
                                              const std::unordered_set<std::string>& served);

// How this agent starts a step's part on a node: the job shell and what it tells it.
struct ShellSetup {
  std::string binary;  // trellis-shell (absolute)
  std::string socket;  // the agent's shell socket name (daemon/shell_socket.h)
  // A directory holding `srun` (and the other Slurm command names), put first in the job's PATH
  // so that MPI launchers inside the job find it; "" = none.
  std::string slurm_commands;
  // Where `trellis run` inside the job finds the cluster (TRELLIS_CONTROLLERS,
  // TRELLIS_MUNGE_SOCKET), when the job's environment names no config file.
  std::vector<std::string> controllers;
  std::string munge_socket;
};

// The task to start on the node of id `node_id` (request.nodes(node_id)), one that
// check_launch_request() returned:
// the job shell (trellis-shell), given the step's layout and the command; for a batch job (a
// request with a script), the command itself, the batch step (SLURM_STEP_ID=batch, task 0),
// which prepare_batch_task() completes. Its environment is the
// agent's own (`agent_env`, "NAME=value"), the user's identity when the task runs as another
// user, the job's variables, then Trellis's (TRELLIS_JOB_ID, ...) and the Slurm-named ones MPI
// libraries and tools look for (SLURM_JOB_ID, SLURM_NODELIST, ...), which the job cannot
// override; the shell adds each rank's own (shell/shell.h).
TaskSpec task_spec(const v1::LaunchRequest& request, int node_id,
                   const std::vector<std::string>& agent_env, const ShellSetup& shell);

// How a step's tasks start on their nodes. A step of one task whose program needs no PMI is
// started `direct`ly: the shepherd's child execs the command (one process for the job, as its
// batch step); any other step gets a job shell per node (shell/shell.h), which serves `mpi`.
// With `--mpi` unset (or "auto") the kind comes from the program's file
// (daemon/program_libraries.h): Open MPI gets PMIx (and PMI-1), MPICH PMI-1, a program of neither
// PMI-1 (and no shell when it is one task), and what cannot be read as a program (a script) both
// PMI-1 and PMIx. `--mpi none` with one task is direct too; pmi1 and pmix always get a shell.
struct StepWiring {
  bool direct = false;
  MpiKind mpi = MpiKind::kPmi1;               // what the shell serves (kNone when direct)
  ProgramMpi program = ProgramMpi::kUnknown;  // what was read of the program (auto only)
  std::string program_path;  // the file found for the command (auto only; "" = not found)
};
StepWiring step_wiring(const v1::LaunchRequest& request, const TaskLayout& layout,
                       const std::map<std::string, std::string>& variables);

// What task_spec() works out once per request rather than once per node (each is as long as the
// step's nodes, or as the environment: a launch of 4,096 of a 16,384-node job's nodes would redo
// them 4,096 times). The environment is built once, in the order task_spec() gives it, and each
// node's task fills in its own four variables (TRELLIS_NODEID, TRELLIS_NODENAME, SLURM_NODEID,
// SLURMD_NODENAME).
// `emulated`: the tasks are an emulating agent's (daemon/emulated_tasks.h), which act on the job's
// own command and read nothing else: they get no job shell (its command line is as long as the
// step: 110,592 names) and no environment.
struct LaunchCommon {
  LaunchCommon(const v1::LaunchRequest& request, const std::vector<std::string>& agent_env,
               const ShellSetup& shell, bool emulated = false);
  TaskLayout layout;
  std::string tasks_per_node;  // SLURM_TASKS_PER_NODE's text
  StepWiring wiring;           // a job shell or the command itself, and which PMI
  bool shell = false;          // argv starts a job shell (else the command itself)
  // The shell's command line, with its --node and --node-index values to fill in per node.
  std::vector<std::string> argv;
  size_t node_at = 0, node_index_at = 0;
  // Every task's environment ("NAME=value", sorted by name; empty when emulated), with the
  // places of the per-node variables to fill in.
  std::vector<std::string> env;
  size_t nodeid_at = 0, nodename_at = 0, slurm_nodeid_at = 0, slurmd_nodename_at = 0;
};
TaskSpec task_spec(const v1::LaunchRequest& request, int node_id, const LaunchCommon& common);

// The step's task layout of a checked request.
TaskLayout launch_layout(const v1::LaunchRequest& request);

// The grace period between SIGTERM and SIGKILL that a Signal asks for (`default_grace` when it
// gives none), or kInvalidArgument naming the field.
Result<std::chrono::milliseconds> check_signal_request(const v1::SignalRequest& request,
                                                       std::chrono::milliseconds default_grace);

}  // namespace trellis
