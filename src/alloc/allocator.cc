#include "alloc/allocator.h"

namespace trellis {

Status Allocator::check(const Request& request) const {
  if (request.nodes < 1) return fail("a job needs at least one node");
  if (request.nodes > machine_.node_count())
    return fail("the job asks for " + std::to_string(request.nodes) + " nodes but " +
                machine_.describe() + " has only " + std::to_string(machine_.node_count()));
  return Ok{};
}

Status AllocatorOptions::add(std::string_view key_equals_value) {
  size_t eq = key_equals_value.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return fail("allocator option '" + std::string(key_equals_value) + "' is not key=value");
  values[std::string(key_equals_value.substr(0, eq))] =
      std::string(key_equals_value.substr(eq + 1));
  return Ok{};
}

std::optional<std::string> AllocatorOptions::get(const std::string& key) const {
  auto it = values.find(key);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

Status AllocatorOptions::only(std::initializer_list<std::string_view> known,
                              std::string_view who) const {
  for (const auto& [key, value] : values) {
    bool found = false;
    for (auto k : known) found = found || k == key;
    if (!found) {
      std::string list;
      for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      return fail("allocator '" + std::string(who) + "' has no option '" + key + "'" +
                  (list.empty() ? " (it takes none)" : " (it takes: " + list + ")"));
    }
  }
  return Ok{};
}

}  // namespace trellis
