// The live parts of `trellis bench scale` (issue 33): one full-machine job on a local cluster,
// from its submission to every task started and to its end, with the controller's memory, the
// store's bytes and the processes the launch forked, beside a reference measured in the same run.
//   (a) real processes: `true` on every node of torus:32x32x16 (16,384 nodes, 16 agents), beside
//       this host's own fork/exec of as many processes of /bin/true (one thread, reaping as it
//       goes): the ratio of the two, and the processes a launch forks per node (from /proc/stat's
//       fork counter: the shepherds' and the tasks', with whatever else the host forked then).
//   (b) emulated tasks (`cluster up --emulate`): full-machine jobs on 16,384 and 110,592 nodes
//       (torus:48x48x48, 27 agents of 4,096 nodes), each beside the first machine's figures.
// "All started" is when the last agent logged "launch job J attempt 1: N of N tasks started"
// (its log's clock is this host's). The cluster of each row is brought up and down by the bench
// (`trellis cluster up/down`, in a fresh directory).
//
//   std::vector<LaunchScaleRow> rows = {{.machine = "torus:32x32x16", .agents = 16}};
//   return run_launch_scale(rows, /*fork_reference=*/true, std::cout);
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace trellis::cli {

struct LaunchScaleRow {
  std::string machine;  // a machine spec: every node of it gets one task
  int agents = 16;
  bool emulate = false;
  std::string command = "true";
};

// Runs each row's cluster and job in turn and prints one table; with `fork_reference`, first
// measures this host's fork/exec of as many processes as the first row has nodes, and prints each
// row's time to all started against it. Returns the exit status (1 when a cluster or a job
// failed, with the reason on `out`).
int run_launch_scale(const std::vector<LaunchScaleRow>& rows, bool fork_reference,
                     std::ostream& out);

}  // namespace trellis::cli
