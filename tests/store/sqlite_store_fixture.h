// What the SqliteStore tests share: result helpers, small builders of jobs and passes, a raw
// view of the database file, and the fixture (a store on torus:4x4 in a fresh directory).
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <string>
#include <vector>

#include "../cli_run.h"
#include "store/sqlite_store.h"

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
  return JobEnd{job, attempt, state, exit_code, signal, std::move(reason)};
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

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.str().empty());
    path_ = (dir_.path() / "state.db").string();
    store_ = value_of(SqliteStore::open(path_), "open");
    ASSERT_TRUE(store_);
    EXPECT_OK(store_->init_cluster("torus:4x4", node_names(16)));
  }

  std::unique_ptr<SqliteStore> open_reader() {
    return value_of(SqliteStore::open(path_, {.read_only = true}), "open read-only");
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

  TempDir dir_;
  std::string path_;
  std::unique_ptr<SqliteStore> store_;
};

}  // namespace trellis::store_test
