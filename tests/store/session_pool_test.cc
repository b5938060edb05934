// The sessions of one store object (session_pool.h): each lent to one caller at a time, opened
// only when calls overlap, never more than the pool's limit, and a store whose calls overlap runs
// them side by side (a call waiting for a row lock does not hold up the others), with the log
// still gap-free and in commit order.
#include "store/session_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <set>
#include <thread>

#include "store/sqlite_session.h"
#include "store_fixture.h"

namespace trellis::store_test {
namespace {

// Sessions on one SQLite file (the pool does not look inside them).
struct SqliteSessions {
  TempDir dir;
  std::atomic<int> opened{0};
  Result<std::unique_ptr<sql::Session>> open() {
    ++opened;
    return sql::open_sqlite_session((dir.path() / "pool.db").string(), false);
  }
};

TEST(SessionPoolTest, ASessionIsLentToOneCallerAtATimeAndNoMoreThanTheLimitAreOpened) {
  SqliteSessions sessions;
  sql::SessionPool pool(
      value_of(sessions.open()), [&] { return sessions.open(); }, 3);
  std::mutex mutex;
  std::map<sql::Session*, int> holders;  // callers holding each session now
  std::set<sql::Session*> seen;
  std::atomic<int> overlaps{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 8; ++t) {
    callers.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        sql::SessionPool::Lease lease = pool.acquire();
        {
          std::lock_guard lock(mutex);
          if (++holders[&*lease] > 1) ++overlaps;
          seen.insert(&*lease);
        }
        std::this_thread::yield();
        std::lock_guard lock(mutex);
        --holders[&*lease];
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(overlaps, 0);
  EXPECT_LE(seen.size(), 3u);
  EXPECT_LE(pool.size(), 3u);
  EXPECT_EQ(sessions.opened, static_cast<int>(pool.size()));
  // Every session came back: the counters visit each one.
  size_t visited = 0;
  pool.for_each([&](const sql::Session&) { ++visited; });
  EXPECT_EQ(visited, pool.size());
}

TEST(SessionPoolTest, OneCallerAtATimeUsesOneSession) {
  SqliteSessions sessions;
  sql::SessionPool pool(
      value_of(sessions.open()), [&] { return sessions.open(); }, 4);
  sql::Session* first = nullptr;
  for (int i = 0; i < 10; ++i) {
    sql::SessionPool::Lease lease = pool.acquire();
    if (!first) first = &*lease;
    EXPECT_EQ(&*lease, first);
  }
  EXPECT_EQ(pool.size(), 1u);
  EXPECT_EQ(sessions.opened, 1);
}

TEST(SessionPoolTest, ASessionThatCannotBeOpenedLeavesTheCallerToWaitForAnOpenOne) {
  SqliteSessions sessions;
  std::atomic<int> tries{0};
  sql::SessionPool pool(
      value_of(sessions.open()),
      [&]() -> Result<std::unique_ptr<sql::Session>> {
        ++tries;
        return Error{"the server refuses more connections", Error::Code::kUnavailable};
      },
      4);
  std::optional<sql::SessionPool::Lease> held(pool.acquire());
  std::future<sql::Session*> second =
      std::async(std::launch::async, [&] { return &*pool.acquire(); });
  // The second caller tried to open one, could not, and waits for the first session.
  while (tries == 0) std::this_thread::yield();
  sql::Session* first = &**held;
  held.reset();
  EXPECT_EQ(second.get(), first);
  EXPECT_EQ(tries, 1);  // not tried again: the limit is now what is open
  EXPECT_EQ(pool.size(), 1u);
  std::optional<sql::SessionPool::Lease> again(pool.acquire());
  EXPECT_EQ(&**again, first);
  EXPECT_EQ(tries, 1);
}

// A pass of one store object waits for a row lock another transaction holds (node 3); a
// submission through the same object commits meanwhile on a session of its own (one session per
// object would wait behind the pass, which waits for the transaction this thread holds open: it
// would never commit). The log has both, gap-free, in commit order.
TEST_F(PostgresStoreTest, CallsOfOneStoreObjectRunSideBySideOnSessionsOfTheirOwn) {
  std::unique_ptr<SqlStore> pooled =
      value_of(SqlStore::open(
                   value_of(raw_session()), [&] { return raw_session(); }, 4),
               "open pooled");
  ASSERT_TRUE(pooled);
  JobId x = add(simple_job("x", 1));
  JobId y = add(simple_job("y", 1));
  std::unique_ptr<sql::Session> other = value_of(raw_session());
  ASSERT_TRUE(other);
  ASSERT_TRUE(other->begin(true));
  ASSERT_TRUE(other->query("SELECT id FROM nodes WHERE id = 3 FOR UPDATE"));
  ASSERT_TRUE(
      other->query("INSERT INTO allocations (job_id, node_id, exclusive) VALUES (?, 3, 1)", {x}));
  ASSERT_TRUE(
      other->query("UPDATE jobs SET state = 'R', attempt = 1, nodes = '3' WHERE id = ?", {x}));

  PassCommit pass = pass_of({start_of(y, {3})});
  pass.partial = true;
  std::future<Result<PassOutcome>> waiting =
      std::async(std::launch::async, [&] { return pooled->apply_pass(pass, 20); });
  // The pass is in the server, waiting for the lock.
  std::unique_ptr<sql::Session> watcher = value_of(raw_session());
  ASSERT_TRUE(watcher);
  for (int64_t waiters = 0; waiters == 0;) {
    Result<sql::Rows> rows = watcher->query(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND "
        "datname = current_database()");
    ASSERT_TRUE(rows) << rows.error().message;
    waiters = rows->int64(0, 0);
    if (waiters == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

  std::future<Result<JobId>> submitted =
      std::async(std::launch::async, [&] { return pooled->add_job(simple_job("z", 1), 21); });
  // Bounded so that a store that queues the submission behind the pass fails here instead of
  // hanging: the transaction it would wait for is released below either way.
  bool beside = submitted.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  EXPECT_TRUE(beside) << "the submission waited for the pass";
  EXPECT_EQ(waiting.wait_for(std::chrono::seconds(0)), std::future_status::timeout)
      << "the pass did not wait for node 3";
  ASSERT_TRUE(other->commit());
  Result<JobId> z = submitted.get();
  ASSERT_TRUE(z) << z.error().message;
  Result<PassOutcome> outcome = waiting.get();
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(outcome->refused, std::vector<JobId>{y});  // node 3 is x's

  // The log: gap-free, the submission in it, and anything the pass logged after it (the pass
  // committed after the submission).
  std::vector<StoredEvent> events = all_events();
  int64_t submit_seq = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].seq, static_cast<int64_t>(i + 1));
    if (events[i].job == *z && events[i].kind == "submit") submit_seq = events[i].seq;
  }
  ASSERT_GT(submit_seq, 0);
  for (const StoredEvent& e : events) {
    if (e.time == 20) {
      EXPECT_GT(e.seq, submit_seq) << e.kind;
    }
  }
  EXPECT_EQ(get(*z).state, JobState::kPending);
}

}  // namespace
}  // namespace trellis::store_test
