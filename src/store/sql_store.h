// SqlStore: the StateStore in an SQL database, one code for both engines: SQLite (one file, the
// embedded default) and PostgreSQL (one server that several controllers share, seed 003). The
// engines differ only in their sql::Session (sqlite_session.h, postgres_session.h) and in the
// schema's two spellings (sql_schema.h).
//
// One session per object, used under a mutex (so one object serves many threads, one transaction
// at a time). Writers run one at a time across every process that shares the database (the
// session's write lock), so each transaction sees everything committed before it; readers never
// wait for writers.
//
//   Result<std::unique_ptr<StateStore>> store = open_store("sqlite:/var/lib/trellis/state.db");
//   Result<std::unique_ptr<StateStore>> shared = open_store("postgresql://db.site/trellis");
//
// The schema carries a version (meta.schema_version). Opening read-write migrates an older store
// step by step in one transaction; a store from a newer Trellis is refused, as is any store opened
// read-only that is not at this build's version. Tables: meta, nodes, jobs, allocations (a node
// holds at most one exclusive allocation, and none beside a shared one: a unique index and a
// trigger refuse it; each allocation records its node's exit), events (append-only, gap-free seq
// in commit order), leases (the scheduler role).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "store/sql_session.h"
#include "store/state_store.h"

namespace trellis {

class SqlStore final : public StateStore {
 public:
  // Checks (read-only) or creates and migrates (read-write) the schema of the database behind
  // `session`, and wraps it.
  static Result<std::unique_ptr<SqlStore>> open(std::unique_ptr<sql::Session> session);
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

  Result<JobId> add_job(const StoredJob& job, Seconds now) override;
  Result<std::vector<StoredJob>> list_jobs(const JobQuery& query) override;
  Result<StoredJob> job(JobId id) override;
  Status commit_pass(const PassCommit& pass, Seconds now) override;
  Result<bool> end_job(const JobEnd& end, Seconds now) override;
  Status set_job_state(JobId job, JobState state, std::string_view reason, Seconds now) override;
  Status record_frozen_time(JobId job, int attempt, Seconds seconds) override;
  Result<JobState> stop_job(JobId job, int attempt, StopCause cause, std::string_view reason,
                            Seconds now) override;
  Result<std::vector<JobEnd>> record_exits(const std::vector<TaskExit>& exits, const EndRule& rule,
                                           Seconds now) override;
  Result<std::optional<std::string>> core_state() override;

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

  Result<std::vector<StoredEvent>> events(int64_t after, int limit) override;

 private:
  explicit SqlStore(std::unique_ptr<sql::Session> db);

  std::mutex mutex_;  // guards db_: one transaction at a time per session
  std::unique_ptr<sql::Session> db_;
};

}  // namespace trellis
