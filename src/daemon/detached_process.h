// Starting a daemon detached from its starter, as `trellis cluster up` starts trellisd and the
// agents and as the chaos run restarts the ones it killed: a session of its own (a terminal's
// signals and the starter's exit do not reach it), stdin from /dev/null, stdout and stderr
// appended to a log, and its pid written to a file that `cluster down` stops it by.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/result.h"

namespace trellis {

// Starts argv (argv[0] a path) and writes its pid to `pid_file`. The process is the caller's
// child: the caller reaps it (waitpid) or exits and leaves that to init. An error only when fork
// fails or `netns` cannot be opened; a program that cannot be executed exits 127 with nothing in
// its log.
// `netns`, when not empty, is a network namespace's file (/run/netns/NAME, see
// daemon/host_network.h) that the process enters before it executes the program: it then runs as
// on another host. One it cannot enter makes it exit 126 with the reason in its log.
Result<pid_t> start_detached(const std::vector<std::string>& argv, const std::string& log,
                             const std::string& pid_file, const std::string& netns = "");

}  // namespace trellis
