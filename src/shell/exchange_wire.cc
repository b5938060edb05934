#include "shell/exchange_wire.h"

#include <cstring>

namespace trellis {
namespace {

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
void put_string(std::string& out, std::string_view s) {
  put_u32(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}

struct Reader {
  std::string_view bytes;
  size_t at = 0;
  bool ok = true;
  uint64_t unsigned_bytes(int n) {
    if (bytes.size() - at < static_cast<size_t>(n)) {
      ok = false;
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < n; ++i)
      v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
    at += static_cast<size_t>(n);
    return v;
  }
  uint32_t u32() { return static_cast<uint32_t>(unsigned_bytes(4)); }
  int32_t i32() { return static_cast<int32_t>(u32()); }
  int64_t i64() { return static_cast<int64_t>(unsigned_bytes(8)); }
  std::string string() {
    uint32_t length = u32();
    if (!ok || bytes.size() - at < length) {
      ok = false;
      return {};
    }
    std::string s(bytes.substr(at, length));
    at += length;
    return s;
  }
};

}  // namespace

std::string encode_exchange_message(const ExchangeMessage& m) {
  std::string body;
  body += static_cast<char>(m.type);
  switch (m.type) {
    case ExchangeType::kHello:
      put_u64(body, static_cast<uint64_t>(m.job));
      put_u32(body, static_cast<uint32_t>(m.attempt));
      put_u32(body, static_cast<uint32_t>(m.step));
      put_string(body, m.node);
      break;
    case ExchangeType::kContribute:
    case ExchangeType::kResult:
      put_u32(body, m.round);
      put_string(body, m.bytes);
      break;
    case ExchangeType::kEnd:
      put_u32(body, static_cast<uint32_t>(m.exit_code));
      put_u32(body, static_cast<uint32_t>(m.signal));
      put_string(body, m.text);
      break;
    case ExchangeType::kAck:
      break;
    case ExchangeType::kError:
      put_string(body, m.text);
      break;
  }
  std::string out;
  out.reserve(body.size() + 4);
  put_u32(out, static_cast<uint32_t>(body.size()));
  return out + body;
}

Result<std::optional<ExchangeMessage>> take_exchange_message(std::string& buffer) {
  if (buffer.size() < 4) return std::optional<ExchangeMessage>();
  Reader header{buffer};
  uint32_t length = header.u32();
  if (length == 0) return fail("exchange message: empty");
  if (length > kMaxExchangeMessage)
    return fail("exchange message of " + std::to_string(length) + " bytes; at most " +
                std::to_string(kMaxExchangeMessage));
  if (buffer.size() - 4 < length) return std::optional<ExchangeMessage>();
  Reader in{std::string_view(buffer).substr(4, length)};
  ExchangeMessage m;
  uint8_t type = static_cast<uint8_t>(in.unsigned_bytes(1));
  switch (type) {
    case static_cast<uint8_t>(ExchangeType::kHello):
      m.job = in.i64();
      m.attempt = in.i32();
      m.step = in.i32();
      m.node = in.string();
      break;
    case static_cast<uint8_t>(ExchangeType::kContribute):
    case static_cast<uint8_t>(ExchangeType::kResult):
      m.round = in.u32();
      m.bytes = in.string();
      break;
    case static_cast<uint8_t>(ExchangeType::kEnd):
      m.exit_code = in.i32();
      m.signal = in.i32();
      m.text = in.string();
      break;
    case static_cast<uint8_t>(ExchangeType::kAck):
      break;
    case static_cast<uint8_t>(ExchangeType::kError):
      m.text = in.string();
      break;
    default:
      return fail("exchange message: unknown type " + std::to_string(type));
  }
  if (!in.ok || in.at != length)
    return fail("exchange message of type " + std::to_string(type) + ": malformed fields");
  m.type = static_cast<ExchangeType>(type);
  buffer.erase(0, 4 + static_cast<size_t>(length));
  return std::optional<ExchangeMessage>(std::move(m));
}

std::string shell_socket_name(std::string_view agent_tag) {
  return "trellis-agent-shells-" + std::string(agent_tag);
}

}  // namespace trellis
