// trellis demo: a short allocation walk-through on a default machine, for `make run`.
// It places a fixed sequence of jobs with one allocator and prints each decision, then frees
// every other job and places one more, so that a newcomer sees placement, freeing and reuse.
#include <algorithm>
#include <iostream>

#include "alloc/metrics.h"
#include "alloc/registry.h"
#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "core/hostlist.h"

namespace trellis::cli {

namespace {

struct DemoArgs {
  std::string machine = "torus:8x8x8";
  std::string allocator;
};

// Requests that mean something on the machine: boxes on a 3-D mesh/torus, node counts (an
// eighth, a sixteenth, ... of the machine) elsewhere. The first is placed again at the end.
std::vector<std::string> demo_requests(const Machine& machine) {
  if (machine.torus() && machine.torus()->dims() == 3)
    return {"4x4x4", "2x2x8", "8x2x1", "4x4x2", "3x3x3", "5", "4x2"};
  const int n = machine.node_count();
  std::vector<std::string> counts;
  for (int divisor : {8, 16, 32, 8, 16, 64, 128})
    counts.push_back(std::to_string(std::max(1, n / divisor)));
  return counts;
}

int run_demo(const DemoArgs& args) {
  auto machine = Machine::parse(args.machine);
  if (!machine) return usage_error(machine.error());
  std::string name = args.allocator.empty() ? default_allocator_for(*machine) : args.allocator;
  auto allocator = AllocatorRegistry::builtin().create(name, *machine);
  if (!allocator) return usage_error(allocator.error());

  const std::vector<std::string> requests = demo_requests(*machine);
  const PlacementMode mode =
      machine->torus() ? PlacementMode::kTorus : PlacementMode::kNonContiguous;
  NodeSet free = NodeSet::all(machine->node_count());
  std::vector<NodeSet> placed;
  int job = 0;
  auto place = [&](const std::string& text) {
    auto request = parse_request(text, true, mode);
    if (!request) return usage_error(request.error());
    std::cout << "\n== job " << ++job << ": " << text << "\n";
    print_alloc_header(std::cout, *machine, name, *request, free);
    auto placement = (*allocator)->allocate(free, *request);
    if (!placement) {
      std::cout << "not placed: " << why_not_placed(*machine, *request, free, placement.error())
                << "\n";
      placed.emplace_back(free.size());
      return 0;
    }
    free -= placement->nodes;
    print_placement(std::cout, *machine, *placement, free);
    placed.push_back(placement->nodes);
    return 0;
  };
  std::cout << "Trellis allocation demo on " << machine->describe() << "\n";
  for (const auto& r : requests)
    if (int status = place(r)) return status;
  std::cout << "\n== freeing jobs 2, 4 and 6\n";
  for (int j : {1, 3, 5}) free |= placed[j];
  std::cout << "free now: " << free.count() << " nodes";
  if (const Torus* torus = machine->torus())
    if (auto largest = largest_free_box(*torus, free))
      std::cout << ", largest free box " << largest->describe(*torus) << " (" << largest->volume()
                << " nodes)";
  std::cout << "\n";
  return place(requests.front());
}

}  // namespace

void add_demo_command(CLI::App& app, int& status) {
  auto args = std::make_shared<DemoArgs>();
  auto* cmd = app.add_subcommand(
      "demo",
      "Walk through a few allocations: place seven jobs, free three, place one more.\n"
      "Boxes on a 3-D mesh/torus, node counts on other machines.");
  cmd->add_option("--machine,-m", args->machine,
                  "Machine spec: torus:8x8x8, mesh:8x8x8:wrap=x,y, fattree:4,4,4, flat:128")
      ->capture_default_str();
  cmd->add_option("--alloc,-a", args->allocator,
                  "Allocator name (see `trellis list`); default: contiguous on a mesh/torus, "
                  "fattree-units on a fat tree, first-available on a flat machine");
  cmd->callback([args, &status] { status = run_demo(*args); });
}

}  // namespace trellis::cli
