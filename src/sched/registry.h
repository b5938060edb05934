// PolicyRegistry: queue-policy names -> factories, as AllocatorRegistry is for allocators.
// `trellis list` prints both; commands pick a policy by name (--sched easy).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/registry.h"
#include "sched/policy.h"

namespace trellis {

// key=value options of a queue policy (e.g. njob=4 for fattree-batch); errors name the policy.
struct PolicyOptions : KeyValueOptions {
  PolicyOptions() : KeyValueOptions("queue policy") {}
};

using PolicyFactory = std::function<Result<std::unique_ptr<QueuePolicy>>(
    const Machine& machine, const PolicyOptions& options)>;

struct PolicyInfo {
  std::string name;
  std::string summary;  // one line for `trellis list`
  PolicyFactory factory;
};

// The queue policies by name (core/registry.h has the verbs): create(name, machine, options).
class PolicyRegistry
    : public Registry<PolicyInfo, QueuePolicy, const Machine&, const PolicyOptions&> {
 public:
  PolicyRegistry() : Registry("queue policy") {}

  // Every queue policy Trellis ships: fcfs, easy, conservative, scan-up, scan-down,
  // fattree-batch.
  static const PolicyRegistry& builtin();

  using Registry::create;
  // The named policy for `machine` with its default options.
  Result<std::unique_ptr<QueuePolicy>> create(std::string_view name, const Machine& machine) const {
    return create(name, machine, PolicyOptions{});
  }
};

}  // namespace trellis
