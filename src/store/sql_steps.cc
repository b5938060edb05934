// The StateStore's job steps in SQL (state_store.h's StoredStep; tables steps and step_nodes),
// for both engines, beside sql_store.cc's jobs and nodes.
#include <algorithm>
#include <set>
#include <tuple>

#include "store/json_fields.h"
#include "store/sql_rows.h"
#include "store/sql_store.h"
#include "store/sql_usage.h"

namespace trellis {

using sql::Rows;
using sql::Session;
using sql::transaction;
using namespace json_fields;  // NOLINT
using sql::decode_nodes;
using sql::encode_nodes;
using sql::log_event;
using sql::parse_stop_cause;
using sql::run;
using sql::stop_text;

namespace {

constexpr std::string_view kStepColumns =
    "job_id, attempt, step_id, argv, nodes, tasks, ntasks, state, stop, reason, exit_code, "
    "signal, start_time, end_time";

std::string step_name(JobId job, int attempt, int step) {
  return "step " + std::to_string(job) + "." + std::to_string(step) + " (attempt " +
         std::to_string(attempt) + ")";
}

Result<StoredStep> read_step(const Session& db, const Rows& rows, size_t r) {
  StoredStep s;
  s.job = rows.int64(r, 0);
  s.attempt = rows.integer(r, 1);
  s.step = rows.integer(r, 2);
  auto bad = [&](std::string_view column) {
    return db.fail(Error::Code::kInternal,
                   step_name(s.job, s.attempt, s.step) + " has a malformed " + std::string(column));
  };
  if (!decode_strings(rows.text(r, 3), s.argv)) return bad("argv");
  if (!decode_nodes(rows.text(r, 4), s.nodes)) return bad("nodes");
  Result<TaskRequest> tasks = decode_task_request(rows.text(r, 5));
  if (!tasks) return bad("tasks");
  s.tasks = *tasks;
  s.ntasks = rows.integer(r, 6);
  Result<JobState> state = parse_job_state(rows.text(r, 7));
  if (!state) return bad("state");
  s.state = *state;
  Result<StopCause> stop = parse_stop_cause(rows.text(r, 8));
  if (!stop) return bad("stop");
  s.stop = *stop;
  s.reason = rows.text(r, 9);
  s.exit_code = rows.integer(r, 10);
  s.signal = rows.integer(r, 11);
  s.start_time = rows.real(r, 12);
  s.end_time = rows.real(r, 13);
  return s;
}

Result<std::optional<StoredStep>> find_step(Session& db, JobId job, int attempt, int step) {
  Result<Rows> rows = db.query("SELECT " + std::string(kStepColumns) +
                                   " FROM steps WHERE job_id = ? AND attempt = ? AND step_id = ?",
                               {job, attempt, step});
  if (!rows) return rows.error();
  if (rows->empty()) return std::optional<StoredStep>();
  Result<StoredStep> s = read_step(db, *rows, 0);
  if (!s) return s.error();
  return std::optional<StoredStep>(std::move(*s));
}

// Ends a step with `end` (a final state) and logs it.
Status finish_step(Session& db, const StepEnd& end, Seconds now) {
  if (Status s = run(db,
                     "UPDATE steps SET state = ?, reason = ?, exit_code = ?, signal = ?, "
                     "end_time = ? WHERE job_id = ? AND attempt = ? AND step_id = ?",
                     {state_letter(end.state), end.reason, end.exit_code, end.signal, now, end.job,
                      end.attempt, end.step});
      !s)
    return s;
  std::string detail = "step " + std::to_string(end.step) + " attempt " +
                       std::to_string(end.attempt) + " " + std::string(state_name(end.state)) +
                       ", exit " + std::to_string(end.exit_code);
  if (end.signal) detail += ", signal " + std::to_string(end.signal);
  if (!end.reason.empty()) detail += ": " + end.reason;
  log_event(db, now, "step_end", end.job, "", detail);
  return Ok{};
}

bool runs(JobState s) {
  return s == JobState::kRunning || s == JobState::kCompleting;
}

}  // namespace

Result<int> SqlStore::add_step(const StoredStep& step, int first_id, Seconds now) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(db, "add_step", true, [&](bool& changed) -> Result<int> {
    nlohmann::json argv = nlohmann::json::array();
    for (size_t i = 0; i < step.argv.size(); ++i) {
      if (!is_utf8(step.argv[i]))
        return db.fail(Error::Code::kInvalidArgument,
                       "argv[" + std::to_string(i) + "] is not valid UTF-8");
      argv.push_back(step.argv[i]);
    }
    if (step.nodes.empty())
      return db.fail(Error::Code::kInvalidArgument, "a step runs on at least one node");
    std::string job = "job " + std::to_string(step.job);
    // The job's row stays locked until the commit: its attempt cannot end in between.
    Result<Rows> rows = db.query("SELECT state, attempt, nodes FROM jobs WHERE id = ?" +
                                     std::string(db.dialect().for_update),
                                 {step.job});
    if (!rows) return rows.error();
    if (rows->empty()) return db.fail(Error::Code::kNotFound, job + " does not exist");
    Result<JobState> state = parse_job_state(rows->text(0, 0));
    if (!state) return db.fail(Error::Code::kInternal, job + " has a malformed state");
    if (*state != JobState::kRunning && *state != JobState::kSuspended)
      return db.fail(Error::Code::kDoesNotFitNow, job + " is " + std::string(state_name(*state)) +
                                                      ": steps run in running jobs");
    if (rows->integer(0, 1) != step.attempt)
      return db.fail(Error::Code::kDoesNotFitNow, job + " runs attempt " + rows->text(0, 1) +
                                                      ", not " + std::to_string(step.attempt));
    std::vector<NodeId> held;
    if (!decode_nodes(rows->text(0, 2), held))
      return db.fail(Error::Code::kInternal, job + " has malformed nodes");
    std::set<int> mine(held.begin(), held.end());
    std::vector<NodeId> nodes = step.nodes;
    std::sort(nodes.begin(), nodes.end());
    if (std::adjacent_find(nodes.begin(), nodes.end()) != nodes.end())
      return db.fail(Error::Code::kInvalidArgument, "a step names a node twice");
    for (NodeId n : nodes)
      if (!mine.contains(n))
        return db.fail(Error::Code::kInvalidArgument,
                       "node " + std::to_string(n) + " is not one of " + job + "'s");
    Result<Rows> last = db.query("SELECT max(step_id) FROM steps WHERE job_id = ? AND attempt = ?",
                                 {step.job, step.attempt});
    if (!last) return last.error();
    int id = last->empty() || last->is_null(0, 0) ? first_id : last->integer(0, 0) + 1;
    if (Status s = run(db,
                       "INSERT INTO steps (job_id, attempt, step_id, argv, nodes, tasks, ntasks, "
                       "state, start_time) VALUES (?, ?, ?, ?, ?, ?, ?, 'R', ?)",
                       {step.job, step.attempt, id, dump(argv), encode_nodes(nodes),
                        encode_task_request(step.tasks), step.ntasks, now});
        !s)
      return s.error();
    for (NodeId n : nodes)
      if (Status s = run(db,
                         "INSERT INTO step_nodes (job_id, attempt, step_id, node_id) VALUES "
                         "(?, ?, ?, ?)",
                         {step.job, step.attempt, id, n});
          !s)
        return s.error();
    log_event(db, now, "step", step.job, "",
              "step " + std::to_string(id) + " attempt " + std::to_string(step.attempt) + " on " +
                  std::to_string(nodes.size()) + " nodes: " + encode_nodes(nodes));
    changed = true;
    return id;
  });
}

