// The directives of a batch script, as sbatch reads them: lines that begin with `#SBATCH` (or
// `#TRELLIS`, with the same option names) followed by a space, up to the first line that is a
// command (neither blank nor a comment). Each directive's words are split as a shell would split
// them without expansion: spaces separate, '...' and "..." quote, a backslash escapes the next
// character, and a word that begins with '#' starts a comment that ends the line.
//
//   #!/bin/sh
//   #SBATCH -N 3 --time=5     # three nodes
//   #TRELLIS --shape 2x2x2
//   srun ./app                <- directives end here
//
//   Result<std::vector<std::string>> args = read_directives(text);  // {"-N","3","--time=5",...}
//
// The words are returned in script order; a command line's options are applied after them, so
// the command line wins.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace trellis {

// At most this many words are read from one script's directives.
inline constexpr size_t kMaxDirectiveWords = 4096;

// The option words of `script`'s directives; an error names the line ("line 4: unterminated
// quote").
Result<std::vector<std::string>> read_directives(std::string_view script);

}  // namespace trellis
