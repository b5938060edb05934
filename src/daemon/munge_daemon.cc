#include "daemon/munge_daemon.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include "daemon/auth.h"
#include "daemon/process.h"

extern char** environ;

namespace trellis {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kMunged = "/usr/sbin/munged";
constexpr auto kStartTimeout = std::chrono::seconds(20);
constexpr auto kStopTimeout = std::chrono::seconds(10);

std::string key_path(const std::string& dir) {
  return dir + "/munge.key";
}
std::string pid_path(const std::string& dir) {
  return dir + "/munged.pid";
}
std::string log_path(const std::string& dir) {
  return dir + "/munged.log";
}
std::string seed_path(const std::string& dir) {
  return dir + "/munged.seed";
}
std::string stderr_path(const std::string& dir) {
  return dir + "/munged.stderr";
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The pid in `dir`'s pid file when that process is running munged on `dir`'s socket; else -1.
pid_t running_munged(const std::string& dir) {
  std::string text = read_text(pid_path(dir));
  pid_t pid = static_cast<pid_t>(std::atol(text.c_str()));
  if (pid <= 0 || !process_running(pid)) return -1;
  std::string command = process_command_line(pid);
  if (command.find("--socket=" + MungeDaemon::socket_path(dir)) == std::string::npos) return -1;
  return pid;
}

// Writes a fresh key unless one exists; munged refuses keys that others can read.
Status ensure_key(const std::string& dir) {
  std::string path = key_path(dir);
  if (fs::exists(path)) return Ok{};
  std::vector<char> key(1024);
  int random = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (random < 0)
    return fail(Error::Code::kInternal, "munge: cannot open /dev/urandom: " + errno_text());
  size_t have = 0;
  while (have < key.size()) {
    ssize_t n = ::read(random, key.data() + have, key.size() - have);
    if (n <= 0 && errno != EINTR) break;
    if (n > 0) have += static_cast<size_t>(n);
  }
  ::close(random);
  if (have < key.size()) return fail(Error::Code::kInternal, "munge: short read from /dev/urandom");
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
  if (fd < 0)
    return fail(Error::Code::kInternal, "munge: cannot create " + path + ": " + errno_text());
  bool written = ::write(fd, key.data(), key.size()) == static_cast<ssize_t>(key.size());
  ::close(fd);
  if (!written) return fail(Error::Code::kInternal, "munge: cannot write " + path);
  return Ok{};
}

// Runs munged, which forks into the background and exits 0 once its socket is ready; returns
// munged's own message when it refuses to start.
Status spawn_munged(const std::string& dir) {
  std::vector<std::string> args = {kMunged,
                                   "--force",  // reuse a socket left by a munged killed with -9
                                   "--socket=" + MungeDaemon::socket_path(dir),
                                   "--key-file=" + key_path(dir),
                                   "--pid-file=" + pid_path(dir),
                                   "--log-file=" + log_path(dir),
                                   "--seed-file=" + seed_path(dir)};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  std::string errors = stderr_path(dir);
  posix_spawn_file_actions_addopen(&actions, 1, errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t child = -1;
  int err = posix_spawn(&child, kMunged, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) {
    return fail(Error::Code::kUnavailable,
                std::string("munge: cannot run ") + kMunged + ": " + std::strerror(err));
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string why = read_text(errors);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return fail(Error::Code::kUnavailable, "munge: munged for " + dir + " did not start: " +
                                               (why.empty() ? "no message" : why));
  }
  return Ok{};
}

// Waits until munged in `dir` hands out credentials.
Status wait_until_serving(const std::string& dir) {
  CredentialSource credentials(MungeDaemon::socket_path(dir));
  Clock::time_point give_up = Clock::now() + kStartTimeout;
  while (true) {
    Result<std::string> credential = credentials.encode();
    if (credential) return Ok{};
    if (Clock::now() > give_up) return credential.error();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Connects to `socket` and hangs up. munged notes SIGTERM in whichever thread takes it but
// checks the note only when its accept() returns, so a signal that lands in a worker thread
// is acted on at the next connection: this is that connection.
void poke(const std::string& socket) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket.size() < sizeof address.sun_path) {
    std::memcpy(address.sun_path, socket.c_str(), socket.size() + 1);
    (void)::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  }
  ::close(fd);
}

// Waits up to `timeout` for `pid` to exit, waking munged on `socket` now and then.
bool wait_gone(pid_t pid, const std::string& socket, Clock::duration timeout) {
  Clock::time_point give_up = Clock::now() + timeout;
  for (int round = 0; process_running(pid); ++round) {
    if (Clock::now() > give_up) return false;
    if (round % 10 == 0) poke(socket);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace

std::string MungeDaemon::socket_path(const std::string& dir) {
  return dir + "/munge.socket";
}

Result<MungeDaemon> MungeDaemon::start(const std::string& dir_arg, Mode mode) {
  std::error_code ec;
  std::string dir = fs::absolute(dir_arg, ec).lexically_normal().string();
  if (ec) return fail("munge: bad directory " + dir_arg + ": " + ec.message());
  fs::create_directories(dir, ec);
  if (ec)
    return fail(Error::Code::kUnavailable, "munge: cannot create " + dir + ": " + ec.message());
  // munged checks that everyone may reach its socket.
  if (::chmod(dir.c_str(), 0755) != 0)
    return fail(Error::Code::kUnavailable, "munge: cannot chmod " + dir + ": " + errno_text());

  if (pid_t running = running_munged(dir); running > 0) {
    if (mode == Mode::kOwned) {
      return fail(Error::Code::kUnavailable,
                  "munge: a munged (pid " + std::to_string(running) + ") already serves " + dir);
    }
    if (Status serving = wait_until_serving(dir); !serving) return serving.error();
    return MungeDaemon(dir, running, mode);
  }
  if (Status key = ensure_key(dir); !key) return key.error();
  if (Status spawned = spawn_munged(dir); !spawned) return spawned.error();
  pid_t pid = running_munged(dir);
  if (pid <= 0) {
    return fail(Error::Code::kUnavailable,
                "munge: munged started but " + pid_path(dir) + " names no running munged");
  }
  // Owned until it serves, so that a failure from here on stops what was started.
  MungeDaemon daemon(dir, pid, Mode::kOwned);
  if (Status serving = wait_until_serving(dir); !serving) return serving.error();
  daemon.mode_ = mode;
  return daemon;
}

Status MungeDaemon::stop(const std::string& dir_arg) {
  std::error_code ec;
  std::string dir = fs::absolute(dir_arg, ec).lexically_normal().string();
  return stop_pid(running_munged(dir), dir);
}

Status MungeDaemon::stop_pid(pid_t pid, const std::string& dir) {
  if (pid <= 0) return Ok{};
  if (::kill(pid, SIGTERM) != 0 && errno != ESRCH)
    return fail(Error::Code::kInternal,
                "munge: cannot stop pid " + std::to_string(pid) + ": " + errno_text());
  if (wait_gone(pid, socket_path(dir), kStopTimeout)) return Ok{};
  ::kill(pid, SIGKILL);
  if (wait_gone(pid, socket_path(dir), kStopTimeout)) return Ok{};
  return fail(Error::Code::kInternal, "munge: pid " + std::to_string(pid) + " did not exit");
}

MungeDaemon::MungeDaemon(MungeDaemon&& other) noexcept
    : dir_(std::move(other.dir_)), pid_(other.pid_), mode_(other.mode_) {
  other.pid_ = -1;
}

MungeDaemon& MungeDaemon::operator=(MungeDaemon&& other) noexcept {
  if (this != &other) {
    (void)stop();
    dir_ = std::move(other.dir_);
    pid_ = other.pid_;
    mode_ = other.mode_;
    other.pid_ = -1;
  }
  return *this;
}

MungeDaemon::~MungeDaemon() {
  (void)stop();
}

Status MungeDaemon::stop() {
  if (pid_ <= 0 || mode_ != Mode::kOwned) return Ok{};
  pid_t pid = pid_;
  pid_ = -1;
  // Only the process started, and only while it still is munged on this directory's socket.
  if (running_munged(dir_) != pid) return Ok{};
  return stop_pid(pid, dir_);
}

}  // namespace trellis
