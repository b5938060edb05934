// The agent's --nodes list ("n[0-63],gpu[0-3],login", daemon/agent.h): names are never empty or
// given twice, and there are never more than the agent's limit.
#include <set>

#include "daemon/agent.h"
#include "fuzz_support.h"

using namespace trellis;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::as_text(data, size);
  Result<std::vector<std::string>> names = parse_node_names(text);
  if (!names) return 0;
  FUZZ_CHECK(names->size() <= kMaxAgentNodes, std::to_string(names->size()) + " names");
  std::set<std::string> seen;
  for (const std::string& name : *names) {
    FUZZ_CHECK(!name.empty(), "an empty name from '" + std::string(text) + "'");
    FUZZ_CHECK(seen.insert(name).second, name + " twice from '" + std::string(text) + "'");
  }
  return 0;
}
