// trellis sim: replay a workload through a queue policy and an allocator on a virtual clock, and
// write the per-job CSV, the summary JSON and a self-contained HTML report.
//
//   trellis sim --machine torus:16x8 --workload trace.swf --sched easy --alloc contiguous --out DIR
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "alloc/registry.h"
#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/sim_args.h"
#include "cli/sim_gang.h"
#include "sched/priority_order.h"
#include "sched/registry.h"
#include "sim/html_report.h"
#include "sim/lublin.h"
#include "sim/outputs.h"
#include "sim/report_data.h"
#include "sim/run_metrics.h"
#include "sim/simulator.h"
#include "sim/swf.h"
#include "sim/user_accounts.h"
#include "sim/user_fairness.h"
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
    Workload w;
    w.jobs = std::move(*jobs);
    w.source = spec;
    return w;
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
  Workload w;
  w.jobs = generate_lublin(params);
  w.source = "lublin:" + std::to_string(params.jobs) + ":" + std::to_string(params.seed);
  w.perfect_estimates = static_cast<int>(w.jobs.size());
  w.notes.push_back(
      "the Lublin-Feitelson model has no user estimates: each job's time limit is "
      "its run time (a perfect estimate, which flatters backfilling)");
  return w;
}

namespace {

// summary.json's "users" and "fairness", and users.csv (sim/user_fairness.h).
std::string add_fairness(RunOutputs& run, const UserFairness& fairness, const std::string& out) {
  nlohmann::json users = nlohmann::json::array();
  std::ostringstream csv;
  csv << "user,jobs,mean_wait,mean_bounded_slowdown,node_hours\n";
  for (const UserFigures& u : fairness.users) {
    users.push_back({{"user", u.user},
                     {"jobs", u.jobs},
                     {"mean_wait", u.mean_wait},
                     {"mean_bounded_slowdown", u.mean_bounded_slowdown},
                     {"node_hours", u.node_hours}});
    csv << u.user << "," << u.jobs << "," << u.mean_wait << "," << u.mean_bounded_slowdown << ","
        << u.node_hours << "\n";
  }
  run.extra["users"] = users;
  nlohmann::json figures = {{"users", fairness.users.size()},
                            {"jain_bounded_slowdown", fairness.jain_bounded_slowdown}};
  std::ostringstream line;
  line << std::fixed << std::setprecision(3) << "  fairness over " << fairness.users.size()
       << " users: Jain's index of their mean bounded slowdowns " << fairness.jain_bounded_slowdown;
  if (fairness.fair_start) {
    const FairStartFigures& f = *fairness.fair_start;
    figures["fair_start"] = {{"jobs_measured", f.jobs_measured},
                             {"mean_unfair_delay", f.mean_unfair_delay},
                             {"unfair_fraction", f.unfair_fraction}};
    line << "; fair start (Sabin) missed by " << f.unfair_fraction * 100 << "% of "
         << f.jobs_measured << " jobs, mean unfair delay " << std::setprecision(0)
         << f.mean_unfair_delay << " s";
  }
  run.extra["fairness"] = figures;
  (void)write_text_file(out + "/users.csv", csv.str());
  return line.str();
}

void draw_progress(double fraction) {
  int width = 40;
  int filled = static_cast<int>(fraction * width);
  std::fprintf(stderr, "\r  simulating [%s%s] %3d%%", std::string(filled, '#').c_str(),
               std::string(width - filled, '.').c_str(), static_cast<int>(fraction * 100));
  if (fraction >= 1.0) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

// "2.5", "n/a" for a metric that was not computed.
std::string metric_text(const std::optional<double>& value) {
  if (!value) return "n/a";
  std::ostringstream s;
  s << std::fixed << std::setprecision(3) << *value;
  return s.str();
}

// The console lines of the metrics only some runs have: the run-time model's network means and
// internal fragmentation. Empty when the run has neither, so a plain run's output stays as it was.
std::string optional_metric_lines(const RunSummary& summary) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(3);
  if (summary.mean_inflation)
    s << "  mean inflation " << *summary.mean_inflation << ", mean hop-bytes "
      << std::setprecision(0) << *summary.mean_hop_bytes << std::setprecision(3)
      << " MiB x hops, mean max link load " << *summary.mean_max_link_load << "\n";
  if (summary.internal_fragmentation > 0)
    s << "  internal fragmentation " << summary.internal_fragmentation
      << " (node-seconds held beyond the request)\n";
  return s.str();
}

}  // namespace

