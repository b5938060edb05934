// The SQL store's jobs (sql_store.h): submissions, reads, and how a job stops and ends. Every
// writer locks the rows of the jobs it checks (sql_rows.h: job_status), so writers of different
// jobs run side by side; what they log is appended at their commit.
#include <algorithm>
#include <set>
#include <tuple>

#include "store/json_fields.h"
#include "store/sql_rows.h"
#include "store/sql_store.h"
#include "store/sql_usage.h"

namespace trellis {

using sql::JobStatus;
using sql::Param;
using sql::Rows;
using sql::Session;
using sql::transaction;
using namespace json_fields;  // NOLINT

namespace sql {

Result<Statement> insert_job(Session& db, const StoredJob& job) {
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
      return db.fail(Error::Code::kInvalidArgument,
                     "environment variable " + std::to_string(env.size()) + " is not valid UTF-8");
    }
    env[key] = value;
  }
  for (const auto& [field, text] : {std::pair<const char*, const std::string&>{"user", job.user},
                                    {"name", job.name},
                                    {"cwd", job.cwd},
                                    {"output", job.output},
                                    {"error", job.error},
                                    {"reason", job.reason},
                                    {"partition", job.partition},
                                    {"dependency", job.dependency},
                                    {"script", job.script},
                                    {"owner", job.owner},
                                    {"account", job.account},
                                    {"qos", job.qos}}) {
    if (!is_utf8(text)) {
      return db.fail(Error::Code::kInvalidArgument,
                     std::string("the job's ") + field + " is not valid UTF-8");
    }
  }
  return Statement{
      "INSERT INTO jobs (uid, gid, user_name, name, request_nodes, request_shape, "
      "request_rotate, request_mode, share, time_limit, argv, cwd, stdout_path, stderr_path, "
      "env, state, reason, partition_name, array_job, array_task, array_limit, dependency, "
      "kill_on_invalid_dep, script_id, tasks, owner, resources, account, qos, submit_time, "
      "start_time, "
      "end_time, expected_start, attempt, nodes, box_anchor, box_extents, exit_code, signal) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'PD', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
      "?, ?, "
      "?, 0, 0, 0, 0, '', '[]', '[]', 0, 0) RETURNING id",
      {job.uid,
       job.gid,
       job.user,
       job.name,
       job.request.nodes,
       encode_ints(job.request.shape),
       job.request.rotate ? 1 : 0,
       std::string(to_string(job.request.mode)),
       job.share ? 1 : 0,
       job.time_limit,
       dump(argv),
       job.cwd,
       job.output,
       job.error,
       dump(env),
       job.reason,
       job.partition,
       job.array_job,
       job.array_task,
       job.array_limit,
       job.dependency,
       job.kill_on_invalid_dep ? 1 : 0,
       job.script_id,
       encode_task_request(job.tasks),
       job.owner,
       encode_resource_request(job.resources),
       job.account,
       job.qos,
       0.0}};  // submit_time last: add_jobs() sets it
}

// The inserts of a batch of jobs submitted at `now`; an error names the job of the batch.
static Result<std::vector<Statement>> insert_jobs(Session& db, const std::vector<StoredJob>& jobs,
                                                  Seconds now) {
  std::vector<Statement> inserts;
  for (size_t i = 0; i < jobs.size(); ++i) {
    Result<Statement> insert = insert_job(db, jobs[i]);
    if (!insert) {
      Error e = insert.error();
      if (jobs.size() > 1) e.message += " (job " + std::to_string(i + 1) + " of the batch)";
      return e;
    }
    insert->params.back() = now;  // submit_time
    inserts.push_back(std::move(*insert));
  }
  return inserts;
}

}  // namespace sql

Result<JobId> SqlStore::add_job(const StoredJob& job, Seconds now) {
  Result<std::vector<JobId>> ids = add_jobs({job}, now);
  if (!ids) return ids.error();
  return ids->front();
}

