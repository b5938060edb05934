// trellis bench controllers: scheduling decisions per second and submit-to-start latency with 1,
// 2 and 4 controllers sharing one PostgreSQL store, against one controller on SQLite measured in
// the same run. Each row is the synthetic stream of bench/controller_stream.h (submissions,
// cancels and exits at every controller, fake agents), audited after the run: a row whose audit
// finds a node given twice, a job lost or a job started twice fails the bench.
//
// PostgreSQL is a private server the bench starts (bench/postgres_server.h), a fresh database per
// row; without the server's binaries the PostgreSQL rows are skipped, saying why.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "bench/controller_stream.h"
#include "bench/postgres_server.h"
#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "cli/percentile.h"

namespace trellis::cli {
namespace {

namespace fs = std::filesystem;

// With TRELLIS_PG_STATS set (the server then loads pg_stat_statements, postgres_server.h), what
// the database did for one row: the WAL it wrote, its most expensive statements (calls, total
// and per-call execution time, rows), and each table's updates (how many were HOT) and dead rows.
// `reset` clears the counters before the row.
void database_profile(PostgresServer& server, const std::string& url, bool reset) {
  if (!std::getenv("TRELLIS_PG_STATS")) return;
  const std::string database = url.substr(url.rfind('/') + 1);
  if (reset) {
    // In the postgres database: an extension's view in the store's would make it not empty.
    (void)server.psql("postgres",
                      "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; "
                      "SELECT pg_stat_statements_reset(); SELECT pg_stat_reset_shared('wal');");
    return;
  }
  Result<std::string> statements =
      server.psql("postgres",
                  "SELECT wal_records, wal_bytes, wal_fpi FROM pg_stat_wal; "
                  "SELECT calls, round(CAST(total_exec_time AS NUMERIC), 1) AS ms, "
                  "round(CAST(total_exec_time / calls * 1000 AS NUMERIC), 1) AS us_per_call, rows, "
                  "left(regexp_replace(query, '\\s+', ' ', 'g'), 110) FROM pg_stat_statements "
                  "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '" +
                      database + "') ORDER BY total_exec_time DESC LIMIT 25;");
  Result<std::string> tables =
      server.psql(database,
                  "SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del, n_dead_tup "
                  "FROM pg_stat_user_tables ORDER BY n_tup_upd + n_tup_ins DESC;");
  std::cerr << "  database profile (TRELLIS_PG_STATS), " << database << "\n"
            << "  WAL records|bytes|full pages, then calls|ms|us per call|rows|statement:\n"
            << (statements ? *statements : statements.error().message)
            << "  table|inserts|updates|HOT updates|deletes|dead rows:\n"
            << (tables ? *tables : tables.error().message);
}

struct BenchControllersArgs {
  int64_t decisions = 100000;
  std::vector<int> controllers = {1, 2, 4};
  bool no_postgres = false;
  std::string machine = "torus:4x4x4";
  int backlog = 150;
  int clients = 0;
  bool counts = false;
  double batch_wait = ControllerSettings{}.batch_wait;
  std::vector<std::string> allocations = {"lease", "concurrent"};
};

const char* mode_name(AllocationMode mode) {
  return mode == AllocationMode::kConcurrent ? "concurrent" : "lease";
}

int run_bench_controllers(const BenchControllersArgs& args) {
  struct Row {
    std::string store;
    int controllers;
    AllocationMode mode;
    bench::StreamResult result;
  };
  std::vector<Row> rows;
  auto run_row = [&](const std::string& store_name, const std::string& url, int controllers,
                     AllocationMode mode, PostgresServer* server) -> bool {
    bench::StreamOptions options;
    options.allocation = mode;
    options.store_url = url;
    options.controllers = controllers;
    options.decisions = args.decisions;
    options.machine = args.machine;
    options.backlog = args.backlog;
    options.clients = args.clients;
    options.batch_wait = args.batch_wait;
    options.handover_every = 0;  // the steady state; the test forces handovers
    if (server) options.database_cpu = [server] { return server->cpu_seconds(); };
    options.progress = [&](int64_t started) {
      std::cerr << "  " << store_name << " x" << controllers << ": " << started << " of "
                << args.decisions << " decisions\n";
    };
    std::cerr << store_name << ", " << controllers
              << (controllers == 1 ? " controller" : " controllers") << ", " << mode_name(mode)
              << " allocation...\n";
    Result<bench::StreamResult> r = bench::run_controller_stream(options);
    if (!r) {
      std::cerr << "trellis bench controllers: " << store_name << " x" << controllers << ": "
                << r.error().message << "\n";
      return false;
    }
    rows.push_back({store_name, controllers, mode, std::move(*r)});
    return true;
  };

  fs::path dir =
      fs::temp_directory_path() / ("trellis-bench-controllers-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::vector<AllocationMode> modes;
  for (const std::string& name : args.allocations)
    modes.push_back(name == "concurrent" ? AllocationMode::kConcurrent : AllocationMode::kLease);
  bool ok = run_row("SQLite", "sqlite:" + (dir / "state.db").string(), 1, AllocationMode::kLease,
                    nullptr);
  fs::remove_all(dir);
  if (!ok) return kExitFailure;
  std::string skipped;
  if (args.no_postgres) {
    skipped = "--no-postgres";
  } else if (Result<std::unique_ptr<PostgresServer>> server = PostgresServer::start(); !server) {
    skipped = server.error().message;
  } else {
    for (AllocationMode mode : modes)
      for (int controllers : args.controllers) {
        // One controller decides the same way in both modes: its row is measured once.
        if (controllers == 1 && mode != modes.front()) continue;
        Result<std::string> url = (*server)->new_database();
        if (!url) {
          std::cerr << "trellis bench controllers: " << url.error().message << "\n";
          return kExitFailure;
        }
        database_profile(**server, *url, true);
        if (!run_row("PostgreSQL", *url, controllers, mode, server->get())) return kExitFailure;
        database_profile(**server, *url, false);
      }
  }

  const double reference = rows[0].result.starts / rows[0].result.seconds;
  std::cout << "Scheduling decisions (job starts) of a stream of " << args.decisions
            << " submissions with cancels and exits at every controller\n"
            << "(" << args.machine << ", backlog " << args.backlog << ", batch wait "
            << args.batch_wait * 1000
            << " ms, EASY, jobs of 1-4 nodes running 0-20 ms; one process, real "
               "stores; ratio against SQLite with one controller, this run)\n\n";
  std::cout << std::left << std::setw(12) << "store" << std::setw(12) << "allocation" << std::right
            << std::setw(12) << "controllers" << std::setw(11) << "decisions" << std::setw(9)
            << "seconds" << std::setw(13) << "decisions/s" << std::setw(7) << "ratio"
            << std::setw(9) << "p50 ms" << std::setw(9) << "p99 ms" << std::setw(12)
            << "rt/decision" << std::setw(15) << "proc cpu ms/d" << std::setw(13) << "db cpu ms/d"
            << std::setw(12) << "conflicts %" << std::setw(12) << "overtakes %"
            << "  audit\n";
  bool clean = true;
  for (const Row& row : rows) {
    const bench::StreamResult& r = row.result;
    double rate = r.starts / r.seconds;
    double per = r.window_starts > 0 ? 1.0 / r.window_starts : 0;
    std::ostringstream audit;
    if (r.clean()) {
      audit << "clean";
    } else {
      clean = false;
      audit << "NOT CLEAN: " << r.double_allocations << " double allocations, " << r.started_twice
            << " started twice, " << r.lost << " lost";
    }
    std::cout << std::left << std::setw(12) << row.store << std::setw(12)
              << (row.controllers == 1 ? "-" : mode_name(row.mode)) << std::right << std::setw(12)
              << row.controllers << std::setw(11) << r.starts << std::setw(9) << std::fixed
              << std::setprecision(1) << r.seconds << std::setw(13) << std::setprecision(0) << rate
              << std::setw(7) << std::setprecision(2) << rate / reference << std::setw(9)
              << std::setprecision(1) << percentile(r.start_latency, 0.5) * 1000 << std::setw(9)
              << percentile(r.start_latency, 0.99) * 1000 << std::setw(12) << std::setprecision(2)
              << r.round_trips * per << std::setw(15) << std::setprecision(3)
              << r.process_cpu * per * 1000 << std::setw(13)
              << (row.store == "SQLite" ? std::string("-")
                                        : std::to_string(r.database_cpu * per * 1000).substr(0, 5))
              << std::setw(12) << std::setprecision(2)
              << 100.0 * r.conflicts / std::max<int64_t>(1, r.starts) << std::setw(12)
              << 100.0 * r.overtakes / std::max<int64_t>(1, r.starts) << "  " << audit.str()
              << "\n";
  }
  // What the measured costs per decision imply when each controller and the database have hosts
  // of their own (this host shares its 2 cores among all of them). The database's CPU bounds
  // every mode; the controllers' (the process's CPU, an upper bound: it includes this bench's
  // clients and fake agents) is spread over N hosts under concurrent allocation, and stays on the
  // lease holder's one host for placement under lease allocation.
  std::cout << "\nModel: N controller hosts of 2 cores and a database host of D cores, from each "
               "PostgreSQL row's costs per decision\n"
            << std::left << std::setw(12) << "allocation" << std::right << std::setw(12)
            << "measured x" << std::setw(8) << "hosts" << std::setw(16) << "db bound D=2"
            << std::setw(16) << "db bound D=8" << std::setw(18) << "controller bound"
            << std::setw(14) << "rate D=8\n";
  for (const Row& row : rows) {
    const bench::StreamResult& r = row.result;
    if (row.store == "SQLite" || row.controllers == 1 || r.window_starts == 0) continue;
    const double db = r.database_cpu / r.window_starts, proc = r.process_cpu / r.window_starts;
    if (db <= 0 || proc <= 0) continue;
    for (int hosts : {4, 16}) {
      const double controller_bound =
          (row.mode == AllocationMode::kConcurrent ? hosts : 1) * 2 / proc;
      std::cout << std::left << std::setw(12) << mode_name(row.mode) << std::right << std::setw(12)
                << row.controllers << std::setw(8) << hosts << std::setw(16) << std::setprecision(0)
                << 2 / db << std::setw(16) << 8 / db << std::setw(18) << controller_bound
                << std::setw(13) << std::min(8 / db, controller_bound) << "\n";
    }
  }
  if (args.counts) {
    // What each kind of store call cost over the window, per decision.
    for (const Row& row : rows) {
      const bench::StreamResult& r = row.result;
      double per = r.window_starts > 0 ? 1.0 / r.window_starts : 0;
      std::cout << "\n"
                << row.store << " x" << row.controllers << ", store calls per decision by kind:\n"
                << std::left << std::setw(20) << "  kind" << std::right << std::setw(12)
                << "calls/d" << std::setw(12) << "rt/d" << std::setw(14) << "statements/d"
                << "\n";
      for (const auto& [op, c] : r.operations) {
        if (c.calls == 0 && c.round_trips == 0) continue;
        std::cout << std::left << std::setw(20) << "  " + op << std::right << std::fixed
                  << std::setprecision(3) << std::setw(12) << c.calls * per << std::setw(12)
                  << c.round_trips * per << std::setw(14) << c.statements * per << "\n";
      }
    }
  }
  if (!skipped.empty()) std::cout << "\nPostgreSQL rows skipped: " << skipped << "\n";
  return clean ? kExitOk : kExitFailure;
}

}  // namespace

void add_bench_controllers_command(CLI::App& app, int& status) {
  auto args = std::make_shared<BenchControllersArgs>();
  CLI::App* cmd = bench_family(app).add_subcommand(
      "controllers",
      "Several controllers sharing one store: decisions/s and submit-to-start latency with\n"
      "1, 2 and 4 controllers on a private PostgreSQL server, against one controller on SQLite,\n"
      "for a synthetic stream of submissions, cancels and exits; each run is audited (no node\n"
      "given twice, no job lost or started twice). `bench live --controllers N` measures the same\n"
      "on a local cluster of real daemons");
  cmd->add_option("--decisions", args->decisions, "Job starts per row (default 100000)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--controllers", args->controllers,
                  "Controller counts of the PostgreSQL rows (default 1 2 4)")
      ->check(CLI::Range(1, 16));
  cmd->add_option("--machine", args->machine,
                  "The fake cluster (default torus:4x4x4: 64 nodes, whose jobs of 1-4 nodes and\n"
                  "0-20 ms cap the stream near 2,500 starts/s however fast the controllers are;\n"
                  "a larger machine with a larger --backlog measures beyond that)");
  cmd->add_option("--backlog", args->backlog, "Jobs kept in the system (default 150)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--clients", args->clients,
                  "Client threads submitting at once (default: max(4, controllers))")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--batch-wait", args->batch_wait,
                  "Seconds a busy batch of submissions or exit reports waits for more before its\n"
                  "transaction ([controller] batch_wait; default 0.002; 0: never)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--no-postgres", args->no_postgres, "Only the SQLite row");
  cmd->add_option("--allocation", args->allocations,
                  "Allocation modes of the PostgreSQL rows of several controllers: lease (the\n"
                  "lease holder places every job) and/or concurrent (each controller places its\n"
                  "own; conflicts are refused and retried) (default: lease concurrent)")
      ->check(CLI::IsMember({"lease", "concurrent"}));
  cmd->add_flag("--counts", args->counts,
                "Also print each row's store calls, round trips and statements per decision, by "
                "kind of call (with TRELLIS_PG_STATS=1 in the environment, also each PostgreSQL "
                "row's WAL, costliest statements and table updates)");
  cmd->callback([args, &status] { status = run_bench_controllers(*args); });
}

}  // namespace trellis::cli
