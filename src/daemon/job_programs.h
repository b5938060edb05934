// The programs an agent starts as the job's user, from wherever the build or install put them:
// the job shell (trellis-shell) and the Slurm commands a job runs (srun and the others are links
// to the `trellis` binary, daemon/agent.h's slurm_commands). A job of another user can run them
// only if that user may reach them: every directory above them searchable by others, and the
// files executable by others. A build tree under root's home (mode 700 on Debian) is not, and
// the job ended 126, "cannot run '/root/project/build/release/trellis-shell': Permission denied".
//
// reachable_for_jobs() keeps the programs where they are when others can reach them; otherwise
// (as root) it copies them into a root-owned directory everyone may search and run from
// (/run/trellis, /var/tmp or /tmp, the first that allows it), named after what was copied so
// that agents of the same build share one copy and a new build gets its own, and says so in one
// line. When no copy can be made it says, in one line, why other users' jobs will fail.
//
//   JobPrograms programs = reachable_for_jobs({shell, slurm_dir}, log);
//   shell = programs.shell; slurm_dir = programs.slurm_commands;
#pragma once

#include <functional>
#include <string>

namespace trellis {

struct JobPrograms {
  std::string shell;           // trellis-shell (absolute)
  std::string slurm_commands;  // a directory of srun, sbatch, ... links ("" = none)
};

// Why other users cannot run `path`: "" when they can, else the first directory or the file that
// stops them, with its mode ("/root is 0700").
std::string unreachable_reason(const std::string& path);

// The programs as jobs of other users should find them (see above). `log` gets at most one line.
// `places` are where copies may go, in order of preference (tests give their own).
JobPrograms reachable_for_jobs(const JobPrograms& built,
                               const std::function<void(std::string)>& log,
                               const std::vector<std::string>& places = {"/run/trellis", "/var/tmp",
                                                                         "/tmp"});

}  // namespace trellis
