// Id ranges: a set of non-negative ids as compact text, "0-63,80,96-127", the way the store keeps
// and logs a job's nodes so that a job on 4,096 nodes costs a few bytes, not 4,096 numbers. The
// same text without brackets and prefix as a hostlist (core/hostlist.h), for ids.
//
//   std::string text = format_id_ranges({0, 1, 2, 3, 7});   // "0-3,7"
//   Result<std::vector<int>> ids = parse_id_ranges("0-3,7"); // {0, 1, 2, 3, 7}
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace trellis {

// `ids` sorted and merged into ranges; duplicates appear once. "" for no ids.
std::string format_id_ranges(std::vector<int64_t> ids);

// The ids of `text` in ascending order: comma-separated ids and ranges "a-b" (a <= b), any order,
// no overlaps; "" is none. At most `limit` ids in all, so that hostile text cannot make a huge
// list. An error names the piece that is not an id or a range.
Result<std::vector<int>> parse_id_ranges(std::string_view text, int64_t limit = 1 << 24);

}  // namespace trellis
