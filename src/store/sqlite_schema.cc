#include "store/sqlite_schema.h"

#include <array>

namespace trellis::sqlite {
namespace {

// The schema. Each step brings a file from the previous version to `version`; a new file
// runs them all. A later schema appends a step here and bumps kSqliteSchemaVersion; released
// steps are never edited, since files in the field have run them.
struct Migration {
  int version;
  const char* sql;
};

constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value            -- schema_version, version (the change counter), machine_spec, core_state
);
INSERT INTO meta (key, value) VALUES ('version', 0);

CREATE TABLE nodes (
  id INTEGER PRIMARY KEY,          -- the machine's node index
  name TEXT NOT NULL UNIQUE,
  up INTEGER NOT NULL DEFAULT 0,
  drained INTEGER NOT NULL DEFAULT 0,
  agent TEXT NOT NULL DEFAULT '',
  last_heartbeat REAL NOT NULL DEFAULT 0,
  reason TEXT NOT NULL DEFAULT ''
);

CREATE TABLE jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,  -- an id is never given twice
  uid INTEGER NOT NULL,
  gid INTEGER NOT NULL,
  user_name TEXT NOT NULL,
  name TEXT NOT NULL,
  request_nodes INTEGER NOT NULL,
  request_shape TEXT NOT NULL,     -- JSON list of extents, [] for a node count
  request_rotate INTEGER NOT NULL,
  request_mode TEXT NOT NULL,      -- torus, mesh, noncont
  share INTEGER NOT NULL,
  time_limit REAL NOT NULL,
  argv TEXT NOT NULL,              -- JSON list of strings
  cwd TEXT NOT NULL,
  stdout_path TEXT NOT NULL,
  stderr_path TEXT NOT NULL,
  env TEXT NOT NULL,               -- JSON object
  state TEXT NOT NULL,             -- the state's letter: PD R S CG CD F CA TO NF
  reason TEXT NOT NULL,
  submit_time REAL NOT NULL,
  start_time REAL NOT NULL,
  end_time REAL NOT NULL,
  expected_start REAL NOT NULL,
  attempt INTEGER NOT NULL,
  nodes TEXT NOT NULL,             -- JSON list of node ids, ascending
  box_anchor TEXT NOT NULL,        -- JSON lists, [] when no box
  box_extents TEXT NOT NULL,
  exit_code INTEGER NOT NULL,
  signal INTEGER NOT NULL
);
CREATE INDEX jobs_by_state ON jobs (state);
CREATE INDEX jobs_by_uid ON jobs (uid);

-- The nodes each running job holds. A job that may not share (jobs.share = 0) holds its nodes
-- exclusively: at most one exclusive allocation per node (the unique index), and no shared one
-- beside it (the trigger).
CREATE TABLE allocations (
  job_id INTEGER NOT NULL REFERENCES jobs (id),
  node_id INTEGER NOT NULL REFERENCES nodes (id),
  exclusive INTEGER NOT NULL CHECK (exclusive IN (0, 1)),
  PRIMARY KEY (job_id, node_id)
) WITHOUT ROWID;
CREATE UNIQUE INDEX allocations_one_exclusive ON allocations (node_id) WHERE exclusive = 1;
CREATE INDEX allocations_by_node ON allocations (node_id, job_id);
CREATE TRIGGER allocations_exclusive_alone BEFORE INSERT ON allocations
WHEN EXISTS (SELECT 1 FROM allocations WHERE node_id = NEW.node_id AND exclusive <> NEW.exclusive)
BEGIN
  SELECT RAISE(ABORT, 'a node held exclusively is shared with no other allocation');
END;

CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  time REAL NOT NULL,
  kind TEXT NOT NULL,
  job INTEGER NOT NULL DEFAULT 0,
  node TEXT NOT NULL DEFAULT '',
  detail TEXT NOT NULL DEFAULT ''
);
)sql";

constexpr std::array<Migration, 1> kMigrations{{{1, kSchemaV1}}};
static_assert(kMigrations.back().version == kSqliteSchemaVersion,
              "the last migration step must bring a file to kSqliteSchemaVersion");

}  // namespace

// meta.value for `key`, if set.
Result<std::optional<std::string>> meta_text(Connection& db, std::string_view key) {
  Result<Statement> s = db.prepare("SELECT value FROM meta WHERE key = ?");
  if (!s) return s.error();
  s->bind(key);
  Result<bool> row = s->step();
  if (!row) return row.error();
  if (!*row || s->is_null(0)) return std::optional<std::string>();
  return std::optional<std::string>(s->text(0));
}

Status set_meta(Connection& db, std::string_view key, std::string_view value) {
  Result<Statement> s = db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)");
  if (!s) return s.error();
  return s->bind(key).bind(value).run();
}

Result<int> schema_version(Connection& db) {
  Result<Statement> s = db.prepare(
      "SELECT (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'), "
      "(SELECT count(*) FROM sqlite_master WHERE type = 'table')");
  if (!s) return s.error();
  Result<bool> row = s->step();
  if (!row) return row.error();
  int has_meta = s->integer(0), tables = s->integer(1);
  if (!has_meta) {
    if (tables > 0) {
      return db.fail(Error::Code::kInvalidArgument,
                     "the file is an SQLite database but not a Trellis store (it has no meta "
                     "table)");
    }
    return 0;  // a new, empty file
  }
  Result<std::optional<std::string>> text = meta_text(db, "schema_version");
  if (!text) return text.error();
  if (!*text || (*text)->empty()) {
    return db.fail(Error::Code::kInvalidArgument,
                   "the file is not a Trellis store (its meta table has no schema_version)");
  }
  int version = 0;
  for (char c : **text) {
    if (c < '0' || c > '9' || version > 1000000) {
      return db.fail(Error::Code::kInvalidArgument,
                     "schema_version '" + **text + "' is not a number");
    }
    version = version * 10 + (c - '0');
  }
  return version;
}

Error newer_schema(const Connection& db, int version) {
  return db.fail(Error::Code::kInvalidArgument,
                 "the store has schema version " + std::to_string(version) +
                     ", newer than this build's " + std::to_string(kSqliteSchemaVersion) +
                     ": use a newer Trellis to open it");
}

Status migrate(Connection& db) {
  db.set_operation("migrate");
  if (Status s = run(db, "BEGIN IMMEDIATE"); !s) return s;
  Result<int> version = schema_version(db);
  if (!version) {
    rollback(db);
    return version.error();
  }
  if (*version > kSqliteSchemaVersion) {
    rollback(db);
    return newer_schema(db, *version);
  }
  for (const Migration& m : kMigrations) {
    if (m.version <= *version) continue;
    Status s = db.exec(m.sql, "migration to schema version " + std::to_string(m.version));
    if (s) s = set_meta(db, "schema_version", std::to_string(m.version));
    if (!s) {
      rollback(db);
      return s;
    }
  }
  Status s = run(db, "COMMIT");
  if (!s) rollback(db);
  return s;
}

}  // namespace trellis::sqlite
