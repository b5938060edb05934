// SqliteStore: the StateStore in one SQLite file, the embedded default backend.
//
// One connection per object, used under a mutex (so one object serves many threads, one
// transaction at a time). The file is in WAL mode with synchronous=NORMAL: readers (the CLI, the
// dashboard) never block the controller's writes, and a commit costs no fsync (a power loss may
// lose the last commits, never corrupt the file). Writers begin with BEGIN IMMEDIATE and wait up
// to kSqliteBusyTimeoutMs for another process's write to finish; past that a method fails with
// kUnavailable. Statements are prepared once per connection and reused.
//
//   Result<std::unique_ptr<SqliteStore>> store = SqliteStore::open("/var/lib/trellis/state.db");
//
// The schema carries a version (meta.schema_version). Opening read-write migrates an older file
// step by step in one transaction; a file from a newer Trellis is refused, as is any file opened
// read-only that is not at this build's version. Tables: meta, nodes, jobs, allocations (a node
// holds at most one exclusive allocation, and none beside a shared one: a unique index and a
// trigger refuse it), events (append-only).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "store/state_store.h"

namespace trellis {

// The schema version this build writes and reads.
inline constexpr int kSqliteSchemaVersion = 1;
// How long a write waits for another connection's write transaction before kUnavailable.
inline constexpr int kSqliteBusyTimeoutMs = 5000;

class SqliteStore final : public StateStore {
 public:
  // Opens the database file at `path`. Read-write creates and migrates it; read-only opens an
  // existing store as it is (kNotFound when the file does not exist). `busy_timeout_ms` is for
  // tests of a locked file.
  static Result<std::unique_ptr<SqliteStore>> open(const std::string& path,
                                                   StoreOptions options = {},
                                                   int busy_timeout_ms = kSqliteBusyTimeoutMs);
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  const std::string& path() const;

  Status init_cluster(std::string_view machine_spec,
                      const std::vector<std::string>& node_names) override;
  Result<std::string> machine_spec() override;
  Result<int64_t> version() override;

  Result<JobId> add_job(const StoredJob& job, Seconds now) override;
  Result<std::vector<StoredJob>> list_jobs(const JobQuery& query) override;
  Result<StoredJob> job(JobId id) override;
  Status commit_pass(const PassCommit& pass, Seconds now) override;
  Result<bool> end_job(const JobEnd& end, Seconds now) override;
  Status set_job_state(JobId job, JobState state, std::string_view reason, Seconds now) override;
  Result<std::optional<std::string>> core_state() override;

  Result<std::vector<StoredNode>> list_nodes() override;
  Status nodes_seen(const std::vector<std::string>& names, std::string_view agent,
                    Seconds now) override;
  Status nodes_down(const std::vector<NodeId>& nodes, std::string_view reason,
                    Seconds now) override;
  Status set_drained(const std::vector<NodeId>& nodes, bool drained, std::string_view reason,
                     Seconds now) override;

  Result<std::vector<StoredEvent>> events(int64_t after, int limit) override;

  class Connection;  // the sqlite3 handle and its statements (sqlite_store.cc)

 private:
  explicit SqliteStore(std::unique_ptr<Connection> db);

  std::mutex mutex_;  // guards db_: one transaction at a time per connection
  std::unique_ptr<Connection> db_;
};

}  // namespace trellis
