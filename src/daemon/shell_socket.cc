#include "daemon/shell_socket.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

#include "shell/exchange_wire.h"

namespace trellis {
namespace {

constexpr uint64_t kListenId = 0;
constexpr uint64_t kStopId = UINT64_MAX;

}  // namespace

struct ShellSocket::Connection {
  int fd = -1;
  Peer peer;
  std::string in, out;
  bool hello = false;    // an accepted hello came
  bool refused = false;  // its hello was refused: what it sends is ignored until it closes
  StepKey step;
  std::string node;
  bool watching_output = false;  // EPOLLOUT is armed
};

ShellSocket::ShellSocket(Handlers handlers) : handlers_(std::move(handlers)) {}

Result<std::unique_ptr<ShellSocket>> ShellSocket::open(const std::string& name, Handlers handlers) {
  std::unique_ptr<ShellSocket> s(new ShellSocket(std::move(handlers)));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (name.empty() || name.size() + 1 > sizeof address.sun_path)
    return fail("shell socket name '" + name + "' is empty or too long");
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  socklen_t length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  s->listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (s->listen_fd_ < 0)
    return fail(Error::Code::kUnavailable, std::string("socket: ") + std::strerror(errno));
  if (::bind(s->listen_fd_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      ::listen(s->listen_fd_, 4096) != 0)
    return fail(Error::Code::kUnavailable, "cannot listen on @" + name + ": " +
                                               std::strerror(errno) +
                                               " (another agent with the same state directory?)");
  s->epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  s->stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s->epoll_fd_ < 0 || s->stop_fd_ < 0)
    return fail(Error::Code::kUnavailable, std::string("epoll: ") + std::strerror(errno));
  epoll_event listen_event{EPOLLIN, {.u64 = kListenId}};
  epoll_event stop_event{EPOLLIN, {.u64 = kStopId}};
  ::epoll_ctl(s->epoll_fd_, EPOLL_CTL_ADD, s->listen_fd_, &listen_event);
  ::epoll_ctl(s->epoll_fd_, EPOLL_CTL_ADD, s->stop_fd_, &stop_event);
  s->thread_ = std::thread([p = s.get()] { p->serve(); });
  return s;
}

ShellSocket::~ShellSocket() {
  if (stop_fd_ >= 0) {
    uint64_t one = 1;
    (void)!::write(stop_fd_, &one, sizeof one);
  }
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, c] : connections_) ::close(c->fd);
    connections_.clear();
  }
  for (int fd : {listen_fd_, epoll_fd_, stop_fd_})
    if (fd >= 0) ::close(fd);
}

void ShellSocket::serve() {
  epoll_event events[64];
  for (;;) {
    int n = ::epoll_wait(epoll_fd_, events, 64, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return;
    for (int i = 0; i < n; ++i) {
      uint64_t id = events[i].data.u64;
      if (id == kStopId) return;
      if (id == kListenId) {
        accept_all();
        continue;
      }
      if (events[i].events & EPOLLOUT) writable(id);
      if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) readable(id);
    }
  }
}

void ShellSocket::accept_all() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;  // EAGAIN: all taken (or a transient error: the next event retries)
    ucred credentials{};
    socklen_t size = sizeof credentials;
    std::lock_guard lock(mutex_);
    if (connections_.size() >= kMaxConnections ||
        ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) != 0) {
      ::close(fd);
      continue;
    }
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->peer = {credentials.pid, credentials.uid};
    uint64_t id = next_id_++;
    epoll_event event{EPOLLIN, {.u64 = id}};
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event);
    connections_[id] = std::move(c);
  }
}

void ShellSocket::drop(uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->second->fd, nullptr);
  ::close(it->second->fd);
  connections_.erase(it);
}

