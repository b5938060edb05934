// The end rule (end_by_rule(), state_store.h) as record_exits() applies it on both engines: the
// job's last exit ends it with the state, reason, exit code and signal the rule gives for why it
// was stopped and what its processes returned, and logs that end. PostgreSQL computes the rule in
// SQL, in the one statement that records the exits (Dialect::record_exits_logged); SQLite calls
// end_by_rule(). Each case is checked against end_by_rule() itself and against its written form.
#include <gtest/gtest.h>

#include "store_fixture.h"

namespace trellis::store_test {
namespace {

class EndRuleStoreTest : public StoreTest {};

struct Exit {
  int exit_code = 0;
  int signal = 0;
};

struct EndCase {
  StopCause stop = StopCause::kNone;
  std::string stop_reason;  // given to stop_job (only with a stop)
  Exit first, second;       // the job's two nodes' exits, reported one at a time
  // What the rule must give.
  JobState state = JobState::kCompleted;
  std::string reason;
};

// The event's detail for an end, as the log writes it.
std::string detail_of(JobState state, int exit_code, int signal, const std::string& reason) {
  std::string detail = std::string(state_name(state)) + ", exit " + std::to_string(exit_code);
  if (signal != 0) detail += ", signal " + std::to_string(signal);
  if (!reason.empty()) detail += ": " + reason;
  return detail;
}

TEST_P(EndRuleStoreTest, TheLastExitEndsTheJobByTheEndRule) {
  const std::vector<EndCase> cases = {
      {StopCause::kNone, "", {0, 0}, {0, 0}, JobState::kCompleted, ""},
      {StopCause::kNone, "", {0, 0}, {3, 0}, JobState::kFailed, "exit code 3"},
      {StopCause::kNone, "", {2, 0}, {0, 9}, JobState::kFailed, "killed by signal 9"},
      {StopCause::kCancel, "cancelled", {0, 15}, {0, 15}, JobState::kCancelled, "cancelled"},
      {StopCause::kTimeout,
       "time limit",
       {0, 15},
       {143, 0},
       JobState::kTimeout,
       "time limit reached"},
      {StopCause::kFailed,
       "rank 2 on n5 failed",
       {1, 0},
       {0, 15},
       JobState::kFailed,
       "rank 2 on n5 failed"},
      {StopCause::kOutOfMemory,
       "step 7.0 on n2 went over its memory limit of 64M (peak 64M)",
       {0, 9},
       {0, 15},
       JobState::kOutOfMemory,
       "step 7.0 on n2 went over its memory limit of 64M (peak 64M)"},
      {StopCause::kFailed,
       "can't start: \u201cx\u201d; 100% 'quoted'",
       {0, 0},
       {0, 0},
       JobState::kFailed,
       "can't start: \u201cx\u201d; 100% 'quoted'"},
  };
  Seconds now = 20;
  for (size_t i = 0; i < cases.size(); ++i) {
    const EndCase& c = cases[i];
    SCOPED_TRACE("case " + std::to_string(i));
    JobId job = add(simple_job("end " + std::to_string(i), 2));
    EXPECT_OK(store_->commit_pass(pass_of({start_of(job, {2, 3})}), now));
    if (c.stop != StopCause::kNone) {
      EXPECT_EQ(value_of(store_->stop_job(job, 1, c.stop, c.stop_reason, now)),
                JobState::kCompleting);
    }
    // One node's exit: the job still runs on the other, and nothing ends.
    EXPECT_TRUE(value_of(store_->record_exits(
                             {{job, 1, 2, c.first.exit_code, c.first.signal, std::nullopt}}, now))
                    .empty());
    EXPECT_TRUE(holds_nodes(get(job).state));
    std::vector<JobEnd> ended = value_of(store_->record_exits(
        {{job, 1, 3, c.second.exit_code, c.second.signal, std::nullopt}}, now + 1));
    ASSERT_EQ(ended.size(), 1u);
    const int exit_code = std::max(c.first.exit_code, c.second.exit_code);
    const int signal = std::max(c.first.signal, c.second.signal);
    const JobEnd rule = end_by_rule(job, 1, c.stop, exit_code, signal, c.stop_reason);
    EXPECT_EQ(rule.state, c.state);
    EXPECT_EQ(rule.reason, c.reason);
    const JobEnd& end = ended.front();
    EXPECT_EQ(end.job, job);
    EXPECT_EQ(end.attempt, 1);
    EXPECT_EQ(end.state, rule.state);
    EXPECT_EQ(end.reason, rule.reason);
    EXPECT_EQ(end.exit_code, exit_code);
    EXPECT_EQ(end.signal, signal);
    EXPECT_FALSE(end.node_failure);
    EXPECT_TRUE(end.hold.empty());
    StoredJob stored = get(job);
    EXPECT_EQ(stored.state, c.state);
    EXPECT_EQ(stored.reason, c.reason);
    EXPECT_EQ(stored.exit_code, exit_code);
    EXPECT_EQ(stored.signal, signal);
    EXPECT_EQ(stored.end_time, now + 1);
    std::vector<StoredEvent> events = all_events();
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back().kind, "end");
    EXPECT_EQ(events.back().job, job);
    EXPECT_EQ(events.back().time, now + 1);
    EXPECT_EQ(events.back().detail, detail_of(c.state, exit_code, signal, c.reason));
    for (size_t e = 0; e < events.size(); ++e)
      EXPECT_EQ(events[e].seq, static_cast<int64_t>(e) + 1) << "the log has a gap";
    // The nodes are free for the next case, and a late report changes nothing.
    EXPECT_TRUE(value_of(store_->record_exits({{job, 1, 3, 1, 0, std::nullopt}}, now + 2)).empty());
    EXPECT_EQ(all_events().size(), events.size());
    EXPECT_EQ(get(job).state, c.state);
    now += 10;
  }
  for (const StoredNode& node : value_of(store_->list_nodes()))
    EXPECT_TRUE(node.jobs.empty()) << node.name;
}

TEST_P(EndRuleStoreTest, ExitsOfSeveralJobsInOneCallEndEachThatFinishedInIdOrder) {
  JobId a = add(simple_job("a", 2)), b = add(simple_job("b", 1)), c = add(simple_job("c", 2));
  EXPECT_OK(store_->commit_pass(
      pass_of({start_of(a, {0, 1}), start_of(b, {2}), start_of(c, {4, 5})}), 20));
  // c and a end (a's second node reported twice: the first report counts), b is reported for
  // another attempt (late), and a job that does not exist is named.
  std::vector<JobEnd> ended = value_of(store_->record_exits({{c, 1, 5, 0, 0, std::nullopt},
                                                             {a, 1, 1, 4, 0, std::nullopt},
                                                             {b, 2, 2, 0, 0, std::nullopt},
                                                             {a, 1, 0, 0, 0, std::nullopt},
                                                             {c, 1, 4, 0, 0, std::nullopt},
                                                             {a, 1, 1, 0, 0, std::nullopt},
                                                             {9999, 1, 7, 0, 0, std::nullopt}},
                                                            21));
  ASSERT_EQ(ended.size(), 2u);
  EXPECT_EQ(ended[0].job, a);
  EXPECT_EQ(ended[0].state, JobState::kFailed);
  EXPECT_EQ(ended[0].exit_code, 4);
  EXPECT_EQ(ended[1].job, c);
  EXPECT_EQ(ended[1].state, JobState::kCompleted);
  EXPECT_EQ(get(b).state, JobState::kRunning);
  std::vector<StoredEvent> events = all_events();
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[events.size() - 2].job, a);
  EXPECT_EQ(events.back().job, c);
  std::vector<StoredNode> nodes = value_of(store_->list_nodes());
  EXPECT_TRUE(nodes[0].jobs.empty());
  EXPECT_TRUE(nodes[5].jobs.empty());
  EXPECT_EQ(nodes[2].jobs, std::vector<JobId>{b});
}

