#include "store/sql_schema.h"

#include <array>

namespace trellis::sql {
namespace {

// Each step brings a database from the previous version to `version`; a new one runs them all.
// A later schema appends a step here and bumps kStoreSchemaVersion; released steps are never
// edited, since stores in the field have run them. A step is written once, for both engines: the
// words in braces are spelled per engine by kSpellings below, the one place where the two
// schemas differ (types, the identity column, the trigger's language). Events get their seq from
// the store's code (max + 1, under the write lock), not from the engine, so that the log is
// gap-free and in commit order in both.
struct Migration {
  int version;
  const char* sql;
};

constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value {untyped}  -- schema_version, version (the change counter), machine_spec, core_state
);
INSERT INTO meta (key, value) VALUES ('version', '0');

CREATE TABLE nodes (
  id {int64} PRIMARY KEY,          -- the machine's node index
  name TEXT NOT NULL UNIQUE,
  up INTEGER NOT NULL DEFAULT 0,
  drained INTEGER NOT NULL DEFAULT 0,
  agent TEXT NOT NULL DEFAULT '',
  last_heartbeat {real} NOT NULL DEFAULT 0,
  reason TEXT NOT NULL DEFAULT ''
);

CREATE TABLE jobs (
  id {identity},  -- an id is never given twice
  uid INTEGER NOT NULL,
  gid INTEGER NOT NULL,
  user_name TEXT NOT NULL,
  name TEXT NOT NULL,
  request_nodes INTEGER NOT NULL,
  request_shape TEXT NOT NULL,     -- JSON list of extents, [] for a node count
  request_rotate INTEGER NOT NULL,
  request_mode TEXT NOT NULL,      -- torus, mesh, noncont
  share INTEGER NOT NULL,
  time_limit {real} NOT NULL,
  argv TEXT NOT NULL,              -- JSON list of strings
  cwd TEXT NOT NULL,
  stdout_path TEXT NOT NULL,
  stderr_path TEXT NOT NULL,
  env TEXT NOT NULL,               -- JSON object
  state TEXT NOT NULL,             -- the state's letter: PD R S CG CD F CA TO NF
  reason TEXT NOT NULL,
  submit_time {real} NOT NULL,
  start_time {real} NOT NULL,
  end_time {real} NOT NULL,
  expected_start {real} NOT NULL,
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
  job_id {int64} NOT NULL REFERENCES jobs (id),
  node_id {int64} NOT NULL REFERENCES nodes (id),
  exclusive INTEGER NOT NULL CHECK (exclusive IN (0, 1)),
  PRIMARY KEY (job_id, node_id)
) {without_rowid};
CREATE UNIQUE INDEX allocations_one_exclusive ON allocations (node_id) WHERE exclusive = 1;
CREATE INDEX allocations_by_node ON allocations (node_id, job_id);
{exclusive_alone_trigger}

CREATE TABLE events (
  seq {int64} PRIMARY KEY,
  time {real} NOT NULL,
  kind TEXT NOT NULL,
  job {int64} NOT NULL DEFAULT 0,
  node TEXT NOT NULL DEFAULT '',
  detail TEXT NOT NULL DEFAULT ''
);
)sql";

// Version 2: several controllers share a store. A job's exit is recorded per node (any controller
// may hear any agent), why a running job is being stopped is kept with it, and one controller at
// a time holds the scheduler lease.
constexpr const char* kSchemaV2 = R"sql(
ALTER TABLE jobs ADD COLUMN stop TEXT NOT NULL DEFAULT '';  -- '', cancel, timeout
ALTER TABLE allocations ADD COLUMN exited INTEGER NOT NULL DEFAULT 0;
ALTER TABLE allocations ADD COLUMN exit_code INTEGER NOT NULL DEFAULT 0;
ALTER TABLE allocations ADD COLUMN signal INTEGER NOT NULL DEFAULT 0;

