// Job steps in the store (state_store.h's StoredStep) on both engines: ids per attempt, nodes
// checked against the job's, each node's exit recorded once, the end a step's exits and stops
// give it (CD, F with the first failure's reason or the one it was stopped for, CA), and the
// steps a job's end cuts short.
#include <gtest/gtest.h>

#include "store_fixture.h"

namespace trellis::store_test {
namespace {

class StepStoreTest : public StoreTest {
 protected:
  // A running job on nodes 2, 3, 5 (attempt 1).
  JobId running_job() {
    JobId job = add(simple_job("steps", 3));
    EXPECT_OK(store_->commit_pass(pass_of({start_of(job, {2, 3, 5})}), 11));
    return job;
  }
  StoredStep step_of(JobId job, std::vector<NodeId> nodes, int ntasks = 0) {
    StoredStep s;
    s.job = job;
    s.attempt = 1;
    s.argv = {"./app", "x y"};
    s.nodes = std::move(nodes);
    s.ntasks = ntasks > 0 ? ntasks : static_cast<int>(s.nodes.size());
    s.tasks.ntasks = s.ntasks;
    s.tasks.mpi = "pmix";
    return s;
  }
  StoredStep find(JobId job, int step) {
    for (const StoredStep& s : value_of(store_->list_steps(job)))
      if (s.step == step) return s;
    ADD_FAILURE() << "no step " << step;
    return {};
  }
};

TEST_P(StepStoreTest, JobsWithStepsAreNamedInOneRead) {
  JobId with = running_job();
  JobId without = add(simple_job("no steps", 1));
  EXPECT_OK(store_->commit_pass(pass_of({start_of(without, {7})}), 11));
  EXPECT_EQ(value_of(store_->add_step(step_of(with, {2}), 1, 12)), 1);
  EXPECT_EQ(value_of(store_->jobs_with_steps({with, without, 999})), std::set<JobId>{with});
  EXPECT_TRUE(value_of(store_->jobs_with_steps({without})).empty());
  EXPECT_TRUE(value_of(store_->jobs_with_steps({})).empty());
}

TEST_P(StepStoreTest, StepsAreNumberedPerAttemptOnTheJobsNodes) {
  JobId job = running_job();
  EXPECT_EQ(value_of(store_->add_step(step_of(job, {3, 2}), 1, 12)), 1);
  EXPECT_EQ(value_of(store_->add_step(step_of(job, {5}, 4), 1, 13)), 2);
  std::vector<StoredStep> steps = value_of(store_->list_steps(job));
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].nodes, (std::vector<NodeId>{2, 3}));  // ascending
  EXPECT_EQ(steps[0].argv, (std::vector<std::string>{"./app", "x y"}));
  EXPECT_EQ(steps[0].state, JobState::kRunning);
  EXPECT_EQ(steps[0].start_time, 12);
  EXPECT_EQ(steps[1].ntasks, 4);
  EXPECT_EQ(steps[1].tasks.mpi, "pmix");
  // Not the job's node, twice the same node, a pending job, another attempt.
  Result<int> stranger = store_->add_step(step_of(job, {7}), 1, 14);
  ASSERT_FALSE(stranger);
  EXPECT_NE(stranger.error().message.find("node 7 is not one of job"), std::string::npos);
  EXPECT_FALSE(store_->add_step(step_of(job, {2, 2}), 1, 14));
  StoredStep other_attempt = step_of(job, {2});
  other_attempt.attempt = 2;
  EXPECT_EQ(store_->add_step(other_attempt, 1, 14).error().code, Error::Code::kDoesNotFitNow);
  JobId pending = add(simple_job("waits"));
  EXPECT_EQ(store_->add_step(step_of(pending, {2}), 1, 14).error().code,
            Error::Code::kDoesNotFitNow);
  EXPECT_EQ(store_->add_step(step_of(999, {2}), 1, 14).error().code, Error::Code::kNotFound);
  int kinds = 0;
  for (const std::string& k : event_kinds()) kinds += k == "step";
  EXPECT_EQ(kinds, 2);
}

TEST_P(StepStoreTest, AStepEndsWhenItsLastNodeReports) {
  JobId job = running_job();
  int id = value_of(store_->add_step(step_of(job, {2, 3}), 1, 12));
  std::vector<StepEnd> ended =
      value_of(store_->record_step_exits({{job, 1, id, 2, 0, 0, "", std::nullopt}}, 13));
  EXPECT_TRUE(ended.empty());
  // A repeated report, a node not the step's, another step: nothing.
  EXPECT_TRUE(value_of(store_->record_step_exits({{job, 1, id, 2, 9, 0, "", std::nullopt},
                                                  {job, 1, id, 5, 0, 0, "", std::nullopt},
                                                  {job, 1, id + 1, 3, 0, 0, "", std::nullopt}},
                                                 14))
                  .empty());
  ended = value_of(store_->record_step_exits({{job, 1, id, 3, 0, 0, "", std::nullopt}}, 15));
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].state, JobState::kCompleted);
  StoredStep done = find(job, id);
  EXPECT_EQ(done.state, JobState::kCompleted);
  EXPECT_EQ(done.end_time, 15);
  EXPECT_EQ(done.exit_code, 0);
}

