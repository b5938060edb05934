// Hostlist syntax for node sets, as Slurm users write it: `n[0-3,12]`, `n5`, `n[0-3],n[8-9]`.
//
// Node names are a prefix (default "n") followed by the node id. Formatting always produces the
// compact bracket form with sorted, merged ranges; parsing accepts any mix of single names,
// bracket ranges and commas, and rejects anything else with a message saying where.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/node_set.h"
#include "core/result.h"

namespace trellis {

// "n[0-3,12]" for {0,1,2,3,12}; "n5" for {5}; "" for the empty set.
std::string format_hostlist(const NodeSet& nodes, std::string_view prefix = "n");

// Any node names as one hostlist: names that are a prefix and a number without leading zeros are
// merged per prefix into ranges, others listed as they are, all in first-seen order of prefix:
// {"n0", "n1", "n2", "n7", "login"} gives "n[0-2,7],login".
std::string format_names(const std::vector<std::string>& names);

// Parses a hostlist into a set over `size` nodes. Ids must be < size. The empty string is the
// empty set.
Result<NodeSet> parse_hostlist(std::string_view text, int size, std::string_view prefix = "n");

}  // namespace trellis
