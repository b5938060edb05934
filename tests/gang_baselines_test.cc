// The gang baselines (FCFS-BB, ScanUp, Slurm-like gang) on hand-made cases, and invariants every
// registered gang policy must keep on random workloads. (Their buddy system is alloc/buddy's
// BuddyAllocator, tested in buddy_test.cc.)
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "alloc/buddy/buddy_allocator.h"
#include "sched/gang/registry.h"

namespace trellis::gang {
namespace {

std::map<JobId, SlotJob> by_job(const std::vector<SlotJob>& slot) {
  std::map<JobId, SlotJob> out;
  for (const auto& r : slot) out[r.job] = r;
  return out;
}

TEST(FcfsBuddy, HeadOfQueueBlocksSmallerJobsBehindIt) {
  auto s = GangPolicyRegistry::builtin().create("fcfs-bb", 4);
  ASSERT_TRUE(s);
  ASSERT_TRUE((*s)->submit(1, 2));
  ASSERT_TRUE((*s)->submit(2, 4));  // must wait for job 1
  ASSERT_TRUE((*s)->submit(3, 1));  // would fit, but FCFS keeps it behind job 2
  auto slot = by_job((*s)->next_slot());
  EXPECT_EQ(slot.size(), 1u);
  EXPECT_TRUE(slot.count(1));
  (*s)->finish(1);
  slot = by_job((*s)->next_slot());
  EXPECT_EQ(slot.size(), 1u);
  EXPECT_EQ(slot[2].size, 4);
  (*s)->finish(2);
  slot = by_job((*s)->next_slot());
  EXPECT_EQ(slot.size(), 1u);
  EXPECT_TRUE(slot.count(3));
  EXPECT_FALSE((*s)->suspend(3));  // batch: an idle job keeps its processors
}

TEST(ScanUp, ServesOneSizeUntilEmptyThenScansUpAndWraps) {
  auto s = GangPolicyRegistry::builtin().create("scan-up-bb", 4);
  ASSERT_TRUE(s);
  ASSERT_TRUE((*s)->submit(1, 2));
  ASSERT_TRUE((*s)->submit(2, 4));
  ASSERT_TRUE((*s)->submit(3, 1));
  ASSERT_TRUE((*s)->submit(4, 2));
  // The scan starts at the smallest size: job 3, then the size-2 queue: job 1 fits, job 4 not.
  auto slot = by_job((*s)->next_slot());
  EXPECT_EQ(slot.size(), 2u);
  EXPECT_TRUE(slot.count(3) && slot.count(1));
  (*s)->finish(3);
  slot = by_job((*s)->next_slot());
  EXPECT_EQ(slot.size(), 2u);
  EXPECT_TRUE(slot.count(1) && slot.count(4));
  // The size-2 queue is empty, so size 4 is being served: a new size-1 job may not jump ahead
  // although a processor would be free once job 1 ends.
  ASSERT_TRUE((*s)->submit(5, 1));
  (*s)->finish(1);
  slot = by_job((*s)->next_slot());
  EXPECT_EQ(slot.size(), 1u);
  EXPECT_TRUE(slot.count(4));
  (*s)->finish(4);
  slot = by_job((*s)->next_slot());
  ASSERT_EQ(slot.size(), 1u);
  EXPECT_TRUE(slot.count(2));
  (*s)->finish(2);  // wraps around to size 1
  slot = by_job((*s)->next_slot());
  ASSERT_EQ(slot.size(), 1u);
  EXPECT_TRUE(slot.count(5));
}

TEST(SlurmGang, RotatesOverlappingJobsAndLimitsJobsPerNode) {
  GangPolicyOptions options;
  options.max_jobs_per_node = 2;
  auto s = GangPolicyRegistry::builtin().create("slurm-gang", 4, options);
  ASSERT_TRUE(s);
  ASSERT_TRUE((*s)->submit(1, 4));
  ASSERT_TRUE((*s)->submit(2, 4));
  ASSERT_TRUE((*s)->submit(3, 2));  // every node already holds K = 2 jobs: waits
  EXPECT_EQ((*s)->load().max, 2);
  std::vector<JobId> order;
  for (int slot = 0; slot < 4; ++slot) {
    const auto& row = (*s)->next_slot();
    ASSERT_EQ(row.size(), 1u);
    order.push_back(row[0].job);
  }
  EXPECT_EQ(order, (std::vector<JobId>{1, 2, 1, 2}));
  (*s)->finish(2);                         // job 3 is admitted onto the nodes job 2 left
  auto first = by_job((*s)->next_slot());  // 3 overlaps 1: the row alternates between them
  auto second = by_job((*s)->next_slot());
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_NE(first.begin()->first, second.begin()->first);
  EXPECT_TRUE(first.count(3) || second.count(3));
}

// Every policy, on random small workloads with jobs suspended and resumed (global idle) now and
// then: running jobs never share a processor, each runs on an aligned block of its rounded-up
// size, a suspended job never runs, and with jobs finishing after their work every job
// eventually completes.
TEST(GangPolicies, NeverOverlapAndFinishEveryJob) {
  std::mt19937 rng(17);
  for (const auto& info : GangPolicyRegistry::builtin().all()) {
    for (int trial = 0; trial < 40; ++trial) {
      const int processors = 1 << std::uniform_int_distribution<int>(1, 5)(rng);
      auto s = GangPolicyRegistry::builtin().create(info.name, processors);
      ASSERT_TRUE(s) << info.name;
      std::map<JobId, int> work_left;
      std::map<JobId, int> sizes;
      std::map<JobId, int> suspended;  // job -> slots until its input arrives
      JobId next_id = 1;
      int finished = 0;
      const int jobs = 30;
      for (int slot = 0; slot < 5000 && finished < jobs; ++slot) {
        if (next_id <= jobs && std::bernoulli_distribution(0.3)(rng)) {
          int size = std::uniform_int_distribution<int>(1, processors)(rng);
          ASSERT_TRUE((*s)->submit(next_id, size));
          work_left[next_id] = std::uniform_int_distribution<int>(1, 6)(rng);
          sizes[next_id] = size;
          ++next_id;
        }
        for (auto it = suspended.begin(); it != suspended.end();) {
          if (it->second-- > 0) {
            ++it;
            continue;
          }
          (*s)->resume(it->first);
          it = suspended.erase(it);
        }
        std::vector<char> used(processors, 0);
        std::vector<JobId> done;
        std::vector<JobId> ran;
        for (const SlotJob& r : (*s)->next_slot()) {
          ASSERT_FALSE(suspended.count(r.job))
              << info.name << ": suspended job " << r.job << " ran";
          ASSERT_EQ(r.size, buddy_block_size(sizes.at(r.job))) << info.name;
          ASSERT_EQ(r.first % r.size, 0) << info.name;
          for (int p = r.first; p < r.first + r.size; ++p) {
            ASSERT_FALSE(used[p]) << info.name << ": processor " << p << " in two partitions";
            used[p] = 1;
          }
          if (--work_left.at(r.job) == 0) {
            done.push_back(r.job);
          } else {
            ran.push_back(r.job);
          }
        }
        for (JobId j : done) {
          (*s)->finish(j);
          ++finished;
        }
        if (!ran.empty() && std::bernoulli_distribution(0.1)(rng)) {
          JobId j = ran[std::uniform_int_distribution<std::size_t>(0, ran.size() - 1)(rng)];
          if ((*s)->suspend(j)) suspended[j] = std::uniform_int_distribution<int>(0, 4)(rng);
        }
      }
      ASSERT_EQ(finished, jobs) << info.name << " trial " << trial;
      ASSERT_EQ((*s)->jobs_in_system(), 0) << info.name;
    }
  }
}

TEST(GangPolicyRegistry, NamesThePoliciesAndRejectsUnknownOnes) {
  const auto& r = GangPolicyRegistry::builtin();
  for (const char* name : {"dqt-ffapa", "dqt-maxtqlb", "dqt-mintqlb", "dqt-apa", "dqt-ff",
                           "fair-dqt-ffapa", "fcfs-bb", "scan-up-bb", "slurm-gang"})
    EXPECT_TRUE(r.has(name)) << name;
  auto bad = r.create("dqt-best", 8);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("known: dqt-ffapa"), std::string::npos);
  EXPECT_FALSE(r.create("fcfs-bb", 6));
  GangPolicyOptions quad;
  quad.fanout = 4;
  EXPECT_TRUE(r.create("dqt-apa", 64, quad));
  EXPECT_FALSE(r.create("dqt-apa", 32, quad));
}

}  // namespace
}  // namespace trellis::gang
