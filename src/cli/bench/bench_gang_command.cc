// trellis bench gang: see bench/gang_bench.h.
#include <unistd.h>

#include <iostream>

#include "bench/gang_bench.h"
#include "cli/commands.h"

namespace trellis::cli {

void add_bench_gang_command(CLI::App& app, int& status) {
  CLI::App* bench = &bench_family(app);
  auto options = std::make_shared<bench::GangBenchOptions>();
  auto* gang = bench->add_subcommand(
      "gang",
      "Slots per second of the two DQT engines (direct calls, message passing) against the\n"
      "centralized reference on random trees of 128, 1,024 and 4,096 processors (all must\n"
      "agree), and wall time of 10^6 time units of the DQT study's synthetic workload on\n"
      "4,096 processors for uniform, proportional and inverse sizes (dqt-ffapa, with fcfs-bb on\n"
      "the same jobs); the first tenth also runs on the message-passing engine for the ratio.");
  gang->add_flag("--quick", options->quick, "CI-sized run: 2,000 slots, 10^5 time units");
  gang->callback([options, &status] {
    options->progress = isatty(STDERR_FILENO);
    status = bench::run_gang_bench(*options, std::cout);
  });
}

}  // namespace trellis::cli
