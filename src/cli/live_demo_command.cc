// trellis cluster demo: the live system beside its own simulator (`make run`).
//
// The first jobs of a trace, scaled to the cluster (node counts) and to a couple of minutes (all
// times by one factor), are first simulated, then run for real as `sleep` jobs on a local cluster
// with the same policy and allocator, while the queue and the occupancy map are shown. Both runs
// are written as `trellis sim` writes a run (summary.json, jobs.csv, report.html), and the
// console compares them metric by metric: seed 002 compares its simulator with the real system
// the same way (Table 7.2). The live run is slower than the prediction by what real processes
// cost (fork, exec, exit reports), which is the point of showing both.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <thread>

#include "alloc/metrics.h"
#include "alloc/registry.h"
#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "cli/live_client.h"
#include "cli/occupancy_map.h"
#include "cli/sim_args.h"
#include "sched/registry.h"
#include "sim/run_metrics.h"
#include "sim/simulator.h"
#include "sim/workload.h"
#include "store/state_store.h"

namespace trellis::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct LiveDemoArgs {
  std::string workload = "data/workloads/lublin_256.swf";
  int jobs = 200;
  double seconds = 120;  // how long the simulator should predict the run to take
  std::string machine = "torus:4x4x4";
  std::string policy = "easy";
  std::string allocator = "linear-bestfit-hilbert";
  std::string out = "out/demo";
  std::string dir;
};

// A process start and its exit report take a moment the simulator does not know of; a job's
// limit gets this much on top of its scaled request, in both runs, so that no job is killed
// for it.
constexpr Seconds kLimitSlack = 1.0;

// The first `count` jobs of `workload`, on `machine`: node counts scaled by the machine's size
// over the trace's largest request, submit times from 0, placement anywhere (a locality
// allocator still keeps them close).
std::vector<Job> demo_jobs(const Workload& workload, const Machine& machine, int count) {
  std::vector<Job> jobs(workload.jobs.begin(),
                        workload.jobs.begin() + std::min<size_t>(count, workload.jobs.size()));
  int largest = 1;
  for (const Job& job : jobs) largest = std::max(largest, job.request.nodes);
  const double node_scale = std::min(1.0, double(machine.node_count()) / largest);
  const Seconds first = jobs.empty() ? 0 : jobs.front().submit;
  for (Job& job : jobs) {
    int nodes =
        std::clamp(int(std::lround(job.request.nodes * node_scale)), 1, machine.node_count());
    job.request = Request::count(nodes, PlacementMode::kNonContiguous);
    job.submit -= first;
    job.time_limit = std::max(job.time_limit, job.run_time);
  }
  return jobs;
}

// All of a job's times multiplied by `factor`, with the limit's slack added.
std::vector<Job> scaled(std::vector<Job> jobs, double factor) {
  for (Job& job : jobs) {
    job.submit *= factor;
    job.run_time *= factor;
    job.time_limit = job.time_limit * factor + kLimitSlack;
  }
  return jobs;
}

Result<SimResult> simulate_demo(const LiveDemoArgs& args, const Machine& machine,
                                const std::vector<Job>& jobs) {
  auto allocator = AllocatorRegistry::builtin().create(args.allocator, machine);
  if (!allocator) return fail("--allocator: " + allocator.error().message);
  auto policy = PolicyRegistry::builtin().create(args.policy, machine);
  if (!policy) return fail("--policy: " + policy.error().message);
  SimOptions options;
  options.record_placements = true;
  return simulate(machine, **allocator, **policy, jobs, options);
}

