// sshare: the tree of accounts with each association's shares, usage and fair-share factor, as
// the scheduler computed them at its last pass (ListAccounts' figures), in sshare's columns:
// default (the caller's associations and every account), -a (every user), -l (NormUsage,
// LevelFS), -P/-p, -n, -u USER, -A ACCOUNT.
#include <getopt.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <set>

#include "cli/live_client.h"
#include "cli/slurm/account_tree.h"
#include "cli/slurm/slurm_command.h"
#include "cli/slurm/slurm_help.h"
#include "daemon/user_names.h"

namespace trellis::cli::slurm {
namespace {

enum { kIgnoredFlag = 256 };

const std::vector<LongOption> kOptions = {
    {"all", no_argument, 'a', nullptr, "list all users"},
    {"long", no_argument, 'l', nullptr, "include normalized usage and the level fair-share"},
    {"noheader", no_argument, 'n', nullptr, "omit header from output"},
    {"parsable", no_argument, 'p', nullptr, "'|' delimited output with a trailing '|'"},
    {"parsable2", no_argument, 'P', nullptr, "'|' delimited output without a trailing '|'"},
    {"users", required_argument, 'u', "user_list", "display information for specific users"},
    {"accounts", required_argument, 'A', "account_list",
     "display information for specific accounts"},
    {"verbose", no_argument, 'v', nullptr, "display more information"},
};

std::string fixed(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.6f", value);
  return text;
}

struct Cell {
  std::string text;
  int width;
  bool left = false;
};

}  // namespace

int sshare_main(const std::vector<std::string>& args) {
  static const CommandHelp help{"sshare", "[OPTIONS]", kOptions, {.h_is_help = true}};
  if (std::optional<int> status = answer_help(args, help)) return *status;
  Result<ParsedArgs> parsed = parse_options(args, "alnpPu:A:v", kOptions);
  if (!parsed) return report_error("sshare", parsed.error());
  bool all = false, long_form = false, noheader = false, parsable = false, parsable2 = false;
  std::set<std::string> users, accounts;
  for (const Parsed& o : parsed->options) {
    if (o.id == 'a') all = true;
    if (o.id == 'l') long_form = true;
    if (o.id == 'n') noheader = true;
    if (o.id == 'p') parsable = true;
    if (o.id == 'P') parsable2 = true;
    if (o.id == 'u')
      for (const std::string& u : split_list(o.value)) users.insert(u);
    if (o.id == 'A')
      for (const std::string& a : split_list(o.value)) accounts.insert(a);
  }
  if (!parsed->rest.empty())
    return report_error("sshare", fail("unexpected argument '" + parsed->rest.front() + "'"));
  Result<LiveClient> client = connect_to_cluster("");
  if (!client) return report_error("sshare", client.error());
  Result<v1::ListAccountsReply> listed = list_accounts(*client);
  if (!listed) return report_error("sshare", listed.error());
  const v1::ListAccountsReply& reply = *listed;
  // Without -a or -u: the caller's own associations (and every account), as sshare shows them.
  const std::string me = user_name(static_cast<int>(getuid()));
  const double root_usage = reply.accounts_size() > 0 ? reply.accounts(0).figures().raw_usage() : 0;

  std::vector<std::string> header = {"Account", "User", "RawShares", "NormShares", "RawUsage"};
  std::vector<int> widths = {-20, 10, 10, 11, 11};
  if (long_form) header.push_back("NormUsage"), widths.push_back(11);
  header.insert(header.end(), {"EffectvUsage", "FairShare"});
  widths.insert(widths.end(), {13, 10});
  if (long_form) {
    header.insert(header.end(), {"LevelFS", "GrpTRESMins", "TRESRunMins"});
    widths.insert(widths.end(), {10, 30, 30});
  }
  const bool delimited = parsable || parsable2;
  auto print = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (delimited) {
        out += cells[i];
        if (i + 1 < cells.size() || parsable) out += "|";
        continue;
      }
      const int w = widths[i] < 0 ? -widths[i] : widths[i];
      std::string text = cells[i];
      if (text.size() > static_cast<size_t>(w))
        text = text.substr(0, static_cast<size_t>(w) - 1) + "+";
      const std::string pad(static_cast<size_t>(w) - text.size(), ' ');
      out += (widths[i] < 0 ? text + pad : pad + text) + " ";
    }
    std::cout << out << "\n";
  };
  if (!noheader) {
    print(header);
    if (!delimited) {
      std::vector<std::string> dashes;
      for (int w : widths) dashes.push_back(std::string(static_cast<size_t>(w < 0 ? -w : w), '-'));
      print(dashes);
    }
  }
  auto row = [&](int depth, const std::string& account, const std::string& user,
                 const std::string& raw_shares, const v1::ShareFigures& f, bool is_user,
                 bool is_root) {
    std::vector<std::string> cells = {std::string(static_cast<size_t>(depth), ' ') + account, user,
                                      raw_shares, fixed(is_root ? 0 : f.norm_shares()),
                                      std::to_string(std::llround(f.raw_usage()))};
    if (long_form)
      cells.push_back(is_root ? "" : fixed(root_usage > 0 ? f.raw_usage() / root_usage : 0));
    cells.push_back(fixed(is_root ? 1 : f.effective_usage()));
    cells.push_back(is_user ? fixed(f.fair_share()) : "");
    if (long_form) {
      cells.push_back(is_root ? "" : f.level_fs() < 0 ? "inf" : fixed(f.level_fs()));
      cells.insert(cells.end(), {"", ""});
    }
    print(cells);
  };
  walk_account_tree(
      reply,
      [&](const v1::AccountInfo& account, int depth) {
        const bool is_root = account.name() == "root";
        if (accounts.empty() || accounts.count(account.name()))
          row(depth, account.name(), "", is_root ? "" : std::to_string(account.shares()),
              account.figures(), false, is_root);
      },
      [&](const v1::AccountInfo& account, const v1::AssociationInfo& a, int depth) {
        const bool shown = users.empty() ? all || a.user() == me : users.count(a.user()) > 0;
        if (!shown || (!accounts.empty() && !accounts.count(a.account()))) return;
        row(depth, account.name(), a.user(), std::to_string(a.shares()), a.figures(), true, false);
      });
  return 0;
}

}  // namespace trellis::cli::slurm
