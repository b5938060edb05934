// squeue: the jobs in the system, in Slurm's default columns or an -o format. Pending tasks of
// an array are one row ("123_[4-100%10]") unless -r.
#include <getopt.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iostream>
#include <map>
#include <set>

#include "cli/job_rows.h"
#include "cli/live_client.h"
#include "cli/slurm/slurm_command.h"
#include "cli/slurm/slurm_format.h"
#include "cli/slurm/slurm_help.h"

namespace trellis::cli::slurm {
namespace {

// Slurm 22.05's default: "jobarrayid:.18 ,partition:.9 ,name:.8 ,username:.8 ,statecompact:.2
// ,timeused:.10 ,numnodes:.6 ,reasonlist:0" (src/squeue/squeue.c), the same as this.
constexpr const char* kDefaultFormat = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
constexpr const char* kLongFormat = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";
// --start: pending jobs with the start the scheduler's plan expects, soonest first.
constexpr const char* kStartFormat = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R";
constexpr const char* kCodes = "iAFKjuUgGtTMlLDNRrPVSeEZoaqCcmbQkyBY";
// Fields that -O names but -o has no letter for.
constexpr char kTresPerJob = '1', kTresPerTask = '2', kTresAlloc = '3', kTresPerSocket = '4';

// -O's field names (Slurm 22.05's, in any case), each as the -o code that prints the same.
const std::map<std::string, char> kFieldCodes = {{"jobid", 'i'},
                                                 {"jobarrayid", 'i'},
                                                 {"arrayjobid", 'F'},
                                                 {"arraytaskid", 'K'},
                                                 {"name", 'j'},
                                                 {"username", 'u'},
                                                 {"userid", 'U'},
                                                 {"groupname", 'g'},
                                                 {"groupid", 'G'},
                                                 {"statecompact", 't'},
                                                 {"state", 'T'},
                                                 {"timeused", 'M'},
                                                 {"timelimit", 'l'},
                                                 {"timeleft", 'L'},
                                                 {"numnodes", 'D'},
                                                 {"nodelist", 'N'},
                                                 {"reasonlist", 'R'},
                                                 {"reason", 'r'},
                                                 {"partition", 'P'},
                                                 {"submittime", 'V'},
                                                 {"starttime", 'S'},
                                                 {"schednodes", 'Y'},
                                                 {"endtime", 'e'},
                                                 {"dependency", 'E'},
                                                 {"workdir", 'Z'},
                                                 {"command", 'o'},
                                                 {"account", 'a'},
                                                 {"qos", 'q'},
                                                 {"numcpus", 'C'},
                                                 {"mincpus", 'c'},
                                                 {"minmemory", 'm'},
                                                 {"tres-per-node", 'b'},
                                                 {"priority", 'Q'},
                                                 {"comment", 'k'},
                                                 {"nice", 'y'},
                                                 {"batchhost", 'B'},
                                                 {"tres-per-job", kTresPerJob},
                                                 {"tres-per-task", kTresPerTask},
                                                 {"tres-alloc", kTresAlloc},
                                                 {"tres-per-socket", kTresPerSocket}};

// -O "name[:[.]size[suffix]],...": each field 20 wide unless sized, left-aligned unless '.',
// its suffix printed after it. A name Slurm does not know is reported on stderr and left out,
// and the others are printed, as squeue does ("Invalid job format specification: X").
std::vector<FormatItem> parse_fields(const std::string& text) {
  std::vector<FormatItem> items;
  for (const std::string& field : split_list(text)) {
    const size_t colon = field.find(':');
    std::string name = field.substr(0, colon);
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    auto code = kFieldCodes.find(lower);
    if (code == kFieldCodes.end()) {
      std::cerr << "squeue: error: Invalid job format specification: " << name << "\n";
      continue;
    }
    FormatItem item{.code = code->second, .width = 20, .right = false, .text = ""};
    std::string suffix;
    if (colon != std::string::npos) {
      size_t at = colon + 1;
      if (at < field.size() && field[at] == '.') {
        item.right = true;
        ++at;
      }
      size_t digits = at;
      while (digits < field.size() && std::isdigit(static_cast<unsigned char>(field[digits])))
        ++digits;
      if (digits > at) item.width = std::stoi(field.substr(at, std::min<size_t>(digits - at, 4)));
      suffix = field.substr(digits);
    }
    items.push_back(item);
    if (!suffix.empty())
      items.push_back(FormatItem{.code = 0, .width = 0, .right = false, .text = suffix});
  }
  return items;
}

enum { kMe = 256, kIgnored, kIgnoredFlag, kUnsupported, kUnsupportedFlag, kStart };

const std::vector<LongOption> kOptions = {
    {"noheader", no_argument, 'h', nullptr, "no headers on output"},
    {"format", required_argument, 'o', "format",
     "format specification (%i %P %j %u %t %M %D %R ...; squeue's codes)"},
    {"user", required_argument, 'u', "user_name(s)", "comma separated list of users to view"},
    {"jobs", required_argument, 'j', "job(s)", "comma separated list of jobs IDs to view"},
    {"states", required_argument, 't', "state(s)",
     "comma separated list of states to view (PD, R, CD, ... or all)"},
    {"partition", required_argument, 'p', "partition(s)",
     "comma separated list of partitions to view"},
    {"name", required_argument, 'n', "job_name(s)", "comma separated list of job names to view"},
    {"all", no_argument, 'a', nullptr, "display jobs in hidden partitions (all are shown)"},
    {"long", no_argument, 'l', nullptr, "long report"},
    {"array", no_argument, 'r', nullptr, "display one job array element per line"},
    {"me", no_argument, kMe, nullptr, "equivalent to --user=<my username>"},
    {"verbose", no_argument, 'v', nullptr, "verbosity level"},
    {"noconvert", no_argument, kIgnoredFlag, nullptr, "accepted, no effect"},
    {"array-unique", no_argument, kIgnoredFlag, nullptr, "accepted, no effect"},
    {"local", no_argument, kIgnoredFlag, nullptr, "accepted, no effect (one cluster)"},
    {"federation", no_argument, kIgnoredFlag, nullptr, "accepted, no effect (one cluster)"},
    {"Format", required_argument, 'O', "fields",
     "fields as NAME[:[.]SIZE[SUFFIX]],... (jobid,state,tres-per-node:30,tres-alloc; 20 wide "
     "unless sized)"},
    {"sort", required_argument, 'S'},
    {"iterate", required_argument, 'i'},
    {"steps", optional_argument, 's'},
    {"start", no_argument, kStart, nullptr,
     "pending jobs with their expected start (the backfill plan's; N/A when it has none), "
     "soonest first"},
    {"nodelist", required_argument, 'w'},
    {"clusters", required_argument, 'M'},
    {"licenses", required_argument, 'L'},
    {"qos", required_argument, 'q'},
    {"account", required_argument, 'A'},
    {"reservation", required_argument, 'R'},
    {"json", optional_argument, kUnsupported},
    {"yaml", optional_argument, kUnsupported},
};

// The first host of a hostlist: "n[4-7,9]" -> "n4".
std::string first_host(const std::string& nodelist) {
  size_t open = nodelist.find('[');
  if (open == std::string::npos) return nodelist.substr(0, nodelist.find(','));
  size_t end = nodelist.find_first_of("-,]", open);
  return nodelist.substr(0, open) + nodelist.substr(open + 1, end - open - 1);
}

std::string value_of(char code, const JobRow& row, Seconds now) {
  const v1::JobInfo& job = *row.job;
  const bool pending = job.state() == v1::PENDING;
  switch (code) {
    case 'i':
      return row.id;
    case 'A':
      return std::to_string(job.id());
    case 'F':
      return std::to_string(job.array_job_id() != 0 ? job.array_job_id() : job.id());
    case 'K':
      return job.array_job_id() != 0 ? std::to_string(job.array_task_id()) : "N/A";
    case 'j':
      return job.spec().name();
    case 'u':
      return job.user();
    case 'U':
      return std::to_string(job.uid());
    case 'g':
      return group_name(job.gid());
    case 'G':
      return std::to_string(job.gid());
    case 't':
      return state_code(job.state());
    case 'T':
      return state_name(job.state());
    case 'M':
      return squeue_time(run_seconds(job, now));
    case 'l':
      return time_limit(job.spec().time_limit(), squeue_time);
    case 'L':
      return job.start_time() > 0 && job.end_time() <= 0
                 ? squeue_time(job.spec().time_limit() - run_seconds(job, now))
                 : time_limit(job.spec().time_limit(), squeue_time);
    case 'D':
      return std::to_string(job.spec().nodes());
    case 'N':
      return job.nodelist();
    case 'R':
      // As Slurm: a reason for jobs pending, failed or timed out, else the nodes.
      if (pending || job.state() == v1::FAILED || job.state() == v1::TIMEOUT)
        return "(" + reason(job) + ")";
      return job.nodelist();
    case 'r':
      return reason(job);
    case 'P':
      return job.spec().partition();
    case 'V':
      return date(job.submit_time());
    case 'S':
      if (job.start_time() > 0) return date(job.start_time());
      return job.expected_start() > 0 ? date(job.expected_start()) : "N/A";
    case 'e':
      if (job.end_time() > 0) return date(job.end_time());
      if (job.start_time() > 0 && job.spec().time_limit() > 0)
        return date(job.start_time() + job.spec().time_limit());
      return "N/A";
    case 'E':
      return job.spec().dependency().empty() ? "(null)" : job.spec().dependency();
    case 'Y':
      // The nodes a pending job is planned on: the plan keeps a start, not nodes (as Slurm's
      // without SchedulerParameters=bf_... nodes, "(null)").
      return pending ? "(null)" : job.nodelist();
    case 'Z':
      return job.spec().cwd();
    case 'o': {
      std::string command;
      for (const std::string& a : job.spec().argv()) command += (command.empty() ? "" : " ") + a;
      return command;
    }
    case 'a':
      return job.spec().account().empty() ? "(null)" : job.spec().account();
    case 'q':
      return job_qos(job);
    case 'C':
      return std::to_string(job_cpus(job));
    case 'c':
      return std::to_string(std::max(job_resources(job).cpus_per_task, 1));
    case 'm':
      return job_min_memory(job);
    case 'b':
      return job_tres_per_node(job);
    case 'Q':
      return job.has_priority() ? std::to_string(std::llround(job.priority())) : "1";
    case 'k':
      return "(null)";
    case 'y':
      return "0";
    case 'B':
      return job.nodelist().empty() ? "n/a" : first_host(job.nodelist());
    case kTresPerJob:
      return job_tres_per_job(job);
    case kTresPerTask:
      return job_tres_per_task(job);
    case kTresPerSocket:
      return "N/A";
    case kTresAlloc: {
      // What it holds once started, else what it asks, as Slurm's tres-alloc shows.
      std::string tres = job_tres(job, /*allocated=*/job.start_time() > 0);
      if (tres.empty()) tres = job_tres(job, /*allocated=*/false);
      return tres.empty() ? "cpu=" + std::to_string(job.spec().nodes()) +
                                ",node=" + std::to_string(job.spec().nodes()) +
                                ",billing=" + std::to_string(job.spec().nodes())
                          : tres;
    }
  }
  return "";
}

std::string header_of(char code) {
  switch (code) {
    case 'i':
    case 'A':
      return "JOBID";
    case 'F':
      return "ARRAY_JOB_ID";
    case 'K':
      return "ARRAY_TASK_ID";
    case 'j':
      return "NAME";
    case 'u':
      return "USER";
    case 'U':
      return "UID";
    case 'g':
      return "GROUP";
    case 'G':
      return "GID";
    case 't':
      return "ST";
    case 'T':
      return "STATE";
    case 'M':
      return "TIME";
    case 'l':
      return "TIME_LIMIT";
    case 'L':
      return "TIME_LEFT";
    case 'D':
      return "NODES";
    case 'N':
      return "NODELIST";
    case 'R':
      return "NODELIST(REASON)";
    case 'r':
      return "REASON";
    case 'P':
      return "PARTITION";
    case 'V':
      return "SUBMIT_TIME";
    case 'S':
      return "START_TIME";
    case 'Y':
      return "SCHEDNODES";
    case 'e':
      return "END_TIME";
    case 'E':
      return "DEPENDENCY";
    case 'Z':
      return "WORK_DIR";
    case 'o':
      return "COMMAND";
    case 'a':
      return "ACCOUNT";
    case 'q':
      return "QOS";
    case 'C':
      return "CPUS";
    case 'c':
      return "MIN_CPUS";
    case 'm':
      return "MIN_MEMORY";
    case 'b':
      return "TRES_PER_NODE";
    case 'Q':
      return "PRIORITY";
    case 'k':
      return "COMMENT";
    case 'y':
      return "NICE";
    case 'B':
      return "EXEC_HOST";
    case kTresPerJob:
      return "TRES_PER_JOB";
    case kTresPerTask:
      return "TRES_PER_TASK";
    case kTresPerSocket:
      return "TRES_PER_SOCKET";
    case kTresAlloc:
      return "TRES_ALLOC";
  }
  return "";
}

}  // namespace

int squeue_main(const std::vector<std::string>& args) {
  static const CommandHelp help{"squeue", "[OPTIONS]", kOptions, {.h_is_help = false}};
  if (std::optional<int> status = answer_help(args, help)) return *status;
  Result<ParsedArgs> parsed =
      parse_options(args, "ho:u:j:t:p:n:alrvO:S:i:s::w:M:L:q:A:R:", kOptions);
  if (!parsed) return report_error("squeue", parsed.error());
  bool header = true, expand_arrays = false, all_states = false, by_start = false;
  std::string format = kDefaultFormat;
  std::string fields;  // -O, when given: it wins over -o, as in Slurm
  std::set<int> uids;
  std::set<std::string> partitions, names;
  std::set<v1::JobState> states;
  v1::ListJobsRequest request;
  for (const Parsed& o : parsed->options) {
    switch (o.id) {
      case 'h':
        header = false;
        break;
      case 'o':
        format = o.value;
        break;
      case 'l':
        format = kLongFormat;
        break;
      case kStart:
        by_start = true;
        format = kStartFormat;
        break;
      case 'O':
        fields = o.value;
        break;
      case 'r':
        expand_arrays = true;
        break;
      case 'u':
        for (const std::string& user : split_list(o.value)) {
          Result<int> uid = parse_user(user);
          if (!uid) return report_error("squeue", fail("--user: " + uid.error().message));
          uids.insert(*uid);
        }
        break;
      case kMe:
        uids.insert(static_cast<int>(getuid()));
        break;
      case 'j':
        for (const std::string& id : split_list(o.value)) {
          std::string head = id.substr(0, id.find('_'));
          char* end = nullptr;
          long long n = std::strtoll(head.c_str(), &end, 10);
          if (head.empty() || *end != '\0' || n <= 0)
            return report_error("squeue", fail("Invalid job id: " + id));
          request.add_job_ids(n);
        }
        break;
      case 't':
        for (const std::string& s : split_list(o.value)) {
          if (s == "all" || s == "ALL") {
            all_states = true;
            continue;
          }
          Result<v1::JobState> state = parse_state(s);
          if (!state) return report_error("squeue", fail("Invalid job state specified: " + s));
          states.insert(*state);
        }
        break;
      case 'p':
        for (const std::string& p : split_list(o.value)) partitions.insert(p);
        break;
      case 'n':
        for (const std::string& n : split_list(o.value)) names.insert(n);
        break;
      case 'a':
      case 'v':
      case kIgnoredFlag:
        break;
      default:
        return report_error("squeue", fail("option '" + o.word +
                                           "' is not supported by Trellis (README: \"Coming "
                                           "from Slurm\")"));
    }
  }
  if (!parsed->rest.empty())
    return report_error("squeue", fail("unexpected argument '" + parsed->rest.front() + "'"));
  Result<std::vector<FormatItem>> items =
      fields.empty() ? parse_format(format, kCodes, "squeue") : parse_fields(fields);
  if (!items) return report_error("squeue", items.error());

  Result<LiveClient> client = connect_to_cluster("");
  if (!client) return report_error("squeue", client.error());
  if (by_start && states.empty() && !all_states) states.insert(v1::PENDING);
  for (v1::JobState s : states) request.add_states(s);
  request.set_all_states(all_states || request.job_ids_size() > 0);
  Result<v1::ListJobsReply> reply = list_jobs(*client, request);
  if (!reply) return report_error("squeue", reply.error());
  if (request.job_ids_size() > 0 && reply->jobs_size() == 0)
    return report_error(
        "squeue", fail(Error::Code::kNotFound, "slurm_load_jobs error: Invalid job id specified"));
  // As squeue's default order: pending jobs first, highest priority first (when the scheduler
  // orders by priority), then the others, each by id.
  std::vector<v1::JobInfo> jobs;
  std::vector<v1::JobInfo> sorted(reply->jobs().begin(), reply->jobs().end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const v1::JobInfo& a, const v1::JobInfo& b) {
    const bool a_pending = a.state() == v1::PENDING, b_pending = b.state() == v1::PENDING;
    if (a_pending != b_pending) return a_pending;
    if (a_pending && a.has_priority() && b.has_priority()) return a.priority() > b.priority();
    return false;
  });
  if (by_start) {
    // --start: by expected start, those without one (N/A) last.
    std::stable_sort(sorted.begin(), sorted.end(), [](const v1::JobInfo& a, const v1::JobInfo& b) {
      const double at = a.expected_start() > 0 ? a.expected_start() : 1e300;
      const double bt = b.expected_start() > 0 ? b.expected_start() : 1e300;
      return at < bt;
    });
  }
  for (const v1::JobInfo& job : sorted) {
    if (!uids.empty() && !uids.count(job.uid())) continue;
    if (!partitions.empty() && !partitions.count(job.spec().partition())) continue;
    if (!names.empty() && !names.count(job.spec().name())) continue;
    jobs.push_back(job);
  }
  const Seconds now = now_seconds();
  std::string out;
  if (header) {
    for (const FormatItem& item : *items)
      out += item.code ? fit(header_of(item.code), item.width, item.right) : item.text;
    out += "\n";
  }
  for (const JobRow& row : job_rows(jobs, !expand_arrays)) {
    for (const FormatItem& item : *items)
      out += item.code ? fit(value_of(item.code, row, now), item.width, item.right) : item.text;
    out += "\n";
  }
  std::cout << out << std::flush;
  return 0;
}

}  // namespace trellis::cli::slurm
