// The StateStore's reads and writes in SQL (sql_store.h), for both engines. The session is in
// sql_session.h, the schema in sql_schema.h.
#include "store/sql_store.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include "store/json_fields.h"
#include "store/sql_schema.h"

namespace trellis {

using sql::Param;
using sql::Rows;
using sql::Session;
using sql::transaction;
using namespace json_fields;  // NOLINT

namespace {

// How the jobs.stop column spells a StopCause.
std::string_view stop_text(StopCause cause) {
  switch (cause) {
    case StopCause::kNone:
      return "";
    case StopCause::kCancel:
      return "cancel";
    case StopCause::kTimeout:
      return "timeout";
  }
  return "";
}
Result<StopCause> parse_stop_cause(std::string_view text) {
  for (StopCause c : {StopCause::kNone, StopCause::kCancel, StopCause::kTimeout})
    if (stop_text(c) == text) return c;
  return fail(Error::Code::kInternal, "unknown stop cause '" + std::string(text) + "'");
}

// The one lease the store knows.
constexpr std::string_view kSchedulerRole = "scheduler";

bool is_active(JobState s) {
  return !is_final(s);
}
bool holds_nodes(JobState s) {
  return s == JobState::kRunning || s == JobState::kSuspended || s == JobState::kCompleting;
}

// Runs a statement whose rows do not matter.
Status run(Session& db, std::string_view sql, std::initializer_list<Param> params = {}) {
  Result<Rows> rows = db.query(sql, params);
  if (!rows) return rows.error();
  return Ok{};
}

// Appends to the log. The seq is the last one + 1: writers run one at a time (the session's write
// lock), so the log is gap-free and in commit order, which an engine's sequence would not promise.
Status log_event(Session& db, Seconds time, std::string_view kind, JobId job, std::string_view node,
                 std::string_view detail) {
  return run(db,
             "INSERT INTO events (seq, time, kind, job, node, detail) VALUES "
             "((SELECT coalesce(max(seq), 0) + 1 FROM events), ?, ?, ?, ?, ?)",
             {time, kind, job, node, detail});
}

Result<int> node_count(Session& db) {
  if (db.node_count > 0) return db.node_count;
  Result<Rows> rows = db.query("SELECT count(*) FROM nodes");
  if (!rows) return rows.error();
  db.node_count = rows->empty() ? 0 : rows->integer(0, 0);
  return db.node_count;
}

Status check_node_ids(Session& db, const std::vector<NodeId>& nodes) {
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
    "signal, stop, seconds_frozen";

Result<StoredJob> read_job(const Session& db, const Rows& rows, size_t r) {
  StoredJob j;
  j.id = rows.int64(r, 0);
  auto bad = [&](std::string_view column) {
    return db.fail(Error::Code::kInternal,
                   "job " + std::to_string(j.id) + " has a malformed " + std::string(column));
  };
  j.uid = rows.integer(r, 1);
  j.gid = rows.integer(r, 2);
  j.user = rows.text(r, 3);
  j.name = rows.text(r, 4);
  j.request.nodes = rows.integer(r, 5);
  if (!decode_ints(rows.text(r, 6), j.request.shape)) return bad("request_shape");
  j.request.rotate = rows.integer(r, 7) != 0;
  Result<PlacementMode> mode = parse_placement_mode(rows.text(r, 8));
  if (!mode) return bad("request_mode");
  j.request.mode = *mode;
  j.share = rows.integer(r, 9) != 0;
  j.time_limit = rows.real(r, 10);
  if (!decode_strings(rows.text(r, 11), j.argv)) return bad("argv");
  j.cwd = rows.text(r, 12);
  j.output = rows.text(r, 13);
  j.error = rows.text(r, 14);
  if (!decode_env(rows.text(r, 15), j.env)) return bad("env");
  Result<JobState> state = parse_job_state(rows.text(r, 16));
  if (!state) return bad("state");
  j.state = *state;
  j.reason = rows.text(r, 17);
  j.submit_time = rows.real(r, 18);
  j.start_time = rows.real(r, 19);
  j.end_time = rows.real(r, 20);
  j.expected_start = rows.real(r, 21);
  j.attempt = rows.integer(r, 22);
  if (!decode_ints(rows.text(r, 23), j.nodes)) return bad("nodes");
  if (!decode_ints(rows.text(r, 24), j.box_anchor)) return bad("box_anchor");
  if (!decode_ints(rows.text(r, 25), j.box_extents)) return bad("box_extents");
  j.exit_code = rows.integer(r, 26);
  j.signal = rows.integer(r, 27);
  Result<StopCause> stop = parse_stop_cause(rows.text(r, 28));
  if (!stop) return bad("stop");
  j.stop = *stop;
  j.seconds_frozen = rows.real(r, 29);
  return j;
}

// A job's state and attempt, for the checks of the writers.
struct JobStatus {
  JobState state = JobState::kPending;
  int attempt = 0;
  bool share = false;
  StopCause stop = StopCause::kNone;
};

Result<JobStatus> job_status(Session& db, JobId id) {
  Result<Rows> rows = db.query("SELECT state, attempt, share, stop FROM jobs WHERE id = ?", {id});
  if (!rows) return rows.error();
  if (rows->empty()) return db.fail(Error::Code::kNotFound, "no job " + std::to_string(id));
  Result<JobState> state = parse_job_state(rows->text(0, 0));
  Result<StopCause> stop = parse_stop_cause(rows->text(0, 3));
  if (!state || !stop) {
    return db.fail(Error::Code::kInternal,
                   "job " + std::to_string(id) + " has a malformed state or stop cause");
  }
  return JobStatus{*state, rows->integer(0, 1), rows->integer(0, 2) != 0, *stop};
}

// "node 5 (n5) is held exclusively by job 3", for the first of `nodes` (ascending) that cannot
// take an allocation of this kind; nullopt when all can.
Result<std::optional<std::string>> held_node(Session& db, const std::vector<NodeId>& nodes,
                                             bool exclusive) {
  Result<Rows> rows = db.query(
      "SELECT a.node_id, n.name, a.job_id, a.exclusive FROM allocations a "
      "JOIN nodes n ON n.id = a.node_id "
      "WHERE a.node_id IN (" +
          std::string(db.dialect().ints_from_json) +
          ") AND (a.exclusive = 1 OR ? = 1) ORDER BY a.node_id, a.exclusive DESC, a.job_id "
          "LIMIT 1",
      {encode_ints(nodes), exclusive ? 1 : 0});
  if (!rows) return rows.error();
  if (rows->empty()) return std::optional<std::string>();
  return std::optional<std::string>("node " + rows->text(0, 0) + " (" + rows->text(0, 1) +
                                    ") is held " + (rows->integer(0, 3) ? "exclusively " : "") +
                                    "by job " + rows->text(0, 2));
}

Status start_job(Session& db, const JobStart& start, Seconds now) {
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

  // Which node is taken, for the message: one query, before any insert, because PostgreSQL ends
  // a transaction at its first refused statement. The database's constraints remain the check
  // that counts: an insert they refuse fails the start whatever this query said.
  int exclusive = status->share ? 0 : 1;
  Result<std::optional<std::string>> held = held_node(db, nodes, exclusive == 1);
  if (!held) return held.error();
  if (*held) return db.fail(Error::Code::kDoesNotFitNow, job + " cannot start: " + **held);
  for (NodeId node : nodes) {
    Result<Rows> inserted =
        db.query("INSERT INTO allocations (job_id, node_id, exclusive) VALUES (?, ?, ?)",
                 {start.job, node, exclusive});
    if (!inserted) {
      Error e = inserted.error();
      if (e.code == Error::Code::kDoesNotFitNow) {
        e.message = job + " cannot start: the database refused node " + std::to_string(node) +
                    ": " + e.message;
      }
      return e;
    }
  }
  if (Status s = run(db,
                     "UPDATE jobs SET state = 'R', attempt = ?, start_time = ?, end_time = 0, "
                     "expected_start = 0, reason = '', nodes = ?, box_anchor = ?, "
                     "box_extents = ?, exit_code = 0, signal = 0, stop = '' WHERE id = ?",
                     {start.attempt, now, encode_ints(nodes), encode_ints(start.box_anchor),
                      encode_ints(start.box_extents), start.job});
      !s) {
    return s;
  }
  // The node ids are in the log so that an auditor can replay who held what, and when.
  std::string ids;
  for (NodeId node : nodes) ids += (ids.empty() ? "" : ",") + std::to_string(node);
  return log_event(db, now, "start", start.job, "",
                   "attempt " + std::to_string(start.attempt) + " on " +
                       std::to_string(nodes.size()) + " nodes: " + ids);
}

Status free_allocations(Session& db, JobId job) {
  return run(db, "DELETE FROM allocations WHERE job_id = ?", {job});
}

// Ends a job's current attempt (end_job()); false, changing nothing, for a late or repeated end.
Result<bool> end_attempt(Session& db, const JobEnd& end, Seconds now) {
  bool requeue = end.state == JobState::kPending;
  if (!requeue && !is_final(end.state)) {
    return db.fail(Error::Code::kInvalidArgument,
                   "a job ends in a final state or PENDING (a requeue), not " +
                       std::string(state_name(end.state)));
  }
  if (!is_utf8(end.reason)) {
    return db.fail(Error::Code::kInvalidArgument, "the end's reason is not valid UTF-8");
  }
  Result<JobStatus> status = job_status(db, end.job);
  if (!status) return status.error();
  // Only the attempt that holds nodes now can end; any other report is late or repeated.
  if (!holds_nodes(status->state) || status->attempt != end.attempt) return false;
  if (Status s = free_allocations(db, end.job); !s) return s.error();
  Status updated =
      requeue
          ? run(db,
                "UPDATE jobs SET state = 'PD', reason = ?, exit_code = ?, signal = ?, "
                "start_time = 0, nodes = '[]', box_anchor = '[]', box_extents = '[]', stop = '' "
                "WHERE id = ?",
                {end.reason, end.exit_code, end.signal, end.job})
          : run(db,
                "UPDATE jobs SET state = ?, reason = ?, exit_code = ?, signal = ?, "
                "end_time = ? WHERE id = ?",
                {state_letter(end.state), end.reason, end.exit_code, end.signal, now, end.job});
  if (!updated) return updated.error();
  std::string detail = requeue ? "attempt " + std::to_string(end.attempt) + " stopped"
                               : std::string(state_name(end.state));
  detail += ", exit " + std::to_string(end.exit_code);
  if (end.signal) detail += ", signal " + std::to_string(end.signal);
  if (!end.reason.empty()) detail += ": " + end.reason;
  if (Status e = log_event(db, now, requeue ? "requeue" : "end", end.job, "", detail); !e) {
    return e.error();
  }
  return true;
}

}  // namespace

// --- SqlStore

SqlStore::SqlStore(std::unique_ptr<Session> db) : db_(std::move(db)) {}
SqlStore::~SqlStore() = default;

const std::string& SqlStore::name() const {
  return db_->name();
}

Result<std::unique_ptr<SqlStore>> SqlStore::open(std::unique_ptr<Session> session) {
  Status schema = session->read_only() ? sql::check_schema(*session) : sql::migrate(*session);
  if (!schema) return schema.error();
  return std::unique_ptr<SqlStore>(new SqlStore(std::move(session)));
}

Status SqlStore::init_cluster(std::string_view machine_spec,
                              const std::vector<std::string>& node_names) {
  std::lock_guard lock(mutex_);
  Session& db = *db_;
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
    Result<std::optional<std::string>> spec = sql::meta_text(db, "machine_spec");
    if (!spec) return spec.error();
    if (*spec) {
      // Initialised before: the same cluster is fine, another one is a misdirected controller.
      Result<Rows> rows = db.query("SELECT name FROM nodes ORDER BY id");
      if (!rows) return rows.error();
      std::vector<std::string> names;
      for (size_t r = 0; r < rows->size(); ++r) names.push_back(rows->text(r, 0));
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
    if (Status s = sql::set_meta(db, "machine_spec", machine_spec); !s) return s;
    for (size_t i = 0; i < node_names.size(); ++i) {
      if (Status s = run(db, "INSERT INTO nodes (id, name) VALUES (?, ?)",
                         {static_cast<int64_t>(i), node_names[i]});
          !s) {
        return s;
      }
    }
    changed = true;
    db.node_count = 0;  // read again after the commit
    return Ok{};
  });
}

Result<std::string> SqlStore::machine_spec() {
  std::lock_guard lock(mutex_);
  Session& db = *db_;
  return transaction(db, "machine_spec", false, [&](bool&) -> Result<std::string> {
    Result<std::optional<std::string>> spec = sql::meta_text(db, "machine_spec");
    if (!spec) return spec.error();
    if (!*spec) {
      return db.fail(Error::Code::kNotFound, "the store has no cluster (init_cluster never ran)");
    }
    return **spec;
  });
}

Result<int64_t> SqlStore::version() {
  std::lock_guard lock(mutex_);
  Session& db = *db_;
  return transaction(db, "version", false, [&](bool&) -> Result<int64_t> {
    Result<Rows> rows = db.query("SELECT value FROM meta WHERE key = 'version'");
    if (!rows) return rows.error();
    if (rows->empty()) return db.fail(Error::Code::kInternal, "the meta table has no version row");
    return rows->int64(0, 0);
  });
}

Result<StoreHead> SqlStore::head() {
  std::lock_guard lock(mutex_);
  Session& db = *db_;
  return transaction(db, "head", false, [&](bool&) -> Result<StoreHead> {
    Result<Rows> rows = db.query(
        "SELECT (SELECT value FROM meta WHERE key = 'version'), "
        "(SELECT coalesce(max(seq), 0) FROM events)");
    if (!rows) return rows.error();
    if (rows->empty() || rows->is_null(0, 0)) {
      return db.fail(Error::Code::kInternal, "the meta table has no version row");
    }
    return StoreHead{rows->int64(0, 0), rows->int64(0, 1)};
  });
}

Result<bool> SqlStore::hold_lease(std::string_view holder, Seconds now, Seconds ttl) {
  std::lock_guard lock(mutex_);
  Session& db = *db_;
  return transaction(
      db, "hold_lease", true,
      [&](bool& changed) -> Result<bool> {
        if (holder.empty() || !is_utf8(holder)) {
          return db.fail(Error::Code::kInvalidArgument, "a lease holder needs a UTF-8 name");
        }
        Result<Rows> lease =
            db.query("SELECT holder, expires FROM leases WHERE role = ?", {kSchedulerRole});
        if (!lease) return lease.error();
        std::string previous = lease->empty() ? "" : lease->text(0, 0);
        if (!previous.empty() && previous != holder && lease->real(0, 1) > now) return false;
        if (Status s = run(db,
                           "INSERT INTO leases (role, holder, expires) VALUES (?, ?, ?) "
                           "ON CONFLICT (role) DO UPDATE SET holder = excluded.holder, "
                           "expires = excluded.expires",
                           {kSchedulerRole, holder, now + ttl});
            !s) {
          return s.error();
        }
        if (previous != holder) {
          std::string detail = std::string(holder) + " took the scheduler lease";
          if (!previous.empty()) detail += " from " + previous;
          if (Status e = log_event(db, now, "scheduler", 0, "", detail); !e) return e.error();
        }
        changed = true;
        return true;
      },
      sql::Counting::kUncounted);
}

Status SqlStore::release_lease(std::string_view holder) {
  std::lock_guard lock(mutex_);
  Session& db = *db_;
  return transaction(
      db, "release_lease", true,
      [&](bool& changed) -> Status {
        Result<Rows> released =
            db.query("UPDATE leases SET expires = 0 WHERE role = ? AND holder = ?",
                     {kSchedulerRole, holder});
        if (!released) return released.error();
        changed = released->affected() > 0;
        return Ok{};
      },
      sql::Counting::kUncounted);
}

Result<JobId> SqlStore::add_job(const StoredJob& job, Seconds now) {
  std::lock_guard lock(mutex_);
  Session& db = *db_;
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
    for (const auto& [field, text] : {std::pair<const char*, const std::string&>{"user", job.user},
                                      {"name", job.name},
                                      {"cwd", job.cwd},
                                      {"output", job.output},
                                      {"error", job.error},
                                      {"reason", job.reason}}) {
      if (!is_utf8(text)) {
        return db.fail(Error::Code::kInvalidArgument,
                       std::string("the job's ") + field + " is not valid UTF-8");
      }
    }
    Result<Rows> inserted = db.query(
        "INSERT INTO jobs (uid, gid, user_name, name, request_nodes, request_shape, "
        "request_rotate, request_mode, share, time_limit, argv, cwd, stdout_path, stderr_path, "
        "env, state, reason, submit_time, start_time, end_time, expected_start, attempt, nodes, "
        "box_anchor, box_extents, exit_code, signal) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?, ?, 'PD', ?, ?, 0, 0, 0, 0, '[]', '[]', '[]', 0, 0) RETURNING id",
        {job.uid, job.gid, job.user, job.name, job.request.nodes, encode_ints(job.request.shape),
         job.request.rotate ? 1 : 0, std::string(to_string(job.request.mode)), job.share ? 1 : 0,
         job.time_limit, dump(argv), job.cwd, job.output, job.error, dump(env), job.reason, now});
    if (!inserted) return inserted.error();
    if (inserted->empty()) return db.fail(Error::Code::kInternal, "the insert returned no id");
    JobId id = inserted->int64(0, 0);
    if (Status e = log_event(db, now, "submit", id, "", job.name); !e) return e.error();
    changed = true;
    return id;
  });
}