CREATE TABLE leases (
  role TEXT PRIMARY KEY,  -- 'scheduler'
  holder TEXT NOT NULL,   -- the controller holding it
  expires {real} NOT NULL -- wall-clock seconds; another controller may take it after this
);
)sql";

// Version 3: the time a job spent frozen (switched out by a gang policy, or suspended), recorded
// when it ends; while it runs, the controller keeps it.
constexpr const char* kSchemaV3 = R"sql(
ALTER TABLE jobs ADD COLUMN seconds_frozen {real} NOT NULL DEFAULT 0;
)sql";

// Version 4: a job requeued after node failures too often is held (hold: why; '' = not held),
// and how many node-failure requeues it has had.
constexpr const char* kSchemaV4 = R"sql(
ALTER TABLE jobs ADD COLUMN hold TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN node_failures INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 5: Slurm's job model. A job may be a task of an array (array_job is the array's job id,
// the id of its first task; array_limit caps how many of its tasks run at once), wait on a
// dependency (core/dependency.h's text), belong to a named partition, and run a batch script
// stored when it was submitted (job_scripts, one row per script, shared by an array's tasks).
// The indexes serve accounting (a user's jobs that ended in a time window), arrays and singleton
// dependencies (jobs of a user by name).
constexpr const char* kSchemaV5 = R"sql(
ALTER TABLE jobs ADD COLUMN partition_name TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN array_job {int64} NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN array_task INTEGER NOT NULL DEFAULT -1;
ALTER TABLE jobs ADD COLUMN array_limit INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN dependency TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN kill_on_invalid_dep INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN script_id {int64} NOT NULL DEFAULT 0;
CREATE TABLE job_scripts (
  id {int64} PRIMARY KEY,  -- the id of the job submitted with it (an array's first task)
  script TEXT NOT NULL
);
CREATE INDEX jobs_by_uid_end ON jobs (uid, end_time);
CREATE INDEX jobs_by_end ON jobs (end_time);
CREATE INDEX jobs_by_array ON jobs (array_job) WHERE array_job <> 0;
CREATE INDEX jobs_by_uid_name ON jobs (uid, name);
)sql";

// Version 6: a job's tasks (ranks): how many, how placed on its nodes, how they wire up
// (core/task_request.h's text; '' = one task per node, PMI-1); and the steps a job runs itself
// (`trellis run` inside it), each on some of its nodes, with each node's exit.
constexpr const char* kSchemaV6 = R"sql(
ALTER TABLE jobs ADD COLUMN tasks TEXT NOT NULL DEFAULT '';

CREATE TABLE steps (
  job_id {int64} NOT NULL REFERENCES jobs (id),
  attempt INTEGER NOT NULL,
  step_id INTEGER NOT NULL,
  argv TEXT NOT NULL,              -- JSON list of strings
  nodes TEXT NOT NULL,             -- its node ids, as id ranges ("0-3,8")
  tasks TEXT NOT NULL,             -- core/task_request.h's text
  ntasks INTEGER NOT NULL,
  state TEXT NOT NULL,             -- R CG CD F CA
  stop TEXT NOT NULL DEFAULT '',   -- '', cancel, failed
  reason TEXT NOT NULL DEFAULT '',
  exit_code INTEGER NOT NULL DEFAULT 0,
  signal INTEGER NOT NULL DEFAULT 0,
  start_time {real} NOT NULL,
  end_time {real} NOT NULL DEFAULT 0,
  PRIMARY KEY (job_id, attempt, step_id)
);
CREATE TABLE step_nodes (
  job_id {int64} NOT NULL,
  attempt INTEGER NOT NULL,
  step_id INTEGER NOT NULL,
  node_id {int64} NOT NULL REFERENCES nodes (id),
  exited INTEGER NOT NULL DEFAULT 0,
  exit_code INTEGER NOT NULL DEFAULT 0,
  signal INTEGER NOT NULL DEFAULT 0,
  reason TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (job_id, attempt, step_id, node_id)
) {without_rowid};
)sql";

