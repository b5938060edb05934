// The SQLite backend of the StateStore (sqlite_store.h): its reads and writes. The connection
// and transactions are in sqlite_connection.h, the schema in sqlite_schema.h.
#include "store/sqlite_store.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "store/json_fields.h"
#include "store/sqlite_connection.h"
#include "store/sqlite_schema.h"

namespace trellis {

using namespace sqlite;       // NOLINT: this file is the SQLite backend
using namespace json_fields;  // NOLINT

namespace {

bool is_active(JobState s) {
  return !is_final(s);
}
bool holds_nodes(JobState s) {
  return s == JobState::kRunning || s == JobState::kSuspended || s == JobState::kCompleting;
}

Status log_event(Connection& db, Seconds time, std::string_view kind, JobId job,
                 std::string_view node, std::string_view detail) {
  Result<Statement> s =
      db.prepare("INSERT INTO events (time, kind, job, node, detail) VALUES (?, ?, ?, ?, ?)");
  if (!s) return s.error();
  return s->bind(time).bind(kind).bind(job).bind(node).bind(detail).run();
}

Result<int> node_count(Connection& db) {
  if (db.node_count > 0) return db.node_count;
  Result<Statement> s = db.prepare("SELECT count(*) FROM nodes");
  if (!s) return s.error();
  Result<bool> row = s->step();
  if (!row) return row.error();
  db.node_count = *row ? s->integer(0) : 0;
  return db.node_count;
}

Status check_node_ids(Connection& db, const std::vector<NodeId>& nodes) {
  Result<int> count = node_count(db);
  if (!count) return count.error();
  for (NodeId id : nodes) {
    if (id < 0 || id >= *count) {
      if (*count == 0) return db.fail(Error::Code::kNotFound, "the store has no cluster yet");
      return db.fail(Error::Code::kNotFound, "node id " + std::to_string(id) +
                                                 " is not one of the cluster's (0 to " +
                                                 std::to_string(*count - 1) + ")");
    }
  }
  return Ok{};
}

// The columns of a StoredJob, in read_job()'s order.
constexpr std::string_view kJobColumns =
    "id, uid, gid, user_name, name, request_nodes, request_shape, request_rotate, request_mode, "
    "share, time_limit, argv, cwd, stdout_path, stderr_path, env, state, reason, submit_time, "
    "start_time, end_time, expected_start, attempt, nodes, box_anchor, box_extents, exit_code, "
    "signal";

Result<StoredJob> read_job(const Connection& db, const Statement& s) {
  StoredJob j;
  j.id = s.int64(0);
  auto bad = [&](std::string_view column) {
    return db.fail(Error::Code::kInternal,
                   "job " + std::to_string(j.id) + " has a malformed " + std::string(column));
  };
  j.uid = s.integer(1);
  j.gid = s.integer(2);
  j.user = s.text(3);
  j.name = s.text(4);
  j.request.nodes = s.integer(5);
  if (!decode_ints(s.text(6), j.request.shape)) return bad("request_shape");
  j.request.rotate = s.integer(7) != 0;
  Result<PlacementMode> mode = parse_placement_mode(s.text(8));
  if (!mode) return bad("request_mode");
  j.request.mode = *mode;
  j.share = s.integer(9) != 0;
  j.time_limit = s.real(10);
  if (!decode_strings(s.text(11), j.argv)) return bad("argv");
  j.cwd = s.text(12);
  j.output = s.text(13);
  j.error = s.text(14);
  if (!decode_env(s.text(15), j.env)) return bad("env");
  Result<JobState> state = parse_job_state(s.text(16));
  if (!state) return bad("state");
  j.state = *state;
  j.reason = s.text(17);
  j.submit_time = s.real(18);
  j.start_time = s.real(19);
  j.end_time = s.real(20);
  j.expected_start = s.real(21);
  j.attempt = s.integer(22);
  if (!decode_ints(s.text(23), j.nodes)) return bad("nodes");
  if (!decode_ints(s.text(24), j.box_anchor)) return bad("box_anchor");
  if (!decode_ints(s.text(25), j.box_extents)) return bad("box_extents");
  j.exit_code = s.integer(26);
  j.signal = s.integer(27);
  return j;
}

// A job's state and attempt, for the checks of the writers.
struct JobStatus {
  JobState state = JobState::kPending;
  int attempt = 0;
  bool share = false;
};

Result<JobStatus> job_status(Connection& db, JobId id) {
  Result<Statement> s = db.prepare("SELECT state, attempt, share FROM jobs WHERE id = ?");
  if (!s) return s.error();
  s->bind(id);
  Result<bool> row = s->step();
  if (!row) return row.error();
  if (!*row) return db.fail(Error::Code::kNotFound, "no job " + std::to_string(id));
  Result<JobState> state = parse_job_state(s->text(0));
  if (!state) {
    return db.fail(Error::Code::kInternal, "job " + std::to_string(id) + " has a malformed state");
  }
  return JobStatus{*state, s->integer(1), s->integer(2) != 0};
}

// Which job holds `node` (after an allocation was refused), for the message.
std::string holder_of(Connection& db, NodeId node) {
  std::string text = "node " + std::to_string(node);
  Result<Statement> s = db.prepare(
      "SELECT n.name, a.job_id, a.exclusive FROM allocations a JOIN nodes n ON n.id = a.node_id "
      "WHERE a.node_id = ? ORDER BY a.exclusive DESC, a.job_id LIMIT 1");
  if (!s) return text + " is held";
  s->bind(node);
  Result<bool> row = s->step();
  if (!row || !*row) return text + " is held";
  return text + " (" + s->text(0) + ") is held " + (s->integer(2) ? "exclusively " : "") +
         "by job " + std::to_string(s->int64(1));
}

Status start_job(Connection& db, const JobStart& start, Seconds now) {
  std::string job = "job " + std::to_string(start.job);
  Result<JobStatus> status = job_status(db, start.job);
  if (!status) return status.error();
  if (status->state != JobState::kPending) {
    return db.fail(Error::Code::kDoesNotFitNow,
                   job + " cannot start: it is " + std::string(state_name(status->state)));
  }
  if (start.attempt != status->attempt + 1) {
    return db.fail(Error::Code::kDoesNotFitNow,
                   job + " cannot start as attempt " + std::to_string(start.attempt) +
                       ": its next attempt is " + std::to_string(status->attempt + 1));
  }
  if (start.nodes.empty()) {
    return db.fail(Error::Code::kInvalidArgument, job + " is started on no nodes");
  }
  if (start.box_anchor.size() != start.box_extents.size()) {
    return db.fail(Error::Code::kInvalidArgument,
                   job + "'s box has an anchor of " + std::to_string(start.box_anchor.size()) +
                       " coordinates and " + std::to_string(start.box_extents.size()) + " extents");
  }
  std::vector<NodeId> nodes = start.nodes;
  std::sort(nodes.begin(), nodes.end());
  if (auto dup = std::adjacent_find(nodes.begin(), nodes.end()); dup != nodes.end()) {
    return db.fail(Error::Code::kInvalidArgument,
                   job + " is started on node " + std::to_string(*dup) + " twice");
  }
  if (Status s = check_node_ids(db, nodes); !s) return s;

  // The database's constraints are the one check that a node is free: a refused insert is a
  // node held by another job (or by an earlier start of this pass).
  int exclusive = status->share ? 0 : 1;
  for (NodeId node : nodes) {
    Result<Statement> s =
        db.prepare("INSERT INTO allocations (job_id, node_id, exclusive) VALUES (?, ?, ?)");
    if (!s) return s.error();
    int rc = s->bind(start.job).bind(node).bind(exclusive).step_rc();
    if ((rc & 0xff) == SQLITE_CONSTRAINT) {
      std::string held = holder_of(db, node);
      return db.fail(Error::Code::kDoesNotFitNow, job + " cannot start: " + held);
    }
    if (rc != SQLITE_DONE) return s->error(rc);
  }
  Result<Statement> s = db.prepare(
      "UPDATE jobs SET state = 'R', attempt = ?, start_time = ?, end_time = 0, "
      "expected_start = 0, reason = '', nodes = ?, box_anchor = ?, box_extents = ?, "
      "exit_code = 0, signal = 0 WHERE id = ?");
  if (!s) return s.error();
  Status updated = s->bind(start.attempt)
                       .bind(now)
                       .bind(encode_ints(nodes))
                       .bind(encode_ints(start.box_anchor))
                       .bind(encode_ints(start.box_extents))
                       .bind(start.job)
                       .run();
  if (!updated) return updated;
  return log_event(db, now, "start", start.job, "",
                   "attempt " + std::to_string(start.attempt) + " on " +
                       std::to_string(nodes.size()) + " nodes");
}

Status free_allocations(Connection& db, JobId job) {
  Result<Statement> s = db.prepare("DELETE FROM allocations WHERE job_id = ?");
  if (!s) return s.error();
  return s->bind(job).run();
}

}  // namespace

// --- SqliteStore

SqliteStore::SqliteStore(std::unique_ptr<Connection> db) : db_(std::move(db)) {}
SqliteStore::~SqliteStore() = default;

const std::string& SqliteStore::path() const {
  return db_->path();
}

Result<std::unique_ptr<SqliteStore>> SqliteStore::open(const std::string& path,
                                                       StoreOptions options, int busy_timeout_ms) {
  if (path.empty()) return fail("the store's path is empty");
  std::error_code ec;
  if (options.read_only && !std::filesystem::exists(path, ec)) {
    return fail(Error::Code::kNotFound,
                "store " + path + " does not exist (a read-only open never creates one)");
  }
  int flags = options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  sqlite3* raw = nullptr;
  // NOMUTEX: the store's own mutex serialises the connection.
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  DbHandle handle(raw);
  if (rc != SQLITE_OK) {
    std::string detail = handle ? sqlite3_errmsg(handle.get()) : sqlite3_errstr(rc);
    return fail(Error::Code::kUnavailable, "cannot open store " + path + ": " + detail);
  }
  sqlite3_extended_result_codes(handle.get(), 1);
  sqlite3_busy_timeout(handle.get(), busy_timeout_ms);
  auto db = std::make_unique<Connection>(path, std::move(handle), options.read_only);
  db->busy_timeout_ms = busy_timeout_ms;

  db->set_operation("open");
  // WAL lets readers in other processes read while the controller writes; it is a property of
  // the file, so a read-only connection finds it set. NORMAL skips the fsync of each commit.
  if (!options.read_only) {
    if (Status s = db->exec("PRAGMA journal_mode = WAL", "cannot set WAL mode"); !s) {
      return s.error();
    }
  }
  if (Status s = db->exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON",
                          "cannot configure the connection");
      !s) {
    return s.error();
  }

