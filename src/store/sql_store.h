// SqlStore: the StateStore in an SQL database, one code for both engines: SQLite (one file, the
// embedded default) and PostgreSQL (one server that several controllers share, seed 003). The
// engines differ only in their sql::Session (sqlite_session.h, postgres_session.h) and in the
// schema's two spellings (sql_schema.h).
//
// Each call runs on a session of its own from the object's pool (session_pool.h): one for SQLite,
// a few for PostgreSQL, so that one controller's pass, submissions and exit reports do not queue
// behind one another. Writers of different rows run side by side across the processes that share
// the database: each locks the rows it checks before it changes them (a job's row, the nodes a pass
// takes), and only their ends are serial (the log lock, sql_session.h), so each transaction's
// events follow those committed before it; readers never wait for writers. Node lists are kept as
// id ranges ("0-63,80": jobs.nodes and the start events), and a change to many nodes is one
// statement and one event naming them as a hostlist.
//
//   Result<std::unique_ptr<StateStore>> store = open_store("sqlite:/var/lib/trellis/state.db");
//   Result<std::unique_ptr<StateStore>> shared = open_store("postgresql://db.site/trellis");
//
// The schema carries a version (meta.schema_version). Opening read-write migrates an older store
// step by step in one transaction; a store from a newer Trellis is refused, as is any store opened
// read-only that is not at this build's version. Tables: meta, nodes, jobs, allocations (a node
// holds at most one exclusive allocation, and none beside a shared one: a unique index and a
// trigger refuse it; each allocation records its node's exit), events (append-only, gap-free seq
// in commit order), leases (the scheduler role), steps and step_nodes (a job's own steps and
// their nodes' exits).
#pragma once

#include <memory>
#include <string>

#include "store/session_pool.h"
#include "store/sql_session.h"
#include "store/sql_usage.h"
#include "store/state_store.h"

namespace trellis {

class SqlStore final : public StateStore {
 public:
  // Checks (read-only) or creates and migrates (read-write) the schema of the database behind
  // `session`, and wraps it; `open_more` opens more sessions like it, up to `sessions` in all,
  // when calls overlap (none when it is empty).
  static Result<std::unique_ptr<SqlStore>> open(std::unique_ptr<sql::Session> session,
                                                sql::SessionPool::Opener open_more = {},
                                                int sessions = 1);
  ~SqlStore() override;
  SqlStore(const SqlStore&) = delete;
  SqlStore& operator=(const SqlStore&) = delete;

  // "store PATH" or "store postgresql://HOST:PORT/DB", as messages name it.
  const std::string& name() const;

  Status init_cluster(std::string_view machine_spec,
                      const std::vector<std::string>& node_names) override;
  Result<std::string> machine_spec() override;
  Result<int64_t> version() override;
  Result<StoreHead> head() override;
  Result<StoreChanges> changes(int64_t after, int limit) override;

  Result<JobId> add_job(const StoredJob& job, Seconds now) override;
  Result<std::vector<JobId>> add_jobs(const std::vector<StoredJob>& jobs, Seconds now) override;
  Result<std::vector<JobId>> add_array(const StoredJob& job, const std::vector<int>& tasks,
                                       Seconds now) override;
  Result<std::string> job_script(JobId script_id) override;
  Status clear_dependencies(const std::vector<JobId>& jobs) override;
  Result<std::vector<StoredJob>> list_jobs(const JobQuery& query) override;
  Result<StoredJob> job(JobId id) override;
  Result<PassOutcome> apply_pass(const PassCommit& pass, Seconds now) override;
  Result<bool> end_job(const JobEnd& end, Seconds now) override;
  Status set_job_state(JobId job, JobState state, std::string_view reason, Seconds now) override;
  Status record_frozen_time(JobId job, int attempt, Seconds seconds) override;
  Result<JobState> stop_job(JobId job, int attempt, StopCause cause, std::string_view reason,
                            Seconds now) override;
  Result<std::vector<JobEnd>> record_exits(const std::vector<TaskExit>& exits,
                                           Seconds now) override;
  Result<std::optional<std::string>> core_state() override;
  Result<bool> release_job(JobId job, Seconds now) override;

  // Steps: sql_steps.cc.
  Result<int> add_step(const StoredStep& step, int first_id, Seconds now) override;
  Result<std::vector<StoredStep>> list_steps(JobId job) override;
  Result<std::set<JobId>> jobs_with_steps(const std::vector<JobId>& ids) override;
  Result<JobState> stop_step(JobId job, int attempt, int step, StopCause cause,
                             std::string_view reason, Seconds now) override;
  Result<std::vector<StepEnd>> record_step_exits(const std::vector<StepExit>& exits,
                                                 Seconds now) override;
  Result<std::map<JobId, std::vector<StepUsage>>> step_usage(
      const std::vector<JobId>& jobs) override;
  Result<std::vector<StepEnd>> end_steps(JobId job, int attempt, std::string_view reason,
                                         Seconds now) override;

  Result<std::vector<StoredNode>> list_nodes() override;
  Result<std::vector<RunningTask>> register_nodes(const std::vector<std::string>& names,
                                                  std::string_view agent,
                                                  const std::vector<RunningTask>& running,
                                                  Seconds now) override;
  Status nodes_seen(const std::vector<std::string>& names, std::string_view agent,
                    Seconds now) override;
  Status nodes_down(const std::vector<NodeId>& nodes, std::string_view reason,
                    Seconds now) override;
  Status set_drained(const std::vector<NodeId>& nodes, bool drained, std::string_view reason,
                     Seconds now) override;

  Result<bool> hold_lease(std::string_view holder, Seconds now, Seconds ttl) override;
  Status release_lease(std::string_view holder) override;
  Result<std::vector<std::string>> check_in(std::string_view controller, Seconds now,
                                            Seconds ttl) override;
  Result<AdoptedJobs> adopt_jobs(std::string_view controller, Seconds now) override;

  // Accounts: sql_store_accounts.cc.
  Result<AccountBook> account_book() override;
  Result<std::string> change_accounts(const AccountChange& change, Seconds now) override;

  Result<std::vector<StoredEvent>> events(int64_t after, int limit) override;
  int64_t round_trips() const override;
  std::map<std::string, OperationCounts> operation_counts() const override;

 private:
  SqlStore(std::unique_ptr<sql::Session> db, sql::SessionPool::Opener open_more, int sessions);
  // add_jobs() where the engine logs a job's event in its insert (Dialect::insert_job_logged) and
  // no job has a script: the whole batch, events and commit, in one exchange.
  Result<std::vector<JobId>> add_jobs_logged(sql::Session& db, const std::vector<StoredJob>& jobs,
                                             Seconds now);
  // record_exits() where the engine does it in one statement (Dialect::record_exits_logged): the
  // jobs' rows locked, the log lock, that statement and the commit, in one exchange. `rows` are
  // the exits ([job, node, exit_code, signal, attempt], one per job, node and attempt) and `ids`
  // the jobs they name, sorted; the tasks' `usage` is recorded in the same exchange.
  Result<std::vector<JobEnd>> record_exits_logged(sql::Session& db, const std::string& rows,
                                                  const std::vector<sql::UsageRow>& usage,
                                                  const std::vector<JobId>& ids, Seconds now);

  // stop_job() where the engine does it in one statement (Dialect::stop_job_logged): the job's
  // row locked, the log lock, that statement and the commit, in one exchange.
  Result<JobState> stop_job_logged(sql::Session& db, JobId job, int attempt, StopCause cause,
                                   std::string_view reason, Seconds now);

  mutable sql::SessionPool pool_;
};

}  // namespace trellis
