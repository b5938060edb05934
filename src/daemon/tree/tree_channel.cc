#include "daemon/tree/tree_channel.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "daemon/tree/tree_wire.h"

namespace trellis {
namespace {

using SystemClock = std::chrono::system_clock;

int millis_until(SystemClock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SystemClock::now());
  return static_cast<int>(std::clamp<long long>(left.count(), 0, 60000));
}

// "host:port" or "[v6]:port" split; false when there is no port.
bool split_address(const std::string& address, std::string& host, std::string& port) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size()) return false;
  host = address.substr(0, colon);
  port = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return !host.empty();
}

void set_options(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
}

constexpr auto kIdleWorker = std::chrono::seconds(30);
constexpr int kIdleWorkersKept = 2;
constexpr int kIdlePollerMillis = 30000;
constexpr int kIdlePollersKept = 2;
constexpr int kEventsPerWait = 64;
constexpr uint32_t kConnectionEvents = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
// Requests one connection may have unanswered before it is closed (a flood).
constexpr int kMaxInFlight = 4096;

}  // namespace

struct TreeChannel::Connection {
  int fd = -1;
  std::string peer;  // the agent's address (outgoing) or "host:port" seen (incoming)
  bool outgoing = false;
  std::mutex write_mutex;  // guards fd's writes and `dead`
  bool dead = false;
  std::string buffer;  // bytes read, not yet a whole frame (the channel's thread only)
  std::atomic<int> in_flight{0};
};

TreeChannel::TreeChannel() {
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  timer_ = ::timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK);
  timer_at_ = SystemClock::time_point::max();
  epoll_event event{};
  event.events = EPOLLIN;  // level-triggered and never read: it wakes every poll thread
  event.data.ptr = &wake_;
  ::epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &event);
  event.events = EPOLLIN | EPOLLONESHOT;
  event.data.ptr = &timer_;
  ::epoll_ctl(epoll_, EPOLL_CTL_ADD, timer_, &event);
  std::lock_guard lock(work_mutex_);
  start_poller();
}

TreeChannel::~TreeChannel() {
  stopping_ = true;
  uint64_t one = 1;
  ssize_t ignored = ::write(wake_, &one, sizeof one);
  (void)ignored;
  // The poll threads stop polling first (none reads a connection after that; those answering a
  // request finish as workers do).
  {
    std::unique_lock lock(work_mutex_);
    workers_gone_.wait(lock, [&] { return polling_ == 0; });
  }
  // Every connection closes and every pending request fails, so that a thread waiting for
  // answers (an agent forwarding a message) finishes; then the threads are waited for.
  std::map<uint64_t, Pending> left;
  {
    std::lock_guard lock(mutex_);
    for (auto& [key, connection] : connections_) {
      std::lock_guard write(connection->write_mutex);
      connection->dead = true;
      ::close(connection->fd);
    }
    connections_.clear();
    outgoing_.clear();
    left.swap(pending_);
  }
  for (auto& [id, pending] : left)
    pending.done(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the channel closed"), {});
  {
    std::unique_lock lock(work_mutex_);
    work_ready_.notify_all();
    workers_gone_.wait(lock, [&] { return workers_ == 0 && pollers_ == 0; });
  }
  if (listener_ >= 0) ::close(listener_);
  ::close(timer_);
  ::close(wake_);
  ::close(epoll_);
}

Result<int> TreeChannel::listen(const std::string& host, int port, Handler handler) {
  return listen_async(host, port,
                      [handler = std::move(handler)](const v1::TreeMessage& message,
                                                     const std::string&, Respond respond) {
                        v1::TreeAnswer answer;
                        grpc::Status status = handler(message, &answer);
                        respond(status, answer);
                      });
}

Result<int> TreeChannel::listen_async(const std::string& host, int port, AsyncHandler handler) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  std::string service = std::to_string(port);
  if (int e = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
      e != 0)
    return fail(Error::Code::kUnavailable,
                "tree: cannot listen on " + host + ": " + std::string(::gai_strerror(e)));
  int fd = -1;
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 1024) != 0) {
      why = errno_text();
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0)
    return fail(Error::Code::kUnavailable,
                "tree: cannot listen on " + host + ":" + std::to_string(port) + ": " + why);
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
  int bound_port = bound.ss_family == AF_INET6
                       ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                       : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  handler_ = std::move(handler);
  listener_ = fd;
  epoll_event event{};
  event.events = EPOLLIN | EPOLLONESHOT;
  event.data.ptr = &listener_;  // tells the listener apart
  ::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &event);
  return bound_port;
}