  if (options.read_only) {
    Result<int> version = schema_version(*db);
    if (!version) return version.error();
    if (*version == 0) {
      return db->fail(Error::Code::kInvalidArgument, "the file is empty, not a Trellis store");
    }
    if (*version > kSqliteSchemaVersion) return newer_schema(*db, *version);
    if (*version < kSqliteSchemaVersion) {
      return db->fail(Error::Code::kUnavailable,
                      "the store has schema version " + std::to_string(*version) +
                          ", older than this build's " + std::to_string(kSqliteSchemaVersion) +
                          ": open it read-write once (start the controller) to migrate it");
    }
  } else if (Status s = migrate(*db); !s) {
    return s.error();
  }
  return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(db)));
}

Status SqliteStore::init_cluster(std::string_view machine_spec,
                                 const std::vector<std::string>& node_names) {
  std::lock_guard lock(mutex_);
  Connection& db = *db_;
  return transaction(db, "init_cluster", true, [&](bool& changed) -> Status {
    if (machine_spec.empty()) return db.fail(Error::Code::kInvalidArgument, "no machine spec");
    if (node_names.empty()) return db.fail(Error::Code::kInvalidArgument, "no node names");
    std::set<std::string_view> seen;
    for (const std::string& name : node_names) {
      if (name.empty()) return db.fail(Error::Code::kInvalidArgument, "a node name is empty");
      if (!seen.insert(name).second) {
        return db.fail(Error::Code::kInvalidArgument, "node name '" + name + "' appears twice");
      }
    }
    Result<std::optional<std::string>> spec = meta_text(db, "machine_spec");
    if (!spec) return spec.error();
    if (*spec) {
      // Initialised before: the same cluster is fine, another one is a misdirected controller.
      std::vector<std::string> names;
      Result<Statement> s = db.prepare("SELECT name FROM nodes ORDER BY id");
      if (!s) return s.error();
      for (;;) {
        Result<bool> row = s->step();
        if (!row) return row.error();
        if (!*row) break;
        names.push_back(s->text(0));
      }
      std::string theirs = "'" + **spec + "' (" + std::to_string(names.size()) + " nodes)";
      std::string ours =
          "'" + std::string(machine_spec) + "' (" + std::to_string(node_names.size()) + " nodes)";
      if (**spec != machine_spec || names.size() != node_names.size()) {
        return db.fail(Error::Code::kInvalidArgument,
                       "the store holds the cluster " + theirs + ", not " + ours);
      }
      for (size_t i = 0; i < names.size(); ++i) {
        if (names[i] != node_names[i]) {
          return db.fail(Error::Code::kInvalidArgument, "the store holds the cluster " + theirs +
                                                            " whose node " + std::to_string(i) +
                                                            " is '" + names[i] + "', not '" +
                                                            node_names[i] + "'");
        }
      }
      return Ok{};
    }
    if (Status s = set_meta(db, "machine_spec", machine_spec); !s) return s;
    for (size_t i = 0; i < node_names.size(); ++i) {
      Result<Statement> s = db.prepare("INSERT INTO nodes (id, name) VALUES (?, ?)");
      if (!s) return s.error();
      if (Status r = s->bind(static_cast<int64_t>(i)).bind(node_names[i]).run(); !r) return r;
    }
    changed = true;
    db.node_count = 0;  // read again after the commit
    return Ok{};
  });
}

