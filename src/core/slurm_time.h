// Time lengths as Slurm's tools write and read them, so that scripts written for sbatch and
// squeue read Trellis the same way.
#pragma once

#include <string>
#include <string_view>

#include "core/job.h"
#include "core/result.h"

namespace trellis {

// sbatch --time: "minutes", "minutes:seconds", "hours:minutes:seconds", "days-hours",
// "days-hours:minutes", "days-hours:minutes:seconds". Returns seconds.
Result<Seconds> parse_slurm_time(std::string_view text);
// squeue's TIME column: "0:05", "12:34", "1:02:03", "2-03:04:05".
std::string format_slurm_time(Seconds seconds);
// sacct's Elapsed and sacctmgr's MaxWall: "00:00:05", "01:02:03", "2-03:04:05".
std::string format_elapsed(Seconds seconds);

}  // namespace trellis
