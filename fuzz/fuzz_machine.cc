// Machine specs ("torus:8x8x8", "fattree:4,4,4", "flat:64", topology/machine.h): a parsed machine
// has nodes, and its canonical spec parses to the same machine.
#include "fuzz_support.h"
#include "topology/machine.h"

using namespace trellis;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Result<Machine> machine = Machine::parse(fuzz::as_text(data, size));
  if (!machine) return 0;
  FUZZ_CHECK(machine->node_count() >= 1, machine->spec());
  Result<Machine> again = Machine::parse(machine->spec());
  FUZZ_CHECK(again.ok(), "canonical '" + machine->spec() + "' does not parse");
  FUZZ_CHECK(again->spec() == machine->spec(), machine->spec() + " -> " + again->spec());
  FUZZ_CHECK(again->node_count() == machine->node_count(), machine->spec());
  int last = machine->node_count() - 1;
  FUZZ_CHECK(machine->hop_distance(0, last) >= 0, machine->spec());
  FUZZ_CHECK(machine->hop_distance(last, last) == 0, machine->spec());
  return 0;
}
