#include "sched/gang/registry.h"

#include "sched/gang/direct_dqt.h"
#include "sched/gang/dqt.h"
#include "sched/gang/fcfs_buddy.h"
#include "sched/gang/scan_up.h"
#include "sched/gang/slurm_gang.h"

namespace trellis::gang {

namespace {

// The policy `name` as a GangScheduler; a refusal names the policy.
template <typename T>
Result<std::unique_ptr<GangScheduler>> named(std::string_view name,
                                             Result<std::unique_ptr<T>> made) {
  if (!made) {
    Error e = made.error();
    e.message = "gang policy '" + std::string(name) + "': " + e.message;
    return e;
  }
  return std::unique_ptr<GangScheduler>(std::move(*made));
}

GangPolicyRegistry make_builtin() {
  GangPolicyRegistry r;
  const std::pair<TaskAllocationPolicy, const char*> taps[] = {
      {TaskAllocationPolicy::kFirstFitApa,
       "first subtree already queueing jobs of its size, else the one with fewest processors in "
       "use"},
      {TaskAllocationPolicy::kMaxTqlb,
       "subtree whose busiest processor is shared by the fewest jobs"},
      {TaskAllocationPolicy::kMinTqlb,
       "subtree whose least busy processor is shared by the fewest jobs"},
      {TaskAllocationPolicy::kApa, "subtree with the fewest processors assigned to jobs"},
      {TaskAllocationPolicy::kFirstFit, "subtree with the shortest queue of jobs of its size"},
  };
  for (bool fair : {false, true}) {
    for (const auto& [tap_of_entry, what] : taps) {
      // A copy: C++20 lambdas may not capture a structured binding (clang refuses it).
      TaskAllocationPolicy tap = tap_of_entry;
      std::string name = std::string(fair ? "fair-dqt-" : "dqt-") + std::string(to_string(tap));
      std::string summary = std::string(fair ? "Fair-DQT" : "DQT") +
                            " (distributed queue tree) time sharing; a new job goes to the " + what;
      r.add(GangPolicyInfo{name, summary,
                           [name, tap, fair](int processors, const GangPolicyOptions& o) {
                             DqtOptions d;
                             d.fanout = o.fanout;
                             d.policy = tap;
                             d.fair = fair;
                             if (o.dqt_message_passing)
                               return named(name, Dqt::make(name, processors, d));
                             return named(name, DirectDqt::make(name, processors, d));
                           }});
    }
  }
  r.add(GangPolicyInfo{"fcfs-bb", "batch: first come first served on binary buddy partitions",
                       [](int processors, const GangPolicyOptions&) {
                         return named("fcfs-bb", FcfsBuddy::make("fcfs-bb", processors));
                       }});
  r.add(GangPolicyInfo{"scan-up-bb",
                       "batch: ScanUp, one queue per power-of-two size, buddy partitions",
                       [](int processors, const GangPolicyOptions&) {
                         return named("scan-up-bb", ScanUp::make("scan-up-bb", processors));
                       }});
  r.add(GangPolicyInfo{
      "slurm-gang", "Slurm-like gang: rotating active row, at most K jobs per node",
      [](int processors, const GangPolicyOptions& o) {
        return named("slurm-gang", SlurmGang::make("slurm-gang", processors, o.max_jobs_per_node));
      }});
  return r;
}

}  // namespace

Result<GangPolicyOptions> parse_gang_policy_options(const ComponentOptions& given) {
  GangPolicyOptions o;
  auto fanout = given.whole_number("fanout", o.fanout, 2);
  if (!fanout) return fanout.error();
  auto max_jobs = given.whole_number("max_jobs_per_node", o.max_jobs_per_node, 1);
  if (!max_jobs) return max_jobs.error();
  o.fanout = static_cast<int>(*fanout);
  o.max_jobs_per_node = static_cast<int>(*max_jobs);
  return o;
}

const GangPolicyRegistry& GangPolicyRegistry::builtin() {
  static const GangPolicyRegistry registry = make_builtin();
  return registry;
}

}  // namespace trellis::gang