// The live run as the simulator would have recorded it, from the store's rows of the jobs the
// demo submitted (controller id -> the trace's job), with times from `t0`.
SimResult live_result(const Machine& machine, const std::vector<StoredJob>& rows,
                      const std::map<JobId, const Job*>& submitted, Seconds t0) {
  SimResult result;
  result.machine_nodes = machine.node_count();
  for (const StoredJob& row : rows) {
    auto job = submitted.find(row.id);
    if (job == submitted.end()) continue;
    if (row.state != JobState::kCompleted && row.state != JobState::kTimeout) {
      result.rejected.push_back(
          rejected_job(*job->second, "ended " + std::string(state_name(row.state))));
      continue;
    }
    JobRecord record;
    record.id = job->second->id;
    record.submit = row.submit_time - t0;
    record.start = row.start_time - t0;
    record.end = row.end_time - t0;
    record.run_time = job->second->run_time;
    record.time_limit = job->second->time_limit;
    record.requested_nodes = job->second->request.nodes;
    record.nodes = static_cast<int>(row.nodes.size());
    record.user = job->second->user;
    record.timed_out = row.state == JobState::kTimeout;
    NodeSet nodes(machine.node_count());
    for (NodeId n : row.nodes) nodes.set(n);
    record.average_hops = average_pairwise_hops(machine, nodes);
    for (NodeId n : row.nodes) {
      if (!record.runs.empty() && record.runs.back().second + 1 == n) {
        record.runs.back().second = n;
      } else {
        record.runs.push_back({n, n});
      }
    }
    result.jobs.push_back(std::move(record));
  }
  std::sort(result.jobs.begin(), result.jobs.end(), [](const JobRecord& a, const JobRecord& b) {
    return a.start != b.start ? a.start < b.start : a.id < b.id;
  });
  // The timeline the simulator samples after each pass, rebuilt from the jobs' own times.
  std::map<Seconds, std::pair<int, int>> change;  // time -> (busy nodes, queued jobs) deltas
  for (const JobRecord& r : result.jobs) {
    change[r.submit].second += 1;
    change[r.start].second -= 1;
    change[r.start].first += r.nodes;
    change[r.end].first -= r.nodes;
  }
  int busy = 0, queued = 0;
  for (const auto& [time, delta] : change) {
    busy += delta.first;
    queued += delta.second;
    result.timeline.push_back({time, busy, queued, false, -1});
  }
  return result;
}

// One line of progress and, now and then, the occupancy map, read straight from the store.
void show_progress(const std::string& store_url, const Machine& machine, double elapsed,
                   int submitted, int total, bool with_map) {
  Result<std::unique_ptr<StateStore>> store = open_store(store_url, {.read_only = true});
  if (!store) return;
  JobQuery active;
  active.only_active = true;
  Result<std::vector<StoredJob>> jobs = (*store)->list_jobs(active);
  Result<std::vector<StoredNode>> nodes = (*store)->list_nodes();
  if (!jobs || !nodes) return;
  int running = 0, pending = 0, busy = 0;
  for (const StoredJob& job : *jobs) {
    if (job.state == JobState::kPending) {
      ++pending;
    } else {
      ++running;
      busy += static_cast<int>(job.nodes.size());
    }
  }
  std::cout << std::fixed << std::setprecision(0) << "[" << std::setw(4) << elapsed << " s] "
            << "submitted " << submitted << "/" << total << ", running " << running << " on "
            << busy << " of " << machine.node_count() << " nodes, pending " << pending << "\n";
  if (with_map) {
    std::erase_if(*jobs, [](const StoredJob& job) { return job.state == JobState::kPending; });
    std::cout << occupancy_map(machine, *nodes, *jobs) << std::flush;
  }
}

struct Metric {
  const char* name;
  double predicted, live;
  int precision;
};

