// Tasks' usage in the SQL store: table task_usage, a row per job, attempt, step and node
// (core/task_usage.h), written with the exit reports that carry it, in their transaction.
// Internal to src/store.
#pragma once

#include <optional>
#include <vector>

#include "store/sql_session.h"
#include "store/state_store.h"

namespace trellis::sql {

struct UsageRow {
  JobId job = 0;
  int attempt = 0;
  int step = 0;  // 0: the job's own command
  NodeId node = 0;
  TaskUsage usage;
};

// The usage that `exits` carry (those that carry one), as rows.
std::vector<UsageRow> usage_rows(const std::vector<TaskExit>& exits);
std::vector<UsageRow> usage_rows(const std::vector<StepExit>& exits);

// The statement that records `rows` (non-empty), each once: a repeated report of a task keeps
// the first. It returns no rows.
Statement insert_usage(const Dialect& dialect, const std::vector<UsageRow>& rows);

}  // namespace trellis::sql
