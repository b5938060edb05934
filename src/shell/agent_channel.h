// AgentChannel: a job shell's connection to its node's agent (shell/exchange_wire.h says what
// goes over it): the cross-node half of each PMI barrier, and how the step ended on this node.
// Connected when first needed, so that a step that never wires up costs the agent nothing.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "shell/exchange_wire.h"

namespace trellis {

class AgentChannel {
 public:
  // Connects to the agent's abstract socket `name` and says hello (job, attempt, step, node).
  static Result<AgentChannel> connect(const std::string& name, const ExchangeMessage& hello);

  AgentChannel(AgentChannel&& other) noexcept;
  AgentChannel& operator=(AgentChannel&& other) noexcept;
  ~AgentChannel();

  int fd() const { return fd_; }
  Status send(const ExchangeMessage& message);
  // Reads what the socket has (call when poll says it is readable): the whole messages so far.
  // An error when the agent closed the connection or sent something malformed.
  Result<std::vector<ExchangeMessage>> receive();
  // Waits up to `timeout` for the next message (for kEnd's acknowledgement).
  Result<ExchangeMessage> wait(std::chrono::milliseconds timeout);

 private:
  explicit AgentChannel(int fd) : fd_(fd) {}
  int fd_ = -1;
  std::string buffer_;
  std::vector<ExchangeMessage> queued_;  // taken by receive() while wait() looked for one
};

}  // namespace trellis