Result<SummaryOptions> summary_options(const SimArgs& args) {
  SummaryOptions o;
  if (!(args.bsld_threshold > 0) || args.bsld_threshold > kMaxSimulatedSeconds)
    return fail("--bsld-threshold must be a positive number of seconds");
  o.bsld_threshold = args.bsld_threshold;
  o.from = args.from;
  o.to = args.to;
  if (o.from && o.to && !(*o.from < *o.to)) return fail("--from must be earlier than --to");
  return o;
}

void print_workload_notes(const Workload& workload, const Machine& machine, int procs_per_node) {
  for (const std::string& note : workload.notes)
    std::cerr << "trellis sim: note: " << workload.source << ": " << note << "\n";
  long long nodes = machine.node_count();
  long larger = std::count_if(workload.jobs.begin(), workload.jobs.end(),
                              [&](const Job& j) { return j.request.nodes > nodes; });
  if (workload.max_procs && *workload.max_procs > nodes * procs_per_node && larger > 0) {
    std::cerr << "trellis sim: warning: " << workload.source << " was recorded on "
              << *workload.max_procs << " processors, but " << machine.spec() << " has " << nodes
              << " nodes x " << procs_per_node << " processors; " << larger
              << " jobs larger than the machine will be rejected (a larger --machine or "
                 "--procs-per-node fits the trace)\n";
  }
}

void print_rejections(const SimResult& result, const SimArgs& args, const Machine& machine) {
  if (result.rejected.empty() || args.quiet) return;
  std::map<std::string, long> by_reason;
  for (const RejectedJob& r : result.rejected) ++by_reason[r.reason];
  std::cerr << "trellis sim: warning: " << result.rejected.size()
            << " jobs were rejected and never ran (state RJ in jobs.csv, with the reason); "
               "means are over the jobs that ran\n";
  int shown = 0;
  for (const auto& [reason, count] : by_reason) {
    if (++shown > 5) {
      std::cerr << "  ... and " << by_reason.size() - 5 << " other reasons\n";
      break;
    }
    std::cerr << "  " << count << " x " << reason << "\n";
  }
  bool too_big = std::any_of(result.rejected.begin(), result.rejected.end(), [&](const auto& r) {
    return r.requested_nodes > machine.node_count();
  });
  if (machine.torus() && args.mode != "noncont" && args.exact)
    std::cerr << "  hint: without --exact a count that no box holds exactly gets the smallest "
                 "larger box; or use --mode noncont with an allocator that takes any nodes\n";
  if (too_big)
    std::cerr << "  hint: jobs larger than the machine need a larger --machine, or "
                 "--procs-per-node N when the trace counts processors\n";
}

void print_padding_note(const Workload& workload, const std::string& machine) {
  long padded = 0;
  const Job* example = nullptr;
  for (const Job& job : workload.jobs)
    if (job.request.padding > 0 && ++padded == 1) example = &job;
  if (!padded) return;
  std::cerr << "trellis sim: note: " << padded << " jobs ask for a count that no box of " << machine
            << " holds exactly; each gets the smallest larger box (e.g. "
            << example->request.asked_nodes() << " -> " << example->request.nodes
            << " nodes), the extra nodes counted as internal fragmentation (--exact rejects "
               "them instead)\n";
}

Status save_workload(const SimArgs& args, const Workload& workload, const Machine& machine) {
  if (args.save_workload.empty()) return Ok{};
  std::ostringstream swf;
  write_swf(swf, workload_to_swf(workload, machine, args.procs_per_node));
  return write_text_file(args.save_workload, swf.str());
}

