// PostgresSession: the sql::Session on a PostgreSQL database (libpq), the store that several
// controllers on several hosts share (seed 003's allocator database).
//
// Round trips are what a shared store pays for, so a session sends as few as it can: libpq's
// pipeline mode carries a transaction's BEGIN with its first statement, the statements whose rows
// are not needed (Session::defer) with the next one, and a write's end (the log lock, its events,
// the version, NOTIFY, COMMIT) as one exchange. A write transaction that reads once costs two
// round trips; one whose rows are wanted only after its commit (Session::defer_for_rows: a batch
// of submissions, each insert logging its own event) one; a single statement
// (sql::single_statement) one.
//
// Writers run side by side (READ COMMITTED): each locks the rows it checks (FOR UPDATE) before it
// changes them, and the database refuses a double allocation itself (unique index and trigger),
// whatever a controller believes. Only their ends are serial: a transaction-scoped advisory lock,
// taken in the commit's round trip just before the events are appended, keeps the log's seq
// gap-free and in commit order. A deadlock between writers (SQLSTATE 40P01) or a serialization
// failure fails the attempt with nothing committed, and transaction() runs it again. Readers run
// in REPEATABLE READ READ ONLY transactions (one snapshot per method) and never wait for writers.
//
// A lost connection is reconnected at the next begin(), retrying with backoff (50 ms doubling,
// up to about 5 s in all) before failing with kUnavailable; the transaction that lost it had not
// committed, and transaction() runs it again. Statements are prepared once per connection.
//
// A URL whose host is a folder reaches the server over its unix socket, which costs less per
// round trip than TCP on the same host: "postgresql://trellis@%2Fvar%2Frun%2Fpostgresql/trellis"
// or "postgresql:///trellis?host=/var/run/postgresql".
//
//   Result<std::unique_ptr<sql::Session>> db =
//       sql::open_postgres_session("postgresql://trellis@db.site:5432/trellis", false);
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "store/change_feed.h"
#include "store/sql_session.h"

namespace trellis::sql {

// Connects to the database at `url` (any URL or key=value string libpq accepts). Read-only
// sessions also set default_transaction_read_only, so a mistaken write is refused by the server.
Result<std::unique_ptr<Session>> open_postgres_session(const std::string& url, bool read_only);

// A ChangeFeed (change_feed.h) listening on kChangeChannel of the database at `url`.
Result<std::unique_ptr<ChangeFeed>> open_postgres_change_feed(const std::string& url);

// `url` with any password removed, for messages and logs.
std::string redact_password(std::string_view url);

// The channel on which every committed write is announced (NOTIFY), so that other controllers
// learn of changes without polling.
inline constexpr std::string_view kChangeChannel = "trellis_changed";

}  // namespace trellis::sql