Result<std::vector<StoredJob>> SqlStore::list_jobs(const JobQuery& query) {
  std::lock_guard lock(mutex_);
  Session& db = *db_;
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
    std::vector<Param> params;
    const char* joiner = " WHERE ";
    if (!query.ids.empty()) {
      sql += joiner + std::string("id IN (") + std::string(db.dialect().ints_from_json) + ")";
      params.emplace_back(encode_ints(query.ids));
      joiner = " AND ";
    }
    if (!states.empty()) {
      sql += joiner + std::string("state IN (") + std::string(db.dialect().texts_from_json) + ")";
      nlohmann::json letters = nlohmann::json::array();
      for (JobState state : states) letters.push_back(std::string(state_letter(state)));
      params.emplace_back(dump(letters));
      joiner = " AND ";
    }
    if (query.uid) {
      sql += joiner + std::string("uid = ?");
      params.emplace_back(*query.uid);
    }
    sql += " ORDER BY id";
    Result<Rows> rows = db.query(sql, params);
    if (!rows) return rows.error();
    for (size_t r = 0; r < rows->size(); ++r) {
      Result<StoredJob> job = read_job(db, *rows, r);
      if (!job) return job.error();
      jobs.push_back(std::move(*job));
    }
    return jobs;
  });
}

Result<StoredJob> SqlStore::job(JobId id) {
  std::lock_guard lock(mutex_);
  Session& db = *db_;
  return transaction(db, "job", false, [&](bool&) -> Result<StoredJob> {
    static const std::string kSql =
        "SELECT " + std::string(kJobColumns) + " FROM jobs WHERE id = ?";
    Result<Rows> rows = db.query(kSql, {id});
    if (!rows) return rows.error();
    if (rows->empty()) return db.fail(Error::Code::kNotFound, "no job " + std::to_string(id));
    return read_job(db, *rows, 0);
  });
}

