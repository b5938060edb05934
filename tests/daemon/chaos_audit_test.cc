// The chaos run's auditor (bench/chaos.h) on histories written by hand: a store whose jobs ran
// as recorded, and the output files their processes would have written. Each finding the auditor
// exists for is planted once and must be counted; a clean history must count nothing.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "bench/chaos.h"
#include "daemon_test_support.h"

namespace trellis {
namespace {

class ChaosAuditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = open_store("sqlite:" + (dir_ / "state.db"));
    ASSERT_TRUE(store) << store.error().message;
    store_ = std::move(*store);
    ASSERT_TRUE(store_->init_cluster("flat:4", {"n0", "n1", "n2", "n3"}));
    std::filesystem::create_directories(dir_ / "out");
  }

  JobId submit(int nodes) {
    StoredJob job;
    job.request = Request::count(nodes);
    job.argv = {"true"};
    Result<JobId> id = store_->add_job(job, now_ += 1);
    EXPECT_TRUE(id) << id.error().message;
    acknowledged_.insert(*id);
    return *id;
  }
  void start(JobId id, int attempt, std::vector<NodeId> nodes) {
    JobStart started;
    started.job = id;
    started.attempt = attempt;
    started.nodes = std::move(nodes);
    PassCommit pass;
    pass.starts.push_back(std::move(started));
    ASSERT_TRUE(store_->commit_pass(pass, now_ += 1));
  }
  // A start beside other jobs on its nodes, holding `grants` (core/node_grant.h's text).
  void start_shared(JobId id, int attempt, std::vector<NodeId> nodes, const std::string& grants) {
    JobStart started;
    started.job = id;
    started.attempt = attempt;
    started.nodes = std::move(nodes);
    started.shares_nodes = true;
    Result<std::vector<NodeGrant>> decoded = decode_grants(grants);
    ASSERT_TRUE(decoded) << decoded.error().message;
    started.grants = *decoded;
    PassCommit pass;
    pass.starts.push_back(std::move(started));
    ASSERT_TRUE(store_->commit_pass(pass, now_ += 1));
  }
  void end(JobId id, int attempt, JobState state = JobState::kCompleted) {
    JobEnd ended;
    ended.job = id;
    ended.attempt = attempt;
    ended.state = state;
    ASSERT_TRUE(store_->end_job(ended, now_ += 1));
  }
  // "B|E ATTEMPT NODE NANOSECONDS" lines, as the chaos job's processes write them.
  void output(JobId id, const std::string& lines) {
    std::ofstream(dir_ / ("out/" + std::to_string(id)), std::ios::app) << lines;
  }
  bench::ChaosResult audit() {
    bench::ChaosResult result;
    Status ok = bench::audit_chaos_run(*store_, acknowledged_, dir_ / "out", result);
    EXPECT_TRUE(ok) << ok.error().message;
    return result;
  }
  // A job of two nodes that ran once, on n0 and n1, from `begin` to `finish`.
  JobId ran_once(int64_t begin, int64_t finish, NodeId first = 0) {
    JobId id = submit(2);
    start(id, 1, {first, first + 1});
    end(id, 1);
    for (NodeId n : {first, first + 1}) {
      // A stream, not "n" + to_string(n): GCC 12 warns wrongly (-Wrestrict) on that at -O3.
      std::ostringstream lines;
      lines << "B 1 n" << n << ' ' << begin << "\nE 1 n" << n << ' ' << finish << '\n';
      output(id, lines.str());
    }
    return id;
  }

  testing::TempDir dir_;
  std::unique_ptr<StateStore> store_;
  std::set<JobId> acknowledged_;
  Seconds now_ = 100;
};

TEST_F(ChaosAuditTest, AHistoryWithoutFaultsIsClean) {
  ran_once(100, 200);
  ran_once(300, 400);
  ran_once(150, 250, 2);
  bench::ChaosResult r = audit();
  EXPECT_TRUE(r.clean());
  EXPECT_EQ(r.final_states["CD"], 3);
  EXPECT_EQ(r.log.starts, 3);
  EXPECT_EQ(r.reruns_after_requeue, 0);
}

TEST_F(ChaosAuditTest, AProcessThatRanTwiceIsCounted) {
  JobId id = ran_once(100, 200);
  output(id, "B 1 n0 210\n");  // the same attempt launched again on n0
  bench::ChaosResult r = audit();
  EXPECT_EQ(r.run_twice, 1);
  EXPECT_FALSE(r.clean());
}