Result<std::string> SqliteStore::machine_spec() {
  std::lock_guard lock(mutex_);
  Connection& db = *db_;
  return transaction(db, "machine_spec", false, [&](bool&) -> Result<std::string> {
    Result<std::optional<std::string>> spec = meta_text(db, "machine_spec");
    if (!spec) return spec.error();
    if (!*spec) {
      return db.fail(Error::Code::kNotFound, "the store has no cluster (init_cluster never ran)");
    }
    return **spec;
  });
}

Result<int64_t> SqliteStore::version() {
  std::lock_guard lock(mutex_);
  Connection& db = *db_;
  db.set_operation("version");
  // One statement is its own read transaction.
  Result<Statement> s = db.prepare("SELECT value FROM meta WHERE key = 'version'");
  if (!s) return s.error();
  Result<bool> row = s->step();
  if (!row) return row.error();
  if (!*row) return db.fail(Error::Code::kInternal, "the meta table has no version row");
  return s->int64(0);
}

Result<JobId> SqliteStore::add_job(const StoredJob& job, Seconds now) {
  std::lock_guard lock(mutex_);
  Connection& db = *db_;
  return transaction(db, "add_job", true, [&](bool& changed) -> Result<JobId> {
    if (job.request.nodes < 1) {
      return db.fail(Error::Code::kInvalidArgument,
                     "a job asks for " + std::to_string(job.request.nodes) + " nodes");
    }
    nlohmann::json argv = nlohmann::json::array();
    for (size_t i = 0; i < job.argv.size(); ++i) {
      if (!is_utf8(job.argv[i])) {
        return db.fail(Error::Code::kInvalidArgument,
                       "argv[" + std::to_string(i) + "] is not valid UTF-8");
      }
      argv.push_back(job.argv[i]);
    }
    nlohmann::json env = nlohmann::json::object();
    for (const auto& [key, value] : job.env) {
      if (!is_utf8(key) || !is_utf8(value)) {
        return db.fail(
            Error::Code::kInvalidArgument,
            "environment variable " + std::to_string(env.size()) + " is not valid UTF-8");
      }
      env[key] = value;
    }
    Result<Statement> s = db.prepare(
        "INSERT INTO jobs (uid, gid, user_name, name, request_nodes, request_shape, "
        "request_rotate, request_mode, share, time_limit, argv, cwd, stdout_path, stderr_path, "
        "env, state, reason, submit_time, start_time, end_time, expected_start, attempt, nodes, "
        "box_anchor, box_extents, exit_code, signal) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?, ?, 'PD', ?, ?, 0, 0, 0, 0, '[]', '[]', '[]', 0, 0)");
    if (!s) return s.error();
    Status inserted = s->bind(job.uid)
                          .bind(job.gid)
                          .bind(job.user)
                          .bind(job.name)
                          .bind(job.request.nodes)
                          .bind(encode_ints(job.request.shape))
                          .bind(job.request.rotate ? 1 : 0)
                          .bind(to_string(job.request.mode))
                          .bind(job.share ? 1 : 0)
                          .bind(job.time_limit)
                          .bind(dump(argv))
                          .bind(job.cwd)
                          .bind(job.output)
                          .bind(job.error)
                          .bind(dump(env))
                          .bind(job.reason)
                          .bind(now)
                          .run();
    if (!inserted) return inserted.error();
    JobId id = sqlite3_last_insert_rowid(db.db());
    if (Status e = log_event(db, now, "submit", id, "", job.name); !e) return e.error();
    changed = true;
    return id;
  });
}