// PostgreSQL records a batch of exits, ends what finished and logs it in one exchange: the jobs'
// rows and the log lock, the one statement, the version and the commit.
TEST_F(PostgresStoreTest, ABatchOfExitsIsOneExchange) {
  auto exchanges = [&] { return store_->operation_counts()["record_exits"].round_trips; };
  JobId a = add(simple_job("a", 2)), b = add(simple_job("b", 1));
  EXPECT_OK(store_->commit_pass(pass_of({start_of(a, {0, 1}), start_of(b, {2})}), 20));
  (void)value_of(
      store_->record_exits({{a, 1, 0, 0, 0, std::nullopt}}, 21));  // the prepared statements
  const int64_t before = exchanges();
  const int64_t version = value_of(store_->version());
  std::vector<JobEnd> ended = value_of(
      store_->record_exits({{a, 1, 1, 0, 0, std::nullopt}, {b, 1, 2, 0, 6, std::nullopt}}, 22));
  EXPECT_EQ(exchanges() - before, 1);
  ASSERT_EQ(ended.size(), 2u);
  EXPECT_EQ(ended[1].reason, "killed by signal 6");
  EXPECT_GT(value_of(store_->version()), version);
  EXPECT_EQ(get(a).state, JobState::kCompleted);
  EXPECT_EQ(get(b).state, JobState::kFailed);
}

// Jobs that share a node: each start carries its grants, kept with the job; two such jobs may
// hold one node together, a job that takes nodes whole may not join them, and a requeue forgets
// the grants with the nodes.
TEST_P(EndRuleStoreTest, SharedStartsKeepTheirGrantsAndMeetOnlyEachOther) {
  JobId a = add(simple_job("a")), b = add(simple_job("b")), whole = add(simple_job("whole"));
  JobStart start_a = start_of(a, {2}), start_b = start_of(b, {2});
  start_a.shares_nodes = start_b.shares_nodes = true;
  start_a.grants = {NodeGrant{.node = 2, .cores = {0}, .memory_mb = 512}};
  start_b.grants = {NodeGrant{.node = 2, .cores = {1, 2}, .memory_mb = 1024, .gpus = {3}}};
  EXPECT_OK(store_->commit_pass(pass_of({start_a, start_b}), 20));
  EXPECT_EQ(get(a).grants, start_a.grants);
  EXPECT_EQ(get(b).grants, start_b.grants);
  EXPECT_FALSE(store_->commit_pass(pass_of({start_of(whole, {2})}), 21));
  EXPECT_EQ(get(whole).state, JobState::kPending);
  // a ends; b is requeued: its grants go with its nodes.
  EXPECT_EQ(value_of(store_->record_exits({{a, 1, 2, 0, 0, std::nullopt}}, 22)).size(), 1u);
  EXPECT_EQ(get(a).grants, start_a.grants) << "kept for the record";
  JobEnd requeue;
  requeue.job = b;
  requeue.attempt = 1;
  requeue.state = JobState::kPending;
  requeue.reason = "node failed";
  EXPECT_TRUE(value_of(store_->end_job(requeue, 23)));
  EXPECT_TRUE(get(b).grants.empty());
}

INSTANTIATE_TEST_SUITE_P(Engines, EndRuleStoreTest,
                         ::testing::Values(Engine::kSqlite, Engine::kPostgres), test::engine_name);

}  // namespace
}  // namespace trellis::store_test