void TreeChannel::add(std::shared_ptr<Connection> connection) {
  {
    std::lock_guard lock(mutex_);
    connections_[connection.get()] = connection;
  }
  epoll_event event{};
  event.events = kConnectionEvents;
  event.data.ptr = connection.get();
  ::epoll_ctl(epoll_, EPOLL_CTL_ADD, connection->fd, &event);
}

void TreeChannel::rearm(int fd, void* tag, uint32_t events) {
  epoll_event event{};
  event.events = events;
  event.data.ptr = tag;
  ::epoll_ctl(epoll_, EPOLL_CTL_MOD, fd, &event);
}

void TreeChannel::close(const std::shared_ptr<Connection>& connection, const std::string& why) {
  std::vector<Pending> failed;
  {
    std::lock_guard lock(mutex_);
    {
      std::lock_guard write(connection->write_mutex);
      if (connection->dead) return;
      connection->dead = true;
      ::epoll_ctl(epoll_, EPOLL_CTL_DEL, connection->fd, nullptr);
      ::close(connection->fd);
    }
    connections_.erase(connection.get());
    if (connection->outgoing) {
      auto it = outgoing_.find(connection->peer);
      if (it != outgoing_.end() && it->second == connection) outgoing_.erase(it);
    } else {
      --accepted_;
    }
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second.connection.lock() == connection) {
        failed.push_back(std::move(it->second));
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (Pending& pending : failed)
    pending.done(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                              "connection to " + connection->peer + " lost: " + why),
                 {});
}

void TreeChannel::start_poller() {
  ++pollers_;
  ++polling_;
  std::thread([this] { poll(); }).detach();
}

void TreeChannel::poll() {
  epoll_event events[kEventsPerWait];
  std::vector<Request> requests;
  for (;;) {
    int n = ::epoll_wait(epoll_, events, kEventsPerWait, kIdlePollerMillis);
    if (stopping_) break;
    if (n < 0 && errno != EINTR) break;
    if (n == 0) {
      std::lock_guard lock(work_mutex_);
      if (polling_ > kIdlePollersKept) break;
      continue;
    }
    // Connections closed during this batch stay alive until its end (an event of the batch may
    // still name one).
    std::vector<std::shared_ptr<Connection>> batch;
    requests.clear();
    for (int i = 0; i < n; ++i) {
      void* tag = events[i].data.ptr;
      if (tag == &wake_) continue;  // stopping: seen at the next turn
      if (tag == &timer_) {
        expire();
        continue;
      }
      if (tag == &listener_) {
        accept_all();
        continue;
      }
      std::shared_ptr<Connection> connection;
      {
        std::lock_guard lock(mutex_);
        auto it = connections_.find(static_cast<const Connection*>(tag));
        if (it != connections_.end()) connection = it->second;
      }
      if (!connection) continue;  // closed earlier in this batch
      batch.push_back(connection);
      read_from(connection, requests);
    }
    if (requests.empty()) continue;
    // All but the last request go to workers; the last is answered here, once another thread
    // polls in this one's place (one is started if none is idle).
    for (size_t i = 0; i + 1 < requests.size(); ++i)
      submit([this, request = std::move(requests[i])]() mutable {
        serve(std::move(request.connection), request.id, std::move(request.payload));
      });
    Request& last = requests.back();
    bool here = true;
    {
      std::lock_guard lock(work_mutex_);
      if (polling_ == 1 && pollers_ >= kMaxPollers) {
        here = false;  // the last poller stays one
      } else {
        --polling_;
        if (polling_ == 0) start_poller();
      }
    }
    if (!here) {
      submit([this, request = std::move(last)]() mutable {
        serve(std::move(request.connection), request.id, std::move(request.payload));
      });
      continue;
    }
    serve(std::move(last.connection), last.id, std::move(last.payload));
    std::lock_guard lock(work_mutex_);
    if (stopping_) {
      --pollers_;
      workers_gone_.notify_all();
      return;
    }
    ++polling_;
  }
  std::lock_guard lock(work_mutex_);
  --polling_;
  --pollers_;
  workers_gone_.notify_all();
}

