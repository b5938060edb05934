// trellis bench: performance measurements that compare against reference implementations in
// the same run (never against remembered numbers).
//
//   trellis bench contiguous [--quick] [--repeat N] [--budget SECONDS]
#include <unistd.h>

#include <iostream>

#include "bench/contiguous_bench.h"
#include "bench/sim_bench.h"
#include "cli/commands.h"

namespace trellis::cli {

CLI::App& bench_family(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands({}))
    if (sub->get_name() == "bench") return *sub;
  CLI::App* bench = app.add_subcommand(
      "bench", "Measure Trellis's speed against reference implementations in the same run");
  bench->require_subcommand(1);
  return *bench;
}

void add_bench_command(CLI::App& app, int& status) {
  auto* cmd = &bench_family(app);
  auto options = std::make_shared<bench::ContiguousBenchOptions>();
  auto* contiguous = cmd->add_subcommand(
      "contiguous",
      "Median decision time of the contiguous allocator's production search against the\n"
      "table-driven search it was derived from and brute force, on 16^3, 32^3 and 48^3 tori\n"
      "with 50% random and 90% realistic occupancy, for shaped (rotation allowed) and\n"
      "count-only requests. Also times the largest-free-box metric.");
  contiguous->add_flag("--quick", options->quick, "CI-sized run: 8^3 and 16^3 tori, 3 repeats");
  contiguous->add_option("--repeat", options->repeat, "Runs per search and cell (default 15)")
      ->check(CLI::PositiveNumber);
  contiguous
      ->add_option("--budget", options->budget_seconds,
                   "Seconds each search may spend per cell before it stops repeating")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  contiguous->callback([options, &status] {
    options->progress = isatty(STDOUT_FILENO);
    status = bench::run_contiguous_bench(*options, std::cout);
  });

  auto sim_options = std::make_shared<bench::SimBenchOptions>();
  auto* sim = cmd->add_subcommand(
      "sim",
      "Simulator speed: the full NASA iPSC trace with EASY and the contiguous allocator (against\n"
      "first-available), one conservative-backfilling pass with 10,000 queued jobs (against an\n"
      "EASY pass), and a generated 1,000,000-job Lublin workload on torus:32x32x32 (jobs/s).");
  sim->add_option("--workload", sim_options->workload,
                  "SWF trace (.swf or .swf.gz) for the first table instead of the NASA iPSC trace "
                  "built into the binary (from data/workloads/, so the bench needs no files)");
  sim->add_option("--lublin-jobs", sim_options->lublin_jobs,
                  "Jobs in the generated Lublin run (0 skips it)")
      ->capture_default_str();
  sim->add_option("--lublin-load", sim_options->lublin_load,
                  "Load factor of the Lublin run (inter-arrival times are divided by it)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sim->add_option("--queued", sim_options->queued_jobs, "Queued jobs in the conservative pass")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sim->callback([sim_options, &status] {
    sim_options->progress = isatty(STDERR_FILENO);
    status = bench::run_sim_bench(*sim_options, std::cout);
  });
}

}  // namespace trellis::cli
