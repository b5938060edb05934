// scancel: cancels (or signals, -s) jobs named by id ("12", "12_3", "12_[1-3]") or chosen by
// filters (-u, -t, -n, -p) among the active jobs.
#include <getopt.h>
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <optional>
#include <set>

#include "cli/job_rows.h"
#include "cli/live_client.h"
#include "cli/slurm/slurm_command.h"
#include "cli/slurm/slurm_format.h"
#include "cli/slurm/slurm_help.h"
#include "daemon/grpc_status.h"

namespace trellis::cli::slurm {
namespace {

enum { kMe = 256, kIgnoredFlag };

const std::vector<LongOption> kOptions = {
    {"user", required_argument, 'u', "user_name", "act only on jobs of this user"},
    {"state", required_argument, 't', "states",
     "act only on jobs in this state (PENDING, RUNNING, SUSPENDED)"},
    {"signal", required_argument, 's', "name | integer",
     "signal to send to job, default is SIGKILL"},
    {"name", required_argument, 'n', "job_name", "act only on jobs with this name"},
    {"partition", required_argument, 'p', "partition", "act only on jobs in this partition"},
    {"me", no_argument, kMe, nullptr, "equivalent to --user=<my username>"},
    {"full", no_argument, 'f', nullptr, "signal batch shell and all steps for specified job"},
    {"quiet", no_argument, 'Q', nullptr, "disable warnings"},
    {"verbose", no_argument, 'v', nullptr, "verbosity level"},
    {"batch", no_argument, 'b'},
    {"interactive", no_argument, 'i'},
    {"nodelist", required_argument, 'w'},
    {"account", required_argument, 'A'},
    {"qos", required_argument, 'q'},
    {"reservation", required_argument, 'R'},
    {"clusters", required_argument, 'M'},
    {"hurry", no_argument, 'H'},
    {"wckey", required_argument, kIgnoredFlag + 1},
};

Result<int> parse_signal(const std::string& text) {
  char* end = nullptr;
  long n = std::strtol(text.c_str(), &end, 10);
  if (!text.empty() && *end == '\0') {
    if (n < 1 || n > 64) return fail("--signal: " + text + " is not a signal number");
    return static_cast<int>(n);
  }
  std::string name = text.starts_with("SIG") ? text.substr(3) : text;
  static const std::pair<const char*, int> kNames[] = {
      {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"KILL", SIGKILL},
      {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"TERM", SIGTERM}, {"CONT", SIGCONT},
      {"STOP", SIGSTOP}, {"TSTP", SIGTSTP}, {"ALRM", SIGALRM}, {"ABRT", SIGABRT}};
  for (const auto& [n2, number] : kNames)
    if (name == n2) return number;
  return fail("--signal: '" + text + "' is not a signal (e.g. TERM, USR1, 10)");
}

}  // namespace

int scancel_main(const std::vector<std::string>& args) {
  static const CommandHelp help{
      "scancel", "[OPTIONS] [job_id[_array_id]]...", kOptions, {.h_is_help = false}};
  if (std::optional<int> status = answer_help(args, help)) return *status;
  Result<ParsedArgs> parsed = parse_options(args, "u:t:s:n:p:fQvbiw:A:q:R:M:H", kOptions);
  if (!parsed) return report_error("scancel", parsed.error());
  int signal = 0;
  std::optional<int> uid;
  std::set<v1::JobState> states;
  std::set<std::string> names, partitions;
  bool quiet = false;
  for (const Parsed& o : parsed->options) {
    switch (o.id) {
      case 'u': {
        Result<int> parsed_uid = parse_user(o.value);
        if (!parsed_uid)
          return report_error("scancel", fail("--user: " + parsed_uid.error().message));
        uid = *parsed_uid;
        break;
      }
      case kMe:
        uid = static_cast<int>(getuid());
        break;
      case 't':
        for (const std::string& s : split_list(o.value)) {
          Result<v1::JobState> state = parse_state(s);
          if (!state) return report_error("scancel", fail("--state: " + state.error().message));
          states.insert(*state);
        }
        break;
      case 's': {
        Result<int> number = parse_signal(o.value);
        if (!number) return report_error("scancel", number.error());
        signal = *number;
        break;
      }
      case 'n':
        for (const std::string& n : split_list(o.value)) names.insert(n);
        break;
      case 'p':
        for (const std::string& p : split_list(o.value)) partitions.insert(p);
        break;
      case 'Q':
        quiet = true;
        break;
      case 'f':
      case 'v':
        break;
      default:
        return report_error("scancel", fail("option '" + o.word +
                                            "' is not supported by Trellis (README: \"Coming "
                                            "from Slurm\")"));
    }
  }
  bool filtered = uid || !states.empty() || !names.empty() || !partitions.empty();
  if (parsed->rest.empty() && !filtered)
    return report_error("scancel", fail("No job identification provided"));
  Result<LiveClient> client = connect_to_cluster("");
  if (!client) return report_error("scancel", client.error());
  std::vector<int64_t> ids;
  if (!parsed->rest.empty()) {
    Result<std::vector<int64_t>> resolved = resolve_job_ids(*client, parsed->rest);
    if (!resolved) return report_error("scancel", resolved.error());
    ids = *resolved;
  }
  if (filtered) {
    // The active jobs that match every filter (and the ids, when given).
    v1::ListJobsRequest request;
    for (int64_t id : ids) request.add_job_ids(id);
    request.set_exact_ids(true);
    if (uid) {
      request.set_uid(*uid);
      request.set_has_uid(true);
    }
    Result<v1::ListJobsReply> reply = list_jobs(*client, request);
    if (!reply) return report_error("scancel", reply.error());
    ids.clear();
    for (const v1::JobInfo& job : reply->jobs()) {
      if (!states.empty() && !states.count(job.state())) continue;
      if (!names.empty() && !names.count(job.spec().name())) continue;
      if (!partitions.empty() && !partitions.count(job.spec().partition())) continue;
      ids.push_back(job.id());
    }
    if (ids.empty()) return 0;
  }
  v1::CancelRequest request;
  for (int64_t id : ids) request.add_job_ids(id);
  request.set_exact_ids(true);
  request.set_signal(signal);
  v1::CancelReply reply;
  grpc::Status status =
      client->controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
        return stub.Cancel(&context, request, &reply);
      });
  if (!status.ok()) {
    Error error = from_grpc(status, "cancelling");
    if (!quiet) std::cerr << "scancel: error: " << error.message << "\n";
    return 1;
  }
  return 0;
}

}  // namespace trellis::cli::slurm
