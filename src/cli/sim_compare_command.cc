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
#include <set>
#include <sstream>

#include "alloc/registry.h"
#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/sim_args.h"
#include "cli/sim_gang.h"
#include "sched/registry.h"
#include "sim/html_report.h"
#include "sim/job_sets.h"
#include "sim/outputs.h"

namespace trellis::cli {

namespace {

struct CompareArgs {
  SimArgs base;
  std::vector<std::string> allocators;
  std::vector<std::string> policies = {"easy"};
  std::vector<double> loads = {1.0};
  std::vector<long> seeds;  // random allocator seed and generated-workload seed
  // With --node-type: whole nodes ("whole") or nodes shared by cores, memory and GPUs
  // ("shared"), or both, compared.
  std::vector<std::string> node_sharing;
  int parallel = 2;
};

struct GridPoint {
  std::string label;
  std::string allocator, policy;
  double load = 1;
  long seed = -1;
  std::string out;
  bool allocator_takes_seed = false;      // the grid's seed goes to the allocator as seed=N
  bool runtime_model_takes_seed = false;  // ... and to the run-time model
  bool share_nodes = false;               // --share-nodes (with the base's --node-type)
};

std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// The --generate spec of a grid point: the base spec with the point's seed, if any.
std::string seeded_generate_spec(const std::string& generate, long seed) {
  if (generate.empty() || seed < 0) return generate;
  if (generate.rfind("lublin:", 0) == 0) {  // lublin:JOBS[:SEED]
    size_t second = generate.find(':', generate.find(':') + 1);
    return generate.substr(0, second) + ":" + std::to_string(seed);
  }
  // thesis[:KEY=VALUE,...]: a later seed= replaces an earlier one.
  return generate + (generate.find(':') == std::string::npos ? ":" : ",") +
         "seed=" + std::to_string(seed);
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
  std::string generate = seeded_generate_spec(base.generate, p.seed);
  if (!base.workload.empty()) argv.insert(argv.end(), {"--workload", base.workload});
  if (!generate.empty()) argv.insert(argv.end(), {"--generate", generate});
  if (base.shaped) argv.push_back("--shape-requests");
  if (base.exact) argv.push_back("--exact");
  if (base.metrics_only) argv.push_back("--metrics-only");
  if (base.max_jobs > 0) argv.insert(argv.end(), {"--max-jobs", std::to_string(base.max_jobs)});
  for (const auto& o : base.sched_options) argv.insert(argv.end(), {"--sched-opt", o});
  for (const auto& o : base.alloc_options) argv.insert(argv.end(), {"--alloc-opt", o});
  if (base.no_kill) argv.push_back("--no-kill-at-limit");
  argv.insert(argv.end(), {"--runtime-model", base.runtime_model});
  for (const auto& o : base.runtime_options) argv.insert(argv.end(), {"--runtime-opt", o});
  if (p.runtime_model_takes_seed && p.seed >= 0)
    argv.insert(argv.end(), {"--runtime-opt", "seed=" + std::to_string(p.seed)});
  if (p.allocator_takes_seed && p.seed >= 0)
    argv.insert(argv.end(), {"--alloc-opt", "seed=" + std::to_string(p.seed)});
  if (!base.node_type.empty()) argv.insert(argv.end(), {"--node-type", base.node_type});
  if (p.share_nodes) argv.push_back("--share-nodes");
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

// Whether the allocator takes a seed= option (it draws random numbers).
bool allocator_takes_seed(const AllocatorInfo& info, const Machine& machine) {
  AllocatorOptions seeded;
  return seeded.add("seed=1").ok() && info.factory(machine, seeded).ok();
}

// Whether the run-time model takes a seed= option (it draws random numbers).
bool runtime_model_takes_seed(const SimArgs& base, const Machine& machine) {
  SimArgs seeded = base;
  seeded.runtime_options.push_back("seed=1");
  return make_runtime_model(seeded, machine).ok();
}

// Checks every axis of the grid, the workload and --out before any run starts, so that a bad
// name or value is a usage error rather than a column of failed runs. Fills in the default
// allocators (every one that accepts the machine and the mode).
Status check_grid(CompareArgs& args, const Machine& machine) {
  const SimArgs& base = args.base;
  auto mode = placement_mode_for(base.mode, machine);
  if (!mode) return mode.error();
  if (auto ok = check_shaped_requests(base.shaped, *mode, machine); !ok) return ok;
  AllocatorOptions alloc_options;
  for (const auto& o : base.alloc_options)
    if (auto ok = alloc_options.add_list(o); !ok) return fail("--alloc-opt: " + ok.error().message);
  PolicyOptions sched_options;
  for (const auto& o : base.sched_options)
    if (auto ok = sched_options.add_list(o); !ok) return fail("--sched-opt: " + ok.error().message);

  if (auto model = make_runtime_model(base, machine); !model) return model.error();

  if (args.policies.empty()) return fail("--sched: no policy named");
  bool any_queue_policy = false;
  for (const auto& policy : args.policies) {
    if (auto ok = check_policy_name(policy); !ok) return fail("--sched: " + ok.error().message);
    if (is_gang_policy(policy) && base.runtime_model != "trace")
      return fail("--runtime-model " + base.runtime_model + " applies to batch policies, not " +
                  policy + " (a gang policy's jobs advance slot by slot)");
    if (is_gang_policy(policy)) {
      SimArgs gang_args = base;
      gang_args.policy = policy;
      if (auto ok = check_gang_policy(gang_args, machine); !ok) return ok;
    } else {
      any_queue_policy = true;
      if (auto ok = PolicyRegistry::builtin().create(policy, machine, sched_options); !ok)
        return fail("--sched: " + ok.error().message);
    }
  }

  const AllocatorRegistry& registry = AllocatorRegistry::builtin();
  if (args.allocators.empty()) {
    for (const auto& info : registry.all())
      if (info.factory(machine, alloc_options).ok() &&
          check_allocator_takes_mode(info, *mode, machine).ok())
        args.allocators.push_back(info.name);
    if (args.allocators.empty())
      return fail("--alloc: no allocator accepts " + machine.spec() + " with these options");
  }
  for (const auto& name : args.allocators) {
    const AllocatorInfo* info = registry.find(name);
    if (!info)
      return fail("--alloc: unknown allocator '" + name + "' (known: " + registry.names() + ")");
    if (auto ok = info->factory(machine, alloc_options); !ok)
      return fail("--alloc: " + ok.error().message);
    if (any_queue_policy)
      if (auto ok = check_allocator_takes_mode(*info, *mode, machine); !ok)
        return fail("--alloc: " + ok.error().message);
  }

  for (double load : args.loads)
    if (!(load > 0)) return fail("--load: " + number_text(load) + " is not a positive number");
  bool seeds_matter = !base.generate.empty() || runtime_model_takes_seed(base, machine);
  for (const auto& name : args.allocators)
    seeds_matter = seeds_matter || allocator_takes_seed(*registry.find(name), machine);
  for (long seed : args.seeds)
    if (seed < 0) return fail("--seed: " + std::to_string(seed) + " is negative");
  if (!args.seeds.empty() && !seeds_matter)
    return fail(
        "--seed changes nothing here: it seeds a generated workload (--generate), "
        "allocators that take a seed option and the hop-bytes run-time model, and this grid has "
        "none of them");

  for (const std::string& sharing : args.node_sharing)
    if (sharing != "whole" && sharing != "shared")
      return fail("--nodes: '" + sharing + "'; expected whole, shared or both (whole,shared)");
  if (!args.node_sharing.empty() && base.node_type.empty())
    return fail("--nodes " + args.node_sharing.front() +
                ": give the nodes' --node-type (cores, memory, GPUs)");
  if (base.share_nodes)
    return fail("--share-nodes: in a grid, give --nodes shared (or whole,shared)");
  if (base.workload.empty() == base.generate.empty())
    return fail("give exactly one of --workload FILE and --generate lublin:JOBS[:SEED]");
  if (auto workload = make_workload(base, machine); !workload) return workload.error();

  std::error_code ec;
  std::filesystem::create_directories(base.out + "/runs", ec);
  if (ec) return fail("--out " + base.out + ": " + ec.message());
  const std::string probe = base.out + "/.trellis-write-check";
  if (auto ok = write_text_file(probe, ""); !ok)
    return fail("--out " + base.out + ": cannot write there (" + ok.error().message + ")");
  std::filesystem::remove(probe, ec);
  return Ok{};
}

// A successful run's completed jobs, from its jobs.csv and summary.json.
Result<std::vector<CompletedJob>> completed_jobs_of(const std::string& dir,
                                                    const nlohmann::json& summary) {
  std::set<long> rejected;
  if (summary.contains("rejected_jobs"))
    for (const auto& r : summary["rejected_jobs"])
      if (r.contains("id") && r["id"].is_number_integer()) rejected.insert(r["id"].get<long>());
  std::ifstream csv(dir + "/jobs.csv");
  if (!csv) return fail(dir + "/jobs.csv: cannot read");
  auto jobs = read_completed_jobs(csv, rejected);
  if (!jobs) return fail(dir + "/" + jobs.error().message);
  return jobs;
}

// Whether some run has a nonzero value of the metric `key` (absent, null and 0 all say "nothing
// to show": no model, no box larger than its request).
bool any_run_reports(const nlohmann::json& runs, const std::string& key) {
  for (const auto& r : runs) {
    const auto& metrics = r["metrics"];
    if (metrics.contains(key) && metrics[key].is_number() && metrics[key].get<double>() != 0)
      return true;
  }
  return false;
}

void print_table(const nlohmann::json& runs,
                 const std::vector<std::pair<std::string, std::string>>& columns,
                 const std::string& metrics_key) {
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
      const auto& v = r[metrics_key][key];
      std::cout << std::right << std::setw(12);
      if (v.is_number_integer()) {
        std::cout << v.get<long>();
      } else if (v.is_number()) {
        // Three decimals, unless that leaves no space before the next column (hop-bytes, long
        // waits): then whole numbers.
        std::ostringstream text;
        text << std::fixed << std::setprecision(3) << v.get<double>();
        if (text.str().size() > 11) {
          text.str("");
          text << std::setprecision(0) << v.get<double>();
        }
        std::cout << text.str();
      } else {
        std::cout << "n/a";
      }
    }
    std::cout << "\n";
  }
}

int run_compare(CompareArgs args) {
  auto machine = Machine::parse(args.base.machine);
  if (!machine) return usage_error(fail("--machine: " + machine.error().message));
  if (auto ok = check_grid(args, *machine); !ok) return usage_error(ok.error());
  std::vector<long> seeds = args.seeds.empty() ? std::vector<long>{-1} : args.seeds;
  std::vector<std::string> sharings =
      args.node_sharing.empty() ? std::vector<std::string>{"whole"} : args.node_sharing;

  std::vector<GridPoint> grid;
  const bool model_takes_seed = runtime_model_takes_seed(args.base, *machine);
  for (const auto& a : args.allocators) {
    const bool takes_seed = allocator_takes_seed(*AllocatorRegistry::builtin().find(a), *machine);
    for (const auto& p : args.policies)
      for (double l : args.loads)
        for (long s : seeds)
          for (const std::string& sharing : sharings) {
            GridPoint g{a + "/" + p,        a, p, l, s, "", takes_seed, model_takes_seed,
                        sharing == "shared"};
            if (args.loads.size() > 1 || l != 1.0) g.label += " load " + number_text(l);
            if (s >= 0) g.label += " seed " + std::to_string(s);
            if (!args.node_sharing.empty()) g.label += " " + sharing;
            g.out = args.base.out + "/runs/" + std::to_string(grid.size() + 1) + "-" + a + "-" + p;
            grid.push_back(std::move(g));
          }
  }

  std::error_code ec;
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
      if (pid < 0) {
        std::cerr << "trellis: fork failed\n";
        return kExitFailure;
      }
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

  const std::string base = args.base.out + "/";
  nlohmann::json runs = nlohmann::json::array();
  std::vector<std::vector<CompletedJob>> completed;
  // Runs share a job set only when they simulate the same workload: a generated workload
  // differs from seed to seed, a file (at any load) does not.
  const bool seed_changes_workload = !args.base.generate.empty();
  std::map<long, std::vector<size_t>> runs_by_workload;  // workload seed (-1: the one) -> runs
  bool all_ok = true;
  std::string per_job_problem;  // why the common-job comparison cannot be made, if it cannot
  if (args.base.metrics_only)
    per_job_problem =
        "--metrics-only writes no jobs.csv, and the comparison over the jobs every "
        "run completed needs per-job output";
  for (size_t i = 0; i < grid.size(); ++i) {
    std::ifstream in(grid[i].out + "/summary.json");
    nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    if (exit_status[i] != 0 || doc.is_discarded() || !doc.contains("metrics")) {
      all_ok = false;
      continue;
    }
    nlohmann::json run = {{"label", grid[i].label},   {"allocator", grid[i].allocator},
                          {"policy", grid[i].policy}, {"load", grid[i].load},
                          {"seed", grid[i].seed},     {"dir", grid[i].out},
                          {"metrics", doc["metrics"]}};
    if (!args.base.metrics_only) {
      run["report"] = std::filesystem::path(grid[i].out + "/report.html")
                          .lexically_relative(args.base.out)
                          .generic_string();
      if (per_job_problem.empty()) {
        auto jobs = completed_jobs_of(grid[i].out, doc);
        if (jobs) {
          run["completed_jobs"] = jobs->size();
          runs_by_workload[seed_changes_workload ? grid[i].seed : -1].push_back(runs.size());
          completed.push_back(std::move(*jobs));
        } else {
          per_job_problem = jobs.error().message;
        }
      }
    }
    runs.push_back(std::move(run));
  }

  std::vector<std::pair<std::string, std::string>> columns = {{"jobs", "jobs"},
                                                              {"rejected", "rejected"},
                                                              {"mean_wait_s", "wait(s)"},
                                                              {"mean_bounded_slowdown", "bsld"},
                                                              {"utilization", "util"},
                                                              {"steady_utilization", "steady"},
                                                              {"loss_of_capacity", "LoC"},
                                                              {"fragmented_time_fraction", "frag"},
                                                              {"makespan_s", "makespan(s)"},
                                                              {"mean_pairwise_hops", "hops"}};
  // A run-time model's network means and internal fragmentation only when some run has them, so
  // that the table of a plain grid stays as narrow as it was.
  for (const auto& [key, title] :
       std::vector<std::pair<std::string, std::string>>{{"mean_inflation", "infl"},
                                                        {"mean_hop_bytes", "hop-bytes"},
                                                        {"mean_max_link_load", "link"},
                                                        {"internal_fragmentation", "ifrag"},
                                                        {"core_utilization", "core-util"},
                                                        {"shared_fragmentation", "node-frag"}})
    if (any_run_reports(runs, key)) columns.emplace_back(key, title);
  columns.insert(columns.end(), {{"allocator_call_us", "us/alloc"}, {"wall_s", "wall(s)"}});
  print_table(runs, columns, "metrics");

  nlohmann::json about = {
      {"machine", machine->spec()},
      {"workload", args.base.workload.empty() ? args.base.generate : args.base.workload},
      {"mode", args.base.mode},
      {"shaped_requests", args.base.shaped},
      {"exact_counts", args.base.exact},
      {"node_type", args.base.node_type}};
  nlohmann::json data = {
      {"title", "Trellis comparison on " + machine->spec()}, {"about", about}, {"runs", runs}};

  if (!per_job_problem.empty()) {
    std::cout << "\nnote: runs not compared over common jobs: " << per_job_problem << "\n";
  } else if (completed.size() == runs.size() && !runs.empty()) {
    bool differ = false;
    size_t common_total = 0;
    nlohmann::json common_by_seed = nlohmann::json::object();
    for (const auto& [seed, members] : runs_by_workload) {
      std::vector<std::vector<CompletedJob>> group;
      for (size_t r : members) group.push_back(completed[r]);
      CommonJobs common = common_jobs(group);
      differ = differ || common.differ;
      common_total += common.ids.size();
      if (seed_changes_workload) common_by_seed[std::to_string(seed)] = common.ids.size();
      for (size_t k = 0; k < members.size(); ++k) {
        const JobSetMetrics& m = common.per_run[k];
        data["runs"][members[k]]["common_metrics"] = {
            {"mean_wait_s", m.mean_wait_s},
            {"mean_response_s", m.mean_response_s},
            {"mean_bounded_slowdown", m.mean_bounded_slowdown}};
      }
    }
    data["job_sets_differ"] = differ;
    if (differ) {
      data["common_jobs"] = common_total;
      if (seed_changes_workload) data["common_jobs_by_workload_seed"] = common_by_seed;
      std::cout << "\nwarning: the runs completed different jobs (some rejected jobs others ran), "
                   "so the means above are over different job sets; over the "
                << common_total << " jobs every run "
                << (runs_by_workload.size() > 1 ? "on the same generated workload (seed) " : "")
                << "completed:\n";
      print_table(data["runs"],
                  {{"mean_wait_s", "wait(s)"},
                   {"mean_response_s", "resp(s)"},
                   {"mean_bounded_slowdown", "bsld"}},
                  "common_metrics");
    } else {
      for (auto& run : data["runs"]) run.erase("common_metrics");
    }
  }

  if (auto ok = write_text_file(base + "compare.json", data.dump(2) + "\n"); !ok)
    return usage_error(ok.error());
  if (auto ok = write_text_file(base + "compare.html", render_comparison_report(data)); !ok)
    return usage_error(ok.error());
  std::cout << "\nwrote " << base << "compare.html and " << base << "compare.json"
            << " (each run's report is under " << base << "runs/)\n";
  return all_ok ? kExitOk : kExitFailure;
}

}  // namespace