void TreeChannel::accept_all() {
  for (;;) {
    sockaddr_storage from{};
    socklen_t length = sizeof from;
    int fd = ::accept4(listener_, reinterpret_cast<sockaddr*>(&from), &length,
                       SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) break;
    {
      std::lock_guard lock(mutex_);
      if (accepted_ >= kMaxConnections) {
        ::close(fd);
        continue;
      }
      ++accepted_;
    }
    set_options(fd);
    auto connection = std::make_shared<Connection>();
    connection->fd = fd;
    char text[INET6_ADDRSTRLEN] = "?";
    if (from.ss_family == AF_INET)
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&from)->sin_addr, text, sizeof text);
    connection->peer = text;
    add(connection);
  }
  rearm(listener_, &listener_, EPOLLIN | EPOLLONESHOT);
}

void TreeChannel::read_from(const std::shared_ptr<Connection>& connection,
                            std::vector<Request>& requests) {
  char chunk[65536];
  for (;;) {
    ssize_t got = ::read(connection->fd, chunk, sizeof chunk);
    if (got > 0) {
      connection->buffer.append(chunk, static_cast<size_t>(got));
      // A read that does not fill the chunk took all there was: what comes later wakes epoll
      // again (level-triggered), so no read is spent to hear EAGAIN.
      if (static_cast<size_t>(got) < sizeof chunk) break;
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    // End of stream or an error: the frames already whole are still taken below.
    std::string why = got == 0 ? "closed by the peer" : errno_text();
    for (;;) {
      Result<std::optional<Frame>> frame = take_frame(connection->buffer);
      if (!frame || !*frame) break;
      if ((*frame)->kind != FrameKind::kRequest) {
        v1::TreeAnswer answer;
        if ((*frame)->kind == FrameKind::kAnswer && answer.ParseFromString((*frame)->payload))
          complete((*frame)->id, grpc::Status::OK, answer);
      }
    }
    close(connection, why);
    return;
  }
  for (;;) {
    Result<std::optional<Frame>> frame = take_frame(connection->buffer);
    if (!frame) {
      close(connection, frame.error().message);
      return;
    }
    if (!*frame) break;
    Frame& f = **frame;
    switch (f.kind) {
      case FrameKind::kRequest:
        if (connection->outgoing || !handler_ || ++connection->in_flight > kMaxInFlight) {
          close(connection, "a request it may not send here");
          return;
        }
        requests.push_back(Request{connection, f.id, std::move(f.payload)});
        break;
      case FrameKind::kAnswer: {
        v1::TreeAnswer answer;
        if (!answer.ParseFromString(f.payload))
          complete(f.id, grpc::Status(grpc::StatusCode::INTERNAL, "a malformed answer"), {});
        else
          complete(f.id, grpc::Status::OK, answer);
        break;
      }
      case FrameKind::kRefusal: {
        Result<Refusal> refusal = decode_refusal(f.payload);
        if (!refusal)
          complete(f.id, grpc::Status(grpc::StatusCode::INTERNAL, refusal.error().message), {});
        else
          complete(f.id,
                   grpc::Status(static_cast<grpc::StatusCode>(refusal->code), refusal->message),
                   {});
        break;
      }
    }
  }
  // Re-armed unless closed meanwhile (by a sender that could not write): the fd of a closed
  // connection may already be another's.
  std::lock_guard write(connection->write_mutex);
  if (!connection->dead) rearm(connection->fd, connection.get(), kConnectionEvents);
}

void TreeChannel::serve(std::shared_ptr<Connection> connection, uint64_t id, std::string payload) {
  Respond respond = [connection = std::move(connection), id](const grpc::Status& status,
                                                             const v1::TreeAnswer& answer) {
    std::string frame =
        status.ok() ? encode_frame(FrameKind::kAnswer, id, answer.SerializeAsString())
                    : encode_frame(FrameKind::kRefusal, id,
                                   encode_refusal(status.error_code(), status.error_message()));
    --connection->in_flight;
    // A peer that does not read its answers is not waited for long.
    (void)write_frame(*connection, frame, SystemClock::now() + std::chrono::seconds(10));
  };
  v1::TreeMessage message;
  if (!message.ParseFromString(payload)) {
    respond(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "not a TreeMessage"), {});
    return;
  }
  handler_(message, payload, std::move(respond));
}

