// SqliteStore across connections and files: readers beside a writer, reopening, locked files,
// concurrent writers, the schema's version checks, files that are not stores, and open_store().
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "sqlite_store_fixture.h"
#include "store/state_store.h"

namespace trellis::store_test {
namespace {

// --- Several connections, and the schema

TEST_F(SqliteStoreTest, AWriterAndAReadOnlyReaderSeeEachOthersCommits) {
  std::unique_ptr<SqliteStore> reader = open_reader();
  ASSERT_TRUE(reader);
  int64_t seen = value_of(reader->version());
  EXPECT_EQ(value_of(reader->machine_spec()), "torus:4x4");

  JobId a = add(simple_job("a"));
  int64_t after_add = value_of(reader->version());
  EXPECT_GT(after_add, seen);
  EXPECT_EQ(value_of(reader->job(a)).name, "a");
  EXPECT_OK(store_->commit_pass(pass_of({start_of(a, {9})}), 20));
  EXPECT_GT(value_of(reader->version()), after_add);
  EXPECT_EQ(value_of(reader->list_nodes())[9].jobs, std::vector<JobId>{a});
  EXPECT_EQ(value_of(reader->events(0, 10)).size(), 2u);
  EXPECT_EQ(value_of(reader->version()), version());

  // The reader takes no writes, and says why.
  Error refused = error_of(reader->add_job(simple_job("b"), 1));
  EXPECT_EQ(refused.code, Error::Code::kInvalidArgument);
  EXPECT_TRUE(has(refused.message, "read-only") && has(refused.message, path_)) << refused.message;
  EXPECT_FALSE(reader->commit_pass(pass_of({start_of(a, {1}, 2)}), 1));
  EXPECT_FALSE(reader->end_job(ending(a, 1, JobState::kCompleted), 1));
  EXPECT_FALSE(reader->nodes_seen({"n0"}, "h", 1));
  EXPECT_FALSE(reader->init_cluster("torus:4x4", node_names(16)));
  EXPECT_EQ(value_of(reader->list_jobs({})).size(), 1u);

  // A second writer on the same file, and the first sees its commits.
  auto second = value_of(SqliteStore::open(path_));
  ASSERT_TRUE(second);
  int64_t before = version();
  JobId b = value_of(second->add_job(simple_job("b"), 30));
  EXPECT_GT(b, a);
  EXPECT_GT(version(), before);
  EXPECT_EQ(get(b).name, "b");
}

TEST_F(SqliteStoreTest, ReadOnlyOpenOfAMissingFileIsNotFoundAndCreatesNothing) {
  std::string missing = (dir_.path() / "missing.db").string();
  Error e = error_of(SqliteStore::open(missing, {.read_only = true}));
  EXPECT_EQ(e.code, Error::Code::kNotFound);
  EXPECT_TRUE(has(e.message, missing)) << e.message;
  EXPECT_FALSE(std::filesystem::exists(missing));
}

TEST_F(SqliteStoreTest, ReopeningKeepsEverything) {
  JobId a = add(simple_job("a"));
  EXPECT_OK(store_->commit_pass(pass_of({start_of(a, {2})}), 5));
  int64_t v = version();
  store_.reset();
  store_ = value_of(SqliteStore::open(path_));
  ASSERT_TRUE(store_);
  EXPECT_EQ(version(), v);
  EXPECT_EQ(get(a).state, JobState::kRunning);
  EXPECT_OK(store_->init_cluster("torus:4x4", node_names(16)));
  RawDb raw(path_);
  EXPECT_EQ(raw.scalar("SELECT value FROM meta WHERE key = 'schema_version'"),
            std::to_string(kSqliteSchemaVersion));
  EXPECT_EQ(raw.scalar("PRAGMA journal_mode"), "wal");

  // With no writer open, a read-only store still opens and reads.
  store_.reset();
  std::unique_ptr<SqliteStore> reader = open_reader();
  ASSERT_TRUE(reader);
  EXPECT_EQ(value_of(reader->job(a)).nodes, std::vector<NodeId>{2});
  EXPECT_EQ(value_of(reader->version()), v);
}

TEST_F(SqliteStoreTest, ReadersAreNotBlockedByAWriteInProgress) {
  JobId a = add(simple_job("a"));
  std::unique_ptr<SqliteStore> reader = open_reader();
  ASSERT_TRUE(reader);
  RawDb raw(path_);
  ASSERT_EQ(raw.exec("BEGIN IMMEDIATE"), SQLITE_OK);
  ASSERT_EQ(raw.exec("UPDATE jobs SET name = 'uncommitted'"), SQLITE_OK);
  // Both stores read the last commit, at once, while the other writer holds the write lock.
  EXPECT_EQ(value_of(reader->job(a)).name, "a");
  EXPECT_EQ(get(a).name, "a");
  ASSERT_EQ(raw.exec("COMMIT"), SQLITE_OK);
  EXPECT_EQ(value_of(reader->job(a)).name, "uncommitted");
}

TEST_F(SqliteStoreTest, AStoreFromANewerSchemaIsRefused) {
  store_.reset();
  {
    RawDb raw(path_);
    ASSERT_EQ(raw.exec("UPDATE meta SET value = " + std::to_string(kSqliteSchemaVersion + 1) +
                       " WHERE key = 'schema_version'"),
              SQLITE_OK);
  }
  for (bool read_only : {false, true}) {
    Error e = error_of(SqliteStore::open(path_, {.read_only = read_only}));
    EXPECT_TRUE(has(e.message, "schema version " + std::to_string(kSqliteSchemaVersion + 1)) &&
                has(e.message, "newer") && has(e.message, path_))
        << e.message;
  }
}

TEST_F(SqliteStoreTest, FilesThatAreNotStoresAreRefused) {
  std::string text = (dir_.path() / "notes.db").string();
  std::ofstream(text) << "this is not a database, just some text long enough to be a header\n";
  for (bool read_only : {false, true}) {
    Error e = error_of(SqliteStore::open(text, {.read_only = read_only}));
    EXPECT_TRUE(has(e.message, "not an SQLite database") && has(e.message, text)) << e.message;
  }
  std::string other = (dir_.path() / "other.db").string();
  {
    RawDb raw(other);
    ASSERT_EQ(raw.exec("CREATE TABLE t (x)"), SQLITE_OK);
  }
  Error e = error_of(SqliteStore::open(other));
  EXPECT_TRUE(has(e.message, "not a Trellis store")) << e.message;
  Error dir = error_of(SqliteStore::open((dir_.path() / "no" / "such" / "dir.db").string()));
  EXPECT_EQ(dir.code, Error::Code::kUnavailable);
}

TEST_F(SqliteStoreTest, AWriteWaitsForAnotherWriterThenSaysTheFileIsLocked) {
  auto impatient = value_of(SqliteStore::open(path_, {}, /*busy_timeout_ms=*/20));
  ASSERT_TRUE(impatient);
  RawDb raw(path_);
  ASSERT_EQ(raw.exec("BEGIN IMMEDIATE"), SQLITE_OK);
  Error e = error_of(impatient->add_job(simple_job("a"), 1));
  EXPECT_EQ(e.code, Error::Code::kUnavailable);
  EXPECT_TRUE(has(e.message, "locked") && has(e.message, path_)) << e.message;
  EXPECT_EQ(value_of(impatient->list_jobs({})).size(), 0u);  // reading still works
  ASSERT_EQ(raw.exec("ROLLBACK"), SQLITE_OK);
  EXPECT_GT(value_of(impatient->add_job(simple_job("a"), 1)), 0);
}

// Adds `per_thread` jobs from each store in `stores`, `threads_per_store` threads on each.
void add_concurrently(const std::vector<SqliteStore*>& stores, int threads_per_store,
                      int per_thread, std::vector<JobId>& ids) {
  std::mutex mutex;
  std::vector<std::thread> threads;
  for (SqliteStore* store : stores) {
    for (int t = 0; t < threads_per_store; ++t) {
      threads.emplace_back([&, store, t] {
        std::vector<JobId> mine;
        for (int i = 0; i < per_thread; ++i) {
          Result<JobId> id = store->add_job(simple_job(numbered("t", t)), i);
          if (id) mine.push_back(*id);
        }
        std::lock_guard lock(mutex);
        ids.insert(ids.end(), mine.begin(), mine.end());
      });
    }
  }
  for (std::thread& t : threads) t.join();
}

void expect_distinct_and_gap_free(SqliteStore& store, const std::vector<JobId>& ids,
                                  size_t expected) {
  EXPECT_EQ(ids.size(), expected);
  EXPECT_EQ(std::set<JobId>(ids.begin(), ids.end()).size(), expected);
  EXPECT_EQ(value_of(store.list_jobs({})).size(), expected);
  std::vector<StoredEvent> events = value_of(store.events(0, 1 << 30));
  ASSERT_EQ(events.size(), expected);
  std::set<JobId> logged;
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].seq, static_cast<int64_t>(i + 1));
    logged.insert(events[i].job);
  }
  EXPECT_EQ(logged, std::set<JobId>(ids.begin(), ids.end()));
}