Result<std::vector<StoredJob>> SqliteStore::list_jobs(const JobQuery& query) {
  std::lock_guard lock(mutex_);
  Connection& db = *db_;
  return transaction(db, "list_jobs", false, [&](bool&) -> Result<std::vector<StoredJob>> {
    std::vector<StoredJob> jobs;
    // The states asked for: `states` (or all) and, with only_active, the active ones among them.
    std::vector<JobState> states = query.states;
    if (query.only_active) {
      if (states.empty()) {
        states = {JobState::kPending, JobState::kRunning, JobState::kSuspended,
                  JobState::kCompleting};
      } else {
        std::erase_if(states, [](JobState s) { return !is_active(s); });
        if (states.empty()) return jobs;  // only final states asked, and only active ones
      }
    }
    // One statement per combination of filters (eight at most), each cached; lists are bound as
    // JSON arrays so that the text of the statement does not depend on their length.
    std::string sql = "SELECT " + std::string(kJobColumns) + " FROM jobs";
    const char* joiner = " WHERE ";
    if (!query.ids.empty()) {
      sql += joiner + std::string("id IN (SELECT value FROM json_each(?))");
      joiner = " AND ";
    }
    if (!states.empty()) {
      sql += joiner + std::string("state IN (SELECT value FROM json_each(?))");
      joiner = " AND ";
    }
    if (query.uid) sql += joiner + std::string("uid = ?");
    sql += " ORDER BY id";
    Result<Statement> s = db.prepare(sql);
    if (!s) return s.error();
    if (!query.ids.empty()) s->bind(encode_ints(query.ids));
    if (!states.empty()) {
      nlohmann::json letters = nlohmann::json::array();
      for (JobState state : states) letters.push_back(std::string(state_letter(state)));
      s->bind(dump(letters));
    }
    if (query.uid) s->bind(*query.uid);
    for (;;) {
      Result<bool> row = s->step();
      if (!row) return row.error();
      if (!*row) break;
      Result<StoredJob> job = read_job(db, *s);
      if (!job) return job.error();
      jobs.push_back(std::move(*job));
    }
    return jobs;
  });
}

