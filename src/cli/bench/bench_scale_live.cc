#include "cli/bench/bench_scale_live.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "cli/cluster/interrupt_cleanup.h"
#include "cli/commands.h"
#include "cli/live_client.h"
#include "daemon/proc_stat.h"
#include "topology/machine.h"

extern char** environ;

namespace trellis::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Wall = std::chrono::system_clock;

double seconds_between(Wall::time_point from, Wall::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Processes forked on this host since boot (/proc/stat's "processes").
long long forks_since_boot() {
  std::ifstream in("/proc/stat");
  std::string key;
  long long value = 0;
  while (in >> key) {
    if (key == "processes" && in >> value) return value;
    in.ignore(1 << 20, '\n');
  }
  return -1;
}

// A /proc/PID/status field in kB ("VmRSS", "VmHWM"), or -1.
long long status_kib(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::atoll(line.c_str() + field.size() + 1);
  }
  return -1;
}

// The time of a log line "2026-01-31T12:00:00.123Z ...", or nullopt.
std::optional<Wall::time_point> log_time(const std::string& line) {
  std::tm tm{};
  int millis = 0;
  if (std::sscanf(line.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon,
                  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &millis) != 7)
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return Wall::from_time_t(::timegm(&tm)) + std::chrono::milliseconds(millis);
}

// When the last agent had started every task of the job's first attempt ("launch job J attempt
// 1: N of N tasks started"), and how many tasks they say they started.
struct Started {
  std::optional<Wall::time_point> last;
  long long tasks = 0;
  int agents = 0;
};
Started when_started(const fs::path& dir, int agents, int64_t job) {
  Started s;
  const std::string marker = "launch job " + std::to_string(job) + " attempt 1: ";
  for (int k = 0; k < agents; ++k) {
    std::ifstream in(dir / ("agent-" + std::to_string(k) + ".log"));
    for (std::string line; std::getline(in, line);) {
      size_t at = line.find(marker);
      if (at == std::string::npos) continue;
      std::optional<Wall::time_point> t = log_time(line);
      if (!t) continue;
      s.tasks += std::atoll(line.c_str() + at + marker.size());
      ++s.agents;
      if (!s.last || *t > *s.last) s.last = t;
    }
  }
  return s;
}

// This host's fork/exec of `count` processes of /bin/true from one thread, reaping as it goes:
// seconds until the last was started.
double fork_exec_seconds(int count) {
  char arg0[] = "/bin/true";
  char* argv[] = {arg0, nullptr};
  int outstanding = 0;
  auto start = Clock::now();
  for (int i = 0; i < count; ++i) {
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv, environ) != 0) return -1;
    ++outstanding;
    while (outstanding > 0 && ::waitpid(-1, nullptr, WNOHANG) > 0) --outstanding;
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  while (outstanding > 0 && ::waitpid(-1, nullptr, 0) > 0) --outstanding;
  return seconds;
}

std::string fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

struct RowResult {
  int nodes = 0;
  double to_started = 0;  // seconds from submission
  double to_end = 0;
  int attempt = 0;
  std::string state;
  long long tasks_started = 0;
  double forks_per_node = 0;
  long long rss_kib = 0, peak_kib = 0;  // the controller's, once the job has started
  long long store_bytes = 0;
  double controller_cpu = 0, agents_cpu = 0;  // seconds of CPU during the job
};