Result<std::unique_ptr<RuntimeModel>> make_runtime_model(const SimArgs& args,
                                                         const Machine& machine) {
  RuntimeModelOptions options;
  for (const auto& o : args.runtime_options)
    if (auto ok = options.add_list(o); !ok) return fail("--runtime-opt: " + ok.error().message);
  auto model = RuntimeModelRegistry::builtin().create(args.runtime_model, machine, options);
  if (!model) return fail("--runtime-model: " + model.error().message);
  return model;
}

int run_sim(const SimArgs& given) {
  SimArgs args = given;
  std::optional<NodeInventory> node_type;
  if (!args.node_type.empty()) {
    Result<NodeInventory> parsed = parse_node_inventory(args.node_type);
    if (!parsed) return usage_error(fail("--node-type: " + parsed.error().message));
    node_type = *parsed;
    if (args.procs_per_node != 1 && args.procs_per_node != node_type->cores())
      return usage_error(fail("--procs-per-node " + std::to_string(args.procs_per_node) +
                              ": with --node-type, a trace's processors are the node type's " +
                              std::to_string(node_type->cores()) + " cores per node"));
    args.procs_per_node = node_type->cores();
    if (is_gang_policy(args.policy))
      return usage_error(
          fail("--node-type: gang policies time-share whole nodes; give a batch "
               "policy (easy, conservative, fcfs, ...)"));
  } else if (args.share_nodes) {
    return usage_error(fail("--share-nodes: give the nodes' --node-type (cores, memory, GPUs)"));
  }
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
  auto runtime_model = make_runtime_model(args, *machine);
  if (!runtime_model) return usage_error(runtime_model.error());
  if (is_gang_policy(args.policy) && args.runtime_model != "trace")
    return usage_error(fail("--runtime-model " + args.runtime_model +
                            ": run-time models apply to batch policies (a gang policy's jobs "
                            "advance slot by slot; use --runtime-model trace)"));
  const std::string alloc_name =
      args.allocator.empty() ? default_allocator_for(*machine) : args.allocator;
  const AllocatorInfo* alloc_info = AllocatorRegistry::builtin().find(alloc_name);
  if (alloc_info && !is_gang_policy(args.policy))
    if (auto ok = check_allocator_takes_mode(*alloc_info, *mode, *machine); !ok)
      return usage_error(fail("--alloc: " + ok.error().message));

  AllocatorOptions alloc_options;
  for (const auto& o : args.alloc_options)
    if (auto ok = alloc_options.add_list(o); !ok)
      return usage_error(fail("--alloc-opt: " + ok.error().message));
  PolicyOptions sched_options;
  for (const auto& o : args.sched_options)
    if (auto ok = sched_options.add_list(o); !ok)
      return usage_error(fail("--sched-opt: " + ok.error().message));
  auto metrics_options = summary_options(args);
  if (!metrics_options) return usage_error(metrics_options.error());
  auto workload = make_workload(args, *machine);
  if (!workload) return usage_error(workload.error());
  if (!args.quiet) print_workload_notes(*workload, *machine, args.procs_per_node);
  if (!args.quiet && args.runtime_model != "trace" && !args.no_kill &&
      workload->perfect_estimates > 0)
    std::cerr << "note: " << workload->perfect_estimates
              << " jobs have their run time as their time limit (the workload gives none), so "
                 "any inflation by --runtime-model "
              << args.runtime_model
              << " kills them at it; add --no-kill-at-limit to let them run longer\n";
  if (args.max_jobs > 0 && workload->jobs.size() > static_cast<size_t>(args.max_jobs))
    workload->jobs.resize(static_cast<size_t>(args.max_jobs));
  if (args.load != 1.0) scale_load(*workload, args.load);
  if (auto ok = save_workload(args, *workload, *machine); !ok) return usage_error(ok.error());
  std::error_code ec;  // before a long run, not after it
  std::filesystem::create_directories(args.out, ec);
  if (ec) return usage_error(fail("--out " + args.out + ": " + ec.message()));
  if (is_gang_policy(args.policy)) return run_gang_policy_sim(args, *machine, *workload);
  const bool pad_counts = !args.exact && alloc_info && alloc_info->places_only_boxes;
  set_request_form(*workload, *machine, *mode, args.shaped, pad_counts);
  if (node_type) {
    set_node_resources(*workload, *node_type, args.share_nodes);
    if (workload->jobs.empty()) return usage_error(fail("--node-type: " + workload->notes.back()));
    if (!args.quiet && !workload->notes.empty())
      std::cerr << "note: " << workload->notes.back() << "\n";
  }
  if (!args.quiet) print_padding_note(*workload, machine->spec());

  auto allocator = AllocatorRegistry::builtin().create(alloc_name, *machine, alloc_options);
  if (!allocator) return usage_error(fail("--alloc: " + allocator.error().message));
  auto policy = PolicyRegistry::builtin().create(args.policy, *machine, sched_options);
  if (!policy) return usage_error(fail("--sched: " + policy.error().message));

  SimOptions options;
  options.record_placements = !args.metrics_only;
  options.kill_at_time_limit = !args.no_kill;
  options.runtime_model = runtime_model->get();
  options.max_job_test = static_cast<size_t>(args.max_job_test);
  if (node_type) options.node_types = {*node_type};
  bool terminal = isatty(STDERR_FILENO) && !args.quiet;
  if (terminal) options.progress = draw_progress;
  if (!args.quiet)
    std::cout << "trellis sim: " << workload->jobs.size() << " jobs from " << workload->source
              << " on " << machine->spec() << ", policy " << args.policy << ", allocator "
              << alloc_name << std::endl;  // flushed: a long run shows what it is doing
  // The queue's order: arrival, or multifactor priority over the trace's accounts.
  std::function<std::unique_ptr<QueueOrder>()> make_order;
  if (args.priority != "fifo") {
    Result<SimAccounts> accounts = sim_accounts(
        workload->jobs, args.accounts == "user" ? SimAccountsFrom::kUser : SimAccountsFrom::kGroup,
        args.shares_file);
    if (!accounts) return usage_error(accounts.error());
    PriorityWeights weights{.age = args.weight_age,
                            .fair_share = args.weight_fair_share,
                            .job_size = args.weight_job_size,
                            .max_age = args.max_age,
                            .half_life = args.half_life,
                            .classic = args.priority == "classic",
                            .dampening = 1};
    accounts->assign(workload->jobs);
    make_order = [tree = std::move(accounts->tree), weights, nodes = machine->node_count()] {
      return std::make_unique<PriorityOrder>(tree, nodes, weights);
    };
  }
  std::unique_ptr<QueueOrder> order = make_order ? make_order() : nullptr;
  options.order = order.get();
  RunOutputs run;
  run.result = simulate(*machine, **allocator, **policy, workload->jobs, options);
  run.summary = summarize(run.result, *metrics_options);
  UserFairness fairness = user_fairness(run.result, args.bsld_threshold);
  if (args.fair_start_sample > 0) {
    if (!args.quiet)
      std::cerr << "trellis sim: fair start times of " << args.fair_start_sample
                << " jobs (one replay each)\n";
    fairness.fair_start = fair_start_unfairness(
        *machine, **allocator, **policy, workload->jobs, options, run.result, make_order,
        static_cast<size_t>(args.fair_start_sample), terminal ? draw_progress : nullptr);
  }
  const std::string fairness_line = add_fairness(run, fairness, args.out);
  run.about = {{"machine", machine->spec()},
               {"workload", workload->source},
               {"policy", args.policy},
               {"allocator", alloc_name},
               {"load", args.load},
               {"mode", std::string(to_string(*mode))},
               {"shaped_requests", args.shaped},
               {"exact_counts", args.exact},
               {"procs_per_node", args.procs_per_node},
               {"skipped_records", workload->skipped},
               {"kill_at_time_limit", !args.no_kill},
               {"runtime_model", args.runtime_model},
               {"max_job_test", args.max_job_test},
               {"node_type", args.node_type},
               {"share_nodes", args.share_nodes},
               {"priority", args.priority}};
  if (args.priority != "fifo")
    run.about["priority_settings"] = {{"accounts", args.accounts},
                                      {"shares_file", args.shares_file},
                                      {"half_life", args.half_life},
                                      {"weight_age", args.weight_age},
                                      {"weight_fair_share", args.weight_fair_share},
                                      {"weight_job_size", args.weight_job_size},
                                      {"max_age", args.max_age}};
  if (!args.runtime_options.empty()) run.about["runtime_options"] = args.runtime_options;
  if (workload->unix_start_time) run.about["unix_start_time"] = *workload->unix_start_time;
  std::ostringstream line;
  const RunSummary& summary = run.summary;
  line << std::fixed << std::setprecision(3) << summary.allocator_call_us << " us per allocation, "
       << summary.mean_pass_us << " us per pass; wall " << summary.wall_seconds << " s ("
       << std::setprecision(0) << summary.jobs_per_second << " jobs/s)";
  if (summary.core_utilization)
    line << std::setprecision(3) << "; core utilization " << *summary.core_utilization
         << ", shared fragmentation " << summary.shared_fragmentation.value_or(0);
  line << "\n" << fairness_line;
  run.console_line = line.str();
  return write_run_outputs(args, *machine, run);
}

