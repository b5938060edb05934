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
    limits.set_book(limited_book(), kIds, {});
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

// A QOS with GrpTRES=node=5, MaxTRESPerUser=node=3, MaxJobsPerUser=2 and MaxWall=4: under
// every queue policy, random jobs of three users, some in it and some not: its jobs never hold
// more than 5 nodes together, one user's never more than 3 nodes or 2 jobs, a job over MaxWall
// never starts, and each limit is reached.
TEST(AccountLimits, NoPolicyLetsAQosPassItsLimits) {
  const Machine machine = *Machine::parse("flat:16");
  AccountBook book;
  ASSERT_TRUE(book.apply({.verb = AccountChange::kAdd,
                          .entity = AccountChange::kQos,
                          .names = {"capped"},
                          .set = {{"grptres", "node=5"},
                                  {"maxtresperuser", "node=3"},
                                  {"maxjobsperuser", "2"},
                                  {"maxwall", "4:00"}}}));  // 4 minutes
  const std::map<std::string, int> qos_ids = {{"normal", 0}, {"capped", 1}};
  for (const char* name : {"fcfs", "easy", "conservative"}) {
    auto allocator = AllocatorRegistry::builtin().create("first-available", machine, {});
    auto policy = PolicyRegistry::builtin().create(name, machine, {});
    ASSERT_TRUE(allocator && policy);
    AccountLimits limits;
    limits.set_book(book, {}, qos_ids);
    ASSERT_TRUE(limits.any());
    BatchCore core(machine, **allocator, **policy, BatchOptions{.limits = &limits});
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> size(1, 3), length(60, 300), who(0, 2), which(0, 2);
    std::map<JobId, Job> jobs;
    std::multimap<Seconds, JobId> ends;
    JobId next = 1;
    int most_group = 0, most_user_nodes = 0, most_user_jobs = 0, normal_ran = 0;
    std::map<std::string, int> reasons;
    for (Seconds now = 0; now < 3000; now += 10) {
      while (!ends.empty() && ends.begin()->first <= now) {
        ASSERT_TRUE(core.ended(ends.begin()->second, now));
        ends.erase(ends.begin());
      }
      for (int k = 0; k < 2 && now < 2000; ++k) {
        Job job;
        job.id = next++;
        job.submit = now;
        job.request.nodes = size(rng);
        job.time_limit = length(rng);  // some over MaxWall (240 s)
        job.user = 1000 + who(rng);
        job.qos = which(rng) == 0 ? 0 : 1;
        jobs[job.id] = job;
        ASSERT_TRUE(core.submit(job, now));
      }
      for (const CoreDecision& d : core.pass(now).decisions) {
        ASSERT_EQ(d.kind, CoreDecision::Kind::kStart);
        const Job& started = jobs.at(d.job);
        ends.emplace(now + started.time_limit, d.job);
        if (started.qos == 1) ASSERT_LE(started.time_limit, 240) << name;
        normal_ran += started.qos == 0;
      }
      int group = 0;
      std::map<int, int> user_nodes, user_jobs;
      for (const RunningJob& r : core.running()) {
        const Job& job = jobs.at(r.id);
        if (job.qos != 1) continue;
        group += r.nodes.count();
        user_nodes[job.user] += r.nodes.count();
        ++user_jobs[job.user];
      }
      ASSERT_LE(group, 5) << name << " at " << now;
      most_group = std::max(most_group, group);
      for (const auto& [user, n] : user_nodes) {
        ASSERT_LE(n, 3) << name << " user " << user << " at " << now;
        ASSERT_LE(user_jobs[user], 2) << name << " user " << user << " at " << now;
        most_user_nodes = std::max(most_user_nodes, n);
        most_user_jobs = std::max(most_user_jobs, user_jobs[user]);
      }
      for (const Job* queued : core.queue()) {
        std::string why = limits.held_back(*queued);
        if (queued->qos == 0) EXPECT_EQ(why, "") << name;  // normal has no limit
        if (!why.empty()) ++reasons[why.substr(0, why.find(' '))];
      }
    }
    EXPECT_EQ(most_group, 5) << name;
    EXPECT_EQ(most_user_nodes, 3) << name;
    EXPECT_EQ(most_user_jobs, 2) << name;
    EXPECT_GT(normal_ran, 50) << name;
    EXPECT_GT(reasons["QOSMaxWallDurationPerJobLimit"], 0) << name;
    EXPECT_GT(reasons["QOSGrpNodeLimit"] + reasons["QOSMaxNodePerUserLimit"] +
                  reasons["QOSMaxJobsPerUserLimit"],
              0)
        << name;
  }
}

// MaxWall of an account reaches its users' jobs; a user's own comes first, and the QOS's first
// of all (Slurm's precedence); a job within it is not held.
TEST(AccountLimits, MaxWallHoldsALongerJobWithTheLimitsOwner) {
  AccountBook book;
  auto apply = [&](AccountChange change) {
    Result<std::string> done = book.apply(change);
    ASSERT_TRUE(done) << describe(change) << ": " << done.error().message;
  };
  apply({.verb = AccountChange::kAdd,
         .entity = AccountChange::kAccount,
         .names = {"physics"},
         .set = {{"maxwall", "2:00:00"}}});
  apply({.verb = AccountChange::kAdd,
         .entity = AccountChange::kUser,
         .names = {"alice"},
         .set = {{"account", "physics"}}});
  apply({.verb = AccountChange::kAdd,
         .entity = AccountChange::kUser,
         .names = {"bob"},
         .set = {{"account", "physics"}, {"maxwall", "30"}}});  // 30 minutes
  apply({.verb = AccountChange::kAdd,
         .entity = AccountChange::kQos,
         .names = {"long"},
         .set = {{"maxwall", "1-00:00:00"}}});
  EXPECT_EQ(book.find_account("physics")->limits.max_wall, 7200);
  Result<AssocLimits> back = decode_limits(encode_limits(book.find_account("physics")->limits));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->max_wall, 7200);
  AccountLimits limits;
  limits.set_book(book, {{"alice/physics", 0}, {"bob/physics", 1}}, {{"normal", 0}, {"long", 1}});
  ASSERT_TRUE(limits.any());
  Job job;
  job.id = 1;
  job.request.nodes = 1;
  job.association = 0;
  job.qos = 0;
  job.time_limit = 3 * 3600;
  EXPECT_EQ(limits.held_back(job),
            "AssocMaxWallDurationPerJobLimit (the job's time limit 03:00:00 is longer than "
            "MaxWall=02:00:00 of account physics)");
  job.time_limit = 3600;
  EXPECT_EQ(limits.held_back(job), "");
  job.association = 1;  // bob's own 30 minutes
  EXPECT_EQ(limits.held_back(job),
            "AssocMaxWallDurationPerJobLimit (the job's time limit 01:00:00 is longer than "
            "MaxWall=00:30:00 of user bob in account physics)");
  job.qos = 1;  // the QOS's day comes first
  job.time_limit = 3 * 3600;
  EXPECT_EQ(limits.held_back(job), "");
  job.time_limit = 0;  // no limit at all is over any MaxWall
  EXPECT_EQ(limits.held_back(job),
            "QOSMaxWallDurationPerJobLimit (the job's time limit UNLIMITED is longer than "
            "MaxWall=1-00:00:00 of qos long)");
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
  limits.set_book(book, {{"alice/physics", 0}}, {{"normal", 0}});
  EXPECT_FALSE(limits.any());
  Job job;
  job.id = 1;
  job.association = 0;
  job.request.nodes = 1000;
  EXPECT_EQ(limits.held_back(job), "");
}

}  // namespace
}  // namespace trellis
