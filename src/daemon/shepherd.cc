#include "daemon/shepherd.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <map>
#include <memory>

#include "core/write_all.h"

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

// Writes `values` as one line ("A B C\n") to `path` with one write(): a reader sees no file, an
// empty one or the whole line, and takes a line without its '\n' for none (TaskRunner reads them
// so). Written in place, not through a temporary file and a rename: each file created costs ext4
// an inode allocation that searches past the inodes of the files just removed, which made two of
// the four creations per task a tenth of the shepherd's CPU under a stream of short jobs.
void write_numbers_file(const char* path, std::initializer_list<long long> values) {
  char text[24 * 8];
  size_t length = 0;
  for (long long value : values) {
    if (length > 0) text[length++] = ' ';
    length += format_int(value, text + length);
  }
  text[length++] = '\n';
  int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  write_all(fd, text, length);
  ::close(fd);
}

long long microseconds(const struct timeval& t) {
  return static_cast<long long>(t.tv_sec) * 1000000 + t.tv_usec;
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
  bool in_cgroup = false;  // started inside the plan's cgroup already (clone3, below)
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
// shares the shepherd's memory until exec, or has a copy of it (see start_job): system calls
// only, nothing that
// allocates. The shepherd's own descriptors are all close-on-exec.
// Uninstrumented under AddressSanitizer, as its clone entry below: the child runs on a small stack
// of its own until exec, which ASan takes for a stack switch and warns about (into the job's
// output, once it is set up) when a noreturn function is called.
[[noreturn]] __attribute__((no_sanitize_address)) void run_job(const Ready& ready) {
  const ShepherdPlan& p = ready.plan;
  ::setpgid(0, 0);
  reset_signals();
  if (!p.cgroup_procs.empty() && !ready.in_cgroup) {
    // Before the user is switched (root may move itself) and before anything can fork.
    int cgroup = ::open(p.cgroup_procs.c_str(), O_WRONLY | O_CLOEXEC);
    if (cgroup < 0 || ::write(cgroup, "0", 1) != 1) {
      report(p, "cannot join the freezer cgroup", p.cgroup_procs.c_str(), errno);
      ::_exit(127);
    }
    ::close(cgroup);
  }
  for (const std::string& procs : p.limit_procs) {
    if (procs == p.cgroup_procs) continue;  // v2: the freezer's cgroup is the limits' one
    int cgroup = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
    if (cgroup < 0 || ::write(cgroup, "0", 1) != 1) {
      report(p, "cannot join the cgroup of its limits", procs.c_str(), errno);
      ::_exit(127);
    }
    ::close(cgroup);
  }
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
  put_string(out, p.cgroup_procs);
  put_strings(out, p.limit_procs);
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
  p.cgroup_procs = in.string();
  p.limit_procs = in.strings();
  if (!in.ok || in.at != bytes.size()) return fail("shepherd plan: truncated or malformed");
  if (p.argv.empty() || p.candidates.empty()) return fail("shepherd plan: no command");
  return p;
}

bool read_exactly(int fd, void* data, size_t length) {
  char* at = static_cast<char*>(data);
  while (length > 0) {
    ssize_t n = ::read(fd, at, length);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += n;
    length -= static_cast<size_t>(n);
  }
  return true;
}

bool write_exactly(int fd, const void* data, size_t length) {
  const char* at = static_cast<const char*>(data);
  while (length > 0) {
    ssize_t n = ::send(fd, at, length, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += n;
    length -= static_cast<size_t>(n);
  }
  return true;
}

namespace {

// clone's entry: the child's first frame on its own stack (see run_job).
__attribute__((no_sanitize_address)) int job_entry(void* argument) {
  run_job(*static_cast<const Ready*>(argument));
}

// What the shepherd remembers of a running job: where its end is recorded.
struct RunningJob {
  std::string exit_file, notice;
};

// The directory of a cgroup v2 `cgroup.procs` file, opened for clone3's CLONE_INTO_CGROUP; -1
// when the file is not in a cgroup v2 hierarchy (a v1 freezer's).
int cgroup_v2_directory(const std::string& procs) {
  const size_t slash = procs.rfind('/');
  if (slash == std::string::npos || slash == 0) return -1;
  const std::string directory = procs.substr(0, slash);
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct statfs info {};
  if (fd >= 0 && (::fstatfs(fd, &info) != 0 || info.f_type != CGROUP2_SUPER_MAGIC)) {
    ::close(fd);
    fd = -1;
  }
  return fd;
}

// Starts the plan's job. The pid, or -errno.
//
// A job whose cgroup is a cgroup v2 one is born in it: clone3(CLONE_INTO_CGROUP). A process that
// moves itself into a cgroup (a write to cgroup.procs) takes the kernel's
// cgroup_threadgroup_rwsem for writing, which waits for an RCU grace period whenever no other
// migration came just before: 15-17 ms on an idle host here, most of a short job's time from
// its launch to its end. Without CLONE_VM the child has a copy of this small static process's
// memory (a few page tables), so the shepherd need not wait for its exec: it answers and takes
// the next plan while the child execs on another CPU (a job that cannot exec says why in its
// error file and exits 127 either way).
// Otherwise clone(CLONE_VM | CLONE_VFORK) shares the memory and returns once the child has
// exec'd (or exited, when it could not).
pid_t start_job(const ShepherdPlan& plan) {
  Ready ready{plan, pointers(plan.argv), pointers(plan.env), pointers(plan.candidates)};
  if (!plan.cgroup_procs.empty()) {
    if (int cgroup = cgroup_v2_directory(plan.cgroup_procs); cgroup >= 0) {
      struct clone_args args {};
      args.flags = CLONE_INTO_CGROUP;
      args.exit_signal = SIGCHLD;
      args.cgroup = static_cast<uint64_t>(cgroup);
      long job = ::syscall(SYS_clone3, &args, sizeof args);
      if (job == 0) {
        ready.in_cgroup = true;
        run_job(ready);
      }
      const int error = errno;
      ::close(cgroup);
      if (job > 0) return static_cast<pid_t>(job);
      // A kernel before 5.7 (no clone3 or no CLONE_INTO_CGROUP) joins by the write instead.
      if (error != ENOSYS && error != EINVAL && error != E2BIG) return -error;
    }
  }
  std::unique_ptr<char[]> stack(new char[kJobStackBytes]);  // not zeroed: nothing to clear
  pid_t job =
      ::clone(job_entry, stack.get() + kJobStackBytes, CLONE_VM | CLONE_VFORK | SIGCHLD, &ready);
  return job < 0 ? -errno : job;
}

// Reaps every ended child: first kills what it left in its process group (waiting without
// reaping, so that the group's id cannot be reused meanwhile), then records its status.
void reap(std::map<pid_t, RunningJob>& running, int exit_notice) {
  for (;;) {
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) return;
    pid_t pid = info.si_pid;
    ::kill(-pid, SIGKILL);
    int status = 0;
    // Its usage: its own and that of the descendants it waited for (a job shell's ranks, a
    // script's commands); ru_maxrss is the largest one's peak, in KiB.
    struct rusage usage {};
    while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
    }
    auto job = running.find(pid);
    if (job == running.end()) continue;
    int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    int signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    write_numbers_file(job->second.exit_file.c_str(),
                       {exit_code, signal, microseconds(usage.ru_utime),
                        microseconds(usage.ru_stime), usage.ru_maxrss});
    // Best effort: an agent that is gone, or whose pipe is full, finds the file by polling.
    // Writes up to PIPE_BUF bytes are atomic.
    const std::string& notice = job->second.notice;
    if (exit_notice >= 0 && notice.size() <= PIPE_BUF)
      write_all(exit_notice, notice.data(), notice.size());
    running.erase(job);
  }
}

// Answers one plan: starts its job and records it.
ShepherdReply serve_plan(const std::string& bytes, std::map<pid_t, RunningJob>& running) {
  Result<ShepherdPlan> plan = decode_plan(bytes);
  if (!plan) return {0, 0, EINVAL};
  pid_t job = start_job(*plan);
  if (job < 0) return {0, 0, -job};
  ::setpgid(job, job);  // also done by the job: whichever runs first, the group exists now
  write_numbers_file(plan->pid_file.c_str(), {::getpid(), job});
  running[job] = {plan->exit_file, plan->notice};
  return {::getpid(), job, 0};
}

}  // namespace

