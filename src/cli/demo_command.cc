// trellis demo: a short allocation walk-through on a default machine, for `make run`.
// It places a fixed sequence of jobs with one allocator and prints each decision, then frees
// every other job and places one more, so that a newcomer sees placement, freeing and reuse.
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

int run_demo(const DemoArgs& args) {
  auto machine = Machine::parse(args.machine);
  if (!machine) return usage_error(machine.error());
  std::string name = args.allocator.empty() ? default_allocator_for(*machine) : args.allocator;
  auto allocator = AllocatorRegistry::builtin().create(name, *machine);
  if (!allocator) return usage_error(allocator.error());

  const std::vector<std::string> requests = {"4x4x4", "2x2x8", "8x2x1", "4x4x2",
                                             "3x3x3", "5",     "4x2"};
  NodeSet free = NodeSet::all(machine->node_count());
  std::vector<NodeSet> placed;
  int job = 0;
  auto place = [&](const std::string& text) {
    auto request = parse_request(text, true, PlacementMode::kTorus);
    if (!request) return usage_error(request.error());
    std::cout << "\n== job " << ++job << ": " << text << "\n";
    print_alloc_header(std::cout, *machine, name, *request, free);
    auto placement = (*allocator)->allocate(free, *request);
    if (!placement) {
      std::cout << "not placed: " << placement.error().message << "\n";
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
  return place("4x4x4");
}

}  // namespace

void add_demo_command(CLI::App& app, int& status) {
  auto args = std::make_shared<DemoArgs>();
  auto* cmd = app.add_subcommand("demo", "Walk through a few allocations on a default machine");
  cmd->add_option("--machine,-m", args->machine, "Machine spec")->capture_default_str();
  cmd->add_option("--alloc,-a", args->allocator, "Allocator name (see `trellis list`)");
  cmd->callback([args, &status] { status = run_demo(*args); });
}

}  // namespace trellis::cli