// Version 7: the controller that places a pending job under concurrent allocation ('' = the
// scheduler-lease holder, as under lease allocation).
constexpr const char* kSchemaV7 = R"sql(
ALTER TABLE jobs ADD COLUMN owner TEXT NOT NULL DEFAULT '';
)sql";

// Version 8: what a pass's one INSERT of every allocation costs in PostgreSQL (about 35 us a row
// under a row trigger and two foreign keys). The rule that a node held exclusively is shared with
// no other allocation is checked once per statement over the rows it added (a transition
// table) instead of once per row; allocations keep no foreign keys (jobs and nodes are never
// deleted, and the one writer of allocations, a pass, reads and locks both rows first); and
// jobs' pages keep room for updates that change no indexed column (a pending job's note) to stay
// on their page. SQLite, whose row trigger is a function call, keeps its schema.
constexpr const char* kSchemaV8 = R"sql(
{statement_trigger}
)sql";

// Version 9: what a job asks of each node besides the node (core/resource_request.h's text:
// cores per task, memory, GPUs, sharing, features; '' = one core per task, nothing more).
constexpr const char* kSchemaV9 = R"sql(
ALTER TABLE jobs ADD COLUMN resources TEXT NOT NULL DEFAULT '';
)sql";

// Version 10: what a running job holds on each of its nodes when nodes are shared
// (core/node_grant.h's text: cores, memory, GPUs per node; '' = whole nodes, no grants).
constexpr const char* kSchemaV10 = R"sql(
ALTER TABLE jobs ADD COLUMN grants TEXT NOT NULL DEFAULT '';
)sql";

// Version 11: what each task used on its node (core/task_usage.h), from the agents' exit reports:
// step 0 is the job's own command. A row per job, attempt, step and node; the first report counts.
constexpr const char* kSchemaV11 = R"sql(
CREATE TABLE task_usage (
  job_id {int64} NOT NULL,
  attempt INTEGER NOT NULL,
  step_id INTEGER NOT NULL,
  node_id {int64} NOT NULL,
  user_usec {int64} NOT NULL,
  system_usec {int64} NOT NULL,
  max_rss_kb {int64} NOT NULL,
  PRIMARY KEY (job_id, attempt, step_id, node_id)
) {without_rowid};
)sql";

// Version 12: the site's accounts (core/accounts.h): the tree of accounts under root, the users,
// their associations with accounts (shares and limits of each), and the account and QOS each job
// is charged to ('' = none: a site without accounts). Limits are kept as their sacctmgr text
// ("grptres=node=4 maxjobs=2"), read back by the same parser.
constexpr const char* kSchemaV12 = R"sql(
CREATE TABLE accounts (
  name TEXT PRIMARY KEY,
  parent TEXT NOT NULL,          -- '' for root
  shares {int64} NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  organization TEXT NOT NULL DEFAULT '',
  limits TEXT NOT NULL DEFAULT ''
);
INSERT INTO accounts (name, parent, shares, description, organization)
  VALUES ('root', '', 1, 'default root account', 'root');
CREATE TABLE account_users (
  name TEXT PRIMARY KEY,
  default_account TEXT NOT NULL,
  admin_level TEXT NOT NULL DEFAULT 'None'
);
CREATE TABLE associations (
  user_name TEXT NOT NULL,
  account TEXT NOT NULL,
  shares {int64} NOT NULL,
  limits TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (user_name, account)
);
ALTER TABLE jobs ADD COLUMN account TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN qos TEXT NOT NULL DEFAULT '';
)sql";

// Version 13: the site's QOS (core/qos.h), "normal" from the start, each with its settings as
// sacctmgr text ("priority=100 maxjobsperuser=2"), read back by the same parser; the QOS each
// account and association may use (a comma list; '' = its parent's) and an association's
// default QOS.
constexpr const char* kSchemaV13 = R"sql(
CREATE TABLE qos (
  name TEXT PRIMARY KEY,
  description TEXT NOT NULL DEFAULT '',
  settings TEXT NOT NULL DEFAULT ''
);
INSERT INTO qos (name, description, settings) VALUES ('normal', 'Normal QOS default', '');
ALTER TABLE accounts ADD COLUMN qos TEXT NOT NULL DEFAULT '';
ALTER TABLE associations ADD COLUMN qos TEXT NOT NULL DEFAULT '';
ALTER TABLE associations ADD COLUMN default_qos TEXT NOT NULL DEFAULT '';
)sql";