Status SqlStore::commit_pass(const PassCommit& pass, Seconds now) {
  std::lock_guard lock(mutex_);
  Session& db = *db_;
  return transaction(db, "commit_pass", true, [&](bool& changed) -> Status {
    if (!pass.scheduler.empty()) {
      Result<Rows> lease = db.query("SELECT holder FROM leases WHERE role = ?", {kSchedulerRole});
      if (!lease) return lease.error();
      std::string holder = lease->empty() ? "" : lease->text(0, 0);
      if (holder != pass.scheduler) {
        return db.fail(Error::Code::kDoesNotFitNow,
                       pass.scheduler + " does not hold the scheduler lease (" +
                           (holder.empty() ? std::string("no one does") : holder + " does") + ")");
      }
    }
    for (const JobStart& start : pass.starts) {
      if (Status s = start_job(db, start, now); !s) return s;
    }
    changed = !pass.starts.empty();
    for (const PendingNote& note : pass.notes) {
      // A note is for a job the pass saw pending; one that has started or ended since (another
      // writer, or a start of this pass) keeps its state and gets no note. An unchanged note
      // writes nothing.
      Result<Rows> updated = db.query(
          "UPDATE jobs SET reason = ?, expected_start = ? WHERE id = ? AND state = 'PD' "
          "AND (reason <> ? OR expected_start <> ?)",
          {note.reason, note.expected_start, note.job, note.reason, note.expected_start});
      if (!updated) return updated.error();
      if (updated->affected() > 0) {
        changed = true;
      } else if (Result<JobStatus> status = job_status(db, note.job); !status) {
        return status.error();  // no such job
      }
    }
    if (pass.core_state) {
      // Most passes leave the reservations as they were: then the version stays too.
      Result<std::optional<std::string>> old = sql::meta_text(db, "core_state");
      if (!old) return old.error();
      if (*old != pass.core_state) {
        if (Status s = sql::set_meta(db, "core_state", *pass.core_state); !s) return s;
        changed = true;
      }
    }
    return Ok{};
  });
}

