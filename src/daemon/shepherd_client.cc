#include "daemon/shepherd_client.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace trellis {

Result<std::unique_ptr<ShepherdClient>> ShepherdClient::start(std::string binary, int exit_notice,
                                                              std::string owner) {
  std::unique_ptr<ShepherdClient> client(
      new ShepherdClient(std::move(binary), exit_notice, std::move(owner)));
  std::lock_guard lock(client->mutex_);
  if (Status ok = client->start_shepherd(); !ok) return ok.error();
  return client;
}

std::string ShepherdClient::default_binary() {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return "trellis-shepherd";
  std::string path(self, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/') + 1) + "trellis-shepherd";
}

ShepherdClient::~ShepherdClient() {
  std::lock_guard lock(mutex_);
  let_go();
}

Status ShepherdClient::start_shepherd() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    return fail(Error::Code::kUnavailable, std::string("socketpair: ") + std::strerror(errno));
  // The shepherd's end becomes its fd 3 and the notice pipe its fd 4. Copies above both go
  // first: a dup2 onto itself would keep close-on-exec, and one source may sit at 3 or 4.
  int socket_copy = ::fcntl(fds[1], F_DUPFD_CLOEXEC, 10);
  int notice_copy = exit_notice_ >= 0 ? ::fcntl(exit_notice_, F_DUPFD_CLOEXEC, 10) : -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, socket_copy, 3);
  if (notice_copy >= 0) posix_spawn_file_actions_adddup2(&actions, notice_copy, 4);
  std::string arg0 = "trellis-shepherd", socket_arg = "3",
              notice_arg = exit_notice_ >= 0 ? "4" : "-1", owner_arg = "--for=" + owner_;
  char* argv[] = {arg0.data(), socket_arg.data(), notice_arg.data(), owner_arg.data(), nullptr};
  char* no_env[] = {nullptr};
  pid_t pid = 0;
  int error = ::posix_spawn(&pid, binary_.c_str(), &actions, nullptr, argv, no_env);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  ::close(socket_copy);
  if (notice_copy >= 0) ::close(notice_copy);
  if (error != 0) {
    ::close(fds[0]);
    return fail(Error::Code::kUnavailable,
                "cannot start " + binary_ + ": " + std::string(std::strerror(error)));
  }
  socket_ = fds[0];
  pid_ = pid;
  return Ok{};
}

void ShepherdClient::let_go() {
  if (socket_ >= 0) ::close(socket_);
  socket_ = -1;
  // Reaped if it has ended; one still recording jobs is left to run (and to init, once this
  // process exits).
  if (pid_ > 0) ::waitpid(pid_, nullptr, WNOHANG);
  pid_ = 0;
}

pid_t ShepherdClient::shepherd_pid() {
  std::lock_guard lock(mutex_);
  return pid_;
}

Result<ShepherdClient::Started> ShepherdClient::spawn(const ShepherdPlan& plan) {
  return spawn_all({plan}).front();
}

std::vector<Result<ShepherdClient::Started>> ShepherdClient::spawn_all(
    const std::vector<ShepherdPlan>& plans) {
  std::vector<Result<Started>> results(
      plans.size(), fail(Error::Code::kUnavailable, binary_ + " stopped answering"));
  std::vector<std::string> frames;  // each plan as sent: its length, then its bytes
  std::vector<size_t> due;          // the plans still to send
  for (size_t i = 0; i < plans.size(); ++i) {
    std::string bytes = encode_plan(plans[i]);
    if (bytes.size() > kMaxPlanBytes) {
      results[i] = fail("the job's command line and environment exceed 16 MiB");
      frames.emplace_back();
      continue;
    }
    const uint32_t length = static_cast<uint32_t>(bytes.size());
    std::string frame(reinterpret_cast<const char*>(&length), sizeof length);
    frames.push_back(frame + bytes);
    due.push_back(i);
  }
  std::lock_guard lock(mutex_);
  // A shepherd that died (killed by hand, out of memory) is replaced once per call; the plans it
  // did not answer go to the new one.
  for (int attempt = 0; attempt < 2 && !due.empty(); ++attempt) {
    if (socket_ < 0) {
      if (Status ok = start_shepherd(); !ok) {
        for (size_t i : due) results[i] = ok.error();
        return results;
      }
    }
    size_t sent = 0;
    while (sent < due.size() &&
           write_exactly(socket_, frames[due[sent]].data(), frames[due[sent]].size()))
      ++sent;
    size_t answered = 0;
    ShepherdReply reply;
    while (answered < sent && read_exactly(socket_, &reply, sizeof reply)) {
      const size_t i = due[answered++];
      if (reply.error != 0)
        results[i] = fail(Error::Code::kUnavailable, "cannot start the job's process: " +
                                                         std::string(std::strerror(reply.error)));
      else
        results[i] = Started{reply.shepherd, reply.job};
    }
    due.erase(due.begin(), due.begin() + static_cast<std::ptrdiff_t>(answered));
    if (!due.empty()) let_go();
  }
  return results;
}

}  // namespace trellis
