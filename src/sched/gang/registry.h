// GangPolicyRegistry: the gang (time-space sharing) policies by name, for `trellis list`,
// `trellis gang-sim --sched NAME` and `trellis sim --sched NAME`; an instance of the one Registry
// template (core/registry.h has the verbs), like AllocatorRegistry and PolicyRegistry.
//
//   dqt-<tap>        DQT with task allocation policy <tap>: maxtqlb, mintqlb, apa, ff, ffapa
//   fair-dqt-<tap>   Fair-DQT with that policy
//   fcfs-bb          FCFS on binary buddy partitions (batch baseline)
//   scan-up-bb       ScanUp on binary buddy partitions (batch baseline)
//   slurm-gang       Slurm-like rotating active row, at most K jobs per node
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/key_value.h"
#include "core/registry.h"
#include "sched/gang/gang_scheduler.h"

namespace trellis::gang {

struct GangPolicyOptions {
  int fanout = 2;             // DQT fan-out w (2 = binary buddy)
  int max_jobs_per_node = 4;  // slurm-gang's K (Slurm's OverSubscribe=FORCE default)
  // DQT policies run the message-passing protocol (Dqt) instead of the direct-call engine
  // (DirectDqt). Same slots, several times slower; for watching or checking the protocol.
  bool dqt_message_passing = false;
};

// The gang policies' options as key=value (trellis sim --sched-opt fanout=4): fanout= and
// max_jobs_per_node=, read with errors that name the policy, e.g. "gang policy 'dqt-ffapa' option
// fanout='1': expected a whole number of at least 2". Other keys are left to the caller (trellis
// sim also takes quantum= and trace_slots=), which checks for unknown ones with only().
//
//   KeyValueOptions given("gang policy");
//   given.add_list("fanout=4");
//   auto options = parse_gang_policy_options(given.for_component("dqt-ffapa"));
Result<GangPolicyOptions> parse_gang_policy_options(const ComponentOptions& given);

using GangPolicyFactory = std::function<Result<std::unique_ptr<GangScheduler>>(
    int processors, const GangPolicyOptions& options)>;

struct GangPolicyInfo {
  std::string name;
  std::string summary;  // one line for `trellis list`
  GangPolicyFactory factory;
};

// The gang policies by name: create(name, processors, options); errors name an unknown policy
// (listing the known ones, code not found) or, naming the policy, a machine or options it cannot
// use ("gang policy 'fcfs-bb': binary buddy: the machine must have ...").
class GangPolicyRegistry
    : public Registry<GangPolicyInfo, GangScheduler, int, const GangPolicyOptions&> {
 public:
  GangPolicyRegistry() : Registry("gang policy") {}

  // Every gang policy Trellis ships, registered once.
  static const GangPolicyRegistry& builtin();

  using Registry::create;
  // The policy `name` on `processors` processors with its default options.
  Result<std::unique_ptr<GangScheduler>> create(std::string_view name, int processors) const {
    return create(name, processors, GangPolicyOptions{});
  }
};

}  // namespace trellis::gang
