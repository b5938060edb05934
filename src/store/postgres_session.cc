#include "store/postgres_session.h"

#include <libpq-fe.h>

#include <chrono>
#include <map>
#include <optional>
#include <thread>

namespace trellis::sql {
namespace {

// The advisory lock that orders writers' ends ("trel" in ASCII).
constexpr int64_t kWriteLockKey = 0x7472656c;
// Reconnection: attempts, first pause, longest pause.
constexpr int kConnectAttempts = 8;
constexpr auto kFirstPause = std::chrono::milliseconds(50);
constexpr auto kLongestPause = std::chrono::milliseconds(1000);

// `sql` with its '?' placeholders numbered $1, $2, ... as PostgreSQL wants them ('?' inside a
// quoted string or identifier is left alone).
std::string number_placeholders(std::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  int next = 0;
  char quote = 0;
  for (char c : sql) {
    if (quote) {
      if (c == quote) quote = 0;
      out += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      out += c;
    } else if (c == '?') {
      out += '$' + std::to_string(++next);
    } else {
      out += c;
    }
  }
  return out;
}

// The kind of failure a SQLSTATE is (PostgreSQL's appendix A).
Error::Code code_of(const std::string& state) {
  if (state.starts_with("08") || state.starts_with("57P") || state.starts_with("53") ||
      state.starts_with("40")) {
    return Error::Code::kUnavailable;  // connection, shutdown, resources, serialization
  }
  if (state.starts_with("23")) return Error::Code::kDoesNotFitNow;  // a refused constraint
  if (state == "42501") return Error::Code::kPermissionDenied;      // insufficient privilege
  if (state == "25006") return Error::Code::kInvalidArgument;       // a write when read-only
  return Error::Code::kInternal;
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.starts_with("ERROR:  ")) text = text.substr(8);
  return text;
}

std::string label_of(std::string_view sql) {
  if (sql.size() <= 60) return std::string(sql);
  return std::string(sql.substr(0, 57)) + "...";
}

// One statement on its way to the server: prepared (named) unless it is a control statement.
struct Outgoing {
  std::string sql;
  std::vector<std::string> values;
  bool want_rows = false;  // its rows are returned; otherwise only its failure counts
  // With want_rows: its rows go to Session::rows_after_commit, not to the call that sent it.
  bool rows_after_commit = false;
};

// Dialect::record_exits_logged. Every CTE reads the snapshot taken when the statement starts,
// after the jobs' rows and the log lock are held: `counted` are the exits of the attempt holding
// nodes on a node that had not reported (x: the exits given; j: the reported jobs that hold
// nodes); `totals` sums them per job with what its allocations held before (`held_before`)
// (materialized, so that each is computed once, not once per use in the rule's CASEs); `ending` are
// the jobs no node runs any more once those count, with how they end (the end rule, as
// end_by_rule() in store/job_state.cc); a job that ends has its allocations deleted, not marked
// (one statement must not change a row twice). Each table is reached through
// `= ANY(ARRAY(...))` of the ids it needs, as Dialect::rows_ids_in says: joined with a CTE alone,
// the planner scans the table whole (the jobs table, and the allocations' dead rows).
constexpr const char* kRecordExitsLogged =
    "WITH x AS (SELECT CAST(r.value->>0 AS BIGINT) AS job, CAST(r.value->>1 AS BIGINT) AS node, "
    "CAST(r.value->>2 AS BIGINT) AS exit_code, CAST(r.value->>3 AS BIGINT) AS signal, "
    "CAST(r.value->>4 AS BIGINT) AS attempt FROM json_array_elements(CAST(? AS JSON)) AS "
    "r(value)), "
    "j AS (SELECT id, attempt, stop, reason FROM jobs WHERE id = ANY(ARRAY(SELECT CAST(value AS "
    "BIGINT) FROM json_array_elements_text(CAST(? AS JSON)))) AND state IN ('R', 'S', 'CG')), "
    "counted AS (SELECT a.job_id, a.node_id, x.exit_code, x.signal FROM allocations a "
    "JOIN j ON a.job_id = j.id JOIN x ON x.job = a.job_id AND x.node = a.node_id "
    "AND x.attempt = j.attempt WHERE a.job_id = ANY(ARRAY(SELECT id FROM j)) AND a.exited = 0), "
    "counted_by_job AS MATERIALIZED (SELECT job_id, count(*) AS n, max(exit_code) AS exit_code, "
    "max(signal) AS signal FROM counted GROUP BY job_id), "
    "held_before AS MATERIALIZED (SELECT a.job_id, count(*) FILTER (WHERE a.exited = 0) AS "
    "running, "
    "max(a.exit_code) FILTER (WHERE a.exited = 1) AS exit_code, "
    "max(a.signal) FILTER (WHERE a.exited = 1) AS signal FROM allocations a "
    "WHERE a.job_id = ANY(ARRAY(SELECT job_id FROM counted_by_job)) GROUP BY a.job_id), "
    "totals AS MATERIALIZED (SELECT j.id, j.attempt, j.stop, j.reason, "
    "held_before.running - c.n AS running, greatest(held_before.exit_code, c.exit_code) AS "
    "exit_code, "
    "greatest(held_before.signal, c.signal) AS signal FROM j "
    "JOIN counted_by_job c ON c.job_id = j.id JOIN held_before ON held_before.job_id = j.id), "
    "ending AS (SELECT id, attempt, exit_code, signal, "
    "CASE stop WHEN 'failed' THEN 'F' WHEN 'cancel' THEN 'CA' WHEN 'timeout' THEN 'TO' "
    "WHEN 'oom' THEN 'OOM' "
    "ELSE CASE WHEN exit_code <> 0 OR signal <> 0 THEN 'F' ELSE 'CD' END END AS state, "
    "CASE stop WHEN 'failed' THEN reason WHEN 'oom' THEN reason WHEN 'cancel' THEN 'cancelled' "
    "WHEN 'timeout' THEN 'time limit reached' "
    "ELSE CASE WHEN signal <> 0 THEN 'killed by signal ' || signal "
    "WHEN exit_code <> 0 THEN 'exit code ' || exit_code ELSE '' END END AS reason "
    "FROM totals WHERE running = 0), "
    "marked AS (UPDATE allocations SET exited = 1, exit_code = c.exit_code, signal = c.signal "
    "FROM counted c WHERE allocations.job_id = ANY(ARRAY(SELECT job_id FROM counted)) "
    "AND allocations.job_id = c.job_id AND allocations.node_id = c.node_id "
    "AND c.job_id <> ALL(ARRAY(SELECT id FROM ending))), "
    "freed AS (DELETE FROM allocations WHERE job_id = ANY(ARRAY(SELECT id FROM ending))), "
    "ended AS (UPDATE jobs SET state = ending.state, reason = ending.reason, "
    "exit_code = ending.exit_code, signal = ending.signal, end_time = CAST(? AS DOUBLE PRECISION) "
    "FROM ending WHERE jobs.id = ANY(ARRAY(SELECT id FROM ending)) AND jobs.id = ending.id "
    "RETURNING jobs.id, ending.attempt, ending.state, "
    "ending.exit_code, ending.signal, ending.reason), "
    "logged AS (INSERT INTO events (seq, time, kind, job, node, detail) "
    "SELECT (SELECT coalesce(max(seq), 0) FROM events) + row_number() OVER (ORDER BY id), "
    "CAST(? AS DOUBLE PRECISION), 'end', id, '', "
    "CASE state WHEN 'CD' THEN 'COMPLETED' WHEN 'F' THEN 'FAILED' WHEN 'CA' THEN 'CANCELLED' "
    "WHEN 'OOM' THEN 'OUT_OF_MEMORY' ELSE 'TIMEOUT' END || ', exit ' || exit_code || "
    "CASE WHEN signal <> 0 THEN ', signal ' || signal ELSE '' END || "
    "CASE WHEN reason <> '' THEN ': ' || reason ELSE '' END FROM ended) "
    "SELECT id, attempt, state, exit_code, signal, reason FROM ended ORDER BY id";

// Dialect::stop_job_logged; `p` holds the parameters, `s` the job as it was.
constexpr const char* kStopJobLogged =
    "WITH p AS (SELECT CAST(? AS BIGINT) AS id, CAST(? AS TEXT) AS cause, "
    "CAST(? AS BIGINT) AS attempt, CAST(? AS TEXT) AS reason, "
    "CAST(? AS DOUBLE PRECISION) AS now), "
    "s AS (SELECT jobs.id, jobs.state, jobs.attempt, jobs.stop FROM jobs, p "
    "WHERE jobs.id = p.id), "
    "cancelled AS (UPDATE jobs SET state = 'CA', reason = p.reason, end_time = p.now, "
    "expected_start = 0 FROM s, p WHERE jobs.id = s.id AND s.state = 'PD' "
    "AND p.cause = 'cancel' AND p.attempt = 0 RETURNING jobs.id), "
    "stopping AS (UPDATE jobs SET state = 'CG', reason = p.reason, stop = p.cause FROM s, p "
    "WHERE jobs.id = s.id AND s.state IN ('R', 'S') AND s.stop = '' "
    "AND (p.attempt = 0 OR p.attempt = s.attempt) RETURNING jobs.id), "
    "logged AS (INSERT INTO events (seq, time, kind, job, node, detail) "
    "SELECT (SELECT coalesce(max(seq), 0) FROM events) + 1, p.now, "
    "CASE WHEN p.cause = 'cancel' THEN 'cancel' ELSE 'state' END, s.id, '', "
    "CASE s.state WHEN 'PD' THEN 'PENDING -> CANCELLED: ' "
    "WHEN 'R' THEN 'RUNNING -> COMPLETING: ' ELSE 'SUSPENDED -> COMPLETING: ' END || p.reason "
    "FROM s, p WHERE EXISTS (SELECT 1 FROM cancelled) OR EXISTS (SELECT 1 FROM stopping)) "
    "SELECT s.state, (SELECT count(*) FROM cancelled), (SELECT count(*) FROM stopping) FROM s";

class PostgresSession final : public Session {
 public:
  PostgresSession(std::string url, bool read_only)
      : Session("store " + redact_password(url), read_only), url_(std::move(url)) {}
  ~PostgresSession() override { disconnect(); }

