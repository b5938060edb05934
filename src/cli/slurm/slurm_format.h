// How Slurm's commands write values, for the Slurm front ends (squeue, sacct, scontrol, sinfo)
// and `trellis history`: state names, times and time lengths, exit codes, user and group names,
// and the column layouts of squeue (parse_squeue_format) and sacct (print_fields).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/job.h"
#include "core/resource_request.h"
#include "core/result.h"
#include "trellis/v1/trellis.pb.h"

namespace trellis::cli::slurm {

// PENDING RUNNING SUSPENDED COMPLETING COMPLETED FAILED CANCELLED TIMEOUT NODE_FAIL.
std::string state_name(v1::JobState state);
// PD R S CG CD F CA TO NF.
std::string state_code(v1::JobState state);
// Parses a state as squeue -t and sacct -s take it: a name or a code, any case. "all" is not a
// state (the callers handle it).
Result<v1::JobState> parse_state(std::string_view text);

// "2026-11-27T11:36:51" (local time), or "Unknown" for 0, as slurm_make_time_str.
std::string date(Seconds epoch);
// sacct's Elapsed and Timelimit: "00:00:05", "1-02:03:04".
std::string elapsed(Seconds seconds);
// sacct's TotalCPU, UserCPU and SystemCPU, from microseconds: "00:02.004" (minutes, seconds and
// milliseconds) under an hour, "01:02:03" from an hour, "1-02:03:04" from a day; "00:00:00" for 0.
std::string cpu_time(int64_t microseconds);
// sacct's MaxRSS from KiB, as Slurm 22.05 prints it without --units: "218348K" (recorded from
// real Slurm: a 200 MiB bytearray in python3); "0" for none.
std::string max_rss_text(int64_t kib);
// squeue's TIME and TIME_LIMIT: "0:05", "12:34", "1:02:03", "2-03:04:05".
std::string squeue_time(Seconds seconds);
// A time limit: "UNLIMITED" for none, else as `format`.
std::string time_limit(Seconds seconds, std::string (*format)(Seconds));
// "rc:signal".
std::string exit_code(const v1::JobInfo& job);
// The reason as Slurm names it: a pending job's (the first word of Trellis's, e.g. "Resources",
// "Dependency"), NonZeroExitCode or RaisedSignal:N(Name) for a failed one, TimeLimit, NodeDown,
// else None.
std::string reason(const v1::JobInfo& job);
// Seconds the job has run (end or now, less time frozen); 0 before it starts.
Seconds run_seconds(const v1::JobInfo& job, Seconds now);
std::string group_name(int gid);
Seconds now_seconds();
// sacct -S/-E: "2026-11-27", "2026-11-27T10:00[:00]", "10:00[:00]" (today), "now", "now-1hour"
// style offsets (now[-+]N[seconds|minutes|hours|days|weeks]), or epoch seconds.
Result<Seconds> parse_slurm_date(std::string_view text, Seconds now);

// What the job asked of each node besides the node (its spec's resources text, decoded; the
// defaults when it cannot be read).
ResourceRequest job_resources(const v1::JobInfo& job);
// squeue's CPUS (%C): the CPUs asked, its tasks times their CPUs, at least one per node.
int64_t job_cpus(const v1::JobInfo& job);
// squeue's MIN_MEMORY (%m): the memory asked per node ("2G"), or per CPU or GPU when asked so;
// "0" when none was asked.
std::string job_min_memory(const v1::JobInfo& job);
// squeue's TRES_PER_NODE (%b): "gres:gpu:a100:2,gres:license:1", "N/A" when none. Only what
// was asked per node (--gres, --gpus-per-node): a job of --gpus or --gpus-per-task shows "N/A"
// here, as Slurm 22.05 does, and its GPUs in job_tres_per_job or job_tres_per_task.
std::string job_tres_per_node(const v1::JobInfo& job);
// The job's QOS as Slurm names it: its own, "normal" for a job charged to an account (every
// association's default QOS), "(null)" on a site without accounts.
std::string job_qos(const v1::JobInfo& job);
// squeue -O tres-per-job and scontrol's TresPerJob (--gpus): "gres:gpu:1", "N/A" when none.
std::string job_tres_per_job(const v1::JobInfo& job);
// squeue -O tres-per-task and scontrol's TresPerTask (--gpus-per-task): "gres:gpu:1", "N/A".
std::string job_tres_per_task(const v1::JobInfo& job);
// The job's trackable resources as select/cons_tres counts them, for scontrol's TRES= and
// sacct's ReqTRES and AllocTRES: "cpu=2,mem=400M,node=1,billing=2,gres/gpu=2". `allocated`:
// what its grants hold (once it runs on shared nodes), else what it asked (job_cpus, its memory
// per node, CPU or GPU, its GPUs). "" when there is neither: a job on whole featureless nodes,
// which the callers describe as select/linear does.
std::string job_tres(const v1::JobInfo& job, bool allocated);

// A user name or uid, as -u takes it.
Result<int> parse_user(std::string_view text);

// --- sacct's and sinfo's fixed-width fields (Slurm's print_fields): a right-justified field
// of width W takes W characters and a space; a longer string ends in '+'. Parsable output
// separates fields with '|' (-p: also after the last; -P: not).
enum class Parsable { kNo, kTrailing, kNoEnding };
struct PrintField {
  std::string name;  // the header
  int width = 10;    // negative: left-justified
};
std::string print_header(const std::vector<PrintField>& fields, Parsable parsable);
std::string print_row(const std::vector<PrintField>& fields, const std::vector<std::string>& values,
                      Parsable parsable);

// --- squeue's and sinfo's format strings: "%.18i %.9P %8j %R"; each field a code with an
// optional width ('.' right-justifies), the text between fields printed as it is.
struct FormatItem {
  char code = 0;  // 0: literal text
  int width = 0;  // 0: as wide as the value
  bool right = false;
  std::string text;  // the literal
};
// An error names a code not in `codes`.
Result<std::vector<FormatItem>> parse_format(std::string_view format, std::string_view codes,
                                             std::string_view command);
// One value laid out as squeue does: cut to the width, padded to it.
std::string fit(const std::string& value, int width, bool right);

}  // namespace trellis::cli::slurm
