#include "daemon/detached_process.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>

namespace trellis {

Result<pid_t> start_detached(const std::vector<std::string>& argv, const std::string& log,
                             const std::string& pid_file) {
  if (argv.empty()) return fail("start_detached: no program");
  // Everything the child needs is prepared before fork: only async-signal-safe calls after it.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return fail(Error::Code::kUnavailable, "fork failed");
  if (pid == 0) {
    setsid();
    int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    int in = open("/dev/null", O_RDONLY);
    if (out >= 0) {
      dup2(out, STDOUT_FILENO);
      dup2(out, STDERR_FILENO);
    }
    if (in >= 0) dup2(in, STDIN_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  std::ofstream(pid_file) << pid << "\n";
  return pid;
}

}  // namespace trellis
