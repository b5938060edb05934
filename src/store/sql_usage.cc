#include "store/sql_usage.h"

#include <map>
#include <tuple>

#include "store/json_fields.h"
#include "store/sql_rows.h"
#include "store/sql_store.h"

namespace trellis {
namespace sql {

std::vector<UsageRow> usage_rows(const std::vector<TaskExit>& exits) {
  std::vector<UsageRow> rows;
  for (const TaskExit& exit : exits)
    if (exit.usage) rows.push_back({exit.job, exit.attempt, 0, exit.node, *exit.usage});
  return rows;
}

std::vector<UsageRow> usage_rows(const std::vector<StepExit>& exits) {
  std::vector<UsageRow> rows;
  for (const StepExit& exit : exits)
    if (exit.usage) rows.push_back({exit.job, exit.attempt, exit.step, exit.node, *exit.usage});
  return rows;
}

Statement insert_usage(const Dialect& dialect, const std::vector<UsageRow>& rows) {
  nlohmann::json array = nlohmann::json::array();
  for (const UsageRow& row : rows)
    array.push_back({row.job, row.attempt, row.step, row.node, row.usage.user_usec,
                     row.usage.system_usec, row.usage.max_rss_kb});
  std::string columns;
  for (int i = 0; i < 7; ++i) columns += (i ? ", " : "") + json_column(dialect, i, "int64");
  // "WHERE true": SQLite reads an ON after a FROM as a join's unless the SELECT has a WHERE.
  return {
      "INSERT INTO task_usage (job_id, attempt, step_id, node_id, user_usec, system_usec, "
      "max_rss_kb) SELECT " +
          columns + " FROM " + std::string(dialect.json_rows) +
          " WHERE true ON CONFLICT (job_id, attempt, step_id, node_id) DO NOTHING",
      {json_fields::dump(array)}};
}

}  // namespace sql

Result<std::map<JobId, std::vector<StepUsage>>> SqlStore::step_usage(
    const std::vector<JobId>& jobs) {
  std::map<JobId, std::vector<StepUsage>> out;
  if (jobs.empty()) return out;
  sql::SessionPool::Lease lease = pool_.acquire();
  sql::Session& db = *lease;
  Result<sql::Rows> rows = db.query(
      "SELECT job_id, attempt, step_id, node_id, user_usec, system_usec, max_rss_kb "
      "FROM task_usage WHERE job_id" +
          std::string(db.dialect().ints_in) + " ORDER BY job_id, attempt, step_id, node_id",
      {json_fields::encode_ints(jobs)});
  if (!rows) return rows.error();
  for (size_t r = 0; r < rows->size(); ++r) {
    std::vector<StepUsage>& steps = out[rows->int64(r, 0)];
    const int attempt = rows->integer(r, 1), step = rows->integer(r, 2);
    if (steps.empty() || steps.back().attempt != attempt || steps.back().step != step)
      steps.push_back({.attempt = attempt, .step = step});
    steps.back().add({rows->int64(r, 4), rows->int64(r, 5), rows->int64(r, 6)},
                     static_cast<NodeId>(rows->int64(r, 3)));
  }
  return out;
}

}  // namespace trellis
