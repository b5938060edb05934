// trellis bench scale: the live system at the seeds' scale, one part per question (issue 33):
//   c  queue depth: submissions/s, pass time p50/p99 and starts/s with 1,000, 10,000 and 100,000
//      jobs pending, each depth beside the shallowest measured in the same run
//      (bench/queue_depth.h)
// Each part is one function; --parts picks them, in the order given.
#include <unistd.h>

#include <iostream>
#include <memory>
#include <sstream>

#include "bench/queue_depth.h"
#include "cli/commands.h"

namespace trellis::cli {
namespace {

struct ScaleArgs {
  std::string parts = "c";
  std::vector<int> depths = {1000, 10000, 100000};
  int steady_starts = 3000;
  int max_job_test = 500;
};

int run_part_c(const ScaleArgs& args) {
  bench::QueueDepthOptions options;
  options.depths = args.depths;
  options.steady_starts = args.steady_starts;
  options.max_job_test = args.max_job_test;
  if (isatty(STDERR_FILENO))
    options.progress = [](const std::string& line) { std::cerr << line << "\n"; };
  return bench::run_queue_depth_bench(options, std::cout);
}

}  // namespace

void add_bench_scale_command(CLI::App& app, int& status) {
  auto args = std::make_shared<ScaleArgs>();
  CLI::App* cmd = bench_family(app).add_subcommand(
      "scale",
      "The live system at the seeds' scale, by part:\n"
      "  c  queue depth: one controller (SQLite, agents faked) with 1,000 / 10,000 / 100,000\n"
      "     jobs pending: submissions/s, pass time p50/p99 and starts/s, each depth beside\n"
      "     the first");
  cmd->add_option("--parts", args->parts, "Which parts to run, e.g. c")->capture_default_str();
  cmd->add_option("--depths", args->depths, "(c) queue depths to measure, in order")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  cmd->add_option("--steady-starts", args->steady_starts,
                  "(c) starts measured at each depth once the queue is full")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--max-job-test", args->max_job_test,
                  "(c) the controller's bound on each pass ([controller] max_job_test)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->callback([args, &status] {
    status = 0;
    for (char part : args->parts) {
      int result = 0;
      switch (part) {
        case 'c':
          result = run_part_c(*args);
          break;
        case ',':
          continue;
        default:
          std::cerr << "trellis bench scale: --parts: unknown part '" << part << "' (known: c)\n";
          status = 2;
          return;
      }
      if (result != 0) status = result;
    }
  });
}

}  // namespace trellis::cli
