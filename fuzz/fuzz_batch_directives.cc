// A batch script's #SBATCH/#TRELLIS directives (core/batch_directives.h) read with sbatch's option
// syntax (cli/submission.h is not in the library; the words alone are checked): no word holds a
// newline, and reading stops at the first command line (a script with a command first has no
// directives).
#include "core/batch_directives.h"
#include "fuzz_support.h"

using namespace trellis;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::as_text(data, size);
  Result<std::vector<std::string>> words = read_directives(text);
  if (!words) return 0;
  FUZZ_CHECK(words->size() <= kMaxDirectiveWords + 64, "too many words");
  for (const std::string& word : *words)
    FUZZ_CHECK(word.find('\n') == std::string::npos, "a word holds a newline: '" + word + "'");
  std::string command_first = "true\n" + std::string(text);
  Result<std::vector<std::string>> none = read_directives(command_first);
  FUZZ_CHECK(none && none->empty(), "directives read after a command line");
  return 0;
}
