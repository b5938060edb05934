// Job dependencies as Slurm users write them (`--dependency`):
//
//   afterok:12:13       start after jobs 12 and 13 have completed successfully (exit 0)
//   afternotok:12       ... after job 12 has ended in any other way (failed, cancelled, timed out)
//   afterany:12         ... after job 12 has ended, however
//   after:12            ... after job 12 has started (or was cancelled before it started)
//   singleton           ... after every earlier job of the same user and name has ended
//   afterok:12,after:9  comma: every term must hold
//   afterok:12?after:9  question mark: any term may hold
//
// A job id may name one task of an array (`12_3`); the id of an array names all its tasks. A
// dependency is evaluated (evaluate_dependency) from the states of the jobs it names: it waits,
// holds, or can never hold (an `afterok` job that failed), which Slurm shows as the pending
// reasons `Dependency` and `DependencyNeverSatisfied`.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace trellis {

enum class DependencyKind { kAfter, kAfterAny, kAfterOk, kAfterNotOk, kSingleton };
std::string_view to_string(DependencyKind kind);  // "afterok"

struct DependencyTarget {
  int64_t job = 0;
  int task = -1;  // an array task of `job`'s array; -1 = `job` itself, or all of its array
  bool operator==(const DependencyTarget&) const = default;
};

struct DependencyTerm {
  DependencyKind kind = DependencyKind::kAfterAny;
  std::vector<DependencyTarget> targets;  // empty for singleton
  bool operator==(const DependencyTerm&) const = default;
};

struct Dependency {
  std::vector<DependencyTerm> terms;  // empty: no dependency
  bool any = false;                   // terms joined by '?' (any) rather than ',' (all)
  bool empty() const { return terms.empty(); }
  bool operator==(const Dependency&) const = default;
};

// Parses a dependency; "" is none. An error names the part at fault: an unknown type (Slurm's
// aftercorr, afterburstbuffer and time offsets are not supported), a bad job id, ',' mixed with
// '?'.
Result<Dependency> parse_dependency(std::string_view text);
// The canonical text ("afterok:12:13_4,singleton"), which parses back to the same dependency.
std::string format_dependency(const Dependency& dependency);

enum class DependencyState { kWaiting, kSatisfied, kNeverSatisfied };

// What evaluation needs to know of one job a target names.
struct DependencyJob {
  bool started = false;    // it has started once (or ended without starting: cancelled)
  bool ended = false;      // in a final state
  bool succeeded = false;  // ended COMPLETED
};

// Evaluates `dependency` with `jobs_of(target)` giving the jobs a target names (one job, or every
// task of an array) and `singleton_clear()` saying whether no earlier job of the same user and
// name is still active. A target that names no job can never be satisfied.
DependencyState evaluate_dependency(
    const Dependency& dependency,
    const std::function<std::vector<DependencyJob>(const DependencyTarget&)>& jobs_of,
    const std::function<bool()>& singleton_clear);

}  // namespace trellis
