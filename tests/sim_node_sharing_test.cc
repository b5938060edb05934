// The simulator on nodes with an inventory (sim/workload.h: set_node_resources): on a workload of
// small jobs, nodes shared among jobs do more work than whole nodes on the same machine (higher
// core utilization, shorter makespan), and what each job held adds up to what it asked.
#include <gtest/gtest.h>

#include "alloc/registry.h"
#include "sched/registry.h"
#include "sim/run_metrics.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace trellis {
namespace {

// 200 jobs of one core and 20 of four, all submitted at once, on 4 nodes of 4 cores.
Workload small_jobs() {
  Workload w;
  for (int i = 0; i < 220; ++i) {
    Job j;
    j.id = i + 1;
    j.submit = 0;
    j.run_time = 100 + 7 * (i % 5);
    j.time_limit = 200;
    j.request = Request::count(1);
    j.resources.cpus_per_task = i < 200 ? 1 : 4;
    j.resources.mem_per_node_mb = 256;
    w.jobs.push_back(j);
  }
  return w;
}

RunSummary run(bool share) {
  Machine machine = *Machine::parse("flat:4");
  NodeInventory node = *parse_node_inventory("cores=4,mem=4G");
  Workload w = small_jobs();
  set_node_resources(w, node, share);
  EXPECT_EQ(w.jobs.size(), 220u);
  auto allocator = AllocatorRegistry::builtin().create("first-available", machine);
  auto policy = PolicyRegistry::builtin().create("easy", machine);
  SimOptions options;
  options.node_types = {node};
  SimResult result = simulate(machine, **allocator, **policy, w.jobs, options);
  EXPECT_EQ(result.jobs.size(), 220u);
  for (const JobRecord& j : result.jobs) {
    // Whole nodes hold 4 cores for every job; shared ones what the job asked.
    EXPECT_EQ(j.cores, share ? j.asked_cores : 4) << j.id;
    EXPECT_EQ(j.memory_mb, share ? 256 : 4096) << j.id;
  }
  EXPECT_EQ(result.machine_cores, 16);
  return summarize(result);
}

TEST(SimNodeSharingTest, SharedNodesDoMoreWorkThanWholeNodesOnSmallJobs) {
  RunSummary whole = run(false), shared = run(true);
  ASSERT_TRUE(whole.core_utilization && shared.core_utilization);
  EXPECT_GT(*shared.core_utilization, *whole.core_utilization * 2);
  EXPECT_LT(shared.makespan, whole.makespan / 2);
  EXPECT_LT(shared.mean_wait, whole.mean_wait);
  // Whole nodes hold every core they take; shared nodes hold what is asked.
  EXPECT_NEAR(*whole.allocated_core_utilization, 1.0, 0.05);
  EXPECT_NEAR(*shared.allocated_core_utilization, *shared.core_utilization, 1e-9);
  ASSERT_TRUE(shared.shared_fragmentation && whole.shared_fragmentation);
  EXPECT_EQ(*whole.shared_fragmentation, 0);
}

}  // namespace
}  // namespace trellis