// CPU seconds (user + system) of these processes so far.
double cpu_seconds(const std::vector<pid_t>& pids) {
  long long ticks = 0;
  for (pid_t pid : pids)
    if (Result<ProcStat> stat = read_proc_stat(pid)) ticks += stat->cpu_ticks;
  return static_cast<double>(ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

Result<RowResult> run_row(const LaunchScaleRow& row) {
  Result<Machine> machine = Machine::parse(row.machine);
  if (!machine) return machine.error();
  RowResult r;
  r.nodes = machine->node_count();
  fs::path dir =
      fs::temp_directory_path() / ("trellis-bench-scale-" + std::to_string(::getpid()) + "-" +
                                   std::to_string(r.nodes) + (row.emulate ? "-emulated" : ""));
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  const std::string self = sibling_binary("trellis");
  const fs::path up_log = dir.string() + ".up.log";
  struct Down {
    std::string command;
    std::vector<fs::path> remove;
    ~Down() {
      (void)std::system(command.c_str());
      std::error_code ignored;
      for (const fs::path& p : remove) fs::remove_all(p, ignored);
    }
  } down{self + " cluster down --dir " + dir.string() + " > /dev/null 2>&1", {dir, up_log}};
  InterruptCleanup cleanup("trellis bench scale");
  cleanup.set(down.command);
  const std::string up = self + " cluster up --machine " + row.machine + " --dir " + dir.string() +
                         " --agents " + std::to_string(row.agents) +
                         (row.emulate ? " --emulate" : "") + " > " + up_log.string() + " 2>&1";
  if (std::system(up.c_str()) != 0) {
    std::ifstream in(up_log);
    return fail("trellis cluster up failed; its output:\n" +
                std::string(std::istreambuf_iterator<char>(in), {}));
  }
  Result<LiveClient> client = connect_to_cluster((dir / "trellis.toml").string());
  if (!client) return client.error();
  pid_t controller = -1;
  std::ifstream(dir / "trellisd.pid") >> controller;
  std::vector<pid_t> agents;
  for (int k = 0; k < row.agents; ++k) {
    pid_t pid = -1;
    if (std::ifstream(dir / ("agent-" + std::to_string(k) + ".pid")) >> pid) agents.push_back(pid);
  }
  const double controller_cpu_before = cpu_seconds({controller});
  const double agents_cpu_before = cpu_seconds(agents);

  v1::SubmitRequest request;
  v1::JobSpec& spec = *request.mutable_spec();
  spec.set_nodes(r.nodes);
  spec.set_name("scale");
  spec.add_argv(row.command);
  spec.set_cwd(dir.string());
  spec.set_output("/dev/null");
  v1::SubmitReply reply;
  const long long forks_before = forks_since_boot();
  const Wall::time_point submitted = Wall::now();
  grpc::Status status =
      client->controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
        return stub.Submit(&context, request, &reply);
      });
  if (!status.ok()) return fail("submit: " + status.error_message());
  const int64_t job = reply.job_id();

  // Until the job has ended (or 10 minutes).
  v1::ListJobsRequest query;
  query.add_job_ids(job);
  query.set_all_states(true);
  const Wall::time_point give_up = submitted + std::chrono::minutes(10);
  for (bool running_seen = false;;) {
    Result<v1::ListJobsReply> jobs = list_jobs(*client, query);
    if (!jobs) return jobs.error();
    if (jobs->jobs_size() == 1) {
      const v1::JobInfo& info = jobs->jobs(0);
      r.attempt = info.attempt();
      if (!running_seen && info.state() == v1::RUNNING) {
        running_seen = true;
        r.rss_kib = status_kib(controller, "VmRSS");
      }
      if (info.state() >= v1::COMPLETED) {
        r.to_end = seconds_between(submitted, Wall::now());
        r.state = v1::JobState_Name(info.state());
        break;
      }
    }
    if (Wall::now() > give_up) return fail("job " + std::to_string(job) + " did not end in 10 min");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.forks_per_node =
      static_cast<double>(forks_since_boot() - forks_before) / static_cast<double>(r.nodes);
  r.peak_kib = status_kib(controller, "VmHWM");
  r.controller_cpu = cpu_seconds({controller}) - controller_cpu_before;
  r.agents_cpu = cpu_seconds(agents) - agents_cpu_before;
  Started started = when_started(dir, row.agents, job);
  if (!started.last) return fail("no agent logged the start of job " + std::to_string(job));
  r.to_started = seconds_between(submitted, *started.last);
  r.tasks_started = started.tasks;
  for (const char* file : {"state.db", "state.db-wal"})
    if (fs::exists(dir / file, ignored)) r.store_bytes += fs::file_size(dir / file, ignored);
  return r;
}

}  // namespace