Result<bool> SqlStore::end_job(const JobEnd& end, Seconds now) {
  std::lock_guard lock(mutex_);
  Session& db = *db_;
  return transaction(db, "end_job", true, [&](bool& changed) -> Result<bool> {
    Result<bool> ended = end_attempt(db, end, now);
    if (ended && *ended) changed = true;
    return ended;
  });
}

Result<JobState> SqlStore::stop_job(JobId job, int attempt, StopCause cause,
                                    std::string_view reason, Seconds now) {
  std::lock_guard lock(mutex_);
  Session& db = *db_;
  return transaction(db, "stop_job", true, [&](bool& changed) -> Result<JobState> {
    if (cause == StopCause::kNone) {
      return db.fail(Error::Code::kInvalidArgument, "a job is stopped for a cause");
    }
    if (!is_utf8(reason)) {
      return db.fail(Error::Code::kInvalidArgument, "the reason is not valid UTF-8");
    }
    Result<JobStatus> status = job_status(db, job);
    if (!status) return status.error();
    if (status->state == JobState::kPending && cause == StopCause::kCancel && attempt == 0) {
      if (Status s = run(db,
                         "UPDATE jobs SET state = 'CA', reason = ?, end_time = ?, "
                         "expected_start = 0 WHERE id = ?",
                         {reason, now, job});
          !s) {
        return s.error();
      }
      if (Status e =
              log_event(db, now, "cancel", job, "", "PENDING -> CANCELLED: " + std::string(reason));
          !e) {
        return e.error();
      }
      changed = true;
      return JobState::kCancelled;
    }
    bool stoppable =
        (status->state == JobState::kRunning || status->state == JobState::kSuspended) &&
        status->stop == StopCause::kNone && (attempt == 0 || attempt == status->attempt);
    if (!stoppable) return status->state;
    if (Status s = run(db, "UPDATE jobs SET state = 'CG', reason = ?, stop = ? WHERE id = ?",
                       {reason, stop_text(cause), job});
        !s) {
      return s.error();
    }
    std::string detail =
        std::string(state_name(status->state)) + " -> COMPLETING: " + std::string(reason);
    if (Status e =
            log_event(db, now, cause == StopCause::kCancel ? "cancel" : "state", job, "", detail);
        !e) {
      return e.error();
    }
    changed = true;
    return JobState::kCompleting;
  });
}

