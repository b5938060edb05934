#include "daemon/detached_process.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace trellis {

Result<pid_t> start_detached(const std::vector<std::string>& argv, const std::string& log,
                             const std::string& pid_file, const std::string& netns) {
  if (argv.empty()) return fail("start_detached: no program");
  int netns_fd = -1;
  if (!netns.empty()) {
    netns_fd = open(netns.c_str(), O_RDONLY | O_CLOEXEC);
    if (netns_fd < 0)
      return fail(Error::Code::kUnavailable,
                  "network namespace " + netns + ": " + std::strerror(errno));
  }
  static constexpr char kNoNetns[] = "start_detached: cannot enter the network namespace\n";
  // Everything the child needs is prepared before fork: only async-signal-safe calls after it.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    if (netns_fd >= 0) close(netns_fd);
    return fail(Error::Code::kUnavailable, "fork failed");
  }
  if (pid == 0) {
    setsid();
    int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    int in = open("/dev/null", O_RDONLY);
    if (out >= 0) {
      dup2(out, STDOUT_FILENO);
      dup2(out, STDERR_FILENO);
    }
    if (in >= 0) dup2(in, STDIN_FILENO);
    if (netns_fd >= 0 && setns(netns_fd, CLONE_NEWNET) != 0) {
      ssize_t ignored = write(STDERR_FILENO, kNoNetns, sizeof kNoNetns - 1);
      (void)ignored;
      _exit(126);
    }
    execv(args[0], args.data());
    _exit(127);
  }
  if (netns_fd >= 0) close(netns_fd);
  std::ofstream(pid_file) << pid << "\n";
  return pid;
}

}  // namespace trellis
