// Slurm-style hostlists ("n[0-3,8]", core/hostlist.h): the first byte picks the machine size, the
// rest is the text. A parsed list holds only nodes of the machine, and formats back to a list
// that parses to the same nodes.
#include "core/hostlist.h"
#include "fuzz_support.h"

using namespace trellis;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  int machine_size = 1 + data[0] * 16;  // 1 .. 4081
  std::string_view text = fuzz::as_text(data + 1, size - 1);
  Result<NodeSet> nodes = parse_hostlist(text, machine_size, "n");
  if (!nodes) return 0;
  for (NodeId id = nodes->next(0); id >= 0; id = nodes->next(id + 1))
    FUZZ_CHECK(id < machine_size, "node " + std::to_string(id) + " outside the machine");
  std::string formatted = format_hostlist(*nodes, "n");
  Result<NodeSet> again = parse_hostlist(formatted, machine_size, "n");
  FUZZ_CHECK(again.ok(), "'" + formatted + "' does not parse: " + again.error().message);
  FUZZ_CHECK(*again == *nodes, "'" + std::string(text) + "' -> '" + formatted + "'");
  return 0;
}
