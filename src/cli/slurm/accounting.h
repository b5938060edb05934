// Accounting: finished and running jobs (and their steps, with what they used) from the store, as
// sacct shows them, for `sacct` and `trellis history`. A query names jobs, users, states,
// partitions, names and a time window (jobs in the system at some time of [start, end]); the
// store answers it with its indexes (store/sql_schema.cc, schema 5), through a controller or
// read directly (--store).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/slurm/slurm_format.h"
#include "store/state_store.h"

namespace trellis::cli::slurm {

struct AccountingQuery {
  std::vector<int64_t> ids;
  std::optional<int> uid;
  std::vector<v1::JobState> states;
  std::vector<std::string> names, partitions;
  Seconds window_start = 0, window_end = 0;  // 0 = open
};

// The jobs of `query`, from the cluster of `conf` ("" = $TRELLIS_CONF), or straight from the
// store at `store_url` when it is given (no daemon needed).
Result<std::vector<v1::JobInfo>> accounting_jobs(const AccountingQuery& query,
                                                 const std::string& conf,
                                                 const std::string& store_url);

// One row of sacct: a job, its batch step ("JOB.batch": the script), or a step it ran itself
// ("JOB.N": srun inside it), each with what its tasks used (JobInfo.usage) where it is known.
struct AccountingRow {
  const v1::JobInfo* job = nullptr;
  bool batch_step = false;
  const v1::StepInfo* step = nullptr;
};
std::vector<AccountingRow> accounting_rows(const std::vector<v1::JobInfo>& jobs, bool steps);

// sacct's fields, by name as --format takes them (any case, a unique prefix, "%N" for a width).
Result<std::vector<PrintField>> parse_fields(const std::string& format);
std::string field_value(const std::string& field, const AccountingRow& row, Seconds now);

}  // namespace trellis::cli::slurm
