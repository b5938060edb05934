// The store's schema (tables meta, nodes, jobs, allocations, events, leases: see sql_store.h),
// written once per engine side by side, and the steps that bring a database from an older version
// to this build's kStoreSchemaVersion.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "store/sql_session.h"

namespace trellis {

// The schema version this build writes and reads.
inline constexpr int kStoreSchemaVersion = 13;

namespace sql {

// meta.value for `key`, if set.
Result<std::optional<std::string>> meta_text(Session& db, std::string_view key);
Status set_meta(Session& db, std::string_view key, std::string_view value);

// The database's schema version: 0 for a new, empty one; an error for one that is not a store.
Result<int> schema_version(Session& db);
// Brings the database to kStoreSchemaVersion in one transaction, so that two processes opening a
// new store at once create it once. Refuses a database written by a newer Trellis.
Status migrate(Session& db);
// For a read-only open: the database must be a store at exactly kStoreSchemaVersion.
Status check_schema(Session& db);

}  // namespace sql
}  // namespace trellis
