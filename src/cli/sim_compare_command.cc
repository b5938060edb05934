// trellis sim-compare: run a grid of {allocators} x {policies} x {loads} x {seeds} on one workload,
// each point as its own `trellis sim` process (fork/exec of this binary, --jobs at a time), then
// print one table and write one HTML comparison report.
//
//   trellis sim-compare --machine torus:16x16 --workload lublin_256.swf
//       --alloc first-available,random,contiguous --sched easy,conservative --out out/cmp
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "alloc/registry.h"
#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "cli/sim_args.h"
#include "sim/html_report.h"
#include "sim/outputs.h"

namespace trellis::cli {

namespace {

struct CompareArgs {
  SimArgs base;
  std::vector<std::string> allocators;
  std::vector<std::string> policies = {"easy"};
  std::vector<double> loads = {1.0};
  std::vector<long> seeds;  // random allocator seed and generated-workload seed
  int parallel = 2;
};

struct GridPoint {
  std::string label;
  std::string allocator, policy;
  double load = 1;
  long seed = -1;
  std::string out;
};

std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::vector<std::string> child_argv(const SimArgs& base, const GridPoint& p) {
  std::vector<std::string> argv = {"trellis",
                                   "sim",
                                   "--machine",
                                   base.machine,
                                   "--sched",
                                   p.policy,
                                   "--alloc",
                                   p.allocator,
                                   "--load",
                                   number_text(p.load),
                                   "--out",
                                   p.out,
                                   "--quiet",
                                   "--mode",
                                   base.mode,
                                   "--procs-per-node",
                                   std::to_string(base.procs_per_node)};
  std::string generate = base.generate;
  if (!generate.empty() && p.seed >= 0) {
    size_t second = generate.find(':', generate.find(':') + 1);
    generate = generate.substr(0, second) + ":" + std::to_string(p.seed);
  }
  if (!base.workload.empty()) argv.insert(argv.end(), {"--workload", base.workload});
  if (!generate.empty()) argv.insert(argv.end(), {"--generate", generate});
  if (base.shaped) argv.push_back("--shape-requests");
  if (base.metrics_only) argv.push_back("--metrics-only");
  if (base.max_jobs > 0) argv.insert(argv.end(), {"--max-jobs", std::to_string(base.max_jobs)});
  for (const auto& o : base.sched_options) argv.insert(argv.end(), {"--sched-opt", o});
  for (const auto& o : base.alloc_options) argv.insert(argv.end(), {"--alloc-opt", o});
  if (p.allocator == "random" && p.seed >= 0)
    argv.insert(argv.end(), {"--alloc-opt", "seed=" + std::to_string(p.seed)});
  return argv;
}

pid_t spawn(const std::string& self, const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    execv(self.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

int run_compare(CompareArgs args) {
  auto machine = Machine::parse(args.base.machine);
  if (!machine) return usage_error(fail("--machine: " + machine.error().message));
  if (args.base.workload.empty() == args.base.generate.empty())
    return usage_error(
        fail("give exactly one of --workload FILE and --generate lublin:JOBS[:SEED]"));
  if (args.allocators.empty()) {
    // Every allocator that can be built for this machine (families for other machine kinds
    // refuse in their factories).
    for (const auto& info : AllocatorRegistry::builtin().all())
      if (info.factory(*machine, {}).ok()) args.allocators.push_back(info.name);
  }
  if (args.parallel < 1) return usage_error(fail("--jobs must be at least 1"));
  std::vector<long> seeds = args.seeds.empty() ? std::vector<long>{-1} : args.seeds;

  std::vector<GridPoint> grid;
  for (const auto& a : args.allocators)
    for (const auto& p : args.policies)
      for (double l : args.loads)
        for (long s : seeds) {
          GridPoint g{a + "/" + p, a, p, l, s, ""};
          if (args.loads.size() > 1 || l != 1.0) g.label += " load " + number_text(l);
          if (s >= 0) g.label += " seed " + std::to_string(s);
          g.out = args.base.out + "/runs/" + std::to_string(grid.size() + 1) + "-" + a + "-" + p;
          grid.push_back(std::move(g));
        }

  std::error_code ec;
  std::filesystem::create_directories(args.base.out + "/runs", ec);
  if (ec) return usage_error(fail("--out " + args.base.out + ": " + ec.message()));
  std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) return usage_error(fail("cannot find the trellis binary: " + ec.message()));

  std::cout << "trellis sim-compare: " << grid.size() << " runs on " << machine->spec() << ", "
            << args.parallel << " at a time\n";
  std::map<pid_t, size_t> active;
  std::vector<int> exit_status(grid.size(), -1);
  size_t next = 0, done = 0;
  while (done < grid.size()) {
    while (next < grid.size() && active.size() < static_cast<size_t>(args.parallel)) {
      pid_t pid = spawn(self, child_argv(args.base, grid[next]));
      if (pid < 0) return usage_error(fail("fork failed"));
      active[pid] = next++;
    }
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) break;
    auto it = active.find(pid);
    if (it == active.end()) continue;
    size_t i = it->second;
    active.erase(it);
    exit_status[i] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    ++done;
    std::cout << "  [" << done << "/" << grid.size() << "] " << grid[i].label
              << (exit_status[i] == 0 ? ""
                                      : "  FAILED (exit " + std::to_string(exit_status[i]) + ")")
              << "\n"
              << std::flush;
  }

  nlohmann::json runs = nlohmann::json::array();
  bool all_ok = true;
  for (size_t i = 0; i < grid.size(); ++i) {
    std::ifstream in(grid[i].out + "/summary.json");
    nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    if (exit_status[i] != 0 || doc.is_discarded() || !doc.contains("metrics")) {
      all_ok = false;
      continue;
    }
    runs.push_back({{"label", grid[i].label},
                    {"allocator", grid[i].allocator},
                    {"policy", grid[i].policy},
                    {"load", grid[i].load},
                    {"seed", grid[i].seed},
                    {"dir", grid[i].out},
                    {"metrics", doc["metrics"]}});
  }

  const std::vector<std::pair<std::string, std::string>> columns = {
      {"jobs", "jobs"},
      {"rejected", "rejected"},
      {"mean_wait_s", "wait(s)"},
      {"mean_bounded_slowdown", "bsld"},
      {"utilization", "util"},
      {"steady_utilization", "steady"},
      {"loss_of_capacity", "LoC"},
      {"fragmented_time_fraction", "frag"},
      {"mean_pairwise_hops", "hops"},
      {"allocator_call_us", "us/alloc"},
      {"wall_s", "wall(s)"}};
  size_t label_width = 10;
  for (const auto& r : runs)
    label_width = std::max(label_width, r["label"].get<std::string>().size());
  std::cout << "\n" << std::left << std::setw(static_cast<int>(label_width) + 2) << "run";
  for (const auto& [key, title] : columns) std::cout << std::right << std::setw(12) << title;
  std::cout << "\n";
  for (const auto& r : runs) {
    std::cout << std::left << std::setw(static_cast<int>(label_width) + 2)
              << r["label"].get<std::string>();
    for (const auto& [key, title] : columns) {
      const auto& v = r["metrics"][key];
      std::cout << std::right << std::setw(12);
      if (v.is_null())
        std::cout << "n/a";
      else if (v.is_number_integer())
        std::cout << v.get<long>();
      else
        std::cout << std::fixed << std::setprecision(3) << v.get<double>();
    }
    std::cout << "\n";
  }

  nlohmann::json about = {
      {"machine", machine->spec()},
      {"workload", args.base.workload.empty() ? args.base.generate : args.base.workload},
      {"mode", args.base.mode},
      {"shaped_requests", args.base.shaped}};
  nlohmann::json data = {
      {"title", "Trellis comparison on " + machine->spec()}, {"about", about}, {"runs", runs}};
  std::string base = args.base.out + "/";
  if (auto ok = write_text_file(base + "compare.json", data.dump(2) + "\n"); !ok)
    return usage_error(ok.error());
  if (auto ok = write_text_file(base + "compare.html", render_comparison_report(data)); !ok)
    return usage_error(ok.error());
  std::cout << "\nwrote " << base << "compare.html and " << base << "compare.json"
            << " (each run's report is under " << base << "runs/)\n";
  return all_ok ? 0 : 1;
}

}  // namespace

void add_sim_compare_command(CLI::App& app, int& status) {
  auto args = std::make_shared<CompareArgs>();
  args->base.out = "out/compare";
  auto* cmd = app.add_subcommand(
      "sim-compare",
      "Simulate one workload under a grid of allocators x policies (x loads x seeds), each run a\n"
      "separate process, and print a table plus write compare.html comparing them.\n"
      "Example: trellis sim-compare --machine torus:16x16 --workload lublin_256.swf "
      "--alloc first-available,random,contiguous --sched easy,conservative");
  add_sim_options(*cmd, args->base);
  // The grid's axes replace the single-run options of the same meaning.
  cmd->remove_option(cmd->get_option("--alloc"));
  cmd->remove_option(cmd->get_option("--sched"));
  cmd->remove_option(cmd->get_option("--load"));
  cmd->remove_option(cmd->get_option("--save-workload"));
  cmd->add_option("--alloc,-a", args->allocators,
                  "Allocators to compare (comma-separated); default: every allocator that "
                  "accepts the machine")
      ->delimiter(',');
  cmd->add_option("--sched,-s", args->policies, "Queue policies to compare (comma-separated)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--load", args->loads, "Load factors to compare (comma-separated)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--seed", args->seeds,
                  "Seeds to compare (comma-separated): the random allocator's seed and the "
                  "generated workload's seed")
      ->delimiter(',');
  cmd->add_option("--jobs,-j", args->parallel, "Simulations run at once")->capture_default_str();
  cmd->callback([args, &status] { status = run_compare(*args); });
}

}  // namespace trellis::cli
