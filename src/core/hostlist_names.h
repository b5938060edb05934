// Node names from a hostlist whose parts may carry any prefix, in the order written:
// "n[2-3,7],login" -> n2 n3 n7 login. For programs that need the names themselves (the job shell
// lays out a step's ranks over them) rather than a NodeSet over one machine.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace trellis {

// Errors name the column: an empty part, unbalanced brackets, a range that runs backwards, a
// number that is not one, more than `max_names` names.
Result<std::vector<std::string>> expand_hostlist_names(std::string_view hostlist, size_t max_names);

// The names as a short hostlist that expand_hostlist_names() reads back in the same order:
// consecutive names of one prefix with ascending numbers share brackets ("n[2-3,7],login").
std::string compress_hostlist_names(const std::vector<std::string>& names);

}  // namespace trellis
