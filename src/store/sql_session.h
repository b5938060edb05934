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
#include <map>
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

// A statement and the values bound to its '?'s, for Session::query_batch().
struct Statement {
  std::string sql;
  std::vector<Param> params;
};

// An event of the log, kept by a write transaction until its end (transaction() appends them all
// in one statement, under the lock that orders the log).
struct PendingEvent {
  double time = 0;
  std::string kind;
  int64_t job = 0;
  std::string node;
  std::string detail;
};

// The few pieces of SQL that the two engines spell differently.
struct Dialect {
  std::string_view engine;  // "SQLite", "PostgreSQL"
  // A subquery giving the integers of a JSON array bound to its one '?': "id IN (<this>)"; its
  // column is named `value`.
  std::string_view ints_from_json;
  // The same for an array of strings.
  std::string_view texts_from_json;
  // "column<this>" tests that the column is one of the integers of a JSON array bound to its one
  // '?' (" IN (...)", " = ANY(...)"), in the form the engine's planner looks up by index.
  std::string_view ints_in;
  // The same for an array of strings.
  std::string_view texts_in;
  // One row of two counts: whether the table `meta` exists (0 or 1), and how many tables exist.
  std::string_view count_tables;
  // Appended to a SELECT in a write transaction to lock the rows it reads until the commit
  // (" FOR UPDATE"; "" in SQLite, whose writers run one at a time).
  std::string_view for_update;
  // The same, for a lock that other readers of the row may share (" FOR SHARE").
  std::string_view for_share;
  // Rows (ix, nm) of a JSON array of strings bound to its one '?': index from 0, and text.
  std::string_view indexed_texts_from_json;
  // Appends the events of a JSON array of [time, kind, job, node, detail] bound to its one '?',
  // with seqs following the log's last one, in the array's order.
  std::string_view insert_events;
  // Set-based writes (one statement for a whole batch): the rows of a JSON array of arrays bound
  // to its one '?', as a FROM item named `e` ("FROM <this>"), and how column {i} of a row is read
  // (json_column() fills in the index and the type).
  std::string_view json_rows;
  std::string_view json_item;
  // The types json_column() casts to: a 64-bit integer, a double.
  std::string_view int64_type;
  std::string_view real_type;
  // "target.id<this> AND target.id = rows.id" lets the engine drive such a statement from the
  // rows, looking each target row up by its key: PostgreSQL needs the ids as a list it looks up
  // by index (else it scans the target whole, not knowing how few the rows are); SQLite must not
  // be offered that index (else it loops over the target rows and scans the rows for each).
  std::string_view rows_ids_in;
  // A job's insert ("INSERT INTO jobs ... RETURNING id", standing for {insert}) that also appends
  // its "submit" event, whose time and detail are bound to the two '?'s after the insert's, and
  // returns the job's id: one statement, for an engine whose writes are worth folding into one
  // exchange. "" where a statement cannot do both (SQLite: no INSERT inside WITH).
  std::string_view insert_job_logged;
  // record_exits() as one statement, run with the reported jobs' rows and the log lock held:
  // binds the exits (a JSON array of [job, node, exit_code, signal, attempt], one per job, node
  // and attempt), the reported jobs' ids, the end time and the events' time; marks each exit
  // that counts, ends each job whose last node reported by the end rule (end_by_rule(), written
  // in SQL), logs its "end" event, and returns (id, attempt, state, exit_code, signal, reason) of
  // each end, by id. "" where writes cannot be folded so (SQLite).
  std::string_view record_exits_logged;
  // stop_job() as one statement, run with the job's row and the log lock held: binds the job's
  // id, the stop cause's text, the attempt (0: whichever), the reason and the time; cancels the
  // job if it is pending and the cause is a cancel of attempt 0, or makes it CG if it holds nodes
  // on that attempt and is not stopping yet, logging either; returns (state before, cancelled,
  // stopping) as one row, none when there is no such job. "" where writes cannot be folded so.
  std::string_view stop_job_logged;
};

