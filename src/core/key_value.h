// KeyValueOptions: settings given as key=value on a command line or in a spec (--alloc-opt,
// --sched-opt, ...). The one parser of that form; owners (allocators, queue and gang policies)
// say which keys they take, and the errors name the owner, the key and the keys it takes.
//
//   KeyValueOptions o("queue policy");
//   o.add("njob=4");                         // or o.add_list("njob=4,unit=8")
//   o.only({"njob", "unit"}, "fattree-batch");
//   auto njob = o.whole_number("njob", 4, 1);
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace trellis {

// A whole number, all of `text` (no sign for negatives other than '-', no trailing text).
Result<long> parse_whole_number(std::string_view text);
// A finite decimal number, all of `text`.
Result<double> parse_number(std::string_view text);

class KeyValueOptions {
 public:
  // `owner_kind` names what the options configure, for messages: "allocator", "queue policy".
  explicit KeyValueOptions(std::string owner_kind) : owner_kind_(std::move(owner_kind)) {}

  // Parses one "key=value"; a later value for the same key replaces the earlier one.
  Status add(std::string_view key_equals_value);
  // Parses "key=value,key=value,...".
  Status add_list(std::string_view comma_separated);

  std::optional<std::string> get(const std::string& key) const;
  bool empty() const { return values_.empty(); }
  const std::map<std::string, std::string>& values() const { return values_; }
  const std::string& owner_kind() const { return owner_kind_; }

  // An error naming the first key not in `known`, the owner `who` and the keys it takes.
  Status only(std::initializer_list<std::string_view> known, std::string_view who) const;

  // The value of `key` as a whole number of at least `minimum`, or `fallback` when absent.
  Result<long> whole_number(const std::string& key, long fallback, long minimum) const;
  // The value of `key` as a number greater than `above`, or `fallback` when absent.
  Result<double> number_above(const std::string& key, double fallback, double above) const;

 private:
  std::string owner_kind_;
  std::map<std::string, std::string> values_;
};

}  // namespace trellis
