// trellis alloc: place one job on a machine whose busy nodes are given, and show the decision.
//
//   trellis alloc --machine torus:8x8x8 --busy 'n[0-40]' --request 4x2x2
#include <iostream>

#include "alloc/registry.h"
#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "core/hostlist.h"

namespace trellis::cli {

namespace {

struct AllocArgs {
  std::string machine;
  std::string busy;
  std::string request;
  std::string allocator;
  std::string mode = "auto";
  bool no_rotate = false;
  bool json = false;
  std::vector<std::string> options;
};

int run_alloc(const AllocArgs& args) {
  auto machine = Machine::parse(args.machine);
  if (!machine) return usage_error(machine.error());
  auto busy = parse_hostlist(args.busy, machine->node_count());
  if (!busy) return usage_error(fail("--busy: " + busy.error().message));
  auto mode = placement_mode_for(args.mode, *machine);
  if (!mode) return usage_error(mode.error());
  auto request = parse_request(args.request, !args.no_rotate, *mode);
  if (!request) return usage_error(fail("--request: " + request.error().message));

  AllocatorOptions options;
  for (const auto& o : args.options)
    if (auto ok = options.add_list(o); !ok)
      return usage_error(fail("--opt: " + ok.error().message));
  std::string name = args.allocator.empty() ? default_allocator_for(*machine) : args.allocator;
  auto allocator = AllocatorRegistry::builtin().create(name, *machine, options);
  if (!allocator) return usage_error(fail("--alloc: " + allocator.error().message));
  if (auto ok =
          check_allocator_takes_mode(*AllocatorRegistry::builtin().find(name), *mode, *machine);
      !ok)
    return usage_error(fail("--alloc: " + ok.error().message));

  if (auto ok = (*allocator)->check(*request); !ok)
    return usage_error(fail("impossible request: " + ok.error().message));
  NodeSet free = busy->complement();
  auto placement = (*allocator)->allocate(free, *request);
  if (args.json) {
    std::cout << alloc_decision_json(
                     *machine, name, *request, free, placement ? &*placement : nullptr,
                     placement ? "" : why_not_placed(*machine, *request, free, placement.error()))
                     .dump(2)
              << "\n";
    return placement ? kExitOk : kExitNoPlacementNow;
  }
  print_alloc_header(std::cout, *machine, name, *request, free);
  if (!placement) {
    std::cerr << "trellis: cannot place the job now: "
              << why_not_placed(*machine, *request, free, placement.error()) << "\n";
    return kExitNoPlacementNow;
  }
  print_placement(std::cout, *machine, *placement, free - placement->nodes);
  return kExitOk;
}

}  // namespace

void add_alloc_command(CLI::App& app, int& status) {
  auto args = std::make_shared<AllocArgs>();
  auto* cmd = app.add_subcommand(
      "alloc",
      "Place one job on a machine with some nodes busy, and print the decision: the box and its\n"
      "nodes, their average pairwise hops, and the largest free box left (mesh/torus).\n"
      "Exit status: 0 placed, 2 bad input or a request that can never fit, 3 the job fits the\n"
      "machine but cannot be placed now (too few free nodes, or no free box of that shape).\n"
      "Example: trellis alloc --machine torus:8x8x8 --busy 'n[0-40]' --request 4x2x2");
  cmd->add_option("--machine,-m", args->machine,
                  "Machine spec: torus:16x8, mesh:27x16x24:wrap=z, mesh:8x8x8:wrap=x,y, "
                  "fattree:4,4,4, flat:128")
      ->required();
  cmd->add_option("--request,-r", args->request, "A shape (4x2x2) or a node count (64)")
      ->required();
  cmd->add_option("--busy,-b", args->busy, "Busy nodes as a hostlist, e.g. 'n[0-40,77]'");
  cmd->add_option("--alloc,-a", args->allocator,
                  "Allocator name (see `trellis list`); default: contiguous on a mesh/torus, "
                  "fattree-units on a fat tree, first-available on a flat machine");
  cmd->add_option("--mode", args->mode, kModeHelp)->capture_default_str();
  cmd->add_flag("--no-rotate", args->no_rotate, "Do not permute the shape's axes");
  cmd->add_option("--opt,-o", args->options,
                  "Allocator options key=value[,key=value...] (repeatable; see `trellis list`)");
  cmd->add_flag("--json", args->json,
                "Print the decision as JSON: machine, request, nodes (hostlist and list), box, "
                "metrics, or the reason it cannot be placed now");
  cmd->callback([args, &status] { status = run_alloc(*args); });
}

}  // namespace trellis::cli
