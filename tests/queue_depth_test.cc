// Bounded passes (BatchOptions::max_job_test, Slurm's bf_max_job_test): a pass shows the policy
// only the head of the queue, so that its cost does not grow with the queue's depth. The jobs
// behind the head neither start nor hold reservations until they move up.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "alloc/registry.h"
#include "sched/batch_core.h"
#include "sched/registry.h"

namespace trellis {
namespace {

Job job_of(JobId id, int nodes, Seconds limit) {
  Job job;
  job.id = id;
  job.request = Request::count(nodes, PlacementMode::kNonContiguous);
  job.time_limit = limit;
  return job;
}

// A short one-node job that fits now, third in the queue behind two that wait for the whole
// machine: EASY backfills it, unless the pass looks at the first two jobs only.
TEST(QueueDepth, AJobBehindTheTestedHeadIsNotBackfilled) {
  Machine machine = *Machine::parse("flat:4");
  auto allocator = AllocatorRegistry::builtin().create("first-available", machine);
  auto policy = PolicyRegistry::builtin().create("easy", machine);
  ASSERT_TRUE(allocator && policy);
  for (size_t bound : {size_t{0}, size_t{2}, size_t{3}}) {
    SCOPED_TRACE("max_job_test=" + std::to_string(bound));
    BatchCore core(machine, **allocator, **policy, BatchOptions{.max_job_test = bound});
    ASSERT_TRUE(core.submit(job_of(1, 3, 100), 0));
    ASSERT_EQ(core.pass(0).decisions.size(), 1u);  // job 1 runs on 3 of the 4 nodes
    ASSERT_TRUE(core.submit(job_of(2, 4, 100), 1));
    ASSERT_TRUE(core.submit(job_of(3, 4, 100), 1));
    ASSERT_TRUE(core.submit(job_of(4, 1, 10), 1));
    const PassResult& decided = core.pass(1);
    bool backfilled = decided.decisions.size() == 1 && decided.decisions[0].job == 4;
    EXPECT_EQ(backfilled, bound != 2) << "job 4 is third in the queue";
    EXPECT_EQ(core.queue().size(), backfilled ? 2u : 3u);
  }
}

// Random streams through every batch policy: no job starts, and none holds a reservation, from a
// place in the queue at or past the bound; and a bound as deep as the queue ever gets changes
// nothing.
TEST(QueueDepth, NoDecisionReachesPastTheHeadUnderAnyPolicy) {
  Machine machine = *Machine::parse("flat:16");
  auto allocator = AllocatorRegistry::builtin().create("first-available", machine);
  ASSERT_TRUE(allocator);
  for (const char* name : {"fcfs", "easy", "conservative", "scan-up", "scan-down"}) {
    auto policy = PolicyRegistry::builtin().create(name, machine);
    ASSERT_TRUE(policy) << name;
    for (size_t bound : {size_t{1}, size_t{4}, size_t{1000}}) {
      SCOPED_TRACE(std::string(name) + " max_job_test=" + std::to_string(bound));
      BatchCore bounded(machine, **allocator, **policy, BatchOptions{.max_job_test = bound});
      BatchCore unbounded(machine, **allocator, **policy);
      std::mt19937 rng(7);
      std::uniform_int_distribution<int> size(1, 16), limit(1, 50);
      std::multimap<Seconds, JobId> ends_bounded, ends_unbounded;
      JobId next = 1;
      for (Seconds now = 0; now < 400; now += 1) {
        auto finish = [&](BatchCore& core, std::multimap<Seconds, JobId>& ends) {
          while (!ends.empty() && ends.begin()->first <= now) {
            ASSERT_TRUE(core.ended(ends.begin()->second, now));
            ends.erase(ends.begin());
          }
        };
        finish(bounded, ends_bounded);
        finish(unbounded, ends_unbounded);
        if (now < 300) {
          Job job = job_of(next++, size(rng), limit(rng));
          ASSERT_TRUE(bounded.submit(job, now));
          ASSERT_TRUE(unbounded.submit(job, now));
        }
        std::map<JobId, size_t> place;
        for (size_t i = 0; i < bounded.queue().size(); ++i) place[bounded.queue()[i]->id] = i;
        const PassResult& decided = bounded.pass(now);
        for (const CoreDecision& d : decided.decisions) {
          EXPECT_LT(place.at(d.job), bound) << "job " << d.job << " started from behind the head";
          ends_bounded.emplace(now + bounded.find(d.job)->time_limit, d.job);
        }
        for (const Reservation& r : bounded.reservations())
          EXPECT_LT(place.at(r.job), bound) << "job " << r.job << " reserved from behind the head";
        const PassResult& reference = unbounded.pass(now);
        for (const CoreDecision& d : reference.decisions)
          ends_unbounded.emplace(now + unbounded.find(d.job)->time_limit, d.job);
        if (bound == 1000) {  // deeper than the queue ever gets: the same decisions
          ASSERT_LE(place.size(), bound);
          ASSERT_EQ(decided.decisions.size(), reference.decisions.size());
          for (size_t i = 0; i < decided.decisions.size(); ++i)
            ASSERT_EQ(decided.decisions[i].job, reference.decisions[i].job);
        }
      }
    }
  }
}

}  // namespace
}  // namespace trellis
