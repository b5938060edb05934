// The arguments of `trellis sim`, shared with `trellis sim-compare`, which runs `trellis sim` once
// per point of its grid.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/run_metrics.h"
#include "sim/simulator.h"
#include "sim/workload.h"
#include "topology/machine.h"

namespace trellis::cli {

struct SimArgs {
  std::string machine;
  std::string workload;
  std::string generate;  // lublin:JOBS[:SEED]
  std::string policy = "easy";
  std::vector<std::string> sched_options;
  std::string allocator;  // empty: the machine's default
  std::vector<std::string> alloc_options;
  double load = 1.0;
  int procs_per_node = 1;
  std::string mode = "auto";  // auto: the machine's own mode (see cli/option_checks.h)
  bool shaped = false;
  // Box-only allocators: reject counts that no box holds exactly instead of rounding them up to
  // the smallest box that fits (sched/request_shaping.h).
  bool exact = false;
  long max_jobs = 0;
  std::string out = "out/sim";
  std::string save_workload;  // write the workload as simulated (SWF) to this file
  bool metrics_only = false;
  bool quiet = false;
  // Metrics window: count the jobs submitted in [from, to) (e.g. to skip warm-up).
  std::optional<double> from, to;
  double bsld_threshold = 10;                // seconds, in max(1, response / max(run, threshold))
  bool no_kill = false;                      // let jobs run past their requested time
  std::string runtime_model = "trace";       // sim/runtime_model.h
  std::vector<std::string> runtime_options;  // key=value[,key=value...]
  long max_job_test = 0;  // queued jobs a pass looks at (BatchOptions::max_job_test); 0 = all
  // Every node of this type (core/node_inventory.h: "cores=64,mem=256G,gpus=4"): jobs hold
  // cores, memory and GPUs; with share_nodes they share nodes (sim/workload.h).
  std::string node_type;
  bool share_nodes = false;
  // The queue's order (sched/priority_order.h): "fifo" (arrival), "fairshare" (multifactor with
  // Fair Tree) or "classic" (multifactor with the classic formula); the accounts from the trace's
  // groups or users (sim/user_accounts.h), their shares from a file.
  std::string priority = "fifo";
  std::string accounts = "group";
  std::string shares_file;
  double half_life = 7 * 86400;
  double weight_age = 1000, weight_fair_share = 10000, weight_job_size = 0;
  double max_age = 7 * 86400;
  long fair_start_sample = 0;  // jobs whose fair start time is measured (a replay each); 0 = none
};

// Adds the options of `trellis sim` to `cmd`, bound to `args`.
void add_sim_options(CLI::App& cmd, SimArgs& args);
// The workload of --workload FILE or --generate SPEC; errors name the option.
Result<Workload> make_workload(const SimArgs& args, const Machine& machine);
// The run-time model of --runtime-model and --runtime-opt; errors name the option.
Result<std::unique_ptr<RuntimeModel>> make_runtime_model(const SimArgs& args,
                                                         const Machine& machine);
// Runs one simulation; returns the exit status.
int run_sim(const SimArgs& args);
// The metrics options of `args` (window and bounded-slowdown threshold), checked.
Result<SummaryOptions> summary_options(const SimArgs& args);
// Tells the user (stderr) what they should know about the workload as read: records skipped,
// estimates missing, a trace sized for a larger machine.
void print_workload_notes(const Workload& workload, const Machine& machine, int procs_per_node);
// Tells the user (stderr) how many counts were rounded up to a box (Request::padding).
void print_padding_note(const Workload& workload, const std::string& machine);
// Prints why jobs were rejected, grouped by reason, with what to try instead.
void print_rejections(const SimResult& result, const SimArgs& args, const Machine& machine);
// What one `trellis sim` run leaves, for either kind of policy; written by write_run_outputs.
struct RunOutputs {
  nlohmann::json about;  // the run's settings
  SimResult result;
  RunSummary summary;
  nlohmann::json extra = nlohmann::json::object();  // more top-level keys of summary.json
  std::string slot_trace;    // time-shared runs: slots.txt and a section of the report
  std::string console_line;  // what this kind of run adds to the console summary
};
// Writes summary.json, jobs.csv and report.html (and slots.txt) under args.out and prints the
// console summary; returns the exit status.
int write_run_outputs(const SimArgs& args, const Machine& machine, const RunOutputs& run);
// Writes the workload as simulated to args.save_workload (when given).
Status save_workload(const SimArgs& args, const Workload& workload, const Machine& machine);

}  // namespace trellis::cli