int run_live_demo(const LiveDemoArgs& args) {
  Result<Machine> machine = Machine::parse(args.machine);
  if (!machine) return usage_error(fail("--machine: " + machine.error().message));
  if (args.jobs < 1 || !(args.seconds > 0))
    return usage_error(fail("--jobs: at least 1; --seconds: positive"));
  Result<Workload> workload = load_workload(args.workload);
  if (!workload) return usage_error(fail("--workload: " + workload.error().message));
  std::vector<Job> base = demo_jobs(*workload, *machine, args.jobs);
  if (base.empty()) return usage_error(fail("--workload: no jobs in " + args.workload));

  // One factor for every time, so that the simulator predicts about --seconds.
  Result<SimResult> unscaled = simulate_demo(args, *machine, scaled(base, 1.0));
  if (!unscaled) return usage_error(unscaled.error());
  double makespan = 0;
  for (const JobRecord& r : unscaled->jobs) makespan = std::max(makespan, r.end);
  const double factor = makespan > 0 ? args.seconds / makespan : 1.0;
  std::vector<Job> jobs = scaled(base, factor);
  Result<SimResult> predicted = simulate_demo(args, *machine, jobs);
  if (!predicted) return usage_error(predicted.error());
  std::cout << "trellis cluster demo: the first " << jobs.size() << " jobs of " << args.workload
            << " on " << machine->spec() << " (times x" << std::setprecision(4) << factor
            << ", nodes scaled to the machine), policy " << args.policy << ", allocator "
            << args.allocator << "\n\n== The simulator's prediction\n";
  SimArgs sim_args;
  sim_args.machine = machine->spec();
  sim_args.policy = args.policy;
  sim_args.allocator = args.allocator;
  sim_args.out = args.out + "/predicted";
  RunOutputs prediction;
  prediction.result = std::move(*predicted);
  prediction.summary = summarize(prediction.result);
  prediction.console_line = "the simulator's schedule, the same code the controller runs";
  prediction.about = {{"machine", machine->spec()}, {"workload", args.workload},
                      {"policy", args.policy},      {"allocator", args.allocator},
                      {"time_scale", factor},       {"run", "simulator"}};
  if (int status = write_run_outputs(sim_args, *machine, prediction); status != kExitOk)
    return status;

  // The live run.
  std::cout << "\n== The live cluster\n" << std::flush;
  fs::path dir = args.dir.empty()
                     ? fs::temp_directory_path() / ("trellis-demo-" + std::to_string(getpid()))
                     : fs::path(args.dir);
  std::error_code error;
  fs::remove_all(dir, error);
  std::string self = fs::read_symlink("/proc/self/exe", error).string();
  std::string up = self + " cluster up --machine " + machine->spec() + " --dir " + dir.string() +
                   " --policy " + args.policy + " --allocator " + args.allocator;
  if (std::system(up.c_str()) != 0) return kExitFailure;
  struct Down {
    std::string command;
    ~Down() { (void)std::system(command.c_str()); }
  } down{self + " cluster down --dir " + dir.string() + " > /dev/null"};
  Result<LiveClient> client = connect_to_cluster((dir / "trellis.toml").string());
  if (!client) return usage_error(client.error());

  std::map<JobId, const Job*> submitted;  // controller id -> job
  std::atomic<int> submitted_count{0}, refused{0};
  std::mutex submitted_mutex;
  const auto start = Clock::now();
  const Seconds t0 =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::thread submitter([&] {
    for (const Job& job : jobs) {
      std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(
                                                std::chrono::duration<double>(job.submit)));
      v1::SubmitRequest request;
      v1::JobSpec& spec = *request.mutable_spec();
      spec.set_nodes(job.request.nodes);
      spec.set_mode("any");
      spec.set_time_limit(job.time_limit);
      spec.set_name("lublin-" + std::to_string(job.id));
      std::ostringstream seconds;
      seconds << std::fixed << std::setprecision(3) << job.run_time;
      spec.add_argv("sleep");
      spec.add_argv(seconds.str());
      spec.set_cwd("/tmp");
      spec.set_output("/dev/null");
      v1::SubmitReply reply;
      grpc::Status status =
          client->controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& c) {
            return stub.Submit(&c, request, &reply);
          });
      if (status.ok()) {
        std::lock_guard lock(submitted_mutex);
        submitted[reply.job_id()] = &job;
      } else {
        ++refused;
        std::cerr << "job " << job.id << " refused: " << status.error_message() << "\n";
      }
      ++submitted_count;
    }
  });
  const std::string store_url = client->config.store;
  const double give_up = 5 * args.seconds + 60;
  double next_map = 0;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::seconds(5));
    double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    bool all_submitted = submitted_count == static_cast<int>(jobs.size());
    Result<v1::ListJobsReply> active = list_jobs(*client, {});
    bool idle = active && active->jobs_size() == 0;
    bool map = elapsed >= next_map && !idle;
    if (map) next_map = elapsed + 30;
    show_progress(store_url, *machine, elapsed, submitted_count, static_cast<int>(jobs.size()),
                  map);
    if (all_submitted && idle) break;
    if (elapsed > give_up) {
      std::cerr << "trellis cluster demo: jobs still running after " << give_up << " s\n";
      submitter.join();
      return kExitFailure;
    }
  }
  submitter.join();

  Result<std::unique_ptr<StateStore>> store = open_store(store_url, {.read_only = true});
  if (!store) return usage_error(store.error());
  Result<std::vector<StoredJob>> rows = (*store)->list_jobs({});
  if (!rows) return usage_error(rows.error());
  RunOutputs live;
  live.result = live_result(*machine, *rows, submitted, t0);
  live.summary = summarize(live.result);
  live.about = prediction.about;
  live.about["run"] = "live cluster";
  live.console_line = "ran for real on " + machine->spec() + " in " +
                      std::to_string(static_cast<int>(
                          std::chrono::duration<double>(Clock::now() - start).count())) +
                      " s (cluster in " + dir.string() + ")";
  std::cout << "\n== The live run, written as the simulator writes one\n";
  sim_args.out = args.out + "/live";
  if (int status = write_run_outputs(sim_args, *machine, live); status != kExitOk) return status;

  const RunSummary& p = prediction.summary;
  const RunSummary& l = live.summary;
  std::vector<Metric> metrics = {
      {"jobs completed", double(p.jobs), double(l.jobs), 0},
      {"makespan (s)", p.makespan, l.makespan, 1},
      {"mean wait (s)", p.mean_wait, l.mean_wait, 2},
      {"mean bounded slowdown", p.mean_bounded_slowdown, l.mean_bounded_slowdown, 2},
      {"utilization", p.utilization, l.utilization, 3},
      {"mean pairwise hops", p.mean_pairwise_hops.value_or(0), l.mean_pairwise_hops.value_or(0), 2},
  };
  std::cout << "\n== Simulator vs live (seed 002, Table 7.2 style)\n"
            << std::left << std::setw(24) << "metric" << std::right << std::setw(12) << "simulator"
            << std::setw(12) << "live"
            << "\n";
  for (const Metric& m : metrics)
    std::cout << std::left << std::setw(24) << m.name << std::right << std::fixed
              << std::setprecision(m.precision) << std::setw(12) << m.predicted << std::setw(12)
              << m.live << "\n";
  std::map<JobId, Seconds> predicted_start;
  for (const JobRecord& r : prediction.result.jobs) predicted_start[r.id] = r.start;
  int within = 0;
  for (const JobRecord& r : live.result.jobs)
    if (auto it = predicted_start.find(r.id);
        it != predicted_start.end() && std::abs(r.start - it->second) <= 1.0)
      ++within;
  std::cout << "jobs started within 1 s of their predicted start: " << within << " of "
            << live.result.jobs.size() << "\n"
            << "reports: " << args.out << "/predicted/report.html, " << args.out
            << "/live/report.html\n";
  return refused == 0 && live.summary.jobs == prediction.summary.jobs ? kExitOk : kExitFailure;
}

}  // namespace