Result<std::vector<StoredStep>> SqlStore::list_steps(JobId job) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(db, "list_steps", false, [&](bool&) -> Result<std::vector<StoredStep>> {
    Result<Rows> rows = db.query("SELECT " + std::string(kStepColumns) +
                                     " FROM steps WHERE job_id = ? ORDER BY attempt, step_id",
                                 {job});
    if (!rows) return rows.error();
    std::vector<StoredStep> out;
    for (size_t r = 0; r < rows->size(); ++r) {
      Result<StoredStep> s = read_step(db, *rows, r);
      if (!s) return s.error();
      out.push_back(std::move(*s));
    }
    return out;
  });
}

Result<std::set<JobId>> SqlStore::jobs_with_steps(const std::vector<JobId>& ids) {
  if (ids.empty()) return std::set<JobId>{};
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return sql::single_statement(db, "jobs_with_steps", [&]() -> Result<std::set<JobId>> {
    Result<Rows> rows = db.query(
        "SELECT DISTINCT job_id FROM steps WHERE job_id" + std::string(db.dialect().ints_in),
        {json_fields::encode_ints(ids)});
    if (!rows) return rows.error();
    std::set<JobId> with;
    for (size_t r = 0; r < rows->size(); ++r) with.insert(rows->int64(r, 0));
    return with;
  });
}

Result<JobState> SqlStore::stop_step(JobId job, int attempt, int step, StopCause cause,
                                     std::string_view reason, Seconds now) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(db, "stop_step", true, [&](bool& changed) -> Result<JobState> {
    if (cause == StopCause::kNone)
      return db.fail(Error::Code::kInvalidArgument, "a step is stopped for a cause");
    if (!is_utf8(reason))
      return db.fail(Error::Code::kInvalidArgument, "the reason is not valid UTF-8");
    Result<std::optional<StoredStep>> found = find_step(db, job, attempt, step);
    if (!found) return found.error();
    if (!*found)
      return db.fail(Error::Code::kNotFound, step_name(job, attempt, step) + " does not exist");
    const StoredStep& s = **found;
    if (s.state != JobState::kRunning || s.stop != StopCause::kNone) return s.state;
    if (Status u = run(db,
                       "UPDATE steps SET state = 'CG', stop = ?, reason = ? WHERE job_id = ? AND "
                       "attempt = ? AND step_id = ?",
                       {stop_text(cause), reason, job, attempt, step});
        !u)
      return u.error();
    log_event(db, now, "step_state", job, "",
              "step " + std::to_string(step) + " attempt " + std::to_string(attempt) +
                  " RUNNING -> COMPLETING: " + std::string(reason));
    changed = true;
    return JobState::kCompleting;
  });
}

