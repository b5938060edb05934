// trellis bench sharing: placement on shared nodes against whole nodes (bench/sharing_bench.h).
#include <iostream>

#include "bench/sharing_bench.h"
#include "cli/commands.h"

namespace trellis::cli {

void add_bench_sharing_command(CLI::App& app, int& status) {
  CLI::App* bench = &bench_family(app);
  auto options = std::make_shared<bench::SharingBenchOptions>();
  auto* sharing = bench->add_subcommand(
      "sharing",
      "Decision time of a placement on nodes shared by cores, memory and GPUs (best fit, NUMA\n"
      "locality) on flat:16384 of 128-core, 8-GPU nodes, against the whole-node decision of the\n"
      "machine's allocator on the same stream of jobs, both at 70% occupancy, and the memory of\n"
      "the pool's state.");
  sharing->add_flag("--quick", options->quick, "CI-sized run on flat:1024");
  sharing->add_option("--decisions", options->decisions, "Decisions timed per kind")
      ->check(CLI::PositiveNumber);
  sharing->callback([options, &status] { status = bench::run_sharing_bench(*options, std::cout); });
}

}  // namespace trellis::cli
