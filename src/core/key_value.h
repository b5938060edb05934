// KeyValueOptions: settings given as key=value on a command line or in a spec (--alloc-opt,
// --sched-opt, ...). The one parser of that form; owners (allocators, queue and gang policies)
// say which keys they take, and the errors name the owner's kind, the owner, the key and the
// keys it takes. Nothing here throws: every reading returns a Result.
//
//   KeyValueOptions given("queue policy");
//   given.add("njob=4");                     // or given.add_list("njob=4,unit=8")
//   ComponentOptions o = given.for_component("fattree-batch");
//   if (auto ok = o.only({"njob", "unit"}); !ok) return ok.error();
//   auto njob = o.whole_number("njob", 4, 1);
//
// Errors read "queue policy 'fattree-batch' has no option 'speed' (it takes: njob, unit)" and
// "queue policy 'fattree-batch' option njob='0': expected a whole number of at least 1".
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

class ComponentOptions;

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

  // The options as the component `name` (of kind owner_kind()) reads them: its errors name it.
  // The view refers to these options, which must outlive it.
  ComponentOptions for_component(std::string_view name) const;

  // for_component(who).only(known).
  Status only(std::initializer_list<std::string_view> known, std::string_view who) const;

  // As ComponentOptions's, for options that belong to no one component (their errors name only
  // the kind: "gang policy option fanout='1': ...").
  Result<long> whole_number(const std::string& key, long fallback, long minimum) const;
  Result<double> number_above(const std::string& key, double fallback, double above) const;

 private:
  std::string owner_kind_;
  std::map<std::string, std::string> values_;
};

// Key=value options as one named component reads them (KeyValueOptions::for_component).
class ComponentOptions {
 public:
  ComponentOptions(const KeyValueOptions& options, std::string_view name)
      : options_(options), name_(name) {}

  // An error naming the first key not in `known`, this component and the keys it takes.
  Status only(std::initializer_list<std::string_view> known) const;
  std::optional<std::string> get(const std::string& key) const { return options_.get(key); }

  // The value of `key` as a whole number of at least `minimum`, or `fallback` when absent.
  Result<long> whole_number(const std::string& key, long fallback, long minimum) const;
  // The value of `key` as a number greater than `above`, or `fallback` when absent.
  Result<double> number_above(const std::string& key, double fallback, double above) const;
  // The value of `key`, which must be one of `choices`, or `fallback` when absent.
  Result<std::string> choice(const std::string& key, std::string fallback,
                             std::initializer_list<std::string_view> choices) const;
  // An error about the value of `key`: "<kind> '<name>' option key='value': why".
  Error bad_value(const std::string& key, std::string_view why) const;

  // "<kind> '<name>'", or "<kind>" for no name: how errors name the component.
  std::string subject() const;

 private:
  const KeyValueOptions& options_;
  std::string name_;
};

}  // namespace trellis
