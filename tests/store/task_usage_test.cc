// What tasks used (core/task_usage.h) in the store, on both engines: recorded with the exit
// reports that carry it, in their transaction (record_exits() on PostgreSQL folds it into its one
// exchange); each node's first report of a step counts; step_usage() sums a step's CPU times over
// its nodes and keeps its largest peak and where it was.
#include <gtest/gtest.h>

#include "store_fixture.h"

namespace trellis::store_test {
namespace {

class TaskUsageStoreTest : public StoreTest {
 protected:
  // A running job on nodes 2, 3, 5 (attempt 1) with a step on 2 and 3.
  std::pair<JobId, int> job_with_step() {
    JobId job = add(simple_job("usage", 3));
    EXPECT_OK(store_->commit_pass(pass_of({start_of(job, {2, 3, 5})}), 11));
    StoredStep step;
    step.job = job;
    step.attempt = 1;
    step.argv = {"./app"};
    step.nodes = {2, 3};
    step.ntasks = 2;
    step.tasks.ntasks = 2;
    return {job, value_of(store_->add_step(step, 1, 12))};
  }
};

TEST_P(TaskUsageStoreTest, StepsSumTheirNodesCpuAndKeepTheLargestPeak) {
  auto [job, step] = job_with_step();
  JobId other = add(simple_job("other", 1));
  EXPECT_OK(store_->commit_pass(pass_of({start_of(other, {7})}), 11));
  EXPECT_TRUE(value_of(store_->step_usage({job})).empty());

  value_of(store_->record_step_exits({{job, 1, step, 2, 0, 0, "", TaskUsage{1000, 200, 5000}},
                                      {job, 1, step, 3, 0, 0, "", TaskUsage{3000, 400, 9000}}},
                                     13));
  // The job's own command: two nodes with usage, one whose agent did not know it; with another
  // job's exit in the same batch.
  value_of(store_->record_exits({{job, 1, 2, 0, 0, TaskUsage{10, 20, 300}},
                                 {job, 1, 3, 0, 0, TaskUsage{40, 50, 60}},
                                 {job, 1, 5, 0, 0, std::nullopt},
                                 {other, 1, 7, 0, 0, TaskUsage{7, 8, 9}}},
                                14));
  EXPECT_EQ(get(job).state, JobState::kCompleted);
  // A repeated report (a restarted agent's, or one heard by two controllers) changes nothing.
  value_of(store_->record_exits({{job, 1, 2, 0, 0, TaskUsage{999999, 0, 999999}}}, 15));
  value_of(store_->record_step_exits({{job, 1, step, 3, 0, 0, "", TaskUsage{1, 1, 999999}}}, 15));

  std::map<JobId, std::vector<StepUsage>> usage = value_of(store_->step_usage({job, other, 999}));
  ASSERT_EQ(usage.size(), 2u);
  const std::vector<StepUsage>& steps = usage[job];
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].attempt, 1);
  EXPECT_EQ(steps[0].step, 0);
  EXPECT_EQ(steps[0].user_usec, 50);
  EXPECT_EQ(steps[0].system_usec, 70);
  EXPECT_EQ(steps[0].max_rss_kb, 300);
  EXPECT_EQ(steps[0].max_rss_node, 2);
  EXPECT_EQ(steps[0].nodes, 2);
  EXPECT_EQ(steps[1].step, step);
  EXPECT_EQ(steps[1].user_usec, 4000);
  EXPECT_EQ(steps[1].system_usec, 600);
  EXPECT_EQ(steps[1].max_rss_kb, 9000);
  EXPECT_EQ(steps[1].max_rss_node, 3);
  ASSERT_EQ(usage[other].size(), 1u);
  EXPECT_EQ(usage[other][0].user_usec, 7);
  EXPECT_EQ(usage[other][0].max_rss_kb, 9);
  EXPECT_TRUE(value_of(store_->step_usage({})).empty());
}

TEST_P(TaskUsageStoreTest, EachAttemptKeepsItsOwn) {
  JobId job = add(simple_job("requeued", 1));
  EXPECT_OK(store_->commit_pass(pass_of({start_of(job, {4})}), 11));
  value_of(store_->record_exits({{job, 1, 4, 0, 0, TaskUsage{100, 0, 10}}}, 12));
  // A usage for an attempt that is not the job's (late) is kept under that attempt.
  value_of(store_->record_exits({{job, 2, 4, 0, 0, TaskUsage{5, 0, 20}}}, 13));
  std::vector<StepUsage> steps = value_of(store_->step_usage({job}))[job];
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].attempt, 1);
  EXPECT_EQ(steps[0].user_usec, 100);
  EXPECT_EQ(steps[1].attempt, 2);
  EXPECT_EQ(steps[1].max_rss_kb, 20);
}

INSTANTIATE_TEST_SUITE_P(Engines, TaskUsageStoreTest,
                         ::testing::Values(Engine::kSqlite, Engine::kPostgres), test::engine_name);

}  // namespace
}  // namespace trellis::store_test
