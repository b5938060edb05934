#include "core/key_value.h"

#include <charconv>
#include <cmath>

namespace trellis {

Result<long> parse_whole_number(std::string_view text) {
  long value = 0;
  const char* end = text.data() + text.size();
  auto [stop, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || stop != end)
    return fail(std::string("'").append(text).append("' is not a whole number"));
  return value;
}

Result<double> parse_number(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [stop, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || stop != end || !std::isfinite(value))
    return fail(std::string("'").append(text).append("' is not a number"));
  return value;
}

Status KeyValueOptions::add(std::string_view key_equals_value) {
  size_t eq = key_equals_value.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return fail(owner_kind_ + " option '" + std::string(key_equals_value) + "' is not key=value");
  values_[std::string(key_equals_value.substr(0, eq))] =
      std::string(key_equals_value.substr(eq + 1));
  return Ok{};
}

Status KeyValueOptions::add_list(std::string_view comma_separated) {
  while (!comma_separated.empty()) {
    size_t comma = comma_separated.find(',');
    if (auto ok = add(comma_separated.substr(0, comma)); !ok) return ok;
    comma_separated =
        comma == std::string_view::npos ? std::string_view{} : comma_separated.substr(comma + 1);
  }
  return Ok{};
}

std::optional<std::string> KeyValueOptions::get(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

ComponentOptions KeyValueOptions::for_component(std::string_view name) const {
  return ComponentOptions(*this, name);
}

Status KeyValueOptions::only(std::initializer_list<std::string_view> known,
                             std::string_view who) const {
  return for_component(who).only(known);
}

Result<long> KeyValueOptions::whole_number(const std::string& key, long fallback,
                                           long minimum) const {
  return for_component("").whole_number(key, fallback, minimum);
}

Result<double> KeyValueOptions::number_above(const std::string& key, double fallback,
                                             double above) const {
  return for_component("").number_above(key, fallback, above);
}

std::string ComponentOptions::subject() const {
  return options_.owner_kind() + (name_.empty() ? "" : " '" + name_ + "'");
}

Error ComponentOptions::bad_value(const std::string& key, std::string_view why) const {
  return fail(subject() + " option " + key + "='" + get(key).value_or("") +
              "': " + std::string(why));
}

Status ComponentOptions::only(std::initializer_list<std::string_view> known) const {
  for (const auto& [key, value] : options_.values()) {
    bool found = false;
    for (auto k : known) found = found || k == key;
    if (!found) {
      std::string list;
      for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      return fail(subject() + " has no option '" + key + "'" +
                  (list.empty() ? " (it takes none)" : " (it takes: " + list + ")"));
    }
  }
  return Ok{};
}

Result<long> ComponentOptions::whole_number(const std::string& key, long fallback,
                                            long minimum) const {
  auto text = get(key);
  if (!text) return fallback;
  auto value = parse_whole_number(*text);
  if (!value || *value < minimum)
    return bad_value(
        key, std::string("expected a whole number of at least ").append(std::to_string(minimum)));
  return *value;
}

Result<double> ComponentOptions::number_above(const std::string& key, double fallback,
                                              double above) const {
  auto text = get(key);
  if (!text) return fallback;
  auto value = parse_number(*text);
  if (!value || !(*value > above)) {
    std::string bound = std::to_string(above);
    bound.erase(bound.find_last_not_of('0') + 1);
    if (!bound.empty() && bound.back() == '.') bound.pop_back();
    return bad_value(key, std::string("expected a number above ").append(bound));
  }
  return *value;
}

Result<std::string> ComponentOptions::choice(
    const std::string& key, std::string fallback,
    std::initializer_list<std::string_view> choices) const {
  auto text = get(key);
  if (!text) return fallback;
  std::string expected;
  size_t i = 0;
  for (auto c : choices) {
    if (c == *text) return *text;
    expected += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + std::string(c);
    ++i;
  }
  return bad_value(key, "expected " + expected);
}

}  // namespace trellis