void TreeChannel::complete(uint64_t id, const grpc::Status& status, const v1::TreeAnswer& answer) {
  Done done;
  {
    std::lock_guard lock(mutex_);
    auto it = pending_.find(id);
    if (it == pending_.end()) return;  // expired already, or never ours
    done = std::move(it->second.done);
    pending_.erase(it);
  }
  done(status, answer);
}

void TreeChannel::arm_timer(SystemClock::time_point at) {
  timer_at_ = at;
  itimerspec when{};  // all zero: disarmed
  if (at != SystemClock::time_point::max()) {
    auto since_epoch = std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch());
    when.it_value.tv_sec = static_cast<time_t>(since_epoch.count() / 1000000000);
    when.it_value.tv_nsec = static_cast<long>(since_epoch.count() % 1000000000);
    if (when.it_value.tv_sec <= 0 && when.it_value.tv_nsec <= 0) when.it_value.tv_nsec = 1;
  }
  ::timerfd_settime(timer_, TFD_TIMER_ABSTIME, &when, nullptr);
}

void TreeChannel::expire() {
  uint64_t expirations = 0;
  ssize_t ignored = ::read(timer_, &expirations, sizeof expirations);
  (void)ignored;
  std::vector<Pending> late;
  {
    std::lock_guard lock(mutex_);
    auto now = SystemClock::now();
    auto next = SystemClock::time_point::max();
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second.deadline <= now) {
        late.push_back(std::move(it->second));
        it = pending_.erase(it);
      } else {
        next = std::min(next, it->second.deadline);
        ++it;
      }
    }
    arm_timer(next);
  }
  rearm(timer_, &timer_, EPOLLIN | EPOLLONESHOT);
  for (Pending& pending : late)
    pending.done(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "no answer in time"), {});
}

Result<std::shared_ptr<TreeChannel::Connection>> TreeChannel::connection_to(
    const std::string& agent, SystemClock::time_point deadline) {
  {
    std::lock_guard lock(mutex_);
    auto it = outgoing_.find(agent);
    if (it != outgoing_.end()) return it->second;
  }
  std::string host, port;
  if (!split_address(agent, host, port))
    return fail(Error::Code::kInvalidArgument, "'" + agent + "' is not host:port");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int e = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); e != 0)
    return fail(Error::Code::kUnavailable, agent + ": " + std::string(::gai_strerror(e)));
  int fd = -1;
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno == EINPROGRESS) {
      pollfd ready{fd, POLLOUT, 0};
      int error = 0;
      socklen_t length = sizeof error;
      if (::poll(&ready, 1, millis_until(deadline)) == 1 &&
          ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0)
        break;
      why = error != 0 ? std::strerror(error) : "connect timed out";
    } else if (errno == 0 || errno == EISCONN) {
      break;
    } else {
      why = errno_text();
    }
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(found);
  if (fd < 0) return fail(Error::Code::kUnavailable, "cannot connect to " + agent + ": " + why);
  set_options(fd);
  auto connection = std::make_shared<Connection>();
  connection->fd = fd;
  connection->peer = agent;
  connection->outgoing = true;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) {
      ::close(fd);
      return fail(Error::Code::kUnavailable, "the channel is closing");
    }
    auto it = outgoing_.find(agent);
    if (it != outgoing_.end()) {  // another thread connected meanwhile: use its connection
      ::close(fd);
      return it->second;
    }
    outgoing_[agent] = connection;
    connections_[connection.get()] = connection;
  }
  epoll_event event{};
  event.events = kConnectionEvents;
  event.data.ptr = connection.get();
  ::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &event);
  return connection;
}

