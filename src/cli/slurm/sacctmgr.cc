// sacctmgr (and `trellis account`, the same words): the site's accounts and users. Changes go to
// the cluster's controllers (ChangeAccounts), which keep them in the store; `show` lists them in
// sacctmgr's columns (default, -P, -p, -n, format=). The words are read by
// core/account_command.h, the rules kept by core/accounts.h.
#include <getopt.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <sstream>

#include "cli/live_client.h"
#include "cli/slurm/account_tree.h"
#include "cli/slurm/slurm_command.h"
#include "cli/slurm/slurm_help.h"
#include "core/account_command.h"
#include "daemon/grpc_status.h"

namespace trellis::cli::slurm {
namespace {

enum { kIgnoredFlag = 256 };

const std::vector<LongOption> kOptions = {
    {"immediate", no_argument, 'i', nullptr, "commit changes immediately (the only way here)"},
    {"noheader", no_argument, 'n', nullptr, "no header will be added to the beginning of output"},
    {"parsable", no_argument, 'p', nullptr, "output will be '|' delimited with a '|' at the end"},
    {"parsable2", no_argument, 'P', nullptr,
     "output will be '|' delimited without a '|' at the end"},
    {"quiet", no_argument, 'Q', nullptr, "print no messages other than error messages"},
    {"readonly", no_argument, 'r', nullptr, "cannot run any modify commands"},
    {"verbose", no_argument, 'v', nullptr, "enable detailed logging"},
    {"associations", no_argument, 's', nullptr, "(with show user/account) show associations"},
    {"oneliner", no_argument, 'o', nullptr, "equivalent to \"-o\" (accepted)"},
    {"no-wait", no_argument, kIgnoredFlag},
};

constexpr const char* kNotes =
    "Commands:\n"
    "  add|create account NAME [Parent=P] [Fairshare=N] [Description=D] [Organization=O]\n"
    "                     [GrpTRES=node=N,cpu=N,gres/gpu=N] [MaxJobs=N] [MaxSubmitJobs=N]\n"
    "                     [MaxWall=[D-]HH:MM:SS]\n"
    "  add|create user NAME Account=A[,B] [DefaultAccount=A] [Fairshare=N] [AdminLevel=L]\n"
    "  modify account NAME set KEY=VALUE ...\n"
    "  modify user NAME [where Account=A] set KEY=VALUE ...\n"
    "  delete account NAME | delete user NAME [where Account=A]\n"
    "  add|create qos NAME [Priority=N] [Description=D] [limits, as modify]\n"
    "  modify qos NAME set [Priority=N] [UsageFactor=F] [MaxJobsPerUser=N]\n"
    "                      [MaxSubmitJobsPerUser=N] [MaxTRESPerUser=node=N] [GrpTRES=node=N]\n"
    "                      [MaxWall=[D-]HH:MM:SS] [Flags=DenyOnLimit|-1]\n"
    "  delete qos NAME\n"
    "  modify user|account NAME set QOS=A,B | QOS+=A | QOS-=A [DefaultQOS=A (users)]\n"
    "  show|list account|user|association|qos [NAME] [format=F1,F2%W,...] [tree] [withassoc]\n"
    "Changes are made at once (as with -i): there is no confirmation prompt.\n";

struct Options {
  bool noheader = false, parsable = false, parsable2 = false, quiet = false, readonly = false,
       with_assoc = false;
};

// One row of a listing: an account, a user, an association (with its account), or a QOS.
struct Row {
  const v1::AccountInfo* account = nullptr;
  const v1::AccountUserInfo* user = nullptr;
  const v1::AssociationInfo* association = nullptr;
  const Qos* qos = nullptr;
  int depth = 0;  // tree=: how far below root
};

// A limit's value from the stored text ("grptres=node=4 maxjobs=2").
std::string limit_of(const std::string& limits, const std::string& key) {
  std::stringstream words(limits);
  for (std::string word; words >> word;)
    if (word.rfind(key + "=", 0) == 0) return word.substr(key.size() + 1);
  return "";
}

struct Column {
  std::string name;    // as format= names it (compared in lower case)
  std::string header;  // as the header shows it
  int width;
  std::function<std::string(const Row&)> value;
};

// The accounts by name, for limits that children inherit (set by list() before printing).
std::map<std::string, const v1::AccountInfo*>& accounts_by_name() {
  static std::map<std::string, const v1::AccountInfo*> by_name;
  return by_name;
}

std::string account_of(const Row& r) {
  if (r.association) return r.association->account();
  return r.account ? r.account->name() : "";
}

// A limit on each user's jobs (MaxJobs, MaxSubmitJobs): the row's own, else the nearest of its
// accounts' going up, as sacctmgr shows what applies. Group limits (GrpTRES) are the row's own.
std::string inherited_limit(const Row& r, const std::string& key) {
  if (r.association) {
    if (std::string own = limit_of(r.association->limits(), key); !own.empty()) return own;
  }
  const v1::AccountInfo* at = nullptr;
  if (auto it = accounts_by_name().find(account_of(r)); it != accounts_by_name().end())
    at = it->second;
  for (int depth = 0; at && depth < 1000; ++depth) {
    if (std::string own = limit_of(at->limits(), key); !own.empty()) return own;
    auto parent = accounts_by_name().find(at->parent());
    at = parent == accounts_by_name().end() || at->name() == "root" ? nullptr : parent->second;
  }
  return "";
}

std::string own_limit(const Row& r, const std::string& key) {
  if (r.association) return limit_of(r.association->limits(), key);
  return r.account ? limit_of(r.account->limits(), key) : "";
}

const std::vector<Column>& columns() {
  static const std::vector<Column> all = {
      {"cluster", "Cluster", 10, [](const Row&) { return std::string("trellis"); }},
      {"account", "Account", 10, [](const Row& r) { return account_of(r); }},
      {"user", "User", 10,
       [](const Row& r) {
         return r.association ? r.association->user() : r.user ? r.user->name() : "";
       }},
      {"partition", "Partition", 10, [](const Row&) { return std::string(); }},
      {"fairshare", "Share", 9,
       [](const Row& r) {
         return std::to_string(r.association ? r.association->shares()
                               : r.account   ? r.account->shares()
                                             : 1);
       }},
      {"priority", "Priority", 10, [](const Row&) { return std::string(); }},
      {"grpjobs", "GrpJobs", 7, [](const Row&) { return std::string(); }},
      {"grptres", "GrpTRES", 13, [](const Row& r) { return own_limit(r, "grptres"); }},
      {"grpsubmit", "GrpSubmit", 9, [](const Row&) { return std::string(); }},
      {"grpwall", "GrpWall", 11, [](const Row&) { return std::string(); }},
      {"grptresmins", "GrpTRESMins", 13, [](const Row&) { return std::string(); }},
      {"maxjobs", "MaxJobs", 7, [](const Row& r) { return inherited_limit(r, "maxjobs"); }},
      {"maxtres", "MaxTRES", 13, [](const Row&) { return std::string(); }},
      {"maxtrespernode", "MaxTRESPerNode", 14, [](const Row&) { return std::string(); }},
      {"maxsubmit", "MaxSubmit", 9,
       [](const Row& r) { return inherited_limit(r, "maxsubmitjobs"); }},
      {"maxwall", "MaxWall", 11, [](const Row& r) { return inherited_limit(r, "maxwall"); }},
      {"maxtresmins", "MaxTRESMins", 13, [](const Row&) { return std::string(); }},
      {"qos", "QOS", 20,
       [](const Row& r) {
         return r.association ? r.association->qos() : r.account ? r.account->qos() : "";
       }},
      {"defaultqos", "Def QOS", 9,
       [](const Row& r) { return r.association ? r.association->default_qos() : ""; }},
      {"grptresrunmins", "GrpTRESRunMins", 13, [](const Row&) { return std::string(); }},
      {"description", "Descr", 20,
       [](const Row& r) { return r.account ? r.account->description() : ""; }},
      {"organization", "Org", 20,
       [](const Row& r) { return r.account ? r.account->organization() : ""; }},
      {"parentname", "Par Name", 10,
       [](const Row& r) { return r.account && !r.association ? r.account->parent() : ""; }},
      {"defaultaccount", "Def Acct", 10,
       [](const Row& r) { return r.user ? r.user->default_account() : ""; }},
      {"adminlevel", "Admin", 9, [](const Row& r) { return r.user ? r.user->admin_level() : ""; }},
  };
  return all;
}

std::string optional_count(const std::optional<int64_t>& n) {
  return n ? std::to_string(*n) : "";
}

// `sacctmgr show qos`'s columns, in its default order.
const std::vector<Column>& qos_columns() {
  auto empty = [](const Row&) { return std::string(); };
  static const std::vector<Column> all = {
      {"name", "Name", 10, [](const Row& r) { return r.qos->name; }},
      {"priority", "Priority", 10, [](const Row& r) { return std::to_string(r.qos->priority); }},
      {"gracetime", "GraceTime", 10, [](const Row&) { return std::string("00:00:00"); }},
      {"preempt", "Preempt", 10, empty},
      {"preemptexempttime", "PreemptExemptTime", 19, empty},
      {"preemptmode", "PreemptMode", 11, [](const Row&) { return std::string("cluster"); }},
      // 20 wide when format= names it, 40 in the default listing (as sacctmgr's)
      {"flags", "Flags", 20, [](const Row& r) { return format_qos_flags(*r.qos); }},
      {"usagethreshold", "UsageThres", 10, empty},
      {"usagefactor", "UsageFactor", 11,
       [](const Row& r) { return format_usage_factor(r.qos->usage_factor); }},
      {"grptres", "GrpTRES", 13, [](const Row& r) { return format_tres(r.qos->grp_tres); }},
      {"grptresmins", "GrpTRESMins", 13, empty},
      {"grptresrunmins", "GrpTRESRunMins", 13, empty},
      {"grpjobs", "GrpJobs", 7, empty},
      {"grpsubmitjobs", "GrpSubmit", 9, empty},
      {"grpwall", "GrpWall", 11, empty},
      {"maxtresperjob", "MaxTRES", 13, empty},
      {"maxtrespernode", "MaxTRESPerNode", 14, empty},
      {"maxtresmins", "MaxTRESMins", 13, empty},
      {"maxwalldurationperjob", "MaxWall", 11,
       [](const Row& r) { return r.qos->max_wall ? format_wall(*r.qos->max_wall) : ""; }},
      {"maxtresperuser", "MaxTRESPU", 13,
       [](const Row& r) { return format_tres(r.qos->max_tres_per_user); }},
      {"maxjobsperuser", "MaxJobsPU", 9,
       [](const Row& r) { return optional_count(r.qos->max_jobs_per_user); }},
      {"maxsubmitjobsperuser", "MaxSubmitPU", 11,
       [](const Row& r) { return optional_count(r.qos->max_submit_per_user); }},
      {"maxtresperaccount", "MaxTRESPA", 13, empty},
      {"maxjobsperaccount", "MaxJobsPA", 9, empty},
      {"maxsubmitjobsperaccount", "MaxSubmitPA", 11, empty},
      {"mintresperjob", "MinTRES", 13, empty},
      {"description", "Descr", 20, [](const Row& r) { return r.qos->description; }},
  };
  return all;
}

// A format= field: a column's name (any case, a unique prefix, or one of sacctmgr's other
// spellings), with an optional %WIDTH.
Result<Column> column_named(const std::string& field, bool qos) {
  std::string name = field.substr(0, field.find('%'));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (name == "share" || name == "shares") name = "fairshare";
  if (name == "descr") name = "description";
  if (name == "org") name = "organization";
  if (name == "defaultacct" || name == "defacct") name = "defaultaccount";
  if (name == "admin") name = "adminlevel";
  if (name == "parent") name = "parentname";
  if (qos) {
    // show qos's headers are names too (format=MaxJobsPU,MaxWall)
    static const std::map<std::string, std::string> headers = {
        {"maxjobspu", "maxjobsperuser"},
        {"maxsubmitpu", "maxsubmitjobsperuser"},
        {"maxtrespu", "maxtresperuser"},
        {"maxwall", "maxwalldurationperjob"},
        {"maxtres", "maxtresperjob"},
        {"maxjobspa", "maxjobsperaccount"},
        {"maxsubmitpa", "maxsubmitjobsperaccount"},
        {"maxtrespa", "maxtresperaccount"},
        {"mintres", "mintresperjob"},
        {"grpsubmit", "grpsubmitjobs"},
        {"usagethres", "usagethreshold"},
        {"grptresrunmin", "grptresrunmins"}};
    if (auto at = headers.find(name); at != headers.end()) name = at->second;
  } else if (name == "maxsubmitjobs") {
    name = "maxsubmit";
  }
  const Column* found = nullptr;
  for (const Column& c : qos ? qos_columns() : columns()) {
    if (c.name == name) {
      found = &c;
      break;
    }
    if (!name.empty() && c.name.rfind(name, 0) == 0) {
      if (found) return fail("format: '" + field + "' names more than one field");
      found = &c;
    }
  }
  if (!found) return fail("format: unknown field '" + field + "'");
  Column column = *found;
  if (size_t percent = field.find('%'); percent != std::string::npos) {
    const std::string width = field.substr(percent + 1);
    if (width.empty() || width.size() > 4 ||
        !std::all_of(width.begin(), width.end(), [](unsigned char c) { return std::isdigit(c); }))
      return fail("format: '" + field + "': the width after '%' must be a number");
    column.width = std::stoi(width);
  }
  return column;
}

// sacctmgr's cells: right-justified, cut to the width with a '+' at the end.
std::string cell(const std::string& text, int width) {
  if (width <= 0) return text;
  const size_t w = static_cast<size_t>(width);
  if (text.size() > w) return text.substr(0, w - 1) + "+";
  return std::string(w - text.size(), ' ') + text;
}

void print_table(std::vector<Column> shown, const std::vector<Row>& rows, const Options& options,
                 bool tree) {
  const bool parsable = options.parsable || options.parsable2;
  // tree: the account column is 20 wide, left-justified, and indented one space per level
  // (in -P too), as sacctmgr prints it.
  for (Column& c : shown)
    if (tree && c.name == "account" && c.width == 10) c.width = 20;
  auto line = [&](const std::function<std::string(const Column&)>& text, bool header) {
    std::string out;
    for (size_t i = 0; i < shown.size(); ++i) {
      const Column& c = shown[i];
      std::string value = text(c);
      if (parsable) {
        out += value;
        if (i + 1 < shown.size() || options.parsable) out += "|";
        continue;
      }
      const size_t width = static_cast<size_t>(c.width);
      if (header && value.size() > width) value.resize(width);  // headers are cut, no '+'
      if (tree && c.name == "account") {
        if (value.size() > width) value = value.substr(0, width - 1) + "+";
        out += value + std::string(width - value.size(), ' ') + " ";
      } else {
        out += cell(value, c.width) + " ";
      }
    }
    std::cout << out << "\n";
  };
  if (!options.noheader) {
    line([](const Column& c) { return c.header; }, true);
    if (!parsable) line([](const Column& c) { return std::string(c.width, '-'); }, true);
  }
  for (const Row& row : rows) {
    line(
        [&](const Column& c) {
          std::string value = c.value(row);
          if (tree && c.name == "account")
            value = std::string(static_cast<size_t>(row.depth), ' ') + value;
          return value;
        },
        false);
  }
}

bool matches(const std::map<std::string, std::string>& filters, const std::string& key,
             const std::string& value) {
  auto at = filters.find(key);
  if (at == filters.end()) return true;
  for (const std::string& item : split_list(at->second)) {
    std::string low = item;
    std::transform(low.begin(), low.end(), low.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (low == value) return true;
  }
  return false;
}

// The associations in the tree's order: root first, then each account's users and sub-accounts,
// by name, depth first (how sacctmgr lists them).
std::vector<Row> association_rows(const v1::ListAccountsReply& reply) {
  std::vector<Row> rows;
  walk_account_tree(
      reply,
      [&](const v1::AccountInfo& account, int depth) {
        rows.push_back(Row{.account = &account, .depth = depth});
      },
      [&](const v1::AccountInfo& account, const v1::AssociationInfo& a, int depth) {
        rows.push_back(Row{.account = &account, .association = &a, .depth = depth});
      });
  return rows;
}

int show(const AccountCommand& command, const Options& options, std::string_view program) {
  Result<LiveClient> client = connect_to_cluster("");
  if (!client) return report_error(program, client.error());
  Result<v1::ListAccountsReply> listed = list_accounts(*client);
  if (!listed) return report_error(program, listed.error());
  const v1::ListAccountsReply& reply = *listed;
  accounts_by_name().clear();
  for (const v1::AccountInfo& a : reply.accounts()) accounts_by_name()[a.name()] = &a;
  std::vector<std::string> format = command.format;
  std::vector<Row> rows;
  const bool with_assoc = command.with_assoc || options.with_assoc;
  std::vector<Qos> qos;  // read back from the reply's settings
  qos.reserve(static_cast<size_t>(reply.qos_size()));
  switch (command.shown) {
    case AccountCommand::kAccounts:
      if (format.empty()) format = {"Account", "Descr", "Org"};
      if (with_assoc && command.format.empty())
        format.insert(format.end(), {"Cluster", "ParentName", "User", "Share", "GrpJobs", "GrpTRES",
                                     "MaxJobs", "MaxSubmit", "QOS"});
      for (const v1::AccountInfo& a : reply.accounts()) {
        if (!matches(command.filters, "name", a.name())) continue;
        rows.push_back(Row{.account = &a});
        if (!with_assoc) continue;
        for (const v1::AssociationInfo& assoc : reply.associations())
          if (assoc.account() == a.name())
            rows.push_back(Row{.account = &a, .association = &assoc});
      }
      std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
        return a.account->name() < b.account->name();
      });
      break;
    case AccountCommand::kUsers:
      if (format.empty()) format = {"User", "DefaultAccount", "AdminLevel"};
      for (const v1::AccountUserInfo& u : reply.users()) {
        if (!matches(command.filters, "name", u.name())) continue;
        rows.push_back(Row{.user = &u});
        if (!with_assoc) continue;
        for (const v1::AssociationInfo& assoc : reply.associations())
          if (assoc.user() == u.name()) rows.push_back(Row{.user = &u, .association = &assoc});
      }
      if (with_assoc && command.format.empty())
        format.insert(format.end(),
                      {"Cluster", "Account", "Partition", "Share", "MaxJobs", "MaxSubmit", "QOS"});
      break;
    case AccountCommand::kAssociations:
      if (format.empty())
        format = {"Cluster",     "Account",     "User",    "Partition",      "Share",
                  "Priority",    "GrpJobs",     "GrpTRES", "GrpSubmit",      "GrpWall",
                  "GrpTRESMins", "MaxJobs",     "MaxTRES", "MaxTRESPerNode", "MaxSubmit",
                  "MaxWall",     "MaxTRESMins", "QOS",     "DefaultQOS",     "GrpTRESRunMins"};
      for (const Row& row : association_rows(reply)) {
        const std::string user = row.association ? row.association->user() : "";
        if (!matches(command.filters, "name", row.account->name()) &&
            !matches(command.filters, "name", user))
          continue;
        if (!matches(command.filters, "account", row.account->name())) continue;
        if (command.filters.count("user") && !matches(command.filters, "user", user)) continue;
        rows.push_back(row);
      }
      break;
    case AccountCommand::kQos:
      if (format.empty())
        for (const Column& c : qos_columns())
          if (c.name != "description") format.push_back(c.name == "flags" ? "flags%40" : c.name);
      for (const v1::QosInfo& info : reply.qos()) {
        Qos q;
        q.name = info.name();
        q.description = info.description();
        if (Status s = decode_qos_settings(info.settings(), q); !s)
          return report_error(program, s.error());
        qos.push_back(std::move(q));
      }
      for (const Qos& q : qos)
        if (matches(command.filters, "name", q.name)) rows.push_back(Row{.qos = &q});
      break;
  }
  std::vector<Column> shown;
  for (const std::string& field : format) {
    Result<Column> column = column_named(field, command.shown == AccountCommand::kQos);
    if (!column) return report_error(program, column.error());
    shown.push_back(*column);
  }
  print_table(shown, rows, options, command.tree);
  return 0;
}

}  // namespace

