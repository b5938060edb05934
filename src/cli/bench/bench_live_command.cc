// trellis bench live: the live system's throughput and latency on a local cluster, against the
// machine's own limit measured in the same run (fork/exec/wait of `true` in a tight loop, which
// no resource manager running real processes can beat) and, when asked, real Slurm on the same
// host through ../shared/peers/slurm.
//
// Two phases on one cluster: a flood (every job submitted as fast as the clients can: jobs/s),
// then a trickle (one job at a time at a set rate on the idle cluster: the latency a user sees).
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/alloc_report.h"
#include "cli/cluster/interrupt_cleanup.h"
#include "cli/commands.h"
#include "cli/live_client.h"
#include "cli/percentile.h"
#include "core/resource_request.h"

extern char** environ;

namespace trellis::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Processes started and reaped per second by one thread, for `seconds`.
double fork_exec_limit(double seconds) {
  char arg0[] = "/bin/true";
  char* argv[] = {arg0, nullptr};
  long count = 0;
  auto start = Clock::now();
  double elapsed = 0;
  while (elapsed < seconds) {
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv, environ) != 0) break;
    int status = 0;
    waitpid(pid, &status, 0);
    ++count;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  }
  return elapsed > 0 ? count / elapsed : 0;
}

struct BenchLiveArgs {
  int jobs = 5000;
  int clients = 4;
  int latency_jobs = 200;
  double rate = 20;
  std::string machine = "torus:4x4x4";
  std::string dir;
  std::string store;          // empty: the cluster's own SQLite file
  int controllers = 1;        // more need a PostgreSQL store
  std::string slurm_harness;  // ../shared/peers/slurm, to measure Slurm in the same run
  bool no_slurm = false;
  // Nodes of this kind (core/node_inventory.h's text), shared by 1-core jobs (cluster up
  // --shared-nodes); "" = featureless nodes, each job on a whole node.
  std::string shared_nodes;
};

// The Slurm peer harness beside the project (../shared/peers/slurm from the source tree or from
// the working directory), or "".
std::string find_slurm_harness() {
  std::error_code error;
  fs::path exe = fs::read_symlink("/proc/self/exe", error);
  for (fs::path candidate : {fs::current_path(error) / "../shared/peers/slurm",
                             exe.parent_path() / "../../../shared/peers/slurm"}) {
    if (fs::exists(candidate / "cluster.sh", error))
      return fs::weakly_canonical(candidate, error).string();
  }
  return "";
}

// One `true` job: on shared nodes it asks for one core (`-c 1`).
v1::SubmitRequest true_job(bool one_core) {
  v1::SubmitRequest request;
  if (one_core) {
    ResourceRequest resources;
    (void)apply_resource_option("cpus-per-task", "1", resources);
    request.mutable_spec()->set_resources(encode_resource_request(resources));
  }
  request.mutable_spec()->set_nodes(1);
  request.mutable_spec()->add_argv("true");
  request.mutable_spec()->set_cwd("/tmp");
  request.mutable_spec()->set_output("/dev/null");
  return request;
}

// Figures of a set of finished jobs, from the times the controller recorded.
struct Figures {
  int completed = 0;
  double jobs_per_second = 0;     // completed / (first submission -> last end), as Slurm's harness
  double started_per_second = 0;  // completed / (first submission -> last start)
  std::vector<double> to_start_ms, to_end_ms;
};

Figures figures_of(const v1::ListJobsReply& jobs, JobId first_id) {
  Figures f;
  double first_submit = 1e300, last_start = 0, last_end = 0;
  for (const v1::JobInfo& job : jobs.jobs()) {
    if (job.id() < first_id || job.state() != v1::COMPLETED) continue;
    ++f.completed;
    first_submit = std::min(first_submit, job.submit_time());
    last_start = std::max(last_start, job.start_time());
    last_end = std::max(last_end, job.end_time());
    f.to_start_ms.push_back((job.start_time() - job.submit_time()) * 1000);
    f.to_end_ms.push_back((job.end_time() - job.submit_time()) * 1000);
  }
  if (f.completed > 0) {
    f.jobs_per_second = f.completed / std::max(1e-9, last_end - first_submit);
    f.started_per_second = f.completed / std::max(1e-9, last_start - first_submit);
  }
  return f;
}