TEST_P(StepStoreTest, AFailedStepKeepsTheFirstFailuresReason) {
  JobId job = running_job();
  int id = value_of(store_->add_step(step_of(job, {2, 3, 5}), 1, 12));
  // Unstopped: the reason of the node that said why.
  EXPECT_TRUE(value_of(store_->record_step_exits(
                           {{job, 1, id, 2, 0, 15, "", std::nullopt},
                            {job, 1, id, 3, 3, 0, "rank 1 on n3 called PMI abort (exit code 3)",
                             std::nullopt}},
                           13))
                  .empty());
  std::vector<StepEnd> ended =
      value_of(store_->record_step_exits({{job, 1, id, 5, 0, 0, "", std::nullopt}}, 14));
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].state, JobState::kFailed);
  EXPECT_EQ(ended[0].reason, "rank 1 on n3 called PMI abort (exit code 3)");
  EXPECT_EQ(ended[0].exit_code, 3);
  EXPECT_EQ(ended[0].signal, 15);
  // Stopped for a failure: that reason, whatever the other nodes say.
  int second = value_of(store_->add_step(step_of(job, {2, 3}), 1, 15));
  EXPECT_EQ(
      value_of(store_->stop_step(job, 1, second, StopCause::kFailed, "rank 0 on n2 failed", 16)),
      JobState::kCompleting);
  EXPECT_EQ(value_of(store_->stop_step(job, 1, second, StopCause::kCancel, "late", 16)),
            JobState::kCompleting);  // stopping already: left as it is
  value_of(store_->record_step_exits(
      {{job, 1, second, 2, 1, 0, "x", std::nullopt}, {job, 1, second, 3, 0, 15, "y", std::nullopt}},
      17));
  EXPECT_EQ(find(job, second).state, JobState::kFailed);
  EXPECT_EQ(find(job, second).reason, "rank 0 on n2 failed");
  // Cancelled: CA.
  int third = value_of(store_->add_step(step_of(job, {5}), 1, 18));
  value_of(store_->stop_step(job, 1, third, StopCause::kCancel, "cancelled", 19));
  value_of(store_->record_step_exits({{job, 1, third, 5, 0, 15, "", std::nullopt}}, 20));
  EXPECT_EQ(find(job, third).state, JobState::kCancelled);
}

TEST_P(StepStoreTest, TheJobsEndCutsItsRunningStepsShort) {
  JobId job = running_job();
  int done = value_of(store_->add_step(step_of(job, {2}), 1, 12));
  value_of(store_->record_step_exits({{job, 1, done, 2, 0, 0, "", std::nullopt}}, 13));
  int open = value_of(store_->add_step(step_of(job, {3, 5}), 1, 14));
  std::vector<StepEnd> ended = value_of(store_->end_steps(job, 1, "its job ended", 15));
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].step, open);
  EXPECT_EQ(find(job, open).state, JobState::kCancelled);
  EXPECT_EQ(find(job, open).reason, "its job ended");
  EXPECT_EQ(find(job, done).state, JobState::kCompleted);  // as it was
  EXPECT_TRUE(value_of(store_->end_steps(job, 1, "again", 16)).empty());
  // A late exit of a step that was cut short changes nothing.
  EXPECT_TRUE(
      value_of(store_->record_step_exits({{job, 1, open, 3, 0, 9, "", std::nullopt}}, 17)).empty());
  EXPECT_EQ(find(job, open).state, JobState::kCancelled);
}

TEST_P(StepStoreTest, AJobThatFailsIsStoppedWithItsReasonAndEndsF) {
  JobId job = running_job();
  EXPECT_EQ(value_of(store_->stop_job(job, 1, StopCause::kFailed, "rank 2 on n5 failed", 12)),
            JobState::kCompleting);
  EXPECT_EQ(get(job).stop, StopCause::kFailed);
  std::vector<JobEnd> ended = value_of(store_->record_exits({{job, 1, 2, 0, 15, std::nullopt},
                                                             {job, 1, 3, 0, 15, std::nullopt},
                                                             {job, 1, 5, 1, 0, std::nullopt}},
                                                            13));
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(get(job).state, JobState::kFailed);
  EXPECT_EQ(get(job).reason, "rank 2 on n5 failed");
}

INSTANTIATE_TEST_SUITE_P(Engines, StepStoreTest,
                         ::testing::Values(Engine::kSqlite, Engine::kPostgres), test::engine_name);

}  // namespace
}  // namespace trellis::store_test
