// Starting one rank of a step from the job shell, the way the shepherd starts tasks
// (daemon/shepherd.h): clone(CLONE_VM | CLONE_VFORK), so that no page table is copied and the
// shell resumes once the rank has exec'd. The rank stays in the shell's process group (the
// task's, which the agent signals and the shepherd cleans up), with default signal handling and
// an empty signal mask, whatever the shell set for itself, and bound to its CPUs when it has
// some (--cpu-bind: a rank that cannot be bound exits 1, saying why, rather than run unbound).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/result.h"

namespace trellis {

struct RankProcess {
  std::vector<std::string> argv;
  std::vector<std::string> env;         // "NAME=value", complete
  std::vector<std::string> candidates;  // the paths exec tries for argv[0], in order
  int stdout_fd = -1;  // dup2'd onto 1 and 2 when set (--label pipes); else inherited
  int stderr_fd = -1;
  int inherit_fd = -1;    // kept open across exec (PMI_FD); every other descriptor of the shell is
                          // close-on-exec
  std::string label;      // "trellis-shell: rank 3: " for messages on fd 2
  std::vector<int> cpus;  // its CPU affinity (host CPU ids) before exec; empty = the shell's
};

// The paths exec tries for `command`: itself when it holds a '/', else each directory of `path`
// (a PATH value) in turn, as execvp does.
std::vector<std::string> exec_candidates(const std::string& command, const std::string& path);

// Starts the rank; its pid once it has exec'd, or an error when it could not even be cloned. A
// command that cannot be run exits 127 (126: found but not executable) after saying why on its
// stderr, as a shell does.
Result<pid_t> start_rank(const RankProcess& rank);

}  // namespace trellis
