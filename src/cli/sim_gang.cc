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
#include "sim/gang/sim_result_bridge.h"
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
  if (auto ok = given.only({"quantum", "fanout", "max_jobs_per_node", "trace_slots"}, policy); !ok)
    return ok.error();
  GangSimOptions o;
  auto quantum = given.number_above("quantum", o.quantum, 0);
  if (!quantum) return quantum.error();
  auto fanout = given.whole_number("fanout", o.policy.fanout, 2);
  if (!fanout) return fanout.error();
  auto max_jobs = given.whole_number("max_jobs_per_node", o.policy.max_jobs_per_node, 1);
  if (!max_jobs) return max_jobs.error();
  auto trace_slots = given.whole_number("trace_slots", o.trace_slots, 0);
  if (!trace_slots) return trace_slots.error();
  o.quantum = *quantum;
  o.policy.fanout = static_cast<int>(*fanout);
  o.policy.max_jobs_per_node = static_cast<int>(*max_jobs);
  o.trace_slots = static_cast<int>(*trace_slots);
  return o;
}

// Appends the slot-by-slot schedule to the report page, as preformatted text.
void add_slot_section(std::string& html, const std::string& slots) {
  std::string section = "<section id=\"gang-slots\"><h2>Which jobs ran in which slot</h2><pre>" +
                        html_escape(slots) + "</pre></section>\n";
  auto at = html.rfind("</body>");
  html.insert(at == std::string::npos ? html.size() : at, section);
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

  gangsim::QuantizedWorkload quantized =
      gangsim::quantize(workload.jobs, processors, options->quantum);
  gangsim::GangSimConfig config;
  config.record_activity = true;
  config.trace_slots =
      options->trace_slots >= 0 ? options->trace_slots : (quantized.jobs.size() <= 500 ? 200 : 0);
  const bool terminal = isatty(STDERR_FILENO) && !args.quiet;
  const long last_submit = quantized.jobs.empty() ? 1 : std::max(1L, quantized.jobs.back().submit);
  if (terminal) {
    config.progress = [last_submit](long now, long) {
      std::fprintf(stderr, "\r  simulating: slot %ld (arrivals end at %ld)", now, last_submit);
      std::fflush(stderr);
    };
  }
  if (!args.quiet)
    std::cout << "trellis sim: " << quantized.jobs.size() << " jobs from " << workload.source
              << " on " << machine.spec() << ", gang policy " << args.policy << " (quantum "
              << options->quantum << " s), partitions along the "
              << (curve ? alloc_name + " allocator's curve" : std::string("node ids")) << std::endl;
  auto start = std::chrono::steady_clock::now();
  auto gang_result = gangsim::simulate_gang(quantized.jobs, **scheduler, config);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (terminal) std::fprintf(stderr, "\n");
  if (!gang_result) return usage_error(gang_result.error());

  SimResult result = gangsim::to_sim_result(machine, order, *gang_result, workload.jobs, quantized,
                                            options->quantum, !args.metrics_only);
  result.wall_seconds = wall;
  auto metrics_options = summary_options(args);
  if (!metrics_options) return usage_error(metrics_options.error());
  RunSummary summary = summarize(result, *metrics_options);
  gangsim::set_time_shared_utilization(summary, *gang_result, options->quantum, processors);

  std::error_code ec;
  std::filesystem::create_directories(args.out, ec);
  if (ec) return usage_error(fail("--out " + args.out + ": " + ec.message()));
  nlohmann::json about = {{"machine", machine.spec()},
                          {"workload", workload.source},
                          {"policy", args.policy},
                          {"allocator", alloc_name},
                          {"load", args.load},
                          {"procs_per_node", args.procs_per_node},
                          {"skipped_records", workload.skipped}};
  if (workload.unix_start_time) about["unix_start_time"] = *workload.unix_start_time;
  nlohmann::json doc = summary_document(about, summary, result);
  const gangsim::GangSimResult& g = *gang_result;
  doc["gang"] = {{"quantum_seconds", options->quantum},
                 {"slots", g.slots},
                 {"active_partition_utilization", g.utilization},
                 {"mean_retr", g.mean_retr},
                 {"max_tqlb", g.max_tqlb},
                 {"mean_max_tqlb", g.mean_max_tqlb},
                 {"mean_min_tqlb", g.mean_min_tqlb},
                 {"retr_log2size_correlation", g.retr_size_correlation}};
  std::string base = args.out + "/";
  if (auto ok = write_text_file(base + "summary.json", doc.dump(2) + "\n"); !ok)
    return usage_error(ok.error());
  print_rejections(result, args, machine);
  std::ostringstream slots;
  slots << "# time = slot index; one slot = " << options->quantum << " s\n";
  gangsim::print_slot_trace(slots, g);
  if (!g.trace.empty())
    if (auto ok = write_text_file(base + "slots.txt", slots.str()); !ok)
      return usage_error(ok.error());
  if (!args.metrics_only) {
    std::ostringstream csv;
    write_jobs_csv(csv, result, summary.options.bsld_threshold);
    if (auto ok = write_text_file(base + "jobs.csv", csv.str()); !ok)
      return usage_error(ok.error());
    std::string html = render_run_report(run_report_data(machine, result, summary, about));
    if (!g.trace.empty()) add_slot_section(html, slots.str());
    if (auto ok = write_text_file(base + "report.html", html); !ok) return usage_error(ok.error());
  }
  if (!args.quiet) {
    std::cout << std::fixed << std::setprecision(3) << "  jobs " << summary.jobs << " (rejected "
              << summary.rejected << ")\n"
              << "  utilization " << summary.utilization
              << " (processors in active partitions, from the first submit), mean RETR "
              << g.mean_retr << ", max TQLB " << g.max_tqlb << " (mean " << g.mean_max_tqlb
              << "), log2(size)-RETR correlation " << g.retr_size_correlation << "\n"
              << "  mean response " << summary.mean_response << " s, mean bounded slowdown "
              << summary.mean_bounded_slowdown << ", makespan " << summary.makespan << " s\n"
              << "  " << g.slots << " slots in " << wall << " s of wall time\n";
    if (!g.trace.empty() && processors <= 64 && g.trace.size() <= 40) std::cout << slots.str();
    std::cout << "  wrote " << base << "summary.json"
              << (args.metrics_only ? "" : ", " + base + "jobs.csv, " + base + "report.html")
              << (g.trace.empty() ? "" : ", " + base + "slots.txt") << "\n";
  }
  return 0;
}

}  // namespace trellis::cli
