// PolicyRegistry: queue-policy names -> factories, as AllocatorRegistry is for allocators.
// `trellis list` prints both; commands pick a policy by name (--sched easy).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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

class PolicyRegistry {
 public:
  // Every queue policy Trellis ships: fcfs, easy, conservative, scan-up, scan-down,
  // fattree-batch.
  static const PolicyRegistry& builtin();

  void add(PolicyInfo info);
  const std::vector<PolicyInfo>& all() const { return infos_; }
  const PolicyInfo* find(std::string_view name) const;
  // The registered names, comma separated, for messages.
  std::string names() const;
  // Builds the named policy; errors name unknown policies and list the known ones.
  Result<std::unique_ptr<QueuePolicy>> create(std::string_view name, const Machine& machine,
                                              const PolicyOptions& options = {}) const;

 private:
  std::vector<PolicyInfo> infos_;
};

}  // namespace trellis