Result<StoredJob> SqliteStore::job(JobId id) {
  std::lock_guard lock(mutex_);
  Connection& db = *db_;
  return transaction(db, "job", false, [&](bool&) -> Result<StoredJob> {
    static const std::string kSql =
        "SELECT " + std::string(kJobColumns) + " FROM jobs WHERE id = ?";
    Result<Statement> s = db.prepare(kSql);
    if (!s) return s.error();
    s->bind(id);
    Result<bool> row = s->step();
    if (!row) return row.error();
    if (!*row) return db.fail(Error::Code::kNotFound, "no job " + std::to_string(id));
    return read_job(db, *s);
  });
}

Status SqliteStore::commit_pass(const PassCommit& pass, Seconds now) {
  std::lock_guard lock(mutex_);
  Connection& db = *db_;
  return transaction(db, "commit_pass", true, [&](bool& changed) -> Status {
    for (const JobStart& start : pass.starts) {
      if (Status s = start_job(db, start, now); !s) return s;
    }
    changed = !pass.starts.empty();
    for (const PendingNote& note : pass.notes) {
      // A note is for a job the pass saw pending; one that has started or ended since (another
      // writer, or a start of this pass) keeps its state and gets no note. An unchanged note
      // writes nothing.
      Result<Statement> s = db.prepare(
          "UPDATE jobs SET reason = ?1, expected_start = ?2 WHERE id = ?3 AND state = 'PD' "
          "AND (reason <> ?1 OR expected_start <> ?2)");
      if (!s) return s.error();
      if (Status r = s->bind(note.reason).bind(note.expected_start).bind(note.job).run(); !r) {
        return r;
      }
      if (sqlite3_changes(db.db()) > 0) {
        changed = true;
      } else if (Result<JobStatus> status = job_status(db, note.job); !status) {
        return status.error();  // no such job
      }
    }
    if (pass.core_state) {
      // Most passes leave the reservations as they were: then the version stays too.
      Result<std::optional<std::string>> old = meta_text(db, "core_state");
      if (!old) return old.error();
      if (*old != pass.core_state) {
        if (Status s = set_meta(db, "core_state", *pass.core_state); !s) return s;
        changed = true;
      }
    }
    return Ok{};
  });
}