TEST_F(SqliteStoreTest, FourThreadsOnOneStore) {
  std::vector<JobId> ids;
  add_concurrently({store_.get()}, 4, 500, ids);
  expect_distinct_and_gap_free(*store_, ids, 2000);
}

TEST_F(SqliteStoreTest, TwoStoresOnOneFileWithTwoThreadsEach) {
  auto second = value_of(SqliteStore::open(path_));
  ASSERT_TRUE(second);
  std::vector<JobId> ids;
  add_concurrently({store_.get(), second.get()}, 2, 500, ids);
  expect_distinct_and_gap_free(*second, ids, 2000);
}

// Prints (does not assert) the rates of the controller's hot paths.
TEST_F(SqliteStoreTest, Throughput) {
  using Clock = std::chrono::steady_clock;
  constexpr int kJobs = 500;
  std::vector<JobId> ids;
  auto t0 = Clock::now();
  for (int i = 0; i < kJobs; ++i) ids.push_back(add(simple_job("j"), i));
  auto t1 = Clock::now();
  // One start per pass on 4 nodes, ended before the next, with a note and the core state.
  for (int i = 0; i < kJobs; ++i) {
    PassCommit pass = pass_of({start_of(ids[i], {0, 1, 2, 3})});
    if (i + 1 < kJobs) pass.notes = {{ids[i + 1], "Resources", static_cast<Seconds>(i + 1)}};
    pass.core_state = "reservation " + std::to_string(i);
    EXPECT_OK(store_->commit_pass(pass, i));
    EXPECT_TRUE(value_of(store_->end_job(ending(ids[i], 1, JobState::kCompleted), i + 0.5)));
  }
  auto t2 = Clock::now();
  double add_s = std::chrono::duration<double>(t1 - t0).count();
  double pass_s = std::chrono::duration<double>(t2 - t1).count();
  std::printf("[ sqlite   ] add_job: %.0f/s; commit_pass + end_job pairs: %.0f/s\n", kJobs / add_s,
              kJobs / pass_s);
}

