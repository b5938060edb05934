// PostgresSession: the sql::Session on a PostgreSQL database (libpqxx), the store that several
// controllers on several hosts share (seed 003's allocator database).
//
// Writers take a transaction-scoped advisory lock first, so writes are serial across every
// controller, as with SQLite: each transaction sees all that was committed before it, the event
// log's seq is gap-free and in commit order, and no transaction fails halfway on a conflict.
// The database still refuses a double allocation itself (unique index and trigger), whatever a
// controller believes. Readers run in REPEATABLE READ READ ONLY transactions (one snapshot per
// method) and never wait for writers.
//
// A lost connection is reconnected at the next begin(), retrying with backoff (50 ms doubling,
// up to about 5 s in all) before failing with kUnavailable; the transaction that lost it had not
// committed, and transaction() runs it again. Statements are prepared once per connection.
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
