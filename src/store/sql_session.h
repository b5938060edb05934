// The database under the store (sql_store.h), as the store's code sees it: one connection that
// runs statements with '?' parameters, in transactions. SQLite (sqlite_session.h) and PostgreSQL
// (postgres_session.h) implement it; everything that differs between the two engines is in those
// two files and in the Dialect below, so the store's reads and writes are written once.
//
//   Result<sql::Rows> rows = db.query("SELECT name FROM nodes WHERE id = ?", {id});
//   std::string name = rows->text(0, 0);
//
// A session is used by one thread at a time (SqlStore holds a mutex around it).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/result.h"

namespace trellis::sql {

// A value bound to a statement's next '?'.
class Param {
 public:
  Param(int64_t v) : value_(v) {}                        // NOLINT: implicit by design
  Param(int v) : value_(static_cast<int64_t>(v)) {}      // NOLINT
  Param(double v) : value_(v) {}                         // NOLINT
  Param(std::string_view v) : value_(std::string(v)) {}  // NOLINT
  Param(const char* v) : value_(std::string(v)) {}       // NOLINT
  Param(const std::string& v) : value_(v) {}             // NOLINT
  Param(std::string&& v) : value_(std::move(v)) {}       // NOLINT

  const std::variant<int64_t, double, std::string>& value() const { return value_; }
  // The value as text, exactly (doubles in their shortest form that reads back the same).
  std::string to_text() const;

 private:
  std::variant<int64_t, double, std::string> value_;
};

// What a statement returned: its rows (read by row and column index) and, for INSERT, UPDATE and
// DELETE, how many rows it changed. A cell that is not of the type asked for is converted the way
// the engine would (PostgreSQL returns every value as text).
class Rows {
 public:
  using Cell = std::variant<std::monostate, int64_t, double, std::string>;

  size_t size() const { return rows_.size(); }
  bool empty() const { return rows_.empty(); }
  int64_t affected() const { return affected_; }

  bool is_null(size_t row, int col) const;
  int64_t int64(size_t row, int col) const;
  int integer(size_t row, int col) const { return static_cast<int>(int64(row, col)); }
  double real(size_t row, int col) const;
  std::string text(size_t row, int col) const;

  // For the sessions that build the result.
  void add_row(std::vector<Cell> cells) { rows_.push_back(std::move(cells)); }
  void set_affected(int64_t n) { affected_ = n; }

 private:
  std::vector<std::vector<Cell>> rows_;
  int64_t affected_ = 0;
};

// The few pieces of SQL that the two engines spell differently.
struct Dialect {
  std::string_view engine;  // "SQLite", "PostgreSQL"
  // A subquery giving the integers of a JSON array bound to its one '?': "id IN (<this>)".
  std::string_view ints_from_json;
  // The same for an array of strings.
  std::string_view texts_from_json;
  // One row of two counts: whether the table `meta` exists (0 or 1), and how many tables exist.
  std::string_view count_tables;
};

class Session {
 public:
  Session(std::string name, bool read_only) : name_(std::move(name)), read_only_(read_only) {}
  virtual ~Session() = default;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // How messages name the store: "store /var/lib/trellis/state.db".
  const std::string& name() const { return name_; }
  bool read_only() const { return read_only_; }
  virtual const Dialect& dialect() const = 0;

  // Names the operation in progress, for error messages.
  void set_operation(std::string_view op) { operation_ = op; }
  // "store NAME: OP: what".
  Error fail(Error::Code code, std::string_view what) const;

  // Runs one statement with '?' placeholders bound to `params` in order. Statements are prepared
  // on first use and kept for the session's life. A refused constraint (unique index, check,
  // trigger) fails with kDoesNotFitNow; a lost connection with kUnavailable (and then
  // connection_lost() is true until the next begin()).
  virtual Result<Rows> query(std::string_view sql, std::span<const Param> params) = 0;
  Result<Rows> query(std::string_view sql, std::initializer_list<Param> params = {}) {
    return query(sql, std::span<const Param>(params.begin(), params.size()));
  }
  // Runs a script of statements without parameters, uncached (the schema's migrations).
  virtual Status exec_script(std::string_view sql, std::string_view what) = 0;

  // Transactions. A writer takes the store's write lock at begin(), so writers run one at a time
  // across every process (SQLite: BEGIN IMMEDIATE; PostgreSQL: a transaction-scoped advisory
  // lock) and never fail halfway on a conflict; readers never wait for writers.
  virtual Status begin(bool write) = 0;
  virtual Status commit() = 0;
  virtual void rollback() = 0;
  // Whether the last failure was the connection going away (a transaction that had not reached
  // commit() then did nothing, and may be run again).
  virtual bool connection_lost() const { return false; }
  // Called inside a write transaction that changes the store's version, before its commit: the
  // PostgreSQL session announces the change to listening controllers (NOTIFY, delivered only if
  // the transaction commits); SQLite has no one to tell.
  virtual Status announce_change() { return Ok{}; }

  // The cluster's node count once known (it never changes after init_cluster); 0 before.
  int node_count = 0;

 private:
  std::string name_;
  bool read_only_;
  std::string_view operation_;
};

// How many times transaction() runs a body whose connection was lost before it committed.
inline constexpr int kTransactionAttempts = 3;

// Whether a write bumps the change counter. Bookkeeping that no cache of the store depends on (a
// heartbeat's time, the scheduler lease) is uncounted, so it wakes no controller.
enum class Counting { kCounted, kUncounted };

// Runs `body` in one transaction under the name `op`. body(changed) sets `changed` when it wrote
// something: then the change counter (meta.version) is bumped (unless `counting` is kUncounted)
// and the transaction committed; otherwise, or on error, it is rolled back, leaving nothing
// half-applied. A transaction whose
// connection was lost before its commit is run again (the session reconnects); one lost during
// its commit fails with kUnavailable, since whether it committed is not known.
template <typename Body>
auto transaction(Session& db, std::string_view op, bool write, Body&& body,
                 Counting counting = Counting::kCounted) -> decltype(body(std::declval<bool&>())) {
  for (int attempt = 1;; ++attempt) {
    db.set_operation(op);
    if (write && db.read_only()) {
      return db.fail(Error::Code::kInvalidArgument,
                     "the store is open read-only, it takes no changes");
    }
    if (Status s = db.begin(write); !s) {
      if (attempt < kTransactionAttempts && db.connection_lost()) continue;  // reconnects
      return s.error();
    }
    bool changed = false;
    auto result = body(changed);
    Status done = Ok{};
    if (result && changed && counting == Counting::kCounted) {
      Result<Rows> bumped =
          db.query("UPDATE meta SET value = CAST(value AS BIGINT) + 1 WHERE key = 'version'");
      done = bumped ? db.announce_change() : Status(bumped.error());
    }
    bool retry = attempt < kTransactionAttempts && db.connection_lost();
    if (!result || !changed || !done) {
      db.rollback();
      if ((!result || !done) && retry) continue;  // nothing was committed: run it again
      if (!done) return done.error();
      return result;
    }
    if (Status committed = db.commit(); !committed) {
      db.rollback();
      return committed.error();
    }
    return result;
  }
}

}  // namespace trellis::sql
