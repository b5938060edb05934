// A QOS (quality of service), as Slurm's sacctmgr keeps them: a named class of jobs with its own
// priority, its own charge rate, and limits on what its jobs may hold. The site's QOS live in the
// account book (core/accounts.h), changed only through its apply(), so they are stored, checked
// and shared by every controller with the accounts. "normal" exists from the start, as Slurm
// creates it with the cluster, and is what a job gets unless its association says otherwise.
//
//   sacctmgr add qos high
//   sacctmgr modify qos high set Priority=100 MaxJobsPerUser=2 MaxSubmitJobsPerUser=3
//       MaxTRESPerUser=node=2 GrpTRES=node=4 MaxWall=01:00:00 UsageFactor=2 Flags=DenyOnLimit
//
// What each field does, and where:
//   Priority              the QOS factor of the job's priority (its Priority over the highest of
//                         any QOS), weighted by [priority] weight_qos (sched/priority_order.h)
//   UsageFactor           scales the usage its jobs charge to fair-share (0 = free, 2 = double)
//   MaxSubmitJobsPerUser  pending + running jobs of one user in it: checked at submission
//   MaxJobsPerUser        running jobs of one user in it         } held back in the queue by
//   MaxTRESPerUser=node=N nodes held by one user's jobs in it    } the scheduler's limits
//   GrpTRES=node=N        nodes held by all of its jobs          } (daemon/account_limits.h)
//   MaxWall               a job's time limit: a job without one gets MaxWall; a longer one waits
//   Flags=DenyOnLimit     a job that breaks a Max limit on its own is refused at submission
//                         instead of waiting for ever (GrpTRES counts as a Max here, as Slurm's)
// Preemption (Preempt, PreemptMode, GraceTime, PreemptExemptTime) is not built yet: those keys are
// refused with a message that says so rather than kept and ignored.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/tres.h"

namespace trellis {

struct Qos {
  std::string name;
  std::string description;
  int64_t priority = 0;
  double usage_factor = 1;
  std::optional<int64_t> max_jobs_per_user;
  std::optional<int64_t> max_submit_per_user;
  Tres max_tres_per_user;
  Tres grp_tres;
  std::optional<int64_t> max_wall;  // seconds
  bool deny_on_limit = false;
  bool operator==(const Qos&) const = default;
};

// Sets the fields of `set` (sacctmgr's keys, in lower case: priority, usagefactor,
// maxjobsperuser, maxsubmitjobsperuser, maxtresperuser, grptres, maxwall, flags, description)
// on `qos`, or says which key or value is wrong and leaves it as it was. -1 clears a limit.
Status apply_qos_settings(const std::map<std::string, std::string>& set, Qos& qos);

// The fields set, as one line of "key=value" words ("priority=100 maxjobsperuser=2
// flags=denyonlimit"): how the store keeps them, read back by decode_qos_settings.
std::string encode_qos_settings(const Qos& qos);
Status decode_qos_settings(std::string_view text, Qos& qos);

// sacctmgr's spellings: "01:00:00", "2-00:00:00" for MaxWall; "1.000000" for UsageFactor;
// "DenyOnLimit" (or "") for Flags.
std::string format_wall(int64_t seconds);
std::string format_usage_factor(double factor);
std::string format_qos_flags(const Qos& qos);

// Parses a wall time as Slurm writes one: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS;
// "-1" or "unlimited" is nullopt (no limit). `what` names the field in errors.
Result<std::optional<int64_t>> parse_wall(std::string_view text, std::string_view what);

}  // namespace trellis
