#include "daemon/shepherd_spawner.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <string>

namespace trellis {
namespace {

// A plan larger than this is refused (an environment of this size is a mistake, not a job).
constexpr uint32_t kMaxPlanBytes = 16u << 20;

// The spawner's answer to one plan.
struct Reply {
  int32_t shepherd = 0;
  int32_t job = 0;
  int32_t error = 0;  // errno of the failure, 0 when started
};

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

// Closes every descriptor from 3 up except `keep_a` and `keep_b`.
void close_all_but(int keep_a, int keep_b) {
  int low = std::min(keep_a, keep_b), high = std::max(keep_a, keep_b);
  auto close_between = [](int first, int last) {  // inclusive; last < 0 = to the end
    if (last >= 0 && first > last) return;
    ::close_range(static_cast<unsigned>(first), last < 0 ? ~0U : static_cast<unsigned>(last), 0);
  };
  int from = 3;
  for (int keep : {low, high}) {
    if (keep < from) continue;
    close_between(from, keep - 1);
    from = keep + 1;
  }
  close_between(from, -1);
}

// Starts one shepherd; the reply says how.
Reply start_shepherd(const std::string& bytes, int socket, int exit_notice) {
  Result<ShepherdPlan> plan = decode_plan(bytes);
  if (!plan) return {0, 0, EINVAL};
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {0, 0, errno};
  pid_t shepherd = ::fork();
  if (shepherd == 0) {
    ::close(socket);
    ::close(fds[0]);
    run_shepherd(*plan, fds[1], exit_notice);
  }
  int fork_error = errno;
  ::close(fds[1]);
  if (shepherd < 0) {
    ::close(fds[0]);
    return {0, 0, fork_error};
  }
  pid_t job = -1;
  bool told = read_exactly(fds[0], &job, sizeof job);
  ::close(fds[0]);
  if (!told || job <= 0) return {shepherd, 0, EAGAIN};
  return {shepherd, job, 0};
}

}  // namespace

void serve_spawner(int socket, int exit_notice) {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction action {};
  sigemptyset(&action.sa_mask);
  for (int s = 1; s < NSIG; ++s) {
    action.sa_handler = s == SIGCHLD || s == SIGPIPE ? SIG_IGN : SIG_DFL;
    ::sigaction(s, &action, nullptr);  // SIGCHLD ignored: exited shepherds are reaped by the kernel
  }
  close_all_but(socket, exit_notice);
  for (;;) {
    uint32_t length = 0;
    if (!read_exactly(socket, &length, sizeof length) || length > kMaxPlanBytes) ::_exit(0);
    std::string bytes(length, '\0');
    if (!read_exactly(socket, bytes.data(), length)) ::_exit(0);
    Reply reply = start_shepherd(bytes, socket, exit_notice);
    if (!write_exactly(socket, &reply, sizeof reply)) ::_exit(0);
  }
}

Result<std::unique_ptr<ShepherdSpawner>> ShepherdSpawner::start(std::string binary,
                                                                int exit_notice) {
  std::unique_ptr<ShepherdSpawner> spawner(new ShepherdSpawner(std::move(binary), exit_notice));
  std::lock_guard lock(spawner->mutex_);
  if (Status ok = spawner->start_helper(); !ok) return ok.error();
  return spawner;
}

std::string ShepherdSpawner::default_binary() {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return "trellis-spawner";
  std::string path(self, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/') + 1) + "trellis-spawner";
}

ShepherdSpawner::~ShepherdSpawner() {
  std::lock_guard lock(mutex_);
  stop_helper();
}

Status ShepherdSpawner::start_helper() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    return fail(Error::Code::kUnavailable, std::string("socketpair: ") + std::strerror(errno));
  // The helper's end becomes its fd 3 and the notice pipe its fd 4 (dup2 clears close-on-exec).
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 3);
  if (exit_notice_ >= 0) posix_spawn_file_actions_adddup2(&actions, exit_notice_, 4);
  std::string arg0 = "trellis-spawner", socket_arg = "3", notice_arg = exit_notice_ >= 0 ? "4" : "";
  char* argv[] = {arg0.data(), socket_arg.data(), exit_notice_ >= 0 ? notice_arg.data() : nullptr,
                  nullptr};
  char* no_env[] = {nullptr};
  pid_t pid = 0;
  int error = ::posix_spawn(&pid, binary_.c_str(), &actions, nullptr, argv, no_env);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (error != 0) {
    ::close(fds[0]);
    return fail(Error::Code::kUnavailable,
                "cannot start " + binary_ + ": " + std::string(std::strerror(error)));
  }
  socket_ = fds[0];
  pid_ = pid;
  return Ok{};
}

void ShepherdSpawner::stop_helper() {
  if (socket_ >= 0) ::close(socket_);
  socket_ = -1;
  if (pid_ > 0) {
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = 0;
}

pid_t ShepherdSpawner::helper_pid() {
  std::lock_guard lock(mutex_);
  return pid_;
}

Result<ShepherdSpawner::Started> ShepherdSpawner::spawn(const ShepherdPlan& plan) {
  std::string bytes = encode_plan(plan);
  if (bytes.size() > kMaxPlanBytes)
    return fail("the job's command line and environment exceed 16 MiB");
  uint32_t length = static_cast<uint32_t>(bytes.size());
  std::lock_guard lock(mutex_);
  // A helper that died (killed by hand, out of memory) is replaced once per call.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (socket_ < 0) {
      if (Status ok = start_helper(); !ok) return ok.error();
    }
    Reply reply;
    if (write_exactly(socket_, &length, sizeof length) &&
        write_exactly(socket_, bytes.data(), bytes.size()) &&
        read_exactly(socket_, &reply, sizeof reply)) {
      if (reply.error != 0) {
        return fail(Error::Code::kUnavailable,
                    "cannot start the shepherd: " + std::string(std::strerror(reply.error)));
      }
      return Started{reply.shepherd, reply.job};
    }
    stop_helper();
  }
  return fail(Error::Code::kUnavailable, binary_ + " stopped answering");
}

}  // namespace trellis
