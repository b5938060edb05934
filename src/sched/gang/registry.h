// GangPolicyRegistry: the gang (time-space sharing) policies by name, for `trellis list`,
// `trellis gang-sim --sched NAME` and `trellis sim --sched NAME`.
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
#include <vector>

#include "sched/gang/gang_scheduler.h"

namespace trellis::gang {

struct GangPolicyOptions {
  int fanout = 2;             // DQT fan-out w (2 = binary buddy)
  int max_jobs_per_node = 4;  // slurm-gang's K (Slurm's OverSubscribe=FORCE default)
  // DQT policies run the message-passing protocol (Dqt) instead of the direct-call engine
  // (DirectDqt). Same slots, several times slower; for watching or checking the protocol.
  bool dqt_message_passing = false;
};

struct GangPolicyInfo {
  std::string name;
  std::string summary;
  std::function<Result<std::unique_ptr<GangScheduler>>(int processors, const GangPolicyOptions&)>
      make;
};

class GangPolicyRegistry {
 public:
  // Every policy Trellis has.
  static const GangPolicyRegistry& builtin();

  void add(GangPolicyInfo info);
  const std::vector<GangPolicyInfo>& all() const { return policies_; }
  bool has(std::string_view name) const;
  // The registered names, comma separated, for messages.
  std::string names() const;
  // The policy `name` on `processors` processors; errors name an unknown policy (listing the
  // known ones) or a machine the policy cannot use.
  Result<std::unique_ptr<GangScheduler>> create(std::string_view name, int processors,
                                                const GangPolicyOptions& options = {}) const;

 private:
  std::vector<GangPolicyInfo> policies_;
};

}  // namespace trellis::gang
