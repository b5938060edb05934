#include "shell/kv_records.h"

#include <cstdint>

namespace trellis {
namespace {

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

bool get_u32(std::string_view bytes, size_t& at, uint32_t& v) {
  if (bytes.size() - at < 4) return false;
  v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  at += 4;
  return true;
}

}  // namespace

void append_kv_record(std::string& out, std::string_view key, std::string_view value) {
  put_u32(out, static_cast<uint32_t>(key.size()));
  out.append(key);
  put_u32(out, static_cast<uint32_t>(value.size()));
  out.append(value);
}

std::string encode_kv_records(const std::vector<KeyValue>& pairs) {
  std::string out;
  for (const auto& [k, v] : pairs) append_kv_record(out, k, v);
  return out;
}

Result<std::vector<KeyValue>> decode_kv_records(std::string_view bytes) {
  std::vector<KeyValue> out;
  size_t at = 0;
  while (at < bytes.size()) {
    size_t record = at;
    uint32_t klen = 0, vlen = 0;
    auto truncated = [&] {
      return fail("key-value records: the record at byte " + std::to_string(record) +
                  " is truncated (" + std::to_string(bytes.size()) + " bytes in all)");
    };
    if (!get_u32(bytes, at, klen) || bytes.size() - at < klen) return truncated();
    std::string key(bytes.substr(at, klen));
    at += klen;
    if (!get_u32(bytes, at, vlen) || bytes.size() - at < vlen) return truncated();
    out.emplace_back(std::move(key), std::string(bytes.substr(at, vlen)));
    at += vlen;
  }
  return out;
}

}  // namespace trellis