void ShellSocket::readable(uint64_t id) {
  std::vector<ExchangeMessage> messages;
  Peer peer;
  bool hello = false;
  StepKey step;
  std::string node;
  {
    std::lock_guard lock(mutex_);
    auto it = connections_.find(id);
    if (it == connections_.end()) return;
    Connection& c = *it->second;
    char chunk[65536];
    for (;;) {
      ssize_t n = ::recv(c.fd, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n <= 0) {  // closed, or an error: the shell is done with us
        drop(id);
        return;
      }
      c.in.append(chunk, static_cast<size_t>(n));
      if (c.in.size() > kMaxExchangeMessage + 64) {
        drop(id);
        return;
      }
    }
    if (c.refused) {  // read only to see it close: closing first would reset the connection
      c.in.clear();
      return;
    }
    for (;;) {
      Result<std::optional<ExchangeMessage>> m = take_exchange_message(c.in);
      if (!m) {
        drop(id);
        return;
      }
      if (!*m) break;
      messages.push_back(std::move(**m));
    }
    peer = c.peer;
    hello = c.hello;
    step = c.step;
    node = c.node;
  }
  auto reply = [&](ExchangeType type, std::string text) {
    ExchangeMessage m;
    m.type = type;
    m.text = std::move(text);
    send(id, encode_exchange_message(m));
  };
  for (ExchangeMessage& m : messages) {
    if (!hello) {
      if (m.type != ExchangeType::kHello) {
        reply(ExchangeType::kError, "the first message must be a hello");
        std::lock_guard lock(mutex_);
        drop(id);
        return;
      }
      StepKey claimed{m.job, m.attempt, m.step};
      if (Status ok = handlers_.authorize(peer, claimed, m.node); !ok) {
        reply(ExchangeType::kError, ok.error().message);
        std::lock_guard lock(mutex_);
        if (auto it = connections_.find(id); it != connections_.end()) it->second->refused = true;
        return;
      }
      hello = true;
      step = claimed;
      node = m.node;
      std::lock_guard lock(mutex_);
      auto it = connections_.find(id);
      if (it == connections_.end()) return;
      it->second->hello = true;
      it->second->step = step;
      it->second->node = node;
      continue;
    }
    switch (m.type) {
      case ExchangeType::kContribute: {
        uint32_t round = m.round;
        handlers_.contribute(step, round, node, std::move(m.bytes),
                             [this, id, round](Result<std::string> all) {
                               ExchangeMessage answer;
                               if (all) {
                                 answer.type = ExchangeType::kResult;
                                 answer.round = round;
                                 answer.bytes = std::move(*all);
                               } else {
                                 answer.type = ExchangeType::kError;
                                 answer.text = all.error().message;
                               }
                               send(id, encode_exchange_message(answer));
                             });
        break;
      }
      case ExchangeType::kEnd:
        handlers_.ended(step, node, m.exit_code, m.signal, m.text);
        reply(ExchangeType::kAck, "");
        break;
      default:
        reply(ExchangeType::kError,
              "unexpected message type " + std::to_string(static_cast<int>(m.type)));
        std::lock_guard lock(mutex_);
        drop(id);
        return;
    }
  }
}

void ShellSocket::send(uint64_t id, const std::string& bytes) {
  std::lock_guard lock(mutex_);
  auto it = connections_.find(id);
  if (it == connections_.end()) return;  // the shell has gone
  Connection& c = *it->second;
  c.out += bytes;
  while (!c.out.empty()) {
    ssize_t n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {
      drop(id);
      return;
    }
    c.out.erase(0, static_cast<size_t>(n));
  }
  bool want = !c.out.empty();
  if (want != c.watching_output) {
    uint32_t mask = want ? uint32_t{EPOLLIN} | uint32_t{EPOLLOUT} : uint32_t{EPOLLIN};
    epoll_event event{mask, {.u64 = id}};
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &event);
    c.watching_output = want;
  }
}

void ShellSocket::writable(uint64_t id) {
  send(id, "");
}

}  // namespace trellis
