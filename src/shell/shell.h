// The job shell (trellis-shell): one process per (job, attempt, step, node), started by the
// agent's shepherd as that node's task and running as the job's user, as Flux's job shell and
// Slurm's slurmstepd do. It
//   - starts the node's ranks of the step (shell/rank_process.h), each with its environment
//     (TRELLIS_PROCID/LOCALID, SLURM_PROCID/LOCALID, PMI_RANK/SIZE/FD; and, as mpirun does,
//     OMPI_MCA_mpi_yield_when_idle=1 when the node's ranks outnumber its CPUs, unless the job set
//     it) and, unless the step asks for no PMI, a socketpair on PMI_FD;
//   - serves PMI-1 on those sockets (shell/pmi1_server.h) and, for --mpi pmix, PMIx
//     (shell/pmix_server.h), taking each barrier's cross-node half to its agent
//     (shell/agent_channel.h), which merges the node's shells and exchanges along a tree of the
//     step's agents;
//   - with --label, prefixes every line of the ranks' output with the rank;
//   - collects the ranks' exits and ends with the step's status on this node: 0 when every rank
//     exited 0; otherwise the first failure's, exit code or signal (raised on itself), after
//     telling the agent why (for the job's reason) and writing it to its stderr.
// The first failure (a rank that exits non-zero, is killed, calls abort, sends a malformed PMI
// line, or exits between PMI init and finalize) gets the other local ranks SIGTERM, then SIGKILL
// after the kill grace; the agent's exit report makes the controller stop the step's other
// nodes. A hostile or stuck step can stall only its own shell.
//
// The shell ignores the terminating signals the agent sends to the task's process group (SIGTERM
// on cancel, SIGUSR1 on `cancel -s`): they reach the ranks, whose ends the shell reports.
#pragma once

#include "core/result.h"
#include "shell/shell_options.h"

namespace trellis {

// How the shell ends: its exit code, or a signal to raise on itself.
struct ShellEnd {
  int exit_code = 0;
  int signal = 0;
};

// Runs the step's ranks on this node to their end (the whole life of trellis-shell).
ShellEnd run_shell(const ShellOptions& options);

}  // namespace trellis
