// Hand-computed schedules for FCFS, EASY and conservative backfilling (the expected starts are
// worked out in the comments), including a head job that must be reserved by shape.
#include <gtest/gtest.h>

#include <map>

#include "alloc/baseline.h"
#include "core/hostlist.h"
#include "sched/registry.h"
#include "sim/simulator.h"
#include "sim_test_support.h"

namespace trellis {
namespace {

using testing::ConsecutiveAllocator;
using testing::make_job;

struct Outcome {
  Seconds start;
  std::string nodes;
};

std::map<JobId, Outcome> run(const std::string& machine_spec, const Allocator& allocator,
                             const std::string& policy_name, const std::vector<Job>& jobs) {
  Machine machine = *Machine::parse(machine_spec);
  auto policy = PolicyRegistry::builtin().create(policy_name, machine);
  EXPECT_TRUE(policy.ok());
  SimResult result = simulate(machine, allocator, **policy, jobs);
  EXPECT_TRUE(result.rejected.empty());
  std::map<JobId, Outcome> out;
  for (const JobRecord& j : result.jobs) {
    NodeSet nodes(machine.node_count());
    for (auto [a, b] : j.runs) nodes.set_range(a, b + 1);
    out[j.id] = {j.start, format_hostlist(nodes)};
  }
  return out;
}

// flat:4, first-available. J1 takes n[0-1] until 10. J2 (3 nodes) waits: its reservation is 10 on
// n[0-2]. J3 (4 nodes, 5 s) can run only when J2 ends at 15. J4 (1 node, 20 s) fits now on n3.
//   EASY protects only the head (J2): J4 ends at 23 > 10 but stays off n[0-2], so it starts at 3;
//     J3 then waits for J4: starts at 23.
//   Conservative also protects J3 (reserved at 15 on every node): J4 would overlap it, so J4's
//     earliest slot is after J3, at 20.
//   FCFS: strictly in order: J2 at 10, J3 at 15, J4 at 20.
std::vector<Job> easy_vs_conservative() {
  return {make_job(1, 0, 2, 10), make_job(2, 1, 3, 5), make_job(3, 2, 4, 5), make_job(4, 3, 1, 20)};
}

TEST(HandSchedule, EasyBackfillsPastTheSecondJob) {
  Machine m = *Machine::parse("flat:4");
  FirstAvailableAllocator alloc(m);
  auto s = run("flat:4", alloc, "easy", easy_vs_conservative());
  EXPECT_EQ(s[1].start, 0);
  EXPECT_EQ(s[4].start, 3);
  EXPECT_EQ(s[4].nodes, "n3");
  EXPECT_EQ(s[2].start, 10);
  EXPECT_EQ(s[2].nodes, "n[0-2]");
  EXPECT_EQ(s[3].start, 23);
}

TEST(HandSchedule, ConservativeProtectsEveryReservation) {
  Machine m = *Machine::parse("flat:4");
  FirstAvailableAllocator alloc(m);
  auto s = run("flat:4", alloc, "conservative", easy_vs_conservative());
  EXPECT_EQ(s[1].start, 0);
  EXPECT_EQ(s[2].start, 10);
  EXPECT_EQ(s[3].start, 15);
  EXPECT_EQ(s[3].nodes, "n[0-3]");
  EXPECT_EQ(s[4].start, 20);
  EXPECT_EQ(s[4].nodes, "n0");
}

TEST(HandSchedule, FcfsKeepsStrictOrder) {
  Machine m = *Machine::parse("flat:4");
  FirstAvailableAllocator alloc(m);
  auto s = run("flat:4", alloc, "fcfs", easy_vs_conservative());
  EXPECT_EQ(s[2].start, 10);
  EXPECT_EQ(s[3].start, 15);
  EXPECT_EQ(s[4].start, 20);
}

// flat:8 with jobs that need consecutive nodes. At 0, J1..J4 take n[0-1] (until 10), n[2-3] (30),
// n[4-5] (20), n[6-7] (40). J5 wants 4 consecutive nodes. By count it would fit at 20 (n[0-1] and
// n[4-5] free), but those are not consecutive; by shape its reservation is 30 on n[0-3].
// J6 (2 nodes, 15 s) arrives at 2: at 10, n[0-1] are free and J6 ends at 25 <= 30, so it
// backfills there (a count-based reservation at 20 would have forbidden it). J7 (2 nodes, 100 s)
// runs far past 30, so it may only use nodes outside n[0-3]: n[4-5] at 20.
std::vector<Job> shaped_head() {
  return {make_job(1, 0, 2, 10), make_job(2, 0, 2, 30), make_job(3, 0, 2, 20),
          make_job(4, 0, 2, 40), make_job(5, 1, 4, 10), make_job(6, 2, 2, 15),
          make_job(7, 3, 2, 100)};
}

void expect_shaped_head_schedule(const std::string& policy) {
  Machine m = *Machine::parse("flat:8");
  ConsecutiveAllocator alloc(m);
  auto s = run("flat:8", alloc, policy, shaped_head());
  EXPECT_EQ(s[5].start, 30) << policy;
  EXPECT_EQ(s[5].nodes, "n[0-3]") << policy;
  EXPECT_EQ(s[6].start, 10) << policy;
  EXPECT_EQ(s[6].nodes, "n[0-1]") << policy;
  EXPECT_EQ(s[7].start, 20) << policy;
  EXPECT_EQ(s[7].nodes, "n[4-5]") << policy;
}

TEST(HandSchedule, EasyReservesTheHeadByShape) {
  expect_shaped_head_schedule("easy");
}

TEST(HandSchedule, ConservativeReservesByShape) {
  expect_shaped_head_schedule("conservative");
}

TEST(HandSchedule, EasyHeadReservationIsTheShapeNotTheCount) {
  // The reservation handed out at J6's arrival (t=2) is J5 at 30 on n[0-3].
  Machine m = *Machine::parse("flat:8");
  ConsecutiveAllocator alloc(m);
  auto policy = PolicyRegistry::builtin().create("easy", m);
  SimOptions options;
  bool seen = false;
  options.on_pass = [&](const PassResult& s, const BatchCore& core) {
    if (s.now != 2) return;
    ASSERT_EQ(core.reservations().size(), 1u);
    EXPECT_EQ(core.reservations()[0].job, 5);
    EXPECT_EQ(core.reservations()[0].start, 30);
    EXPECT_EQ(format_hostlist(core.reservations()[0].nodes), "n[0-3]");
    seen = true;
  };
  simulate(m, alloc, **policy, shaped_head(), options);
  EXPECT_TRUE(seen);
}

// Scan on flat:4: J1 (1 node) runs 0-10 on n0; J2 (4 nodes, class 2) arrives at 1, J3 (1 node,
// class 0) at 2, J4 (2 nodes, class 1) at 3. The class being served is that of the last job
// started.
//   ScanUp at 2: from class 0 up, J3 fits (starts 2). At 3 (serving 0): J4 (class 1) before J2
//     (class 2); J4 fits on n[2-3] and starts. J2 waits for everything: 13.
//   ScanDown at 2: J3 (class 0, being served) starts. At 3, going down from class 0 wraps to the
//     largest class: J2 comes first, does not fit, and stops the pass, so J4 waits. At 12 nothing
//     runs (serving restarts from the top): J2 starts at 12, J4 after it at 22.
TEST(HandSchedule, ScanUpAndDownOrderBySizeClass) {
  std::vector<Job> jobs = {make_job(1, 0, 1, 10), make_job(2, 1, 4, 10), make_job(3, 2, 1, 10),
                           make_job(4, 3, 2, 10)};
  Machine m = *Machine::parse("flat:4");
  FirstAvailableAllocator alloc(m);
  auto up = run("flat:4", alloc, "scan-up", jobs);
  EXPECT_EQ(up[3].start, 2);
  EXPECT_EQ(up[4].start, 3);
  EXPECT_EQ(up[2].start, 13);
  auto down = run("flat:4", alloc, "scan-down", jobs);
  EXPECT_EQ(down[3].start, 2);
  EXPECT_EQ(down[2].start, 12);
  EXPECT_EQ(down[4].start, 22);
}

// Seed 001's batch: flat:8 (one switch of 8 nodes, so units of 4). Four jobs of 3, 3, 2, 4 nodes
// arrive at 0 on an empty machine. The batch of all four needs 12 > 8, so it shrinks to the first
// three (8 nodes), which start at 0 in size order (3, 3, 2: first-available gives n[0-2], n[3-5],
// n[6-7]). At 10 n[0-2] are free but no unit is wholly free; at 20 n[0-5] are: one unit, 4 nodes,
// enough for the 4-node job.
TEST(HandSchedule, FatTreeBatchShrinksUntilTheFreeUnitsSuffice) {
  std::vector<Job> jobs = {make_job(1, 0, 3, 10), make_job(2, 0, 3, 20), make_job(3, 0, 2, 30),
                           make_job(4, 0, 4, 10)};
  Machine m = *Machine::parse("flat:8");
  FirstAvailableAllocator alloc(m);
  auto s = run("flat:8", alloc, "fattree-batch", jobs);
  EXPECT_EQ(s[1].start, 0);
  EXPECT_EQ(s[1].nodes, "n[0-2]");
  EXPECT_EQ(s[2].nodes, "n[3-5]");
  EXPECT_EQ(s[3].nodes, "n[6-7]");
  EXPECT_EQ(s[4].start, 20);
  EXPECT_EQ(s[4].nodes, "n[0-3]");
}

TEST(HandSchedule, FatTreeBatchSortsLargestFirst) {
  // The batch {1 node, 4 nodes} fits in 8; the 4-node job is placed first (n[0-3]).
  std::vector<Job> jobs = {make_job(1, 0, 1, 10), make_job(2, 0, 4, 10)};
  Machine m = *Machine::parse("fattree:4,2");
  FirstAvailableAllocator alloc(m);
  auto s = run("fattree:4,2", alloc, "fattree-batch", jobs);
  EXPECT_EQ(s[2].nodes, "n[0-3]");
  EXPECT_EQ(s[1].nodes, "n4");
}

}  // namespace
}  // namespace trellis
