// TRES strings (core/tres.h), as GrpTRES= and the store's limits carry them: any text parses or
// gets an error naming the field; what parses has names of the known kinds and counts from 0 to
// 2^53 (or cleared), and its formatted text parses back to the same counts.
#include "core/tres.h"
#include "fuzz_support.h"

using namespace trellis;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(fuzz::as_text(data, size));
  Result<Tres> tres = parse_tres(text, "GrpTRES");
  if (!tres) {
    FUZZ_CHECK(tres.error().message.rfind("GrpTRES", 0) == 0,
               "an error that does not name the field: " + tres.error().message);
    return 0;
  }
  for (const auto& [name, count] : tres->counts) {
    FUZZ_CHECK(count == Tres::kCleared || (count >= 0 && count <= (int64_t{1} << 53)),
               name + ": a count out of range");
    FUZZ_CHECK(!name.empty(), "an empty name");
  }
  const std::string formatted = format_tres(*tres);
  Result<Tres> again = parse_tres(formatted, "GrpTRES");
  FUZZ_CHECK(again.ok(), "the formatted text does not parse: " + formatted);
  Tres kept;
  for (const auto& [name, count] : tres->counts)
    if (count != Tres::kCleared) kept.counts[name] = count;
  FUZZ_CHECK(again->counts == kept.counts,
             "the formatted text reads back differently: " + formatted);
  return 0;
}
