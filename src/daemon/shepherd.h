// The shepherd: the process that stands between an agent and one task of a job (SCore-D's
// per-node parent of every job process, seed 002). It runs in a session of its own, so it
// outlives the agent; forks the job's command into a new process group (so that a cancel reaches
// every process the job started); tells its parent the job's pid; waits; kills whatever the
// command left behind in its group; and writes the exit status to a file. It then says so on
// the exit-notice pipe, if it was given one, so that the agent need not poll for it.
//
// Everything here runs between fork and exec: ShepherdPlan is prepared beforehand so that the
// shepherd and the job allocate nothing and call only async-signal-safe functions.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/result.h"

namespace trellis {

struct ShepherdPlan {
  std::string label;  // "trellis-agent: task JOB.ATTEMPT.NODE: " for messages on fd 2
  std::vector<std::string> argv;
  std::vector<std::string> env;         // "NAME=value", complete
  std::vector<std::string> candidates;  // the paths exec tries for argv[0], in order
  std::string cwd, output, error;       // absolute paths
  bool switch_user = false;             // become uid/gid/groups (the agent runs as root)
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  std::string pid_file;   // "SHEPHERD_PID JOB_PID", written before the shepherd reports
  std::string exit_file;  // "EXIT_CODE SIGNAL", written when the job has ended
  std::string notice;     // written to the exit-notice pipe after the exit file (one line)
  int max_fd = 1024;      // where closing inherited descriptors stops without close_range
};

// A plan as bytes and back, for the spawner's socket (daemon/shepherd_spawner.h).
std::string encode_plan(const ShepherdPlan& plan);
Result<ShepherdPlan> decode_plan(const std::string& bytes);

// The shepherd's body, in a freshly forked child. `pid_pipe` receives the job's pid (a pid_t;
// -1 when the job could not be forked). `exit_notice` (-1 = none) is the write end of a pipe that
// gets the plan's notice once the status is written (one write, so that notices of shepherds
// ending together never interleave). Never returns.
[[noreturn]] void run_shepherd(const ShepherdPlan& plan, int pid_pipe, int exit_notice);

}  // namespace trellis