constexpr std::array<Migration, 13> kMigrations{{{1, kSchemaV1},
                                                 {2, kSchemaV2},
                                                 {3, kSchemaV3},
                                                 {4, kSchemaV4},
                                                 {5, kSchemaV5},
                                                 {6, kSchemaV6},
                                                 {7, kSchemaV7},
                                                 {8, kSchemaV8},
                                                 {9, kSchemaV9},
                                                 {10, kSchemaV10},
                                                 {11, kSchemaV11},
                                                 {12, kSchemaV12},
                                                 {13, kSchemaV13}}};
static_assert(kMigrations.back().version == kStoreSchemaVersion,
              "the last migration step must bring a store to kStoreSchemaVersion");

// How each engine spells the words in braces.
struct Spelling {
  std::string_view word, sqlite, postgresql;
};
constexpr std::string_view kSqliteTrigger =
    R"sql(CREATE TRIGGER allocations_exclusive_alone BEFORE INSERT ON allocations
WHEN EXISTS (SELECT 1 FROM allocations WHERE node_id = NEW.node_id AND exclusive <> NEW.exclusive)
BEGIN
  SELECT RAISE(ABORT, 'a node held exclusively is shared with no other allocation');
END;)sql";
constexpr std::string_view kPostgresTrigger =
    R"sql(CREATE FUNCTION allocations_exclusive_alone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM allocations WHERE node_id = NEW.node_id
             AND exclusive <> NEW.exclusive) THEN
    RAISE EXCEPTION 'a node held exclusively is shared with no other allocation'
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER allocations_exclusive_alone BEFORE INSERT ON allocations
FOR EACH ROW EXECUTE FUNCTION allocations_exclusive_alone();)sql";
constexpr std::string_view kPostgresStatementTrigger =
    R"sql(DROP TRIGGER allocations_exclusive_alone ON allocations;
CREATE OR REPLACE FUNCTION allocations_exclusive_alone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM added n JOIN allocations a ON a.node_id = n.node_id
             AND a.exclusive <> n.exclusive) THEN
    RAISE EXCEPTION 'a node held exclusively is shared with no other allocation'
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER allocations_exclusive_alone AFTER INSERT ON allocations
REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION allocations_exclusive_alone();
ALTER TABLE allocations DROP CONSTRAINT IF EXISTS allocations_job_id_fkey;
ALTER TABLE allocations DROP CONSTRAINT IF EXISTS allocations_node_id_fkey;
ALTER TABLE jobs SET (fillfactor = 70);)sql";
constexpr std::array<Spelling, 7> kSpellings{{
    {"{untyped}", "", "TEXT"},  // SQLite's meta.value takes any type
    {"{int64}", "INTEGER", "BIGINT"},
    {"{real}", "REAL", "DOUBLE PRECISION"},
    // An id is never given twice in either.
    {"{identity}", "INTEGER PRIMARY KEY AUTOINCREMENT",
     "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"},
    {"{without_rowid}", "WITHOUT ROWID", ""},
    {"{exclusive_alone_trigger}", kSqliteTrigger, kPostgresTrigger},
    {"{statement_trigger}", "SELECT 1;", kPostgresStatementTrigger},
}};

bool is_postgres(const Session& db) {
  return db.dialect().engine == "PostgreSQL";
}

