#include "store/sql_rows.h"

#include <algorithm>

#include "core/id_ranges.h"
#include "store/json_fields.h"

namespace trellis::sql {

using namespace json_fields;  // NOLINT

std::string_view stop_text(StopCause cause) {
  switch (cause) {
    case StopCause::kNone:
      return "";
    case StopCause::kCancel:
      return "cancel";
    case StopCause::kTimeout:
      return "timeout";
    case StopCause::kFailed:
      return "failed";
    case StopCause::kOutOfMemory:
      return "oom";
  }
  return "";
}

Result<StopCause> parse_stop_cause(std::string_view text) {
  for (StopCause c : {StopCause::kNone, StopCause::kCancel, StopCause::kTimeout, StopCause::kFailed,
                      StopCause::kOutOfMemory})
    if (stop_text(c) == text) return c;
  return fail(Error::Code::kInternal, "unknown stop cause '" + std::string(text) + "'");
}

Status run(Session& db, std::string_view sql, std::initializer_list<Param> params) {
  Result<Rows> rows = db.query(sql, params);
  if (!rows) return rows.error();
  return Ok{};
}

void log_event(Session& db, Seconds time, std::string_view kind, JobId job, std::string_view node,
               std::string_view detail) {
  db.events.push_back(
      PendingEvent{time, std::string(kind), job, std::string(node), std::string(detail)});
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

std::string encode_nodes(const std::vector<NodeId>& nodes) {
  return format_id_ranges(std::vector<int64_t>(nodes.begin(), nodes.end()));
}

bool decode_nodes(const std::string& text, std::vector<NodeId>& out) {
  if (text.starts_with("[")) return decode_ints(text, out);
  Result<std::vector<int>> ids = parse_id_ranges(text);
  if (!ids) return false;
  out.assign(ids->begin(), ids->end());
  return true;
}

const std::string_view kJobColumns =
    "id, uid, gid, user_name, name, request_nodes, request_shape, request_rotate, request_mode, "
    "share, time_limit, argv, cwd, stdout_path, stderr_path, env, state, reason, submit_time, "
    "start_time, end_time, expected_start, attempt, nodes, box_anchor, box_extents, exit_code, "
    "signal, stop, seconds_frozen, hold, node_failures, partition_name, array_job, array_task, "
    "array_limit, dependency, kill_on_invalid_dep, script_id, tasks, owner, resources, grants, "
    "account, qos";

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
  if (!decode_nodes(rows.text(r, 23), j.nodes)) return bad("nodes");
  if (!decode_ints(rows.text(r, 24), j.box_anchor)) return bad("box_anchor");
  if (!decode_ints(rows.text(r, 25), j.box_extents)) return bad("box_extents");
  j.exit_code = rows.integer(r, 26);
  j.signal = rows.integer(r, 27);
  Result<StopCause> stop = parse_stop_cause(rows.text(r, 28));
  if (!stop) return bad("stop");
  j.stop = *stop;
  j.seconds_frozen = rows.real(r, 29);
  j.hold = rows.text(r, 30);
  j.node_failures = rows.integer(r, 31);
  j.partition = rows.text(r, 32);
  j.array_job = rows.int64(r, 33);
  j.array_task = rows.integer(r, 34);
  j.array_limit = rows.integer(r, 35);
  j.dependency = rows.text(r, 36);
  j.kill_on_invalid_dep = rows.integer(r, 37) != 0;
  j.script_id = rows.int64(r, 38);
  Result<TaskRequest> tasks = decode_task_request(rows.text(r, 39));
  if (!tasks) return bad("tasks");
  j.tasks = *tasks;
  j.owner = rows.text(r, 40);
  Result<ResourceRequest> resources = decode_resource_request(rows.text(r, 41));
  if (!resources) return bad("resources");
  j.resources = std::move(*resources);
  Result<std::vector<NodeGrant>> grants = decode_grants(rows.text(r, 42));
  if (!grants) return bad("grants");
  j.grants = std::move(*grants);
  j.account = rows.text(r, 43);
  j.qos = rows.text(r, 44);
  return j;
}

namespace {

Result<JobStatus> status_of(Session& db, const Rows& rows, size_t r) {
  JobId id = rows.int64(r, 0);
  Result<JobState> state = parse_job_state(rows.text(r, 1));
  Result<StopCause> stop = parse_stop_cause(rows.text(r, 4));
  if (!state || !stop) {
    return db.fail(Error::Code::kInternal,
                   "job " + std::to_string(id) + " has a malformed state or stop cause");
  }
  return JobStatus{id, *state, rows.integer(r, 2), rows.integer(r, 3) != 0, *stop};
}

}  // namespace

Result<JobStatus> job_status(Session& db, JobId id, bool lock) {
  static const std::string kRead = "SELECT id, state, attempt, share, stop FROM jobs WHERE id = ?";
  const std::string locked = kRead + std::string(db.dialect().for_update);
  Result<Rows> rows = db.query(lock ? locked : kRead, {id});
  if (!rows) return rows.error();
  if (rows->empty()) return db.fail(Error::Code::kNotFound, "no job " + std::to_string(id));
  return status_of(db, *rows, 0);
}

Result<std::vector<JobStatus>> job_statuses(Session& db, std::vector<JobId> ids, bool lock) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<JobStatus> out;
  if (ids.empty()) return out;
  std::string sql = "SELECT id, state, attempt, share, stop FROM jobs WHERE id " +
                    std::string(db.dialect().ints_in) + " ORDER BY id";
  if (lock) sql += db.dialect().for_update;
  Result<Rows> rows = db.query(sql, {encode_ints(ids)});
  if (!rows) return rows.error();
  for (size_t r = 0; r < rows->size(); ++r) {
    Result<JobStatus> status = status_of(db, *rows, r);
    if (!status) return status.error();
    out.push_back(*status);
  }
  return out;
}

