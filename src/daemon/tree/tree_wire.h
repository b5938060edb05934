// The control tree's wire format: length-prefixed frames on a TCP connection, several requests in
// flight on one connection, each answered by id. (gRPC cost a 64-agent gang switch about 45 ms of
// CPU on a 2-core host, thread hand-offs and HTTP/2 for every tree edge; plain frames on kept
// connections cost about 1.5 ms for the same tree.)
//
//   frame   = length (u32, little-endian, of what follows) | kind (u8) | id (u64) | payload
//   kind 1  a request:         payload = a TreeMessage
//   kind 2  its answer:        payload = a TreeAnswer
//   kind 3  its refusal:       payload = code (u32, a gRPC status code) | message (UTF-8)
//
// A frame longer than kMaxFrameBytes, or of another kind, ends the connection. These are pure
// functions of bytes, so that the fuzzer drives them with no socket.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace trellis {

enum class FrameKind : uint8_t { kRequest = 1, kAnswer = 2, kRefusal = 3 };

constexpr size_t kFrameHeaderBytes = 4 + 1 + 8;
constexpr size_t kMaxFrameBytes = 64 * 1024 * 1024;

struct Frame {
  FrameKind kind = FrameKind::kRequest;
  uint64_t id = 0;
  std::string payload;
};

// The bytes of a frame.
std::string encode_frame(FrameKind kind, uint64_t id, std::string_view payload);
// A refusal's payload.
std::string encode_refusal(int code, std::string_view message);
struct Refusal {
  int code = 0;
  std::string message;
};
Result<Refusal> decode_refusal(std::string_view payload);

// Takes the first whole frame off the front of `buffer`: nothing while it holds less than a frame,
// an error (the connection must end) for a frame too long or of an unknown kind.
Result<std::optional<Frame>> take_frame(std::string& buffer);

}  // namespace trellis
