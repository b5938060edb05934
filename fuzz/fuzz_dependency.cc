// Dependency specs (core/dependency.h): a parsed dependency formats to a text that parses back to
// the same dependency, and evaluating it against any job states terminates with one answer
// (satisfied, waiting or never) that follows the rules for an all-ended, all-succeeded world.
#include "core/dependency.h"
#include "fuzz_support.h"

using namespace trellis;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::as_text(data, size);
  Result<Dependency> parsed = parse_dependency(text);
  if (!parsed) return 0;
  std::string formatted = format_dependency(*parsed);
  Result<Dependency> again = parse_dependency(formatted);
  FUZZ_CHECK(again.ok(), "'" + formatted + "' does not parse: " + again.error().message);
  FUZZ_CHECK(*again == *parsed, "'" + std::string(text) + "' -> '" + formatted + "'");
  // Every job named has completed successfully: afternotok is never satisfied, the rest are.
  auto done = [](const DependencyTarget&) {
    return std::vector<DependencyJob>{{true, true, true}};
  };
  DependencyState state = evaluate_dependency(*parsed, done, [] { return true; });
  bool has_notok = false, all_notok = !parsed->terms.empty();
  for (const DependencyTerm& term : parsed->terms) {
    bool notok = term.kind == DependencyKind::kAfterNotOk;
    has_notok = has_notok || notok;
    all_notok = all_notok && notok;
  }
  DependencyState expected = DependencyState::kSatisfied;
  if (parsed->any ? all_notok : has_notok) expected = DependencyState::kNeverSatisfied;
  FUZZ_CHECK(state == expected, "'" + formatted + "' evaluated wrongly with every job completed");
  return 0;
}