// Column `index` of a row of dialect.json_rows, cast to `type` ("int64", "real" or "text"):
// "CAST(json_extract(e.value, '$[1]') AS INTEGER)".
std::string json_column(const Dialect& dialect, int index, std::string_view type);

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
  std::string_view operation() const { return operation_; }
  // "store NAME: OP: what".
  Error fail(Error::Code code, std::string_view what) const;

  // Runs one statement with '?' placeholders bound to `params` in order, after the statements
  // deferred before it and in the same round trip. Statements are prepared on first use and kept
  // for the session's life. A refused constraint (unique index, check, trigger) fails with
  // kDoesNotFitNow; a lost connection with kUnavailable (and then connection_lost() is true until
  // the next begin()).
  virtual Result<Rows> query(std::string_view sql, std::span<const Param> params) = 0;
  Result<Rows> query(std::string_view sql, std::initializer_list<Param> params = {}) {
    return query(sql, std::span<const Param>(params.begin(), params.size()));
  }
  // Runs `statements` in order, in one round trip with any deferred before them, and returns the
  // rows of each; the first failure fails the whole call (PostgreSQL runs none after it).
  virtual Result<std::vector<Rows>> query_batch(std::span<const Statement> statements) = 0;
  // A statement whose rows are not needed: SQLite runs it at once; PostgreSQL sends it with the
  // next query() or commit(), in the same round trip, and a failure fails that call instead.
  virtual Status defer(std::string_view sql, std::span<const Param> params) = 0;
  Status defer(std::string_view sql, std::initializer_list<Param> params = {}) {
    return defer(sql, std::span<const Param>(params.begin(), params.size()));
  }
  // A write's statement whose rows are wanted only once the transaction has committed: PostgreSQL
  // sends it with the next query() or commit() (a write made only of these is one exchange), SQLite
  // runs it at once. Its rows are appended to rows_after_commit, in the order given; a failure
  // fails the call that sent it.
  virtual Status defer_for_rows(std::string_view sql, std::span<const Param> params) {
    Result<Rows> rows = query(sql, params);
    if (!rows) return rows.error();
    rows_after_commit.push_back(std::move(*rows));
    return Ok{};
  }
  // Runs a script of statements without parameters, uncached (the schema's migrations).
  virtual Status exec_script(std::string_view sql, std::string_view what) = 0;

  // Transactions. Readers see one snapshot and never wait for writers. Writers run side by side
  // where they touch different rows: a writer locks the rows it checks before it changes them
  // (dialect().for_update), and the database's constraints refuse what two writers could not
  // both do (a node held twice). What orders them is the log: at its end a write transaction
  // takes the log lock (lock_log()), appends its events and bumps the version, and commits, all
  // in the round trip of its commit. SQLite's writers run one at a time (BEGIN IMMEDIATE).
  virtual Status begin(bool write) = 0;
  virtual Status commit() = 0;
  virtual void rollback() = 0;
  // Whether the last failure was the connection going away (a transaction that had not reached
  // commit() then did nothing, and may be run again).
  virtual bool connection_lost() const { return false; }
  // Whether the last failure is one that a new attempt of the same transaction may not meet: a
  // lost connection before the commit was sent, a deadlock between writers, a serialization
  // failure. Nothing of the transaction was committed.
  virtual bool retryable() const { return connection_lost(); }
  // Defers taking the lock that orders writers' ends (PostgreSQL: a transaction-scoped advisory
  // lock, released by the commit; SQLite: held since begin()). lock_writers_now() takes it at
  // once, for work that must not run beside any writer (a schema migration).
  virtual Status lock_log() { return Ok{}; }
  virtual Status lock_writers_now() { return Ok{}; }
  // Called inside a write transaction that changes the store's version, before its commit: the
  // PostgreSQL session announces the change to listening controllers (NOTIFY, delivered only if
  // the transaction commits); SQLite has no one to tell.
  virtual Status announce_change() { return Ok{}; }

  // Round trips to the server so far (0 for SQLite, which has none): each exchange in which the
  // session waited for the server's answer.
  int64_t round_trips() const { return round_trips_; }

  // Per operation (set_operation()'s name): calls (transaction() and single_statement() count
  // one each, whatever their attempts), round trips and statements sent (BEGIN and COMMIT
  // included), for benchmarks that count what each kind of transaction costs. SQLite counts
  // calls only.
  struct OperationCounts {
    int64_t calls = 0, round_trips = 0, statements = 0;
  };
  const std::map<std::string, OperationCounts, std::less<>>& operation_counts() const {
    return counts_;
  }
  void count_call() { ++counts_of(operation_).calls; }

  // The cluster's node count once known (it never changes after init_cluster); 0 before.
  int node_count = 0;
  // The events of the write transaction in progress (transaction() clears them at its start and
  // appends them at its end).
  std::vector<PendingEvent> events;
  // The rows of the statements given to defer_for_rows() in the last transaction (transaction()
  // clears them at each attempt's start; they are whole once it has committed).
  std::vector<Rows> rows_after_commit;

 protected:
  // One exchange with the server that carried `statements` statements.
  void note_round_trip(int64_t statements) {
    ++round_trips_;
    OperationCounts& c = counts_of(operation_);
    ++c.round_trips;
    c.statements += statements;
  }
  int64_t round_trips_ = 0;

 private:
  OperationCounts& counts_of(std::string_view op) {
    auto it = counts_.find(op);
    if (it == counts_.end()) it = counts_.emplace(std::string(op), OperationCounts{}).first;
    return it->second;
  }
  std::map<std::string, OperationCounts, std::less<>> counts_;
  std::string name_;
  bool read_only_;
  std::string_view operation_;
};

