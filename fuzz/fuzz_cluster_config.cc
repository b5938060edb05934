// The cluster's TOML config (daemon/config.h): any text parses or gets an error, and a parsed
// config written back by format_cluster_config() parses to a config that writes the same text.
#include "daemon/config.h"
#include "fuzz_support.h"

using namespace trellis;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Result<ClusterConfig> config = parse_cluster_config(fuzz::as_text(data, size), "fuzz.toml");
  if (!config) {
    FUZZ_CHECK(!config.error().message.empty(), "an error with no message");
    return 0;
  }
  std::string written = format_cluster_config(*config);
  Result<ClusterConfig> again = parse_cluster_config(written, "fuzz-written.toml");
  FUZZ_CHECK(again.ok(),
             "written back, it does not parse: " + again.error().message + "\n" + written);
  FUZZ_CHECK(format_cluster_config(*again) == written, written);
  return 0;
}
