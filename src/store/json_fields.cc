#include "store/json_fields.h"

#include <cstdint>

namespace trellis::json_fields {

bool is_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t extra;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      extra = 1, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i <= extra) return false;
    for (size_t k = 1; k <= extra; ++k) {
      unsigned char b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    constexpr uint32_t kLeast[] = {0, 0x80, 0x800, 0x10000};  // shorter forms are overlong
    if (cp < kLeast[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += extra + 1;
  }
  return true;
}

// `replace` is only a fallback: the strings were checked by is_utf8().
std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool decode_ints(const std::string& text, std::vector<int>& out) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array()) return false;
  out.clear();
  out.reserve(j.size());
  for (const nlohmann::json& e : j) {
    if (!e.is_number_integer()) return false;
    int64_t v = e.get<int64_t>();
    if (v < INT32_MIN || v > INT32_MAX) return false;
    out.push_back(static_cast<int>(v));
  }
  return true;
}

bool decode_strings(const std::string& text, std::vector<std::string>& out) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array()) return false;
  out.clear();
  for (const nlohmann::json& e : j) {
    if (!e.is_string()) return false;
    out.push_back(e.get_ref<const std::string&>());
  }
  return true;
}

bool decode_env(const std::string& text, std::map<std::string, std::string>& out) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return false;
  out.clear();
  for (const auto& [key, value] : j.items()) {
    if (!value.is_string()) return false;
    out.emplace(key, value.get_ref<const std::string&>());
  }
  return true;
}

}  // namespace trellis::json_fields
