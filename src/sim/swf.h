// The Standard Workload Format (SWF v2.2) of the Parallel Workloads Archive: one job per line, 18
// whitespace-separated numeric fields, -1 for "missing"; header lines start with ';' and carry
// "Key: value" pairs (see shared/reference/peers-and-conventions.md, section 2.2).
//
// The reader is strict: a job line must have exactly 18 numbers; integer fields must be whole
// numbers; values below -1, values above the field's range (swf_field_max) and header keys the
// format does not define are errors, and so is a job number used twice. Every error names
// file:line and the field. The writer emits what the reader accepts, so a trace survives a round
// trip unchanged. Files ending in .gz (as the archive distributes them) are decompressed.
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

// The largest value the reader accepts in `field`: times up to kMaxSimulatedSeconds (beyond that a
// double no longer holds a second exactly and the run cannot be simulated), processor counts and
// ids up to 2^31 - 1 (they are ints downstream), job numbers and memory up to 2^53 (the largest
// whole numbers a double holds exactly), status up to 5.
double swf_field_max(SwfField field);
// About 31,700 years.
constexpr double kMaxSimulatedSeconds = 1e12;

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
  std::vector<int> record_lines;  // the line number of each record in its file (0 when built)
  // The header value of `key`, or "" when absent.
  std::string header_value(std::string_view key) const;
};

// Parses SWF text; `source` names it in errors ("trace.swf:12: field 4 (Run Time): ...").
Result<SwfTrace> parse_swf(std::string_view text, const std::string& source);
Result<SwfTrace> read_swf_file(const std::string& path);
void write_swf(std::ostream& out, const SwfTrace& trace);

// Reads a whole file as text, decompressing it when its name ends in .gz (any case).
Result<std::string> read_text_file(const std::string& path);
// The content of gzip data held in memory (one or more concatenated members); `source` names it
// in errors.
Result<std::string> gunzip(std::string_view compressed, const std::string& source);

// Jobs from a trace, for a machine whose nodes have `procs_per_node` processors each: nodes are
// the requested processors (the allocated ones when no request is logged) divided by
// procs_per_node, rounded up; the time limit is the requested time, or the run time when none is
// logged (a perfect estimate: counted in `estimated_from_run_time`). Records with no run time or
// no size cannot be simulated and are skipped (counted, with the first few line numbers).
struct SwfJobs {
  std::vector<Job> jobs;
  int skipped = 0;
  std::vector<int> skipped_lines;  // the first few, for the message
  int estimated_from_run_time = 0;
};
SwfJobs swf_to_jobs(const SwfTrace& trace, int procs_per_node = 1);
// The reverse, for writing generated workloads: one record per job (processors = nodes).
SwfTrace jobs_to_swf(const std::vector<Job>& jobs, SwfHeader header = {});

}  // namespace trellis
