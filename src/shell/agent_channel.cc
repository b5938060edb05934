#include "shell/agent_channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace trellis {

Result<AgentChannel> AgentChannel::connect(const std::string& name, const ExchangeMessage& hello) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (name.empty() || name.size() + 1 > sizeof address.sun_path)
    return fail("agent socket name '" + name + "' is empty or too long");
  std::memcpy(address.sun_path + 1, name.data(), name.size());  // abstract: a leading NUL
  socklen_t length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(Error::Code::kUnavailable, std::string("socket: ") + strerror(errno));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), length) != 0) {
    int error = errno;
    ::close(fd);
    return fail(Error::Code::kUnavailable,
                "cannot reach the agent at @" + name + ": " + std::strerror(error));
  }
  AgentChannel channel(fd);
  if (Status sent = channel.send(hello); !sent) return sent.error();
  return channel;
}

AgentChannel::AgentChannel(AgentChannel&& other) noexcept
    : fd_(other.fd_), buffer_(std::move(other.buffer_)), queued_(std::move(other.queued_)) {
  other.fd_ = -1;
}

AgentChannel& AgentChannel::operator=(AgentChannel&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    buffer_ = std::move(other.buffer_);
    queued_ = std::move(other.queued_);
    other.fd_ = -1;
  }
  return *this;
}

AgentChannel::~AgentChannel() {
  if (fd_ >= 0) ::close(fd_);
}

Status AgentChannel::send(const ExchangeMessage& message) {
  std::string bytes = encode_exchange_message(message);
  const char* at = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::send(fd_, at, left, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return fail(Error::Code::kUnavailable,
                  std::string("the agent's socket: ") + std::strerror(errno));
    at += n;
    left -= static_cast<size_t>(n);
  }
  return Ok{};
}

Result<std::vector<ExchangeMessage>> AgentChannel::receive() {
  std::vector<ExchangeMessage> out = std::move(queued_);
  queued_.clear();
  char chunk[65536];
  ssize_t n;
  do {
    n = ::recv(fd_, chunk, sizeof chunk, MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n == 0) return fail(Error::Code::kUnavailable, "the agent closed the connection");
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    return fail(Error::Code::kUnavailable,
                std::string("the agent's socket: ") + std::strerror(errno));
  if (n > 0) buffer_.append(chunk, static_cast<size_t>(n));
  for (;;) {
    Result<std::optional<ExchangeMessage>> message = take_exchange_message(buffer_);
    if (!message) return message.error();
    if (!*message) break;
    out.push_back(std::move(**message));
  }
  return out;
}

Result<ExchangeMessage> AgentChannel::wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (queued_.empty()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return fail(Error::Code::kUnavailable, "the agent did not answer");
    pollfd ready{fd_, POLLIN, 0};
    int n = ::poll(&ready, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    Result<std::vector<ExchangeMessage>> got = receive();
    if (!got) return got.error();
    queued_ = std::move(*got);
  }
  ExchangeMessage first = std::move(queued_.front());
  queued_.erase(queued_.begin());
  return first;
}

}  // namespace trellis
