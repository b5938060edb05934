// trellis bench gang: see bench/gang_bench.h.
#include <unistd.h>

#include <iostream>

#include "bench/gang_bench.h"
#include "cli/commands.h"

namespace trellis::cli {

void add_bench_gang_command(CLI::App& app, int& status) {
  // Joins the `trellis bench` family (cli/bench_command.cc), creating it if it is not there.
  CLI::App* bench = nullptr;
  try {
    bench = app.get_subcommand("bench");
  } catch (const CLI::OptionNotFound&) {
    bench = app.add_subcommand("bench", "Measure decision times against references");
    bench->require_subcommand(1);
  }
  auto options = std::make_shared<bench::GangBenchOptions>();
  auto* gang = bench->add_subcommand(
      "gang",
      "Slots per second of the message-passing DQT round robin against the centralized\n"
      "reference on random trees of 128, 1,024 and 4,096 processors (both must agree), and wall\n"
      "time of 10^6 time units of the thesis workload on 4,096 processors for uniform,\n"
      "proportional and inverse sizes (dqt-ffapa, with fcfs-bb on the same jobs).");
  gang->add_flag("--quick", options->quick, "CI-sized run: 2,000 slots, 10^5 time units");
  gang->callback([options, &status] {
    options->progress = isatty(STDERR_FILENO);
    status = bench::run_gang_bench(*options, std::cout);
  });
}

}  // namespace trellis::cli
