// Helpers for tests of the live system's daemons: a temporary directory, waiting for something
// to happen, a fake controller that records what agents tell it, fake agents that record what a
// controller tells them, and a daemon run as a child process that is stopped by its pid.
// (A fake controller does not ping: an agent under one registers again every 10 ping intervals.)
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "daemon/agent_link.h"
#include "daemon/auth.h"
#include "trellis/v1/trellis.grpc.pb.h"

extern char** environ;

namespace trellis::testing {

// Records launches and signals; nothing runs.
class RecordingAgents final : public AgentLink {
 public:
  std::vector<v1::LaunchRequest> launches;
  std::vector<v1::SignalRequest> signals;
  void launch(const std::vector<std::string>&, const v1::LaunchRequest& r) override {
    launches.push_back(r);
  }
  void signal(const std::vector<std::string>&, const v1::SignalRequest& r) override {
    signals.push_back(r);
  }
  std::vector<SwitchOrder> switches;
  void gang_switch(SwitchOrder order) override { switches.push_back(std::move(order)); }
};

// A fresh directory under $TMPDIR (or /tmp), removed with its contents at scope exit. Mode 0755:
// munged wants its socket reachable by everyone.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/trellis-daemon-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (::mkdtemp(buffer.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = buffer.data();
    ::chmod(path_.c_str(), 0755);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Tests that check what the host does in real time (gang switching's turns, sampled every few
// milliseconds) and tests that fork thousands of processes at once must not run beside each other
// under `ctest -j`: the latter starve the former (CI saw it). Each such test holds this lock, a
// flock on one file shared by every test process, for its whole run; other tests are not held up.
class ExclusiveHostLock {
 public:
  ExclusiveHostLock()
      : fd_(::open("/tmp/trellis-tests-exclusive.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0666)) {
    if (fd_ < 0) return;  // no /tmp to lock in: run anyway, as before the lock
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~ExclusiveHostLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  ExclusiveHostLock(const ExclusiveHostLock&) = delete;
  ExclusiveHostLock& operator=(const ExclusiveHostLock&) = delete;

 private:
  int fd_;
};

// Polls `condition` until it holds or `timeout` passes (generous: these wait for processes).
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  auto give_up = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// A controller that answers agents and records what they said. Other calls are unimplemented.
class FakeController final : public v1::Controller::Service {
 public:
  explicit FakeController(std::string munge_socket) : auth_(std::move(munge_socket)) {}

  grpc::Status Register(grpc::ServerContext* context, const v1::RegisterRequest* request,
                        v1::RegisterReply* reply) override {
    if (grpc::Status s = check(*context); !s.ok()) return s;
    std::lock_guard lock(mutex_);
    registers_.push_back(*request);
    reply->set_ping_interval_ms(ping_interval_ms_);
    return grpc::Status::OK;
  }
  grpc::Status ReportExit(grpc::ServerContext* context, const v1::ExitRequest* request,
                          v1::ExitReply*) override {
    if (grpc::Status s = check(*context); !s.ok()) return s;
    std::lock_guard lock(mutex_);
    ++exit_reports_;
    if (forget_) {
      forget_ = false;
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown agent");
    }
    for (const v1::TaskStatus& task : request->tasks()) exits_.push_back(task);
    return grpc::Status::OK;
  }

  std::vector<v1::RegisterRequest> registers() const {
    std::lock_guard lock(mutex_);
    return registers_;
  }
  int exit_reports() const {
    std::lock_guard lock(mutex_);
    return exit_reports_;
  }
  std::vector<v1::TaskStatus> exits() const {
    std::lock_guard lock(mutex_);
    return exits_;
  }
  // The exits reported for one job.
  std::vector<v1::TaskStatus> exits_of(int64_t job_id) const {
    std::vector<v1::TaskStatus> out;
    for (const v1::TaskStatus& task : exits()) {
      if (task.job_id() == job_id) out.push_back(task);
    }
    return out;
  }
  // Answers the next exit report with NOT_FOUND, as a controller that lost track of the agent.
  void forget_agent() {
    std::lock_guard lock(mutex_);
    forget_ = true;
  }
  int unauthenticated_calls() const {
    std::lock_guard lock(mutex_);
    return unauthenticated_;
  }

 private:
  grpc::Status check(const grpc::ServerContext& context) {
    Result<Caller> caller = auth_.verify(context);
    if (caller) return grpc::Status::OK;
    std::lock_guard lock(mutex_);
    ++unauthenticated_;
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, caller.error().message);
  }

  Authenticator auth_;
  mutable std::mutex mutex_;
  std::vector<v1::RegisterRequest> registers_;
  std::vector<v1::TaskStatus> exits_;
  int exit_reports_ = 0;
  int ping_interval_ms_ = 100;
  bool forget_ = false;
  int unauthenticated_ = 0;
};

// A FakeController served on 127.0.0.1 at an ephemeral port.
class ControllerServer {
 public:
  explicit ControllerServer(const std::string& munge_socket) : service_(munge_socket) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
  }
  ~ControllerServer() {
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  }
  FakeController& service() { return service_; }
  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  bool ok() const { return server_ != nullptr && port_ > 0; }

 private:
  FakeController service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

// A program run as a child with stdout and stderr to `log`; stopped (SIGTERM, or kill())
// and reaped by its pid.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& args, const std::string& log) {
    std::vector<std::string> copy = args;
    std::vector<char*> argv;
    for (std::string& arg : copy) argv.push_back(arg.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~ChildProcess() { stop(); }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Sends `signal` and reaps; returns the wait status (-1 when not running).
  int stop(int signal = SIGTERM) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, signal);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_ = -1;
};

}  // namespace trellis::testing