Result<std::vector<JobId>> SqlStore::add_jobs(const std::vector<StoredJob>& jobs, Seconds now) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  const bool scripts = std::any_of(jobs.begin(), jobs.end(),
                                   [](const StoredJob& job) { return !job.script.empty(); });
  if (!db.dialect().insert_job_logged.empty() && !scripts) return add_jobs_logged(db, jobs, now);
  Result<std::vector<sql::Statement>> inserts = sql::insert_jobs(db, jobs, now);
  if (!inserts) return inserts.error();
  return transaction(db, "add_job", true, [&](bool& changed) -> Result<std::vector<JobId>> {
    // One round trip for the batch (PostgreSQL's pipeline).
    Result<std::vector<Rows>> inserted = db.query_batch(*inserts);
    if (!inserted) return inserted.error();
    std::vector<JobId> ids;
    for (size_t i = 0; i < inserted->size(); ++i) {
      if ((*inserted)[i].empty())
        return db.fail(Error::Code::kInternal, "the insert returned no id");
      ids.push_back((*inserted)[i].int64(0, 0));
      sql::log_event(db, now, "submit", ids.back(), "", jobs[i].name);
    }
    if (Status s = sql::store_scripts(db, jobs, ids); !s) return s.error();
    changed = !ids.empty();
    return ids;
  });
}

Result<std::vector<JobId>> SqlStore::add_jobs_logged(Session& db,
                                                     const std::vector<StoredJob>& jobs,
                                                     Seconds now) {
  Result<std::vector<sql::Statement>> inserts = sql::insert_jobs(db, jobs, now);
  if (!inserts) return inserts.error();
  for (size_t i = 0; i < jobs.size(); ++i) {
    sql::Statement& insert = (*inserts)[i];
    std::string text(db.dialect().insert_job_logged);
    text.replace(text.find("{insert}"), 8, insert.sql);
    insert.sql = std::move(text);
    insert.params.emplace_back(now);
    insert.params.emplace_back(jobs[i].name);
  }
  Status written = transaction(db, "add_job", true, [&](bool& changed) -> Status {
    // The log's order lock first: each statement appends its job's event.
    if (Status s = db.lock_log(); !s) return s;
    for (const sql::Statement& insert : *inserts)
      if (Status s = db.defer_for_rows(insert.sql, insert.params); !s) return s;
    changed = !inserts->empty();
    return Ok{};
  });
  if (!written) return written.error();
  std::vector<JobId> ids;
  for (const Rows& rows : db.rows_after_commit) {
    if (rows.empty()) return db.fail(Error::Code::kInternal, "the insert returned no id");
    ids.push_back(rows.int64(0, 0));
  }
  if (ids.size() != jobs.size())
    return db.fail(Error::Code::kInternal, std::to_string(ids.size()) + " ids for " +
                                               std::to_string(jobs.size()) + " jobs inserted");
  return ids;
}

