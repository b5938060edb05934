// What one trellis-shell runs: the command line the agent gives it (daemon/agent_requests.cc
// builds it, parse_shell_options() reads it back). The shell is one node's part of one step of a
// job attempt; the job's environment (TRELLIS_*, SLURM_*) comes in its own environment.
//
//   trellis-shell --job 12 --attempt 1 --step 0 --node n3 --node-index 1 --nodes 'n[2-3]'
//       --tasks-per-node '2(x2)' --distribution block --mpi pmi1 --kill-grace 5
//       --agent trellis-agent-shells-agent-0123 [--label] -- ./a.out arg
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/task_layout.h"

namespace trellis {

// How the ranks of a step wire up (`trellis submit --mpi`, `[cluster] mpi`).
enum class MpiKind {
  kNone,  // no PMI_* for the ranks (e.g. MPI launchers' own daemons, started through srun)
  kPmi1,  // a PMI-1 server on PMI_FD (MPICH, MVAPICH, Intel MPI)
  kPmix,  // a PMIx server, and PMI-1 too (Open MPI's direct launch)
  // What the program needs, which the agent reads from it before the step starts
  // (daemon/program_libraries.h; the default): a shell is always given one of the three above.
  kAuto,
};
std::string_view mpi_kind_name(MpiKind kind);  // "none", "pmi1", "pmix", "auto"
// A kind by name: those above, and Slurm's names for them (pmi2 and pmix_v3/v4).
Result<MpiKind> parse_mpi_kind(std::string_view text);

struct ShellOptions {
  int64_t job = 0;
  int attempt = 0;
  int step = 0;
  std::string node;                 // this node's name
  int node_index = 0;               // its place among the step's nodes
  std::vector<std::string> nodes;   // the step's nodes, in order (from a hostlist)
  std::vector<int> tasks_per_node;  // per step node
  Distribution distribution = Distribution::kBlock;
  MpiKind mpi = MpiKind::kPmi1;
  bool label = false;     // prefix each output line with the rank
  double kill_grace = 5;  // seconds between SIGTERM and SIGKILL when the step fails
  std::string agent;      // the agent's abstract socket name ("" = none: one-node steps only)
  std::vector<std::string> argv;  // the command

  // The options as trellis-shell's arguments (after the program's name), argv last after "--".
  std::vector<std::string> to_arguments() const;
};

// Errors name the argument: an unknown option, a missing value, a node index outside the step,
// tasks-per-node that does not match the nodes, no command after "--".
Result<ShellOptions> parse_shell_options(const std::vector<std::string>& arguments);

// A step's name in messages and for its KVS: "12.0" (job 12, step 0), "12.batch".
std::string step_name(int64_t job, int step);
// Slurm's number for the batch step (SLURM_BATCH_SCRIPT, 0xfffffffb as an int32).
inline constexpr int kBatchStep = -5;

}  // namespace trellis
