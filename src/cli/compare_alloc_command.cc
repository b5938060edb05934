// trellis compare-alloc: the same random job sequence placed by every allocator on one machine,
// with the locality each achieves (body in bench/compare_alloc.h).
//
//   trellis compare-alloc --machine mesh:27x16x24:wrap=z --jobs 300 --seed 7
#include <unistd.h>

#include <iostream>

#include "bench/compare_alloc.h"
#include "cli/alloc_report.h"
#include "cli/commands.h"

namespace trellis::cli {

namespace {

struct CompareArgs {
  std::string machine;
  int jobs = 500;
  uint64_t seed = 1;
  std::vector<std::string> allocators;
};

int run_compare(const CompareArgs& args) {
  auto machine = Machine::parse(args.machine);
  if (!machine) return usage_error(fail("--machine: " + machine.error().message));
  if (args.jobs < 1) return usage_error(fail("--jobs: must be at least 1"));
  CompareAllocOptions options;
  options.jobs = args.jobs;
  options.seed = args.seed;
  options.allocators = args.allocators;
  const bool tty = isatty(STDOUT_FILENO);  // progress only for people watching
  auto rows = compare_allocators(*machine, options, [tty](const std::string& name) {
    if (tty) std::cerr << "\rrunning " << name << "...\033[K" << std::flush;
  });
  if (tty) std::cerr << "\r\033[K" << std::flush;
  if (!rows) return usage_error(rows.error());
  print_comparison(std::cout, *machine, options, *rows);
  return 0;
}

}  // namespace

void add_compare_alloc_command(CLI::App& app, int& status) {
  auto args = std::make_shared<CompareArgs>();
  auto* cmd = app.add_subcommand(
      "compare-alloc",
      "Place the same random job sequence (log-uniform sizes, random departures, about 85% load)\n"
      "with each allocator and compare locality: average pairwise hops, span and contiguous\n"
      "runs along the machine's curve, leaf switches spanned (fat trees), decision time.\n"
      "Example: trellis compare-alloc --machine fattree:16,16,8 --jobs 300");
  cmd->add_option("--machine,-m", args->machine,
                  "Machine spec: mesh:27x16x24:wrap=z, torus:8x8x8, fattree:16,16,8, flat:128")
      ->required();
  cmd->add_option("--jobs,-n", args->jobs, "Jobs in the sequence")->capture_default_str();
  cmd->add_option("--seed,-s", args->seed, "Seed of the job sequence")->capture_default_str();
  cmd->add_option("--alloc,-a", args->allocators,
                  "Allocators to compare (repeatable); default: every one the machine takes");
  cmd->callback([args, &status] { status = run_compare(*args); });
}

}  // namespace trellis::cli