Result<std::vector<StoredJob>> SqlStore::list_jobs(const JobQuery& query) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return sql::single_statement(db, "list_jobs", [&]() -> Result<std::vector<StoredJob>> {
    std::vector<StoredJob> jobs;
    // The states asked for: `states` (or all) and, with only_active, the active ones among them.
    std::vector<JobState> states = query.states;
    if (query.only_active) {
      if (states.empty()) {
        states = {JobState::kPending, JobState::kRunning, JobState::kSuspended,
                  JobState::kCompleting};
      } else {
        std::erase_if(states, [](JobState s) { return !sql::is_active(s); });
        if (states.empty()) return jobs;  // only final states asked, and only active ones
      }
    }
    // One statement per combination of filters, each cached; lists are bound as
    // JSON arrays so that the text of the statement does not depend on their length.
    std::string text = "SELECT " + std::string(sql::kJobColumns) + " FROM jobs";
    std::vector<Param> params;
    const char* joiner = " WHERE ";
    if (!query.ids.empty() && query.exact_ids) {
      text += joiner + std::string("id") + std::string(db.dialect().ints_in);
      params.emplace_back(encode_ints(query.ids));
      joiner = " AND ";
    } else if (!query.ids.empty()) {
      // An array's id names its tasks too.
      text += joiner + std::string("(id") + std::string(db.dialect().ints_in) +
              " OR (array_job <> 0 AND array_job" + std::string(db.dialect().ints_in) + "))";
      params.emplace_back(encode_ints(query.ids));
      params.emplace_back(encode_ints(query.ids));
      joiner = " AND ";
    }
    // Accounting windows (sacct -S/-E), names and partitions.
    if (query.submitted_by) {
      text += joiner + std::string("submit_time <= ?");
      params.emplace_back(*query.submitted_by);
      joiner = " AND ";
    }
    if (query.not_ended_before) {
      text += joiner + std::string("(end_time >= ? OR end_time = 0)");
      params.emplace_back(*query.not_ended_before);
      joiner = " AND ";
    }
    if (!query.names.empty()) {
      text += joiner + std::string("name") + std::string(db.dialect().texts_in);
      params.emplace_back(dump(nlohmann::json(query.names)));
      joiner = " AND ";
    }
    if (!query.partitions.empty()) {
      text += joiner + std::string("partition_name") + std::string(db.dialect().texts_in);
      params.emplace_back(dump(nlohmann::json(query.partitions)));
      joiner = " AND ";
    }
    if (!states.empty()) {
      text += joiner + std::string("state") + std::string(db.dialect().texts_in);
      nlohmann::json letters = nlohmann::json::array();
      for (JobState state : states) letters.push_back(std::string(state_letter(state)));
      params.emplace_back(dump(letters));
      joiner = " AND ";
    }
    if (query.uid) {
      text += joiner + std::string("uid = ?");
      params.emplace_back(*query.uid);
    }
    text += " ORDER BY id";
    Result<Rows> rows = db.query(text, params);
    if (!rows) return rows.error();
    for (size_t r = 0; r < rows->size(); ++r) {
      Result<StoredJob> job = sql::read_job(db, *rows, r);
      if (!job) return job.error();
      jobs.push_back(std::move(*job));
    }
    return jobs;
  });
}

Result<StoredJob> SqlStore::job(JobId id) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return sql::single_statement(db, "job", [&]() -> Result<StoredJob> {
    static const std::string kSql =
        "SELECT " + std::string(sql::kJobColumns) + " FROM jobs WHERE id = ?";
    Result<Rows> rows = db.query(kSql, {id});
    if (!rows) return rows.error();
    if (rows->empty()) return db.fail(Error::Code::kNotFound, "no job " + std::to_string(id));
    return sql::read_job(db, *rows, 0);
  });
}

Result<bool> SqlStore::end_job(const JobEnd& end, Seconds now) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(db, "end_job", true, [&](bool& changed) -> Result<bool> {
    Result<JobStatus> status = sql::job_status(db, end.job, true);
    if (!status) return status.error();
    Result<bool> ended = sql::end_attempt(db, *status, end, now);
    if (ended && *ended) changed = true;
    return ended;
  });
}

Result<bool> SqlStore::release_job(JobId job, Seconds now) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(db, "release_job", true, [&](bool& changed) -> Result<bool> {
    Result<Rows> held = db.query("SELECT state, hold FROM jobs WHERE id = ?", {job});
    if (!held) return held.error();
    if (held->empty()) return db.fail(Error::Code::kNotFound, "no job " + std::to_string(job));
    if (held->text(0, 0) != "PD" || held->text(0, 1).empty()) return false;
    if (Status s = db.defer("UPDATE jobs SET hold = '', reason = 'released' WHERE id = ?", {job});
        !s)
      return s.error();
    sql::log_event(db, now, "release", job, "", "held -> released");
    changed = true;
    return true;
  });
}

