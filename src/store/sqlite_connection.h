// The SQLite mechanics under SqliteStore (sqlite_store.h): the connection with its cached
// statements, one statement in use, and transactions. Nothing here knows the schema: the schema
// and its migrations are in sqlite_schema.h, the store's reads and writes in sqlite_store.cc.
#pragma once

#include <sqlite3.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "core/result.h"
#include "store/sqlite_store.h"

namespace trellis {
namespace sqlite {

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using DbHandle = std::unique_ptr<sqlite3, DbCloser>;
using StmtHandle = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

// The kind of failure an SQLite result code is. Busy, locked, unopenable, full or failing disks
// may clear up (kUnavailable); everything else is a library failure or a broken file.
Error::Code code_of(int rc);

class Statement;

}  // namespace sqlite

// The handle, its cached statements, and how its errors are worded.
class SqliteStore::Connection {
 public:
  Connection(std::string path, sqlite::DbHandle db, bool read_only)
      : path_(std::move(path)), db_(std::move(db)), read_only_(read_only) {}

  const std::string& path() const { return path_; }
  sqlite3* db() const { return db_.get(); }
  bool read_only() const { return read_only_; }

  // Names the operation in progress, for error messages.
  void set_operation(std::string_view op) { operation_ = op; }

  // "store PATH: OP: what".
  Error fail(Error::Code code, std::string_view what) const {
    std::string message = "store " + path_ + ": ";
    if (!operation_.empty()) message += std::string(operation_) + ": ";
    return Error{message + std::string(what), code};
  }
  // A failure of SQLite, with its own message.
  Error sql_error(int rc, std::string_view what) const {
    if ((rc & 0xff) == SQLITE_NOTADB)
      return fail(sqlite::code_of(rc), "the file is not an SQLite database");
    std::string detail = sqlite3_errmsg(db_.get());
    if (detail.empty() || detail == "not an error") detail = sqlite3_errstr(rc);
    return fail(sqlite::code_of(rc), std::string(what) + ": " + detail);
  }

  // The prepared statement for `sql`, prepared on first use and kept for the connection's life.
  Result<sqlite::Statement> prepare(std::string_view sql);

  // Runs one or more statements that return no rows, uncached (setup and migrations).
  Status exec(const char* sql, std::string_view what) {
    int rc = sqlite3_exec(db_.get(), sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return sql_error(rc, what);
    return Ok{};
  }

  int busy_timeout_ms = 0;
  // The cluster's node count once known (it never changes after init_cluster); 0 before.
  int node_count = 0;

 private:
  std::string path_;
  sqlite::DbHandle db_;
  bool read_only_;
  std::string_view operation_;
  std::map<std::string, sqlite::StmtHandle, std::less<>> statements_;
};

namespace sqlite {

using Connection = SqliteStore::Connection;

// A cached statement in use: binds arguments left to right, steps, reads columns, and resets
// the statement (keeping it prepared) when it goes out of scope.
class Statement {
 public:
  Statement(const SqliteStore::Connection* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Statement(Statement&& other) noexcept
      : db_(other.db_),
        stmt_(std::exchange(other.stmt_, nullptr)),
        next_(other.next_),
        bind_rc_(other.bind_rc_) {}
  Statement& operator=(Statement&&) = delete;
  ~Statement() {
    if (stmt_) {
      sqlite3_reset(stmt_);
      sqlite3_clear_bindings(stmt_);
    }
  }

  Statement& bind(int64_t v) { return check(sqlite3_bind_int64(stmt_, ++next_, v)); }
  Statement& bind(int v) { return check(sqlite3_bind_int(stmt_, ++next_, v)); }
  Statement& bind(double v) { return check(sqlite3_bind_double(stmt_, ++next_, v)); }
  Statement& bind(std::string_view v) {
    return check(
        sqlite3_bind_text64(stmt_, ++next_, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  Statement& bind(const char* v) { return bind(std::string_view(v)); }
  Statement& bind(const std::string& v) { return bind(std::string_view(v)); }

  // The raw result code of the next step: SQLITE_ROW, SQLITE_DONE or an error.
  int step_rc() { return bind_rc_ != SQLITE_OK ? bind_rc_ : sqlite3_step(stmt_); }
  // True for a row, false when done.
  Result<bool> step() {
    int rc = step_rc();
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return error(rc);
  }
  // Runs a statement that returns no rows.
  Status run() {
    int rc = step_rc();
    if (rc == SQLITE_DONE || rc == SQLITE_ROW) return Ok{};
    return error(rc);
  }
  Error error(int rc) const {
    std::string sql = sqlite3_sql(stmt_);
    if (sql.size() > 60) sql = sql.substr(0, 57) + "...";
    return db_->sql_error(rc, "'" + sql + "' failed");
  }

  int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }
  int integer(int col) const { return sqlite3_column_int(stmt_, col); }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }
  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string text(int col) const {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    if (!p) return {};
    return std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, col));
  }

 private:
  Statement& check(int rc) {
    if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
    return *this;
  }

  const SqliteStore::Connection* db_;
  sqlite3_stmt* stmt_;
  int next_ = 0;
  int bind_rc_ = SQLITE_OK;
};

// Runs a statement that returns no rows.
Status run(Connection& db, std::string_view sql);

// Ends the transaction in progress, if any, undoing it.
void rollback(Connection& db);

// Runs `body` in one transaction under the name `op`. A writer (BEGIN IMMEDIATE) takes the
// file's write lock at once, so it waits for another process's writer (the busy timeout) rather
// than failing halfway through. body(changed) sets `changed` when it wrote something: then the
// change counter is bumped and the transaction committed; otherwise, or on error, it is rolled
// back, leaving nothing half-applied.
template <typename Body>
auto transaction(Connection& db, std::string_view op, bool write, Body&& body)
    -> decltype(body(std::declval<bool&>())) {
  db.set_operation(op);
  if (write && db.read_only()) {
    return db.fail(Error::Code::kInvalidArgument,
                   "the store is open read-only, it takes no changes");
  }
  if (Status s = run(db, write ? "BEGIN IMMEDIATE" : "BEGIN"); !s) {
    if ((sqlite3_errcode(db.db()) & 0xff) == SQLITE_BUSY) {
      return db.fail(Error::Code::kUnavailable,
                     "the database is locked by another connection (waited " +
                         std::to_string(db.busy_timeout_ms) + " ms)");
    }
    return s.error();
  }
  bool changed = false;
  auto result = body(changed);
  if (!result || !changed) {
    rollback(db);
    return result;
  }
  Status done = run(db, "UPDATE meta SET value = value + 1 WHERE key = 'version'");
  if (done) done = run(db, "COMMIT");
  if (!done) {
    rollback(db);
    return done.error();
  }
  return result;
}

}  // namespace sqlite
}  // namespace trellis