void serve_shepherd(int socket, int exit_notice) {
  ::setsid();  // not the agent's session: its terminal's signals are not ours
  struct sigaction action {};
  sigemptyset(&action.sa_mask);
  for (int s = 1; s < NSIG; ++s) {
    action.sa_handler = s == SIGPIPE ? SIG_IGN : SIG_DFL;
    ::sigaction(s, &action, nullptr);
  }
  // Children's ends arrive on a signalfd, in the same poll as the agent's plans.
  sigset_t child;
  sigemptyset(&child);
  sigaddset(&child, SIGCHLD);
  ::sigprocmask(SIG_SETMASK, &child, nullptr);
  int children = ::signalfd(-1, &child, SFD_CLOEXEC | SFD_NONBLOCK);
  if (children < 0) ::_exit(1);
  for (int fd : {socket, exit_notice})
    if (fd >= 0) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  std::map<pid_t, RunningJob> running;
  bool agent = true;
  for (;;) {
    if (!agent && running.empty()) ::_exit(0);
    struct pollfd ready[2] = {{children, POLLIN, 0}, {agent ? socket : -1, POLLIN, 0}};
    if (::poll(ready, 2, -1) < 0) continue;  // EINTR
    if (ready[0].revents != 0) {
      struct signalfd_siginfo info;
      while (::read(children, &info, sizeof info) > 0) {
      }
      reap(running, exit_notice);
    }
    if (agent && ready[1].revents != 0) {
      uint32_t length = 0;
      std::string bytes;
      bool ok = read_exactly(socket, &length, sizeof length) && length <= kMaxPlanBytes;
      if (ok) {
        bytes.resize(length);
        ok = read_exactly(socket, bytes.data(), length);
      }
      ShepherdReply reply;
      if (ok) reply = serve_plan(bytes, running);
      if (!ok || !write_exactly(socket, &reply, sizeof reply)) {
        // The agent is gone: no more plans, but the running jobs are still ours to record.
        ::close(socket);
        agent = false;
      }
    }
  }
}
}  // namespace trellis
