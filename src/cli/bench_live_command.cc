// trellis bench live: the live system's throughput and latency on a local cluster, against the
// machine's own limit measured in the same run (fork/exec/wait of `true` in a tight loop, which
// no resource manager running real processes can beat).
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <thread>

#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "cli/live_client.h"

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

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t at = static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(at, values.size() - 1)];
}

struct BenchLiveArgs {
  int jobs = 5000;
  int clients = 4;
  std::string machine = "torus:4x4x4";
  std::string dir;
};

int run_bench_live(const BenchLiveArgs& args) {
  if (args.jobs < 1 || args.clients < 1)
    return usage_error(fail("--jobs and --clients: at least 1"));
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
                   " --allocator linear-bestfit-hilbert";
  if (std::system(up.c_str()) != 0) return kExitFailure;
  struct Down {
    std::string command;
    ~Down() { (void)std::system(command.c_str()); }
  } down{self + " cluster down --dir " + dir.string() + " > /dev/null"};

  Result<LiveClient> client = connect_to_cluster((dir / "trellis.toml").string());
  if (!client) return usage_error(client.error());
  std::cout << "submitting " << args.jobs << " `true` jobs from " << args.clients
            << " client threads...\n";
  std::atomic<int> next{0}, refused{0};
  std::vector<std::thread> threads;
  auto submit_start = Clock::now();
  for (int t = 0; t < args.clients; ++t) {
    threads.emplace_back([&] {
      ControllerClient::Options options;
      options.addresses = client->config.controllers;
      options.munge_socket = client->config.munge_socket;
      ControllerClient own(options);
      v1::SubmitRequest request;
      request.mutable_spec()->set_nodes(1);
      request.mutable_spec()->set_mode("any");
      request.mutable_spec()->add_argv("true");
      request.mutable_spec()->set_cwd("/tmp");
      request.mutable_spec()->set_output("/dev/null");
      while (next.fetch_add(1) < args.jobs) {
        v1::SubmitReply reply;
        grpc::Status status = own.call([&](v1::Controller::Stub& stub, grpc::ClientContext& c) {
          return stub.Submit(&c, request, &reply);
        });
        if (!status.ok()) ++refused;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  double submit_seconds = std::chrono::duration<double>(Clock::now() - submit_start).count();
  if (refused > 0) std::cerr << "trellis bench live: " << refused << " submissions refused\n";

  // Wait until every job has ended, then read the times the controller recorded.
  for (;;) {
    Result<v1::ListJobsReply> active = list_jobs(*client, {});
    if (active && active->jobs_size() == 0) break;
    if (std::chrono::duration<double>(Clock::now() - submit_start).count() > 600) {
      std::cerr << "trellis bench live: jobs still running after 600 s\n";
      return kExitFailure;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  v1::ListJobsRequest all;
  all.set_all_states(true);
  Result<v1::ListJobsReply> listed = list_jobs(*client, all);
  if (!listed) return usage_error(listed.error());
  const v1::ListJobsReply& done = *listed;
  std::vector<double> to_start, to_end;
  double first_submit = 1e300, last_start = 0;
  int completed = 0;
  for (const v1::JobInfo& job : done.jobs()) {
    if (job.state() != v1::COMPLETED) continue;
    ++completed;
    first_submit = std::min(first_submit, job.submit_time());
    last_start = std::max(last_start, job.start_time());
    to_start.push_back((job.start_time() - job.submit_time()) * 1000);
    to_end.push_back((job.end_time() - job.submit_time()) * 1000);
  }
  double started_per_second = completed / std::max(1e-9, last_start - first_submit);
  std::cout << std::setprecision(1) << "\n"
            << "jobs completed            " << completed << " of " << args.jobs << "\n"
            << "submissions/s             " << args.jobs / submit_seconds << "\n"
            << "jobs started/s            " << started_per_second
            << "  (first submission to last start)\n"
            << "submit->start p50, p99    " << percentile(to_start, 0.5) << " ms, "
            << percentile(to_start, 0.99) << " ms\n"
            << "submit->end   p50, p99    " << percentile(to_end, 0.5) << " ms, "
            << percentile(to_end, 0.99) << " ms\n"
            << "fork/exec limit           " << limit << " processes/s (this machine, same run)\n"
            << std::setprecision(2) << "ratio to the limit        " << started_per_second / limit
            << "\n";
  if (std::system("command -v slurmctld > /dev/null 2>&1") == 0)
    std::cout << "Slurm is installed: run ../shared/peers/slurm/selftest.sh for its figures\n";
  else
    std::cout << "Slurm: not installed here, no ratio measured\n";
  return completed == args.jobs ? kExitOk : kExitFailure;
}

}  // namespace

void add_bench_live_command(CLI::App& app, int& status) {
  auto args = std::make_shared<BenchLiveArgs>();
  CLI::App* cmd = bench_family(app).add_subcommand(
      "live",
      "The live system on a local cluster (as root): submit `true` jobs as fast as the clients "
      "can; jobs started/s, submit->start and submit->end latency percentiles, and the\n"
      "machine's fork/exec limit measured in the same run");
  cmd->add_option("--jobs", args->jobs, "How many jobs (default 5000)");
  cmd->add_option("--clients", args->clients, "Client threads submitting (default 4)");
  cmd->add_option("--machine", args->machine, "The cluster's machine (default torus:4x4x4)");
  cmd->add_option("--dir", args->dir, "Where the cluster lives (default: a fresh temp dir)");
  cmd->callback([args, &status] { status = run_bench_live(*args); });
}

}  // namespace trellis::cli
