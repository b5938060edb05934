#include "bench/history_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "bench/postgres_server.h"
#include "store/postgres_session.h"
#include "store/sql_store.h"
#include "store/sqlite_session.h"

namespace trellis::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr double kDay = 86400;
constexpr double kEpoch = 1.7e9;  // the first submission

// Fills the jobs table with `jobs` finished jobs in one statement: job i belongs to user
// 1000 + i % users, is submitted at kEpoch + i * span / jobs, starts 10 s later and runs
// (i * 7919) % 3600 s.
Status fill(sql::Session& db, const HistoryBenchOptions& o, bool postgres) {
  const double step = o.days * kDay / static_cast<double>(o.jobs);
  std::string series =
      postgres ? "SELECT g AS i FROM generate_series(CAST(0 AS BIGINT), CAST(? AS BIGINT)) AS g"
               : "WITH RECURSIVE g(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM g "
                 "WHERE i < ?) SELECT i FROM g";
  std::string sql =
      "INSERT INTO jobs (uid, gid, user_name, name, request_nodes, request_shape, request_rotate, "
      "request_mode, share, time_limit, argv, cwd, stdout_path, stderr_path, env, state, reason, "
      "submit_time, start_time, end_time, expected_start, attempt, nodes, box_anchor, "
      "box_extents, exit_code, signal) SELECT 1000 + s.i % ?, 100, 'user', 'job', 1, '[]', 1, "
      "'noncont', 0, 3600, '[\"true\"]', '/tmp', 'out', '', '{}', 'CD', '', {t} + s.i * {t}, "
      "{t} + s.i * {t} + 10, {t} + s.i * {t} + 10 + (s.i * 7919) % 3600, 0, 1, '[0]', '[]', "
      "'[]', 0, 0 FROM (" +
      series + ") AS s";
  // Times are doubles: PostgreSQL would otherwise take an untyped parameter beside an integer
  // for an integer (and refuse "1.7e+09"); SQLite reads the same cast as REAL.
  for (size_t at; (at = sql.find("{t}")) != std::string::npos;)
    sql.replace(at, 3, "CAST(? AS DOUBLE PRECISION)");
  if (Status ok = db.begin(true); !ok) return ok;
  Result<sql::Rows> inserted = db.query(
      sql, {o.users, kEpoch, step, kEpoch, step, kEpoch, step, static_cast<int64_t>(o.jobs - 1)});
  if (!inserted) {
    db.rollback();
    return inserted.error();
  }
  return db.commit();
}

struct Timing {
  double median_ms = 0, max_ms = 0;
  long rows = 0;  // summed over the queries
};

// The one-user one-day queries, user u and day d for query q.
Result<Timing> time_queries(StateStore& store, const HistoryBenchOptions& o) {
  std::vector<double> ms;
  Timing t;
  for (int q = 0; q < o.queries; ++q) {
    JobQuery query;
    query.uid = 1000 + (q * 37) % o.users;
    double day = kEpoch + ((q * 13) % std::max(1, o.days - 1) + 0.5) * kDay;
    query.not_ended_before = day;
    query.submitted_by = day + kDay;
    auto start = Clock::now();
    Result<std::vector<StoredJob>> jobs = store.list_jobs(query);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (!jobs) return jobs.error();
    for (const StoredJob& j : *jobs)
      if (j.uid != *query.uid || j.submit_time > day + kDay || j.end_time < day)
        return fail(Error::Code::kInternal, "a job outside the query came back");
    t.rows += static_cast<long>(jobs->size());
  }
  std::sort(ms.begin(), ms.end());
  t.median_ms = ms[ms.size() / 2];
  t.max_ms = ms.back();
  return t;
}

int run_engine(const HistoryBenchOptions& o, bool postgres, std::ostream& out) {
  std::unique_ptr<PostgresServer> server;
  std::string url;
  fs::path dir;
  if (postgres) {
    Result<std::unique_ptr<PostgresServer>> started = PostgresServer::start();
    if (!started) {
      out << "postgresql: not measured (" << started.error().message << ")\n";
      return 1;
    }
    server = std::move(*started);
    Result<std::string> db = server->new_database();
    if (!db) {
      out << "postgresql: " << db.error().message << "\n";
      return 1;
    }
    url = *db;
  } else {
    char pattern[] = "/tmp/trellis-bench-history-XXXXXX";
    if (!mkdtemp(pattern)) return 1;
    dir = pattern;
    url = "sqlite:" + (dir / "state.db").string();
  }
  auto cleanup = [&] {
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
  };
  Result<std::unique_ptr<StateStore>> store = open_store(url);
  if (!store) {
    out << url << ": " << store.error().message << "\n";
    cleanup();
    return 1;
  }
  if (Status ok = (*store)->init_cluster("flat:4", {"n0", "n1", "n2", "n3"}); !ok) {
    cleanup();
    return 1;
  }
  Result<std::unique_ptr<sql::Session>> raw =
      postgres ? sql::open_postgres_session(url, false)
               : sql::open_sqlite_session((dir / "state.db").string(), false);
  if (!raw) {
    cleanup();
    return 1;
  }
  auto filled_at = Clock::now();
  if (Status ok = fill(**raw, o, postgres); !ok) {
    out << "filling the store: " << ok.error().message << "\n";
    cleanup();
    return 1;
  }
  double fill_s = std::chrono::duration<double>(Clock::now() - filled_at).count();
  (void)(*raw)->exec_script(postgres ? "ANALYZE jobs" : "ANALYZE", "analyze");
  Result<Timing> indexed = time_queries(**store, o);
  // The reference: the same queries once the accounting indexes are gone.
  Status dropped = (*raw)->exec_script(
      "DROP INDEX jobs_by_uid_end; DROP INDEX jobs_by_end; DROP INDEX jobs_by_uid_name; "
      "DROP INDEX jobs_by_uid",
      "drop the indexes");
  Result<Timing> scan = dropped ? time_queries(**store, o) : Result<Timing>(dropped.error());
  cleanup();
  if (!indexed || !scan) {
    out << (postgres ? "postgresql" : "sqlite") << ": "
        << (!indexed ? indexed.error().message : scan.error().message) << "\n";
    return 1;
  }
  char line[256];
  std::snprintf(line, sizeof line, "%-11s %9ld %7.1f s %10.2f %9.2f %10.1f %9.1f %8.0fx %7.1f\n",
                postgres ? "postgresql" : "sqlite", o.jobs, fill_s, indexed->median_ms,
                indexed->max_ms, scan->median_ms, scan->max_ms,
                scan->median_ms / std::max(indexed->median_ms, 1e-6),
                static_cast<double>(indexed->rows) / o.queries);
  out << line << std::flush;
  return indexed->rows == scan->rows ? 0 : 1;
}

}  // namespace

int run_history_bench(const HistoryBenchOptions& o, std::ostream& out) {
  out << "One-user one-day accounting queries (sacct -u USER -S DAY -E DAY+1) over " << o.jobs
      << " finished jobs of " << o.users << " users in " << o.days << " days; " << o.queries
      << " queries, each a different user and day. Reference: the same queries with the\n"
         "accounting indexes dropped (a scan), on the same store.\n\n";
  out << "engine           jobs    filled  median ms    max ms  scan p50  scan max  speedup  "
         "rows/q\n";
  int status = run_engine(o, false, out);
  if (o.postgres) status = std::max(status, run_engine(o, true, out));
  return status;
}

}  // namespace trellis::bench