TEST_F(ChaosAuditTest, ARerunIsAllowedOnlyAfterARecordedRequeue) {
  JobId requeued = submit(1);
  start(requeued, 1, {0});
  end(requeued, 1, JobState::kPending);  // its node failed: requeued
  start(requeued, 2, {1});
  end(requeued, 2);
  output(requeued, "B 1 n0 100\nB 2 n1 300\nE 2 n1 400\n");
  JobId phantom = submit(1);
  start(phantom, 1, {2});
  end(phantom, 1);
  output(phantom, "B 1 n2 100\nE 1 n2 200\nB 2 n2 300\nE 2 n2 400\n");  // never started twice
  bench::ChaosResult r = audit();
  EXPECT_EQ(r.reruns_after_requeue, 1);
  EXPECT_EQ(r.run_twice, 1);
}

TEST_F(ChaosAuditTest, TwoJobsProcessesOnOneNodeAtOnceAreADoubleAllocation) {
  ran_once(100, 300);
  ran_once(250,
           400);  // the log gives n0 and n1 to it after the first ended; its processes disagree
  bench::ChaosResult r = audit();
  EXPECT_EQ(r.log.double_allocations, 0);
  EXPECT_EQ(r.process_overlaps, 2);  // n0 and n1
  EXPECT_FALSE(r.clean());
}

// On shared nodes, jobs may hold one node together, but never one core or GPU, nor more
// memory than the node has; their processes may overlap in time only on CPUs of their own.
TEST_F(ChaosAuditTest, SharedNodesAreAuditedCoreByCoreAndByteByByte) {
  const std::vector<NodeInventory> nodes(4, *parse_node_inventory("cores=4,mem=1G,gpus=2"));
  JobId a = submit(1), b = submit(1);
  start_shared(a, 1, {0}, "0:c=0-1;m=512;g=0");
  start_shared(b, 1, {0}, "0:c=2-3;m=512;g=1");
  output(a, "B 1 n0 100 0-1\nE 1 n0 300 0-1\n");
  output(b, "B 1 n0 150 2-3\nE 1 n0 250 2-3\n");
  end(a, 1);
  end(b, 1);
  bench::ChaosResult clean;
  ASSERT_TRUE(bench::audit_chaos_run(*store_, acknowledged_, dir_ / "out", clean, nodes));
  EXPECT_TRUE(clean.clean()) << (clean.log.problems.empty() ? "" : clean.log.problems[0]);
  EXPECT_EQ(clean.process_overlaps, 0);

  // Core 1 given twice, GPU 0 given twice, 1 GiB + 1 MiB given of 1 GiB: three findings; and the
  // processes of the first two on CPU 1 at once.
  JobId c = submit(1), d = submit(1), e = submit(1);
  start_shared(c, 1, {1}, "1:c=0-1;m=512;g=0");
  start_shared(d, 1, {1}, "1:c=1;m=256");
  start_shared(e, 1, {1}, "1:c=3;m=257;g=0");
  output(c, "B 1 n1 100 0-1\nE 1 n1 300 0-1\n");
  output(d, "B 1 n1 150 1\nE 1 n1 250 1\n");
  output(e, "B 1 n1 150 3\nE 1 n1 250 3\n");
  for (JobId id : {c, d, e}) end(id, 1);
  bench::ChaosResult r;
  ASSERT_TRUE(bench::audit_chaos_run(*store_, acknowledged_, dir_ / "out", r, nodes));
  EXPECT_EQ(r.log.double_allocations, 3);
  std::string problems;
  for (const std::string& p : r.log.problems) problems += p + "\n";
  EXPECT_NE(problems.find("node 1: job " + std::to_string(d) + " was given core 1 while job " +
                          std::to_string(c) + " holds it"),
            std::string::npos)
      << problems;
  EXPECT_NE(problems.find("was given GPU 0"), std::string::npos) << problems;
  EXPECT_NE(problems.find("making 1025 MiB given of its 1024"), std::string::npos) << problems;
  EXPECT_EQ(r.process_overlaps, 1);  // d on c's CPU 1; e's CPU 3 is its own
  EXPECT_FALSE(r.clean());
}

TEST_F(ChaosAuditTest, LostAndUnrunJobsAreCounted) {
  acknowledged_.insert(999);  // acknowledged, not in the store
  submit(1);                  // never ends
  JobId unrun = submit(2);    // completed, but only one of its processes ran
  start(unrun, 1, {0, 1});
  end(unrun, 1);
  output(unrun, "B 1 n0 100\nE 1 n0 200\n");
  bench::ChaosResult r = audit();
  EXPECT_EQ(r.lost, 2);
  EXPECT_EQ(r.completed_unrun, 1);
  EXPECT_FALSE(r.clean());
}

}  // namespace
}  // namespace trellis