  const Dialect& dialect() const override {
    static const Dialect kPostgres{
        "PostgreSQL",
        "SELECT CAST(value AS BIGINT) AS value FROM json_array_elements_text(CAST(? AS JSON))",
        "SELECT value FROM json_array_elements_text(CAST(? AS JSON))",
        // = ANY(ARRAY(...)), not IN (...): the planner, which cannot see the array's length,
        // turns IN into a hash join over a scan of the whole table.
        " = ANY(ARRAY(SELECT CAST(value AS BIGINT) FROM json_array_elements_text(CAST(? AS "
        "JSON))))",
        " = ANY(ARRAY(SELECT value FROM json_array_elements_text(CAST(? AS JSON))))",
        "SELECT (SELECT count(*) FROM information_schema.tables WHERE table_schema = "
        "current_schema() AND table_name = 'meta'), (SELECT count(*) FROM "
        "information_schema.tables WHERE table_schema = current_schema())",
        " FOR UPDATE",
        " FOR SHARE",
        "SELECT e.n - 1 AS ix, e.v AS nm FROM json_array_elements_text(CAST(? AS JSON)) "
        "WITH ORDINALITY AS e(v, n)",
        "INSERT INTO events (seq, time, kind, job, node, detail) "
        "SELECT (SELECT coalesce(max(seq), 0) FROM events) + e.n, "
        "CAST(e.v->>0 AS DOUBLE PRECISION), e.v->>1, CAST(e.v->>2 AS BIGINT), e.v->>3, e.v->>4 "
        "FROM json_array_elements(CAST(? AS JSON)) WITH ORDINALITY AS e(v, n) ORDER BY e.n",
        "json_array_elements(CAST(? AS JSON)) AS e(value)",
        "(e.value->>{i})",
        "BIGINT",
        "DOUBLE PRECISION",
        " = ANY(ARRAY(SELECT CAST(value AS BIGINT) FROM json_array_elements_text(CAST(? AS "
        "JSON))))",
        // Run with the log lock held (taken earlier in the same transaction), so max(seq) + 1
        // keeps the log gap-free and in commit order, as insert_events does.
        "WITH j AS ({insert}) INSERT INTO events (seq, time, kind, job, node, detail) "
        "SELECT (SELECT coalesce(max(seq), 0) FROM events) + 1, CAST(? AS DOUBLE PRECISION), "
        "'submit', j.id, '', CAST(? AS TEXT) FROM j RETURNING job",
        kRecordExitsLogged,
        kStopJobLogged,
    };
    return kPostgres;
  }

