// SqliteSession: the sql::Session on one SQLite file, the embedded default store.
//
// The file is in WAL mode with synchronous=NORMAL: readers (the CLI, the dashboard) never block
// the controller's writes, and a commit costs no fsync (a power loss may lose the last commits,
// never corrupt the file). Writers begin with BEGIN IMMEDIATE and wait up to the busy timeout for
// another process's write to finish; past that begin() fails with kUnavailable. Statements are
// prepared once per connection and reused.
#pragma once

#include <memory>
#include <string>

#include "store/sql_session.h"

namespace trellis::sql {

// How long a write waits for another connection's write transaction before kUnavailable.
inline constexpr int kSqliteBusyTimeoutMs = 5000;

// Opens the database file at `path` (read-write creates it; read-only never does: kNotFound).
// The schema is not looked at here (sql_schema.h).
Result<std::unique_ptr<Session>> open_sqlite_session(const std::string& path, bool read_only,
                                                     int busy_timeout_ms = kSqliteBusyTimeoutMs);

}  // namespace trellis::sql