// Waits until no job is pending or running; false after `limit` seconds.
bool wait_until_idle(LiveClient& client, double limit) {
  auto start = Clock::now();
  for (;;) {
    Result<v1::ListJobsReply> active = list_jobs(client, {});
    if (active && active->jobs_size() == 0) return true;
    if (std::chrono::duration<double>(Clock::now() - start).count() > limit) return false;
    // Not more often: listing thousands of queued jobs costs the controller what it would
    // rather spend on them (the figures come from the times it records, not from this loop).
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

void print_latency(const char* what, const Figures& f) {
  std::cout << "  " << what << " p50, p99  " << std::setprecision(1) << std::fixed
            << percentile(f.to_start_ms, 0.5) << " ms, " << percentile(f.to_start_ms, 0.99)
            << " ms to start;  " << percentile(f.to_end_ms, 0.5) << " ms, "
            << percentile(f.to_end_ms, 0.99) << " ms to end\n";
}

// Slurm on the same host through the peer harness: `jobs` one-node `sleep 0` jobs submitted back
// to back on 64 emulated nodes with batch_sched_delay=0 (its fastest setting). Its jobs/s, or 0.
double slurm_jobs_per_second(const std::string& harness, int jobs, const fs::path& work,
                             InterruptCleanup& cleanup) {
  fs::path cluster = work / "slurm", list = work / "slurm-jobs.json", out = work / "slurm-out.json";
  std::string up = "PEER_SCHED_PARAMS=batch_sched_delay=0 " + harness + "/cluster.sh up " +
                   cluster.string() + " 64 flat > " + (work / "slurm-up.log").string() + " 2>&1";
  std::string down = harness + "/cluster.sh down " + cluster.string() + " > /dev/null 2>&1";
  cleanup.set(down);
  std::cout << "Slurm: " << jobs << " `sleep 0` jobs on 64 emulated nodes..." << std::flush;
  bool ran =
      std::system(up.c_str()) == 0 &&
      std::system(("python3 " + harness + "/gen_jobs.py " + std::to_string(jobs) +
                   " --nodes 1 --sleep 0 --gap 0 --limit 1 > " + list.string())
                      .c_str()) == 0 &&
      std::system(("python3 " + harness + "/run_jobs.py " + cluster.string() + " " + list.string() +
                   " " + out.string() + " --timeout 600 2> " + (work / "slurm-run.log").string())
                      .c_str()) == 0;
  (void)std::system(down.c_str());
  cleanup.set("");
  if (!ran) {
    std::cout << " failed (logs in " << work.string() << ")\n";
    return 0;
  }
  std::ifstream in(out);
  nlohmann::json result = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  double rate = 0;
  if (result.is_object() && result.contains("totals") && result["totals"]["jobs_per_s"].is_number())
    rate = result["totals"]["jobs_per_s"].get<double>();
  std::cout << " " << std::setprecision(1) << rate << " jobs/s\n";
  return rate;
}

int run_bench_live(const BenchLiveArgs& args) {
  if (args.jobs < 1 || args.clients < 1 || args.latency_jobs < 0 || args.rate <= 0)
    return usage_error(
        fail("--jobs, --clients: at least 1; --latency-jobs: at least 0; --rate: "
             "positive"));
  if (args.store.find('\'') != std::string::npos)
    return usage_error(fail("--store: a URL with a quote (') is not supported here"));
  InterruptCleanup cleanup("trellis bench live");
  std::cout << "fork/exec limit: measuring for 2 s..." << std::flush;
  double limit = fork_exec_limit(2.0);
  std::cout << " " << std::fixed << std::setprecision(0) << limit << " processes/s\n";

  fs::path dir = args.dir.empty() ? fs::temp_directory_path() /
                                        ("trellis-bench-live-" + std::to_string(getpid()))
                                  : fs::path(args.dir);
  std::error_code error;
  fs::remove_all(dir, error);
  std::string self = fs::read_symlink("/proc/self/exe", error).string();
  // A locality allocator takes any node count (`contiguous` only boxes).
  std::string up = self + " cluster up --machine " + args.machine + " --dir " + dir.string() +
                   " --allocator linear-bestfit-hilbert" +
                   (args.store.empty() ? "" : " --store '" + args.store + "'") + " --controllers " +
                   std::to_string(args.controllers) +
                   (args.shared_nodes.empty()
                        ? std::string()
                        : " --shared-nodes --node-type 'bench::" + args.shared_nodes + "'");
  std::string down_command = self + " cluster down --dir " + dir.string() + " > /dev/null";
  cleanup.set(down_command);
  if (std::system(up.c_str()) != 0) return kExitFailure;
  struct Down {
    std::string command;
    ~Down() {
      if (!command.empty()) (void)std::system(command.c_str());
    }
  } down{down_command};

  Result<LiveClient> client = connect_to_cluster((dir / "trellis.toml").string());
  if (!client) return usage_error(client.error());
  // Client `first` prefers controller `first` (mod their number), so that every controller takes
  // submissions.
  auto make_client = [&](size_t first = 0) {
    ControllerClient::Options options;
    options.addresses = client->config.controllers;
    if (!options.addresses.empty())
      std::rotate(options.addresses.begin(),
                  options.addresses.begin() + first % options.addresses.size(),
                  options.addresses.end());
    options.munge_socket = client->config.munge_socket;
    return std::make_unique<ControllerClient>(options);
  };

  // Phase 1: the flood.
  std::cout << "flood: " << args.jobs << " `true` jobs from " << args.clients
            << " client threads as fast as they can...\n";
  std::atomic<int> next{0}, refused{0};
  std::vector<std::thread> threads;
  auto submit_start = Clock::now();
  for (int t = 0; t < args.clients; ++t) {
    threads.emplace_back([&, t] {
      std::unique_ptr<ControllerClient> own = make_client(t);
      v1::SubmitRequest request = true_job(!args.shared_nodes.empty());
      while (next.fetch_add(1) < args.jobs) {
        v1::SubmitReply reply;
        grpc::Status status = own->call([&](v1::Controller::Stub& stub, grpc::ClientContext& c) {
          return stub.Submit(&c, request, &reply);
        });
        if (!status.ok()) ++refused;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  double submit_seconds = std::chrono::duration<double>(Clock::now() - submit_start).count();
  if (refused > 0) std::cerr << "trellis bench live: " << refused << " submissions refused\n";
  if (!wait_until_idle(*client, 600)) {
    std::cerr << "trellis bench live: jobs still running after 600 s\n";
    return kExitFailure;
  }
  v1::ListJobsRequest all;
  all.set_all_states(true);
  Result<v1::ListJobsReply> listed = list_jobs(*client, all);
  if (!listed) return usage_error(listed.error());
  Figures flood = figures_of(*listed, 0);
  JobId last_flood_id = 0;
  for (const v1::JobInfo& job : listed->jobs()) last_flood_id = std::max(last_flood_id, job.id());

  // Phase 2: the trickle, on the idle cluster.
  Figures trickle;
  if (args.latency_jobs > 0) {
    std::cout << "trickle: " << args.latency_jobs << " jobs, one at a time at " << args.rate
              << "/s on the idle cluster...\n";
    std::unique_ptr<ControllerClient> own = make_client();
    v1::SubmitRequest request = true_job(!args.shared_nodes.empty());
    auto period = std::chrono::duration<double>(1.0 / args.rate);
    auto due = Clock::now();
    for (int i = 0; i < args.latency_jobs; ++i) {
      std::this_thread::sleep_until(due);
      due += std::chrono::duration_cast<Clock::duration>(period);
      v1::SubmitReply reply;
      grpc::Status status = own->call([&](v1::Controller::Stub& stub, grpc::ClientContext& c) {
        return stub.Submit(&c, request, &reply);
      });
      if (!status.ok()) ++refused;
    }
    if (!wait_until_idle(*client, 600)) {
      std::cerr << "trellis bench live: jobs still running after 600 s\n";
      return kExitFailure;
    }
    listed = list_jobs(*client, all);
    if (!listed) return usage_error(listed.error());
    trickle = figures_of(*listed, last_flood_id + 1);
  }
  (void)std::system(down.command.c_str());
  down.command.clear();
  cleanup.set("");

  double slurm = 0;
  std::string harness = args.no_slurm                ? ""
                        : args.slurm_harness.empty() ? find_slurm_harness()
                                                     : args.slurm_harness;
  if (!harness.empty()) {
    if (std::system("command -v slurmctld > /dev/null 2>&1") != 0) {
      std::cout << "Slurm: slurmctld is not installed (apt-get install slurmctld slurmd)\n";
    } else {
      slurm = slurm_jobs_per_second(harness, std::min(args.jobs, 500), dir, cleanup);
    }
  }

  std::cout << std::setprecision(1) << std::fixed << "\n"
            << "flood: " << flood.completed << " of " << args.jobs << " jobs completed\n"
            << "  submissions/s           " << args.jobs / submit_seconds << "\n"
            << "  jobs/s                  " << flood.jobs_per_second
            << "  (first submission to last end)\n"
            << "  jobs started/s          " << flood.started_per_second
            << "  (first submission to last start)\n";
  print_latency("queued   ", flood);
  if (args.latency_jobs > 0) {
    std::cout << "trickle: " << trickle.completed << " of " << args.latency_jobs
              << " jobs completed\n";
    print_latency("idle     ", trickle);
  }
  std::cout << "fork/exec limit           " << limit << " processes/s (this machine, same run)\n"
            << std::setprecision(2) << "ratio to the limit        " << flood.jobs_per_second / limit
            << "  (jobs/s over processes/s; started/s over processes/s: "
            << flood.started_per_second / limit << ")\n";
  if (slurm > 0)
    std::cout << "ratio to Slurm            " << flood.jobs_per_second / slurm << "  (Slurm "
              << std::setprecision(1) << slurm << " jobs/s, same run)\n";
  else
    std::cout << "ratio to Slurm            not measured"
              << (args.no_slurm     ? " (--no-slurm)"
                  : harness.empty() ? " (no peer harness found: --slurm-harness DIR)"
                                    : "")
              << "\n";
  bool all_done = flood.completed == args.jobs && trickle.completed == args.latency_jobs;
  return all_done && refused == 0 ? kExitOk : kExitFailure;
}

}  // namespace

void add_bench_live_command(CLI::App& app, int& status) {
  auto args = std::make_shared<BenchLiveArgs>();
  CLI::App* cmd = bench_family(app).add_subcommand(
      "live",
      "The live system on a local cluster (as root). A flood: `true` jobs submitted as fast as "
      "the\nclients can (jobs/s, queued latency); then a trickle: one job at a time on the idle "
      "cluster\n(the latency a user sees). Against the machine's fork/exec limit measured in the "
      "same run,\nand real Slurm on the same host when it is installed");
  cmd->add_option("--jobs", args->jobs, "Jobs in the flood (default 5000)");
  cmd->add_option("--clients", args->clients, "Client threads submitting the flood (default 4)");
  cmd->add_option("--latency-jobs", args->latency_jobs,
                  "Jobs in the trickle (default 200; 0 skips it)");
  cmd->add_option("--rate", args->rate, "Trickle submissions per second (default 20)");
  cmd->add_option("--machine", args->machine, "The cluster's machine (default torus:4x4x4)");
  cmd->add_option(
      "--store", args->store,
      "The cluster's store (default sqlite:DIR/state.db; e.g. postgresql://USER@HOST/DB, "
      "an empty database)");
  cmd->add_option("--controllers", args->controllers,
                  "Controllers sharing the store (default 1; more need a PostgreSQL --store); the "
                  "clients submit to all of them")
      ->check(CLI::Range(1, 16));
  cmd->add_option("--dir", args->dir, "Where the cluster lives (default: a fresh temp dir)");
  cmd->add_option("--slurm-harness", args->slurm_harness,
                  "Slurm's 64-node peer harness (default: ../shared/peers/slurm when found). When "
                  "it and\nslurmctld are there, Slurm runs min(--jobs, 500) jobs on the same host "
                  "and the ratio is printed");
  cmd->add_flag("--no-slurm", args->no_slurm, "Do not run Slurm even when it is installed");
  cmd->add_option("--shared-nodes", args->shared_nodes,
                  "Nodes of this kind (e.g. cores=2,mem=2G) shared by 1-core jobs: the flood and "
                  "the trickle ask -c 1 (default: whole nodes)");
  cmd->callback([args, &status] { status = run_bench_live(*args); });
}

}  // namespace trellis::cli
