#include "sim/user_accounts.h"

#include <fstream>
#include <set>
#include <sstream>

namespace trellis {
int SimAccounts::node_of(const Job& job) const {
  auto at = user_index.find({job.user, job.group});
  return at == user_index.end() ? -1 : at->second;
}

void SimAccounts::assign(std::vector<Job>& jobs) const {
  for (Job& job : jobs) job.association = node_of(job);
}

Result<std::map<std::string, double>> parse_shares(std::string_view text,
                                                   const std::string& where) {
  std::map<std::string, double> shares;
  std::istringstream in{std::string(text)};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string name, value, extra;
    if (!(words >> name)) continue;
    const std::string at = where + ":" + std::to_string(number) + ": ";
    if (!(words >> value) || (words >> extra))
      return fail(at + "expected NAME SHARES (g12 40, u7 2), got '" + line + "'");
    char* end = nullptr;
    const double n = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || *end != '\0' || !(n >= 0) || n > 1e9)
      return fail(at + "shares '" + value + "' is not a number from 0 to 10^9");
    if ((name[0] != 'u' && name[0] != 'g') || name.size() < 2)
      return fail(at + "'" + name + "' is not a user (u7) or a group (g12)");
    shares[name] = n;
  }
  return shares;
}

Result<SimAccounts> sim_accounts(const std::vector<Job>& jobs, SimAccountsFrom from,
                                 const std::string& shares_file) {
  std::map<std::string, double> shares;
  if (!shares_file.empty()) {
    std::ifstream in(shares_file);
    if (!in) return fail("--shares " + shares_file + ": cannot be read");
    std::ostringstream text;
    text << in.rdbuf();
    Result<std::map<std::string, double>> parsed = parse_shares(text.str(), shares_file);
    if (!parsed) return parsed.error();
    shares = std::move(*parsed);
  }
  auto share_of = [&](const std::string& name) {
    auto at = shares.find(name);
    return at == shares.end() ? 1.0 : at->second;
  };
  SimAccounts out;
  std::map<std::string, int> accounts;
  std::set<std::string> seen;
  for (const Job& job : jobs) {
    if (out.user_index.count({job.user, job.group})) continue;
    const std::string user = "u" + std::to_string(job.user);
    const std::string account =
        from == SimAccountsFrom::kGroup ? "g" + std::to_string(job.group) : user;
    auto at = accounts.find(account);
    if (at == accounts.end())
      at = accounts
               .emplace(account, out.tree.add_account(account, ShareTree::kRoot, share_of(account)))
               .first;
    // With accounts by user, the account carries the user's shares and the user is its only one.
    const double user_shares = from == SimAccountsFrom::kGroup ? share_of(user) : 1.0;
    out.user_index[{job.user, job.group}] = out.tree.add_user(user, at->second, user_shares);
    seen.insert(user);
    seen.insert(account);
  }
  for (const auto& [name, n] : shares)
    if (!seen.count(name))
      return fail("--shares " + shares_file + ": '" + name +
                  "' is no user or group of the trace (users are u<id>, groups g<id>)");
  return out;
}

}  // namespace trellis
