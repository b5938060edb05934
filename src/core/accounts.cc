#include "core/accounts.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

namespace trellis {
namespace {

constexpr int64_t kMaxShares = 1000000000;
constexpr size_t kMaxNameLength = 64;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return text;
}

Result<int64_t> parse_shares(const std::string& text) {
  if (lower(text) == "parent") return 1;  // Slurm's "use the parent's"; one share here
  if (text.empty() || text.size() > 12 ||
      !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); }))
    return fail("Fairshare: '" + text + "' is not a number of shares (a whole number 0-" +
                std::to_string(kMaxShares) + ")");
  int64_t shares = std::stoll(text);
  if (shares > kMaxShares)
    return fail("Fairshare: " + text + " is more than " + std::to_string(kMaxShares) + " shares");
  return shares;
}

Result<int64_t> parse_job_count(const std::string& key, const std::string& text) {
  if (text == "-1") return int64_t{-1};
  if (text.empty() || text.size() > 9 ||
      !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); }))
    return fail(key + ": '" + text + "' is not a number of jobs (0-999999999, or -1 to clear)");
  return std::stoll(text);
}

Result<AdminLevel> parse_admin_level(const std::string& text) {
  std::string word = lower(text);
  if (word == "none") return AdminLevel::kNone;
  if (word == "operator") return AdminLevel::kOperator;
  if (word == "admin" || word == "administrator") return AdminLevel::kAdministrator;
  return fail("AdminLevel: '" + text + "' is not None, Operator or Administrator");
}

// A comma-separated list of names, each checked.
Result<std::vector<std::string>> name_list(const std::string& text, std::string_view what) {
  std::vector<std::string> names;
  std::stringstream parts(text);
  for (std::string item; std::getline(parts, item, ',');) {
    Result<std::string> name = account_name(item, what);
    if (!name) return name.error();
    if (std::find(names.begin(), names.end(), *name) == names.end()) names.push_back(*name);
  }
  if (names.empty()) return fail(std::string(what) + ": no name given");
  return names;
}