Result<bool> SqliteStore::end_job(const JobEnd& end, Seconds now) {
  std::lock_guard lock(mutex_);
  Connection& db = *db_;
  return transaction(db, "end_job", true, [&](bool& changed) -> Result<bool> {
    bool requeue = end.state == JobState::kPending;
    if (!requeue && !is_final(end.state)) {
      return db.fail(Error::Code::kInvalidArgument,
                     "a job ends in a final state or PENDING (a requeue), not " +
                         std::string(state_name(end.state)));
    }
    Result<JobStatus> status = job_status(db, end.job);
    if (!status) return status.error();
    // Only the attempt that holds nodes now can end; any other report is late or repeated.
    if (!holds_nodes(status->state) || status->attempt != end.attempt) return false;
    if (Status s = free_allocations(db, end.job); !s) return s.error();
    Result<Statement> s =
        db.prepare(requeue ? "UPDATE jobs SET state = 'PD', reason = ?, exit_code = ?, signal = ?, "
                             "start_time = 0, nodes = '[]', box_anchor = '[]', box_extents = '[]' "
                             "WHERE id = ?"
                           : "UPDATE jobs SET state = ?, reason = ?, exit_code = ?, signal = ?, "
                             "end_time = ? WHERE id = ?");
    if (!s) return s.error();
    if (!requeue) s->bind(state_letter(end.state));
    s->bind(end.reason).bind(end.exit_code).bind(end.signal);
    if (!requeue) s->bind(now);
    if (Status r = s->bind(end.job).run(); !r) return r.error();
    std::string detail = requeue ? "attempt " + std::to_string(end.attempt) + " stopped"
                                 : std::string(state_name(end.state));
    detail += ", exit " + std::to_string(end.exit_code);
    if (end.signal) detail += ", signal " + std::to_string(end.signal);
    if (!end.reason.empty()) detail += ": " + end.reason;
    if (Status e = log_event(db, now, requeue ? "requeue" : "end", end.job, "", detail); !e) {
      return e.error();
    }
    changed = true;
    return true;
  });
}

