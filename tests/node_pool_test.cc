// NodePool (alloc/node_pool.h) and the placement on shared nodes (alloc/node_sharing.h, and the
// scheduling core that uses them): what a job gets inside a node sits close together, small jobs
// pack onto few nodes, and no core, byte or GPU is ever given twice: checked against a brute-force
// count of every live grant over random streams of takes and gives.
#include "alloc/node_pool.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "alloc/node_sharing.h"
#include "alloc/registry.h"
#include "sched/batch_core.h"
#include "sched/demand.h"
#include "sched/registry.h"
#include "topology/machine.h"

namespace trellis {
namespace {

NodeInventory type(std::string_view text) {
  return *parse_node_inventory(text);
}

NodeDemand cores(int n, int64_t memory_mb = 0, int gpus = 0) {
  NodeDemand d;
  d.cores = n;
  d.memory_mb = memory_mb;
  d.gpus = gpus;
  return d;
}

TEST(NodePoolTest, AJobsGpusAndCoresSitOnOneNumaNode) {
  // 2 NUMA nodes of 4 cores, 2 GPUs on each.
  NodePool pool({type("cores=8,numa=2,mem=16G,gpus=4")}, {}, 1);
  std::optional<NodeGrant> first = pool.choose(0, cores(2, 1024, 2));
  ASSERT_TRUE(first);
  EXPECT_EQ(first->gpus, (std::vector<int>{0, 1}));  // NUMA node 0's
  for (int core : first->cores) EXPECT_EQ(pool.inventory(0).numa_of(core), 0);
  ASSERT_TRUE(pool.take(*first));
  // The next two GPUs and their cores come from NUMA node 1 together.
  std::optional<NodeGrant> second = pool.choose(0, cores(2, 1024, 2));
  ASSERT_TRUE(second);
  EXPECT_EQ(second->gpus, (std::vector<int>{2, 3}));
  for (int core : second->cores) EXPECT_EQ(pool.inventory(0).numa_of(core), 1);
}

TEST(NodePoolTest, CoresGoWhereTheyFillANumaNodeBest) {
  NodePool pool({type("cores=8,numa=2,mem=16G")}, {}, 1);
  ASSERT_TRUE(pool.take({0, {4}, 0, {}, {}}));  // NUMA node 1 has 3 free, node 0 has 4
  std::optional<NodeGrant> three = pool.choose(0, cores(3));
  ASSERT_TRUE(three);
  EXPECT_EQ(three->cores, (std::vector<int>{5, 6, 7}));
  // Five cores fit on no NUMA node: four from the fullest, one from the nearest.
  std::optional<NodeGrant> five = pool.choose(0, cores(5));
  ASSERT_TRUE(five);
  EXPECT_EQ(five->cores.size(), 5u);
}

TEST(NodePoolTest, SmallJobsPackOntoFewNodesAndCpuJobsKeepOffFreeGpus) {
  NodePool pool({type("cores=4,mem=8G"), type("cores=4,mem=8G,gpus=2")}, {0, 0, 1}, 3);
  NodeSet all = NodeSet::all(3);
  std::optional<NodeId> first = pool.best_fit(all, cores(1));
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, 0);
  ASSERT_TRUE(pool.take(*pool.choose(0, cores(1))));
  // The partly used node is the tightest fit: the job goes there, node 1 stays whole.
  EXPECT_EQ(pool.best_fit(all, cores(2)), std::optional<NodeId>(0));
  ASSERT_TRUE(pool.take(*pool.choose(0, cores(3))));  // node 0 is full
  // Node 1 before the GPU node 2, though both are as tight.
  EXPECT_EQ(pool.best_fit(all, cores(4)), std::optional<NodeId>(1));
  EXPECT_EQ(pool.best_fit(all, cores(1, 0, 1)), std::optional<NodeId>(2));
  EXPECT_FALSE(pool.best_fit(all, cores(5)));
  EXPECT_FALSE(pool.idle_nodes().test(0));
  EXPECT_FALSE(pool.open_nodes().test(0));
  EXPECT_TRUE(pool.idle_nodes().test(1));
}

TEST(NodePoolTest, NothingIsGivenTwiceAndAWholeNodeNeedsAnIdleOne) {
  NodePool pool({type("cores=4,mem=8G,gpus=2,gres=license:1")}, {}, 1);
  NodeGrant a{0, {0, 1}, 4096, {0}, {{"license", 1}}};
  ASSERT_TRUE(pool.take(a));
  EXPECT_FALSE(pool.take({0, {1}, 0, {}, {}}));     // core 1 is a's
  EXPECT_FALSE(pool.take({0, {2}, 0, {0}, {}}));    // GPU 0 is a's
  EXPECT_FALSE(pool.take({0, {2}, 5000, {}, {}}));  // 4096 MiB left
  EXPECT_FALSE(pool.take({0, {2}, 0, {}, {{"license", 1}}}));
  EXPECT_FALSE(pool.take({0, {9}, 0, {}, {}}));  // no core 9
  EXPECT_EQ(pool.free_cores(0), 2);              // the refusals changed nothing
  NodeDemand whole;
  whole.whole = true;
  EXPECT_FALSE(pool.fits(0, whole));
  pool.give_back(a);
  EXPECT_TRUE(pool.fits(0, whole));
  EXPECT_EQ(*pool.choose(0, whole), pool.whole(0));
}

TEST(NodePoolTest, ExclusiveUserNodesTakeOnlyThatUsersJobs) {
  NodePool pool({type("cores=4,mem=8G")}, {}, 1);
  NodeDemand mine = cores(1);
  mine.same_user_only = true;
  mine.user = 7;
  ASSERT_TRUE(pool.take(*pool.choose(0, mine), 7, true));
  NodeDemand theirs = cores(1);
  theirs.user = 8;
  EXPECT_FALSE(pool.fits(0, theirs));
  NodeDemand also_mine = cores(1);
  also_mine.user = 7;
  EXPECT_TRUE(pool.fits(0, also_mine));
}

// The oracle: every live grant's cores, GPUs and memory added up by hand.
TEST(NodePoolTest, RandomStreamsNeverGiveACoreGpuOrByteTwice) {
  std::mt19937 random(7);
  for (int round = 0; round < 40; ++round) {
    const int nodes = 1 + static_cast<int>(random() % 6);
    std::vector<NodeInventory> types = {type("cores=6,numa=2,mem=12G,gpus=3"),
                                        type("cores=16,sockets=2,numa=4,mem=64G")};
    std::vector<uint16_t> type_of;
    for (int i = 0; i < nodes; ++i) type_of.push_back(static_cast<uint16_t>(random() % 2));
    NodePool pool(types, type_of, nodes);
    std::vector<NodeGrant> live;
    for (int step = 0; step < 300; ++step) {
      if (!live.empty() && random() % 3 == 0) {
        size_t at = random() % live.size();
        pool.give_back(live[at]);
        live.erase(live.begin() + static_cast<long>(at));
      } else {
        NodeDemand d = cores(1 + static_cast<int>(random() % 8),
                             static_cast<int64_t>(random() % 9000), static_cast<int>(random() % 3));
        d.whole = random() % 10 == 0;
        std::optional<NodeId> where = pool.best_fit(NodeSet::all(nodes), d);
        // The oracle's own answer to "does any node fit it".
        bool any = false;
        for (NodeId n = 0; n < nodes; ++n) {
          std::set<int> cores_used, gpus_used;
          int64_t memory_used = 0;
          bool held = false;
          for (const NodeGrant& g : live)
            if (g.node == n) {
              held = true;
              cores_used.insert(g.cores.begin(), g.cores.end());
              gpus_used.insert(g.gpus.begin(), g.gpus.end());
              memory_used += g.memory_mb;
            }
          const NodeInventory& inv = pool.inventory(n);
          // A whole node holds what it asks (the GPUs) only if the node has them.
          bool fits = d.whole ? !held && static_cast<int>(inv.gpus.size()) >= d.gpus
                              : inv.cores() - static_cast<int>(cores_used.size()) >= d.cores &&
                                    inv.memory_mb - memory_used >= d.memory_mb &&
                                    static_cast<int>(inv.gpus.size() - gpus_used.size()) >= d.gpus;
          EXPECT_EQ(pool.fits(n, d), fits) << "round " << round << " step " << step;
          any |= fits;
        }
        EXPECT_EQ(where.has_value(), any);
        if (!where) continue;
        std::optional<NodeGrant> grant = pool.choose(*where, d);
        ASSERT_TRUE(grant);
        ASSERT_TRUE(pool.take(*grant)) << encode_grant(*grant);
        live.push_back(*grant);
      }
      // No core or GPU in two live grants of one node.
      std::set<std::pair<NodeId, int>> seen_cores, seen_gpus;
      for (const NodeGrant& g : live) {
        for (int c : g.cores) EXPECT_TRUE(seen_cores.insert({g.node, c}).second);
        for (int x : g.gpus) EXPECT_TRUE(seen_gpus.insert({g.node, x}).second);
      }
    }
  }
}

TEST(NodeSharingTest, TwoOneCoreJobsShareANodeAndAWholeNodeJobWaitsForAnIdleOne) {
  Machine machine = *Machine::parse("flat:2");
  auto allocator = AllocatorRegistry::builtin().create("first-available", machine);
  ASSERT_TRUE(allocator) << allocator.error().message;
  auto policy = PolicyRegistry::builtin().create("easy", machine);
  ASSERT_TRUE(policy);
  BatchOptions options;
  options.node_types = {type("cores=2,mem=4G")};
  BatchCore core(machine, **allocator, **policy, options);
  auto job = [&](JobId id, int cores_per_task, bool whole) {
    Job j;
    j.id = id;
    j.time_limit = 100;
    j.request = Request::count(1);
    j.resources.cpus_per_task = cores_per_task;
    if (whole) j.resources.sharing = NodeSharing::kExclusive;
    EXPECT_TRUE(set_demand(j, {.node = options.node_types[0], .shared = true}));
    return j;
  };
  for (JobId id : {1, 2}) ASSERT_TRUE(core.submit(job(id, 1, false), 0));
  ASSERT_TRUE(core.submit(job(3, 0, true), 0));
  ASSERT_TRUE(core.submit(job(4, 0, true), 0));
  const PassResult& first = core.pass(0);
  // 1 and 2 pack onto node 0 (one pass: the core calls the policy again), 3 takes node 1 whole,
  // and 4 waits for a node with nothing on it.
  ASSERT_EQ(first.decisions.size(), 3u);
  std::map<JobId, const CoreDecision*> by_job;
  for (const CoreDecision& d : first.decisions) by_job[d.job] = &d;
  ASSERT_TRUE(by_job.count(1) && by_job.count(2) && by_job.count(3));
  EXPECT_EQ(by_job[1]->nodes.first(), 0);
  EXPECT_EQ(by_job[2]->nodes.first(), 0);
  EXPECT_NE(by_job[1]->grants[0].cores, by_job[2]->grants[0].cores);
  EXPECT_EQ(by_job[3]->nodes.first(), 1);
  EXPECT_EQ(by_job[3]->grants[0], core.pool()->whole(1));
  EXPECT_EQ(core.queue().size(), 1u);
  ASSERT_TRUE(core.ended(1, 10));
  EXPECT_TRUE(core.pass(10).decisions.empty());  // node 0 still runs job 2
  ASSERT_TRUE(core.ended(2, 20));
  const PassResult& last = core.pass(20);
  ASSERT_EQ(last.decisions.size(), 1u);
  EXPECT_EQ(last.decisions[0].job, 4);
  EXPECT_EQ(last.decisions[0].nodes.first(), 0);
}

TEST(NodeSharingTest, ASnapshotRestoresWhatEachNodeHasLeft) {
  Machine machine = *Machine::parse("flat:1");
  auto allocator = AllocatorRegistry::builtin().create("first-available", machine);
  auto policy = PolicyRegistry::builtin().create("fcfs", machine);
  BatchOptions options;
  options.node_types = {type("cores=4,mem=4G")};
  BatchCore core(machine, **allocator, **policy, options);
  Job j;
  j.id = 1;
  j.time_limit = 100;
  j.request = Request::count(1);
  j.resources.cpus_per_task = 3;
  ASSERT_TRUE(set_demand(j, {.node = options.node_types[0], .shared = true}));
  ASSERT_TRUE(core.submit(j, 0));
  ASSERT_EQ(core.pass(0).decisions.size(), 1u);
  BatchCore restored(machine, **allocator, **policy, options);
  ASSERT_TRUE(restored.restore(core.snapshot()));
  EXPECT_EQ(restored.pool()->free_cores(0), 1);
  Job big = j;
  big.id = 2;
  ASSERT_TRUE(restored.submit(big, 1));
  EXPECT_TRUE(restored.pass(1).decisions.empty());  // 3 cores asked, 1 left
}

}  // namespace
}  // namespace trellis
