// sacct: finished and running jobs from the store (cli/slurm/accounting.h), in Slurm's fixed-width
// or parsable (-p, -P) layout. State names are Slurm's, without "by UID" after CANCELLED.
#include <getopt.h>
#include <unistd.h>

#include <iostream>
#include <set>

#include "cli/slurm/accounting.h"
#include "cli/slurm/slurm_command.h"
#include "cli/slurm/slurm_help.h"

namespace trellis::cli::slurm {
namespace {

constexpr const char* kDefaultFields = "jobid,jobname,partition,account,alloccpus,state,exitcode";
constexpr const char* kBriefFields = "jobid,state,exitcode";

enum { kName = 256, kIgnoredFlag, kUnsupported, kUnsupportedFlag };

const std::vector<LongOption> kOptions = {
    {"parsable2", no_argument, 'P', nullptr,
     "output will be '|' delimited without a '|' at the end"},
    {"parsable", no_argument, 'p', nullptr, "output will be '|' delimited with a '|' at the end"},
    {"noheader", no_argument, 'n', nullptr, "no header will be added to the beginning of output"},
    {"jobs", required_argument, 'j', "job(.step)",
     "use this comma separated list of jobids (an array's id: all its tasks)"},
    {"format", required_argument, 'o', "field[%width],...",
     "comma separated list of fields (JobID, JobName, State, ExitCode, ...; --helpformat)"},
    {"starttime", required_argument, 'S', "time",
     "jobs not ended before this time (YYYY-MM-DD[THH:MM[:SS]], now-2hours, ...)"},
    {"endtime", required_argument, 'E', "time", "jobs submitted by this time"},
    {"user", required_argument, 'u', "user_list", "display jobs of these users (names or uids)"},
    {"uid", required_argument, 'u'},
    {"allocations", no_argument, 'X', nullptr,
     "only show statistics relevant to the job allocation"},
    {"state", required_argument, 's', "state_list",
     "select jobs based on their state (CD, F, CA, ...)"},
    {"allusers", no_argument, 'a', nullptr, "display jobs for all users"},
    {"brief", no_argument, 'b', nullptr, "equivalent to '--format=jobid,state,exitcode'"},
    {"partition", required_argument, 'r', "partition_list", "comma separated list of partitions"},
    {"name", required_argument, kName, "job_name_list",
     "display jobs that have any of these name(s)"},
    {"allclusters", no_argument, 'L', nullptr, "accepted (one cluster)"},
    {"duplicates", no_argument, 'D', nullptr, "accepted, no effect"},
    {"noconvert", no_argument, kIgnoredFlag, nullptr, "accepted, no effect"},
    {"verbose", no_argument, 'v', nullptr, "verbosity level"},
    {"helpformat", no_argument, 'e', nullptr, "list the fields that can be given to --format"},
    {"truncate", no_argument, 'T', nullptr, "accepted, no effect"},
    {"completion", no_argument, 'c'},
    {"long", no_argument, 'l'},
    {"clusters", required_argument, 'M'},
    {"accounts", required_argument, 'A'},
    {"qos", required_argument, 'q'},
    {"nodelist", required_argument, 'N'},
    {"json", optional_argument, kUnsupported},
    {"yaml", optional_argument, kUnsupported},
    {"group", required_argument, 'g'},
    {"file", required_argument, 'f'},
    {"whole-hetjob", optional_argument, kUnsupported},
};

}  // namespace

int sacct_main(const std::vector<std::string>& args) {
  static const CommandHelp help{"sacct", "[OPTIONS]", kOptions, {.h_is_help = true}};
  if (std::optional<int> status = answer_help(args, help)) return *status;
  Result<ParsedArgs> parsed =
      parse_options(args, "Ppnj:o:S:E:u:Xs:abr:LDveTclM:A:q:N:g:f:", kOptions);
  if (!parsed) return report_error("sacct", parsed.error());
  Parsable parsable = Parsable::kNo;
  bool header = true, steps = true, all_users = false, brief = false, help_format = false;
  std::string format;
  std::string start_text, end_text;
  std::set<int> uids;
  AccountingQuery query;
  for (const Parsed& o : parsed->options) {
    switch (o.id) {
      case 'P':
        parsable = Parsable::kNoEnding;
        break;
      case 'p':
        parsable = Parsable::kTrailing;
        break;
      case 'n':
        header = false;
        break;
      case 'j':
        for (const std::string& id : split_list(o.value)) {
          std::string head = id.substr(0, id.find_first_of("_."));
          char* end = nullptr;
          long long n = std::strtoll(head.c_str(), &end, 10);
          if (head.empty() || *end != '\0' || n <= 0)
            return report_error("sacct", fail("Invalid job id: " + id));
          query.ids.push_back(n);
        }
        break;
      case 'o':
        format += (format.empty() ? "" : ",") + o.value;
        break;
      case 'S':
        start_text = o.value;
        break;
      case 'E':
        end_text = o.value;
        break;
      case 'u':
        for (const std::string& user : split_list(o.value)) {
          Result<int> uid = parse_user(user);
          if (!uid) return report_error("sacct", fail("--user: " + uid.error().message));
          uids.insert(*uid);
        }
        break;
      case 'X':
        steps = false;
        break;
      case 's':
        for (const std::string& s : split_list(o.value)) {
          Result<v1::JobState> state = parse_state(s);
          if (!state) return report_error("sacct", fail("--state: " + state.error().message));
          query.states.push_back(*state);
        }
        break;
      case 'a':
        all_users = true;
        break;
      case 'b':
        brief = true;
        break;
      case 'r':
        query.partitions = split_list(o.value);
        break;
      case kName:
        query.names = split_list(o.value);
        break;
      case 'e':
        help_format = true;
        break;
      case 'L':
      case 'D':
      case 'v':
      case 'T':
      case kIgnoredFlag:
        break;
      default:
        return report_error("sacct", fail("option '" + o.word +
                                          "' is not supported by Trellis (README: \"Coming "
                                          "from Slurm\")"));
    }
  }
  if (!parsed->rest.empty())
    return report_error("sacct", fail("Unknown arguments: " + parsed->rest.front()));
  if (format.empty()) format = brief ? kBriefFields : kDefaultFields;
  Result<std::vector<PrintField>> fields = parse_fields(format);
  if (!fields) return report_error("sacct", fields.error());
  if (help_format) {
    for (const PrintField& f : *fields) std::cout << f.name << "\n";
    return 0;
  }
  const Seconds now = now_seconds();
  // As sacct: without -j, jobs since midnight today, of the caller unless -a or -u.
  if (!start_text.empty()) {
    Result<Seconds> start = parse_slurm_date(start_text, now);
    if (!start) return report_error("sacct", fail("--starttime: " + start.error().message));
    query.window_start = *start;
  } else if (query.ids.empty()) {
    Result<Seconds> midnight = parse_slurm_date("00:00:00", now);
    if (midnight) query.window_start = *midnight;
  }
  if (!end_text.empty()) {
    Result<Seconds> end = parse_slurm_date(end_text, now);
    if (!end) return report_error("sacct", fail("--endtime: " + end.error().message));
    query.window_end = *end;
  }
  if (uids.size() == 1) query.uid = *uids.begin();
  if (uids.empty() && !all_users && query.ids.empty()) query.uid = static_cast<int>(getuid());
  Result<std::vector<v1::JobInfo>> jobs = accounting_jobs(query, "", "");
  if (!jobs) return report_error("sacct", jobs.error());
  std::vector<v1::JobInfo> kept;
  for (v1::JobInfo& job : *jobs)
    if (uids.size() <= 1 || uids.count(job.uid())) kept.push_back(std::move(job));
  std::string out;
  if (header) out += print_header(*fields, parsable);
  for (const AccountingRow& row : accounting_rows(kept, steps)) {
    std::vector<std::string> values;
    for (const PrintField& f : *fields) values.push_back(field_value(f.name, row, now));
    out += print_row(*fields, values, parsable);
  }
  std::cout << out << std::flush;
  return 0;
}

}  // namespace trellis::cli::slurm