  // Connects (again), with backoff; kUnavailable, with libpq's reason, after the last attempt.
  Status connect() {
    auto pause = kFirstPause;
    std::string last;
    for (int attempt = 1; attempt <= kConnectAttempts; ++attempt) {
      disconnect();
      conn_ = PQconnectdb(url_.c_str());
      if (conn_ && PQstatus(conn_) == CONNECTION_OK) {
        lost_ = false;
        // Every statement of the store finds its rows through an index. A prepared statement's
        // plan is made once, often while the tables are still small, and there a sequential
        // scan looks cheapest; kept as the tables grow, it read every job for each exit report
        // (a quarter of the server's time at 10,000 jobs). Without sequential scans the plans
        // stay index lookups at every size.
        std::string setup = "SET enable_seqscan = off";
        if (read_only()) setup += "; SET default_transaction_read_only = on";
        PGresult* r = PQexec(conn_, setup.c_str());
        note_round_trip(1);
        bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        if (ok) return Ok{};
        last = trimmed(PQerrorMessage(conn_));
      } else {
        last = conn_ ? trimmed(PQerrorMessage(conn_)) : "out of memory";
      }
      if (attempt < kConnectAttempts) {
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, kLongestPause);
      }
    }
    disconnect();
    lost_ = true;
    return fail(Error::Code::kUnavailable,
                "cannot connect (" + std::to_string(kConnectAttempts) + " attempts): " + last);
  }

