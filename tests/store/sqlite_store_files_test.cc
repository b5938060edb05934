// SqliteStore across connections and files: readers beside a writer, reopening, locked files,
// concurrent writers, the schema's version checks, files that are not stores, and open_store().
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "store/state_store.h"
#include "store_fixture.h"

namespace trellis::store_test {
namespace {

// --- Several connections, and the schema

TEST_F(SqliteStoreTest, ReadOnlyOpenOfAMissingFileIsNotFoundAndCreatesNothing) {
  std::string missing = (dir_.path() / "missing.db").string();
  Error e = error_of(open_sqlite(missing, {.read_only = true}));
  EXPECT_EQ(e.code, Error::Code::kNotFound);
  EXPECT_TRUE(has(e.message, missing)) << e.message;
  EXPECT_FALSE(std::filesystem::exists(missing));
}

TEST_F(SqliteStoreTest, ReopeningKeepsEverything) {
  JobId a = add(simple_job("a"));
  EXPECT_OK(store_->commit_pass(pass_of({start_of(a, {2})}), 5));
  int64_t v = version();
  store_.reset();
  store_ = value_of(open_sqlite(path_));
  ASSERT_TRUE(store_);
  EXPECT_EQ(version(), v);
  EXPECT_EQ(get(a).state, JobState::kRunning);
  EXPECT_OK(store_->init_cluster("torus:4x4", node_names(16)));
  RawDb raw(path_);
  EXPECT_EQ(raw.scalar("SELECT value FROM meta WHERE key = 'schema_version'"),
            std::to_string(kStoreSchemaVersion));
  EXPECT_EQ(raw.scalar("PRAGMA journal_mode"), "wal");

  // With no writer open, a read-only store still opens and reads.
  store_.reset();
  std::unique_ptr<SqlStore> reader = open_reader();
  ASSERT_TRUE(reader);
  EXPECT_EQ(value_of(reader->job(a)).nodes, std::vector<NodeId>{2});
  EXPECT_EQ(value_of(reader->version()), v);
}

TEST_F(SqliteStoreTest, ReadersAreNotBlockedByAWriteInProgress) {
  JobId a = add(simple_job("a"));
  std::unique_ptr<SqlStore> reader = open_reader();
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
    ASSERT_EQ(raw.exec("UPDATE meta SET value = " + std::to_string(kStoreSchemaVersion + 1) +
                       " WHERE key = 'schema_version'"),
              SQLITE_OK);
  }
  for (bool read_only : {false, true}) {
    Error e = error_of(open_sqlite(path_, {.read_only = read_only}));
    EXPECT_TRUE(has(e.message, "schema version " + std::to_string(kStoreSchemaVersion + 1)) &&
                has(e.message, "newer") && has(e.message, path_))
        << e.message;
  }
}

TEST_F(SqliteStoreTest, AStoreFromTheSchemaBeforeIsMigratedByAWriterAndKeepsItsJobs) {
  JobId a = add(simple_job("a"));
  EXPECT_OK(store_->commit_pass(pass_of({start_of(a, {2})}), 5));
  store_.reset();
  {
    // Version 2 as it was: no seconds_frozen column (version 3), no hold or node_failures
    // (version 4), nor schema 5's job model, nor tasks and steps (version 6), nor a pending job's
    // owner (version 7), nor the later versions' columns and tables (up to 13's QOS).
    RawDb raw(path_);
    ASSERT_EQ(raw.exec("ALTER TABLE jobs DROP COLUMN seconds_frozen"), SQLITE_OK);
    ASSERT_EQ(raw.exec("ALTER TABLE jobs DROP COLUMN hold"), SQLITE_OK);
    ASSERT_EQ(raw.exec("ALTER TABLE jobs DROP COLUMN node_failures"), SQLITE_OK);
    for (const char* index :
         {"jobs_by_uid_end", "jobs_by_end", "jobs_by_array", "jobs_by_uid_name"})
      ASSERT_EQ(raw.exec(std::string("DROP INDEX ") + index), SQLITE_OK) << raw.message();
    for (const char* column : {"partition_name", "array_job", "array_task", "array_limit",
                               "dependency", "kill_on_invalid_dep", "script_id"})
      ASSERT_EQ(raw.exec(std::string("ALTER TABLE jobs DROP COLUMN ") + column), SQLITE_OK)
          << raw.message();
    ASSERT_EQ(raw.exec("DROP TABLE job_scripts"), SQLITE_OK);
    ASSERT_EQ(raw.exec("ALTER TABLE jobs DROP COLUMN tasks"), SQLITE_OK);
    ASSERT_EQ(raw.exec("DROP TABLE step_nodes"), SQLITE_OK);
    ASSERT_EQ(raw.exec("DROP TABLE steps"), SQLITE_OK);
    ASSERT_EQ(raw.exec("ALTER TABLE jobs DROP COLUMN owner"), SQLITE_OK);
    ASSERT_EQ(raw.exec("ALTER TABLE jobs DROP COLUMN resources"), SQLITE_OK);
    ASSERT_EQ(raw.exec("ALTER TABLE jobs DROP COLUMN grants"), SQLITE_OK);
    ASSERT_EQ(raw.exec("DROP TABLE task_usage"), SQLITE_OK);
    for (const char* table : {"accounts", "account_users", "associations", "qos"})
      ASSERT_EQ(raw.exec(std::string("DROP TABLE ") + table), SQLITE_OK);
    ASSERT_EQ(raw.exec("ALTER TABLE jobs DROP COLUMN account"), SQLITE_OK);
    ASSERT_EQ(raw.exec("ALTER TABLE jobs DROP COLUMN qos"), SQLITE_OK);
    ASSERT_EQ(raw.exec("UPDATE meta SET value = 2 WHERE key = 'schema_version'"), SQLITE_OK);
  }
  // A reader cannot migrate it: it says how.
  Error e = error_of(open_sqlite(path_, {.read_only = true}));
  EXPECT_TRUE(has(e.message, "schema version 2") && has(e.message, "older")) << e.message;
  // A writer migrates it; the job is as it was, and the new column works.
  store_ = value_of(open_sqlite(path_));
  ASSERT_TRUE(store_);
  StoredJob job = get(a);
  EXPECT_EQ(job.state, JobState::kRunning);
  EXPECT_EQ(job.nodes, std::vector<NodeId>{2});
  EXPECT_EQ(job.seconds_frozen, 0);
  EXPECT_EQ(job.hold, "");
  EXPECT_EQ(job.node_failures, 0);
  EXPECT_EQ(job.owner, "");                                    // whichever controller schedules
  EXPECT_EQ(job.resources, ResourceRequest{});                 // one core per task, nothing more
  EXPECT_TRUE(job.grants.empty());                             // whole nodes (version 10)
  EXPECT_EQ(job.account, "");                                  // no account (version 12)
  EXPECT_EQ(value_of(store_->account_book()), AccountBook());  // root and normal alone
  EXPECT_OK(store_->record_frozen_time(a, job.attempt, 12.5));
  EXPECT_EQ(get(a).seconds_frozen, 12.5);
  // A report for another attempt changes nothing; a negative time is refused.
  EXPECT_OK(store_->record_frozen_time(a, job.attempt + 1, 99));
  EXPECT_EQ(get(a).seconds_frozen, 12.5);
  EXPECT_FALSE(store_->record_frozen_time(a, job.attempt, -1));
  // The job asks for the default tasks; it can run steps.
  EXPECT_EQ(job.tasks, TaskRequest{});
  StoredStep step;
  step.job = a;
  step.attempt = job.attempt;
  step.argv = {"true"};
  step.nodes = {2};
  step.ntasks = 1;
  EXPECT_EQ(value_of(store_->add_step(step, 1, 6)), 1);
  // Its steps' usage is kept (version 11).
  value_of(store_->record_step_exits({{a, job.attempt, 1, 2, 0, 0, "", TaskUsage{5, 6, 7}}}, 7));
  EXPECT_EQ(value_of(store_->step_usage({a}))[a].at(0).max_rss_kb, 7);
  EXPECT_EQ(RawDb(path_).scalar("SELECT value FROM meta WHERE key = 'schema_version'"),
            std::to_string(kStoreSchemaVersion));
  // Schema 4's columns came with defaults: the job is no array task, has no dependency or script.
  EXPECT_EQ(job.array_job, 0);
  EXPECT_EQ(job.array_task, -1);
  EXPECT_EQ(job.dependency, "");
  EXPECT_EQ(job.script_id, 0);
  StoredJob array = simple_job("array");
  array.script = "#!/bin/sh\ntrue\n";
  std::vector<JobId> tasks = value_of(store_->add_array(array, {0, 1}, 20));
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(value_of(store_->job_script(get(tasks[1]).script_id)), array.script);
}

TEST_F(SqliteStoreTest, FilesThatAreNotStoresAreRefused) {
  std::string text = (dir_.path() / "notes.db").string();
  std::ofstream(text) << "this is not a database, just some text long enough to be a header\n";
  for (bool read_only : {false, true}) {
    Error e = error_of(open_sqlite(text, {.read_only = read_only}));
    EXPECT_TRUE(has(e.message, "not an SQLite database") && has(e.message, text)) << e.message;
  }
  std::string other = (dir_.path() / "other.db").string();
  {
    RawDb raw(other);
    ASSERT_EQ(raw.exec("CREATE TABLE t (x)"), SQLITE_OK);
  }
  Error e = error_of(open_sqlite(other));
  EXPECT_TRUE(has(e.message, "not a Trellis store")) << e.message;
  Error dir = error_of(open_sqlite((dir_.path() / "no" / "such" / "dir.db").string()));
  EXPECT_EQ(dir.code, Error::Code::kUnavailable);
}

TEST_F(SqliteStoreTest, AWriteWaitsForAnotherWriterThenSaysTheFileIsLocked) {
  auto impatient = value_of(open_sqlite(path_, {}, /*busy_timeout_ms=*/20));
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

  // A PostgreSQL URL goes to the PostgreSQL engine: nothing listens on port 1, so it says it
  // cannot connect (after its retries), naming the server but never the password.
  Error pg = error_of(open_store("postgresql://alice:secret@127.0.0.1:1/trellis"));
  EXPECT_EQ(pg.code, Error::Code::kUnavailable);
  EXPECT_TRUE(has(pg.message, "postgresql://alice@127.0.0.1:1/trellis") &&
              has(pg.message, "cannot connect") && !has(pg.message, "secret"))
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
