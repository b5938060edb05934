#include "cli/sim_gang.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "alloc/registry.h"
#include "cli/alloc_report.h"
#include "sched/gang/registry.h"
#include "sim/gang/gang_report.h"
#include "sim/gang/gang_simulator.h"
#include "sim/html_report.h"
#include "sim/outputs.h"
#include "sim/report_data.h"
#include "sim/run_metrics.h"

namespace trellis::cli {

namespace {

struct GangSimOptions {
  double quantum = 30;
  gang::GangPolicyOptions policy;
  int trace_slots = -1;  // -1: decide by workload size
};

Result<GangSimOptions> parse_gang_options(const std::vector<std::string>& items,
                                          const std::string& policy) {
  KeyValueOptions given("gang policy");
  for (const auto& item : items)
    if (auto ok = given.add_list(item); !ok) return ok.error();
  const ComponentOptions named = given.for_component(policy);
  if (auto ok = named.only({"quantum", "fanout", "max_jobs_per_node", "trace_slots"}); !ok)
    return ok.error();
  GangSimOptions o;
  auto quantum = named.number_above("quantum", o.quantum, 0);
  if (!quantum) return quantum.error();
  auto policy_options = gang::parse_gang_policy_options(named);
  if (!policy_options) return policy_options.error();
  auto trace_slots = named.whole_number("trace_slots", o.trace_slots, 0);
  if (!trace_slots) return trace_slots.error();
  o.quantum = *quantum;
  o.policy = *policy_options;
  o.trace_slots = static_cast<int>(*trace_slots);
  return o;
}

}  // namespace

bool is_gang_policy(const std::string& policy) {
  return gang::GangPolicyRegistry::builtin().has(policy);
}

Status check_gang_policy(const SimArgs& args, const Machine& machine) {
  if (args.shaped || (!args.mode.empty() && args.mode != "auto"))
    return fail("--mode and --shape-requests do not apply to gang policy '" + args.policy +
                "': it runs jobs on whole partitions of the node order, not boxes");
  if (args.no_kill)
    return fail(
        "--no-kill-at-limit: gang policies always end a job at its requested time; drop "
        "the option or use a queue policy");
  auto options = parse_gang_options(args.sched_options, args.policy);
  if (!options) return fail("--sched-opt: " + options.error().message);
  auto scheduler = gang::GangPolicyRegistry::builtin().create(args.policy, machine.node_count(),
                                                              options->policy);
  if (!scheduler) return fail("--sched: " + scheduler.error().message);
  return Ok{};
}

int run_gang_policy_sim(const SimArgs& args, const Machine& machine, const Workload& workload) {
  auto options = parse_gang_options(args.sched_options, args.policy);
  if (!options) return usage_error(fail("--sched-opt: " + options.error().message));
  const int processors = machine.node_count();
  auto scheduler =
      gang::GangPolicyRegistry::builtin().create(args.policy, processors, options->policy);
  if (!scheduler) return usage_error(fail("--sched: " + scheduler.error().message));

  // The order of the gang's processors on the machine: the allocator's curve when it works along
  // one (buddy, the default, or a linear allocator), else the node ids.
  std::string alloc_name = args.allocator.empty() ? "buddy" : args.allocator;
  AllocatorOptions alloc_options;
  for (const auto& o : args.alloc_options)
    if (auto ok = alloc_options.add_list(o); !ok)
      return usage_error(fail("--alloc-opt: " + ok.error().message));
  auto allocator = AllocatorRegistry::builtin().create(alloc_name, machine, alloc_options);
  if (!allocator) return usage_error(fail("--alloc: " + allocator.error().message));
  const Curve* curve = (*allocator)->node_order();
  Curve order = curve ? *curve : Curve::identity(processors);
  if (!curve && !args.quiet)
    std::cerr << "trellis sim: allocator '" << alloc_name
              << "' has no node order; gang partitions are taken in node id order\n";

  gangsim::GangSimConfig config;
  config.record_activity = true;
  config.trace_slots =
      options->trace_slots >= 0 ? options->trace_slots : (workload.jobs.size() <= 500 ? 200 : 0);
  const bool terminal = isatty(STDERR_FILENO) && !args.quiet;
  if (terminal) {
    config.progress = [](long now, long) {
      std::fprintf(stderr, "\r  simulating: slot %ld", now);
      std::fflush(stderr);
    };
  }
  if (!args.quiet)
    std::cout << "trellis sim: " << workload.jobs.size() << " jobs from " << workload.source
              << " on " << machine.spec() << ", gang policy " << args.policy << " (quantum "
              << options->quantum << " s), partitions along the "
              << (curve ? alloc_name + " allocator's curve" : std::string("node ids")) << std::endl;
  auto start = std::chrono::steady_clock::now();
  auto time_shared = gangsim::simulate_time_shared(machine, **scheduler, order, workload.jobs,
                                                   options->quantum, config, !args.metrics_only);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (terminal) std::fprintf(stderr, "\n");
  if (!time_shared) return usage_error(time_shared.error());
  const gangsim::GangSimResult& g = time_shared->gang;

  RunOutputs run;
  run.result = std::move(time_shared->run);
  run.result.wall_seconds = wall;
  auto metrics_options = summary_options(args);
  if (!metrics_options) return usage_error(metrics_options.error());
  run.summary = summarize(run.result, *metrics_options);
  run.about = {{"machine", machine.spec()},
               {"workload", workload.source},
               {"policy", args.policy},
               {"allocator", alloc_name},
               {"load", args.load},
               {"procs_per_node", args.procs_per_node},
               {"skipped_records", workload.skipped}};
  if (workload.unix_start_time) run.about["unix_start_time"] = *workload.unix_start_time;
  run.extra["gang"] = {{"quantum_seconds", options->quantum},
                       {"slots", g.slots},
                       {"active_partition_utilization", g.utilization},
                       {"mean_retr", g.mean_retr},
                       {"max_tqlb", g.max_tqlb},
                       {"mean_max_tqlb", g.mean_max_tqlb},
                       {"mean_min_tqlb", g.mean_min_tqlb},
                       {"retr_log2size_correlation", g.retr_size_correlation}};
  if (!g.trace.empty()) {
    std::ostringstream slots;
    slots << "# time = slot index; one slot = " << options->quantum << " s\n";
    gangsim::print_slot_trace(slots, g);
    run.slot_trace = slots.str();
  }
  std::ostringstream line;
  line << std::fixed << std::setprecision(3) << "mean RETR " << g.mean_retr << ", max TQLB "
       << g.max_tqlb << " (mean " << g.mean_max_tqlb << "), log2(size)-RETR correlation "
       << g.retr_size_correlation << "; " << g.slots << " slots in " << wall << " s of wall time";
  run.console_line = line.str();
  if (!args.quiet && !g.trace.empty() && processors <= 64 && g.trace.size() <= 40)
    std::cout << run.slot_trace;
  return write_run_outputs(args, machine, run);
}

}  // namespace trellis::cli