int run_launch_scale(const std::vector<LaunchScaleRow>& rows, bool fork_reference,
                     std::ostream& out) {
  if (rows.empty()) return 0;
  double reference = 0;
  int reference_count = 0;
  double reference_forks = 0;
  if (fork_reference) {
    Result<Machine> first = Machine::parse(rows.front().machine);
    if (!first) {
      out << "trellis bench scale: " << first.error().message << "\n";
      return 1;
    }
    reference_count = first->node_count();
    const long long before = forks_since_boot();
    reference = fork_exec_seconds(reference_count);
    reference_forks =
        static_cast<double>(forks_since_boot() - before) / static_cast<double>(reference_count);
    out << "reference: this host forks and execs " << reference_count
        << " processes of /bin/true (one thread, reaping as it goes) in " << fixed(reference, 3)
        << " s (" << fixed(reference_forks, 2) << " forks counted per process)\n";
  }
  out << std::right << std::setw(22) << "machine" << std::setw(8) << "nodes" << std::setw(7)
      << "agents" << std::setw(9) << "tasks" << std::setw(13) << "started s" << std::setw(9)
      << "x ref" << std::setw(9) << "end s" << std::setw(8) << "attempt" << std::setw(12)
      << "forks/node" << std::setw(12) << "ctl RSS MiB" << std::setw(10) << "peak MiB"
      << std::setw(11) << "store MiB" << std::setw(10) << "ctl CPU" << std::setw(11) << "agents CPU"
      << std::setw(11) << "state"
      << "\n";
  int status = 0;
  std::optional<RowResult> first;
  for (const LaunchScaleRow& row : rows) {
    Result<RowResult> r = run_row(row);
    if (!r) {
      out << std::setw(22) << row.machine << ": " << r.error().message << "\n";
      status = 1;
      continue;
    }
    // Against the fork reference when there is one, else against the first row per node.
    std::string ratio = "-";
    if (fork_reference && reference > 0) {
      ratio = fixed(r->to_started / reference * reference_count / r->nodes, 2);
    } else if (first && first->to_started > 0) {
      ratio = fixed(r->to_started / first->to_started, 2);
    }
    if (!first) first = *r;
    out << std::setw(22) << row.machine + (row.emulate ? " (emu)" : "") << std::setw(8) << r->nodes
        << std::setw(7) << row.agents << std::setw(9) << r->tasks_started << std::setw(13)
        << fixed(r->to_started, 3) << std::setw(9) << ratio << std::setw(9) << fixed(r->to_end, 3)
        << std::setw(8) << r->attempt << std::setw(12)
        << (row.emulate ? fixed(r->forks_per_node, 3) : fixed(r->forks_per_node, 2))
        << std::setw(12) << fixed(static_cast<double>(r->rss_kib) / 1024, 0) << std::setw(10)
        << fixed(static_cast<double>(r->peak_kib) / 1024, 0) << std::setw(11)
        << fixed(static_cast<double>(r->store_bytes) / (1 << 20), 1) << std::setw(10)
        << fixed(r->controller_cpu, 2) << std::setw(11) << fixed(r->agents_cpu, 2) << std::setw(11)
        << r->state << "\n"
        << std::flush;
    if (r->state != "COMPLETED" || r->attempt != 1) status = 1;
  }
  out << "(x ref: "
      << (fork_reference ? "time to all started over the reference's time for as "
                           "many processes"
                         : "time to all started over the first row's")
      << "; forks/node: processes forked on this host during the job over its nodes; ctl RSS: "
         "trellisd's VmRSS as the job ran, peak: its VmHWM; CPU: seconds of CPU of trellisd and of "
         "the agents (not their shepherds and tasks) from submission to the end)\n";
  return status;
}

}  // namespace trellis::cli