// --- open_store()

TEST(SqliteOpenStoreTest, UrlsPickTheBackendOrSayWhy) {
  TempDir dir;
  std::string path = (dir.path() / "a.db").string();
  auto store = open_store("sqlite:" + path);
  ASSERT_TRUE(store) << store.error().message;
  EXPECT_TRUE(std::filesystem::exists(path));
  auto bare = open_store(path, {.read_only = true});
  ASSERT_TRUE(bare) << bare.error().message;
  auto other = open_store((dir.path() / "b.db").string());
  EXPECT_TRUE(other) << other.error().message;

  Error pg = error_of(open_store("postgresql://db.example/trellis"));
  EXPECT_EQ(pg.code, Error::Code::kInvalidArgument);
  EXPECT_TRUE(has(pg.message, "postgresql://") && has(pg.message, "not supported yet"))
      << pg.message;
  Error unknown = error_of(open_store("mysql://db/trellis"));
  EXPECT_TRUE(has(unknown.message, "'mysql'")) << unknown.message;
  EXPECT_FALSE(open_store("sqlite:"));
  Error plain = error_of(open_store((dir.path() / "state.txt").string()));
  EXPECT_TRUE(has(plain.message, "sqlite:PATH")) << plain.message;
  Error missing =
      error_of(open_store("sqlite:" + (dir.path() / "none.db").string(), {.read_only = true}));
  EXPECT_EQ(missing.code, Error::Code::kNotFound);
}

}  // namespace
}  // namespace trellis::store_test
