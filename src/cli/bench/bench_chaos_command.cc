// trellis bench chaos: a local cluster of real daemons runs a random stream of short jobs while
// controllers and agents are killed -9 and restarted or paused at random moments; the auditor
// (bench/chaos.h) then counts jobs lost, run twice and nodes double-allocated, and the time the
// cluster took to recover from each fault. The exit status is 0 only when the audit is clean.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "bench/chaos.h"
#include "bench/postgres_server.h"
#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "cli/percentile.h"

namespace trellis::cli {
namespace {

namespace fs = std::filesystem;

struct BenchChaosArgs {
  double minutes = 5;
  std::string machine = "torus:4x4x4";
  int agents = 4;
  int controllers = 1;
  std::string allocation = "lease";
  std::string store;
  bool postgres = false;
  double fault_every = 6;
  double pause_fraction = 0.2;
  double rate = 8;
  uint64_t seed = 1;
  std::string dir;
  std::string shared_nodes;  // a node type: every node of it, shared
};

void print_report(const BenchChaosArgs& args, const std::string& store_name,
                  const bench::ChaosResult& r) {
  std::cout << std::fixed << std::setprecision(2);
  std::cout << "Chaos run: " << r.seconds / 60 << " min on " << args.machine << ", " << args.agents
            << " agents, " << args.controllers
            << (args.controllers == 1 ? " controller" : " controllers")
            << (args.controllers > 1 ? " (" + args.allocation + " allocation)" : "")
            << (args.shared_nodes.empty() ? "" : ", shared nodes of " + args.shared_nodes) << ", "
            << store_name << ", seed " << args.seed << "\n\n";
  // Faults by action and target kind, with their recovery times.
  std::map<std::string, std::vector<double>> recovery;
  std::map<std::string, int> unrecovered;
  for (const bench::ChaosFault& f : r.faults) {
    std::string kind = f.action + " " + (f.target.starts_with("agent") ? "agent" : "trellisd");
    if (f.recovered < 0)
      ++unrecovered[kind];
    else
      recovery[kind].push_back(f.recovered);
  }
  std::cout << std::left << std::setw(20) << "fault" << std::right << std::setw(7) << "count"
            << std::setw(16) << "recovery p50 s" << std::setw(8) << "p99 s" << std::setw(10)
            << "worst s" << std::setw(14) << "unrecovered\n";
  for (const auto& [kind, times] : recovery) {
    std::cout << std::left << std::setw(20) << kind << std::right << std::setw(7)
              << times.size() + unrecovered[kind] << std::setw(16) << percentile(times, 0.5)
              << std::setw(8) << percentile(times, 0.99) << std::setw(10)
              << *std::max_element(times.begin(), times.end()) << std::setw(13) << unrecovered[kind]
              << "\n";
  }
  std::cout << "\nkills " << r.kills << ", pauses " << r.pauses << "; worst recovery "
            << r.worst_recovery() << " s (from the fault until the controllers answer and every "
            << "node is up with a fresh heartbeat)\n\n";
  std::cout << "jobs: " << r.submitted << " submitted, " << r.acknowledged << " acknowledged, "
            << r.stored_unacknowledged << " stored without an acknowledgement (answer lost), "
            << r.cancels << " cancels answered\nfinal states:";
  for (const auto& [state, count] : r.final_states) std::cout << " " << state << " " << count;
  std::cout << "\n\naudit (" << r.log.events << " events, " << r.log.starts << " starts)\n"
            << "  lost                   " << r.lost << "\n"
            << "  run twice              " << r.run_twice << "\n"
            << "  double allocations     " << r.double_allocations() << " (log "
            << r.log.double_allocations << ", processes " << r.process_overlaps << ")\n"
            << "  completed unrun        " << r.completed_unrun << "\n"
            << "  log gaps, bad moves    " << r.log.log_gaps << ", " << r.log.bad_transitions
            << "\n"
            << "  reruns after requeue   " << r.reruns_after_requeue
            << " (earlier attempts of jobs requeued after a node failure)\n";
  std::vector<std::string> problems = r.problems;
  problems.insert(problems.end(), r.log.problems.begin(), r.log.problems.end());
  for (const std::string& p : problems) std::cout << "  - " << p << "\n";
  std::cout << (r.clean() ? "\nclean\n" : "\nNOT CLEAN\n");
}

int run_bench_chaos(const BenchChaosArgs& args) {
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  fs::path dir = args.dir.empty()
                     ? fs::temp_directory_path() / ("trellis-chaos-" + std::to_string(getpid()))
                     : fs::path(args.dir);
  if (fs::exists(dir / "trellis.toml")) {
    std::cerr << "trellis bench chaos: " << dir.string()
              << " already holds a cluster; give a fresh --dir\n";
    return kExitUsage;
  }
  std::unique_ptr<PostgresServer> server;
  std::string store = args.store, store_name = "SQLite";
  if (args.postgres) {
    Result<std::unique_ptr<PostgresServer>> started = PostgresServer::start();
    if (!started) {
      std::cerr << "trellis bench chaos: --postgres: " << started.error().message << "\n";
      return kExitFailure;
    }
    server = std::move(*started);
    Result<std::string> url = server->new_database();
    if (!url) {
      std::cerr << "trellis bench chaos: " << url.error().message << "\n";
      return kExitFailure;
    }
    store = *url;
  }
  if (store.starts_with("postgres")) store_name = "PostgreSQL";
  if (args.controllers > 1 && store_name != "PostgreSQL") {
    std::cerr << "trellis bench chaos: --controllers " << args.controllers
              << ": several controllers share a PostgreSQL store (--postgres or --store)\n";
    return kExitUsage;
  }
  bench::ChaosOptions options;
  options.trellis_binary = self.string();
  options.dir = dir.string();
  options.machine = args.machine;
  options.agents = args.agents;
  options.controllers = args.controllers;
  options.allocation = args.allocation;
  options.store_url = store;
  options.seconds = args.minutes * 60;
  options.fault_every = args.fault_every;
  options.pause_fraction = args.pause_fraction;
  options.submit_rate = args.rate;
  options.seed = args.seed;
  options.shared_nodes = args.shared_nodes;
  options.progress = [](const std::string& line) { std::cerr << line << "\n"; };
  std::cerr << "chaos run of " << args.minutes << " min in " << dir.string() << "\n";
  Result<bench::ChaosResult> result = bench::run_chaos(options);
  if (!result) {
    std::cerr << "trellis bench chaos: " << result.error().message << " (logs in " << dir.string()
              << ")\n";
    return kExitFailure;
  }
  print_report(args, store_name, *result);
  std::cout << "\nlogs, job outputs and faults.csv in " << dir.string() << "\n";
  return result->clean() ? kExitOk : kExitFailure;
}

}  // namespace

void add_bench_chaos_command(CLI::App& app, int& status) {
  auto args = std::make_shared<BenchChaosArgs>();
  CLI::App* cmd = bench_family(app).add_subcommand(
      "chaos",
      "A local cluster runs a random stream of short jobs and cancels while controllers and\n"
      "agents are killed -9 and restarted, or paused (SIGSTOP) for a few seconds, at random\n"
      "moments; then an auditor reads the jobs' own output files and the store and counts jobs\n"
      "lost, run twice and nodes given to two jobs at once, and the time to recover from each\n"
      "fault. Exits 1 unless the audit is clean");
  cmd->add_option("--minutes", args->minutes, "How long faults are injected (default 5)")
      ->check(CLI::Range(0.05, 1440.0));
  cmd->add_option("--machine", args->machine, "The machine spec (default torus:4x4x4)");
  cmd->add_option("--agents", args->agents, "Agents sharing the nodes (default 4)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--controllers", args->controllers,
                  "Controllers sharing a PostgreSQL store (default 1)")
      ->check(CLI::Range(1, 16));
  cmd->add_option("--allocation", args->allocation,
                  "With several controllers: lease (default) or concurrent ([controller]\n"
                  "allocation)")
      ->check(CLI::IsMember({"lease", "concurrent"}));
  cmd->add_option("--store", args->store, "The store's URL (default SQLite in the run's folder)");
  cmd->add_flag("--postgres", args->postgres,
                "Start a private PostgreSQL server for the run and use it as the store");
  cmd->add_option("--fault-every", args->fault_every,
                  "Mean seconds between a fault's recovery and the next fault (default 6)")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--pause-fraction", args->pause_fraction,
                  "Of the faults, the share that are SIGSTOP/SIGCONT rather than kill -9 "
                  "(default 0.2)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--rate", args->rate, "Jobs submitted per second (default 8)")
      ->check(CLI::Range(0.1, 1000.0));
  cmd->add_option("--seed", args->seed, "Seed of the faults and the job stream (default 1)");
  cmd->add_option("--shared-nodes", args->shared_nodes,
                  "Every node of this type (e.g. cores=4,mem=2G) and shared: jobs of 1-2 cores "
                  "and some memory, audited core by core and byte by byte");
  cmd->add_option("--dir", args->dir,
                  "Where the cluster, its logs and the jobs' outputs are kept (default a fresh "
                  "folder in the temporary directory)");
  cmd->callback([args, &status] { status = run_bench_chaos(*args); });
}

}  // namespace trellis::cli
