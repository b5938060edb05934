#include "shell/rank_process.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>
#include <sstream>

#include "core/write_all.h"

namespace trellis {
namespace {

// Between clone and exec the child only makes system calls: a small stack is plenty.
constexpr size_t kStackBytes = 64 * 1024;

struct Prepared {
  const RankProcess& rank;
  std::vector<char*> argv, env, candidates;
  cpu_set_t cpus;  // the rank's affinity, when rank.cpus names any
};

std::vector<char*> pointers(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// The child runs on a small stack of its own between clone and exec. AddressSanitizer takes the
// jump to it for a stack switch and prints a warning into the child's stderr (the job's output
// file) when it calls a noreturn function; this function and the clone entry below are left
// uninstrumented, so a sanitizer build's jobs write only their own output.
[[noreturn]] __attribute__((no_sanitize_address)) void run_rank(const Prepared& p) {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  for (int s = 1; s < NSIG; ++s) ::sigaction(s, &action, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // The child has its own descriptor table (no CLONE_FILES): these changes are its alone.
  if (p.rank.stdout_fd >= 0) ::dup2(p.rank.stdout_fd, 1);
  if (p.rank.stderr_fd >= 0) ::dup2(p.rank.stderr_fd, 2);
  if (p.rank.inherit_fd >= 0) ::fcntl(p.rank.inherit_fd, F_SETFD, 0);
  if (!p.rank.cpus.empty() && ::sched_setaffinity(0, sizeof p.cpus, &p.cpus) != 0) {
    const char* reason = strerrordesc_np(errno);
    write_text(2, p.rank.label.c_str());
    write_text(2, "cannot bind to its CPUs: ");
    write_text(2, reason ? reason : "unknown error");
    write_text(2, "\n");
    ::_exit(1);
  }
  int error = ENOENT;
  for (char* const* candidate = p.candidates.data(); *candidate != nullptr; ++candidate) {
    ::execve(*candidate, p.argv.data(), p.env.data());
    if (errno == EACCES || errno == ENOEXEC || error == ENOENT) error = errno;
  }
  write_text(2, p.rank.label.c_str());
  write_text(2, "cannot run '");
  write_text(2, p.argv[0]);
  write_text(2, "': ");
  const char* reason = strerrordesc_np(error);
  write_text(2, reason ? reason : "unknown error");
  write_text(2, "\n");
  ::_exit(error == EACCES || error == ENOEXEC ? 126 : 127);
}

// clone's entry: the child's first frame on its own stack (see run_rank).
__attribute__((no_sanitize_address)) int rank_entry(void* argument) {
  run_rank(*static_cast<const Prepared*>(argument));
}

}  // namespace

std::vector<std::string> exec_candidates(const std::string& command, const std::string& path) {
  std::vector<std::string> out;
  if (command.find('/') != std::string::npos) {
    out.push_back(command);
    return out;
  }
  std::istringstream dirs(path.empty() ? "/usr/local/bin:/usr/bin:/bin" : path);
  for (std::string dir; std::getline(dirs, dir, ':');)
    out.push_back((dir.empty() ? "." : dir) + "/" + command);
  if (out.empty()) out.push_back(command);
  return out;
}

Result<pid_t> start_rank(const RankProcess& rank) {
  if (rank.argv.empty()) return fail("rank: no command");
  Prepared prepared{rank, pointers(rank.argv), pointers(rank.env), pointers(rank.candidates), {}};
  CPU_ZERO(&prepared.cpus);
  for (int cpu : rank.cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE)
      return fail("rank: CPU " + std::to_string(cpu) + " is beyond what affinity masks hold");
    CPU_SET(cpu, &prepared.cpus);
  }
  std::unique_ptr<char[]> stack(new char[kStackBytes]);
  pid_t pid =
      ::clone(rank_entry, stack.get() + kStackBytes, CLONE_VM | CLONE_VFORK | SIGCHLD, &prepared);
  if (pid < 0)
    return fail(Error::Code::kUnavailable,
                std::string("cannot start a rank: clone: ") + std::strerror(errno));
  return pid;
}

}  // namespace trellis