Result<JobState> SqlStore::stop_job(JobId job, int attempt, StopCause cause,
                                    std::string_view reason, Seconds now) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  if (cause == StopCause::kNone) {
    db.set_operation("stop_job");
    return db.fail(Error::Code::kInvalidArgument, "a job is stopped for a cause");
  }
  if (!is_utf8(reason)) {
    db.set_operation("stop_job");
    return db.fail(Error::Code::kInvalidArgument, "the reason is not valid UTF-8");
  }
  if (!db.dialect().stop_job_logged.empty())
    return stop_job_logged(db, job, attempt, cause, reason, now);
  return transaction(db, "stop_job", true, [&](bool& changed) -> Result<JobState> {
    Result<JobStatus> status = sql::job_status(db, job, true);
    if (!status) return status.error();
    if (status->state == JobState::kPending && cause == StopCause::kCancel && attempt == 0) {
      if (Status s =
              db.defer("UPDATE jobs SET state = 'CA', reason = ?, end_time = ?, expected_start = 0 "
                       "WHERE id = ?",
                       {reason, now, job});
          !s) {
        return s.error();
      }
      sql::log_event(db, now, "cancel", job, "", "PENDING -> CANCELLED: " + std::string(reason));
      changed = true;
      return JobState::kCancelled;
    }
    bool stoppable =
        (status->state == JobState::kRunning || status->state == JobState::kSuspended) &&
        status->stop == StopCause::kNone && (attempt == 0 || attempt == status->attempt);
    if (!stoppable) return status->state;
    if (Status s = db.defer("UPDATE jobs SET state = 'CG', reason = ?, stop = ? WHERE id = ?",
                            {reason, sql::stop_text(cause), job});
        !s) {
      return s.error();
    }
    std::string detail =
        std::string(state_name(status->state)) + " -> COMPLETING: " + std::string(reason);
    sql::log_event(db, now, cause == StopCause::kCancel ? "cancel" : "state", job, "", detail);
    changed = true;
    return JobState::kCompleting;
  });
}

Result<JobState> SqlStore::stop_job_logged(Session& db, JobId job, int attempt, StopCause cause,
                                           std::string_view reason, Seconds now) {
  const sql::Dialect& d = db.dialect();
  Status written = transaction(db, "stop_job", true, [&](bool& changed) -> Status {
    // The job's row first, then the log lock: the order every writer takes them in.
    if (Status s = db.defer("SELECT id FROM jobs WHERE id = ?" + std::string(d.for_update), {job});
        !s)
      return s;
    if (Status s = db.lock_log(); !s) return s;
    const std::vector<Param> params{job, sql::stop_text(cause), attempt, reason, now};
    if (Status s = db.defer_for_rows(d.stop_job_logged, params); !s) return s;
    // Counted even when nothing changed (a job over or stopping already): that is known only
    // after the commit, and a spare change costs a follower one read.
    changed = true;
    return Ok{};
  });
  if (!written) return written.error();
  if (db.rows_after_commit.size() != 1)
    return db.fail(Error::Code::kInternal, "stopping a job returned no rows");
  const Rows& row = db.rows_after_commit.front();
  if (row.empty()) return db.fail(Error::Code::kNotFound, "no job " + std::to_string(job));
  if (row.int64(0, 1) != 0) return JobState::kCancelled;
  if (row.int64(0, 2) != 0) return JobState::kCompleting;
  Result<JobState> state = parse_job_state(row.text(0, 0));
  if (!state)
    return db.fail(Error::Code::kInternal, "job " + std::to_string(job) + " has a malformed state");
  return *state;
}

