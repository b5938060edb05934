// The schema of the SQLite store (tables meta, nodes, jobs, allocations, events: see
// sqlite_store.h) and the steps that bring a file from an older version to this build's
// kSqliteSchemaVersion.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "store/sqlite_connection.h"

namespace trellis::sqlite {

// meta.value for `key`, if set.
Result<std::optional<std::string>> meta_text(Connection& db, std::string_view key);
Status set_meta(Connection& db, std::string_view key, std::string_view value);

// The file's schema version: 0 for a new, empty file; an error for a file that is not a store.
Result<int> schema_version(Connection& db);
// The error for a file written by a newer Trellis.
Error newer_schema(const Connection& db, int version);
// Brings the file to kSqliteSchemaVersion in one transaction, so that two processes opening a
// new file at once create it once.
Status migrate(Connection& db);

}  // namespace trellis::sqlite
