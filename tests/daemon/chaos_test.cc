// A short chaos run (bench/chaos.h) on a local cluster: controllers and agents killed -9 and
// restarted, or paused, every couple of seconds under a stream of short jobs and cancels. The
// auditor must find nothing lost, run twice or double-allocated, and the cluster must recover
// from every fault. `trellis bench chaos --minutes 30` is the long run of the same code.
#include <gtest/gtest.h>

#include "../build_paths.h"
#include "bench/chaos.h"
#include "daemon_test_support.h"

namespace trellis {
namespace {

// Runs `options` (faults every 1.5 s, restarts within 1 s, pauses within 2 s) and checks the
// audit: nothing lost, run twice or double-allocated, at least `faults` faults, `completed` jobs,
// and a recovery from each fault.
void run_and_audit(bench::ChaosOptions options, int faults, int completed,
                   const std::string& what) {
  testing::TempDir dir;
  options.trellis_binary = TRELLIS_BINARY;
  options.dir = dir / "cluster";
  options.fault_every = 1.5;
  options.restart_within = 1;
  options.pause_within = 2;
  Result<bench::ChaosResult> r = bench::run_chaos(options);
  ASSERT_TRUE(r) << r.error().message;
  std::string problems;
  for (const std::string& p : r->problems) problems += "\n  " + p;
  for (const std::string& p : r->log.problems) problems += "\n  " + p;
  EXPECT_EQ(r->lost, 0) << problems;
  EXPECT_EQ(r->run_twice, 0) << problems;
  EXPECT_EQ(r->double_allocations(), 0) << problems;
  EXPECT_EQ(r->completed_unrun, 0) << problems;
  EXPECT_TRUE(r->log.clean()) << problems;
  EXPECT_GE(r->kills + r->pauses, faults);
  EXPECT_GT(r->final_states["CD"], completed);
  // The jobs cannot fail of themselves (echo, sleep, echo); a few may fail their launch under
  // the faults, not more (a binding the host cannot take failed most of them once).
  EXPECT_LE(r->final_states["F"], r->final_states["CD"] / 10) << problems;
  for (const bench::ChaosFault& f : r->faults)
    EXPECT_GE(f.recovered, 0) << f.action << " " << f.target << " at " << f.at
                              << " s: no recovery within two minutes";
  std::cout << r->kills << " kills, " << r->pauses << " pauses, " << r->acknowledged << " jobs "
            << what << ", worst recovery " << r->worst_recovery() << " s\n";
}

TEST(ChaosTest, KillsAndPausesUnderAJobStreamLoseNothingAndRunNothingTwice) {
  bench::ChaosOptions options;
  options.seconds = 25;
  options.seed = 3;
  run_and_audit(options, 4, 50, "acknowledged");
}

// The same on shared nodes: jobs of 1-2 cores and some memory beside each other on 4-core nodes;
// across the kills and pauses no core is given to two jobs, nor a node's memory beyond what it
// has (the log's grants), and no two jobs' processes ran on one CPU at once (their own
// TRELLIS_CPUS and clocks).
TEST(ChaosTest, OnSharedNodesNoCoreOrByteIsGivenTwice) {
  bench::ChaosOptions options;
  options.machine = "flat:8";
  options.agents = 2;
  options.shared_nodes = "cores=4,mem=1G";
  options.seconds = 20;
  options.seed = 5;
  run_and_audit(options, 3, 40, "acknowledged on shared nodes");
}

}  // namespace
}  // namespace trellis