int account_command_main(const std::vector<std::string>& args, std::string_view program) {
  static const CommandHelp help{"sacctmgr",
                                "[OPTIONS] COMMAND ENTITY [SPECS]",
                                kOptions,
                                {.h_is_help = true, .options_end_at_command = true},
                                kNotes};
  if (std::optional<int> status = answer_help(args, help)) return *status;
  Result<ParsedArgs> parsed = parse_options(args, "+inpPQrvso", kOptions);
  if (!parsed) return report_error(program, parsed.error());
  Options options;
  for (const Parsed& o : parsed->options) {
    if (o.id == 'n') options.noheader = true;
    if (o.id == 'p') options.parsable = true;
    if (o.id == 'P') options.parsable2 = true;
    if (o.id == 'Q') options.quiet = true;
    if (o.id == 'r') options.readonly = true;
    if (o.id == 's') options.with_assoc = true;
  }
  Result<AccountCommand> command = parse_account_command(parsed->rest);
  if (!command) return report_error(program, command.error());
  if (command->action == AccountCommand::kShow) return show(*command, options, program);
  if (options.readonly)
    return report_error(program, fail("-r (--readonly): this command would change accounts"));
  const AccountChange& change = command->change;
  v1::AccountChangeRequest request;
  request.set_verb(change.verb == AccountChange::kAdd      ? "add"
                   : change.verb == AccountChange::kModify ? "modify"
                                                           : "delete");
  request.set_entity(change.entity == AccountChange::kAccount ? "account"
                     : change.entity == AccountChange::kUser  ? "user"
                                                              : "qos");
  for (const std::string& name : change.names) request.add_names(name);
  for (const auto& [key, value] : change.where) (*request.mutable_where())[key] = value;
  for (const auto& [key, value] : change.set) (*request.mutable_set())[key] = value;
  Result<LiveClient> client = connect_to_cluster("");
  if (!client) return report_error(program, client.error());
  v1::AccountChangeReply reply;
  grpc::Status status =
      client->controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
        return stub.ChangeAccounts(&context, request, &reply);
      });
  if (!status.ok()) return report_error(program, from_grpc(status, "changing the accounts"));
  if (!options.quiet) std::cout << reply.done();
  return 0;
}

int sacctmgr_main(const std::vector<std::string>& args) {
  return account_command_main(args, "sacctmgr");
}

}  // namespace trellis::cli::slurm
