// TaskUsage: what one task's processes used on one node, as the kernel counted it. The agent's
// shepherd takes it from wait4() when the task's process ends: the process's own use and that of
// every descendant it waited for (a job shell's ranks, a script's commands), so a descendant left
// running, or one whose parent never waited for it, is not counted.
//
// Slurm's jobacct_gather samples each task's process tree every 30 s and sums the tree's RSS;
// this is exact for CPU time and, for memory, the peak of the largest single process (for a
// task of one process, the same number), at no cost while the job runs.
//
// A step's usage over its nodes (StepUsage) sums the CPU times and takes the largest peak.
#pragma once

#include <cstdint>

#include "core/node_set.h"

namespace trellis {

struct TaskUsage {
  int64_t user_usec = 0;    // CPU time in user mode
  int64_t system_usec = 0;  // CPU time in the kernel on its behalf
  int64_t max_rss_kb = 0;   // the largest peak resident set of one of its processes, in KiB
  bool operator==(const TaskUsage&) const = default;
};

// A step's (or the job command's) usage over the nodes that reported one.
struct StepUsage {
  int attempt = 0;
  int step = 0;  // 0: the job's own command (a batch job's script)
  int64_t user_usec = 0;
  int64_t system_usec = 0;
  int64_t max_rss_kb = 0;
  NodeId max_rss_node = -1;  // where the largest peak was (-1 when no node reported)
  int nodes = 0;             // how many nodes reported a usage

  // Adds one node's report.
  void add(const TaskUsage& usage, NodeId node) {
    user_usec += usage.user_usec;
    system_usec += usage.system_usec;
    if (nodes == 0 || usage.max_rss_kb > max_rss_kb) {
      max_rss_kb = usage.max_rss_kb;
      max_rss_node = node;
    }
    ++nodes;
  }
};

}  // namespace trellis
