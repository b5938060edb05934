// trellis-shell: the job shell, one per (job, attempt, step, node); see shell/shell.h. The agent's
// shepherd starts it as the node's task with the arguments shell/shell_options.h describes.
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "shell/shell.h"

int main(int argc, char** argv) {
  std::vector<std::string> arguments(argv + 1, argv + argc);
  trellis::Result<trellis::ShellOptions> options = trellis::parse_shell_options(arguments);
  if (!options) {
    std::fprintf(stderr, "%s\n", options.error().message.c_str());
    return 2;
  }
  trellis::ShellEnd end = trellis::run_shell(*options);
  if (end.signal != 0) {
    // The step ended by a signal on this node: the task ends the same way, without a core dump
    // of the shell.
    struct rlimit none {};
    ::setrlimit(RLIMIT_CORE, &none);
    ::signal(end.signal, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, end.signal);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::raise(end.signal);
    return 128 + end.signal;  // a signal that does not end a process
  }
  return end.exit_code;
}