Result<std::vector<StepEnd>> SqlStore::record_step_exits(const std::vector<StepExit>& exits,
                                                         Seconds now) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(
      db, "record_step_exits", true, [&](bool& changed) -> Result<std::vector<StepEnd>> {
        if (const std::vector<sql::UsageRow> usage = sql::usage_rows(exits); !usage.empty()) {
          sql::Statement insert = sql::insert_usage(db.dialect(), usage);
          Result<Rows> inserted = db.query(insert.sql, insert.params);
          if (!inserted) return inserted.error();
          if (inserted->affected() > 0) changed = true;
        }
        std::set<std::tuple<JobId, int, int>> touched;
        for (const StepExit& e : exits) {
          std::string reason = is_utf8(e.reason) ? e.reason : std::string();
          Result<Rows> marked = db.query(
              "UPDATE step_nodes SET exited = 1, exit_code = ?, signal = ?, reason = ? "
              "WHERE job_id = ? AND attempt = ? AND step_id = ? AND node_id = ? AND exited = 0",
              {e.exit_code, e.signal, reason, e.job, e.attempt, e.step, e.node});
          if (!marked) return marked.error();
          if (marked->affected() == 0) continue;  // repeated, or not one of its nodes
          changed = true;
          touched.insert({e.job, e.attempt, e.step});
        }
        std::vector<StepEnd> ended;
        for (const auto& [job, attempt, step] : touched) {
          Result<Rows> left = db.query(
              "SELECT count(*) - sum(exited), max(exit_code), max(signal) FROM step_nodes "
              "WHERE job_id = ? AND attempt = ? AND step_id = ?",
              {job, attempt, step});
          if (!left) return left.error();
          if (left->empty() || left->int64(0, 0) != 0) continue;  // nodes still running it
          Result<std::optional<StoredStep>> found = find_step(db, job, attempt, step);
          if (!found) return found.error();
          if (!*found || !runs((*found)->state)) continue;
          StepEnd end{
              job, attempt, step, JobState::kCompleted, left->integer(0, 1), left->integer(0, 2),
              ""};
          switch ((*found)->stop) {
            case StopCause::kCancel:
              end.state = JobState::kCancelled;
              end.reason = (*found)->reason;
              break;
            case StopCause::kOutOfMemory:
              end.state = JobState::kOutOfMemory;
              end.reason = (*found)->reason;
              break;
            case StopCause::kFailed:
            case StopCause::kTimeout:
              end.state = JobState::kFailed;
              end.reason = (*found)->reason;
              break;
            case StopCause::kNone:
              if (end.exit_code != 0 || end.signal != 0) {
                end.state = JobState::kFailed;
                // The first node that said why, else what its status says.
                Result<Rows> why = db.query(
                    "SELECT reason, exit_code, signal, node_id FROM step_nodes WHERE job_id = ? "
                    "AND "
                    "attempt = ? AND step_id = ? AND (exit_code <> 0 OR signal <> 0) "
                    "ORDER BY (reason = '') , node_id LIMIT 1",
                    {job, attempt, step});
                if (!why) return why.error();
                if (!why->empty()) {
                  end.reason = why->text(0, 0);
                  if (end.reason.empty())
                    end.reason =
                        "node " + why->text(0, 3) +
                        (why->integer(0, 2) != 0 ? " was killed by signal " + why->text(0, 2)
                                                 : " exited with exit code " + why->text(0, 1));
                }
              }
              break;
          }
          if (Status s = finish_step(db, end, now); !s) return s.error();
          ended.push_back(std::move(end));
        }
        return ended;
      });
}

Result<std::vector<StepEnd>> SqlStore::end_steps(JobId job, int attempt, std::string_view reason,
                                                 Seconds now) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(db, "end_steps", true, [&](bool& changed) -> Result<std::vector<StepEnd>> {
    if (!is_utf8(reason))
      return db.fail(Error::Code::kInvalidArgument, "the reason is not valid UTF-8");
    Result<Rows> open = db.query(
        "SELECT step_id FROM steps WHERE job_id = ? AND attempt = ? AND state IN ('R', 'CG') "
        "ORDER BY step_id",
        {job, attempt});
    if (!open) return open.error();
    std::vector<StepEnd> ended;
    for (size_t r = 0; r < open->size(); ++r) {
      StepEnd end{job, attempt, open->integer(r, 0), JobState::kCancelled,
                  0,   0,       std::string(reason)};
      if (Status s = finish_step(db, end, now); !s) return s.error();
      ended.push_back(std::move(end));
      changed = true;
    }
    return ended;
  });
}

}  // namespace trellis