void add_sim_compare_command(CLI::App& app, int& status) {
  auto args = std::make_shared<CompareArgs>();
  args->base.out = "out/compare";
  auto* cmd = app.add_subcommand(
      "sim-compare",
      "Simulate one workload under a grid of allocators x policies (x loads x seeds), each run a\n"
      "separate process, and print a table plus write compare.html comparing them. When the runs\n"
      "complete different jobs (one rejects jobs another runs), a second table compares them\n"
      "over the jobs every run completed. Every name and value is checked before any run.\n"
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
  cmd->add_option("--sched,-s", args->policies,
                  "Queue or gang policies to compare (comma-separated; see `trellis list`)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--load", args->loads, "Load factors to compare (comma-separated)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--seed", args->seeds,
                  "Seeds to compare (comma-separated): each seeds the generated workload "
                  "(--generate) and allocators that take a seed option (random)")
      ->delimiter(',');
  cmd->add_option("--nodes", args->node_sharing,
                  "With --node-type: whole (every job takes whole nodes), shared (jobs take the "
                  "cores, memory and GPUs they ask), or whole,shared to compare them")
      ->delimiter(',');
  cmd->add_option("--jobs,-j", args->parallel, "Simulations run at once")
      ->capture_default_str()
      ->check(positive_whole_number());
  cmd->callback([args, &status] { status = run_compare(*args); });
}

}  // namespace trellis::cli
