// Accounts' limits inside the scheduling core (daemon/account_limits.h through BatchCore's
// StartLimits): under every queue policy and random jobs of two accounts, an account with
// GrpTRES=node=N never holds more than N nodes, an association with MaxJobs=M never runs more
// than M jobs, the other account's jobs use what is left, and a job held back says why.
#include "daemon/account_limits.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "alloc/registry.h"
#include "sched/batch_core.h"
#include "sched/registry.h"
#include "topology/machine.h"

namespace trellis {
namespace {

AccountBook limited_book() {
  AccountBook book;
  auto apply = [&](AccountChange change) {
    Result<std::string> done = book.apply(change);
    EXPECT_TRUE(done) << describe(change) << ": " << done.error().message;
  };
  apply({.verb = AccountChange::kAdd, .entity = AccountChange::kAccount, .names = {"science"}});
  apply({.verb = AccountChange::kAdd,
         .entity = AccountChange::kAccount,
         .names = {"physics"},
         .set = {{"parent", "science"}, {"grptres", "node=6"}}});
  apply({.verb = AccountChange::kAdd, .entity = AccountChange::kAccount, .names = {"chem"}});
  apply({.verb = AccountChange::kAdd,
         .entity = AccountChange::kUser,
         .names = {"alice"},
         .set = {{"account", "physics"}, {"maxjobs", "2"}}});
  apply({.verb = AccountChange::kAdd,
         .entity = AccountChange::kUser,
         .names = {"bob"},
         .set = {{"account", "physics"}}});
  apply({.verb = AccountChange::kAdd,
         .entity = AccountChange::kUser,
         .names = {"carol"},
         .set = {{"account", "chem"}}});
  // science, above physics, holds at most 8 nodes: physics' 6 are within it.
  apply({.verb = AccountChange::kModify,
         .entity = AccountChange::kAccount,
         .names = {"science"},
         .set = {{"grptres", "node=8"}}});
  return book;
}

const std::map<std::string, int> kIds = {
    {"alice/physics", 0}, {"bob/physics", 1}, {"carol/chem", 2}};

TEST(AccountLimits, NoPolicyLetsAnAccountPassItsNodesOrAUserItsJobs) {
  const Machine machine = *Machine::parse("flat:16");
  for (const char* name : {"fcfs", "easy", "conservative"}) {
    auto allocator = AllocatorRegistry::builtin().create("first-available", machine, {});
    auto policy = PolicyRegistry::builtin().create(name, machine, {});
    ASSERT_TRUE(allocator && policy);
    AccountLimits limits;
    limits.set_book(limited_book(), kIds);
    ASSERT_TRUE(limits.any());
    BatchCore core(machine, **allocator, **policy, BatchOptions{.limits = &limits});
    std::mt19937 rng(3);
    std::uniform_int_distribution<int> size(1, 4), length(1, 6), who(0, 2);
    std::map<JobId, int> association, nodes;
    std::multimap<Seconds, JobId> ends;
    JobId next = 1;
    int most_physics = 0, most_alice = 0, carol_ran = 0, held_seen = 0;
    for (Seconds now = 0; now < 300; now += 1) {
      while (!ends.empty() && ends.begin()->first <= now) {
        ASSERT_TRUE(core.ended(ends.begin()->second, now));
        ends.erase(ends.begin());
      }
      for (int k = 0; k < 2 && now < 200; ++k) {
        Job job;
        job.id = next++;
        job.submit = now;
        job.request.nodes = size(rng);
        job.time_limit = length(rng);
        job.association = who(rng);
        association[job.id] = job.association;
        ASSERT_TRUE(core.submit(job, now));
      }
      for (const CoreDecision& d : core.pass(now).decisions) {
        ASSERT_EQ(d.kind, CoreDecision::Kind::kStart);
        nodes[d.job] = d.nodes.count();
        ends.emplace(now + core.find(d.job)->time_limit, d.job);
        carol_ran += association[d.job] == 2;
      }
      int physics = 0, alice = 0;
      for (const RunningJob& r : core.running()) {
        physics += association[r.id] != 2 ? r.nodes.count() : 0;
        alice += association[r.id] == 0;
      }
      most_physics = std::max(most_physics, physics);
      most_alice = std::max(most_alice, alice);
      ASSERT_LE(physics, 6) << name << " at " << now;
      ASSERT_LE(alice, 2) << name << " at " << now;
      for (const Job* queued : core.queue()) {
        std::string why = limits.held_back(*queued);
        if (why.empty()) continue;
        ++held_seen;
        EXPECT_TRUE(why.rfind("AssocGrpNodeLimit (account physics holds ", 0) == 0 ||
                    why.rfind("AssocMaxJobsLimit (", 0) == 0)
            << why;
      }
    }
    // The limits were reached, not merely never approached, and the other account ran.
    EXPECT_EQ(most_physics, 6) << name;
    EXPECT_EQ(most_alice, 2) << name;
    EXPECT_GT(held_seen, 0) << name;
    EXPECT_GT(carol_ran, 20) << name;
    // A restore counts what runs again.
    CoreSnapshot snapshot = core.snapshot();
    ASSERT_TRUE(core.restore(snapshot));
    int physics = 0;
    for (const RunningJob& r : core.running())
      physics += association[r.id] != 2 ? r.nodes.count() : 0;
    Job probe;
    probe.id = 999999;
    probe.association = 1;
    probe.request.nodes = 6 - physics + 1;
    EXPECT_FALSE(limits.held_back(probe).empty()) << name;
    probe.request.nodes = 6 - physics;
    if (probe.request.nodes > 0) EXPECT_EQ(limits.held_back(probe), "") << name;
  }
}

TEST(AccountLimits, WithoutLimitsNothingIsHeldBack) {
  AccountBook book;
  ASSERT_TRUE(book.apply(
      {.verb = AccountChange::kAdd, .entity = AccountChange::kAccount, .names = {"physics"}}));
  ASSERT_TRUE(book.apply({.verb = AccountChange::kAdd,
                          .entity = AccountChange::kUser,
                          .names = {"alice"},
                          .set = {{"account", "physics"}}}));
  AccountLimits limits;
  limits.set_book(book, {{"alice/physics", 0}});
  EXPECT_FALSE(limits.any());
  Job job;
  job.id = 1;
  job.association = 0;
  job.request.nodes = 1000;
  EXPECT_EQ(limits.held_back(job), "");
}

}  // namespace
}  // namespace trellis
