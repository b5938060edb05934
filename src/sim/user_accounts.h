// The accounts of a simulated workload: a trace's users and groups as the tree of accounts that
// fair-share ranks (core/fair_share.h), so that `trellis sim --priority fairshare` runs a site's
// own trace under the same priority as trellisd. Each group becomes an account under the root
// ("g12"; --accounts group, the default) and each user a user of the account of its group
// ("u7"); with --accounts user every user is an account of its own, with one user in it. A user
// seen with several groups is a user of each of their accounts, charged in the one its job
// names. Jobs with no user or group (-1 in SWF) are "u-1" and "g-1".
//
// Shares are 1 each unless a shares file says otherwise: one "NAME SHARES" per line ("g12 40",
// "u7 2"; '#' starts a comment), shares a number >= 0. A line that does not read, a name that is
// neither a user nor a group of the trace, or a share that is negative or above 10^9, is an error
// naming the file and line.
//
//   Result<SimAccounts> accounts = sim_accounts(workload.jobs, SimAccountsFrom::kGroup, "");
//   accounts->assign(workload.jobs);
//   PriorityOrder order(accounts->tree, machine.node_count());
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/fair_share.h"
#include "core/job.h"
#include "core/result.h"

namespace trellis {

enum class SimAccountsFrom { kGroup, kUser };

struct SimAccounts {
  ShareTree tree;
  std::map<std::pair<int, int>, int> user_index;  // (user, group) -> tree node
  // The tree user `job` charges; -1 for a (user, group) not in the trace.
  int node_of(const Job& job) const;
  // Sets each job's association to node_of(job).
  void assign(std::vector<Job>& jobs) const;
};

// The lines of a shares file, by name; errors name `where` and the line.
Result<std::map<std::string, double>> parse_shares(std::string_view text, const std::string& where);

Result<SimAccounts> sim_accounts(const std::vector<Job>& jobs, SimAccountsFrom from,
                                 const std::string& shares_file);

}  // namespace trellis
