// The QOS of an account book (core/accounts.h, core/qos.h): adding, changing and deleting QOS,
// which QOS each account and association may use, and the QOS a job runs in.
#include <algorithm>
#include <set>
#include <sstream>

#include "core/accounts.h"

namespace trellis {
namespace {

constexpr const char* kNormal = "normal";

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream parts(text);
  for (std::string item; std::getline(parts, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// The names a QOS change acts on: its own, and any of `where` name=/names=.
Result<std::vector<std::string>> qos_names(const AccountChange& change) {
  std::vector<std::string> names;
  auto add = [&](const std::string& text) -> Status {
    for (const std::string& item : split_names(text)) {
      Result<std::string> name = account_name(item, "QOS");
      if (!name) return name.error();
      if (std::find(names.begin(), names.end(), *name) == names.end()) names.push_back(*name);
    }
    return Ok{};
  };
  for (const std::string& text : change.names)
    if (Status s = add(text); !s) return s.error();
  for (const auto& [key, value] : change.where) {
    if (key != "name" && key != "names")
      return fail("unknown condition '" + key + "' for a QOS (Name)");
    if (Status s = add(value); !s) return s.error();
  }
  if (names.empty()) return fail("no QOS named (sacctmgr ... qos NAME, or where name=NAME)");
  return names;
}

std::string padded(const std::string& text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

// A setting's name as sacctmgr prints it under "Settings" ("priority" -> "Priority").
std::string setting_name(const std::string& key) {
  static const std::map<std::string, std::string> names = {
      {"priority", "Priority"},
      {"usagefactor", "UsageFactor"},
      {"maxjobsperuser", "MaxJobsPerUser"},
      {"maxsubmitjobsperuser", "MaxSubmitJobsPerUser"},
      {"maxtresperuser", "MaxTRESPerUser"},
      {"grptres", "GrpTRES"},
      {"maxwall", "MaxWall"},
      {"flags", "Flags"}};
  auto at = names.find(key);
  return at == names.end() ? key : at->second;
}

}  // namespace

const Qos* AccountBook::find_qos(const std::string& name) const {
  for (const Qos& q : qos_)
    if (q.name == name) return &q;
  return nullptr;
}

std::vector<std::string> AccountBook::allowed_qos(const std::string& user,
                                                  const std::string& account) const {
  std::vector<std::string> list;
  if (!user.empty())
    if (const Association* a = find_association(user, account)) list = a->qos;
  // The account's own list, else its parents'. Bounded: a change being applied may have made a
  // cycle of parents that check() is about to refuse.
  size_t steps = 0;
  for (const Account* at = find_account(account); list.empty() && at && steps <= accounts_.size();
       at = at->name == "root" ? nullptr : find_account(at->parent), ++steps)
    list = at->qos;
  if (list.empty()) list = {kNormal};
  std::sort(list.begin(), list.end());
  return list;
}

Status AccountBook::apply_qos_keys(const std::map<std::string, std::string>& set,
                                   const std::vector<std::string>& inherited,
                                   std::vector<std::string>& own, std::string* default_qos) const {
  for (const auto& [key, value] : set) {
    if (key != "qos" && key != "qos+" && key != "qos-" && key != "defaultqos") continue;
    if (key == "defaultqos") {
      if (!default_qos)
        return fail("DefaultQOS: an account has no default QOS (set it on its users)");
      if (value == "-1" || value.empty()) {
        default_qos->clear();
        continue;
      }
      Result<std::string> name = account_name(value, "DefaultQOS");
      if (!name) return name.error();
      if (!find_qos(*name)) return fail("DefaultQOS: qos " + *name + " does not exist");
      *default_qos = *name;
      continue;
    }
    if (key == "qos" && (value == "-1" || value.empty())) {
      own.clear();  // back to inheriting
      continue;
    }
    std::vector<std::string> names;
    for (const std::string& item : split_names(value)) {
      Result<std::string> name = account_name(item, "QOS");
      if (!name) return name.error();
      if (!find_qos(*name)) return fail("QOS: qos " + *name + " does not exist");
      names.push_back(*name);
    }
    std::vector<std::string> list = own.empty() ? inherited : own;
    if (key == "qos") {
      list = names;
    } else if (key == "qos+") {
      for (const std::string& name : names)
        if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
    } else {
      for (const std::string& name : names) std::erase(list, name);
      if (list.empty())
        return fail("QOS: taking " + value + " away would leave no QOS at all (set QOS=NAME)");
    }
    std::sort(list.begin(), list.end());
    own = list;
  }
  return Ok{};
}

Result<std::string> AccountBook::change_qos(const AccountChange& change) {
  Result<std::vector<std::string>> names = qos_names(change);
  if (!names) return names.error();
  std::string out;
  switch (change.verb) {
    case AccountChange::kAdd: {
      Qos model;
      if (Status s = apply_qos_settings(change.set, model); !s) return s.error();
      out = " Adding QOS(s)\n";
      for (const std::string& name : *names) {
        if (find_qos(name)) return fail("qos " + name + " already exists");
        Qos qos = model;
        qos.name = name;
        if (qos.description.empty()) qos.description = name;  // sacctmgr's default
        qos_.push_back(qos);
        out += "  " + name + "\n";
      }
      // sacctmgr's: the name of the one QOS added, else what stands for each one's name.
      const std::string description = !model.description.empty() ? model.description
                                      : names->size() == 1       ? names->front()
                                                                 : "QOS Name";
      out += " Settings\n  " + padded("Description", 15) + "= " + description + "\n";
      for (const auto& [key, value] : change.set)
        if (key != "description") out += "  " + padded(setting_name(key), 25) + "= " + value + "\n";
      return out;
    }
    case AccountChange::kModify: {
      if (change.set.empty())
        return fail("modify: nothing to set (sacctmgr modify qos NAME set KEY=VALUE)");
      out = " Modified qos...\n";
      for (const std::string& name : *names) {
        auto at =
            std::find_if(qos_.begin(), qos_.end(), [&](const Qos& q) { return q.name == name; });
        if (at == qos_.end()) return fail("qos " + name + " does not exist");
        if (Status s = apply_qos_settings(change.set, *at); !s) return s.error();
        out += "  " + name + "\n";
      }
      return out;
    }
    case AccountChange::kDelete: {
      out = " Deleting QOS(s)...\n";
      for (const std::string& name : *names) {
        if (!find_qos(name)) return fail("qos " + name + " does not exist");
        if (name == kNormal) return fail("qos normal is every job's default: it cannot be deleted");
        for (const Account& a : accounts_)
          if (std::find(a.qos.begin(), a.qos.end(), name) != a.qos.end())
            return fail("qos " + name + " is in the QOS of account " + a.name +
                        ": take it away first (sacctmgr modify account " + a.name +
                        " set qos-=" + name + ")");
        for (const Association& a : associations_)
          if (std::find(a.qos.begin(), a.qos.end(), name) != a.qos.end() || a.default_qos == name)
            return fail("qos " + name + " is in the QOS of user " + a.user + " in account " +
                        a.account + ": take it away first (sacctmgr modify user " + a.user +
                        " set qos-=" + name + ")");
        std::erase_if(qos_, [&](const Qos& q) { return q.name == name; });
        out += "  " + name + "\n";
      }
      return out;
    }
  }
  return out;
}

Status AccountBook::check_qos() const {
  std::set<std::string> names;
  if (qos_.empty() || qos_.front().name != kNormal) return fail("the first QOS must be normal");
  for (const Qos& q : qos_)
    if (!names.insert(q.name).second) return fail("qos " + q.name + " appears twice");
  for (const Account& a : accounts_)
    for (const std::string& q : a.qos)
      if (!names.count(q))
        return fail("account " + a.name + " may use qos " + q + ", which does not exist");
  for (const Association& a : associations_) {
    for (const std::string& q : a.qos)
      if (!names.count(q))
        return fail("user " + a.user + " in account " + a.account + " may use qos " + q +
                    ", which does not exist");
    if (a.default_qos.empty()) continue;
    std::vector<std::string> allowed = allowed_qos(a.user, a.account);
    if (std::find(allowed.begin(), allowed.end(), a.default_qos) == allowed.end())
      return fail("user " + a.user + " in account " + a.account + " has default qos " +
                  a.default_qos + ", which is not one of its QOS");
  }
  return Ok{};
}

Result<std::string> AccountBook::job_qos(const std::string& user, const std::string& account,
                                         const std::string& asked) const {
  std::string name;
  if (!asked.empty()) {
    Result<std::string> checked = account_name(asked, "qos");
    if (!checked) return checked.error();
    name = *checked;
    if (!find_qos(name))
      return fail(Error::Code::kNotFound,
                  "Invalid qos specification: qos " + name + " does not exist");
  }
  if (account.empty()) return name.empty() ? std::string(kNormal) : name;
  std::vector<std::string> allowed = allowed_qos(user, account);
  if (name.empty()) {
    const Association* a = find_association(user, account);
    if (a && !a->default_qos.empty()) return a->default_qos;
    return std::find(allowed.begin(), allowed.end(), kNormal) != allowed.end() ? kNormal
                                                                               : allowed.front();
  }
  if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
    std::string list;
    for (const std::string& q : allowed) list += (list.empty() ? "" : ",") + q;
    return fail(Error::Code::kPermissionDenied, "Invalid qos specification: user " + user +
                                                    " in account " + account + " may not use qos " +
                                                    name + " (its QOS: " + list + ")");
  }
  return name;
}

}  // namespace trellis
