// trellis gang-sim: simulate gang (time-space sharing) policies at quantum granularity on the
// thesis's synthetic workloads, compare them, and reproduce the thesis's DQT experiments.
//
//   trellis gang-sim --sched dqt-ffapa,fcfs-bb --processors 1024 --load 0.9
//   trellis gang-sim --reproduce table7.1 --seeds 5
//   trellis gang-sim --interactive-jobs 3 --processors 64 --slice 10 --idle-detection
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "sim/gang/gang_report.h"
#include "sim/gang/interactive_model.h"
#include "sim/gang/thesis_experiments.h"

namespace trellis::cli {

namespace {

struct GangSimArgs {
  std::string policies = "dqt-ffapa";
  int processors = 128;
  int fanout = 2;
  int max_jobs_per_node = 4;
  bool dqt_messages = false;
  std::string sizes = "uniform";
  std::string service = "exponential";
  double mean_service = 1000;
  double service_min = 500;
  double service_max = 19999;
  std::vector<double> loads = {0.5};
  double duration = 1e6;
  double end = -1;
  bool drain = false;
  bool gradient = false;
  double gradient_start = 0.38;
  int seeds = 1;
  uint64_t first_seed = 1;
  long slice = 1;
  bool idle_detection = false;
  int interactive_jobs = 0;
  int interactive_size = 0;
  double mean_compute = 25;
  double mean_think = 100;
  int interactions = 300;
  double deadlock_fraction = 0;
  int trace_slots = 0;
  std::string json;
  bool json_jobs = false;
  std::string reproduce;
};

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

void print_reproduction_of_table_7_1(const std::vector<gangsim::GangSummary>& rows) {
  std::cout
      << "\nThesis Table 7.1 beside ours (utilization; max TQLB = largest seen in the run):\n";
  std::cout << "  policy          WF     util thesis  util ours (range)       maxTQLB thesis  ours "
               "mean (range)\n";
  for (const auto& t : gangsim::thesis_table_7_1()) {
    for (const auto& r : rows) {
      if (r.policy != t.policy || r.load != t.load) continue;
      char line[200];
      std::snprintf(
          line, sizeof line,
          "  %-14s %5.3f  %6.3f       %6.3f (%5.3f-%5.3f)     %3d             %5.1f (%d-%d)\n",
          t.policy.c_str(), t.load, t.utilization, r.utilization, r.utilization_min,
          r.utilization_max, t.max_tqlb, r.max_tqlb, r.max_tqlb_min, r.max_tqlb_max);
      std::cout << line;
    }
  }
}

int run_interactive(const GangSimArgs& a, const std::vector<std::string>& policies) {
  gangsim::InteractiveModel model;
  model.jobs = a.interactive_jobs;
  model.size = a.interactive_size > 0 ? a.interactive_size : a.processors;
  model.mean_compute = a.mean_compute;
  model.mean_think = a.mean_think;
  model.interactions = a.interactions;
  model.deadlock_fraction = a.deadlock_fraction;
  std::vector<gangsim::GangRun> runs;
  for (int s = 0; s < a.seeds; ++s) {
    model.seed = a.first_seed + static_cast<uint64_t>(s);
    auto jobs = gangsim::generate_interactive_jobs(model);
    if (!jobs) return usage_error(jobs.error());
    for (const auto& name : policies) {
      gang::GangPolicyOptions options{a.fanout, a.max_jobs_per_node, a.dqt_messages};
      auto scheduler = gang::GangPolicyRegistry::builtin().create(name, a.processors, options);
      if (!scheduler) return usage_error(fail("--sched: " + scheduler.error().message));
      gangsim::GangSimConfig config;
      config.end_time = a.end > 0 ? static_cast<long>(a.end) : -1;
      config.drain = a.drain;
      config.slice = a.slice;
      config.idle_detection = a.idle_detection;
      config.trace_slots = a.trace_slots;
      auto result = gangsim::simulate_gang(*jobs, **scheduler, config);
      if (!result) return usage_error(result.error());
      gangsim::print_global_state(std::cout, *result);
      double per_job = 0;
      for (const auto& j : result->jobs)
        if (j.end > 0)
          per_job += static_cast<double>(j.done) / static_cast<double>(j.end - j.submit);
      std::cout << "  mean per-job utilization (work / elapsed) "
                << per_job / static_cast<double>(result->jobs.size()) << ", makespan "
                << result->duration << "\n";
      gangsim::print_slot_trace(std::cout, *result);
      runs.push_back(gangsim::GangRun{name, 0, model.seed, std::move(*result), 0});
    }
  }
  if (!a.json.empty()) {
    std::ofstream out(a.json);
    if (!out) return usage_error(fail("--json: cannot write " + a.json));
    gangsim::write_json(out, runs, a.json_jobs);
  }
  return 0;
}

int run_gang_sim(const GangSimArgs& a) {
  std::vector<std::string> policies = split_commas(a.policies);
  if (policies.empty()) return usage_error(fail("--sched: no policy named"));
  for (const auto& p : policies)
    if (!gang::GangPolicyRegistry::builtin().has(p))
      return usage_error(
          fail("--sched: " + gang::GangPolicyRegistry::builtin().create(p, 2).error().message));
  if (a.seeds < 1) return usage_error(fail("--seeds: must be at least 1"));
  if (a.slice < 1) return usage_error(fail("--slice: must be at least 1"));
  if (a.interactive_jobs > 0) return run_interactive(a, policies);

  gangsim::GangExperiment e;
  if (a.reproduce == "table7.1") {
    e = gangsim::table_7_1_experiment(a.seeds);
  } else if (a.reproduce == "fig7.20") {
    e = gangsim::figure_7_20_experiment(a.seeds, a.duration);
  } else if (!a.reproduce.empty()) {
    return usage_error(fail("--reproduce: '" + a.reproduce + "' is not one of table7.1, fig7.20"));
  } else {
    e.policies = policies;
    e.model.processors = a.processors;
    auto sizes = workload::parse_size_distribution(a.sizes);
    if (!sizes) return usage_error(fail("--sizes: " + sizes.error().message));
    auto service = workload::parse_service_distribution(a.service);
    if (!service) return usage_error(fail("--service: " + service.error().message));
    e.model.sizes = *sizes;
    e.model.service = *service;
    e.model.mean_service = a.mean_service;
    e.model.service_min = a.service_min;
    e.model.service_max = a.service_max;
    e.model.arrival_end = a.duration;
    e.model.gradient = a.gradient;
    e.model.gradient_start = a.gradient_start;
    e.loads = a.gradient ? std::vector<double>{a.gradient_start} : a.loads;
    e.seeds.clear();
    for (int s = 0; s < a.seeds; ++s) e.seeds.push_back(a.first_seed + static_cast<uint64_t>(s));
    if (auto ok = workload::validate(e.model); !ok) return usage_error(ok.error());
  }
  e.options = gang::GangPolicyOptions{a.fanout, a.max_jobs_per_node, a.dqt_messages};
  // Arrivals stop at the end time; --drain then runs on until every admitted job has finished.
  e.sim.end_time = static_cast<long>(a.end > 0 ? a.end : e.model.arrival_end);
  e.sim.drain = a.drain;
  e.sim.slice = a.slice;
  e.sim.idle_detection = a.idle_detection;
  e.sim.trace_slots = a.trace_slots;
  const bool terminal = isatty(STDERR_FILENO);
  if (terminal) {
    e.sim.progress = [](long now, long end) {
      if (end > 0)
        std::cerr << "\r  " << (100 * now / end) << "% of the simulated time" << std::flush;
    };
  }
  std::cout << "Gang simulation: " << e.model.processors << " processors, sizes "
            << workload::to_string(e.model.sizes) << ", service "
            << workload::to_string(e.model.service) << (e.model.gradient ? ", gradient load" : "")
            << ", " << e.model.arrival_end << " time units of arrivals, " << e.seeds.size()
            << " seed(s), slice " << e.sim.slice << "\n";
  auto runs = gangsim::run_experiment(e, [&](const gangsim::GangRun& run) {
    if (terminal) {
      std::cerr << "\r  " << run.policy << " load " << run.load << " seed " << run.seed << ": "
                << run.result.jobs.size() << " jobs in " << run.wall_seconds << " s          \n";
    }
  });
  if (!runs) return usage_error(runs.error());
  auto rows = gangsim::summarize(*runs);
  gangsim::print_summary_table(std::cout, rows);
  if (a.reproduce == "table7.1") print_reproduction_of_table_7_1(rows);
  for (const auto& run : *runs) {
    if (run.result.trace.empty()) continue;
    std::cout << "\nload " << run.load << " seed " << run.seed << " ";
    gangsim::print_slot_trace(std::cout, run.result);
  }
  if (!a.json.empty()) {
    std::ofstream out(a.json);
    if (!out) return usage_error(fail("--json: cannot write " + a.json));
    gangsim::write_json(out, *runs, a.json_jobs);
    std::cout << "wrote " << a.json << "\n";
  }
  return 0;
}

}  // namespace

void add_gang_sim_command(CLI::App& app, int& status) {
  auto a = std::make_shared<GangSimArgs>();
  auto* cmd = app.add_subcommand(
      "gang-sim",
      "Simulate gang (time-space sharing) policies slot by slot on synthetic workloads (the "
      "models\n"
      "of the DQT gang-scheduling study).\n"
      "Each slot (quantum) the policy picks the jobs that run; only those advance. Prints\n"
      "per policy: utilization (share of processors in partitions that run), RETR (how much\n"
      "longer a job takes than alone), max TQLB (most jobs sharing one processor) and how RETR\n"
      "grows with job size.\n"
      "Examples:\n"
      "  trellis gang-sim --sched dqt-ffapa,scan-up-bb,fcfs-bb --processors 1024 --load 0.9\n"
      "  trellis gang-sim --reproduce table7.1 --seeds 5\n"
      "  trellis gang-sim --processors 8 --load 0.9 --duration 200 --trace-slots 20\n"
      "  trellis gang-sim --interactive-jobs 3 --processors 64 --slice 10 --idle-detection");
  cmd->add_option("--sched,-s", a->policies, "Gang policies, comma separated (see `trellis list`)")
      ->capture_default_str();
  cmd->add_option("--processors,-P", a->processors,
                  "Processors (a power of the fan-out; of 2 for baselines)")
      ->capture_default_str();
  cmd->add_option("--fanout", a->fanout, "Children of each node of the DQT tree (2 = binary buddy)")
      ->capture_default_str();
  cmd->add_option("--max-jobs-per-node", a->max_jobs_per_node,
                  "slurm-gang: at most K jobs per node")
      ->capture_default_str();
  cmd->add_flag("--dqt-messages", a->dqt_messages,
                "Run DQT as its message-passing protocol (same slots, several times slower)");
  cmd->add_option("--sizes", a->sizes, "Job sizes (powers of two): uniform, proportional, inverse")
      ->capture_default_str();
  cmd->add_option("--service", a->service, "Service times: exponential or uniform")
      ->capture_default_str();
  cmd->add_option("--mean-service", a->mean_service, "Exponential service mean (time units)")
      ->capture_default_str();
  cmd->add_option("--service-min", a->service_min, "Uniform service minimum")
      ->capture_default_str();
  cmd->add_option("--service-max", a->service_max, "Uniform service maximum")
      ->capture_default_str();
  cmd->add_option(
         "--load,-l", a->loads,
         "Offered loads: work arriving per unit of time over the processors (comma separated)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--duration,-T", a->duration, "Arrivals in [0, T); also the simulated time")
      ->capture_default_str();
  cmd->add_option("--end", a->end, "Simulate until this time instead of T");
  cmd->add_flag("--drain", a->drain,
                "After arrivals stop (--end, else --duration), keep simulating until every job "
                "that arrived has finished");
  cmd->add_flag("--gradient", a->gradient,
                "Rising load: +0.05 every 5% of the arrival period, from --gradient-start");
  cmd->add_option("--gradient-start", a->gradient_start, "Starting load of the gradient")
      ->capture_default_str();
  cmd->add_option("--seeds", a->seeds, "Number of seeds (workloads) per load")
      ->capture_default_str();
  cmd->add_option("--seed", a->first_seed, "First seed")->capture_default_str();
  cmd->add_option("--slice", a->slice, "Time units per slot (quantum)")->capture_default_str();
  cmd->add_flag("--idle-detection", a->idle_detection,
                "Skip jobs that wait for user input until it arrives; remove jobs that can never "
                "progress");
  cmd->add_option("--interactive-jobs", a->interactive_jobs,
                  "Simulate this many interactive jobs instead (compute bursts between user think "
                  "times)");
  cmd->add_option("--interactive-size", a->interactive_size,
                  "Processors per interactive job (default: all)");
  cmd->add_option("--mean-compute", a->mean_compute, "Interactive: mean compute burst (units)")
      ->capture_default_str();
  cmd->add_option("--mean-think", a->mean_think, "Interactive: mean user think time (units)")
      ->capture_default_str();
  cmd->add_option("--interactions", a->interactions, "Interactive: user answers per job")
      ->capture_default_str();
  cmd->add_option("--deadlock-fraction", a->deadlock_fraction,
                  "Interactive: share of jobs that deadlock half way")
      ->capture_default_str();
  cmd->add_option("--trace-slots", a->trace_slots, "Print which jobs ran in the first N slots");
  cmd->add_option("--json", a->json, "Write all results as JSON to this file");
  cmd->add_flag("--json-jobs", a->json_jobs, "Include every job's outcome in the JSON");
  cmd->add_option("--reproduce", a->reproduce,
                  "A thesis experiment: table7.1 (128 processors, the 5 DQT placement rules) or "
                  "fig7.20 (1,024 processors, DQT vs "
                  "ScanUp vs FCFS-BB; --duration sets its length)");
  cmd->callback([a, &status] { status = run_gang_sim(*a); });
}

}  // namespace trellis::cli