// How many times transaction() runs a body whose attempt failed in a way that a new attempt may
// not meet (Session::retryable()).
inline constexpr int kTransactionAttempts = 4;

// Whether a write bumps the change counter. Bookkeeping that no cache of the store depends on (a
// heartbeat's time, the scheduler lease) is uncounted, so it wakes no controller.
enum class Counting { kCounted, kUncounted };

// Appends the transaction's events (Session::events) under the log lock, bumps the version when
// `counted`, and announces the change; all deferred to the commit's round trip.
Status finish_write(Session& db, bool counted);

// Runs `body` in one transaction under the name `op`. body(changed) sets `changed` when it wrote
// something: then the transaction's events are logged, the change counter (meta.version) is
// bumped (unless `counting` is kUncounted) and the transaction committed; otherwise, or on error,
// it is rolled back, leaving nothing half-applied. An attempt that failed in a way the next one
// may not meet (Session::retryable(): a lost connection before the commit, a deadlock) is run
// again, up to kTransactionAttempts; one whose connection was lost during its commit fails with
// kUnavailable, since whether it committed is not known.
template <typename Body>
auto transaction(Session& db, std::string_view op, bool write, Body&& body,
                 Counting counting = Counting::kCounted) -> decltype(body(std::declval<bool&>())) {
  db.set_operation(op);
  db.count_call();
  for (int attempt = 1;; ++attempt) {
    db.set_operation(op);
    if (write && db.read_only()) {
      return db.fail(Error::Code::kInvalidArgument,
                     "the store is open read-only, it takes no changes");
    }
    db.events.clear();
    db.rows_after_commit.clear();
    if (Status s = db.begin(write); !s) {
      if (attempt < kTransactionAttempts && db.retryable()) continue;  // reconnects
      return s.error();
    }
    bool changed = false;
    auto result = body(changed);
    Status done = Ok{};
    if (result && changed) done = finish_write(db, counting == Counting::kCounted);
    if (!result || !changed || !done) {
      bool retry = attempt < kTransactionAttempts && db.retryable();
      db.rollback();
      db.events.clear();
      if ((!result || !done) && retry) continue;  // nothing was committed: run it again
      if (!done) return done.error();
      return result;
    }
    if (Status committed = db.commit(); !committed) {
      bool retry = attempt < kTransactionAttempts && db.retryable();
      db.rollback();
      db.events.clear();
      if (retry) continue;
      return committed.error();
    }
    db.events.clear();
    return result;
  }
}

// Runs `body`, which issues exactly one statement (a read, or a write that logs nothing and bumps
// no version), outside any transaction: one statement is atomic and a snapshot of its own, and
// needs no BEGIN or COMMIT round trip. A lost connection is retried as transaction() retries it.
template <typename Body>
auto single_statement(Session& db, std::string_view op, Body&& body) -> decltype(body()) {
  db.set_operation(op);
  db.count_call();
  for (int attempt = 1;; ++attempt) {
    db.set_operation(op);
    auto result = body();
    if (!result && attempt < kTransactionAttempts && db.retryable()) continue;
    return result;
  }
}

}  // namespace trellis::sql
