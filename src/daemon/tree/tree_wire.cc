#include "daemon/tree/tree_wire.h"

namespace trellis {
namespace {

void put_le(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t get_le(std::string_view in, size_t at, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i)
    value |= static_cast<uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  return value;
}

}  // namespace

std::string encode_frame(FrameKind kind, uint64_t id, std::string_view payload) {
  std::string out;
  out.reserve(kFrameHeaderBytes + payload.size());
  put_le(out, 1 + 8 + payload.size(), 4);
  out.push_back(static_cast<char>(kind));
  put_le(out, id, 8);
  out.append(payload);
  return out;
}

std::string encode_refusal(int code, std::string_view message) {
  std::string out;
  put_le(out, static_cast<uint32_t>(code), 4);
  out.append(message);
  return out;
}

Result<Refusal> decode_refusal(std::string_view payload) {
  if (payload.size() < 4) return fail("a refusal without its code");
  return Refusal{static_cast<int>(get_le(payload, 0, 4)), std::string(payload.substr(4))};
}

Result<std::optional<Frame>> take_frame(std::string& buffer) {
  if (buffer.size() < 4) return std::optional<Frame>();
  const uint64_t length = get_le(buffer, 0, 4);
  if (length < 1 + 8) return fail("a frame of " + std::to_string(length) + " bytes (too short)");
  if (length > kMaxFrameBytes)
    return fail("a frame of " + std::to_string(length) + " bytes (at most " +
                std::to_string(kMaxFrameBytes) + ")");
  if (buffer.size() < 4 + length) return std::optional<Frame>();
  const auto kind = static_cast<uint8_t>(buffer[4]);
  if (kind < 1 || kind > 3) return fail("a frame of unknown kind " + std::to_string(kind));
  Frame frame;
  frame.kind = static_cast<FrameKind>(kind);
  frame.id = get_le(buffer, 5, 8);
  frame.payload = buffer.substr(kFrameHeaderBytes, length - 1 - 8);
  buffer.erase(0, 4 + length);
  return std::optional<Frame>(std::move(frame));
}

}  // namespace trellis
