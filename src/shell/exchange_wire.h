// The messages between a job shell (trellis-shell) and its node's agent, on the agent's unix
// socket (an abstract name, see shell_socket_name()). Each message is its length (4 bytes,
// little-endian, the type byte included), a type byte and the type's fields; integers are
// little-endian, strings are a 4-byte length and the bytes.
//
//   shell -> agent  kHello       job i64, attempt i32, step i32, node str
//                                    who the shell is; the agent checks the peer's pid and uid
//                                    (SO_PEERCRED) against the task it launched
//   shell -> agent  kContribute  round u32, bytes str     this node's part of barrier `round`
//   agent -> shell  kResult      round u32, bytes str     every node's parts, concatenated
//   shell -> agent  kEnd         exit_code i32, signal i32, reason str
//                                    how the step ended on this node, for the exit report
//   agent -> shell  kAck         (nothing)                 kEnd recorded
//   agent -> shell  kError       message str               the exchange failed; the step ends
//
// A shell sends kHello first, then any of kContribute (rounds 1, 2, ... in order, the next only
// after the previous kResult) and at most one kEnd. Sizes are bounded (kMaxExchangeMessage).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace trellis {

// One barrier's contributions of a whole step, and so any one message, are at most this large.
inline constexpr uint32_t kMaxExchangeMessage = 256u << 20;

enum class ExchangeType : uint8_t {
  kHello = 1,
  kContribute = 2,
  kResult = 3,
  kEnd = 4,
  kAck = 5,
  kError = 6,
};

struct ExchangeMessage {
  ExchangeType type = ExchangeType::kHello;
  // kHello
  int64_t job = 0;
  int32_t attempt = 0;
  int32_t step = 0;
  std::string node;
  // kContribute, kResult
  uint32_t round = 0;
  std::string bytes;
  // kEnd
  int32_t exit_code = 0;
  int32_t signal = 0;
  // kEnd's reason, kError's message
  std::string text;
};

// The message with its length prefix, ready to write.
std::string encode_exchange_message(const ExchangeMessage& message);

// Takes one whole message off the front of `buffer` (bytes read so far): nullopt when more bytes
// are needed; an error for a malformed or oversized message (the connection is then dropped).
Result<std::optional<ExchangeMessage>> take_exchange_message(std::string& buffer);

// The abstract unix socket name ("\0trellis-agent-...", without the leading NUL) of the agent
// whose state directory has this tag; shells get it on their command line.
std::string shell_socket_name(std::string_view agent_tag);

}  // namespace trellis