  using Session::query;
  Result<Rows> query(std::string_view sql, std::span<const Param> params) override {
    Outgoing out{std::string(sql), texts(params), true};
    Result<std::vector<Rows>> rows = send(std::span<Outgoing>(&out, 1));
    if (!rows) return rows.error();
    return std::move(rows->front());
  }

  Result<std::vector<Rows>> query_batch(std::span<const Statement> statements) override {
    std::vector<Outgoing> out;
    out.reserve(statements.size());
    for (const Statement& s : statements) out.push_back({s.sql, texts(s.params), true});
    return send(out);
  }

  using Session::defer;
  Status defer(std::string_view sql, std::span<const Param> params) override {
    queued_.push_back({std::string(sql), texts(params), false});
    return Ok{};
  }

  using Session::defer_for_rows;
  Status defer_for_rows(std::string_view sql, std::span<const Param> params) override {
    queued_.push_back({std::string(sql), texts(params), true, /*rows_after_commit=*/true});
    return Ok{};
  }

  Status exec_script(std::string_view sql, std::string_view what) override {
    if (Status s = flush(); !s) return s;
    if (!conn_) return fail(Error::Code::kUnavailable, "not connected");
    PGresult* r = PQexec(conn_, std::string(sql).c_str());
    note_round_trip(1);
    Status s = check(r, what);
    PQclear(r);
    return s;
  }

