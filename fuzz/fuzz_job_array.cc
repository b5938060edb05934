// Job array specs (core/job_array.h): a parsed spec has ascending, distinct ids below the bound,
// and its ranges format back to a spec that parses to the same ids.
#include "core/job_array.h"
#include "fuzz_support.h"

using namespace trellis;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  int bound = 1 + data[0] * 8;  // 1 .. 2041
  std::string_view text = fuzz::as_text(data + 1, size - 1);
  Result<ArraySpec> spec = parse_array_spec(text, bound);
  if (!spec) return 0;
  FUZZ_CHECK(!spec->tasks.empty(), "an array of no tasks from '" + std::string(text) + "'");
  for (size_t i = 0; i < spec->tasks.size(); ++i) {
    FUZZ_CHECK(spec->tasks[i] >= 0 && spec->tasks[i] < bound, "task outside the bound");
    FUZZ_CHECK(i == 0 || spec->tasks[i - 1] < spec->tasks[i], "tasks not ascending");
  }
  std::string ranges = format_task_ranges(spec->tasks);
  Result<ArraySpec> again = parse_array_spec(ranges, bound);
  FUZZ_CHECK(again.ok(), "'" + ranges + "' does not parse");
  FUZZ_CHECK(again->tasks == spec->tasks, "'" + std::string(text) + "' -> '" + ranges + "'");
  return 0;
}
