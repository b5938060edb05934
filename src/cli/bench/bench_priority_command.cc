// trellis bench priority: a pass with fair-share priority at a deep queue, against arrival order
// (bench/priority_bench.h).
#include <iostream>

#include "bench/priority_bench.h"
#include "cli/commands.h"

namespace trellis::cli {

void add_bench_priority_command(CLI::App& app, int& status) {
  CLI::App* bench = &bench_family(app);
  auto options = std::make_shared<bench::PriorityBenchOptions>();
  auto* priority = bench->add_subcommand(
      "priority",
      "Pass time with fair-share priority (Fair Tree over 100 accounts of 1,000 users, decayed\n"
      "usage, the queue sorted before every pass) at 100,000 queued jobs, EASY on flat:4096,\n"
      "against the same stream in arrival order; the recalculation's own time; whether usage\n"
      "moves priority by the next pass.");
  priority->add_flag("--quick", options->quick, "CI-sized run: 10,000 jobs from 100 users");
  priority->add_option("--passes", options->passes, "Passes timed")->check(CLI::PositiveNumber);
  priority->callback(
      [options, &status] { status = bench::run_priority_bench(*options, std::cout); });
}

}  // namespace trellis::cli