Status SqliteStore::set_job_state(JobId job, JobState state, std::string_view reason, Seconds now) {
  std::lock_guard lock(mutex_);
  Connection& db = *db_;
  return transaction(db, "set_job_state", true, [&](bool& changed) -> Status {
    Result<JobStatus> status = job_status(db, job);
    if (!status) return status.error();
    std::string name = "job " + std::to_string(job);
    std::string from(state_name(status->state)), to(state_name(state));
    if (is_final(status->state)) {
      return db.fail(Error::Code::kInvalidArgument,
                     name + " is " + from + ", a final state: it cannot become " + to);
    }
    if (holds_nodes(state) && !holds_nodes(status->state)) {
      return db.fail(Error::Code::kInvalidArgument, name + " is " + from + ": it becomes " + to +
                                                        " only once a pass has started it");
    }
    if (state == JobState::kPending && status->state != JobState::kPending) {
      return db.fail(Error::Code::kInvalidArgument,
                     name + " is " + from + ": end_job() requeues a job that holds nodes");
    }
    bool final = is_final(state);
    if (final) {
      if (Status s = free_allocations(db, job); !s) return s;
    }
    Result<Statement> s = db.prepare(
        "UPDATE jobs SET state = ?, reason = ?, end_time = CASE WHEN ? THEN ? ELSE end_time END "
        "WHERE id = ?");
    if (!s) return s.error();
    if (Status r =
            s->bind(state_letter(state)).bind(reason).bind(final ? 1 : 0).bind(now).bind(job).run();
        !r) {
      return r;
    }
    std::string detail = from + " -> " + to;
    if (!reason.empty()) detail += ": " + std::string(reason);
    if (Status e =
            log_event(db, now, state == JobState::kCancelled ? "cancel" : "state", job, "", detail);
        !e) {
      return e;
    }
    changed = true;
    return Ok{};
  });
}

Result<std::optional<std::string>> SqliteStore::core_state() {
  std::lock_guard lock(mutex_);
  Connection& db = *db_;
  return transaction(db, "core_state", false, [&](bool&) -> Result<std::optional<std::string>> {
    return meta_text(db, "core_state");
  });
}

Result<std::vector<StoredNode>> SqliteStore::list_nodes() {
  std::lock_guard lock(mutex_);
  Connection& db = *db_;
  return transaction(db, "list_nodes", false, [&](bool&) -> Result<std::vector<StoredNode>> {
    std::vector<StoredNode> nodes;
    Result<Statement> s = db.prepare(
        "SELECT id, name, up, drained, agent, last_heartbeat, reason FROM nodes ORDER BY id");
    if (!s) return s.error();
    for (;;) {
      Result<bool> row = s->step();
      if (!row) return row.error();
      if (!*row) break;
      StoredNode n;
      n.id = s->integer(0);
      n.name = s->text(1);
      n.up = s->integer(2) != 0;
      n.drained = s->integer(3) != 0;
      n.agent = s->text(4);
      n.last_heartbeat = s->real(5);
      n.reason = s->text(6);
      nodes.push_back(std::move(n));
    }
    // Node ids are 0..n-1, so an id is an index into `nodes`.
    Result<Statement> a =
        db.prepare("SELECT node_id, job_id FROM allocations ORDER BY node_id, job_id");
    if (!a) return a.error();
    for (;;) {
      Result<bool> row = a->step();
      if (!row) return row.error();
      if (!*row) break;
      int64_t node = a->int64(0);
      if (node < 0 || node >= static_cast<int64_t>(nodes.size()) || nodes[node].id != node) {
        return db.fail(Error::Code::kInternal,
                       "an allocation names node " + std::to_string(node) + ", not in nodes");
      }
      nodes[node].jobs.push_back(a->int64(1));
    }
    return nodes;
  });
}

