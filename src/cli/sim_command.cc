// trellis sim: replay a workload through a queue policy and an allocator on a virtual clock, and
// write the per-job CSV, the summary JSON and a self-contained HTML report.
//
//   trellis sim --machine torus:16x8 --workload trace.swf --sched easy --alloc contiguous --out DIR
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "alloc/registry.h"
#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/sim_args.h"
#include "cli/sim_gang.h"
#include "sched/registry.h"
#include "sim/html_report.h"
#include "sim/lublin.h"
#include "sim/outputs.h"
#include "sim/report_data.h"
#include "sim/run_metrics.h"
#include "sim/simulator.h"
#include "sim/swf.h"
#include "sim/workload.h"
#include "sim/workload/thesis_model.h"

namespace trellis::cli {

Result<Workload> make_workload(const SimArgs& args, const Machine& machine) {
  if (args.workload.empty() == args.generate.empty())
    return fail("give exactly one of --workload FILE and --generate lublin:JOBS[:SEED]");
  if (!args.workload.empty()) return load_workload(args.workload, args.procs_per_node);
  std::string spec = args.generate;
  if (spec.rfind("thesis", 0) == 0) {  // the DQT thesis's models: thesis:KEY=VALUE,...
    auto model = workload::parse_thesis_spec(spec, machine.node_count());
    if (!model) return fail("--generate: " + model.error().message);
    auto jobs = workload::generate_thesis_workload(*model);
    if (!jobs) return fail("--generate: " + jobs.error().message);
    return Workload{std::move(*jobs), 0, spec, std::nullopt};
  }
  // lublin:JOBS[:SEED]
  if (spec.rfind("lublin:", 0) != 0)
    return fail("--generate '" + spec + "': expected lublin:JOBS[:SEED]");
  LublinParams params;
  params.machine_nodes = machine.node_count();
  std::istringstream in(spec.substr(7));
  char colon = 0;
  if (!(in >> params.jobs) || params.jobs < 1)
    return fail("--generate '" + spec + "': JOBS must be a positive whole number");
  if (in >> colon) {
    if (colon != ':' || !(in >> params.seed))
      return fail("--generate '" + spec + "': SEED must be a whole number after ':'");
  }
  if (!in.eof() && in.peek() != EOF) return fail("--generate '" + spec + "': trailing text");
  Workload w{generate_lublin(params), 0,
             "lublin:" + std::to_string(params.jobs) + ":" + std::to_string(params.seed),
             std::nullopt};
  return w;
}

namespace {

void draw_progress(double fraction) {
  int width = 40;
  int filled = static_cast<int>(fraction * width);
  std::fprintf(stderr, "\r  simulating [%s%s] %3d%%", std::string(filled, '#').c_str(),
               std::string(width - filled, '.').c_str(), static_cast<int>(fraction * 100));
  if (fraction >= 1.0) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

}  // namespace

std::string allocator_or_default(const std::string& name, const Machine& machine) {
  if (!name.empty()) return name;
  std::string preferred =
      machine.kind() == Machine::Kind::kFatTree ? "fattree-units" : default_allocator_for(machine);
  return AllocatorRegistry::builtin().find(preferred) ? preferred : "first-available";
}

int run_sim(const SimArgs& args) {
  auto machine = Machine::parse(args.machine);
  if (!machine) return usage_error(fail("--machine: " + machine.error().message));
  auto mode = placement_mode_for(args.mode, *machine);
  if (!mode) return usage_error(mode.error());
  if (auto ok = check_shaped_requests(args.shaped, *mode, *machine); !ok)
    return usage_error(ok.error());
  if (!(args.load > 0)) return usage_error(fail("--load must be a positive number"));
  if (auto ok = check_policy_name(args.policy); !ok)
    return usage_error(fail("--sched: " + ok.error().message));
  if (is_gang_policy(args.policy))
    if (auto ok = check_gang_policy(args, *machine); !ok) return usage_error(ok.error());
  if (const AllocatorInfo* info =
          AllocatorRegistry::builtin().find(allocator_or_default(args.allocator, *machine));
      info && !is_gang_policy(args.policy))
    if (auto ok = check_allocator_takes_mode(*info, *mode, *machine); !ok)
      return usage_error(fail("--alloc: " + ok.error().message));

  AllocatorOptions alloc_options;
  for (const auto& o : args.alloc_options)
    if (auto ok = alloc_options.add_list(o); !ok)
      return usage_error(fail("--alloc-opt: " + ok.error().message));
  PolicyOptions sched_options;
  for (const auto& o : args.sched_options)
    if (auto ok = sched_options.add_list(o); !ok)
      return usage_error(fail("--sched-opt: " + ok.error().message));
  auto workload = make_workload(args, *machine);
  if (!workload) return usage_error(workload.error());
  if (args.max_jobs > 0 && workload->jobs.size() > static_cast<size_t>(args.max_jobs))
    workload->jobs.resize(static_cast<size_t>(args.max_jobs));
  if (args.load != 1.0) scale_load(*workload, args.load);
  if (is_gang_policy(args.policy)) return run_gang_policy_sim(args, *machine, *workload);
  set_request_form(*workload, *machine, *mode, args.shaped);
  if (!args.save_workload.empty()) {
    std::ostringstream swf;
    write_swf(swf, jobs_to_swf(workload->jobs,
                               {{"Version", "2.2"},
                                {"Computer", machine->spec()},
                                {"MaxNodes", std::to_string(machine->node_count())},
                                {"Note", "written by trellis sim from " + workload->source}}));
    if (auto ok = write_text_file(args.save_workload, swf.str()); !ok)
      return usage_error(ok.error());
  }

  std::string alloc_name = allocator_or_default(args.allocator, *machine);
  auto allocator = AllocatorRegistry::builtin().create(alloc_name, *machine, alloc_options);
  if (!allocator) return usage_error(fail("--alloc: " + allocator.error().message));
  auto policy = PolicyRegistry::builtin().create(args.policy, *machine, sched_options);
  if (!policy) return usage_error(fail("--sched: " + policy.error().message));

  std::error_code ec;
  std::filesystem::create_directories(args.out, ec);
  if (ec) return usage_error(fail("--out " + args.out + ": " + ec.message()));

  SimOptions options;
  options.record_placements = !args.metrics_only;
  bool terminal = isatty(STDERR_FILENO) && !args.quiet;
  if (terminal) options.progress = draw_progress;
  if (!args.quiet)
    std::cout << "trellis sim: " << workload->jobs.size() << " jobs from " << workload->source
              << " on " << machine->spec() << ", policy " << args.policy << ", allocator "
              << alloc_name << "\n";
  SimResult result = simulate(*machine, **allocator, **policy, workload->jobs, options);
  RunSummary summary = summarize(result);

  nlohmann::json about = {{"machine", machine->spec()},
                          {"workload", workload->source},
                          {"policy", args.policy},
                          {"allocator", alloc_name},
                          {"load", args.load},
                          {"mode", std::string(to_string(*mode))},
                          {"shaped_requests", args.shaped},
                          {"procs_per_node", args.procs_per_node},
                          {"skipped_records", workload->skipped}};
  std::string base = args.out + "/";
  if (auto ok = write_text_file(base + "summary.json",
                                summary_document(about, summary, result).dump(2) + "\n");
      !ok)
    return usage_error(ok.error());
  if (!args.metrics_only) {
    std::ostringstream csv;
    write_jobs_csv(csv, result);
    if (auto ok = write_text_file(base + "jobs.csv", csv.str()); !ok)
      return usage_error(ok.error());
    std::string html = render_run_report(run_report_data(*machine, result, summary, about));
    if (auto ok = write_text_file(base + "report.html", html); !ok) return usage_error(ok.error());
  }
  if (!args.quiet) {
    std::cout << std::fixed << std::setprecision(3) << "  jobs " << summary.jobs << " (rejected "
              << summary.rejected << ", timed out " << summary.timed_out << ")\n"
              << "  mean wait " << summary.mean_wait << " s, mean bounded slowdown "
              << summary.mean_bounded_slowdown << "\n"
              << "  offered load " << summary.offered_load << ", utilization "
              << summary.utilization << " (steady " << summary.steady_utilization
              << "), loss of capacity " << summary.loss_of_capacity << ", makespan "
              << summary.makespan << " s\n"
              << "  mean pairwise hops " << summary.mean_pairwise_hops << ", fragmented time "
              << summary.fragmented_fraction << "\n"
              << "  " << summary.allocator_call_us << " us per allocation, " << summary.mean_pass_us
              << " us per pass; wall " << summary.wall_seconds << " s (" << std::setprecision(0)
              << summary.jobs_per_second << " jobs/s)\n"
              << "  wrote " << base << "summary.json"
              << (args.metrics_only ? "" : ", " + base + "jobs.csv, " + base + "report.html")
              << "\n";
  }
  return 0;
}

void add_sim_options(CLI::App& cmd, SimArgs& args) {
  cmd.add_option("--machine,-m", args.machine,
                 "Machine spec: torus:16x8, mesh:27x16x24:wrap=z, fattree:4,4,4, flat:128")
      ->required();
  cmd.add_option("--workload,-w", args.workload,
                 "Workload: an SWF trace (.swf) or a JSON job list (.json)");
  cmd.add_option(
      "--generate", args.generate,
      "Generate the workload instead: lublin:JOBS[:SEED] (Lublin-Feitelson model) or "
      "thesis:load=0.9,sizes=uniform|proportional|inverse,service=exponential|uniform,"
      "duration=T,seed=S (the synthetic workloads of the DQT gang-scheduling study; times in "
      "seconds)");
  cmd.add_option("--sched,-s", args.policy,
                 "Queue policy, or a gang (time-sharing) policy such as dqt-ffapa (see `trellis "
                 "list`; gang policy options: --sched-opt quantum=SECONDS,fanout=N,"
                 "max_jobs_per_node=K,trace_slots=N)")
      ->capture_default_str();
  cmd.add_option("--sched-opt", args.sched_options,
                 "Policy options key=value[,key=value...] (repeatable; `trellis list` names them)");
  cmd.add_option("--alloc,-a", args.allocator,
                 "Allocator (see `trellis list`); default: contiguous on a mesh/torus, "
                 "fattree-units on a fat tree, first-available on a flat machine");
  cmd.add_option("--alloc-opt", args.alloc_options,
                 "Allocator options key=value[,key=value...] (repeatable)");
  cmd.add_option("--load", args.load,
                 "Scale the offered load: inter-arrival times are divided by this factor")
      ->capture_default_str();
  cmd.add_option("--procs-per-node", args.procs_per_node,
                 "Processors per node, for traces that log processors (sizes are rounded up)")
      ->capture_default_str();
  cmd.add_option("--mode", args.mode, std::string(kModeHelp) + " (for every job)")
      ->capture_default_str();
  cmd.add_flag("--shape-requests", args.shaped,
               "Turn node counts into cube-like boxes (for contiguous allocation by shape; mesh/"
               "torus only)");
  cmd.add_option("--max-jobs", args.max_jobs, "Simulate only the first N jobs of the workload")
      ->check(positive_whole_number());
  cmd.add_option("--out,-o", args.out, "Output directory")->capture_default_str();
  cmd.add_option("--save-workload", args.save_workload,
                 "Also write the workload as simulated (after --max-jobs and --load) as an SWF "
                 "trace, e.g. to keep a generated one");
  cmd.add_flag("--metrics-only", args.metrics_only,
               "Write only summary.json: no per-job placements, CSV or HTML (throughput runs)");
  cmd.add_flag("--quiet,-q", args.quiet, "Print nothing but errors");
}

void add_sim_command(CLI::App& app, int& status) {
  auto args = std::make_shared<SimArgs>();
  auto* cmd = app.add_subcommand(
      "sim",
      "Simulate a workload (SWF trace, JSON job list or generated) with a queue policy and an\n"
      "allocator; write jobs.csv, summary.json and report.html (Gantt chart, utilization, queue,\n"
      "slowdown by size, occupancy maps) to the output directory.\n"
      "Example: trellis sim --machine torus:16x8 --workload trace.swf --sched easy "
      "--alloc contiguous --out out/run1");
  add_sim_options(*cmd, *args);
  cmd->callback([args, &status] { status = run_sim(*args); });
}

}  // namespace trellis::cli
