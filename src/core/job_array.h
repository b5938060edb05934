// Job arrays as Slurm users write them: `--array 1-100%10`, `0,3,7`, `1-99:2`, `1-5,10%2`.
//
// An array is a set of task ids (each task a job of its own, with its own job id, all sharing the
// array's job id: the id of the first task submitted) and an optional limit on how many of its
// tasks may run at once (`%N`). Formatting gives the compact ranges Slurm's squeue shows for the
// pending tasks of an array, `[4-100%10]`-style without the brackets: "4-100".
//
//   Result<ArraySpec> a = parse_array_spec("1-99:2%5", 1001);  // 50 ids, at most 5 at once
//   format_task_ranges({1, 2, 3, 7}) == "1-3,7"
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace trellis {

struct ArraySpec {
  std::vector<int> tasks;  // ascending, each once
  int limit = 0;           // at most this many tasks at once; 0 = no limit
};

// Parses an array spec. Task ids are 0 .. max_tasks - 1 (Slurm's MaxArraySize gives the same
// bound); an error names the part of the text at fault and what was expected.
Result<ArraySpec> parse_array_spec(std::string_view text, int max_tasks);

// Ascending, distinct ids as comma-separated ranges: {1,2,3,7,9,11} -> "1-3,7,9,11".
std::string format_task_ranges(const std::vector<int>& tasks);

}  // namespace trellis
