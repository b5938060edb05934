// trellis bench mc: MC1x1 decision time against the naive reference (bench/mc_bench.h).
#include <unistd.h>

#include <iostream>

#include "bench/mc_bench.h"
#include "cli/commands.h"

namespace trellis::cli {

void add_bench_mc_command(CLI::App& app, int& status) {
  CLI::App* bench = &bench_family(app);
  auto options = std::make_shared<bench::McBenchOptions>();
  auto* mc = bench->add_subcommand(
      "mc",
      "Median decision time of the MC1x1 allocator (prefix-sum shells) against the naive\n"
      "reference that scans every free node for every candidate centre, on Red Storm\n"
      "(mesh:27x16x24:wrap=z) with 50% and 90% random occupancy, jobs of 27, 100 and 1000\n"
      "nodes, shells clipped and wrapped. Both must choose the same nodes (exit 1 otherwise).");
  mc->add_flag("--quick", options->quick, "CI-sized run on mesh:12x8x8:wrap=z");
  mc->add_option("--repeat", options->repeat, "Decisions timed per search (default 5, quick 3)")
      ->check(CLI::PositiveNumber);
  mc->callback([options, &status] {
    options->progress = isatty(STDOUT_FILENO);
    status = bench::run_mc_bench(*options, std::cout);
  });
}

}  // namespace trellis::cli
