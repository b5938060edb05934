// Workloads for the simulator: read from a file (SWF, or a JSON job list), generated, and adjusted
// (load scaling, placement mode and shaped requests).
//
// JSON job list (one object, "jobs" an array; times in seconds):
//   {"jobs": [{"id": 1, "submit": 0, "run": 600, "limit": 900, "nodes": 8},
//             {"id": 2, "submit": 10, "run": 60, "shape": "2x2x2", "mode": "mesh"}]}
// Keys of a job: "run" (required), "nodes" or "shape" (one of them), "id" (default: position,
// from 1; unique), "submit" (default 0), "limit" (default "run": a perfect estimate), "rotate"
// (default true; false forbids rotating the shape), "mode" (torus | mesh | noncont, default
// torus), "user" (whole number), "name" (text). Other keys are errors (a typo must not be
// ignored). Times are at most kMaxSimulatedSeconds, counts at most 2^31 - 1, ids 0 .. 2^53.
// Errors name the file, the job's index and the key.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/job.h"
#include "core/node_inventory.h"
#include "core/result.h"
#include "sim/swf.h"
#include "topology/machine.h"

namespace trellis {

struct Workload {
  std::vector<Job> jobs;  // sorted by submit time, then id
  int skipped = 0;        // records that could not be simulated (no run time or no size)
  std::string source;     // file name or generator description, for reports
  // Things the user should know about how the input was read (records skipped and where, jobs
  // given their run time as estimate), one sentence each.
  std::vector<std::string> notes;
  // From an SWF trace: its header and each job's record, so the workload is written back (after
  // --load, --max-jobs) with every field the trace had.
  SwfHeader swf_header;
  std::unordered_map<JobId, SwfRecord> swf_records;
  // Jobs whose estimate (time limit) is their run time because the input gave none.
  int perfect_estimates = 0;
  // The trace's MaxProcs header (else MaxNodes), when it has one.
  std::optional<long long> max_procs;
  // Seconds since 1970 at time 0 of the trace (SWF header UnixStartTime), so reports can show
  // dates; absent for generated workloads and traces without the header.
  std::optional<long long> unix_start_time;
};

// By extension, in any case, optionally gzip-compressed: .swf / .swf.gz (procs_per_node divides
// processor counts) or .json / .json.gz. A file with no job that can be simulated is an error.
Result<Workload> load_workload(const std::string& path, int procs_per_node = 1);
Result<Workload> parse_job_list_json(const std::string& text, const std::string& source);

// Scales the offered load by `factor` (> 0): inter-arrival times are divided by it, so 2 means
// twice as many jobs per hour. The first submit time is kept. When every submit time was a whole
// number (as SWF requires), the scaled ones are rounded to whole seconds, so the workload written
// by workload_to_swf is exactly the one simulated.
void scale_load(Workload& workload, double factor);

// The workload as an SWF trace: jobs read from a trace keep their record (requested time,
// queue, partition, ...) with the submit time as simulated; other jobs get a record of their own
// (processors = nodes x procs_per_node). The header keeps the trace's (UnixStartTime, MaxProcs,
// ...) and notes where the file came from.
SwfTrace workload_to_swf(const Workload& workload, const Machine& machine, int procs_per_node);

// On nodes of type `node` (every node of the machine): what each job's nodes give it. A trace's
// job of P processors, loaded with procs_per_node = node.cores() (so it holds ceil(P / cores)
// nodes), takes with `share` as many cores per node as it needs there (P / nodes, rounded up)
// and the memory it asked (SWF requested memory, KiB per processor; else the node's memory per
// core), sharing its nodes with other jobs; without `share`, whole nodes. A JSON job's "cores",
// "mem" (MiB) and "gpus" are per node. A job no node can hold is dropped with a note (as the
// simulator rejects what never fits); the count goes to skipped.
void set_node_resources(Workload& workload, const NodeInventory& node, bool share);

// Sets the placement mode of every request. On a mesh/torus in torus or mesh mode it also, when
// `pad_counts`, rounds each count up to the smallest box volume (pad_to_box: for allocators that
// place only boxes) and, when `shaped`, gives count-only requests a cube-like box
// (sched/request_shaping.h).
void set_request_form(Workload& workload, const Machine& machine, PlacementMode mode, bool shaped,
                      bool pad_counts = false);

// Sorts by submit time (then id), as the event loop expects.
void sort_by_submit(std::vector<Job>& jobs);

}  // namespace trellis
