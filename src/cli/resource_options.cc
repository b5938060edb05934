#include "cli/resource_options.h"

namespace trellis::cli {

void add_resource_options(CLI::App& command, ResourceOptions& into, const std::string& when) {
  auto resource = [&](const char* names, const char* option, const std::string& help) {
    command.add_option_function<std::string>(
        names, [&into, option](const std::string& v) { into.emplace_back(option, v); },
        when + help);
  };
  resource("-c,--cpus-per-task", "cpus-per-task", "CPUs (cores) per task (default 1)");
  resource("--mem", "mem", "Memory per node: MiB or with K, M, G, T (0 = all of it)");
  resource("--mem-per-cpu", "mem-per-cpu", "Memory per allocated CPU");
  resource("--mem-per-gpu", "mem-per-gpu", "Memory per allocated GPU");
  resource("--gres", "gres", "Generic resources per node: gpu[:TYPE]:N,NAME:N");
  resource("-G,--gpus", "gpus", "GPUs for the whole job: [TYPE:]N, split over its nodes");
  resource("--gpus-per-node", "gpus-per-node", "GPUs per node: [TYPE:]N");
  resource("--gpus-per-task", "gpus-per-task", "GPUs per task: [TYPE:]N");
  resource("--cpus-per-gpu", "cpus-per-gpu", "CPUs per allocated GPU");
  resource("-C,--constraint", "constraint", "Node features the job needs: a, a&b or a|b");
  command.add_flag_function(
      "--exclusive", [&into](int64_t) { into.emplace_back("exclusive", ""); },
      when + "Whole nodes: every core, GPU and byte of them");
  command.add_flag_function(
      "-s,--oversubscribe", [&into](int64_t) { into.emplace_back("oversubscribe", ""); },
      when + "The job may share its nodes' cores with other jobs");
}

}  // namespace trellis::cli