Status SqliteStore::nodes_seen(const std::vector<std::string>& names, std::string_view agent,
                               Seconds now) {
  if (names.empty()) return Ok{};
  std::lock_guard lock(mutex_);
  Connection& db = *db_;
  return transaction(db, "nodes_seen", true, [&](bool& changed) -> Status {
    for (const std::string& name : names) {
      Result<Statement> s = db.prepare("SELECT id, up FROM nodes WHERE name = ?");
      if (!s) return s.error();
      s->bind(name);
      Result<bool> row = s->step();
      if (!row) return row.error();
      if (!*row) {
        return db.fail(Error::Code::kNotFound, "no node '" + name + "' in the cluster");
      }
      int64_t id = s->int64(0);
      bool was_up = s->integer(1) != 0;
      // Coming up clears the reason it was down, but not an administrator's drain reason.
      Result<Statement> u = db.prepare(
          "UPDATE nodes SET up = 1, agent = ?, last_heartbeat = ?, "
          "reason = CASE WHEN up = 0 AND drained = 0 THEN '' ELSE reason END WHERE id = ?");
      if (!u) return u.error();
      if (Status r = u->bind(agent).bind(now).bind(id).run(); !r) return r;
      if (!was_up) {
        if (Status e = log_event(db, now, "node_up", 0, name, agent); !e) return e;
      }
    }
    changed = true;
    return Ok{};
  });
}

Status SqliteStore::nodes_down(const std::vector<NodeId>& nodes, std::string_view reason,
                               Seconds now) {
  if (nodes.empty()) return Ok{};
  std::lock_guard lock(mutex_);
  Connection& db = *db_;
  return transaction(db, "nodes_down", true, [&](bool& changed) -> Status {
    if (Status s = check_node_ids(db, nodes); !s) return s;
    for (NodeId id : nodes) {
      Result<Statement> s =
          db.prepare("UPDATE nodes SET up = 0, reason = ? WHERE id = ? AND up = 1 RETURNING name");
      if (!s) return s.error();
      s->bind(reason).bind(id);
      Result<bool> row = s->step();
      if (!row) return row.error();
      if (!*row) continue;  // down already
      std::string name = s->text(0);
      if (Result<bool> done = s->step(); !done) return done.error();
      if (Status e = log_event(db, now, "node_down", 0, name, reason); !e) return e;
      changed = true;
    }
    return Ok{};
  });
}

Status SqliteStore::set_drained(const std::vector<NodeId>& nodes, bool drained,
                                std::string_view reason, Seconds now) {
  if (nodes.empty()) return Ok{};
  std::lock_guard lock(mutex_);
  Connection& db = *db_;
  return transaction(db, "set_drained", true, [&](bool& changed) -> Status {
    if (Status s = check_node_ids(db, nodes); !s) return s;
    for (NodeId id : nodes) {
      // Draining records the reason; resuming an up node clears it, a down node keeps its own.
      Result<Statement> s = db.prepare(
          "UPDATE nodes SET drained = ?1, "
          "reason = CASE WHEN ?1 THEN ?2 WHEN up = 1 THEN '' ELSE reason END "
          "WHERE id = ?3 AND drained <> ?1 RETURNING name");
      if (!s) return s.error();
      s->bind(drained ? 1 : 0).bind(reason).bind(id);
      Result<bool> row = s->step();
      if (!row) return row.error();
      if (!*row) continue;  // in that state already
      std::string name = s->text(0);
      if (Result<bool> done = s->step(); !done) return done.error();
      if (Status e = log_event(db, now, drained ? "drain" : "resume", 0, name, reason); !e) {
        return e;
      }
      changed = true;
    }
    return Ok{};
  });
}

Result<std::vector<StoredEvent>> SqliteStore::events(int64_t after, int limit) {
  std::lock_guard lock(mutex_);
  Connection& db = *db_;
  return transaction(db, "events", false, [&](bool&) -> Result<std::vector<StoredEvent>> {
    std::vector<StoredEvent> events;
    if (limit < 0) {
      return db.fail(Error::Code::kInvalidArgument,
                     "a negative event limit (" + std::to_string(limit) + ")");
    }
    Result<Statement> s = db.prepare(
        "SELECT seq, time, kind, job, node, detail FROM events WHERE seq > ? ORDER BY seq "
        "LIMIT ?");
    if (!s) return s.error();
    s->bind(after).bind(limit);
    for (;;) {
      Result<bool> row = s->step();
      if (!row) return row.error();
      if (!*row) break;
      events.push_back(
          StoredEvent{s->int64(0), s->real(1), s->text(2), s->int64(3), s->text(4), s->text(5)});
    }
    return events;
  });
}

}  // namespace trellis
