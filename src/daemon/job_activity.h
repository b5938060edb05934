// Seed 002's global state detection, on the node agent's side: at each gang switch, with the
// outgoing job's processes on this node frozen, what were they doing? Running; all waiting for
// input from outside the job (the job is idle: its slot can go to another job); or all waiting
// for messages from each other (if so on every node, the job is deadlocked).
//
// Two sources, per process:
//   - its announcements in the task's runtime area (include/trellis/runtime.h): a process that
//     has an open wait is judged by it, whatever /proc says. The runtime's ordering rule (begin
//     before blocking, end after waking) makes this exact for a frozen process.
//   - /proc, for a process that announces nothing (not attached, or no wait open): idle (counted
//     as waiting for input) when it used no CPU time since this monitor's previous sample of the
//     task and none of its threads is runnable; running otherwise. Frozen processes show 'T'
//     (SIGSTOP) or 'S'/'D' (cgroup freezer), so the thread states cannot tell frozen from
//     blocked: for frozen processes the CPU-time delta is the whole test. Its resolution is a
//     clock tick (10 ms): a process that used less than that in a time slice may count as idle.
//     /proc cannot tell a wait for a message from a wait for input.
//
//   ActivityMonitor monitor;                                   // one per agent
//   std::string area = runtime_area_name(12, 1, "n3");        // TRELLIS_RUNTIME_AREA at launch
//   ... at the end of each of the task's time slices, right after freezing it:
//   TaskActivity a = monitor.sample("12.1.n3", process_group, area);
//   ... when the task has ended:
//   monitor.forget("12.1.n3");
//   remove_runtime_area(area);
//
// Sample a task once per time slice in which it ran, right after it is frozen: a sample covers
// what happened since the previous one, so a second sample while the task stayed frozen finds
// every process that announces nothing idle (none of them could run).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/result.h"
#include "daemon/absent_names.h"
#include "daemon/proc_stat.h"

namespace trellis {

// What one task's processes were doing when sampled, and the CPU time they used since the
// previous sample. processes == running + waiting_input + waiting_message.
struct TaskActivity {
  int processes = 0;          // live processes of the task (zombies are not counted)
  int running = 0;            // announcing no wait, and not idle per /proc
  int waiting_input = 0;      // announced a wait for input, or idle per /proc
  int waiting_message = 0;    // announced a wait for a message of its job (runtime area only)
                              // (a process with waits of both kinds open waits for input)
  bool from_runtime = false;  // at least one process is registered in the runtime area
  // CPU time the processes used since the previous sample (a process seen for the first time:
  // since it started), in clock ticks.
  long long cpu_ticks = 0;

  // Nothing runs and at least one process waits for input: the task waits for the outside.
  bool idle() const { return processes > 0 && running == 0 && waiting_input > 0; }
  // Every process waits for a message from another process of the job.
  bool waiting_for_messages() const { return processes > 0 && waiting_message == processes; }
};

// A job's state from the samples of all its tasks at one switch (tasks with no process, ended
// or not yet started, are left out):
//   kRunning  some process runs (or no task has a process: nothing to conclude)
//   kStopped  every process on every node waits for a message: no process can wake another.
//             A message still in flight (sent, not yet received) looks the same, so confirm
//             before acting: e.g. kStopped again at the next switch with no CPU time used.
//   kIdle     nothing runs and some process waits for input from outside the job
enum class GlobalState { kRunning, kIdle, kStopped };
GlobalState global_state(const std::vector<TaskActivity>& tasks);

// Samples tasks' processes. Thread-safe.
class ActivityMonitor {
 public:
  // Samples the processes of the task whose process group is `process_group`, reading the
  // runtime area `area_name` ("" = none) if it exists (a missing or malformed area is ignored:
  // every process is then judged from /proc). `task` names the task for the CPU times kept
  // until the next sample (e.g. TaskKey::name()). A process seen for the first time counts as
  // running unless it announces a wait.
  TaskActivity sample(const std::string& task, pid_t process_group, const std::string& area_name);
  // The same for an explicit list of pids (e.g. a freezer cgroup's cgroup.procs, which also
  // holds processes that left the task's process group). Pids that do not exist are skipped.
  TaskActivity sample(const std::string& task, const std::vector<pid_t>& pids,
                      const std::string& area_name);
  // The same for processes whose /proc/PID/stat the caller has just read (a gang switch reads
  // each once, to sort the cgroup's processes by task).
  TaskActivity sample(const std::string& task, std::vector<ProcStat> stats,
                      const std::string& area_name);

  // Drops what is kept about the task (once it has ended).
  void forget(const std::string& task);

 private:
  struct Seen {
    long long start_time = 0;
    long long cpu_ticks = 0;
  };
  std::mutex mutex_;
  std::map<std::string, std::map<pid_t, Seen>> seen_;  // task -> pid -> at the last sample
  // The runtime areas found missing, until a shared-memory segment is created on this host: a
  // task that never makes one costs no failed open per sample (daemon/absent_names.h).
  AbsentNames absent_areas_{"/dev/shm"};
};

// The runtime area's name for a task: "/trellis-JOB.ATTEMPT.NODE", a valid POSIX shared-memory
// name. Node characters other than letters, digits, '.' and '-' are written "_XX" (hex), so
// different nodes get different names; a very long node name is shortened with a hash of it.
std::string runtime_area_name(int64_t job, int attempt, const std::string& node);

// Removes the area (shm_unlink); one that does not exist is not an error. Processes that still
// have it mapped keep it until they exit, but it no longer has a name.
Status remove_runtime_area(const std::string& name);

// One registered process as read from a runtime area.
struct RuntimeSlot {
  pid_t pid = 0;
  long long start_time = 0;  // 0 = unknown
  int message_waits = 0;     // open waits of each kind (clamped at 0)
  int input_waits = 0;
};

// A copy of a runtime area's registered processes.
struct RuntimeArea {
  uid_t owner = 0;                 // the segment's owner: only processes of this user are believed
  std::vector<RuntimeSlot> slots;  // the slots in use, in table order
};

// Reads the area with one read(2) into memory of ours (never mapped: a job that shrinks its
// segment cannot make the agent fault). kNotFound when there is no such segment;
// kInvalidArgument when it is not a runtime area of this version (not a regular file, another
// size, magic, version or slot geometry); kUnavailable when it cannot be opened or read.
Result<RuntimeArea> read_runtime_area(const std::string& name);

}  // namespace trellis
