// The accounts of a site, as a value: a tree of accounts under "root", the users, and which
// accounts each user may charge (an association: user + account, with its own shares and
// limits), as Slurm's sacctmgr keeps them. The store keeps a book (StateStore::account_book) and
// changes it only through apply() below, so the rules are checked in one place, whichever
// controller or command made the change.
//
// A book with no users is a site without accounts: any job is accepted, charged to no account.
// Once a user exists, every submitter must have an association (Slurm's
// AccountingStorageEnforce=associations): job_account() gives the account a job is charged to.
//
//   AccountBook book;
//   book.apply({.verb = AccountChange::kAdd, .entity = AccountChange::kAccount,
//               .names = {"physics"}, .set = {{"fairshare", "40"}}});
//   book.apply({.verb = AccountChange::kAdd, .entity = AccountChange::kUser,
//               .names = {"alice"}, .set = {{"account", "physics"}}});
//   book.job_account("alice", "");   // "physics", her default account
//   book.job_account("alice", "chem");  // error: "user alice has no association with account chem"
//
// Rules apply() keeps: names are 1-64 characters of letters, digits, '_', '-' and '.', stored in
// lower case (Slurm's); an account's parent exists and is an account; no cycle; shares are whole
// numbers 0-1000000 (Fairshare=parent, as Slurm's, is taken as 1); a user's default account is
// one of its associations; an account with sub-accounts or users cannot be deleted, nor the root;
// a user's last association deleted deletes the user. A change that breaks a rule changes nothing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/fair_share.h"
#include "core/qos.h"
#include "core/result.h"
#include "core/tres.h"

namespace trellis {

// Limits an association or account may carry (sacctmgr's names). Unset: no limit.
struct AssocLimits {
  Tres grp_tres;                      // GrpTRES: held at once by all its jobs (node=4)
  std::optional<int64_t> max_jobs;    // MaxJobs: running at once, per user
  std::optional<int64_t> max_submit;  // MaxSubmitJobs: pending or running, per user
  std::optional<int64_t> max_wall;    // MaxWall: seconds, a job's time limit (the QOS's first)
  bool empty() const { return grp_tres.empty() && !max_jobs && !max_submit && !max_wall; }
  bool operator==(const AssocLimits&) const = default;
};

struct Account {
  std::string name;
  std::string parent;  // "" for root only
  int64_t shares = 1;
  std::string description;
  std::string organization;
  AssocLimits limits;
  // The QOS its users may use: its own list, or (empty) its parent's; root's empty = "normal".
  std::vector<std::string> qos;
  bool operator==(const Account&) const = default;
};

enum class AdminLevel { kNone, kOperator, kAdministrator };
std::string_view admin_level_name(AdminLevel level);  // "None", "Operator", "Administrator"

struct AccountUser {
  std::string name;
  std::string default_account;
  AdminLevel admin = AdminLevel::kNone;
  bool operator==(const AccountUser&) const = default;
};

struct Association {
  std::string user;
  std::string account;
  int64_t shares = 1;
  AssocLimits limits;
  std::vector<std::string> qos;  // the QOS it may use; empty = its account's (allowed_qos())
  std::string default_qos;       // its jobs' QOS when they name none; "" = normal (or the first)
  bool operator==(const Association&) const = default;
};

// One sacctmgr command's change, as its front end reads it: `add account physics
// Parent=root Fairshare=40`, `modify user alice where account=chem set Fairshare=3`,
// `delete user bob where account=chem`, `add qos high`. Keys of `where` and `set` in lower case;
// a list changed in place keeps its operator on the key ("qos+" for qos+=high, "qos-").
struct AccountChange {
  enum Verb { kAdd, kModify, kDelete };
  enum Entity { kAccount, kUser, kQos };
  Verb verb = kAdd;
  Entity entity = kAccount;
  std::vector<std::string> names;  // the accounts or users it acts on
  std::map<std::string, std::string> where;
  std::map<std::string, std::string> set;
};
// "add account physics", for the log.
std::string describe(const AccountChange& change);

class AccountBook {
 public:
  AccountBook();  // the root account and the QOS normal alone

