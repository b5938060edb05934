// trellis alloc: place one job on a machine whose busy nodes are given, and show the decision.
//
//   trellis alloc --machine torus:8x8x8 --busy 'n[0-40]' --request 4x2x2
#include <iostream>

#include "alloc/registry.h"
#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "core/hostlist.h"

namespace trellis::cli {

namespace {

struct AllocArgs {
  std::string machine;
  std::string busy;
  std::string request;
  std::string allocator;
  std::string mode = "torus";
  bool no_rotate = false;
  std::vector<std::string> options;
};

int run_alloc(const AllocArgs& args) {
  auto machine = Machine::parse(args.machine);
  if (!machine) return usage_error(machine.error());
  auto busy = parse_hostlist(args.busy, machine->node_count());
  if (!busy) return usage_error(fail("--busy: " + busy.error().message));
  auto mode = parse_placement_mode(args.mode);
  if (!mode) return usage_error(fail("--mode: " + mode.error().message));
  auto request = parse_request(args.request, !args.no_rotate, *mode);
  if (!request) return usage_error(fail("--request: " + request.error().message));

  AllocatorOptions options;
  for (const auto& o : args.options)
    if (auto ok = options.add(o); !ok) return usage_error(ok.error());
  std::string name = args.allocator.empty() ? default_allocator_for(*machine) : args.allocator;
  auto allocator = AllocatorRegistry::builtin().create(name, *machine, options);
  if (!allocator) return usage_error(allocator.error());

  if (auto ok = (*allocator)->check(*request); !ok)
    return usage_error(fail("impossible request: " + ok.error().message));
  NodeSet free = busy->complement();
  auto placement = (*allocator)->allocate(free, *request);
  print_alloc_header(std::cout, *machine, name, *request, free);
  if (!placement)
    return usage_error(fail("cannot place the job now: " + placement.error().message));
  print_placement(std::cout, *machine, *placement, free - placement->nodes);
  return 0;
}

}  // namespace

void add_alloc_command(CLI::App& app, int& status) {
  auto args = std::make_shared<AllocArgs>();
  auto* cmd = app.add_subcommand(
      "alloc",
      "Place one job on a machine with some nodes busy, and print the decision: the box and its\n"
      "nodes, their average pairwise hops, and the largest free box left (mesh/torus).\n"
      "Example: trellis alloc --machine torus:8x8x8 --busy 'n[0-40]' --request 4x2x2");
  cmd->add_option("--machine,-m", args->machine,
                  "Machine spec: torus:16x8, mesh:27x16x24:wrap=z, fattree:4,4,4, flat:128")
      ->required();
  cmd->add_option("--request,-r", args->request, "A shape (4x2x2) or a node count (64)")
      ->required();
  cmd->add_option("--busy,-b", args->busy, "Busy nodes as a hostlist, e.g. 'n[0-40,77]'");
  cmd->add_option("--alloc,-a", args->allocator,
                  "Allocator name (see `trellis list`); default: contiguous on a mesh/torus, "
                  "first-available otherwise");
  cmd->add_option("--mode", args->mode, "torus (box may wrap), mesh (no wrap) or noncont")
      ->capture_default_str();
  cmd->add_flag("--no-rotate", args->no_rotate, "Do not permute the shape's axes");
  cmd->add_option("--opt,-o", args->options, "Allocator option key=value (repeatable)");
  cmd->callback([args, &status] { status = run_alloc(*args); });
}

}  // namespace trellis::cli
