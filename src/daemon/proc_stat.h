// Reading /proc/PID/stat, for the agent's freezer (daemon/freezer.h) and its activity monitor
// (daemon/job_activity.h): the state, process group and CPU time of a task's processes and
// threads. Linux only.
//
// Every reader copes with processes that exit while it reads them: such a process is simply
// absent from the answer (kNotFound for a single one), never an exception.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace trellis {

// What /proc/PID/stat says about one process (or, read from /proc/PID/task/TID/stat, one thread).
struct ProcStat {
  pid_t pid = 0;  // field 1 (the thread id for a thread)
  // Field 3: 'R' running or runnable, 'S' sleeping, 'D' uninterruptible sleep (also a v1
  // cgroup-frozen task), 'T' stopped by a signal, 't' stopped by a tracer, 'Z' zombie, 'X'/'x'
  // dead, 'I' idle kernel thread, 'P' parked, 'W' waking.
  char state = '?';
  pid_t process_group = 0;  // field 5
  // utime + stime (fields 14 and 15) in clock ticks (sysconf(_SC_CLK_TCK), 100 a second on
  // Linux): for a process all its threads, those that ended included; for a thread its own.
  long long cpu_ticks = 0;
  long long start_time =
      0;             // field 22, clock ticks after boot: (pid, start_time) names one process
  int threads = 0;   // field 20
  pid_t parent = 0;  // field 4
  // Field 2, the command name without its parentheses: any bytes, at most 15 for user processes.
  std::string name;
};

// Parses the text of a stat file. The command name may hold spaces and parentheses, so it
// ends at the LAST ')'. An error names what is missing or malformed.
Result<ProcStat> parse_proc_stat(std::string_view text);

// /proc/PID/stat of a process (or of a thread, by its id; the CPU time is then the whole
// process's). kNotFound when there is no such process, or it exits while being read.
Result<ProcStat> read_proc_stat(pid_t pid);

// /proc/PID/stat kept open, to be read again and again (a gang switch reads the same processes'
// at every switch, and the open and its path look-up cost as much as the read). An open stat
// file stays bound to its process: once that process has gone, reading fails (kNotFound), also
// when its pid has been given to another process. -1 when there is no such process.
int open_proc_stat(pid_t pid);
// Reads an open_proc_stat() file afresh (from its start).
Result<ProcStat> read_open_proc_stat(int fd);

// The pids of the processes whose process group is `process_group`, ascending, zombies
// included (look at `state`). Scans all of /proc: a few hundred microseconds on a quiet host.
// Empty for a group <= 0 or one with no process left.
std::vector<pid_t> processes_in_group(pid_t process_group);

// Every thread of the process (/proc/PID/task/TID/stat), each with its own state and CPU time,
// ascending by thread id. Empty when the process does not exist; threads that end while they
// are listed are left out.
std::vector<ProcStat> read_thread_stats(pid_t pid);

}  // namespace trellis