// A step's SQL as `db`'s engine spells it.
std::string spelled(const Session& db, std::string_view sql) {
  std::string out(sql);
  for (const Spelling& s : kSpellings) {
    std::string_view with = is_postgres(db) ? s.postgresql : s.sqlite;
    for (size_t at = out.find(s.word); at != std::string::npos; at = out.find(s.word, at)) {
      out.replace(at, s.word.size(), with);
      at += with.size();
    }
  }
  return out;
}

Error newer_schema(const Session& db, int version) {
  return db.fail(Error::Code::kInvalidArgument,
                 "the store has schema version " + std::to_string(version) +
                     ", newer than this build's " + std::to_string(kStoreSchemaVersion) +
                     ": use a newer Trellis to open it");
}

}  // namespace

Result<std::optional<std::string>> meta_text(Session& db, std::string_view key) {
  Result<Rows> rows = db.query("SELECT value FROM meta WHERE key = ?", {key});
  if (!rows) return rows.error();
  if (rows->empty() || rows->is_null(0, 0)) return std::optional<std::string>();
  return std::optional<std::string>(rows->text(0, 0));
}

Status set_meta(Session& db, std::string_view key, std::string_view value) {
  Result<Rows> rows = db.query(
      "INSERT INTO meta (key, value) VALUES (?, ?) "
      "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      {key, value});
  if (!rows) return rows.error();
  return Ok{};
}

Result<int> schema_version(Session& db) {
  Result<Rows> rows = db.query(db.dialect().count_tables);
  if (!rows) return rows.error();
  if (rows->empty()) return db.fail(Error::Code::kInternal, "counting the tables gave no row");
  int64_t has_meta = rows->int64(0, 0), tables = rows->int64(0, 1);
  std::string what = is_postgres(db) ? "the database" : "the file";
  if (!has_meta) {
    if (tables > 0) {
      return db.fail(Error::Code::kInvalidArgument,
                     what + " is " + (is_postgres(db) ? "a" : "an") + " " +
                         std::string(db.dialect().engine) +
                         " database but not a Trellis store (it has no meta table)");
    }
    return 0;  // a new, empty database
  }
  Result<std::optional<std::string>> text = meta_text(db, "schema_version");
  if (!text) return text.error();
  if (!*text || (*text)->empty()) {
    return db.fail(Error::Code::kInvalidArgument,
                   what + " is not a Trellis store (its meta table has no schema_version)");
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

Status migrate(Session& db) {
  db.set_operation("migrate");
  if (Status s = db.begin(true); !s) return s;
  // Two processes that open a new store at once must not both create it.
  if (Status s = db.lock_writers_now(); !s) {
    db.rollback();
    return s;
  }
  Result<int> version = schema_version(db);
  if (!version) {
    db.rollback();
    return version.error();
  }
  if (*version > kStoreSchemaVersion) {
    db.rollback();
    return newer_schema(db, *version);
  }
  for (const Migration& m : kMigrations) {
    if (m.version <= *version) continue;
    Status s = db.exec_script(spelled(db, m.sql),
                              "migration to schema version " + std::to_string(m.version));
    if (s) s = set_meta(db, "schema_version", std::to_string(m.version));
    if (!s) {
      db.rollback();
      return s;
    }
  }
  Status s = db.commit();
  if (!s) db.rollback();
  return s;
}

Status check_schema(Session& db) {
  db.set_operation("open");
  if (Status s = db.begin(false); !s) return s;
  Result<int> version = schema_version(db);
  db.rollback();
  if (!version) return version.error();
  if (*version == 0) {
    return db.fail(Error::Code::kInvalidArgument,
                   std::string(is_postgres(db) ? "the database" : "the file") +
                       " is empty, not a Trellis store");
  }
  if (*version > kStoreSchemaVersion) return newer_schema(db, *version);
  if (*version < kStoreSchemaVersion) {
    return db.fail(Error::Code::kUnavailable,
                   "the store has schema version " + std::to_string(*version) +
                       ", older than this build's " + std::to_string(kStoreSchemaVersion) +
                       ": open it read-write once (start the controller) to migrate it");
  }
  return Ok{};
}

}  // namespace trellis::sql
