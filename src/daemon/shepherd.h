// The shepherd: `trellis-shepherd`, one small single-threaded process per agent that is the
// parent of every job process the agent starts (seed 002's SCore-D node daemon, which parents
// every job process of its node). The agent hands it a plan per task over a socket; it starts
// the task's process in a new process group, and when that process ends it kills whatever the
// command left behind in its group, writes the exit status to the task's exit file and says so
// on the exit-notice pipe, so that the agent need not poll for it.
//
// Why a separate process: the agent has gRPC's threads and memory, and fork() of such a process
// write-protects all of it, so that every thread then takes copy-on-write faults, each with a
// TLB shootdown on every CPU running one of them; measured on `trellis bench live`, that was
// most of the agent's CPU. The shepherd starts a job with clone(CLONE_VM | CLONE_VFORK), as
// posix_spawn does: no page table is copied, and the child only makes system calls until exec.
// One process for all tasks (rather than one shepherd process per task) halves the processes
// created per job, which bounds how many jobs a node can start per second.
//
// Lifetime: it runs in a session of its own, so a signal to the agent's terminal does not reach
// it. When the agent goes away (the socket closes) it stops taking plans but keeps reaping and
// recording its jobs until none is left, then exits; a restarted agent starts a new shepherd and
// adopts the old tasks from their files. A shepherd killed by hand loses the statuses of its
// running jobs: the agent then kills their process groups and reports them lost (exit 255).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace trellis {

// What to start for one task, prepared by the agent (everything resolved: paths absolute, the
// user's groups looked up) so that the job's process only makes system calls.
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
  std::string pid_file;  // "SHEPHERD_PID JOB_PID", written once the job's process runs
  // "EXIT_CODE SIGNAL USER_USEC SYSTEM_USEC MAX_RSS_KB", written when the job has ended: its
  // status, and the CPU time and largest peak resident set of it and the descendants it waited
  // for (wait4's rusage).
  std::string exit_file;
  std::string notice;  // written to the exit-notice pipe after the exit file (one line)
  // The job's process writes "0" here first, joining the task's freezer cgroup before it can
  // fork (daemon/freezer.h), so that every process of the task is in it; "" = none (the freezer
  // stops the process group with signals).
  std::string cgroup_procs;
  // Then the files of the cgroups that hold it to its grant (daemon/resource_limits.h: v1's
  // cpuset, memory and devices `tasks`), joined the same way; empty = no limits.
  std::vector<std::string> limit_procs;
};

// A plan as bytes and back, for the socket.
std::string encode_plan(const ShepherdPlan& plan);
Result<ShepherdPlan> decode_plan(const std::string& bytes);

// The protocol: the agent sends a plan as its length (4 bytes, native order) and encode_plan's
// bytes; the shepherd answers with a ShepherdReply once the job's process has exec'd (or
// failed to start).
struct ShepherdReply {
  int32_t shepherd = 0;  // the shepherd's pid, which the agent watches
  int32_t job = 0;       // the job's pid, also its process group
  int32_t error = 0;     // errno of the failure, 0 when started
};
constexpr uint32_t kMaxPlanBytes = 16u << 20;  // larger plans are refused
bool read_exactly(int fd, void* data, size_t length);
bool write_exactly(int fd, const void* data, size_t length);  // never raises SIGPIPE

// The shepherd's whole life (trellis-shepherd's main): plans from `socket`, exits recorded,
// notices to `exit_notice` (-1 = none), as described above.
[[noreturn]] void serve_shepherd(int socket, int exit_notice);

}  // namespace trellis
