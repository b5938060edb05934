// TreeChannel: the control tree's transport (daemon/tree/tree_wire.h frames on kept TCP
// connections). Every process of the tree has one: it sends messages to agents and gets their
// answers (the controller; an agent forwarding to its children), and an agent's also listens for
// messages and answers them.
//
// One thread per channel watches every connection (epoll): it reads whole frames, completes the
// answered requests, and hands each request that comes in to a worker thread, so that a slow
// message (a gang switch waiting for a freeze, a large launch) never holds up another (a
// liveness ping). Workers are started as needed, at most kMaxWorkers, and leave when idle.
// Connections to an agent are made on first use and kept; a lost one is made again at the next
// message. Each request has a deadline; one not answered by then completes as DEADLINE_EXCEEDED.
//
//   TreeChannel channel;
//   Result<int> port = channel.listen("10.0.0.7", 0, [&](const v1::TreeMessage& m,
//                                                         v1::TreeAnswer* a) { ... });
//   channel.send("10.0.0.8:41234", message, deadline,
//                [](const grpc::Status& status, const v1::TreeAnswer& answer) { ... });
//
// Thread-safe. `done` callbacks run on the channel's thread and must not block.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include <grpcpp/support/status.h>

#include "core/result.h"
#include "trellis/v1/trellis.pb.h"

namespace trellis {

class TreeChannel {
 public:
  using Done = std::function<void(const grpc::Status&, const v1::TreeAnswer&)>;
  // Answers a request that came in (on a worker thread); a non-OK status is sent as a refusal.
  using Handler = std::function<grpc::Status(const v1::TreeMessage&, v1::TreeAnswer*)>;

  static constexpr int kMaxWorkers = 64;
  static constexpr int kMaxConnections = 4096;  // accepted, at a time

  TreeChannel();
  ~TreeChannel();  // fails what is pending, closes every connection, waits for the workers
  TreeChannel(const TreeChannel&) = delete;
  TreeChannel& operator=(const TreeChannel&) = delete;

  // Listens on `host`:`port` (an IPv4 or IPv6 literal, or a name; port 0 = any free port);
  // returns the port bound. Once only.
  Result<int> listen(const std::string& host, int port, Handler handler);

  // Sends `message` to the agent at `agent` ("host:port"); `done` is called once with the
  // outcome: OK and the answer, the agent's refusal, UNAVAILABLE (no connection) or
  // DEADLINE_EXCEEDED.
  void send(const std::string& agent, const v1::TreeMessage& message,
            std::chrono::system_clock::time_point deadline, Done done);
  // The same with the message serialized already (an agent forwarding one message to its
  // children serializes it once).
  void send_serialized(const std::string& agent, const std::string& message,
                       std::chrono::system_clock::time_point deadline, Done done);

 private:
  struct Connection;
  struct Pending {
    Done done;
    std::chrono::system_clock::time_point deadline;
    std::weak_ptr<Connection> connection;
  };

  void run();  // the channel's thread
  void add(std::shared_ptr<Connection> connection);
  void close(const std::shared_ptr<Connection>& connection, const std::string& why);
  void read_from(const std::shared_ptr<Connection>& connection);
  void serve(std::shared_ptr<Connection> connection, uint64_t id, std::string payload);
  void complete(uint64_t id, const grpc::Status& status, const v1::TreeAnswer& answer);
  void expire();
  Result<std::shared_ptr<Connection>> connection_to(const std::string& agent,
                                                    std::chrono::system_clock::time_point deadline);
  // Writes a frame whole (a blocking write on a non-blocking socket), until `deadline`.
  static Status write_frame(Connection& connection, const std::string& frame,
                            std::chrono::system_clock::time_point deadline);
  void submit(std::function<void()> job);
  void work();

  int epoll_ = -1;
  int wake_ = -1;  // an eventfd: stop, or a deadline sooner than the thread's next wake-up
  int listener_ = -1;
  Handler handler_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> next_id_{1};

  std::mutex mutex_;  // guards what follows
  std::map<const Connection*, std::shared_ptr<Connection>> connections_;
  std::map<std::string, std::shared_ptr<Connection>> outgoing_;  // by agent address
  std::map<uint64_t, Pending> pending_;
  std::chrono::system_clock::time_point wakes_at_;  // when the channel's thread next wakes
  int accepted_ = 0;

  std::mutex connect_mutex_;  // one connection attempt at a time (per channel)

  std::mutex work_mutex_;
  std::condition_variable work_ready_;
  std::deque<std::function<void()>> jobs_;  // guarded by work_mutex_
  int workers_ = 0, idle_ = 0;              // guarded by work_mutex_
  std::condition_variable workers_gone_;
  std::thread thread_;
};

}  // namespace trellis