namespace {

// Appends the slot-by-slot schedule to the report page, as preformatted text.
void add_slot_section(std::string& html, const std::string& slots) {
  std::string section = "<section id=\"gang-slots\"><h2>Which jobs ran in which slot</h2><pre>" +
                        html_escape(slots) + "</pre></section>\n";
  auto at = html.rfind("</body>");
  html.insert(at == std::string::npos ? html.size() : at, section);
}

}  // namespace

int write_run_outputs(const SimArgs& args, const Machine& machine, const RunOutputs& run) {
  const SimResult& result = run.result;
  const RunSummary& summary = run.summary;
  std::error_code ec;
  std::filesystem::create_directories(args.out, ec);
  if (ec) return usage_error(fail("--out " + args.out + ": " + ec.message()));
  std::string base = args.out + "/";
  nlohmann::json doc = summary_document(run.about, summary, result);
  for (const auto& [key, value] : run.extra.items()) doc[key] = value;
  if (auto ok = write_text_file(base + "summary.json", doc.dump(2) + "\n"); !ok)
    return usage_error(ok.error());
  print_rejections(result, args, machine);
  if (!run.slot_trace.empty())
    if (auto ok = write_text_file(base + "slots.txt", run.slot_trace); !ok)
      return usage_error(ok.error());
  if (!args.metrics_only) {
    std::ostringstream csv;
    write_jobs_csv(csv, result, summary.options.bsld_threshold);
    if (auto ok = write_text_file(base + "jobs.csv", csv.str()); !ok)
      return usage_error(ok.error());
    std::string html = render_run_report(run_report_data(machine, result, summary, run.about));
    if (!run.slot_trace.empty()) add_slot_section(html, run.slot_trace);
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
              << "  mean pairwise hops " << metric_text(summary.mean_pairwise_hops)
              << (summary.mean_pairwise_hops ? "" : " (placements not recorded: --metrics-only)")
              << ", fragmented time " << summary.fragmented_fraction << "\n"
              << optional_metric_lines(summary) << "  " << run.console_line << "\n"
              << "  wrote " << base << "summary.json"
              << (args.metrics_only ? "" : ", " + base + "jobs.csv, " + base + "report.html")
              << (run.slot_trace.empty() ? "" : ", " + base + "slots.txt") << "\n";
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
  cmd.add_option("--node-type", args.node_type,
                 "Every node's cores, memory and GPUs: cores=N[,sockets=N,numa=N,threads=N,"
                 "mem=SIZE,gpus=[TYPE:]N,gres=NAME:N,features=A+B]; a trace's processors are then "
                 "cores (nodes = processors / cores, rounded up)");
  cmd.add_flag("--share-nodes", args.share_nodes,
               "With --node-type: jobs take the cores and memory they ask and share nodes (else "
               "whole nodes)");
  cmd.add_option("--mode", args.mode, std::string(kModeHelp) + " (for every job)")
      ->capture_default_str();
  cmd.add_flag("--shape-requests", args.shaped,
               "Turn node counts into cube-like boxes (for contiguous allocation by shape; mesh/"
               "torus only)");
  cmd.add_option("--max-job-test", args.max_job_test,
                 "Queue policies: look at no more than this many queued jobs, from the head, in "
                 "each pass (as Slurm's bf_max_job_test), so that a pass costs the same however "
                 "deep the queue; 0 (the default) looks at every job. trellisd bounds its passes "
                 "([controller] max_job_test, 500 by default): give the same number to predict it")
      ->check(CLI::NonNegativeNumber);
  cmd.add_flag("--exact", args.exact,
               "With an allocator that places only boxes (contiguous), reject a count that no box "
               "holds exactly; by default it gets the smallest box of larger volume that fits the "
               "machine (17 nodes on torus:16x16 -> 18), the extra nodes counted as internal "
               "fragmentation");
  cmd.add_option("--priority", args.priority,
                 "The queue's order: fifo (arrival), fairshare (Slurm's multifactor priority "
                 "with Fair Tree: age, fair-share, job size) or classic (the classic fair-share "
                 "formula)")
      ->check(CLI::IsMember({"fifo", "fairshare", "classic"}))
      ->capture_default_str();
  cmd.add_option("--accounts", args.accounts,
                 "With --priority: each group of the trace an account of its users (group), or "
                 "each user an account of its own (user)")
      ->check(CLI::IsMember({"group", "user"}))
      ->capture_default_str();
  cmd.add_option("--shares", args.shares_file,
                 "With --priority: a file of 'NAME SHARES' lines (g12 40, u7 2); 1 each otherwise");
  cmd.add_option("--half-life", args.half_life,
                 "With --priority: seconds in which usage decays to half (0: never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--weight-age", args.weight_age, "PriorityWeightAge")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--weight-fairshare", args.weight_fair_share, "PriorityWeightFairshare")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--weight-jobsize", args.weight_job_size, "PriorityWeightJobSize")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--max-age", args.max_age, "PriorityMaxAge: seconds of waiting at which age is 1")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--fair-start-sample", args.fair_start_sample,
                 "Jobs whose fair start time (Sabin et al.) is measured, spread evenly over the "
                 "trace, each by a replay of the jobs before it; 0: none")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--max-jobs", args.max_jobs, "Simulate only the first N jobs of the workload")
      ->check(positive_whole_number());
  cmd.add_option("--out,-o", args.out, "Output directory")->capture_default_str();
  cmd.add_option("--save-workload", args.save_workload,
                 "Also write the workload as simulated (after --max-jobs and --load) as an SWF "
                 "trace, e.g. to keep a generated one");
  cmd.add_flag("--metrics-only", args.metrics_only,
               "Write only summary.json: no per-job placements, CSV or HTML (throughput runs)");
  cmd.add_flag("--quiet,-q", args.quiet, "Print nothing but errors");
  cmd.add_option("--from", args.from,
                 "Count in the metrics only the jobs submitted at or after this time (seconds on "
                 "the trace's clock), e.g. to skip the warm-up");
  cmd.add_option("--to", args.to,
                 "Count in the metrics only the jobs submitted before this time (seconds), e.g. "
                 "to leave out the drain at the end");
  cmd.add_option("--bsld-threshold", args.bsld_threshold,
                 "Bounded slowdown is max(1, response / max(run time, this)): keeps very short "
                 "jobs from dominating the mean (seconds)")
      ->capture_default_str();
  cmd.add_flag("--no-kill-at-limit", args.no_kill,
               "Let jobs run their whole run time even past their requested time (by default a "
               "job is killed at its requested time, state TO, as a resource manager does)");
  cmd.add_option("--runtime-model", args.runtime_model,
                 "What placement does to run times (see `trellis list`): trace (as recorded), "
                 "hop-bytes (inflated by the allocation's extra hop-bytes, after SST's "
                 "timeperdistance) or congestion (by the most loaded link of the job's routes, "
                 "its neighbours' traffic counted); the recorded time is the time on the most "
                 "compact allocation. With a model, jobs.csv gives each job's inflation, "
                 "hop-bytes and link load")
      ->capture_default_str();
  cmd.add_option("--runtime-opt", args.runtime_options,
                 "Run-time model options key=value[,key=value...] (repeatable), e.g. a=0.5,b=1,"
                 "c=0.2,seed=7 for hop-bytes or comm=0.3 for congestion");
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
