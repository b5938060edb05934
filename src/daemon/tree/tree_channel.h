// TreeChannel: the control tree's transport (daemon/tree/tree_wire.h frames on kept TCP
// connections). Every process of the tree has one: it sends messages to agents and gets their
// answers (the controller; an agent forwarding to its children), and an agent's also listens for
// messages and answers them.
//
// The channel's poll threads all wait on one epoll set whose connections are armed one-shot: the
// thread woken for a connection reads its whole frames, completes the answered requests, re-arms
// it and then hands a request that came in to the handler itself, on the spot (no hand-off to
// another thread: one wake-up per message). Before it does, it makes sure another poll thread is
// left waiting (starting one if need be), so that a slow message (a gang switch waiting for a
// freeze, a large launch) never holds up another (a liveness ping) nor the answers it may itself
// wait for. A handler may also answer later, from another thread (listen_async): an agent that
// forwards a message returns once it has sent it on and done its own part, and the poll thread
// that reads its last child's answer sends its own (no thread sleeps until the children have
// answered: one wake-up fewer per interior agent and message). Poll threads are started as
// needed, at most kMaxPollers, and leave when idle; when all are busy, requests go to worker
// threads (at most kMaxWorkers), as do further requests read in the same batch and connections
// still to be made. Connections to an agent are made on first use and kept; a lost one is made
// again at the next message. Each request has a deadline (a timer armed for the earliest); one
// not answered by then completes as DEADLINE_EXCEEDED.
//
//   TreeChannel channel;
//   Result<int> port = channel.listen("10.0.0.7", 0, [&](const v1::TreeMessage& m,
//                                                         v1::TreeAnswer* a) { ... });
//   // or, answering when ready:
//   channel.listen_async("10.0.0.7", 0, [&](const v1::TreeMessage& m, const std::string& raw,
//                                           TreeChannel::Respond respond) { ... respond(ok, a); });
//   channel.send("10.0.0.8:41234", message, deadline,
//                [](const grpc::Status& status, const v1::TreeAnswer& answer) { ... });
//
// Thread-safe. `done` callbacks run on a poll thread (or on the sending thread, for a message that
// could not be sent) and must not block.
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
#include <vector>

#include <grpcpp/support/status.h>

#include "core/result.h"
#include "trellis/v1/trellis.pb.h"

namespace trellis {

class TreeChannel {
 public:
  using Done = std::function<void(const grpc::Status&, const v1::TreeAnswer&)>;
  // Answers a request that came in (on a poll or worker thread); a non-OK status is sent as a
  // refusal.
  using Handler = std::function<grpc::Status(const v1::TreeMessage&, v1::TreeAnswer*)>;
  // Sends the answer to one request that came in (a refusal when the status is not OK). Call it
  // exactly once, from any thread, while the channel exists; it must not be kept waiting for
  // long (it writes to the peer's connection).
  using Respond = std::function<void(const grpc::Status&, const v1::TreeAnswer&)>;
  // Takes a request that came in (on a poll or worker thread) and answers it through `respond`,
  // before it returns or later. `raw` is the message's bytes as they came, to forward untouched.
  using AsyncHandler =
      std::function<void(const v1::TreeMessage&, const std::string& raw, Respond respond)>;

  static constexpr int kMaxPollers = 64;
  static constexpr int kMaxWorkers = 64;
  static constexpr int kMaxConnections = 4096;  // accepted, at a time

  TreeChannel();
  ~TreeChannel();  // fails what is pending, closes every connection, waits for every thread
  TreeChannel(const TreeChannel&) = delete;
  TreeChannel& operator=(const TreeChannel&) = delete;

  // Listens on `host`:`port` (an IPv4 or IPv6 literal, or a name; port 0 = any free port);
  // returns the port bound. Once only.
  Result<int> listen(const std::string& host, int port, Handler handler);
  // The same with a handler that may answer later (see AsyncHandler).
  Result<int> listen_async(const std::string& host, int port, AsyncHandler handler);

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

  // A request read, to be answered.
  struct Request {
    std::shared_ptr<Connection> connection;
    uint64_t id = 0;
    std::string payload;
  };

  void poll();  // a poll thread
  void add(std::shared_ptr<Connection> connection);
  void close(const std::shared_ptr<Connection>& connection, const std::string& why);
  // Reads what `connection` has, completes the answers and appends the requests to `requests`;
  // re-arms the connection unless it was closed.
  void read_from(const std::shared_ptr<Connection>& connection, std::vector<Request>& requests);
  void accept_all();
  // Re-arms a one-shot fd of the epoll set (`tag` = its event's data.ptr).
  void rearm(int fd, void* tag, uint32_t events);
  void serve(std::shared_ptr<Connection> connection, uint64_t id, std::string payload);
  void complete(uint64_t id, const grpc::Status& status, const v1::TreeAnswer& answer);
  void expire();  // the timer went off
  // Sets the timer for `at` (max(): none). With mutex_ held.
  void arm_timer(std::chrono::system_clock::time_point at);
  Result<std::shared_ptr<Connection>> connection_to(const std::string& agent,
                                                    std::chrono::system_clock::time_point deadline);
  // Writes a frame whole (a blocking write on a non-blocking socket), until `deadline`.
  static Status write_frame(Connection& connection, const std::string& frame,
                            std::chrono::system_clock::time_point deadline);
  void submit(std::function<void()> job);
  void work();
  void start_poller();  // with work_mutex_ held

  int epoll_ = -1;
  int wake_ = -1;   // an eventfd, readable once the channel stops (never read)
  int timer_ = -1;  // a timerfd, set for the earliest deadline pending
  int listener_ = -1;
  AsyncHandler handler_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> next_id_{1};

  std::mutex mutex_;  // guards what follows
  std::map<const Connection*, std::shared_ptr<Connection>> connections_;
  std::map<std::string, std::shared_ptr<Connection>> outgoing_;  // by agent address
  std::map<uint64_t, Pending> pending_;
  std::chrono::system_clock::time_point timer_at_;  // when the timer goes off (max(): never)
  int accepted_ = 0;

  std::mutex connect_mutex_;  // one connection attempt at a time (per channel)

  std::mutex work_mutex_;
  std::condition_variable work_ready_;
  std::deque<std::function<void()>> jobs_;  // guarded by work_mutex_
  int workers_ = 0, idle_ = 0;              // guarded by work_mutex_
  // Poll threads: all of them, and those polling (not answering a request). Guarded by
  // work_mutex_.
  int pollers_ = 0, polling_ = 0;
  std::condition_variable workers_gone_;  // a worker or poll thread left, or stopped polling
};

}  // namespace trellis
