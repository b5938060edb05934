// How listings name jobs, as Slurm's squeue and sacct do: an array task is ARRAY_TASK ("123_4"),
// and the pending tasks of an array are one row, ARRAY_[RANGES%LIMIT] ("123_[4-100%10]"); job
// ids typed by users take the same forms (resolve_job_ids).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/live_client.h"
#include "trellis/v1/trellis.pb.h"

namespace trellis::cli {

// "123", or "123_4" for task 4 of array 123.
std::string display_id(const v1::JobInfo& job);

struct JobRow {
  const v1::JobInfo* job = nullptr;  // the row's job (the first task of a compressed row)
  std::string id;                    // as squeue's %i shows it
};

// One row per job, in the order given; with `compress_pending_arrays`, the pending tasks of each
// array become one row at the place of its first.
std::vector<JobRow> job_rows(const std::vector<v1::JobInfo>& jobs, bool compress_pending_arrays);

// Job ids as users type them: "12", "12_3" (task 3 of array 12), "12_[1-3,7]", "12_*" or "12"
// (an array's id: every task). Returns the jobs' own ids, to be sent with exact_ids (an array's id
// among them names only its first task then); an error names a malformed one, or a task that does
// not exist.
Result<std::vector<int64_t>> resolve_job_ids(LiveClient& client,
                                             const std::vector<std::string>& texts);

}  // namespace trellis::cli