  const std::vector<Account>& accounts() const { return accounts_; }
  const std::vector<AccountUser>& users() const { return users_; }
  const std::vector<Association>& associations() const { return associations_; }
  const Account* find_account(const std::string& name) const;
  const AccountUser* find_user(const std::string& name) const;
  const Association* find_association(const std::string& user, const std::string& account) const;
  const std::vector<Qos>& qos() const { return qos_; }  // "normal" first
  const Qos* find_qos(const std::string& name) const;
  // The QOS an association (or, with user "", an account) may use: its own list, else the
  // nearest account's up to root, else "normal"; sorted by name.
  std::vector<std::string> allowed_qos(const std::string& user, const std::string& account) const;
  // Accounts are in use (some user exists): every submitter needs an association.
  bool enforced() const { return !users_.empty(); }

  // Applies a change whole, or returns why not (naming the account, user or field) and changes
  // nothing. Returns what it did, one line per record ("  Adding Account(s)\n  physics").
  Result<std::string> apply(const AccountChange& change);

  // The account a job of `user` asking for `asked` ("" = the default) is charged to: "" when
  // accounts are not in use; an error naming the account or user otherwise.
  Result<std::string> job_account(const std::string& user, const std::string& asked) const;
  // The QOS a job of `user` charged to `account` (job_account()) asking for `asked` ("" = the
  // association's default) runs in: an error naming the QOS when it does not exist or the
  // association may not use it. With accounts not in use, any QOS that exists.
  Result<std::string> job_qos(const std::string& user, const std::string& account,
                              const std::string& asked) const;

  // The fair-share tree: accounts under their parents, then each association as a user node
  // under its account, all with their shares. `user_node` (if given) maps "user/account" to the
  // user's node index.
  ShareTree share_tree(std::map<std::string, int>* user_node = nullptr) const;

  // Rebuilds a book from stored rows, checking the rules (a store edited by hand).
  static Result<AccountBook> from_rows(std::vector<Account> accounts,
                                       std::vector<AccountUser> users,
                                       std::vector<Association> associations, std::vector<Qos> qos);

  bool operator==(const AccountBook&) const = default;

 private:
  Status check() const;  // every rule, for from_rows() and after each change
  Result<std::string> add(const AccountChange& change);
  Result<std::string> modify(const AccountChange& change);
  Result<std::string> remove(const AccountChange& change);
  // QOS (accounts_qos.cc): the QOS themselves, and the QOS lists of accounts and associations.
  Result<std::string> change_qos(const AccountChange& change);
  Status check_qos() const;
  // Applies set's qos=, qos+=, qos-= to `own` (whose inherited list is `inherited`) and
  // defaultqos= to `default_qos` (nullptr: not allowed here).
  Status apply_qos_keys(const std::map<std::string, std::string>& set,
                        const std::vector<std::string>& inherited, std::vector<std::string>& own,
                        std::string* default_qos) const;

  std::vector<Account> accounts_;  // root first, then in the order added
  std::vector<AccountUser> users_;
  std::vector<Association> associations_;
  std::vector<Qos> qos_;  // "normal" first, then in the order added
};

// Checks a name as sacctmgr stores it (lower case); `what` names the field in errors.
Result<std::string> account_name(std::string_view text, std::string_view what);
// Parses one limit of sacctmgr (GrpTRES, MaxJobs, MaxSubmitJobs, MaxWall; key in lower case) into
// `limits`: true when `key` names a limit, false when it does not. -1 clears a limit.
Result<bool> apply_limit(const std::string& key, const std::string& value, AssocLimits& limits);
// The limits set, as "grptres=node=4 maxjobs=2 maxsubmitjobs=10 maxwall=01:00:00" ("" for
// none), and back: how
// the store keeps them.
std::string encode_limits(const AssocLimits& limits);
Result<AssocLimits> decode_limits(std::string_view text);

}  // namespace trellis
