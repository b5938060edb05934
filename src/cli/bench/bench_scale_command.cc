// trellis bench scale: the live system at the seeds' scale, one part per question (issue 33):
//   a  real processes: a full-machine job of `true` on torus:32x32x16 (16,384 nodes, 16 agents),
//      submission to every task started and to its end, beside this host's fork/exec of 16,384
//      processes measured in the same run, and the processes forked per node
//      (cli/bench_scale_live.h)
//   b  emulated tasks: full-machine jobs on 16,384 and 110,592 nodes (torus:48x48x48), submission
//      to every task started, the controller's memory, the store's bytes, beside the first
//      machine's (cli/bench_scale_live.h)
//   c  queue depth: submissions/s, pass time p50/p99 and starts/s with 1,000, 10,000 and 100,000
//      jobs pending, each depth beside the shallowest measured in the same run
//      (bench/queue_depth.h)
//   d  the 64-agent gang switch: CPU per switch and latency p50/p99 per fan-out (bench gang-live's
//      part a, the same function)
// Each part is one function; --parts picks them, in the order given.
#include <unistd.h>

#include <iostream>
#include <memory>
#include <sstream>

#include "bench/queue_depth.h"
#include "cli/bench/bench_scale_live.h"
#include "cli/commands.h"
#include "topology/machine.h"

namespace trellis::cli {
namespace {

// Nodes one emulating agent serves at most in part b (the agent's own limit, kMaxAgentNodes).
constexpr int kNodesPerEmulatingAgent = 4096;

struct ScaleArgs {
  std::string parts = "c";
  std::vector<int> depths = {1000, 10000, 100000};
  int steady_starts = 3000;
  int max_job_test = 500;
  std::string real_machine = "torus:32x32x16";
  int real_agents = 16;
  std::vector<std::string> emulated_machines = {"torus:32x32x16", "torus:48x48x48"};
  int switch_agents = 64;
  int switches = 200;
  std::vector<int> fanouts = {2, 4, 8, 16, 64};
};

int run_part_a(const ScaleArgs& args) {
  std::cout << "(a) a full-machine job of `true`, real processes\n";
  return run_launch_scale({{.machine = args.real_machine, .agents = args.real_agents}},
                          /*fork_reference=*/true, std::cout);
}

int run_part_b(const ScaleArgs& args) {
  std::cout << "(b) a full-machine job on emulated nodes (agents of up to "
            << kNodesPerEmulatingAgent << " nodes)\n";
  std::vector<LaunchScaleRow> rows;
  for (const std::string& spec : args.emulated_machines) {
    Result<Machine> machine = Machine::parse(spec);
    if (!machine) {
      std::cerr << "trellis bench scale: --emulated: " << machine.error().message << "\n";
      return 2;
    }
    const int nodes = machine->node_count();
    rows.push_back({.machine = spec,
                    .agents = (nodes + kNodesPerEmulatingAgent - 1) / kNodesPerEmulatingAgent,
                    .emulate = true});
  }
  return run_launch_scale(rows, /*fork_reference=*/false, std::cout);
}

int run_part_c(const ScaleArgs& args) {
  bench::QueueDepthOptions options;
  options.depths = args.depths;
  options.steady_starts = args.steady_starts;
  options.max_job_test = args.max_job_test;
  if (isatty(STDERR_FILENO))
    options.progress = [](const std::string& line) { std::cerr << line << "\n"; };
  return bench::run_queue_depth_bench(options, std::cout);
}

int run_part_d(const ScaleArgs& args) {
  std::cout << "(d) the " << args.switch_agents << "-agent gang switch\n";
  return run_gang_switch_latency(args.switch_agents, args.switches, args.fanouts);
}

}  // namespace

void add_bench_scale_command(CLI::App& app, int& status) {
  auto args = std::make_shared<ScaleArgs>();
  CLI::App* cmd = bench_family(app).add_subcommand(
      "scale",
      "The live system at the seeds' scale, by part:\n"
      "  a  a full-machine job of `true` with real processes on torus:32x32x16 (16,384 nodes,\n"
      "     16 agents): submission to all started and to its end, beside this host's fork/exec\n"
      "     of as many processes; processes forked per node\n"
      "  b  full-machine jobs on emulated nodes (cluster up --emulate): 16,384 and 110,592\n"
      "     (torus:48x48x48): submission to all started, controller memory, store bytes\n"
      "  c  queue depth: one controller (SQLite, agents faked) with 1,000 / 10,000 / 100,000\n"
      "     jobs pending: submissions/s, pass time p50/p99 and starts/s, each depth beside\n"
      "     the first\n"
      "  d  the 64-agent gang switch: CPU per switch and p50/p99 per fan-out (bench gang-live a)");
  cmd->add_option("--parts", args->parts, "Which parts to run, e.g. a,b,c,d")
      ->capture_default_str();
  cmd->add_option("--real-machine", args->real_machine, "(a) the machine")->capture_default_str();
  cmd->add_option("--real-agents", args->real_agents, "(a) its agents")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--emulated", args->emulated_machines,
                  "(b) the machines, in order (the first is the others' reference)")
      ->delimiter(',');
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
  cmd->add_option("--switch-agents", args->switch_agents, "(d) agents, one node each")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--switches", args->switches, "(d) switches per fan-out")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--fanouts", args->fanouts, "(d) fan-outs")
      ->delimiter(',')
      ->check(CLI::Range(1, 64));
  cmd->callback([args, &status] {
    status = 0;
    for (char part : args->parts) {
      int result = 0;
      switch (part) {
        case 'a':
          result = run_part_a(*args);
          break;
        case 'b':
          result = run_part_b(*args);
          break;
        case 'c':
          result = run_part_c(*args);
          break;
        case 'd':
          result = run_part_d(*args);
          break;
        case ',':
          continue;
        default:
          std::cerr << "trellis bench scale: --parts: unknown part '" << part
                    << "' (known: a, b, c, d)\n";
          status = 2;
          return;
      }
      std::cout << "\n";
      if (result != 0) status = result;
    }
  });
}

}  // namespace trellis::cli