Result<std::vector<JobEnd>> SqlStore::record_exits(const std::vector<TaskExit>& exits,
                                                   const EndRule& rule, Seconds now) {
  std::lock_guard lock(mutex_);
  Session& db = *db_;
  return transaction(db, "record_exits", true, [&](bool& changed) -> Result<std::vector<JobEnd>> {
    std::vector<JobEnd> ended;
    std::set<JobId> touched;
    for (const TaskExit& exit : exits) {
      Result<JobStatus> status = job_status(db, exit.job);
      if (!status) {
        if (status.error().code == Error::Code::kNotFound) continue;  // a stranger's report
        return status.error();
      }
      if (!holds_nodes(status->state) || status->attempt != exit.attempt) continue;  // late
      Result<Rows> marked = db.query(
          "UPDATE allocations SET exited = 1, exit_code = ?, signal = ? "
          "WHERE job_id = ? AND node_id = ? AND exited = 0",
          {exit.exit_code, exit.signal, exit.job, exit.node});
      if (!marked) return marked.error();
      if (marked->affected() == 0) continue;  // repeated, or not one of its nodes
      changed = true;
      touched.insert(exit.job);
    }
    for (JobId id : touched) {
      Result<Rows> left = db.query(
          "SELECT count(*) - sum(exited), max(exit_code), max(signal) FROM allocations "
          "WHERE job_id = ?",
          {id});
      if (!left) return left.error();
      if (left->empty() || left->int64(0, 0) != 0) continue;  // nodes still running it
      Result<JobStatus> status = job_status(db, id);
      if (!status) return status.error();
      JobEnd end =
          rule(id, status->attempt, status->stop, left->integer(0, 1), left->integer(0, 2));
      end.job = id;
      end.attempt = status->attempt;
      Result<bool> done = end_attempt(db, end, now);
      if (!done) return done.error();
      if (*done) ended.push_back(std::move(end));
    }
    return ended;
  });
}