namespace {

std::string end_detail(const JobEnd& end) {
  bool requeue = end.state == JobState::kPending;
  std::string detail = requeue ? "attempt " + std::to_string(end.attempt) + " stopped"
                               : std::string(state_name(end.state));
  detail += ", exit " + std::to_string(end.exit_code);
  if (end.signal) detail += ", signal " + std::to_string(end.signal);
  if (!end.reason.empty()) detail += ": " + end.reason;
  if (!end.hold.empty()) detail += " (held: " + end.hold + ")";
  return detail;
}

}  // namespace

Result<bool> end_attempt(Session& db, const JobStatus& status, const JobEnd& end, Seconds now) {
  Result<std::vector<bool>> ended = end_attempts(db, {{status, end}}, now);
  if (!ended) return ended.error();
  return static_cast<bool>(ended->front());
}

Result<std::vector<bool>> end_attempts(Session& db,
                                       const std::vector<std::pair<JobStatus, JobEnd>>& ends,
                                       Seconds now) {
  std::vector<bool> ended;
  for (const auto& [status, end] : ends) {
    bool requeue = end.state == JobState::kPending;
    if (!requeue && !is_final(end.state)) {
      return db.fail(Error::Code::kInvalidArgument,
                     "a job ends in a final state or PENDING (a requeue), not " +
                         std::string(state_name(end.state)));
    }
    if (!is_utf8(end.reason) || !is_utf8(end.hold)) {
      return db.fail(Error::Code::kInvalidArgument, "the end's reason is not valid UTF-8");
    }
    if (!requeue && (end.node_failure || !end.hold.empty())) {
      return db.fail(Error::Code::kInvalidArgument, "only a requeue counts node failures or holds");
    }
    // Only the attempt that holds nodes now can end; any other report is late or repeated.
    ended.push_back(holds_nodes(status.state) && status.attempt == end.attempt);
  }
  // The final ends in one statement each for allocations and jobs; a requeue alone.
  std::vector<JobId> finals;
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < ends.size(); ++i) {
    if (!ended[i]) continue;
    const JobEnd& end = ends[i].second;
    if (end.state != JobState::kPending) {
      finals.push_back(end.job);
      rows.push_back(
          {end.job, std::string(state_letter(end.state)), end.reason, end.exit_code, end.signal});
    } else {
      if (Status s = db.defer("DELETE FROM allocations WHERE job_id = ?", {end.job}); !s)
        return s.error();
      if (Status s = db.defer(
              "UPDATE jobs SET state = 'PD', reason = ?, exit_code = ?, signal = ?, "
              "start_time = 0, nodes = '', box_anchor = '[]', box_extents = '[]', grants = '', "
              "stop = '', node_failures = node_failures + ?, hold = ? WHERE id = ?",
              {end.reason, end.exit_code, end.signal, end.node_failure ? 1 : 0, end.hold, end.job});
          !s)
        return s.error();
    }
  }
  if (!finals.empty()) {
    const Dialect& d = db.dialect();
    if (Status s = db.defer("DELETE FROM allocations WHERE job_id" + std::string(d.ints_in),
                            {json_fields::encode_ints(finals)});
        !s)
      return s.error();
    if (Status s = db.defer(
            "UPDATE jobs SET state = f.state, reason = f.reason, exit_code = f.exit_code, "
            "signal = f.signal, end_time = ? FROM (SELECT " +
                json_column(d, 0, "int64") + " AS id, " + json_column(d, 1, "text") +
                " AS state, " + json_column(d, 2, "text") + " AS reason, " +
                json_column(d, 3, "int64") + " AS exit_code, " + json_column(d, 4, "int64") +
                " AS signal FROM " + std::string(d.json_rows) + ") AS f WHERE jobs.id" +
                std::string(d.rows_ids_in) + " AND jobs.id = f.id",
            {now, json_fields::dump(rows), json_fields::encode_ints(finals)});
        !s)
      return s.error();
  }
  for (size_t i = 0; i < ends.size(); ++i) {
    if (!ended[i]) continue;
    const JobEnd& end = ends[i].second;
    log_event(db, now, end.state == JobState::kPending ? "requeue" : "end", end.job, "",
              end_detail(end));
  }
  return ended;
}

}  // namespace trellis::sql
