// What /proc says about a process, for daemons that must tell their own long-lived processes
// (munged, job shepherds) from strangers that happen to reuse a pid after a restart.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace trellis {

// True while `pid` exists and has not yet exited (a zombie, which cannot be signalled into doing
// anything, counts as exited).
bool process_running(pid_t pid);

// The process's start time in clock ticks since boot (/proc/PID/stat field 22), or -1 when it
// does not exist. A (pid, start time) pair names one process for the life of the machine.
long long process_start_time(pid_t pid);

// The arguments the process was started with (argv); empty when it does not exist.
std::vector<std::string> process_arguments(pid_t pid);

// The command line, arguments separated by spaces; "" when the process does not exist.
std::string process_command_line(pid_t pid);

}  // namespace trellis
