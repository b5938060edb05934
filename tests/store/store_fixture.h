// What the store tests share: result helpers, small builders of jobs and passes, a raw view of
// the database, and the fixtures: a store on torus:4x4 in a fresh SQLite file or a fresh
// PostgreSQL database (StoreTest runs each test on both engines), or in an SQLite file only
// (SqliteStoreTest, for what only a file has: paths, locks, WAL).
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <string>
#include <vector>

#include "../cli_run.h"
#include "../store_engines.h"
#include "store/postgres_session.h"
#include "store/sql_schema.h"
#include "store/sql_store.h"
#include "store/sqlite_session.h"

namespace trellis::store_test {

using test::TempDir;

// The value of a result that must be ok; a test failure (and a default value) otherwise.
template <typename T>
T value_of(Result<T> r, const char* what = "result") {
  if (!r) {
    ADD_FAILURE() << what << ": " << r.error().message;
    return T{};
  }
  return std::move(*r);
}

#define EXPECT_OK(expr)                                                    \
  do {                                                                     \
    auto result_ = (expr);                                                 \
    EXPECT_TRUE(result_.ok()) << #expr << ": " << result_.error().message; \
  } while (0)

// The error of a result that must have failed; a test failure otherwise.
template <typename T>
Error error_of(const Result<T>& r) {
  if (r) {
    ADD_FAILURE() << "expected an error";
    return Error{};
  }
  return r.error();
}

inline bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A raw connection to the same file, as another process (or a hand with the sqlite3 shell).
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) ADD_FAILURE() << sqlite3_errmsg(db_);
  }
  ~RawDb() { sqlite3_close(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;
  // The result code of running `sql` (SQLITE_OK on success); the primary code only.
  int exec(const std::string& sql) {
    return sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) & 0xff;
  }
  std::string message() const { return sqlite3_errmsg(db_); }
  // The first column of the first row of `sql`, as text ("" when none).
  std::string scalar(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    std::string out;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0)) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
    return out;
  }

 private:
  sqlite3* db_ = nullptr;
};

// The SQLite store at `path`, as open_store("sqlite:PATH") opens it, with a busy timeout of choice.
inline Result<std::unique_ptr<SqlStore>> open_sqlite(
    const std::string& path, StoreOptions options = {},
    int busy_timeout_ms = sql::kSqliteBusyTimeoutMs) {
  Result<std::unique_ptr<sql::Session>> session =
      sql::open_sqlite_session(path, options.read_only, busy_timeout_ms);
  if (!session) return session.error();
  return SqlStore::open(std::move(*session));
}

// "n3": built by appending, which GCC 12's -Wrestrict does not misread as "n" + to_string does.
inline std::string numbered(std::string prefix, int i) {
  prefix += std::to_string(i);
  return prefix;
}

inline std::vector<std::string> node_names(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back(numbered("n", i));
  return names;
}

inline StoredJob simple_job(std::string name, int nodes = 1, bool share = false) {
  StoredJob job;
  job.uid = 1000;
  job.gid = 100;
  job.user = "alice";
  job.name = std::move(name);
  job.request = Request::count(nodes);
  job.share = share;
  job.time_limit = 60;
  job.argv = {"/bin/true"};
  return job;
}

inline JobStart start_of(JobId job, std::vector<NodeId> nodes, int attempt = 1) {
  JobStart s;
  s.job = job;
  s.attempt = attempt;
  s.nodes = std::move(nodes);
  return s;
}

inline JobEnd ending(JobId job, int attempt, JobState state, int exit_code = 0, int signal = 0,
                     std::string reason = "") {
  JobEnd end;
  end.job = job;
  end.attempt = attempt;
  end.state = state;
  end.exit_code = exit_code;
  end.signal = signal;
  end.reason = std::move(reason);
  return end;
}

inline JobQuery by_ids(std::vector<JobId> ids) {
  JobQuery q;
  q.ids = std::move(ids);
  return q;
}
inline JobQuery by_states(std::vector<JobState> states, bool only_active = false) {
  JobQuery q;
  q.states = std::move(states);
  q.only_active = only_active;
  return q;
}

