// Workloads for the simulator: read from a file (SWF, or a JSON job list), generated, and adjusted
// (load scaling, placement mode and shaped requests).
//
// JSON job list (one object, "jobs" an array; times in seconds):
//   {"jobs": [{"id": 1, "submit": 0, "run": 600, "limit": 900, "nodes": 8},
//             {"id": 2, "submit": 10, "run": 60, "shape": "2x2x2", "mode": "mesh"}]}
// "limit" defaults to "run"; give "nodes" or "shape" ("rotate": false forbids rotating it);
// "mode" is torus | mesh | noncont (default torus). Errors name the file, the job's index and key.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/result.h"
#include "topology/machine.h"

namespace trellis {

struct Workload {
  std::vector<Job> jobs;  // sorted by submit time, then id
  int skipped = 0;        // records that could not be simulated (no run time or no size)
  std::string source;     // file name or generator description, for reports
  // Seconds since 1970 at time 0 of the trace (SWF header UnixStartTime), so reports can show
  // dates; absent for generated workloads and traces without the header.
  std::optional<long long> unix_start_time;
};

// By extension: .swf (procs_per_node divides processor counts) or .json.
Result<Workload> load_workload(const std::string& path, int procs_per_node = 1);
Result<Workload> parse_job_list_json(const std::string& text, const std::string& source);

// Scales the offered load by `factor` (> 0): inter-arrival times are divided by it, so 2 means
// twice as many jobs per hour. The first submit time is kept.
void scale_load(Workload& workload, double factor);

// Sets the placement mode of every request and, when `shaped` and the machine is a mesh/torus,
// gives count-only requests a cube-like box (sched/request_shaping.h).
void set_request_form(Workload& workload, const Machine& machine, PlacementMode mode, bool shaped);

// Sorts by submit time (then id), as the event loop expects.
void sort_by_submit(std::vector<Job>& jobs);

}  // namespace trellis
