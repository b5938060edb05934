// stop_job() on both engines: a pending job cancelled at once, a job holding nodes made CG on the
// attempt asked (or whichever), everything else left as it is and logged only when it changed.
// PostgreSQL does it in one statement (Dialect::stop_job_logged), SQLite in C++; both must agree
// on every branch, the log included.
#include <gtest/gtest.h>

#include "store_fixture.h"

namespace trellis::store_test {
namespace {

class StopJobStoreTest : public StoreTest {
 protected:
  JobId running_job(std::vector<NodeId> nodes) {
    JobId job = add(simple_job("running", static_cast<int>(nodes.size())));
    EXPECT_OK(store_->commit_pass(pass_of({start_of(job, std::move(nodes))}), 11));
    return job;
  }
  StoredEvent last_event() {
    std::vector<StoredEvent> events = all_events();
    return events.empty() ? StoredEvent{} : events.back();
  }
};

TEST_P(StopJobStoreTest, APendingJobIsCancelledAtOnceOnlyByACancelOfAttemptZero) {
  JobId job = add(simple_job("pending"));
  const size_t events = all_events().size();
  // Not a cancel, or a cancel of an attempt it never had: nothing changes.
  EXPECT_EQ(value_of(store_->stop_job(job, 0, StopCause::kTimeout, "late", 12)),
            JobState::kPending);
  EXPECT_EQ(value_of(store_->stop_job(job, 1, StopCause::kCancel, "cancelled", 12)),
            JobState::kPending);
  EXPECT_EQ(all_events().size(), events);
  EXPECT_EQ(get(job).state, JobState::kPending);

  EXPECT_EQ(value_of(store_->stop_job(job, 0, StopCause::kCancel, "by alice", 13)),
            JobState::kCancelled);
  StoredJob cancelled = get(job);
  EXPECT_EQ(cancelled.state, JobState::kCancelled);
  EXPECT_EQ(cancelled.reason, "by alice");
  EXPECT_EQ(cancelled.end_time, 13);
  EXPECT_EQ(cancelled.expected_start, 0);
  StoredEvent logged = last_event();
  EXPECT_EQ(logged.kind, "cancel");
  EXPECT_EQ(logged.job, job);
  EXPECT_EQ(logged.time, 13);
  EXPECT_EQ(logged.detail, "PENDING -> CANCELLED: by alice");
  EXPECT_EQ(all_events().size(), events + 1);

  // Over: stopped again, it stays as it is, and nothing more is logged.
  EXPECT_EQ(value_of(store_->stop_job(job, 0, StopCause::kCancel, "again", 14)),
            JobState::kCancelled);
  EXPECT_EQ(get(job).reason, "by alice");
  EXPECT_EQ(all_events().size(), events + 1);
}

TEST_P(StopJobStoreTest, AJobHoldingNodesStopsOnceOnTheAttemptAsked) {
  JobId job = running_job({2, 3});
  const size_t events = all_events().size();
  // Another attempt: left running.
  EXPECT_EQ(value_of(store_->stop_job(job, 2, StopCause::kFailed, "rank 0 failed", 12)),
            JobState::kRunning);
  EXPECT_EQ(all_events().size(), events);

  EXPECT_EQ(value_of(store_->stop_job(job, 1, StopCause::kFailed, "rank 0 failed", 12)),
            JobState::kCompleting);
  StoredJob stopping = get(job);
  EXPECT_EQ(stopping.state, JobState::kCompleting);
  EXPECT_EQ(stopping.stop, StopCause::kFailed);
  EXPECT_EQ(stopping.reason, "rank 0 failed");
  EXPECT_EQ(stopping.nodes, (std::vector<NodeId>{2, 3}));
  StoredEvent logged = last_event();
  EXPECT_EQ(logged.kind, "state");
  EXPECT_EQ(logged.detail, "RUNNING -> COMPLETING: rank 0 failed");

  // Stopping already: a cancel now changes nothing (the first cause stands).
  EXPECT_EQ(value_of(store_->stop_job(job, 0, StopCause::kCancel, "cancelled", 13)),
            JobState::kCompleting);
  EXPECT_EQ(get(job).stop, StopCause::kFailed);
  EXPECT_EQ(all_events().size(), events + 1);
}

TEST_P(StopJobStoreTest, ASuspendedJobIsCancelledOnWhicheverAttemptAndLogsItsState) {
  JobId job = running_job({5});
  EXPECT_OK(store_->set_job_state(job, JobState::kSuspended, "suspended by root", 12));
  EXPECT_EQ(value_of(store_->stop_job(job, 0, StopCause::kCancel, "cancelled", 13)),
            JobState::kCompleting);
  EXPECT_EQ(get(job).stop, StopCause::kCancel);
  StoredEvent logged = last_event();
  EXPECT_EQ(logged.kind, "cancel");
  EXPECT_EQ(logged.detail, "SUSPENDED -> COMPLETING: cancelled");
  // Its end, by the end rule.
  std::vector<JobEnd> ended =
      value_of(store_->record_exits({{job, 1, 5, 0, 15, std::nullopt}}, 14));
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(get(job).state, JobState::kCancelled);
}

TEST_P(StopJobStoreTest, BadRequestsAreRefusedAndChangeNothing) {
  JobId job = running_job({1});
  const size_t events = all_events().size();
  Error missing = error_of(store_->stop_job(999, 0, StopCause::kCancel, "cancelled", 12));
  EXPECT_EQ(missing.code, Error::Code::kNotFound);
  EXPECT_NE(missing.message.find("no job 999"), std::string::npos) << missing.message;
  Error no_cause = error_of(store_->stop_job(job, 0, StopCause::kNone, "why", 12));
  EXPECT_EQ(no_cause.code, Error::Code::kInvalidArgument);
  Error bad_text = error_of(store_->stop_job(job, 0, StopCause::kCancel, "\xff\xfe", 12));
  EXPECT_EQ(bad_text.code, Error::Code::kInvalidArgument);
  EXPECT_EQ(get(job).state, JobState::kRunning);
  EXPECT_EQ(all_events().size(), events);
}

// PostgreSQL: a stop is one exchange (the row and the log lock, the statement, the commit).
TEST_F(PostgresStoreTest, AStopIsOneExchange) {
  auto exchanges = [&] { return store_->operation_counts()["stop_job"].round_trips; };
  JobId warm = add(simple_job("warm")), job = add(simple_job("job"));
  (void)value_of(store_->stop_job(warm, 0, StopCause::kCancel, "cancelled", 12));
  const int64_t before = exchanges();
  EXPECT_EQ(value_of(store_->stop_job(job, 0, StopCause::kCancel, "cancelled", 13)),
            JobState::kCancelled);
  EXPECT_EQ(exchanges() - before, 1);
}

INSTANTIATE_TEST_SUITE_P(Engines, StopJobStoreTest,
                         ::testing::Values(Engine::kSqlite, Engine::kPostgres), test::engine_name);

}  // namespace
}  // namespace trellis::store_test