Result<std::vector<JobEnd>> SqlStore::record_exits(const std::vector<TaskExit>& exits,
                                                   Seconds now) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  std::vector<JobId> ids;
  for (const TaskExit& exit : exits) ids.push_back(exit.job);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  // A node reported twice for one attempt in the batch counts its first report (an UPDATE ...
  // FROM with two rows for one target row would take either); only the current attempt's match.
  nlohmann::json exit_rows = nlohmann::json::array();
  std::set<std::tuple<JobId, NodeId, int>> reported;
  for (const TaskExit& exit : exits)
    if (reported.insert({exit.job, exit.node, exit.attempt}).second)
      exit_rows.push_back({exit.job, exit.node, exit.exit_code, exit.signal, exit.attempt});
  const std::string rows = dump(exit_rows);
  const std::vector<sql::UsageRow> usage = sql::usage_rows(exits);
  if (!ids.empty() && !db.dialect().record_exits_logged.empty())
    return record_exits_logged(db, rows, usage, ids, now);
  return transaction(db, "record_exits", true, [&](bool& changed) -> Result<std::vector<JobEnd>> {
    std::vector<JobEnd> ended;
    // One round trip: the jobs reported, locked (a stranger's report names no row and changes
    // nothing); each exit marks its node if its attempt is the one holding nodes and the node
    // has not reported yet; and what each job has left running afterwards.
    if (ids.empty()) return ended;
    const sql::Dialect& d = db.dialect();
    std::vector<sql::Statement> batch;
    batch.push_back({"SELECT id, state, attempt, share, stop, reason FROM jobs WHERE id" +
                         std::string(d.ints_in) + " ORDER BY id" + std::string(d.for_update),
                     {encode_ints(ids)}});
    // Every exit in one statement: it marks its node if its attempt is the one holding nodes
    // and the node has not reported yet, and names the job it marked for.
    auto column = [&](int index) { return sql::json_column(d, index, "int64"); };
    batch.push_back(
        {"UPDATE allocations SET exited = 1, exit_code = x.exit_code, signal = x.signal FROM "
         "(SELECT " +
             column(0) + " AS job, " + column(1) + " AS node, " + column(2) + " AS exit_code, " +
             column(3) + " AS signal, " + column(4) + " AS attempt FROM " +
             std::string(d.json_rows) + ") AS x WHERE allocations.job_id" +
             std::string(d.rows_ids_in) +
             " AND allocations.job_id = x.job AND allocations.node_id = x.node AND "
             "allocations.exited = 0 AND EXISTS (SELECT 1 FROM jobs WHERE jobs.id = x.job AND "
             "jobs.attempt = x.attempt AND jobs.state IN ('R', 'S', 'CG')) "
             "RETURNING allocations.job_id",
         {rows, encode_ints(ids)}});
    batch.push_back(
        {"SELECT job_id, count(*) - sum(exited), max(exit_code), max(signal) "
         "FROM allocations WHERE job_id" +
             std::string(d.ints_in) + " GROUP BY job_id ORDER BY job_id",
         {encode_ints(ids)}});
    const size_t left_at = batch.size() - 1;
    if (!usage.empty()) batch.push_back(sql::insert_usage(d, usage));
    Result<std::vector<Rows>> done = db.query_batch(batch);
    if (!done) return done.error();
    if (!usage.empty()) changed = true;  // kept even when every exit was late or repeated
    std::map<JobId, JobStatus> status_of;
    std::map<JobId, std::string> stopped_reason;  // the reason a stopped job was given
    const Rows& jobs = done->front();
    for (size_t r = 0; r < jobs.size(); ++r) {
      Result<StopCause> stop = sql::parse_stop_cause(jobs.text(r, 4));
      Result<JobState> state = parse_job_state(jobs.text(r, 1));
      if (!stop || !state)
        return db.fail(Error::Code::kInternal,
                       "job " + jobs.text(r, 0) + " has a malformed state or stop cause");
      status_of[jobs.int64(r, 0)] =
          JobStatus{jobs.int64(r, 0), *state, jobs.integer(r, 2), jobs.integer(r, 3) != 0, *stop};
      if (*stop != StopCause::kNone) stopped_reason[jobs.int64(r, 0)] = jobs.text(r, 5);
    }
    std::set<JobId> touched;  // jobs with an exit not late and not repeated
    const Rows& marked = (*done)[1];
    for (size_t r = 0; r < marked.size(); ++r) touched.insert(marked.int64(r, 0));
    if (touched.empty()) return ended;
    changed = true;
    const Rows& left = (*done)[left_at];
    std::vector<std::pair<JobStatus, JobEnd>> ends;
    for (size_t r = 0; r < left.size(); ++r) {
      JobId id = left.int64(r, 0);
      if (!touched.count(id) || left.int64(r, 1) != 0) continue;  // nodes still running it
      const JobStatus& status = status_of[id];
      JobEnd end = end_by_rule(id, status.attempt, status.stop, left.integer(r, 2),
                               left.integer(r, 3), stopped_reason[id]);
      ends.emplace_back(status, std::move(end));
    }
    Result<std::vector<bool>> over = sql::end_attempts(db, ends, now);
    if (!over) return over.error();
    for (size_t i = 0; i < ends.size(); ++i)
      if ((*over)[i]) ended.push_back(std::move(ends[i].second));
    return ended;
  });
}

