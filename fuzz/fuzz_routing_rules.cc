// Routing rules (--routing "recommended,table=B", topology/routing.h): the channel-dependency
// check runs on a small torus with any rules that parse, and finds a cycle exactly when it says
// they are not acyclic.
#include "fuzz_support.h"
#include "topology/channel_dependency.h"
#include "topology/machine.h"
#include "topology/routing.h"

using namespace trellis;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Result<RoutingRules> rules = RoutingRules::parse(fuzz::as_text(data, size));
  if (!rules) return 0;
  static const Torus torus = *Machine::parse("torus:3x3x2")->torus();
  Result<DependencyCheck> check = check_channel_dependencies(torus, *rules);
  FUZZ_CHECK(check.ok(), rules->describe() + ": " + check.error().message);
  FUZZ_CHECK(check->acyclic == check->cycle.empty(), rules->describe());
  return 0;
}