void add_live_demo_command(CLI::App& cluster, int& status) {
  auto args = std::make_shared<LiveDemoArgs>();
  CLI::App* cmd = cluster.add_subcommand(
      "demo",
      "Run the first jobs of a trace for real on a local cluster (as root), beside the "
      "simulator's\nprediction: both written as `trellis sim` writes a run, and compared. "
      "`make run` runs it.");
  cmd->add_option("--workload", args->workload, "SWF trace (default the bundled Lublin trace)");
  cmd->add_option("--jobs", args->jobs, "How many of its first jobs (default 200)");
  cmd->add_option("--seconds", args->seconds,
                  "Scale all times so that the simulator predicts this long a run (default 120)");
  cmd->add_option("--machine", args->machine, "The cluster's machine (default torus:4x4x4)");
  cmd->add_option("--policy", args->policy, "Queue policy (default easy)");
  cmd->add_option("--allocator", args->allocator,
                  "Allocator (default linear-bestfit-hilbert: any node count, kept close)");
  cmd->add_option("--out", args->out, "Where the two runs are written (default out/demo)");
  cmd->add_option("--dir", args->dir, "Where the cluster lives (default: a fresh temp dir)");
  cmd->callback([args, &status] { status = run_live_demo(*args); });
}

}  // namespace trellis::cli
