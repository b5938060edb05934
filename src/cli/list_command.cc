// trellis list: the registered allocators and queue policies, one per line.
#include <iomanip>
#include <iostream>

#include "alloc/registry.h"
#include "cli/commands.h"
#include "sched/gang/registry.h"
#include "sched/registry.h"
#include "sim/runtime_model.h"

namespace trellis::cli {

void add_list_command(CLI::App& app, int& status) {
  auto* cmd =
      app.add_subcommand("list",
                         "List the allocators, queue policies and gang policies Trellis knows, by "
                         "name, with the options they take");
  cmd->callback([&status] {
    std::cout << "Allocators (use with --alloc NAME):\n";
    for (const auto& info : AllocatorRegistry::builtin().all()) {
      std::cout << "  " << std::left << std::setw(26) << info.name << std::setw(12) << info.machines
                << info.summary << "\n";
    }
    std::cout << "\nQueue policies (use with --sched NAME):\n";
    for (const auto& info : PolicyRegistry::builtin().all())
      std::cout << "  " << std::left << std::setw(26) << info.name << info.summary << "\n";
    std::cout << "\nGang (time-space sharing) policies (use with --sched NAME, `trellis sim` or "
                 "`trellis gang-sim`):\n";
    for (const auto& info : gang::GangPolicyRegistry::builtin().all())
      std::cout << "  " << std::left << std::setw(26) << info.name << info.summary << "\n";
    std::cout << "  (options: --sched-opt quantum=SECONDS,fanout=N,max_jobs_per_node=K,"
                 "trace_slots=N)\n";
    std::cout << "\nRun-time models (use with `trellis sim --runtime-model NAME`, options "
                 "--runtime-opt key=value):\n";
    for (const auto& info : RuntimeModelRegistry::builtin().all())
      std::cout << "  " << std::left << std::setw(26) << info.name << info.summary << "\n";
    status = 0;
  });
}

}  // namespace trellis::cli