Status SqlStore::set_job_state(JobId job, JobState state, std::string_view reason, Seconds now) {
  std::lock_guard lock(mutex_);
  Session& db = *db_;
  return transaction(db, "set_job_state", true, [&](bool& changed) -> Status {
    if (!is_utf8(reason)) {
      return db.fail(Error::Code::kInvalidArgument, "the reason is not valid UTF-8");
    }
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
    Status updated =
        final ? run(db, "UPDATE jobs SET state = ?, reason = ?, end_time = ? WHERE id = ?",
                    {state_letter(state), reason, now, job})
              : run(db, "UPDATE jobs SET state = ?, reason = ? WHERE id = ?",
                    {state_letter(state), reason, job});
    if (!updated) return updated;
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

Status SqlStore::record_frozen_time(JobId job, int attempt, Seconds seconds) {
  std::lock_guard lock(mutex_);
  Session& db = *db_;
  return transaction(db, "record_frozen_time", true, [&](bool& changed) -> Status {
    if (!(seconds >= 0)) {
      return db.fail(Error::Code::kInvalidArgument,
                     "job " + std::to_string(job) + ": a frozen time is not negative");
    }
    Result<JobStatus> status = job_status(db, job);
    if (!status) return status.error();
    if (status->attempt != attempt) return Ok{};  // a later attempt has started
    if (Status s = run(db, "UPDATE jobs SET seconds_frozen = ? WHERE id = ?", {seconds, job}); !s)
      return s;
    changed = true;
    return Ok{};
  });
}

Result<std::optional<std::string>> SqlStore::core_state() {
  std::lock_guard lock(mutex_);
  Session& db = *db_;
  return transaction(db, "core_state", false, [&](bool&) -> Result<std::optional<std::string>> {
    return sql::meta_text(db, "core_state");
  });
}

Result<std::vector<StoredNode>> SqlStore::list_nodes() {
  std::lock_guard lock(mutex_);
  Session& db = *db_;
  return transaction(db, "list_nodes", false, [&](bool&) -> Result<std::vector<StoredNode>> {
    std::vector<StoredNode> nodes;
    Result<Rows> rows = db.query(
        "SELECT id, name, up, drained, agent, last_heartbeat, reason FROM nodes ORDER BY id");
    if (!rows) return rows.error();
    for (size_t r = 0; r < rows->size(); ++r) {
      StoredNode n;
      n.id = rows->integer(r, 0);
      n.name = rows->text(r, 1);
      n.up = rows->integer(r, 2) != 0;
      n.drained = rows->integer(r, 3) != 0;
      n.agent = rows->text(r, 4);
      n.last_heartbeat = rows->real(r, 5);
      n.reason = rows->text(r, 6);
      nodes.push_back(std::move(n));
    }
    // Node ids are 0..n-1, so an id is an index into `nodes`.
    Result<Rows> held =
        db.query("SELECT node_id, job_id FROM allocations ORDER BY node_id, job_id");
    if (!held) return held.error();
    for (size_t r = 0; r < held->size(); ++r) {
      int64_t node = held->int64(r, 0);
      if (node < 0 || node >= static_cast<int64_t>(nodes.size()) || nodes[node].id != node) {
        return db.fail(Error::Code::kInternal,
                       "an allocation names node " + std::to_string(node) + ", not in nodes");
      }
      nodes[node].jobs.push_back(held->int64(r, 1));
    }
    return nodes;
  });
}

Status SqlStore::nodes_seen(const std::vector<std::string>& names, std::string_view agent,
                            Seconds now) {
  if (names.empty()) return Ok{};
  std::lock_guard lock(mutex_);
  Session& db = *db_;
  // Nodes up on this agent only have their time changed, which no cache depends on, so the write
  // is uncounted and wakes no controller.
  Result<bool> all_up = transaction(
      db, "nodes_seen", true,
      [&](bool& changed) -> Result<bool> {
        nlohmann::json list = nlohmann::json::array();
        for (const std::string& name : names) list.push_back(name);
        Result<Rows> beat =
            db.query("UPDATE nodes SET last_heartbeat = ? WHERE name IN (" +
                         std::string(db.dialect().texts_from_json) + ") AND up = 1 AND agent = ?",
                     {now, dump(list), agent});
        if (!beat) return beat.error();
        changed = beat->affected() == static_cast<int64_t>(names.size());
        return changed;  // otherwise rolled back, and the reason found below
      },
      sql::Counting::kUncounted);
  if (!all_up) return all_up.error();
  if (*all_up) return Ok{};
  return transaction(db, "nodes_seen", false, [&](bool&) -> Status {
    for (const std::string& name : names) {
      Result<Rows> node = db.query("SELECT up, agent FROM nodes WHERE name = ?", {name});
      if (!node) return node.error();
      if (node->empty()) {
        return db.fail(Error::Code::kNotFound, "no node '" + name + "' in the cluster");
      }
      if (node->integer(0, 0) == 0) {
        return db.fail(Error::Code::kNotFound,
                       "node " + name + " is down: register again with the tasks it runs");
      }
      if (node->text(0, 1) != agent) {
        return db.fail(Error::Code::kNotFound, "node " + name + " is registered to " +
                                                   node->text(0, 1) + ", not " +
                                                   std::string(agent) + ": register first");
      }
    }
    return db.fail(Error::Code::kInternal, "a heartbeat changed fewer nodes than it named");
  });
}

Result<std::vector<RunningTask>> SqlStore::register_nodes(const std::vector<std::string>& names,
                                                          std::string_view agent,
                                                          const std::vector<RunningTask>& running,
                                                          Seconds now) {
  std::lock_guard lock(mutex_);
  Session& db = *db_;
  return transaction(
      db, "register_nodes", true, [&](bool& changed) -> Result<std::vector<RunningTask>> {
        if (!is_utf8(agent)) {
          return db.fail(Error::Code::kInvalidArgument, "the agent's address is not valid UTF-8");
        }
        // A process is current while its job runs that attempt on that node (R, CG or S, with the
        // node still allocated to it); any other is left from an attempt that ended.
        std::vector<RunningTask> stale;
        std::set<std::string> held_down;
        for (const RunningTask& task : running) {
          Result<Rows> current = db.query(
              "SELECT 1 FROM jobs JOIN allocations ON allocations.job_id = jobs.id "
              "JOIN nodes ON nodes.id = allocations.node_id "
              "WHERE jobs.id = ? AND jobs.attempt = ? AND jobs.state IN ('R', 'CG', 'S') "
              "AND nodes.name = ?",
              {task.job, int64_t{task.attempt}, task.node});
          if (!current) return current.error();
          if (!current->empty()) continue;
          stale.push_back(task);
          held_down.insert(task.node);
        }
        for (const std::string& name : names) {
          Result<Rows> node = db.query("SELECT id, up FROM nodes WHERE name = ?", {name});
          if (!node) return node.error();
          if (node->empty()) {
            return db.fail(Error::Code::kNotFound, "no node '" + name + "' in the cluster");
          }
          int64_t id = node->int64(0, 0);
          bool was_up = node->integer(0, 1) != 0;
          if (held_down.count(name) && !was_up) continue;
          // Coming up clears the reason it was down, but not an administrator's drain reason.
          if (Status s = run(db,
                             "UPDATE nodes SET up = 1, agent = ?, last_heartbeat = ?, "
                             "reason = CASE WHEN up = 0 AND drained = 0 THEN '' ELSE reason END "
                             "WHERE id = ?",
                             {agent, now, id});
              !s) {
            return s.error();
          }
          if (!was_up) {
            if (Status e = log_event(db, now, "node_up", 0, name, agent); !e) return e.error();
          }
        }
        changed = true;
        return stale;
      });
}

Status SqlStore::nodes_down(const std::vector<NodeId>& nodes, std::string_view reason,
                            Seconds now) {
  if (nodes.empty()) return Ok{};
  std::lock_guard lock(mutex_);
  Session& db = *db_;
  return transaction(db, "nodes_down", true, [&](bool& changed) -> Status {
    if (!is_utf8(reason)) {
      return db.fail(Error::Code::kInvalidArgument, "the reason is not valid UTF-8");
    }
    if (Status s = check_node_ids(db, nodes); !s) return s;
    for (NodeId id : nodes) {
      Result<Rows> down =
          db.query("UPDATE nodes SET up = 0, reason = ? WHERE id = ? AND up = 1 RETURNING name",
                   {reason, id});
      if (!down) return down.error();
      if (down->empty()) continue;  // down already
      if (Status e = log_event(db, now, "node_down", 0, down->text(0, 0), reason); !e) return e;
      changed = true;
    }
    return Ok{};
  });
}

Status SqlStore::set_drained(const std::vector<NodeId>& nodes, bool drained,
                             std::string_view reason, Seconds now) {
  if (nodes.empty()) return Ok{};
  std::lock_guard lock(mutex_);
  Session& db = *db_;
  return transaction(db, "set_drained", true, [&](bool& changed) -> Status {
    if (!is_utf8(reason)) {
      return db.fail(Error::Code::kInvalidArgument, "the reason is not valid UTF-8");
    }
    if (Status s = check_node_ids(db, nodes); !s) return s;
    int flag = drained ? 1 : 0;
    for (NodeId id : nodes) {
      // Draining records the reason; resuming an up node clears it, a down node keeps its own.
      Result<Rows> changed_node = db.query(
          drained ? "UPDATE nodes SET drained = 1, reason = ? WHERE id = ? AND drained <> ? "
                    "RETURNING name"
                  : "UPDATE nodes SET drained = 0, "
                    "reason = CASE WHEN up = 1 THEN '' ELSE reason END "
                    "WHERE id = ? AND drained <> ? RETURNING name",
          drained ? std::initializer_list<Param>{reason, id, flag}
                  : std::initializer_list<Param>{id, flag});
      if (!changed_node) return changed_node.error();
      if (changed_node->empty()) continue;  // in that state already
      if (Status e =
              log_event(db, now, drained ? "drain" : "resume", 0, changed_node->text(0, 0), reason);
          !e) {
        return e;
      }
      changed = true;
    }
    return Ok{};
  });
}

Result<std::vector<StoredEvent>> SqlStore::events(int64_t after, int limit) {
  std::lock_guard lock(mutex_);
  Session& db = *db_;
  return transaction(db, "events", false, [&](bool&) -> Result<std::vector<StoredEvent>> {
    std::vector<StoredEvent> events;
    if (limit < 0) {
      return db.fail(Error::Code::kInvalidArgument,
                     "a negative event limit (" + std::to_string(limit) + ")");
    }
    Result<Rows> rows = db.query(
        "SELECT seq, time, kind, job, node, detail FROM events WHERE seq > ? ORDER BY seq "
        "LIMIT ?",
        {after, limit});
    if (!rows) return rows.error();
    for (size_t r = 0; r < rows->size(); ++r) {
      events.push_back(StoredEvent{rows->int64(r, 0), rows->real(r, 1), rows->text(r, 2),
                                   rows->int64(r, 3), rows->text(r, 4), rows->text(r, 5)});
    }
    return events;
  });
}

}  // namespace trellis
