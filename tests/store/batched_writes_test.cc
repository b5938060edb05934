// Batches on both engines: a pass of many starts and notes, and an exit report of many exits
// (repeated and stale ones among them), write what one call per item writes. Each test does the
// same work twice, on two stores of one engine, and compares every row the work wrote; then it
// checks the rows against what they must hold, so that a batch that mixes up its rows is caught
// even if both ways were wrong alike.
#include <gtest/gtest.h>

#include <algorithm>

#include "store_fixture.h"

namespace trellis::store_test {
namespace {

// What a job's row holds that a pass or an end writes.
struct Written {
  JobState state;
  int attempt;
  Seconds start_time, end_time, expected_start;
  std::string reason;
  std::vector<NodeId> nodes;
  std::vector<int> box_anchor, box_extents;
  int exit_code, signal;
  bool operator==(const Written&) const = default;
};

Written written(const StoredJob& j) {
  return {j.state, j.attempt,    j.start_time,  j.end_time,  j.expected_start, j.reason,
          j.nodes, j.box_anchor, j.box_extents, j.exit_code, j.signal};
}

class BatchedWritesTest : public StoreTest {
 protected:
  // The same five jobs in `store` (ids 1-5 in a fresh store).
  std::vector<JobId> add_jobs(SqlStore& store) {
    std::vector<JobId> ids;
    for (int i = 0; i < 5; ++i)
      ids.push_back(value_of(store.add_job(simple_job("j" + std::to_string(i), 1 + i % 2), 10)));
    return ids;
  }
  // The starts: three jobs on their own nodes, one with a box; notes for the other two (one of
  // them noted twice: the last note counts).
  PassCommit the_pass(const std::vector<JobId>& ids) {
    PassCommit pass =
        pass_of({start_of(ids[0], {3}), start_of(ids[1], {5, 4}), start_of(ids[2], {9})});
    pass.starts[1].box_anchor = {0, 1};
    pass.starts[1].box_extents = {1, 2};
    pass.notes = {{ids[3], "Priority", 77.125},
                  {ids[4], "Resources", 12.5},
                  {ids[3], "Resources (no free 2x2 box yet)", 80.25}};
    return pass;
  }
  // A second store with the same jobs as this one (their ids in `ids`), to write one item at a
  // time what this one writes in one call; null (with the failure reported) if it cannot be made.
  std::unique_ptr<SqlStore> twin_store(std::vector<JobId>& ids) {
    std::unique_ptr<SqlStore> other = value_of(open_empty_store(), "second store");
    if (!other) return nullptr;
    EXPECT_OK(other->init_cluster("torus:4x4", node_names(16)));
    ids = add_jobs(*store_);
    if (add_jobs(*other) != ids) {
      ADD_FAILURE() << "the two stores gave the same jobs different ids";
      return nullptr;
    }
    return other;
  }
};

TEST_P(BatchedWritesTest, APassOfManyStartsAndNotesWritesWhatOnePassPerItemWrites) {
  std::vector<JobId> ids;
  std::unique_ptr<SqlStore> other = twin_store(ids);
  ASSERT_TRUE(other);
  PassCommit pass = the_pass(ids);
  EXPECT_OK(store_->commit_pass(pass, 50));
  for (const JobStart& start : pass.starts) {
    PassCommit one;
    one.starts = {start};
    EXPECT_OK(other->commit_pass(one, 50));
  }
  for (const PendingNote& note : pass.notes) {
    PassCommit one;
    one.notes = {note};
    EXPECT_OK(other->commit_pass(one, 50));
  }
  for (JobId id : ids)
    EXPECT_EQ(written(get(id)), written(value_of(other->job(id)))) << "job " << id;
  std::vector<StoredNode> nodes = value_of(store_->list_nodes());
  std::vector<StoredNode> theirs = value_of(other->list_nodes());
  ASSERT_EQ(nodes.size(), theirs.size());
  for (size_t n = 0; n < nodes.size(); ++n)
    EXPECT_EQ(nodes[n].jobs, theirs[n].jobs) << "node " << n;

  // What the rows must hold, each its own values.
  EXPECT_EQ(get(ids[0]).nodes, std::vector<NodeId>{3});
  EXPECT_EQ(get(ids[1]).nodes, (std::vector<NodeId>{4, 5}));
  EXPECT_EQ(get(ids[1]).box_anchor, (std::vector<int>{0, 1}));
  EXPECT_EQ(get(ids[1]).box_extents, (std::vector<int>{1, 2}));
  EXPECT_TRUE(get(ids[0]).box_anchor.empty());
  EXPECT_EQ(get(ids[2]).nodes, std::vector<NodeId>{9});
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(get(ids[i]).state, JobState::kRunning);
    EXPECT_EQ(get(ids[i]).attempt, 1);
    EXPECT_EQ(get(ids[i]).start_time, 50);
  }
  EXPECT_EQ(get(ids[3]).reason, "Resources (no free 2x2 box yet)");
  EXPECT_EQ(get(ids[3]).expected_start, 80.25);
  EXPECT_EQ(get(ids[4]).reason, "Resources");
  EXPECT_EQ(get(ids[4]).expected_start, 12.5);
  EXPECT_EQ(nodes[4].jobs, std::vector<JobId>{ids[1]});
  EXPECT_EQ(nodes[5].jobs, std::vector<JobId>{ids[1]});
  // The starts are logged in the pass's order.
  std::vector<JobId> started;
  for (const StoredEvent& e : all_events())
    if (e.kind == "start") started.push_back(e.job);
  EXPECT_EQ(started, (std::vector<JobId>{ids[0], ids[1], ids[2]}));
  // The same notes again write nothing: the version stays.
  int64_t before = version();
  PassCommit same;
  same.notes = {pass.notes[1], pass.notes[2]};
  EXPECT_OK(store_->commit_pass(same, 51));
  EXPECT_EQ(version(), before);
}

TEST_P(BatchedWritesTest, OneReportOfManyExitsEndsWhatOneReportPerExitEnds) {
  std::vector<JobId> ids;
  std::unique_ptr<SqlStore> other = twin_store(ids);
  ASSERT_TRUE(other);
  PassCommit pass = the_pass(ids);
  pass.notes.clear();
  EXPECT_OK(store_->commit_pass(pass, 50));
  EXPECT_OK(other->commit_pass(pass, 50));
  // ids[1] ends on both nodes (exit 3 on one: failed), with one exit repeated (a different code:
  // the first counts) and one of a stale attempt; ids[0] is killed by a signal; ids[2] has not
  // reported; a stranger's exit names no job.
  std::vector<TaskExit> exits = {
      {ids[1], 1, 4, 0, 0, std::nullopt}, {ids[1], 1, 5, 3, 0, std::nullopt},
      {ids[1], 1, 5, 7, 0, std::nullopt}, {ids[0], 7, 3, 1, 0, std::nullopt},
      {ids[0], 1, 3, 0, 9, std::nullopt}, {999, 1, 2, 0, 0, std::nullopt}};
  std::vector<JobEnd> batched = value_of(store_->record_exits(exits, 60));
  std::vector<JobEnd> one_by_one;
  for (const TaskExit& exit : exits)
    for (JobEnd& end : value_of(other->record_exits({exit}, 60)))
      one_by_one.push_back(std::move(end));
  auto jobs_of = [](std::vector<JobEnd> ends) {
    std::vector<JobId> jobs;
    for (const JobEnd& e : ends) jobs.push_back(e.job);
    std::sort(jobs.begin(), jobs.end());
    return jobs;
  };
  EXPECT_EQ(jobs_of(batched), jobs_of(one_by_one));
  EXPECT_EQ(jobs_of(batched), (std::vector<JobId>{ids[0], ids[1]}));
  for (JobId id : ids)
    EXPECT_EQ(written(get(id)), written(value_of(other->job(id)))) << "job " << id;

  EXPECT_EQ(get(ids[1]).state, JobState::kFailed);
  EXPECT_EQ(get(ids[1]).exit_code, 3);
  EXPECT_EQ(get(ids[1]).reason, "exit code 3");
  EXPECT_EQ(get(ids[1]).end_time, 60);
  EXPECT_EQ(get(ids[0]).state, JobState::kFailed);
  EXPECT_EQ(get(ids[0]).signal, 9);
  EXPECT_EQ(get(ids[2]).state, JobState::kRunning);
  std::vector<StoredNode> nodes = value_of(store_->list_nodes());
  EXPECT_TRUE(nodes[3].jobs.empty());
  EXPECT_TRUE(nodes[4].jobs.empty());
  EXPECT_EQ(nodes[9].jobs, std::vector<JobId>{ids[2]});
  // Reported again: late, nothing ends twice, nothing is logged.
  size_t events = all_events().size();
  EXPECT_TRUE(value_of(store_->record_exits(exits, 61)).empty());
  EXPECT_EQ(all_events().size(), events);
}

INSTANTIATE_TEST_SUITE_P(Engines, BatchedWritesTest,
                         ::testing::Values(Engine::kSqlite, Engine::kPostgres), test::engine_name);

}  // namespace
}  // namespace trellis::store_test
