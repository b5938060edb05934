// A private PostgreSQL server, for tests and for `trellis bench controllers`: initdb into a fresh
// temporary folder, then the server on its own port (ephemeral, chosen free) and its own unix
// socket folder, stopped in the destructor by the pid it was started with, and the folder removed.
//
//   Result<std::unique_ptr<PostgresServer>> server = PostgresServer::start();
//   if (!server) {
//     if (postgres_required()) FAIL() << server.error().message;
//     GTEST_SKIP() << server.error().message;
//   }
//   Result<std::string> url = (*server)->new_database();  // postgresql://trellis@...
//   std::string read_only = (*server)->reader_url(*url);  // as trellis_reader
//
// The server refuses to run as root, so as root it runs as the `postgres` system user that
// Debian's postgresql-common package creates (the temporary folder is chowned to it); otherwise
// it runs as the current user. It is the test process's own child (forked, then setuid when
// root, then exec'ed), so its pid is exact: the destructor signals that pid only (SIGINT, a fast
// shutdown; then SIGQUIT; then SIGKILL to it and the children it has then), never a process found
// by name. Should the test process die without its destructors (a crash, a timeout), the server
// gets SIGINT from the kernel (PR_SET_PDEATHSIG) and shuts itself down; only the folder remains.
// That signal follows the thread that called start(): start a server from a thread that
// outlives it (the test's main thread, SetUpTestSuite), not from a short-lived helper thread.
//
// The binaries are the newest /usr/lib/postgresql/VERSION/bin (Debian's layout), or the folder
// TRELLIS_POSTGRES_BIN names; initdb, postgres and psql must be there.
//
// Roles: `postgres`, the superuser, which psql() uses; `trellis`, which owns every database
// new_database() makes and may do anything in it, but is not a superuser; `trellis_reader`, which
// may connect to those databases and read every table and sequence in them, present and future
// (ALTER DEFAULT PRIVILEGES for objects that `trellis` or `postgres` create), and nothing else.
// Authentication is `trust`: the server listens on 127.0.0.1 and in the private socket folder
// only.
//
// With TRELLIS_PG_STATS set in the environment the server loads pg_stat_statements, so that
// `CREATE EXTENSION pg_stat_statements` in a database shows what each statement costs (how the
// store's statements were profiled).
//
// One thread at a time may call a PostgresServer's methods (psql() writes its script and output
// to files in the folder); connections to its databases may be used from any thread.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "core/result.h"

namespace trellis {

struct PostgresTools;  // the binaries, and the user the server runs as (postgres_server.cc)

class PostgresServer {
 public:
  static constexpr const char* kSuperuser = "postgres";
  static constexpr const char* kWriter = "trellis";
  static constexpr const char* kReader = "trellis_reader";

  // Starts a server and waits until it accepts connections (up to about 30 s), or returns why
  // it could not: binaries missing (and which package to install), no `postgres` user when
  // root, initdb's output, or the tail of the server's log.
  static Result<std::unique_ptr<PostgresServer>> start();

  // A fresh, empty database (CREATE DATABASE trellis_N, N = 1, 2, ... per server) owned by
  // `trellis`, as a URL libpq accepts. The host is the server's socket folder, so that clients
  // reach it over its unix socket, which costs less per round trip than TCP on one host:
  // "postgresql://trellis@%2Ftmp%2Ftrellis-postgres-XXXXXX:PORT/trellis_N".
  Result<std::string> new_database();

  // The URL of the same database as `trellis_reader`, which may only read:
  // "postgresql://trellis_reader@%2Ftmp%2F...:PORT/trellis_N". `database_url` is one that
  // new_database() returned (only its database name, after the last '/', is used).
  std::string reader_url(const std::string& database_url) const;

  // Runs `sql` (any number of statements, and psql's backslash commands) on `database` (a name)
  // as the superuser with psql -X -q -v ON_ERROR_STOP=1 --no-align --tuples-only, so that
  // `SELECT count(*) FROM t` returns "3\n" and a row's fields are separated by '|'. Returns
  // psql's stdout, or its stderr as the error when a statement fails.
  Result<std::string> psql(const std::string& database, const std::string& sql);

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // CPU seconds (user + system) the server has used so far: the postmaster, its live processes
  // (backends, writers) and those that have exited (the postmaster waits for them).
  double cpu_seconds() const;
  // The temporary folder: the data directory (data/), the unix socket, the log (server.log).
  const std::string& dir() const { return dir_; }
  // The last `lines` lines of the server's log, for failure messages.
  std::string log_tail(int lines = 20) const;

  // Stops the server (SIGINT, then SIGQUIT after 10 s, then SIGKILL after 5 more; only the pid
  // started and, for SIGKILL, the children it has then) and removes the folder.
  ~PostgresServer();

  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

 private:
  PostgresServer(std::string dir, std::shared_ptr<const PostgresTools> tools)
      : dir_(std::move(dir)), tools_(std::move(tools)) {}
  Status init_cluster();
  Status launch();
  void stop();

  // A URL of `database` as `user`, over the unix socket.
  std::string url_for(std::string_view user, std::string_view database) const;

  std::string dir_;
  std::shared_ptr<const PostgresTools> tools_;
  int port_ = -1;
  pid_t pid_ = -1;
  int databases_ = 0;
};

// Whether tests that need PostgreSQL must run rather than skip: true when the environment has
// TRELLIS_REQUIRE_POSTGRES=1 (CI's `make test` and `make test-asan` set it). A test whose server
// cannot start fails when this is true and skips (GTEST_SKIP() << why) when it is false.
bool postgres_required();

}  // namespace trellis