Status TreeChannel::write_frame(Connection& connection, const std::string& frame,
                                SystemClock::time_point deadline) {
  std::lock_guard write(connection.write_mutex);
  size_t at = 0;
  while (at < frame.size()) {
    if (connection.dead) return fail(Error::Code::kUnavailable, "connection closed");
    ssize_t wrote = ::send(connection.fd, frame.data() + at, frame.size() - at, MSG_NOSIGNAL);
    if (wrote > 0) {
      at += static_cast<size_t>(wrote);
      continue;
    }
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd ready{connection.fd, POLLOUT, 0};
      if (::poll(&ready, 1, millis_until(deadline)) <= 0)
        return fail(Error::Code::kUnavailable, "the peer does not read (" + connection.peer + ")");
      continue;
    }
    return fail(Error::Code::kUnavailable, errno_text());
  }
  return Ok{};
}

void TreeChannel::send(const std::string& agent, const v1::TreeMessage& message,
                       SystemClock::time_point deadline, Done done) {
  send_serialized(agent, message.SerializeAsString(), deadline, std::move(done));
}

void TreeChannel::send_serialized(const std::string& agent, const std::string& message,
                                  SystemClock::time_point deadline, Done done) {
  if (stopping_) {
    done(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the channel is closing"), {});
    return;
  }
  const uint64_t id = next_id_++;
  std::string frame = encode_frame(FrameKind::kRequest, id, message);
  auto deliver = [this, agent, id, deadline, frame = std::move(frame),
                  done = std::move(done)]() mutable {
    if (stopping_) {
      done(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the channel is closing"), {});
      return;
    }
    Result<std::shared_ptr<Connection>> connection = connection_to(agent, deadline);
    if (!connection) {
      done(grpc::Status(grpc::StatusCode::UNAVAILABLE, connection.error().message), {});
      return;
    }
    {
      std::lock_guard lock(mutex_);
      pending_[id] = Pending{std::move(done), deadline, *connection};
      // The timer is set for the earliest deadline it knew of: a sooner one sets it again, so
      // that this request expires on time (a parent waiting for a stopped child answers its own
      // parent before that one's deadline, and is not taken for lost itself). One that is later
      // costs nothing here: when the timer goes off it is set for the next deadline then pending.
      if (deadline < timer_at_) arm_timer(deadline);
    }
    if (Status wrote = write_frame(**connection, frame, deadline); !wrote) {
      close(*connection, wrote.error().message);
      Done failed;
      {
        std::lock_guard lock(mutex_);
        auto it = pending_.find(id);
        if (it == pending_.end()) return;  // close() failed it already
        failed = std::move(it->second.done);
        pending_.erase(it);
      }
      failed(grpc::Status(grpc::StatusCode::UNAVAILABLE, wrote.error().message), {});
    }
  };
  bool connected = false;
  {
    std::lock_guard lock(mutex_);
    connected = outgoing_.contains(agent);
  }
  // A connection still to be made may take until the deadline (a host that is down): it is made
  // on a worker, so that the sender goes on to its other children at once.
  if (connected)
    deliver();
  else
    submit(std::move(deliver));
}

void TreeChannel::submit(std::function<void()> job) {
  std::unique_lock lock(work_mutex_);
  jobs_.push_back(std::move(job));
  if (idle_ > 0) {
    // Woken after the lock is let go, so that the worker does not wake only to wait for it.
    lock.unlock();
    work_ready_.notify_one();
    return;
  }
  if (workers_ >= kMaxWorkers) return;  // one of them takes it when free
  ++workers_;
  std::thread([this] { work(); }).detach();
}

void TreeChannel::work() {
  std::unique_lock lock(work_mutex_);
  for (;;) {
    if (!jobs_.empty()) {
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      lock.lock();
      continue;
    }
    if (stopping_) break;
    ++idle_;
    bool woken =
        work_ready_.wait_for(lock, kIdleWorker, [&] { return !jobs_.empty() || stopping_.load(); });
    --idle_;
    if (!woken && workers_ > kIdleWorkersKept) break;
  }
  if (--workers_ == 0) workers_gone_.notify_all();
}

}  // namespace trellis
