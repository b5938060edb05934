// trellis history: the jobs of the store, finished and running, with a batch job's "batch" step,
// as sacct shows them (cli/slurm/accounting.h): by ids, user, state, partition, name and time
// window. Through a controller, or straight from the store with --store (no daemon).
#include <iostream>

#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "cli/live_client.h"
#include "cli/slurm/accounting.h"
#include "cli/slurm/slurm_command.h"

namespace trellis::cli {
namespace {

constexpr const char* kFields =
    "JobID%14,JobName%12,User,State,ExitCode,Submit,Start,End,Elapsed,NNodes,NodeList%20";

struct HistoryArgs {
  std::string conf, store;
  std::vector<std::string> ids, states, partitions, names;
  std::string user, start, end, format = kFields;
  bool allocations = false, parsable = false, no_header = false;
};

int run_history(const HistoryArgs& args) {
  auto bad = [](const std::string& message) {
    std::cerr << "trellis history: " << message << "\n";
    return kExitUsage;
  };
  slurm::AccountingQuery query;
  for (const std::string& id : args.ids) {
    char* end = nullptr;
    long long n = std::strtoll(id.c_str(), &end, 10);
    if (id.empty() || (*end != '\0' && *end != '_') || n <= 0)
      return bad("--jobs: '" + id + "' is not a job id");
    query.ids.push_back(n);
  }
  for (const std::string& s : args.states) {
    Result<v1::JobState> state = slurm::parse_state(s);
    if (!state) return bad("--state: " + state.error().message);
    query.states.push_back(*state);
  }
  if (!args.user.empty()) {
    Result<int> uid = slurm::parse_user(args.user);
    if (!uid) return bad("--user: " + uid.error().message);
    query.uid = *uid;
  }
  const Seconds now = slurm::now_seconds();
  if (!args.start.empty()) {
    Result<Seconds> t = slurm::parse_slurm_date(args.start, now);
    if (!t) return bad("--starttime: " + t.error().message);
    query.window_start = *t;
  }
  if (!args.end.empty()) {
    Result<Seconds> t = slurm::parse_slurm_date(args.end, now);
    if (!t) return bad("--endtime: " + t.error().message);
    query.window_end = *t;
  }
  query.partitions = args.partitions;
  query.names = args.names;
  Result<std::vector<slurm::PrintField>> fields = slurm::parse_fields(args.format);
  if (!fields) return bad("--format: " + fields.error().message);
  Result<std::vector<v1::JobInfo>> jobs = slurm::accounting_jobs(query, args.conf, args.store);
  if (!jobs) {
    std::cerr << "trellis history: " << jobs.error().message << "\n";
    return kExitFailure;
  }
  slurm::Parsable parsable = args.parsable ? slurm::Parsable::kNoEnding : slurm::Parsable::kNo;
  std::string out;
  if (!args.no_header) out += slurm::print_header(*fields, parsable);
  for (const slurm::AccountingRow& row : slurm::accounting_rows(*jobs, !args.allocations)) {
    std::vector<std::string> values;
    for (const slurm::PrintField& f : *fields)
      values.push_back(slurm::field_value(f.name, row, now));
    out += slurm::print_row(*fields, values, parsable);
  }
  std::cout << out << std::flush;
  return kExitOk;
}

}  // namespace

void add_history_command(CLI::App& app, int& status) {
  auto args = std::make_shared<HistoryArgs>();
  CLI::App* h = app.add_subcommand(
      "history",
      "Finished and running jobs from the store (as sacct): trellis history -u alice "
      "-S 2026-11-27 -E 2026-11-28");
  add_conf_option(*h, args->conf);
  h->add_option("--store", args->store,
                "Read this store directly (e.g. sqlite:DIR/state.db), with no controller");
  h->add_option("-j,--jobs", args->ids, "Only these job ids (an array's id: all its tasks)")
      ->delimiter(',');
  h->add_option("-u,--user", args->user, "Only this user's jobs (name or uid)");
  h->add_option("-s,--state", args->states, "Only jobs now in these states (CD, F, CA, R, ...)")
      ->delimiter(',');
  h->add_option("-S,--starttime", args->start,
                "Jobs not ended before this time: YYYY-MM-DD[THH:MM[:SS]], HH:MM, now-2hours");
  h->add_option("-E,--endtime", args->end, "Jobs submitted by this time (same forms)");
  h->add_option("-r,--partition", args->partitions, "Only these partitions")->delimiter(',');
  h->add_option("--name", args->names, "Only jobs of these names")->delimiter(',');
  h->add_option("-o,--format", args->format,
                "sacct's fields, e.g. JobID,State,ExitCode,Elapsed (Field%WIDTH sets a width)");
  h->add_flag("-X,--allocations", args->allocations, "Jobs only, not their batch steps");
  h->add_flag("-P,--parsable", args->parsable, "Fields separated by '|'");
  h->add_flag("-n,--noheader", args->no_header, "No header");
  h->callback([args, &status] { status = run_history(*args); });
}

}  // namespace trellis::cli
