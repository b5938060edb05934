// trellis topo: questions about a machine's topology.
//
//   trellis topo check-routing --machine mesh:27x16x24:wrap=z [--rules recommended]
#include <iostream>

#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "topology/channel_dependency.h"

namespace trellis::cli {

namespace {

struct CheckRoutingArgs {
  std::string machine;
  std::string rules = "recommended";
};

int run_check_routing(const CheckRoutingArgs& args) {
  auto machine = Machine::parse(args.machine);
  if (!machine) return usage_error(fail("--machine: " + machine.error().message));
  if (!machine->torus())
    return usage_error(
        fail("--machine: routing rules apply to a mesh or torus, not " + machine->describe()));
  auto rules = RoutingRules::parse(args.rules);
  if (!rules) return usage_error(fail("--rules: " + rules.error().message));
  auto check = check_channel_dependencies(*machine->torus(), *rules);
  if (!check) return usage_error(fail("--machine: " + check.error().message));
  const Torus& t = *machine->torus();
  std::cout << "machine:      " << machine->spec() << " (" << machine->describe() << ")\n"
            << "rules:        " << rules->describe() << "\n"
            << "walk states:  " << check->states << ", channels used " << check->channels
            << ", dependencies " << check->dependencies << "\n";
  if (check->acyclic) {
    std::cout << "verdict:      acyclic: no walk the rules allow can deadlock\n";
    return 0;
  }
  std::cout << "verdict:      CYCLE of " << check->cycle.size()
            << " channels: the rules can deadlock\n";
  for (const Channel& c : check->cycle) std::cout << "  " << format_channel(t, c) << "\n";
  std::cout << "  -> back to " << format_channel(t, check->cycle.front()) << "\n";
  return 1;
}

}  // namespace

void add_topo_command(CLI::App& app, int& status) {
  auto* topo = app.add_subcommand("topo", "Questions about a machine's topology");
  topo->require_subcommand(1);
  auto args = std::make_shared<CheckRoutingArgs>();
  auto* check = topo->add_subcommand(
      "check-routing",
      "Check routing rules for deadlock: build the channel dependency graph of every walk the\n"
      "rules allow (routing phases and logical channels) and look for a cycle.\n"
      "Exit status 0 when acyclic, 1 when a cycle is found (it is printed), 2 on bad input.\n"
      "Example: trellis topo check-routing --machine mesh:27x16x24:wrap=z --rules literal");
  check
      ->add_option("--machine,-m", args->machine,
                   "Mesh/torus of 1 to 3 axes, e.g. mesh:4x4x6:wrap=z")
      ->required();
  check
      ->add_option("--rules", args->rules,
                   "A preset (recommended, literal, prior-art, dor) and/or key=value overrides:\n"
                   "table=A|B|C|D|dor  phase=earliest|latest  dateline=through|boundary|link|none\n"
                   "channels=keep|free, e.g. 'literal,dateline=link'")
      ->capture_default_str();
  check->callback([args, &status] { status = run_check_routing(*args); });
}

}  // namespace trellis::cli