  Status begin(bool write) override {
    rollback();
    retry_ = false;
    if (!conn_ || lost_ || PQstatus(conn_) != CONNECTION_OK) {
      if (Status s = connect(); !s) {
        retry_ = true;
        return s;
      }
    }
    // Sent with the transaction's first statement.
    queued_.push_back(
        {write ? "BEGIN" : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", {}, false});
    in_transaction_ = true;
    return Ok{};
  }

  Status commit() override {
    if (!in_transaction_) return fail(Error::Code::kInternal, "commit() outside a transaction");
    queued_.push_back({"COMMIT", {}, false});
    committing_ = true;
    Status s = flush();
    committing_ = false;
    if (s) in_transaction_ = false;
    return s;
  }

  void rollback() override {
    bool sent = in_transaction_ && begun_on_server_;
    queued_.clear();
    in_transaction_ = false;
    begun_on_server_ = false;
    if (!sent || !conn_) return;
    if (PQstatus(conn_) != CONNECTION_OK) {
      lost_ = true;  // the server rolls the transaction back itself
      return;
    }
    PGresult* r = PQexec(conn_, "ROLLBACK");
    note_round_trip(1);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQstatus(conn_) != CONNECTION_OK) lost_ = true;
    PQclear(r);
  }

  bool connection_lost() const override { return lost_; }
  bool retryable() const override { return retry_; }

  Status lock_log() override {
    queued_.push_back(
        {"SELECT pg_advisory_xact_lock(" + std::to_string(kWriteLockKey) + ")", {}, false});
    return Ok{};
  }

  Status lock_writers_now() override {
    Outgoing lock{"SELECT pg_advisory_xact_lock(" + std::to_string(kWriteLockKey) + ")", {}, false};
    Result<std::vector<Rows>> r = send(std::span<Outgoing>(&lock, 1));
    if (!r) return r.error();
    return Ok{};
  }

  Status announce_change() override {
    queued_.push_back({"NOTIFY " + std::string(kChangeChannel), {}, false});
    return Ok{};
  }

 private:
  static std::vector<std::string> texts(std::span<const Param> params) {
    std::vector<std::string> values;
    values.reserve(params.size());
    for (const Param& p : params) values.push_back(p.to_text());
    return values;
  }

  void disconnect() {
    if (conn_) PQfinish(conn_);
    conn_ = nullptr;
    prepared_.clear();
  }

  // Sends what was deferred.
  Status flush() {
    if (queued_.empty()) return Ok{};
    Result<std::vector<Rows>> r = send({});
    if (!r) return r.error();
    return Ok{};
  }

  // A failed result as an Error; Ok for a command or rows.
  Status check(PGresult* r, std::string_view what) {
    ExecStatusType status = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return Ok{};
    std::string state;
    if (r)
      if (const char* s = PQresultErrorField(r, PG_DIAG_SQLSTATE)) state = s;
    std::string message = r ? PQresultErrorMessage(r) : "";
    if (message.empty() && conn_) message = PQerrorMessage(conn_);
    if (!conn_ || PQstatus(conn_) != CONNECTION_OK || state.starts_with("08") ||
        state.starts_with("57P"))
      lost_ = true;
    if (state.starts_with("40")) retry_ = true;  // deadlock, serialization failure
    if (lost_ && !committing_) retry_ = true;    // nothing was committed
    Error::Code code = lost_ ? Error::Code::kUnavailable : code_of(state);
    std::string text = "'";
    text += label_of(what);
    text += "' failed: ";
    text += trimmed(message);
    return fail(code, text);
  }

  // Sends the deferred statements and then `wanted` in one pipeline, and returns the rows of
  // `wanted`. A statement is prepared (in the same pipeline) the first time it is seen.
  Result<std::vector<Rows>> send(std::span<Outgoing> wanted) {
    std::vector<Outgoing> all = std::move(queued_);
    queued_.clear();
    for (Outgoing& w : wanted) all.push_back(std::move(w));
    retry_ = false;
    // Outside a transaction (a single statement) a lost connection is made again here; inside
    // one, the transaction is run again from its begin(), which reconnects.
    if ((!conn_ || lost_ || PQstatus(conn_) != CONNECTION_OK) && !in_transaction_) {
      if (Status s = connect(); !s) {
        retry_ = true;
        return s.error();
      }
    }
    if (!conn_ || PQstatus(conn_) != CONNECTION_OK) {
      lost_ = true;
      retry_ = !committing_;
      return fail(Error::Code::kUnavailable, "not connected");
    }
    // The commands sent, in order: a prepare (index -1 - statement) or an execution.
    struct Command {
      size_t statement;
      bool prepare;
    };
    std::vector<Command> commands;
    std::vector<std::string> fresh;  // statements prepared by this pipeline
    auto lost_on_send = [&]() -> Error {
      lost_ = true;
      retry_ = !committing_;
      std::string why = trimmed(PQerrorMessage(conn_));
      if (PQpipelineStatus(conn_) != PQ_PIPELINE_OFF) (void)PQexitPipelineMode(conn_);
      for (const std::string& sql : fresh) prepared_.erase(sql);
      return fail(Error::Code::kUnavailable, "sending to the server failed: " + why);
    };
    if (!PQenterPipelineMode(conn_)) return lost_on_send();
    for (size_t i = 0; i < all.size(); ++i) {
      const Outgoing& o = all[i];
      std::vector<const char*> values;
      values.reserve(o.values.size());
      for (const std::string& v : o.values) values.push_back(v.c_str());
      bool control = o.values.empty() && !o.want_rows;
      if (control) {
        if (!PQsendQueryParams(conn_, o.sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0))
          return lost_on_send();
        commands.push_back({i, false});
        continue;
      }
      auto it = prepared_.find(o.sql);
      if (it == prepared_.end()) {
        std::string name = "s" + std::to_string(next_statement_++);
        if (!PQsendPrepare(conn_, name.c_str(), number_placeholders(o.sql).c_str(), 0, nullptr))
          return lost_on_send();
        it = prepared_.emplace(o.sql, name).first;
        fresh.push_back(o.sql);
        commands.push_back({i, true});
      }
      if (!PQsendQueryPrepared(conn_, it->second.c_str(), static_cast<int>(values.size()),
                               values.data(), nullptr, nullptr, 0))
        return lost_on_send();
      commands.push_back({i, false});
    }
    if (!PQpipelineSync(conn_)) return lost_on_send();
    note_round_trip(static_cast<int64_t>(all.size()));
    for (const Outgoing& o : all)
      if (o.sql.starts_with("BEGIN")) begun_on_server_ = true;

    std::vector<Rows> rows;
    std::optional<Error> first_error;
    size_t command = 0;
    bool synced = false;
    // A transaction begun in this pipeline whose BEGIN the server answered with an error (it had
    // dropped the connection before the pipeline came) ran nothing: the server skips the rest of
    // a pipeline after an error. So it may run again even when this was its commit. (No answer at
    // all proves nothing: the answers of a committed pipeline can be lost on the way.)
    const bool begins_here = !all.empty() && all.front().sql.starts_with("BEGIN");
    bool begin_refused = false;
    while (!synced) {
      PGresult* r = PQgetResult(conn_);
      if (!r) {
        if (PQstatus(conn_) != CONNECTION_OK) break;
        if (++command > commands.size()) break;  // nothing more will come
        continue;
      }
      ExecStatusType status = PQresultStatus(r);
      if (status == PGRES_PIPELINE_SYNC) {
        synced = true;
      } else if (command < commands.size()) {
        const Command& c = commands[command];
        const Outgoing& o = all[c.statement];
        if (c.statement == 0 && begins_here && status == PGRES_FATAL_ERROR) begin_refused = true;
        if (status == PGRES_PIPELINE_ABORTED) {
          // After an earlier failure; the failure names itself.
        } else if (Status s = check(r, o.sql); !s) {
          if (!first_error) first_error = s.error();
        } else if (!c.prepare && o.want_rows) {
          (o.rows_after_commit ? rows_after_commit : rows).push_back(read_rows(r));
        }
      }
      PQclear(r);
    }
    if (PQpipelineStatus(conn_) != PQ_PIPELINE_OFF && !PQexitPipelineMode(conn_)) lost_ = true;
    const bool ran_nothing = begin_refused;
    if (!synced || PQstatus(conn_) != CONNECTION_OK) {
      lost_ = true;
      retry_ = !committing_ || ran_nothing;
      for (const std::string& sql : fresh) prepared_.erase(sql);
      if (committing_ && !ran_nothing)
        return fail(Error::Code::kUnavailable,
                    "the connection was lost during COMMIT: whether it committed is not known");
      return fail(Error::Code::kUnavailable,
                  "the connection was lost: " + trimmed(PQerrorMessage(conn_)));
    }
    if (first_error) {
      if (lost_ && ran_nothing) retry_ = true;
      // A statement prepared by this pipeline after the failure was never prepared.
      for (const std::string& sql : fresh) prepared_.erase(sql);
      return *first_error;
    }
    return rows;
  }

  static Rows read_rows(PGresult* r) {
    Rows rows;
    int n = PQntuples(r), columns = PQnfields(r);
    for (int row = 0; row < n; ++row) {
      std::vector<Rows::Cell> cells(columns);
      for (int c = 0; c < columns; ++c)
        if (!PQgetisnull(r, row, c))
          cells[c] = std::string(PQgetvalue(r, row, c), PQgetlength(r, row, c));
      rows.add_row(std::move(cells));
    }
    const char* affected = PQcmdTuples(r);
    rows.set_affected(affected && *affected ? std::atoll(affected) : 0);
    return rows;
  }

  std::string url_;
  PGconn* conn_ = nullptr;
  std::vector<Outgoing> queued_;  // deferred: sent with the next query or the commit
  bool in_transaction_ = false;   // begin() ran and no commit or rollback since
  bool begun_on_server_ = false;  // its BEGIN has been sent
  bool committing_ = false;
  bool lost_ = false;
  bool retry_ = false;
  int64_t next_statement_ = 0;
  std::map<std::string, std::string, std::less<>> prepared_;  // sql -> statement name
};

}  // namespace

std::string redact_password(std::string_view url) {
  // scheme://user:password@host... -> scheme://user@host...
  size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  size_t start = scheme + 3;
  size_t at = url.find('@', start);
  size_t slash = url.find('/', start);
  if (at == std::string_view::npos || (slash != std::string_view::npos && slash < at)) {
    return std::string(url);
  }
  size_t colon = url.find(':', start);
  if (colon == std::string_view::npos || colon > at) return std::string(url);
  return std::string(url.substr(0, colon)) + std::string(url.substr(at));
}

Result<std::unique_ptr<Session>> open_postgres_session(const std::string& url, bool read_only) {
  auto db = std::make_unique<PostgresSession>(url, read_only);
  db->set_operation("open");
  if (Status s = db->connect(); !s) return s.error();
  return std::unique_ptr<Session>(std::move(db));
}

}  // namespace trellis::sql
