#include "daemon/shepherd.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <memory>

namespace trellis {
namespace {

// The stack run_job uses between clone and exec: a few frames of system calls.
constexpr size_t kJobStackBytes = 64 * 1024;

// Writes the decimal form of `value` into `out` (at least 24 bytes); returns its length.
size_t format_int(long long value, char* out) {
  char digits[24];
  size_t n = 0;
  bool negative = value < 0;
  unsigned long long v = negative ? 0ULL - static_cast<unsigned long long>(value)
                                  : static_cast<unsigned long long>(value);
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  size_t length = 0;
  if (negative) out[length++] = '-';
  while (n > 0) out[length++] = digits[--n];
  return length;
}

void write_all(int fd, const char* text, size_t length) {
  while (length > 0) {
    ssize_t n = ::write(fd, text, length);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text += n;
    length -= static_cast<size_t>(n);
  }
}

void write_text(int fd, const char* text) {
  write_all(fd, text, std::strlen(text));
}

// Writes "A B\n" to `path` through `temporary` and a rename, so a reader sees all or nothing.
void write_pair_file(const char* temporary, const char* path, long long a, long long b) {
  char text[64];
  size_t length = format_int(a, text);
  text[length++] = ' ';
  length += format_int(b, text + length);
  text[length++] = '\n';
  int fd = ::open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  write_all(fd, text, length);
  ::close(fd);
  ::rename(temporary, path);
}

void reset_signals() {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  for (int s = 1; s < NSIG; ++s) ::sigaction(s, &action, nullptr);  // SIGKILL/SIGSTOP: refused
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// The plan with the argument vectors exec wants (null-terminated), built before the job's fork.
struct Ready {
  const ShepherdPlan& plan;
  std::vector<char*> argv, env, candidates;
};

std::vector<char*> pointers(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// Writes "trellis-agent: task K: WHAT 'SUBJECT': REASON\n" to fd 2.
void report(const ShepherdPlan& p, const char* what, const char* subject, int error) {
  write_text(2, p.label.c_str());
  write_text(2, what);
  write_text(2, " '");
  write_text(2, subject);
  write_text(2, "': ");
  const char* reason = strerrordesc_np(error);
  write_text(2, reason ? reason : "unknown error");
  write_text(2, "\n");
}

// The job's process: new process group, the user, its files, its directory, then exec. It
// shares the shepherd's memory (see run_shepherd): system calls only, nothing that allocates.
[[noreturn]] void run_job(const Ready& ready) {
  const ShepherdPlan& p = ready.plan;
  ::setpgid(0, 0);
  reset_signals();
  ::close(3);  // the shepherd's pipe to its parent
  ::close(4);  // the exit-notice pipe
  if (p.switch_user) {
    if (::setgroups(p.groups.size(), p.groups.data()) != 0 || ::setgid(p.gid) != 0 ||
        ::setuid(p.uid) != 0) {
      int error = errno;
      // Not the user: the reason goes to the agent's log (fd 2) rather than create the
      // user's files as root.
      report(p, "cannot switch to the job's user for", ready.argv[0], error);
      ::_exit(127);
    }
  }
  int in = ::open("/dev/null", O_RDONLY);
  if (in >= 0 && in != 0) {
    ::dup2(in, 0);
    ::close(in);
  }
  int flags = O_WRONLY | O_CREAT | O_APPEND;
  int out = ::open(p.output.c_str(), flags, 0644);
  if (out < 0) {
    report(p, "cannot open output file", p.output.c_str(), errno);
    ::_exit(127);
  }
  int err = p.error == p.output ? out : ::open(p.error.c_str(), flags, 0644);
  if (err < 0) {
    report(p, "cannot open error file", p.error.c_str(), errno);
    ::_exit(127);
  }
  ::dup2(out, 1);
  ::dup2(err, 2);
  if (out > 2) ::close(out);
  if (err > 2 && err != out) ::close(err);
  if (::chdir(p.cwd.c_str()) != 0) {
    report(p, "cannot change to directory", p.cwd.c_str(), errno);
    ::_exit(127);
  }
  // Each candidate path in turn (argv[0] itself when it names a path): execvp's rule, but with
  // the job's PATH rather than the agent's.
  int error = ENOENT;
  for (char* const* candidate = ready.candidates.data(); *candidate != nullptr; ++candidate) {
    ::execve(*candidate, ready.argv.data(), ready.env.data());
    if (errno == EACCES || errno == ENOEXEC || error == ENOENT) error = errno;
  }
  report(p, "cannot run", ready.argv[0], error);
  ::_exit(error == EACCES || error == ENOEXEC ? 126 : 127);
}

// --- The plan as bytes: a count or length as 4 bytes, then that many bytes or items ------------

void put_u32(std::string& out, uint32_t value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}
void put_string(std::string& out, const std::string& s) {
  put_u32(out, static_cast<uint32_t>(s.size()));
  out += s;
}
void put_strings(std::string& out, const std::vector<std::string>& strings) {
  put_u32(out, static_cast<uint32_t>(strings.size()));
  for (const std::string& s : strings) put_string(out, s);
}

struct Reader {
  const std::string& bytes;
  size_t at = 0;
  bool ok = true;
  uint32_t u32() {
    uint32_t value = 0;
    if (bytes.size() - at < sizeof value) {
      ok = false;
      return 0;
    }
    std::memcpy(&value, bytes.data() + at, sizeof value);
    at += sizeof value;
    return value;
  }
  std::string string() {
    uint32_t length = u32();
    if (!ok || bytes.size() - at < length) {
      ok = false;
      return {};
    }
    std::string s = bytes.substr(at, length);
    at += length;
    return s;
  }
  std::vector<std::string> strings() {
    uint32_t count = u32();
    std::vector<std::string> out;
    for (uint32_t i = 0; ok && i < count; ++i) out.push_back(string());
    return out;
  }
};

}  // namespace

std::string encode_plan(const ShepherdPlan& p) {
  std::string out;
  put_string(out, p.label);
  put_strings(out, p.argv);
  put_strings(out, p.env);
  put_strings(out, p.candidates);
  put_string(out, p.cwd);
  put_string(out, p.output);
  put_string(out, p.error);
  put_u32(out, p.switch_user ? 1 : 0);
  put_u32(out, p.uid);
  put_u32(out, p.gid);
  put_u32(out, static_cast<uint32_t>(p.groups.size()));
  for (gid_t g : p.groups) put_u32(out, g);
  put_string(out, p.pid_file);
  put_string(out, p.exit_file);
  put_string(out, p.notice);
  put_u32(out, static_cast<uint32_t>(p.max_fd));
  return out;
}

Result<ShepherdPlan> decode_plan(const std::string& bytes) {
  Reader in{bytes};
  ShepherdPlan p;
  p.label = in.string();
  p.argv = in.strings();
  p.env = in.strings();
  p.candidates = in.strings();
  p.cwd = in.string();
  p.output = in.string();
  p.error = in.string();
  p.switch_user = in.u32() != 0;
  p.uid = in.u32();
  p.gid = in.u32();
  uint32_t groups = in.u32();
  for (uint32_t i = 0; in.ok && i < groups; ++i) p.groups.push_back(in.u32());
  p.pid_file = in.string();
  p.exit_file = in.string();
  p.notice = in.string();
  p.max_fd = static_cast<int>(in.u32());
  if (!in.ok || in.at != bytes.size()) return fail("shepherd plan: truncated or malformed");
  if (p.argv.empty() || p.candidates.empty()) return fail("shepherd plan: no command");
  return p;
}

[[noreturn]] void run_shepherd(const ShepherdPlan& p, int pid_pipe, int exit_notice) {
  reset_signals();
  ::signal(SIGPIPE, SIG_IGN);  // fd 2 is the agent's log, which may be gone
  ::setsid();
  // Shown by ps -o comm, so that a shepherd is not taken for an agent (it has the agent's
  // command line).
  ::prctl(PR_SET_NAME, "trellis-shep", 0, 0, 0);
  // The pid pipe becomes fd 3 and the notice pipe fd 4 (moved out of the way first, so that
  // neither dup2 overwrites the other).
  int pipe_fd = ::fcntl(pid_pipe, F_DUPFD, 10);
  int notice_fd = exit_notice >= 0 ? ::fcntl(exit_notice, F_DUPFD, 10) : -1;
  ::dup2(pipe_fd, 3);
  if (notice_fd >= 0) {
    ::dup2(notice_fd, 4);
  } else {
    ::close(4);
  }
  // Nothing of the agent's (its listening socket above all) may outlive it in here.
  if (::close_range(5, ~0U, 0) != 0) {
    for (int fd = 5; fd < p.max_fd; ++fd) ::close(fd);
  }
  int null = ::open("/dev/null", O_RDWR);
  if (null >= 0) {
    ::dup2(null, 0);
    ::dup2(null, 1);
    if (null > 2) ::close(null);
  }
  Ready ready{p, pointers(p.argv), pointers(p.env), pointers(p.candidates)};
  // The job's process shares the shepherd's memory until it execs (as vfork and posix_spawn
  // do), so no page table is copied; the shepherd waits meanwhile. run_job only makes system
  // calls, on a stack of its own.
  std::unique_ptr<char[]> stack(new char[kJobStackBytes]);  // not zeroed: nothing to clear
  pid_t job = ::clone([](void* argument) -> int { run_job(*static_cast<const Ready*>(argument)); },
                      stack.get() + kJobStackBytes, CLONE_VM | CLONE_VFORK | SIGCHLD, &ready);
  if (job < 0) {
    int error = errno;
    pid_t none = -1;
    write_all(3, reinterpret_cast<const char*>(&none), sizeof none);
    report(p, "cannot fork the job's process for", ready.argv[0], error);
    ::_exit(1);
  }
  ::setpgid(job, job);  // also done by the job: whichever runs first, the group exists now
  std::string pid_temporary = p.pid_file + ".tmp", exit_temporary = p.exit_file + ".tmp";
  write_pair_file(pid_temporary.c_str(), p.pid_file.c_str(), ::getpid(), job);
  write_all(3, reinterpret_cast<const char*>(&job), sizeof job);
  ::close(3);

  // Wait without reaping, so that the job's pid (its group's id) cannot be reused while the
  // group is cleaned up; then reap.
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(job), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
  }
  ::kill(-job, SIGKILL);  // whatever the command left behind in its group
  int status = 0;
  while (::waitpid(job, &status, 0) < 0 && errno == EINTR) {
  }
  int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
  int signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  write_pair_file(exit_temporary.c_str(), p.exit_file.c_str(), exit_code, signal);
  // Best effort: an agent that is gone, or whose pipe is full, finds the file by polling. Writes
  // up to PIPE_BUF bytes are atomic.
  if (exit_notice >= 0 && p.notice.size() <= PIPE_BUF)
    write_all(4, p.notice.data(), p.notice.size());
  ::_exit(0);
}

}  // namespace trellis
