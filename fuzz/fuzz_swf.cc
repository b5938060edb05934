// SWF traces (sim/swf.h), plain or gzip-compressed: any text parses or gets an error naming the
// line, and a parsed trace written back parses to the same records.
#include <sstream>

#include "fuzz_support.h"
#include "sim/swf.h"

using namespace trellis;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(fuzz::as_text(data, size));
  if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
    Result<std::string> plain = gunzip(text, "fuzz.swf.gz");
    if (!plain) return 0;
    text = std::move(*plain);
  }
  Result<SwfTrace> trace = parse_swf(text, "fuzz.swf");
  if (!trace) {
    FUZZ_CHECK(!trace.error().message.empty(), "an error with no message");
    return 0;
  }
  FUZZ_CHECK(trace->record_lines.size() == trace->records.size(), "a line per record");
  std::ostringstream written;
  write_swf(written, *trace);
  Result<SwfTrace> again = parse_swf(written.str(), "fuzz-written.swf");
  FUZZ_CHECK(again.ok(), "written back, it does not parse: " + again.error().message);
  FUZZ_CHECK(again->records.size() == trace->records.size(), written.str().substr(0, 400));
  return 0;
}