// The names a change acts on: its own, and any in `where` under name/names/user/users/account.
Result<std::vector<std::string>> change_names(const AccountChange& change) {
  std::vector<std::string> names;
  const char* what = change.entity == AccountChange::kAccount ? "account" : "user";
  for (const std::string& text : change.names) {
    Result<std::vector<std::string>> more = name_list(text, what);
    if (!more) return more.error();
    for (const std::string& name : *more)
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  std::vector<std::string> keys = {"name", "names"};
  if (change.entity == AccountChange::kUser) keys.insert(keys.end(), {"user", "users"});
  if (change.entity == AccountChange::kAccount) keys.insert(keys.end(), {"account", "accounts"});
  for (const std::string& key : keys) {
    auto at = change.where.find(key);
    if (at == change.where.end()) continue;
    Result<std::vector<std::string>> more = name_list(at->second, what);
    if (!more) return more.error();
    for (const std::string& name : *more)
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  if (names.empty())
    return fail(std::string("no ") + what + " named (sacctmgr ... " + what +
                " NAME, or where name=NAME)");
  return names;
}

// The association-level fields of `set` (fairshare and limits) applied to one association or
// account's shares and limits. Keys not of that level are left for the caller.
Status apply_share_and_limits(const std::map<std::string, std::string>& set, int64_t& shares,
                              AssocLimits& limits) {
  for (const auto& [key, value] : set) {
    if (key == "fairshare" || key == "shares") {
      Result<int64_t> parsed = parse_shares(value);
      if (!parsed) return parsed.error();
      shares = *parsed;
      continue;
    }
    Result<bool> limit = apply_limit(key, value, limits);
    if (!limit) return limit.error();
  }
  return Ok{};
}

// A user change's `where account=...`: the accounts it is limited to (nullopt: all of the
// user's); other conditions than the user's names are an error.
Result<std::optional<std::vector<std::string>>> where_accounts(const AccountChange& change) {
  std::optional<std::vector<std::string>> only;
  for (const auto& [key, value] : change.where) {
    if (key == "account" || key == "accounts") {
      Result<std::vector<std::string>> list = name_list(value, "Account");
      if (!list) return list.error();
      only = *list;
    } else if (key != "name" && key != "names" && key != "user" && key != "users") {
      return fail("unknown condition '" + key + "' for a user (Name, Account)");
    }
  }
  return only;
}

bool is_share_or_limit(const std::string& key) {
  return key == "fairshare" || key == "shares" || key == "grptres" || key == "maxjobs" ||
         key == "maxsubmitjobs" || key == "maxsubmit" || key == "maxwall" || key == "qos" ||
         key == "qos+" || key == "qos-" || key == "defaultqos";
}

Error unknown_field(const std::string& key, std::string_view entity, std::string_view fields) {
  return fail("unknown field '" + key + "' for " + std::string(entity) + " (" +
              std::string(fields) + ")");
}

// sacctmgr's layout of what a change did: "  A = physics    C = trellis   ", "  Fairshare     =
// 40".
std::string padded(const std::string& text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}
std::string setting_line(const std::string& key, const std::string& value, size_t width = 13) {
  return "  " + padded(key, width) + " = " + value + "\n";
}
constexpr const char* kCluster = "trellis";
std::string account_line(const std::string& account) {
  return "  A = " + padded(account, 10) + " C = " + padded(kCluster, 10) + "\n";
}
std::string user_account_line(const std::string& user, const std::string& account) {
  return "  U = " + padded(user, 9) + " A = " + padded(account, 10) +
         " C = " + padded(kCluster, 10) + "\n";
}
std::string cluster_account_user_line(const std::string& account, const std::string& user) {
  return "  C = " + padded(kCluster, 10) + " A = " + padded(account, 20) +
         " U = " + padded(user, 9) + "\n";
}
// The shares and limits a change set, as sacctmgr lists them under "Settings".
std::string limit_lines(const std::map<std::string, std::string>& set) {
  std::string out;
  const std::vector<std::pair<std::string, std::string>> named = {
      {"fairshare", "Fairshare"},
      {"shares", "Fairshare"},
      {"grptres", "GrpTRES"},
      {"maxjobs", "MaxJobs"},
      {"maxsubmitjobs", "MaxSubmitJobs"},
      {"maxsubmit", "MaxSubmitJobs"},
      {"maxwall", "MaxWall"}};
  for (const auto& [key, name] : named)
    if (auto at = set.find(key); at != set.end()) out += setting_line(name, at->second);
  return out;
}

}  // namespace

std::string_view admin_level_name(AdminLevel level) {
  switch (level) {
    case AdminLevel::kNone:
      return "None";
    case AdminLevel::kOperator:
      return "Operator";
    case AdminLevel::kAdministrator:
      return "Administrator";
  }
  return "None";
}

std::string describe(const AccountChange& change) {
  std::string out = change.verb == AccountChange::kAdd      ? "add"
                    : change.verb == AccountChange::kModify ? "modify"
                                                            : "delete";
  out += change.entity == AccountChange::kAccount ? " account"
         : change.entity == AccountChange::kUser  ? " user"
                                                  : " qos";
  for (const std::string& name : change.names) out += " " + name;
  if (!change.where.empty()) out += " where";
  for (const auto& [key, value] : change.where) out += " " + key + "=" + value;
  if (!change.set.empty() && change.verb == AccountChange::kModify) out += " set";
  for (const auto& [key, value] : change.set) out += " " + key + "=" + value;
  return out;
}

Result<std::string> account_name(std::string_view text, std::string_view what) {
  std::string name = lower(std::string(text));
  if (name.empty()) return fail(std::string(what) + ": an empty name");
  if (name.size() > kMaxNameLength)
    return fail(std::string(what) + ": '" + name.substr(0, 20) + "...' is longer than " +
                std::to_string(kMaxNameLength) + " characters");
  for (unsigned char c : name) {
    if (!std::isalnum(c) && c != '_' && c != '-' && c != '.')
      return fail(std::string(what) + ": '" + name +
                  "' has a character other than letters, digits, '_', '-' and '.'");
  }
  return name;
}

Result<bool> apply_limit(const std::string& key, const std::string& value, AssocLimits& limits) {
  if (key == "grptres") {
    Result<Tres> tres = parse_tres(value, "GrpTRES");
    if (!tres) return tres.error();
    limits.grp_tres = merge_tres(limits.grp_tres, *tres);
    return true;
  }
  if (key == "maxwall" || key == "maxwalldurationperjob") {
    Result<std::optional<int64_t>> wall = parse_wall(value, "MaxWall");
    if (!wall) return wall.error();
    limits.max_wall = *wall;
    return true;
  }
  std::optional<int64_t>* field = key == "maxjobs"         ? &limits.max_jobs
                                  : key == "maxsubmitjobs" ? &limits.max_submit
                                  : key == "maxsubmit"     ? &limits.max_submit
                                                           : nullptr;
  if (!field) return false;
  Result<int64_t> count = parse_job_count(key == "maxjobs" ? "MaxJobs" : "MaxSubmitJobs", value);
  if (!count) return count.error();
  if (*count < 0)
    field->reset();
  else
    *field = *count;
  return true;
}

std::string encode_limits(const AssocLimits& limits) {
  std::string out;
  auto add = [&](const std::string& item) { out += (out.empty() ? "" : " ") + item; };
  if (!limits.grp_tres.empty()) add("grptres=" + format_tres(limits.grp_tres));
  if (limits.max_jobs) add("maxjobs=" + std::to_string(*limits.max_jobs));
  if (limits.max_submit) add("maxsubmitjobs=" + std::to_string(*limits.max_submit));
  if (limits.max_wall) add("maxwall=" + format_wall(*limits.max_wall));
  return out;
}

Result<AssocLimits> decode_limits(std::string_view text) {
  AssocLimits limits;
  std::stringstream words{std::string(text)};
  for (std::string word; words >> word;) {
    size_t eq = word.find('=');
    if (eq == std::string::npos) return fail("limits: '" + word + "' is not KEY=VALUE");
    Result<bool> known = apply_limit(word.substr(0, eq), word.substr(eq + 1), limits);
    if (!known) return known.error();
    if (!*known) return fail("limits: unknown limit '" + word.substr(0, eq) + "'");
  }
  return limits;
}

AccountBook::AccountBook() {
  accounts_.push_back(Account{.name = "root",
                              .parent = "",
                              .shares = 1,
                              .description = "default root account",
                              .organization = "root",
                              .limits = {},
                              .qos = {}});
  Qos normal;
  normal.name = "normal";
  normal.description = "Normal QOS default";
  qos_.push_back(std::move(normal));
}

const Account* AccountBook::find_account(const std::string& name) const {
  for (const Account& a : accounts_)
    if (a.name == name) return &a;
  return nullptr;
}

const AccountUser* AccountBook::find_user(const std::string& name) const {
  for (const AccountUser& u : users_)
    if (u.name == name) return &u;
  return nullptr;
}

const Association* AccountBook::find_association(const std::string& user,
                                                 const std::string& account) const {
  for (const Association& a : associations_)
    if (a.user == user && a.account == account) return &a;
  return nullptr;
}

Result<std::string> AccountBook::apply(const AccountChange& change) {
  AccountBook before = *this;
  Result<std::string> done = change.entity == AccountChange::kQos    ? change_qos(change)
                             : change.verb == AccountChange::kAdd    ? add(change)
                             : change.verb == AccountChange::kModify ? modify(change)
                                                                     : remove(change);
  if (done) {
    if (Status ok = check(); !ok) done = ok.error();
  }
  if (!done) *this = std::move(before);
  return done;
}

Result<std::string> AccountBook::add(const AccountChange& change) {
  Result<std::vector<std::string>> names = change_names(change);
  if (!names) return names.error();
  std::string out;
  if (change.entity == AccountChange::kAccount) {
    Account model;
    model.parent = "root";
    for (const auto& [key, value] : change.set) {
      if (key == "parent") {
        Result<std::string> parent = account_name(value, "Parent");
        if (!parent) return parent.error();
        model.parent = *parent;
      } else if (key == "description") {
        model.description = value;
      } else if (key == "organization") {
        model.organization = value;
      } else if (!is_share_or_limit(key)) {
        return unknown_field(key, "an account",
                             "Parent, Fairshare, Description, Organization, GrpTRES, MaxJobs, "
                             "MaxSubmitJobs, MaxWall, QOS");
      }
    }
    if (Status s = apply_share_and_limits(change.set, model.shares, model.limits); !s)
      return s.error();
    if (!find_account(model.parent))
      return fail("parent account " + model.parent + " does not exist");
    if (Status s = apply_qos_keys(change.set, allowed_qos("", model.parent), model.qos, nullptr);
        !s)
      return s.error();
    out = " Adding Account(s)\n";
    std::string associations;
    for (const std::string& name : *names) {
      if (find_account(name)) return fail("account " + name + " already exists");
      Account account = model;
      account.name = name;
      // sacctmgr's defaults: the name, and the parent's name (the account's own under root).
      if (account.description.empty()) account.description = name;
      if (account.organization.empty())
        account.organization = model.parent == "root" ? name : model.parent;
      accounts_.push_back(account);
      out += "  " + name + "\n";
      associations += account_line(name);
    }
    out += " Settings\n";
    out += setting_line("Description",
                        model.description.empty() ? "Account Name" : model.description, 15);
    out +=
        setting_line("Organization",
                     model.organization.empty() ? "Parent/Account Name" : model.organization, 15);
    out += " Associations\n" + associations + " Settings\n" + limit_lines(change.set) +
           setting_line("Parent", model.parent);
    return out;
  }
  // Users: each gets an association with each account named.
  std::vector<std::string> accounts;
  std::string default_account;
  std::optional<AdminLevel> admin;
  for (const auto& [key, value] : change.set) {
    if (key == "account" || key == "accounts") {
      Result<std::vector<std::string>> list = name_list(value, "Account");
      if (!list) return list.error();
      accounts = *list;
    } else if (key == "defaultaccount") {
      Result<std::string> name = account_name(value, "DefaultAccount");
      if (!name) return name.error();
      default_account = *name;
    } else if (key == "adminlevel") {
      Result<AdminLevel> level = parse_admin_level(value);
      if (!level) return level.error();
      admin = *level;
    } else if (!is_share_or_limit(key)) {
      return unknown_field(key, "a user",
                           "Account, DefaultAccount, AdminLevel, Fairshare, GrpTRES, MaxJobs, "
                           "MaxSubmitJobs, MaxWall, QOS");
    }
  }
  if (accounts.empty() && !default_account.empty()) accounts = {default_account};
  if (accounts.empty())
    return fail("a user needs an account (Account=NAME or DefaultAccount=NAME)");
  for (const std::string& account : accounts)
    if (!find_account(account)) return fail("account " + account + " does not exist");
  Association model;
  if (Status s = apply_share_and_limits(change.set, model.shares, model.limits); !s)
    return s.error();
  out = " Adding User(s)\n";
  std::string associations;
  for (const std::string& name : *names) {
    out += "  " + name + "\n";
    AccountUser* user = nullptr;
    for (AccountUser& u : users_)
      if (u.name == name) user = &u;
    if (!user) {
      users_.push_back(AccountUser{
          .name = name,
          .default_account = default_account.empty() ? accounts.front() : default_account,
          .admin = admin.value_or(AdminLevel::kNone)});
    } else {
      if (!default_account.empty()) user->default_account = default_account;
      if (admin) user->admin = *admin;
    }
    int added = 0;
    for (const std::string& account : accounts) {
      if (find_association(name, account)) continue;
      Association association = model;
      association.user = name;
      association.account = account;
      if (Status s = apply_qos_keys(change.set, allowed_qos("", account), association.qos,
                                    &association.default_qos);
          !s)
        return s.error();
      associations_.push_back(association);
      associations += user_account_line(name, account);
      ++added;
    }
    if (added == 0 && default_account.empty() && !admin)
      return fail("user " + name + " already has an association with every account named");
  }
  if (!default_account.empty() || admin) {
    out += " Settings =\n";
    if (!default_account.empty()) out += setting_line("Default Account", default_account, 15);
    if (admin) out += setting_line("Admin Level", std::string(admin_level_name(*admin)), 15);
  }
  return out + " Associations =\n" + associations + " Non Default Settings\n" +
         limit_lines(change.set);
}

Result<std::string> AccountBook::modify(const AccountChange& change) {
  Result<std::vector<std::string>> names = change_names(change);
  if (!names) return names.error();
  if (change.set.empty()) return fail("modify: nothing to set (sacctmgr modify ... set KEY=VALUE)");
  std::string out = " Modified " + std::string(change.entity == AccountChange::kAccount
                                                   ? "account associations...\n"
                                                   : "user associations...\n");
  if (change.entity == AccountChange::kAccount) {
    for (const std::string& name : *names) {
      Account* account = nullptr;
      for (Account& a : accounts_)
        if (a.name == name) account = &a;
      if (!account) return fail("account " + name + " does not exist");
      for (const auto& [key, value] : change.set) {
        if (key == "description") {
          account->description = value;
        } else if (key == "organization") {
          account->organization = value;
        } else if (key == "parent") {
          if (name == "root") return fail("the root account has no parent");
          Result<std::string> parent = account_name(value, "Parent");
          if (!parent) return parent.error();
          if (!find_account(*parent)) return fail("parent account " + *parent + " does not exist");
          account->parent = *parent;
        } else if (!is_share_or_limit(key)) {
          return unknown_field(key, "an account",
                               "Parent, Fairshare, Description, Organization, GrpTRES, MaxJobs, "
                               "MaxSubmitJobs, MaxWall, QOS");
        }
      }
      if (Status s = apply_share_and_limits(change.set, account->shares, account->limits); !s)
        return s.error();
      const std::vector<std::string> inherited =
          name == "root" ? std::vector<std::string>{"normal"} : allowed_qos("", account->parent);
      if (Status s = apply_qos_keys(change.set, inherited, account->qos, nullptr); !s)
        return s.error();
      out += "  C = " + padded(kCluster, 10) + " A = " + name + " of " + account->parent + "\n";
      // QOS+= and QOS-= reach the lists of the associations and accounts below that have their
      // own (the others inherit the change), as sacctmgr copies them down.
      std::set<std::pair<std::string, std::string>> qos_changed;
      if (change.set.count("qos+") || change.set.count("qos-")) {
        std::map<std::string, std::string> list_change;
        for (const char* key : {"qos+", "qos-"})
          if (auto at = change.set.find(key); at != change.set.end()) list_change[key] = at->second;
        auto below = [&](const std::string& account_name) {
          size_t steps = 0;  // bounded, as a cycle of parents is refused only after
          for (const Account* at = find_account(account_name); at && steps <= accounts_.size();
               at = at->name == "root" ? nullptr : find_account(at->parent), ++steps)
            if (at->name == name) return true;
          return false;
        };
        for (Account& a : accounts_)
          if (a.name != name && !a.qos.empty() && below(a.name))
            if (Status s = apply_qos_keys(list_change, a.qos, a.qos, nullptr); !s) return s.error();
        for (Association& a : associations_) {
          if (a.qos.empty() || !below(a.account)) continue;
          const std::vector<std::string> was = a.qos;
          if (Status s = apply_qos_keys(list_change, a.qos, a.qos, nullptr); !s) return s.error();
          if (a.qos != was) qos_changed.emplace(a.account, a.user);
        }
      }
      // Limits on jobs per user reach the account's users (as sacctmgr copies them down).
      const bool per_user = change.set.count("maxjobs") || change.set.count("maxsubmitjobs") ||
                            change.set.count("maxsubmit");
      for (auto a = associations_.rbegin(); a != associations_.rend(); ++a)
        if ((per_user && a->account == name) || qos_changed.count({a->account, a->user}))
          out += cluster_account_user_line(a->account, a->user);
    }
    return out;
  }
  Result<std::optional<std::vector<std::string>>> where = where_accounts(change);
  if (!where) return where.error();
  const std::optional<std::vector<std::string>>& only_accounts = *where;
  for (const std::string& name : *names) {
    AccountUser* user = nullptr;
    for (AccountUser& u : users_)
      if (u.name == name) user = &u;
    if (!user) return fail("user " + name + " does not exist");
    for (const auto& [key, value] : change.set) {
      if (key == "defaultaccount") {
        Result<std::string> account = account_name(value, "DefaultAccount");
        if (!account) return account.error();
        if (!find_association(name, *account))
          return fail("user " + name + " has no association with account " + *account +
                      ": it cannot be the default");
        user->default_account = *account;
      } else if (key == "adminlevel") {
        Result<AdminLevel> level = parse_admin_level(value);
        if (!level) return level.error();
        user->admin = *level;
      } else if (!is_share_or_limit(key)) {
        return unknown_field(key, "a user",
                             "DefaultAccount, AdminLevel, Fairshare, GrpTRES, MaxJobs, "
                             "MaxSubmitJobs, MaxWall, QOS");
      }
    }
    int matched = 0;
    for (Association& a : associations_) {
      if (a.user != name) continue;
      if (only_accounts && std::find(only_accounts->begin(), only_accounts->end(), a.account) ==
                               only_accounts->end())
        continue;
      ++matched;
      if (Status s = apply_share_and_limits(change.set, a.shares, a.limits); !s) return s.error();
      if (Status s = apply_qos_keys(change.set, allowed_qos("", a.account), a.qos, &a.default_qos);
          !s)
        return s.error();
      out += cluster_account_user_line(a.account, name);
    }
    if (only_accounts && matched == 0)
      return fail("user " + name + " has no association with the accounts named");
  }
  return out;
}

Result<std::string> AccountBook::remove(const AccountChange& change) {
  Result<std::vector<std::string>> names = change_names(change);
  if (!names) return names.error();
  std::string out;
  if (change.entity == AccountChange::kAccount) {
    out = " Deleting accounts...\n";
    for (const std::string& name : *names) {
      if (name == "root") return fail("the root account cannot be deleted");
      if (!find_account(name)) return fail("account " + name + " does not exist");
      for (const Account& a : accounts_)
        if (a.parent == name)
          return fail("account " + name + " has sub-account " + a.name + ": delete it first");
      for (const Association& a : associations_)
        if (a.account == name)
          return fail("account " + name + " has user " + a.user +
                      ": delete the user's association first");
      std::erase_if(accounts_, [&](const Account& a) { return a.name == name; });
      out += "  " + name + "\n";
    }
    return out;
  }
  Result<std::optional<std::vector<std::string>>> where = where_accounts(change);
  if (!where) return where.error();
  const std::optional<std::vector<std::string>>& only_accounts = *where;
  out = only_accounts ? " Deleting user associations...\n" : " Deleting users...\n";
  for (const std::string& name : *names) {
    if (!find_user(name)) return fail("user " + name + " does not exist");
    size_t before = associations_.size();
    std::erase_if(associations_, [&](const Association& a) {
      return a.user == name &&
             (!only_accounts || std::find(only_accounts->begin(), only_accounts->end(),
                                          a.account) != only_accounts->end());
    });
    if (associations_.size() == before)
      return fail("user " + name + " has no association with the accounts named");
    const Association* left = nullptr;
    for (const Association& a : associations_)
      if (a.user == name && !left) left = &a;
    if (!left) {
      std::erase_if(users_, [&](const AccountUser& u) { return u.name == name; });
    } else {
      for (AccountUser& u : users_)
        if (u.name == name && !find_association(name, u.default_account))
          u.default_account = left->account;
    }
    out += "  " + name + "\n";
  }
  return out;
}

Status AccountBook::check() const {
  std::set<std::string> names;
  if (accounts_.empty() || accounts_.front().name != "root" || !accounts_.front().parent.empty())
    return fail("the first account must be root, with no parent");
  for (const Account& a : accounts_) {
    if (!names.insert(a.name).second) return fail("account " + a.name + " appears twice");
    if (a.shares < 0 || a.shares > kMaxShares)
      return fail("account " + a.name + " has " + std::to_string(a.shares) + " shares");
    if (a.name != "root" && !find_account(a.parent))
      return fail("account " + a.name + " has parent " + a.parent + ", which does not exist");
  }
  // No cycle: from every account, the parents reach root within as many steps as accounts.
  for (const Account& a : accounts_) {
    const Account* at = &a;
    for (size_t steps = 0; at && at->name != "root"; ++steps) {
      if (steps > accounts_.size())
        return fail("account " + a.name + " would be its own ancestor (a cycle of parents)");
      at = find_account(at->parent);
    }
  }
  std::set<std::string> user_names;
  for (const AccountUser& u : users_) {
    if (!user_names.insert(u.name).second) return fail("user " + u.name + " appears twice");
    if (!find_association(u.name, u.default_account))
      return fail("user " + u.name + "'s default account " + u.default_account +
                  " is not one of its associations");
  }
  std::set<std::pair<std::string, std::string>> pairs;
  for (const Association& a : associations_) {
    if (!pairs.emplace(a.user, a.account).second)
      return fail("user " + a.user + " is associated with account " + a.account + " twice");
    if (!find_account(a.account))
      return fail("user " + a.user + " is associated with account " + a.account +
                  ", which does not exist");
    if (!find_user(a.user)) return fail("association of unknown user " + a.user);
    if (a.shares < 0 || a.shares > kMaxShares)
      return fail("user " + a.user + " has " + std::to_string(a.shares) + " shares");
  }
  return check_qos();
}

Result<std::string> AccountBook::job_account(const std::string& user,
                                             const std::string& asked) const {
  if (!enforced()) return asked.empty() ? std::string() : lower(asked);
  const AccountUser* known = find_user(user);
  if (!known)
    return fail(Error::Code::kPermissionDenied,
                "Invalid account or account/partition combination specified: user " + user +
                    " has no association (sacctmgr add user " + user + " Account=NAME)");
  if (asked.empty()) return known->default_account;
  std::string account = lower(asked);
  if (!find_account(account))
    return fail(Error::Code::kNotFound,
                "Invalid account or account/partition combination specified: account " + account +
                    " does not exist");
  if (!find_association(user, account))
    return fail(Error::Code::kPermissionDenied,
                "Invalid account or account/partition combination specified: user " + user +
                    " has no association with account " + account);
  return account;
}

ShareTree AccountBook::share_tree(std::map<std::string, int>* user_node) const {
  ShareTree tree;
  std::map<std::string, int> index = {{"root", ShareTree::kRoot}};
  // Parents before children: repeat until every account is placed (no cycles: check()).
  std::vector<const Account*> left;
  for (const Account& a : accounts_)
    if (a.name != "root") left.push_back(&a);
  while (!left.empty()) {
    size_t before = left.size();
    std::erase_if(left, [&](const Account* a) {
      auto parent = index.find(a->parent);
      if (parent == index.end()) return false;
      index[a->name] = tree.add_account(a->name, parent->second, static_cast<double>(a->shares));
      return true;
    });
    if (left.size() == before) break;  // unreachable accounts (a broken book): left out
  }
  for (const Association& a : associations_) {
    auto account = index.find(a.account);
    if (account == index.end()) continue;
    int node = tree.add_user(a.user, account->second, static_cast<double>(a.shares));
    if (user_node) (*user_node)[a.user + "/" + a.account] = node;
  }
  return tree;
}

Result<AccountBook> AccountBook::from_rows(std::vector<Account> accounts,
                                           std::vector<AccountUser> users,
                                           std::vector<Association> associations,
                                           std::vector<Qos> qos) {
  AccountBook book;
  // root first, whatever order the rows came in
  std::stable_partition(accounts.begin(), accounts.end(),
                        [](const Account& a) { return a.name == "root"; });
  if (!accounts.empty()) book.accounts_ = std::move(accounts);
  book.users_ = std::move(users);
  book.associations_ = std::move(associations);
  // normal first, whatever order the rows came in
  std::stable_partition(qos.begin(), qos.end(), [](const Qos& q) { return q.name == "normal"; });
  if (!qos.empty()) book.qos_ = std::move(qos);
  if (Status s = book.check(); !s) return fail("the store's accounts: " + s.error().message);
  return book;
}

}  // namespace trellis
