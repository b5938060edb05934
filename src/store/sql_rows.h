// The pieces of the SQL store (sql_store.h) that its files share: how a job row is read and a
// job's status checked, how node lists are kept (id ranges), and how events join the write
// transaction in progress. Internal to src/store.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/sql_session.h"
#include "store/state_store.h"

namespace trellis::sql {

// The one lease the store knows.
inline constexpr std::string_view kSchedulerRole = "scheduler";
// A controller's check-in row under concurrent allocation is this prefix and its identity.
inline constexpr std::string_view kControllerRolePrefix = "controller ";

// How the jobs.stop column spells a StopCause.
std::string_view stop_text(StopCause cause);
Result<StopCause> parse_stop_cause(std::string_view text);

inline bool is_active(JobState s) {
  return !is_final(s);
}

// Runs a statement whose rows do not matter, now.
Status run(Session& db, std::string_view sql, std::initializer_list<Param> params = {});

// Adds an event to the write transaction in progress; transaction() appends them all at its end,
// under the log lock, so that the log is gap-free and in commit order.
void log_event(Session& db, Seconds time, std::string_view kind, JobId job, std::string_view node,
               std::string_view detail);

// The cluster's node count (read once per session), and a check that ids are the cluster's.
Result<int> node_count(Session& db);
Status check_node_ids(Session& db, const std::vector<NodeId>& nodes);

// A node list as the jobs.nodes column and the start events keep it: id ranges ("0-63,80").
std::string encode_nodes(const std::vector<NodeId>& nodes);
// Reads id ranges, or the JSON list of ids that schema versions before 4 wrote.
bool decode_nodes(const std::string& text, std::vector<NodeId>& out);

// The INSERT of a new pending job (its submit time is the last parameter, 0 until set), or why
// the job cannot be stored (sql_store_jobs.cc).
Result<Statement> insert_job(Session& db, const StoredJob& job);
// Stores the batch scripts of jobs just inserted (`ids` in the order of `jobs`): each job with a
// script gets a job_scripts row of its own id, and that id as its script_id.
Status store_scripts(Session& db, const std::vector<StoredJob>& jobs,
                     const std::vector<JobId>& ids);

// The columns of a StoredJob, in read_job()'s order, and a row of them read back.
extern const std::string_view kJobColumns;
Result<StoredJob> read_job(const Session& db, const Rows& rows, size_t r);

// A job's state and attempt, for the checks of the writers.
struct JobStatus {
  JobId id = 0;
  JobState state = JobState::kPending;
  int attempt = 0;
  bool share = false;
  StopCause stop = StopCause::kNone;
};
// Reads a job's status. In a write transaction, `lock` locks its row until the commit, so that the
// check and the change that follows it are not split by another writer. Not found: no such job.
Result<JobStatus> job_status(Session& db, JobId id, bool lock);
// The same for many jobs in one statement (rows locked in id order); missing jobs are left out.
Result<std::vector<JobStatus>> job_statuses(Session& db, std::vector<JobId> ids, bool lock);

// Ends a job's current attempt (end_job()); false, changing nothing, for a late or repeated end.
// `status` is the job's status, read with its row locked.
Result<bool> end_attempt(Session& db, const JobStatus& status, const JobEnd& end, Seconds now);
// The same for many jobs, whose final ends are written with one statement for their allocations
// and one for their rows (a requeue, with its own); one answer per end, in order.
Result<std::vector<bool>> end_attempts(Session& db,
                                       const std::vector<std::pair<JobStatus, JobEnd>>& ends,
                                       Seconds now);

}  // namespace trellis::sql
