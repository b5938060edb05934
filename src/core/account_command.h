// The words of a sacctmgr command, read as sacctmgr reads them, into a value: what to do, to
// what, and with which fields. `sacctmgr` and `trellis account` (cli/slurm/sacctmgr.cc) map their
// options onto it and send the change (core/accounts.h) to the cluster.
//
//   add|create   account|user|qos NAME[,NAME] [KEY=VALUE ...]
//   modify|update account|user|qos [NAME ...] [where KEY=VALUE ...] set KEY=VALUE ...
//   delete|remove account|user|qos [NAME ...] [where KEY=VALUE ...]
//   show|list    account|user|association|qos [KEY=VALUE ...] [format=A,B%20,...] [tree]
//                [withassoc]
//
// Verbs, entities and keys are any case and may be abbreviated as far as they stay unique
// ("assoc", "acc"), as sacctmgr takes them; a bare word names an account or user; name=,
// names=, user= (for users) and account= (for accounts) before `set` name them too. cluster= is
// accepted and ignored (one cluster). After `set`, QOS+=NAME and QOS-=NAME (and Flags+=, Flags-=)
// add to or take from a list; the change keeps them as keys "qos+" and "qos-". Errors name the
// word ("unknown entity 'acount'").
#pragma once

#include <string>
#include <vector>

#include "core/accounts.h"
#include "core/result.h"

namespace trellis {

struct AccountCommand {
  enum Action { kChange, kShow };
  enum Shown { kAccounts, kUsers, kAssociations, kQos };
  Action action = kShow;
  AccountChange change;                        // kChange
  Shown shown = kAccounts;                     // kShow
  std::map<std::string, std::string> filters;  // kShow: name=, account=, user=, in lower case
  std::vector<std::string> format;             // kShow: format= fields as written ("" = default)
  bool tree = false;
  bool with_assoc = false;
};

Result<AccountCommand> parse_account_command(const std::vector<std::string>& words);

}  // namespace trellis
