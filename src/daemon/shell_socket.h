// ShellSocket: the agent's unix socket for its job shells (trellis-shell, shell/shell.h), on an
// abstract name (no file, no directory permissions: the shells run as the jobs' users) that only
// processes of the agent's network namespace can reach. Messages are shell/exchange_wire.h's.
//
// Who is calling is checked with the kernel's word for it (SO_PEERCRED, taken at connect): a
// shell's hello names its task (job, attempt, step, node), and `authorize` accepts it only if that
// pid is the task's process (the shell leads the task) and runs as the step's user. A connection
// whose hello is refused, or that sends anything malformed or oversized, is closed; nothing a
// shell sends can reach another step.
//
// One thread serves every connection with epoll; answers may be sent from any thread (they are
// queued and written as the shell reads them, so a stuck shell stalls nobody).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/result.h"
#include "daemon/pmi_exchange.h"

namespace trellis {

class ShellSocket {
 public:
  struct Peer {
    pid_t pid = 0;
    uid_t uid = 0;
  };
  struct Handlers {
    // Ok when `peer` is the shell of `node` in `step`; the error says why not.
    std::function<Status(const Peer& peer, const StepKey& step, const std::string& node)> authorize;
    // A barrier's contribution of `node`; `answer` may be called from any thread, later.
    std::function<void(const StepKey& step, uint32_t round, const std::string& node,
                       std::string data, PmiExchangeHub::Answer answer)>
        contribute;
    // How the step ended on `node`, before the shell exits (acknowledged once this returns).
    std::function<void(const StepKey& step, const std::string& node, int exit_code, int signal,
                       const std::string& reason)>
        ended;
  };

  // Listens on the abstract name `name` (shell/exchange_wire.h's shell_socket_name()).
  static Result<std::unique_ptr<ShellSocket>> open(const std::string& name, Handlers handlers);
  ~ShellSocket();  // stops serving; shells still connected see the connection close
  ShellSocket(const ShellSocket&) = delete;
  ShellSocket& operator=(const ShellSocket&) = delete;

  // At most this many shells connected at once; more are refused.
  static constexpr size_t kMaxConnections = 65536;

 private:
  struct Connection;
  explicit ShellSocket(Handlers handlers);
  void serve();
  void accept_all();
  void readable(uint64_t id);
  void writable(uint64_t id);
  void send(uint64_t id, const std::string& bytes);
  void drop(uint64_t id);  // callers hold mutex_

  Handlers handlers_;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int stop_fd_ = -1;
  std::mutex mutex_;  // connections_ and their buffers
  std::map<uint64_t, std::unique_ptr<Connection>> connections_;
  uint64_t next_id_ = 1;
  std::thread thread_;
};

}  // namespace trellis