Result<std::vector<JobEnd>> SqlStore::record_exits_logged(Session& db, const std::string& rows,
                                                          const std::vector<sql::UsageRow>& usage,
                                                          const std::vector<JobId>& ids,
                                                          Seconds now) {
  const sql::Dialect& d = db.dialect();
  Status written = transaction(db, "record_exits", true, [&](bool& changed) -> Status {
    // The jobs' rows first, then the log lock: the order every writer takes them in.
    if (Status s = db.defer("SELECT id FROM jobs WHERE id" + std::string(d.ints_in) +
                                " ORDER BY id" + std::string(d.for_update),
                            {encode_ints(ids)});
        !s)
      return s;
    if (Status s = db.lock_log(); !s) return s;
    if (!usage.empty()) {
      sql::Statement insert = sql::insert_usage(d, usage);
      if (Status s = db.defer(insert.sql, insert.params); !s) return s;
    }
    const std::vector<Param> params{rows, encode_ints(ids), now, now};
    if (Status s = db.defer_for_rows(d.record_exits_logged, params); !s) return s;
    // Counted even when every exit was late or repeated: which ones were is known only after
    // the commit, and a spare change costs a follower one read.
    changed = true;
    return Ok{};
  });
  if (!written) return written.error();
  std::vector<JobEnd> ended;
  if (db.rows_after_commit.size() != 1)
    return db.fail(Error::Code::kInternal, "recording exits returned no rows");
  const Rows& ends = db.rows_after_commit.front();
  for (size_t r = 0; r < ends.size(); ++r) {
    Result<JobState> state = parse_job_state(ends.text(r, 2));
    if (!state) return db.fail(Error::Code::kInternal, "an end with a malformed state");
    JobEnd end;
    end.job = ends.int64(r, 0);
    end.attempt = ends.integer(r, 1);
    end.state = *state;
    end.exit_code = ends.integer(r, 3);
    end.signal = ends.integer(r, 4);
    end.reason = ends.text(r, 5);
    ended.push_back(std::move(end));
  }
  return ended;
}

Status SqlStore::set_job_state(JobId job, JobState state, std::string_view reason, Seconds now) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(db, "set_job_state", true, [&](bool& changed) -> Status {
    if (!is_utf8(reason)) {
      return db.fail(Error::Code::kInvalidArgument, "the reason is not valid UTF-8");
    }
    Result<JobStatus> status = sql::job_status(db, job, true);
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
      if (Status s = db.defer("DELETE FROM allocations WHERE job_id = ?", {job}); !s) return s;
    }
    Status updated =
        final ? db.defer("UPDATE jobs SET state = ?, reason = ?, end_time = ? WHERE id = ?",
                         {state_letter(state), reason, now, job})
              : db.defer("UPDATE jobs SET state = ?, reason = ? WHERE id = ?",
                         {state_letter(state), reason, job});
    if (!updated) return updated;
    std::string detail = from + " -> " + to;
    if (!reason.empty()) detail += ": " + std::string(reason);
    sql::log_event(db, now, state == JobState::kCancelled ? "cancel" : "state", job, "", detail);
    changed = true;
    return Ok{};
  });
}

Status SqlStore::record_frozen_time(JobId job, int attempt, Seconds seconds) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(db, "record_frozen_time", true, [&](bool& changed) -> Status {
    if (!(seconds >= 0)) {
      return db.fail(Error::Code::kInvalidArgument,
                     "job " + std::to_string(job) + ": a frozen time is not negative");
    }
    // One statement: the attempt checked and the time written together.
    Result<Rows> updated =
        db.query("UPDATE jobs SET seconds_frozen = ? WHERE id = ? AND attempt = ? RETURNING id",
                 {seconds, job, attempt});
    if (!updated) return updated.error();
    if (updated->empty()) {
      Result<JobStatus> status = sql::job_status(db, job, false);
      if (!status) return status.error();  // no such job
      return Ok{};                         // a later attempt has started
    }
    changed = true;
    return Ok{};
  });
}

}  // namespace trellis
