// The SQL store's side of Slurm's job model (sql_store.h, schema 5): arrays stored in one
// transaction, batch scripts kept as submitted, and dependencies cleared once satisfied.
#include "store/json_fields.h"
#include "store/sql_rows.h"
#include "store/sql_store.h"

namespace trellis {

using json_fields::encode_ints;
using sql::Rows;
using sql::Session;
using sql::transaction;

namespace sql {

Status store_scripts(Session& db, const std::vector<StoredJob>& jobs,
                     const std::vector<JobId>& ids) {
  for (size_t i = 0; i < jobs.size() && i < ids.size(); ++i) {
    if (jobs[i].script.empty()) continue;
    if (Status s =
            run(db, "INSERT INTO job_scripts (id, script) VALUES (?, ?)", {ids[i], jobs[i].script});
        !s)
      return s;
    if (Status s = run(db, "UPDATE jobs SET script_id = ? WHERE id = ?", {ids[i], ids[i]}); !s)
      return s;
  }
  return Ok{};
}

}  // namespace sql

Result<std::vector<JobId>> SqlStore::add_array(const StoredJob& job, const std::vector<int>& tasks,
                                               Seconds now) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(db, "add_array", true, [&](bool& changed) -> Result<std::vector<JobId>> {
    if (tasks.empty()) return db.fail(Error::Code::kInvalidArgument, "an array of no tasks");
    // The first task alone, for its id (the array's), its script stored with it; then the rest
    // in one batch.
    StoredJob first = job;
    first.array_task = tasks.front();
    Result<sql::Statement> insert = sql::insert_job(db, first);
    if (!insert) return insert.error();
    insert->params.back() = now;
    Result<Rows> inserted = db.query(insert->sql, insert->params);
    if (!inserted) return inserted.error();
    if (inserted->empty()) return db.fail(Error::Code::kInternal, "the insert returned no id");
    std::vector<JobId> ids = {inserted->int64(0, 0)};
    if (Status s = sql::run(db, "UPDATE jobs SET array_job = ? WHERE id = ?", {ids[0], ids[0]}); !s)
      return s.error();
    if (Status s = sql::store_scripts(db, {first}, ids); !s) return s.error();
    sql::log_event(db, now, "submit", ids[0], "", job.name);
    StoredJob task = job;
    task.array_job = ids[0];
    task.script_id = job.script.empty() ? 0 : ids[0];
    task.script.clear();
    std::vector<sql::Statement> inserts;
    for (size_t i = 1; i < tasks.size(); ++i) {
      task.array_task = tasks[i];
      Result<sql::Statement> next = sql::insert_job(db, task);
      if (!next) return next.error();
      next->params.back() = now;
      inserts.push_back(std::move(*next));
    }
    if (!inserts.empty()) {
      Result<std::vector<Rows>> rest = db.query_batch(inserts);
      if (!rest) return rest.error();
      for (const Rows& rows : *rest) {
        if (rows.empty()) return db.fail(Error::Code::kInternal, "the insert returned no id");
        ids.push_back(rows.int64(0, 0));
        sql::log_event(db, now, "submit", ids.back(), "", job.name);
      }
    }
    changed = true;
    return ids;
  });
}

Result<std::string> SqlStore::job_script(JobId script_id) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return sql::single_statement(db, "job_script", [&]() -> Result<std::string> {
    Result<Rows> rows = db.query("SELECT script FROM job_scripts WHERE id = ?", {script_id});
    if (!rows) return rows.error();
    if (rows->empty())
      return db.fail(Error::Code::kNotFound, "no batch script " + std::to_string(script_id));
    return rows->text(0, 0);
  });
}

Status SqlStore::clear_dependencies(const std::vector<JobId>& jobs) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(db, "clear_dependencies", true, [&](bool& changed) -> Status {
    Result<Rows> updated = db.query("UPDATE jobs SET dependency = '' WHERE state = 'PD' AND id" +
                                        std::string(db.dialect().ints_in),
                                    {encode_ints(jobs)});
    if (!updated) return updated.error();
    changed = updated->affected() > 0;
    return Ok{};
  });
}

}  // namespace trellis
