// The Standard Workload Format (SWF v2.2) of the Parallel Workloads Archive: one job per line, 18
// whitespace-separated numeric fields, -1 for "missing"; header lines start with ';' and carry
// "Key: value" pairs (see shared/reference/peers-and-conventions.md, section 2.2).
//
// The reader is strict: a job line must have exactly 18 numbers; integer fields must be whole
// numbers; values below -1 and header keys the format does not define are errors. Every error
// names file:line and the field. The writer emits what the reader accepts, so a trace survives a
// round trip unchanged.
#pragma once

#include <array>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/job.h"
#include "core/result.h"

namespace trellis {

enum class SwfField {
  kJobNumber,
  kSubmitTime,
  kWaitTime,
  kRunTime,
  kAllocatedProcessors,
  kAverageCpuTime,
  kUsedMemory,
  kRequestedProcessors,
  kRequestedTime,
  kRequestedMemory,
  kStatus,
  kUserId,
  kGroupId,
  kExecutable,
  kQueue,
  kPartition,
  kPrecedingJob,
  kThinkTime,
};
constexpr int kSwfFieldCount = 18;
// "Run Time", as the format's documentation names the field.
std::string_view swf_field_name(SwfField field);

// One job line. Times and CPU time may be fractional; the others are whole numbers. -1 = missing.
struct SwfRecord {
  std::array<double, kSwfFieldCount> fields{};
  double operator[](SwfField f) const { return fields[static_cast<int>(f)]; }
  double& operator[](SwfField f) { return fields[static_cast<int>(f)]; }
  friend bool operator==(const SwfRecord&, const SwfRecord&) = default;
};

// Header lines in file order: ("MaxNodes", "128") for "; MaxNodes: 128", ("", text) for a free
// comment line.
using SwfHeader = std::vector<std::pair<std::string, std::string>>;

struct SwfTrace {
  SwfHeader header;
  std::vector<SwfRecord> records;
  // The header value of `key`, or "" when absent.
  std::string header_value(std::string_view key) const;
};

// Parses SWF text; `source` names it in errors ("trace.swf:12: field 4 (Run Time): ...").
Result<SwfTrace> parse_swf(std::string_view text, const std::string& source);
Result<SwfTrace> read_swf_file(const std::string& path);
void write_swf(std::ostream& out, const SwfTrace& trace);

// Jobs from a trace, for a machine whose nodes have `procs_per_node` processors each: nodes are
// the requested processors (the allocated ones when no request is logged) divided by
// procs_per_node, rounded up; the time limit is the requested time, or the run time when none is
// logged. Records with no run time or no size cannot be simulated and are skipped (counted).
struct SwfJobs {
  std::vector<Job> jobs;
  int skipped = 0;
};
SwfJobs swf_to_jobs(const SwfTrace& trace, int procs_per_node = 1);
// The reverse, for writing generated workloads: one record per job (processors = nodes).
SwfTrace jobs_to_swf(const std::vector<Job>& jobs, SwfHeader header = {});

}  // namespace trellis
