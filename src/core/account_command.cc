#include "core/account_command.h"

#include <algorithm>
#include <cctype>

namespace trellis {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return text;
}

// The one of `choices` that `word` abbreviates (or is), or "" when none or several do; a word's
// singular and plural ("association", "associations") count as one, the shorter.
std::string abbreviates(const std::string& word, const std::vector<std::string>& choices) {
  std::string found;
  bool ambiguous = false;
  for (const std::string& choice : choices) {
    if (choice == word) return choice;
    if (word.empty() || choice.rfind(word, 0) != 0) continue;
    if (found.empty() || choice.rfind(found, 0) == 0) {
      if (found.empty()) found = choice;
    } else if (found.rfind(choice, 0) == 0) {
      found = choice;
    } else {
      ambiguous = true;
    }
  }
  return ambiguous ? "" : found;
}

// Keys of the fields a change may set, and of the conditions a modify or delete may give.
const std::vector<std::string>& field_keys() {
  static const std::vector<std::string> keys = {
      "account", "accounts", "adminlevel", "cluster", "clusters", "defaultaccount", "description",
      "fairshare", "grptres", "maxjobs", "maxsubmitjobs", "name", "names", "organization", "parent",
      "partition", "shares", "user", "users", "format", "maxsubmit",
      // QOS, and the QOS lists of accounts and users
      "qos", "defaultqos", "priority", "usagefactor", "maxjobsperuser", "maxsubmitjobsperuser",
      "maxtresperuser", "maxwall", "flags", "gracetime", "preempt", "preemptmode",
      "preemptexempttime"};
  return keys;
}

}  // namespace

Result<AccountCommand> parse_account_command(const std::vector<std::string>& words) {
  AccountCommand command;
  if (words.empty())
    return fail("no command (add, modify, delete, show; sacctmgr --help lists them)");
  const std::string verb = abbreviates(
      lower(words[0]), {"add", "create", "modify", "update", "delete", "remove", "show", "list"});
  if (verb.empty()) return fail("unknown command '" + words[0] + "' (add, modify, delete, show)");
  if (words.size() < 2) return fail(verb + ": name what (account, user, association or qos)");
  const std::string entity = abbreviates(lower(words[1]), {"account", "accounts", "user", "users",
                                                           "association", "associations", "qos"});
  if (entity.empty())
    return fail("unknown entity '" + words[1] + "' (account, user, association, qos)");
  const bool show = verb == "show" || verb == "list";
  if (show) {
    command.action = AccountCommand::kShow;
    command.shown = entity.starts_with("account")       ? AccountCommand::kAccounts
                    : entity.starts_with("user")        ? AccountCommand::kUsers
                    : entity.starts_with("association") ? AccountCommand::kAssociations
                                                        : AccountCommand::kQos;
  } else {
    command.action = AccountCommand::kChange;
    if (entity.starts_with("association"))
      return fail(verb + " " + entity +
                  ": change an association through its user (sacctmgr modify user NAME where "
                  "account=A set ...)");
    command.change.entity = entity.starts_with("account") ? AccountChange::kAccount
                            : entity == "qos"             ? AccountChange::kQos
                                                          : AccountChange::kUser;
    command.change.verb = verb == "add" || verb == "create"      ? AccountChange::kAdd
                          : verb == "modify" || verb == "update" ? AccountChange::kModify
                                                                 : AccountChange::kDelete;
  }
  AccountChange& change = command.change;
  bool in_set = false;
  for (size_t i = 2; i < words.size(); ++i) {
    const std::string& word = words[i];
    const std::string low = lower(word);
    if (low == "where") {
      if (in_set) return fail("'where' after 'set'");
      continue;
    }
    if (low == "set") {
      if (show || change.verb != AccountChange::kModify)
        return fail("'set' is for modify (sacctmgr modify ... set KEY=VALUE)");
      in_set = true;
      continue;
    }
    size_t eq = word.find('=');
    if (eq == std::string::npos) {
      if (show && (low == "tree" || low == "withd" || low == "withdeleted")) {
        command.tree = command.tree || low == "tree";
        continue;
      }
      if (show && abbreviates(low, {"withassoc"}) == "withassoc") {
        command.with_assoc = true;
        continue;
      }
      if (in_set) return fail("'" + word + "' after 'set' is not KEY=VALUE");
      if (show)
        command.filters["name"] += (command.filters["name"].empty() ? "" : ",") + word;
      else
        change.names.push_back(word);
      continue;
    }
    std::string key = lower(word.substr(0, eq));
    const std::string value = word.substr(eq + 1);
    // "+=" and "-=" add to or take from a list (qos+=high, flags-=denyonlimit): the operator
    // stays on the key.
    std::string op;
    if (!key.empty() && (key.back() == '+' || key.back() == '-')) {
      op = key.substr(key.size() - 1);
      key.pop_back();
    }
    if (key.empty()) return fail("'" + word + "' has no key before '='");
    std::string known = abbreviates(key, field_keys());
    if (!known.empty()) key = known;
    if (!op.empty()) {
      if (show || !in_set || (key != "qos" && key != "flags"))
        return fail("'" + word +
                    "': only QOS and Flags are lists to add to (+=) or take from (-=)");
      key += op;
    }
    if (key == "cluster" || key == "clusters") continue;  // one cluster
    if (show) {
      if (key == "format") {
        size_t begin = 0;
        while (begin <= value.size()) {
          size_t end = value.find(',', begin);
          if (end == std::string::npos) end = value.size();
          if (end > begin) command.format.push_back(value.substr(begin, end - begin));
          begin = end + 1;
        }
        if (command.format.empty()) return fail("format=: no field named");
      } else {
        command.filters[key] = value;
      }
      continue;
    }
    if (value.empty()) return fail("'" + word + "' has no value after '='");
    if (change.verb == AccountChange::kAdd || in_set) {
      if ((key == "name" || key == "names") && !in_set)
        change.names.push_back(value);
      else
        change.set[key] = value;
    } else {
      change.where[key] = value;
    }
  }
  if (!show && change.verb == AccountChange::kModify && change.set.empty())
    return fail("modify: nothing to set (sacctmgr modify ... set KEY=VALUE)");
  return command;
}

}  // namespace trellis