inline PassCommit pass_of(std::vector<JobStart> starts) {
  PassCommit p;
  p.starts = std::move(starts);
  return p;
}

using test::Engine;

// A store on torus:4x4, of either engine, and what the tests do to it beside the store.
class StoreFixture {
 protected:
  // Opens a fresh store; skips the test (or fails it, where PostgreSQL is required) when the
  // engine is PostgreSQL and no server can start.
  void open_fresh(Engine engine) {
    engine_ = engine;
    if (engine == Engine::kSqlite) {
      ASSERT_FALSE(dir_.str().empty());
      path_ = (dir_.path() / "state.db").string();
      where_ = path_;
    } else {
      test::fresh_postgres_database(url_, &server_);
      if (url_.empty()) return;  // skipped, or failed
      where_ = sql::redact_password(url_);
    }
    store_ = value_of(open_another(false), "open");
    ASSERT_TRUE(store_);
    EXPECT_OK(store_->init_cluster("torus:4x4", node_names(16)));
  }

  // Another connection to the same store (read-only: on PostgreSQL, as the read-only role).
  Result<std::unique_ptr<SqlStore>> open_another(bool read_only) {
    Result<std::unique_ptr<sql::Session>> session = raw_session(read_only);
    if (!session) return session.error();
    return SqlStore::open(std::move(*session));
  }
  // A second, empty store of the same engine (no cluster yet).
  Result<std::unique_ptr<SqlStore>> open_empty_store() {
    Result<std::unique_ptr<sql::Session>> session = fail("no engine");
    if (engine_ == Engine::kSqlite) {
      session = sql::open_sqlite_session((dir_.path() / "empty.db").string(), false);
    } else {
      Result<std::string> url = server_->new_database();
      if (!url) return url.error();
      session = sql::open_postgres_session(*url, false);
    }
    if (!session) return session.error();
    return SqlStore::open(std::move(*session));
  }
  std::unique_ptr<SqlStore> open_reader() { return value_of(open_another(true), "open read-only"); }
  // A session on the store's database, for SQL written by hand.
  Result<std::unique_ptr<sql::Session>> raw_session(bool read_only = false) {
    if (engine_ == Engine::kSqlite) return sql::open_sqlite_session(path_, read_only);
    return sql::open_postgres_session(read_only ? server_->reader_url(url_) : url_, read_only);
  }

  JobId add(const StoredJob& job, Seconds now = 10) { return value_of(store_->add_job(job, now)); }
  StoredJob get(JobId id) { return value_of(store_->job(id)); }
  int64_t version() { return value_of(store_->version()); }
  std::vector<StoredEvent> all_events() { return value_of(store_->events(0, 1 << 30)); }
  std::vector<std::string> event_kinds() {
    std::vector<std::string> kinds;
    for (const StoredEvent& e : all_events()) kinds.push_back(e.kind);
    return kinds;
  }

  Engine engine_ = Engine::kSqlite;
  TempDir dir_;
  std::string path_;   // SQLite
  std::string url_;    // PostgreSQL
  std::string where_;  // how messages name the store: the path or the URL
  PostgresServer* server_ = nullptr;
  std::unique_ptr<SqlStore> store_;
};

// Each test on both engines.
class StoreTest : public ::testing::TestWithParam<Engine>, public StoreFixture {
 protected:
  void SetUp() override { open_fresh(GetParam()); }
};

// Tests of what only a PostgreSQL server has.
class PostgresStoreTest : public ::testing::Test, public StoreFixture {
 protected:
  void SetUp() override { open_fresh(Engine::kPostgres); }
};

// Tests of what only an SQLite file has.
class SqliteStoreTest : public ::testing::Test, public StoreFixture {
 protected:
  void SetUp() override { open_fresh(Engine::kSqlite); }
};

}  // namespace trellis::store_test
