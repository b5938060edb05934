// The two store engines, for tests that run once on each: SQLite (a file) and PostgreSQL (the
// private server of bench/postgres_server.h, one per test binary, started on first use).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "bench/postgres_server.h"

namespace trellis::test {

enum class Engine { kSqlite, kPostgres };

// "Sqlite", "Postgres": the suffix of each instantiated test's name.
inline std::string engine_name(const ::testing::TestParamInfo<Engine>& info) {
  return info.param == Engine::kSqlite ? "Sqlite" : "Postgres";
}

// The PostgreSQL server of this test binary, started on first use (from the calling thread,
// which must outlive it: a test's main thread) and stopped at exit; null, with the reason in
// `why`, when it cannot start.
inline PostgresServer* shared_postgres(std::string& why) {
  static Result<std::unique_ptr<PostgresServer>> server = PostgresServer::start();
  if (!server) {
    why = server.error().message;
    return nullptr;
  }
  return server->get();
}

// Sets `url` to a fresh PostgreSQL database on the shared server (and `server`, if asked, to
// that server). When none can be had, the test is skipped, or fails where PostgreSQL is required
// (CI), and `url` stays empty: callers return when it is.
inline void fresh_postgres_database(std::string& url, PostgresServer** server_out = nullptr) {
  std::string why;
  PostgresServer* server = shared_postgres(why);
  if (!server) {
    if (postgres_required())
      FAIL() << "PostgreSQL is required (TRELLIS_REQUIRE_POSTGRES=1): " << why;
    GTEST_SKIP() << "no PostgreSQL server could start: " << why;
  }
  Result<std::string> made = server->new_database();
  ASSERT_TRUE(made) << made.error().message;
  if (server_out) *server_out = server;
  url = *made;
}

}  // namespace trellis::test
