// How the list and map fields of a stored job (node lists, argv, environment) are kept in a
// text column: as JSON, read back strictly (a field that does not decode is a corrupt row, never
// a guess). Shared by the store backends so that every backend writes the same text.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace trellis::json_fields {

// True when `s` is well-formed UTF-8, which JSON text must be.
bool is_utf8(std::string_view s);
// `j` as compact text; never throws (strings are checked with is_utf8() before they are stored).
std::string dump(const nlohmann::json& j);

// [1,2,3]
template <typename Int>
std::string encode_ints(const std::vector<Int>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) text += ',';
    text += std::to_string(values[i]);
  }
  return text + "]";
}

// Each false when the text is not what the field holds (the row is corrupt).
bool decode_ints(const std::string& text, std::vector<int>& out);
bool decode_strings(const std::string& text, std::vector<std::string>& out);
bool decode_env(const std::string& text, std::map<std::string, std::string>& out);

}  // namespace trellis::json_fields
